#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "analyzer/input/residency.h"
#include "support.h"

using namespace depscan;

namespace {

// File systems whose buffered reads answer RWF_NOWAIT from the page cache alone.
bool answers_without_waiting(const std::string& path) {
  struct statfs fs;
  if (::statfs(path.c_str(), &fs) != 0) return false;
  constexpr long kExt4 = 0xEF53, kXfs = 0x58465342, kBtrfs = 0x9123683E;
  return fs.f_type == kExt4 || fs.f_type == kXfs || fs.f_type == kBtrfs;
}

void drop_from_page_cache(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::fdatasync(fd) == 0);  // dirty pages stay in the cache
  REQUIRE(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
  ::close(fd);
}

}  // namespace

TEST_CASE("first_page_residency tells a file in the page cache from one on disk") {
  test::TempDir dir("residency");
  std::string file = dir.str() + "/data";
  std::ofstream(file) << std::string(64 * 1024, 'x');
  CHECK(first_page_residency(file) == Residency::Cached);  // just written: in the cache
  if (!answers_without_waiting(dir.str())) {
    MESSAGE("skipped the on-disk half: " << dir.str() << " is not on ext4, xfs or btrfs");
    return;
  }
  drop_from_page_cache(file);
  CHECK(first_page_residency(file) == Residency::NotCached);
}

TEST_CASE("first_page_residency cannot tell for missing files and files without a page cache") {
  CHECK(first_page_residency("/nonexistent/depscan-residency") == Residency::Unknown);
  CHECK(first_page_residency("/proc/self/status") == Residency::Unknown);
}
