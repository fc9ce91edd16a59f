// The order in which ld.so loads a root's objects, for checks that follow what a dlopen adds.
#pragma once

#include <string_view>
#include <vector>

#include "analyzer/model.h"

namespace depscan {

// Objects reached from `starts` through one root's edges (edges_by_root), breadth first as ld.so
// loads them; dlopen edges are followed only when `through_dlopen`.
std::vector<size_t> load_closure(const Graph& graph, const std::vector<size_t>& root_edges,
                                 const std::vector<size_t>& starts, bool through_dlopen);

// A CPython or PyPy extension module by its file name (foo.cpython-311-x86_64-linux-gnu.so,
// foo.abi3.so): Python imports it with dlopen.
bool python_extension_name(std::string_view path);

}  // namespace depscan
