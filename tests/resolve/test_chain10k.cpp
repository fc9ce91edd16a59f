// A 10,000-library NEEDED chain resolves without deep recursion and quickly: each library is a
// copy of one tiny template with its soname and NEEDED digits stamped in.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "resolve_support.h"

namespace depscan::test {

TEST_CASE("a chain of 10,000 libraries") {
  constexpr int kCount = 10000;
  std::ifstream in(resolve_fixture("big/libchain00000.so"), std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string tmpl = buf.str();
  REQUIRE(!tmpl.empty());
  size_t soname_at = tmpl.find("libchain00000.so");
  size_t needed_at = tmpl.find("libchain00001.so");
  REQUIRE(soname_at != std::string::npos);
  REQUIRE(needed_at != std::string::npos);
  TempDir dir("chain10k");
  for (int i = 0; i < kCount; ++i) {
    std::string copy = tmpl;
    copy.replace(soname_at + 8, 5, fmt::format("{:05d}", i));
    copy.replace(needed_at + 8, 5, fmt::format("{:05d}", i + 1));
    std::ofstream(dir.path() / fmt::format("libchain{:05d}.so", i), std::ios::binary) << copy;
  }
  auto start = std::chrono::steady_clock::now();
  Walk walk((dir.path() / "libchain00000.so").string(), clean_environment());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("10,000-library chain resolved in " << seconds << " s");
  CHECK(walk.load_order().size() == kCount);
  CHECK(walk.where("libchain09999.so") == (dir.path() / "libchain09999.so").string());
  CHECK(walk.where("libchain10000.so") == "not found");
  CHECK(seconds < 30.0);
}

}  // namespace depscan::test
