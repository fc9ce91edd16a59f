// Where a missing CUDA library comes from, for the fix of a library-not-found finding: the
// driver for libcuda.so.1, a PyPI project or the toolkit for the other components and cuDNN
// (matrix/data/libraries.json pip_packages, cudnn.json for the CUDA majors of a cuDNN series).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "matrix/matrix.h"

namespace depscan {

// Null when `name` is not a CUDA or cuDNN library the matrix knows. `importer` names whose
// RUNPATH could point at the library ("the binary", "libfoo.so.1").
std::optional<std::string> cuda_install_hint(const Matrix& matrix, std::string_view name,
                                             std::string_view importer = "the binary");

}  // namespace depscan
