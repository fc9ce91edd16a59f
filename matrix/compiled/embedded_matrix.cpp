#include <fstream>
#include <sstream>

#include "matrix/codec.h"
#include "matrix/compiled/compiled_matrix.h"
#include "matrix/matrix.h"

namespace depscan {

Expected<Matrix> load_embedded_matrix(MatrixUse use) { return decode_matrix(compiled_matrix(), use); }

Expected<Matrix> load_matrix_file(const std::string& path, MatrixUse use) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open the matrix file"};
  std::stringstream text;
  text << in.rdbuf();
  auto base = load_embedded_matrix(use);
  if (!base) return Error{base.error()};
  auto loaded = base->load_document(text.str(), path);
  if (!loaded) return Error{loaded.error()};
  return std::move(*base);
}

}  // namespace depscan
