// The libraries a process will only meet at run time: dlopen edges known from the matrix
// (cudart and cuDNN open libcuda.so.1, the cuDNN shim opens its sub-libraries, ...) and ones
// inferred from library names in an object's read-only data. Each is resolved with dlopen's
// rules from the object that opens it, and its NEEDED closure is loaded too.
#pragma once

#include <vector>

#include "analyzer/input/file_owners.h"
#include "analyzer/input/fs.h"
#include "analyzer/resolve/resolve.h"
#include "matrix/matrix.h"

namespace depscan {

// `owners`: the install's distributions by file, which give a framework library's version
// (TensorFlow 2.20's loader names no library in its read-only data; the framework table's build does).
void add_dlopen_edges(Resolver& resolver, const Matrix& matrix, const FileSystem& fs,
                      const FileOwners* owners = nullptr);

}  // namespace depscan
