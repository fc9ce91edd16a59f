// The fast ELF reader against LIEF (the reference) on every ELF regular file of this machine's
// library directories: both must produce the same model. The fast reader runs as a scan runs it,
// reading the file with pread; over the whole file in memory (as the fuzzers and hostile-input
// tests feed it) it must give the same answer.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analyzer/input/file_source.h"
#include "analyzer/input/mapped_file.h"
#include "analyzer/read/elf_reader.h"
#include "analyzer/read/lief_elf_reader.h"
#include "read/compare.h"

namespace fs = std::filesystem;
using namespace depscan;

namespace {

bool starts_with_elf_magic(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::string_view(magic, 4) == "\x7f" "ELF";
}

// Every ELF regular file under the directories (recursive; symlinked files are the same files).
std::vector<std::string> elf_files_under(const std::vector<std::string>& dirs) {
  std::vector<std::string> files;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    fs::path root = fs::canonical(dir, ec);
    if (ec) continue;
    for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_symlink() || !it->is_regular_file()) continue;
      if (starts_with_elf_magic(it->path())) files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

Expected<Binary> read_fast(const std::string& path) {
  auto file = FileSource::open(path);
  if (!file) return Error{file.error()};
  return read_elf(**file, path);
}

Expected<Binary> read_fast_from_memory(const std::string& path) {
  auto mapped = MappedFile::open(path);
  if (!mapped) return Error{mapped.error()};
  return read_elf((*mapped)->bytes(), path);
}

// "" when reading from the file and from memory agree.
std::string file_memory_difference(const Expected<Binary>& from_file, const std::string& path) {
  auto from_memory = read_fast_from_memory(path);
  if (from_file && from_memory) return test::model_difference(*from_file, *from_memory);
  if (!from_file && !from_memory) return from_file.error() == from_memory.error() ? "" : "errors differ: " + from_file.error() + " / " + from_memory.error();
  return from_file ? "only the memory read fails: " + from_memory.error() : "only the file read fails: " + from_file.error();
}

// LIEF 0.9 stops reading section headers at 10000 (reference §7: e_shnum=0xffff gives 10000); an
// object file with more (Free Pascal units have 28k) cannot be compared. The fast reader must
// then have read more than 10000 sections.
bool is_documented_lief_defect(const Expected<Binary>& fast, const Expected<Binary>& lief) {
  return fast && !lief && lief.error().starts_with("LIEF 0.9 reads at most 10000 sections") &&
         fast->sections.size() > 10000;
}

// The libraries directly in the CUDA library directory (the set the benchmarks use).
std::vector<std::string> cuda_library_set() {
  std::vector<std::string> files;
  std::error_code ec;
  fs::path root = fs::canonical("/usr/local/cuda/lib64", ec);
  if (ec) return files;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (!entry.is_symlink() && entry.is_regular_file() && starts_with_elf_magic(entry.path()))
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("the fast ELF reader and LIEF produce the same model for every library on this machine") {
  auto files = elf_files_under({"/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64"});
  REQUIRE_MESSAGE(files.size() > 100, "too few ELF files found to compare");
  size_t compared = 0, mismatches = 0, both_rejected = 0, lief_defects = 0, source_mismatches = 0;
  double fast_seconds = 0, lief_seconds = 0, lief_cuda_seconds = 0;
  auto cuda_set = cuda_library_set();
  for (const std::string& path : files) {
    auto start = std::chrono::steady_clock::now();
    auto fast = read_fast(path);
    fast_seconds += seconds_since(start);
    start = std::chrono::steady_clock::now();
    auto lief = read_elf_with_lief(path, path);
    double lief_time = seconds_since(start);
    lief_seconds += lief_time;
    if (std::find(cuda_set.begin(), cuda_set.end(), path) != cuda_set.end()) lief_cuda_seconds += lief_time;
    if (std::string d = file_memory_difference(fast, path); !d.empty()) {
      ++source_mismatches;
      fmt::print("FILE/MEMORY MISMATCH {}: {}\n", path, d);
    }
    std::string difference;
    if (is_documented_lief_defect(fast, lief)) {
      ++lief_defects;
      fmt::print("documented LIEF defect, {}: {} (the fast reader reads all {} sections)\n", path, lief.error(),
                 fast->sections.size());
      continue;
    }
    if (!fast && !lief) {
      ++both_rejected;
      fmt::print("both readers reject {}: fast: {}; LIEF: {}\n", path, fast.error(), lief.error());
      continue;
    }
    if (!fast) difference = "fast reader fails: " + fast.error();
    else if (!lief) difference = "LIEF fails: " + lief.error();
    else difference = test::model_difference(*fast, *lief);
    ++compared;
    if (difference.empty()) continue;
    ++mismatches;
    fmt::print("MISMATCH {}: {}\n", path, difference);
  }
  fmt::print("ELF files: {}, compared: {}, rejected by both: {}, documented LIEF defects: {}, mismatches: {}\n",
             files.size(), compared, both_rejected, lief_defects, mismatches);
  fmt::print("total read time: fast reader {:.3f} s, LIEF {:.3f} s\n", fast_seconds, lief_seconds);
  fmt::print("LIEF on the CUDA library set ({} files): {:.3f} s\n", cuda_set.size(), lief_cuda_seconds);
  CHECK(mismatches == 0);
  CHECK(source_mismatches == 0);
}

// A benchmark, not a test: skipped by the suite, run by bench/stages.sh with --no-skip.
TEST_CASE("timing: the fast reader over the CUDA library set (warm)" * doctest::skip()) {
  auto files = cuda_library_set();
  if (files.empty()) {
    MESSAGE("no CUDA libraries on this machine");
    return;
  }
  uint64_t bytes = 0;
  double best = 1e9;
  for (int run = 0; run < 4; ++run) {  // run 0 warms the page cache
    auto start = std::chrono::steady_clock::now();
    for (const std::string& path : files) {
      auto binary = read_fast(path);
      REQUIRE_MESSAGE(binary, path << ": " << (binary ? "" : binary.error()));
      if (run == 0) bytes += binary->file_size;
    }
    if (run > 0) best = std::min(best, seconds_since(start));
  }
  fmt::print("fast reader, CUDA library set: {} files, {:.2f} GB, best of 3 warm runs: {:.4f} s\n", files.size(),
             bytes / 1e9, best);
}
