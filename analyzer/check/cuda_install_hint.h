// Where a missing CUDA library comes from, for the fix of a library-not-found finding: the
// driver for libcuda.so.1, a PyPI project or the toolkit for the other components and cuDNN
// (matrix/data/libraries.json pip_packages, cudnn.json for the CUDA majors of a cuDNN series).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analyzer/model.h"
#include "matrix/matrix.h"

namespace depscan {

// Null when `name` is not a CUDA or cuDNN library the matrix knows. `importer` names whose
// RUNPATH could point at the library ("the binary", "libfoo.so.1"); `process_majors`, the CUDA
// majors the process's other libraries show, narrow the choices when they agree with the name.
std::optional<std::string> cuda_install_hint(const Matrix& matrix, std::string_view name,
                                             std::string_view importer = "the binary",
                                             const std::vector<int>& process_majors = {});

// Per root of the graph: the CUDA majors its requested libraries belong to (names of one major
// only: libcudart.so.12 counts, libcurand.so.10 does not; names guessed from read-only data only
// where the others show none) and the one its distribution's name
// says (tensorrt-cu12-bindings), rising.
std::vector<std::vector<int>> cuda_majors_by_root(const Graph& graph, const Matrix& matrix);

// One root's entry of `by_root`, filling it with cuda_majors_by_root on first use.
const std::vector<int>& cuda_majors_of_root(std::vector<std::vector<int>>& by_root, const Graph& graph,
                                            const Matrix& matrix, size_t root);

}  // namespace depscan
