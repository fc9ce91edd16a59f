// `depscan` with no file: the CUDA stack this machine (or --root) would load. A trivial program
// of the analysed system (/usr/bin/true) becomes a root that opens, by name, the newest library
// of each CUDA component and cuDNN series the loader can find there (LD_LIBRARY_PATH,
// ld.so.cache, default paths), plus the driver; the dlopen stage and the CUDA checks then judge
// that process like any other.
#pragma once

#include <optional>
#include <string>

#include "analyzer/input/fs.h"
#include "analyzer/resolve/resolve.h"
#include "matrix/matrix.h"

namespace depscan {

// Adds the audit root; returns its index in the graph's roots, or nullopt when the system has no
// program to stand for the application.
std::optional<size_t> add_cuda_audit_root(Resolver& resolver, const Matrix& matrix, const FileSystem& fs);

}  // namespace depscan
