// The matrix in binary form. The build parses and validates matrix/data/*.json once
// (matrix/compiler) and compiles this encoding into the binary; a scan decodes it instead of
// parsing JSON, which took 0.6 ms of every run. Integers are native-endian: an encoding is only
// read by binaries of the build that wrote it.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/util/expected.h"
#include "matrix/matrix.h"

namespace depscan {

std::string encode_matrix(const Matrix& matrix);
// MatrixUse::Scan skips the framework rows, as the JSON loader does.
Expected<Matrix> decode_matrix(std::string_view encoded, MatrixUse use);

}  // namespace depscan
