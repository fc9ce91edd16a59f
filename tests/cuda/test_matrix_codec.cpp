// The compiled matrix (matrix/codec.h): what a scan decodes is what the JSON data says, and a
// damaged encoding is refused, never half-read.
#include <doctest/doctest.h>

#include "matrix/codec.h"
#include "matrix/matrix.h"

using namespace depscan;

namespace {

Matrix parsed(MatrixUse use) {
  auto m = parse_embedded_matrix_json(use);
  REQUIRE_MESSAGE(m, (m ? "" : m.error()));
  return *m;
}

Matrix compiled(MatrixUse use) {
  auto m = load_embedded_matrix(use);
  REQUIRE_MESSAGE(m, (m ? "" : m.error()));
  return *m;
}

}  // namespace

TEST_CASE("the compiled matrix holds exactly the JSON data") {
  Matrix json = parsed(MatrixUse::Everything);
  Matrix binary = compiled(MatrixUse::Everything);
  CHECK(binary == json);
  // Version's == ignores spelling ("580.65.06" == "580.65.6"); equal encodings do not.
  CHECK(encode_matrix(binary) == encode_matrix(json));
  CHECK(binary.drivers().size() > 20);
  CHECK_FALSE(binary.frameworks().empty());
  CHECK(binary.driver_row(*Version::parse("12.4"))->linux_driver->str() == json.driver_row(*Version::parse("12.4"))->linux_driver->str());
}

TEST_CASE("a scan's compiled matrix leaves out the framework rows, as the JSON loader does") {
  Matrix binary = compiled(MatrixUse::Scan);
  CHECK(binary.frameworks().empty());
  CHECK(binary == parsed(MatrixUse::Scan));
}

TEST_CASE("a damaged encoding is refused") {
  std::string encoded = encode_matrix(parsed(MatrixUse::Everything));
  for (size_t cut : {size_t{0}, size_t{5}, size_t{40}, encoded.size() / 3, encoded.size() / 2, encoded.size() - 1}) {
    CAPTURE(cut);
    for (MatrixUse use : {MatrixUse::Everything, MatrixUse::Scan}) CHECK_FALSE(decode_matrix(encoded.substr(0, cut), use));
  }
  CHECK_FALSE(decode_matrix(encoded + "x", MatrixUse::Scan));
  std::string huge_count = encoded;
  huge_count.replace(std::string_view("depscan-matrix-bin/1").size(), 4, "\xff\xff\xff\x7f");
  auto refused = decode_matrix(huge_count, MatrixUse::Everything);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("compiled matrix") != std::string::npos);
  CHECK(decode_matrix(encoded, MatrixUse::Scan));
}
