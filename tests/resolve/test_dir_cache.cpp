// DirCache: when a directory is listed instead of probed name by name, and that every name of a
// directory shares one listing.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "analyzer/resolve/search.h"
#include "counting_fs.h"
#include "support.h"

using namespace depscan;

using depscan::test::CountingFs;

TEST_CASE("DirCache lists a small directory after a few misses, once for all its names") {
  test::TempDir tmp("dircache-small");
  std::filesystem::create_directory(tmp.path() / "lib");
  std::ofstream(tmp.path() / "lib/libhere.so") << "x";
  std::filesystem::create_directory_symlink("lib", tmp.path() / "alias");
  CountingFs fs;
  DirCache dirs(fs);
  std::string lib = tmp.str() + "/lib", alias = tmp.str() + "/alias";
  uint64_t threshold = std::max<uint64_t>(8, fs.stat(lib).value().size / 128);
  CHECK(threshold <= 64);
  for (uint64_t i = 0; i < threshold; ++i) dirs.record_miss(lib);
  CHECK(fs.listings == 0);
  CHECK(dirs.may_contain(lib, "libmissing.so"));  // not listed yet: only a stat can tell
  dirs.record_miss(alias);                        // one miss more, through the other name
  CHECK(fs.listings == 1);
  CHECK_FALSE(dirs.may_contain(lib, "libmissing.so"));
  CHECK_FALSE(dirs.may_contain(alias, "libmissing.so"));
  CHECK(dirs.may_contain(alias, "libhere.so"));
  for (int i = 0; i < 20; ++i) dirs.record_miss(alias);
  CHECK(fs.listings == 1);
}

TEST_CASE("DirCache waits longer before listing a large directory") {
  test::TempDir tmp("dircache-large");
  std::filesystem::create_directory(tmp.path() / "lib");
  for (int i = 0; i < 3000; ++i) std::ofstream(tmp.path() / "lib" / ("libentry-with-a-longish-name-" + std::to_string(i) + ".so.1"));
  std::string lib = tmp.str() + "/lib";
  CountingFs fs;
  auto size = fs.stat(lib).value().size;
  REQUIRE_MESSAGE(size / 128 > 8, "the directory is not large on this file system: " << size << " bytes");
  DirCache dirs(fs);
  for (uint64_t i = 0; i < size / 128; ++i) dirs.record_miss(lib);
  CHECK(fs.listings == 0);
  dirs.record_miss(lib);
  CHECK(fs.listings == 1);
  CHECK(dirs.may_contain(lib, "libentry-with-a-longish-name-2999.so.1"));
  CHECK_FALSE(dirs.may_contain(lib, "libentry-with-a-longish-name-3000.so.1"));
}
