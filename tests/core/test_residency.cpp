#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/input/residency.h"
#include "analyzer/read/read.h"
#include "analyzer/scan/prefetch.h"
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


// mincore(2) on a map of the file: unlike a read, asking does not bring a page in. How many of its
// first `pages` pages (0: all) are in the page cache.
size_t pages_in_cache(const std::string& path, size_t pages = 0) {
  int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  struct stat info {};
  REQUIRE(::fstat(fd, &info) == 0);
  size_t length = pages ? pages * page : static_cast<size_t>(info.st_size);
  void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  REQUIRE(map != MAP_FAILED);
  std::vector<unsigned char> resident((length + page - 1) / page);
  REQUIRE(::mincore(map, length, resident.data()) == 0);
  ::munmap(map, length);
  size_t cached = 0;
  for (unsigned char r : resident) cached += r & 1;
  return cached;
}

bool first_page_in_cache(const std::string& path) { return pages_in_cache(path, 1) != 0; }

// Written pages can linger in per-CPU lists where one POSIX_FADV_DONTNEED does not reach them (seen
// under load): ask again until none is left.
void drop_from_page_cache(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::fdatasync(fd) == 0);  // dirty pages stay in the cache
  for (int attempt = 0; attempt < 100; ++attempt) {
    REQUIRE(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
    if (pages_in_cache(path) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::close(fd);
  REQUIRE(pages_in_cache(path) == 0);
}

// `count` files of `bytes` each, named prefix0, prefix1, ..., none of them in the page cache.
std::vector<std::string> files_on_disk(const std::string& prefix, int count, size_t bytes) {
  std::vector<std::string> files;
  for (int i = 0; i < count; ++i) {
    files.push_back(prefix + std::to_string(i));
    std::ofstream(files.back()) << std::string(bytes, 'x');
    drop_from_page_cache(files.back());
  }
  return files;
}

// The kernel reads in the background: give it a few seconds to bring the page in.
bool becomes_cached(const std::string& path) {
  for (int i = 0; i < 300; ++i) {
    if (first_page_in_cache(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The real file system, except that asking for the host path of `refused` (to open it) fails
// the test.
class RefusingFs : public FileSystem {
 public:
  explicit RefusingFs(std::string refused) : refused_(std::move(refused)) {}
  Expected<std::string> canonical(std::string_view logical) const override { return real_->canonical(logical); }
  Expected<FileInfo> stat(std::string_view logical) const override { return real_->stat(logical); }
  Expected<std::string> host_path(std::string_view logical) const override {
    CHECK_MESSAGE(logical != refused_, "asked to open ", refused_);
    return real_->host_path(logical);
  }
  std::vector<std::string> list(std::string_view dir) const override { return real_->list(dir); }
  const std::string& root() const override { return real_->root(); }

 private:
  std::unique_ptr<FileSystem> real_ = make_real_fs();
  std::string refused_;
};

}  // namespace

TEST_CASE("page_residency tells a file in the page cache from one on disk") {
  test::TempDir dir("residency");
  std::string file = dir.str() + "/data";
  std::ofstream(file) << std::string(64 * 1024, 'x');
  CHECK(page_residency(file, Page::First) == Residency::Cached);  // just written: in the cache
  CHECK(page_residency(file, Page::Last) == Residency::Cached);
  if (!answers_without_waiting(dir.str())) {
    MESSAGE("skipped the on-disk half: " << dir.str() << " is not on ext4, xfs or btrfs");
    return;
  }
  drop_from_page_cache(file);
  // The last page first: asking starts reading the page asked about, and reading from the start
  // could bring the whole small file in.
  CHECK(page_residency(file, Page::Last) == Residency::NotCached);
  CHECK(page_residency(file, Page::First) == Residency::NotCached);
}

TEST_CASE("sampled_residency asks at most kResidencySamples files, spread from the first, and every file of short lists") {
  for (size_t count : {size_t{0}, size_t{1}, size_t{5}, kResidencySamples, kResidencySamples + 1, size_t{31}, size_t{1000}}) {
    CAPTURE(count);
    std::vector<size_t> asked;
    auto cached = [&](size_t i) {
      asked.push_back(i);
      return std::optional<Residency>(Residency::Cached);
    };
    CHECK(sampled_residency(count, cached) == Residency::Cached);
    CHECK(asked.size() <= kResidencySamples);
    if (count <= kResidencySamples) CHECK(asked.size() == count);
    if (count) CHECK(asked.front() == 0);
    if (count) CHECK(asked.back() * kResidencySamples >= (count - 1) * (kResidencySamples - 1));  // the last eighth
  }
}

TEST_CASE("page_residency cannot tell for missing files and files without a page cache") {
  CHECK(page_residency("/nonexistent/depscan-residency", Page::First) == Residency::Unknown);
  CHECK(page_residency("/proc/self/status", Page::First) == Residency::Unknown);
}

TEST_CASE("read_heads_ahead starts reading the first page of files that are on disk, and skips FIFOs") {
  test::TempDir dir("heads");
  if (!answers_without_waiting(dir.str())) {
    MESSAGE("skipped: " << dir.str() << " is not on ext4, xfs or btrfs");
    return;
  }
  // More than are sampled: most files are read only because asked to.
  std::vector<std::string> files = files_on_disk(dir.str() + "/file", 40, 256 * 1024);
  for (const std::string& file : files) REQUIRE_FALSE(first_page_in_cache(file));
  std::string fifo = dir.str() + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::vector<std::string> inputs = files;
  inputs.insert(inputs.begin(), fifo);
  RefusingFs fs(fifo);  // the FIFO is sampled first and asked ahead, and must be neither
  REQUIRE(sampled_residency(fs, inputs, Page::Last) == Residency::NotCached);
  read_heads_ahead(fs, inputs);
  for (const std::string& file : files) CHECK(becomes_cached(file));
}

TEST_CASE("roots whose heads were just read but whose last pages are on disk are read on many threads") {
  test::TempDir dir("threads");
  if (!answers_without_waiting(dir.str())) {
    MESSAGE("skipped: " << dir.str() << " is not on ext4, xfs or btrfs");
    return;
  }
  std::vector<std::string> roots = files_on_disk(dir.str() + "/lib", 10, 4 << 20);
  auto fs = make_real_fs();
  BinaryCache cache(*fs);
  for (const std::string& root : roots) REQUIRE(fs->read_text(root, 512));  // what telling the inputs apart reads
  CHECK(default_read_threads(cache, roots) > 1);
  for (const std::string& root : roots) REQUIRE(fs->read_text(root, 8 << 20));  // now all in the page cache
  CHECK(default_read_threads(cache, roots) == 1);
}

TEST_CASE("roots already open are asked about through their descriptors, not opened again") {
  test::TempDir dir("opened");
  if (!answers_without_waiting(dir.str())) {
    MESSAGE("skipped: " << dir.str() << " is not on ext4, xfs or btrfs");
    return;
  }
  std::vector<std::string> roots = files_on_disk(dir.str() + "/lib", 10, 4 << 20);
  std::vector<std::unique_ptr<FileSource>> opened;
  for (const std::string& root : roots) {
    auto file = FileSource::open(root);
    REQUIRE(file.ok());
    opened.push_back(std::move(*file));
  }
  RefusingFs fs(roots[0]);  // the first sample
  BinaryCache cache(fs);
  CHECK(default_read_threads(cache, roots, opened) > 1);
  for (const std::string& root : roots) REQUIRE(make_real_fs()->read_text(root, 8 << 20));
  CHECK(default_read_threads(cache, roots, opened) == 1);
}

TEST_CASE("a root already open is read through its descriptor, even after its path is gone") {
  test::TempDir dir("prefetch");
  std::string copy = dir.str() + "/program";
  std::filesystem::copy_file(std::filesystem::read_symlink("/proc/self/exe"), copy);
  auto file = FileSource::open(copy);
  REQUIRE(file.ok());
  REQUIRE(std::filesystem::remove(copy));  // nothing left to open by name
  RefusingFs fs(copy);
  BinaryCache cache(fs);
  OpenFiles open_files;
  open_files.emplace(copy, std::move(*file));
  prefetch_binaries(cache, {copy}, 1, std::move(open_files));
  CHECK(cache.parsed_count() == 1);
}
