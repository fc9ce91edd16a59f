// CUDA / cuDNN / framework / wheel-policy knowledge, loaded from JSON data with a source on
// every row, validated on load. The data in matrix/data/ is embedded at build time and can be
// replaced at run time with --matrix FILE.
#pragma once

#include <string>

#include "analyzer/util/expected.h"

namespace depscan {

class Matrix {
 public:
  Matrix() = default;
};

Expected<Matrix> load_embedded_matrix();
Expected<Matrix> load_matrix_file(const std::string& path);

}  // namespace depscan
