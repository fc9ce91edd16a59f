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

namespace depscan::test {

TEST_CASE("the CUDA library set resolves quickly") {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/local/cuda/lib64", ec)) {
    std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.find(".so") != std::string::npos) files.push_back(entry.path().string());
  }
  if (files.empty()) {
    MESSAGE("no /usr/local/cuda/lib64: skipped");
    return;
  }
  auto fs = make_real_fs();
  BinaryCache cache(*fs);
  Resolver resolver(cache, ResolveOptions{clean_environment(), {}});
  auto start = std::chrono::steady_clock::now();
  for (const std::string& f : files) resolver.add_root(f);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t missing = 0;
  for (const Edge& e : resolver.graph().edges) missing += e.to ? 0 : 1;
  MESSAGE(files.size() << " CUDA libraries, " << resolver.graph().objects.size() << " objects, " << missing
                       << " missing edges, resolved in " << seconds << " s");
  CHECK(missing == 0);
  CHECK(seconds < 0.25);
}

}  // namespace depscan::test
