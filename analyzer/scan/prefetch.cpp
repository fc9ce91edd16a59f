#include "analyzer/scan/prefetch.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>

#include "analyzer/input/residency.h"
#include "analyzer/util/parallel.h"

namespace depscan {
namespace {

constexpr size_t kProgressThreshold = 200;  // fewer files finish before a progress line helps
constexpr size_t kResidencySamples = 8;     // roots asked whether they are in the page cache
// Where the page cache cannot say, many files are read in parallel in case the disk is slow.
constexpr size_t kParallelWhenUnknown = 64;

// Whether reading the roots would wait for the disk, judged from a few of them spread over the list.
bool reading_would_wait(const BinaryCache& cache, const std::vector<std::string>& paths) {
  size_t step = std::max<size_t>(1, paths.size() / kResidencySamples);
  bool unknown = false;
  for (size_t i = 0; i < paths.size(); i += step) {
    auto host = cache.fs().host_path(paths[i]);
    Residency residency = host ? first_page_residency(*host) : Residency::Unknown;
    if (residency == Residency::NotCached) return true;
    unknown = unknown || residency == Residency::Unknown;
  }
  return unknown && paths.size() >= kParallelWhenUnknown;
}

}  // namespace

void prefetch_binaries(BinaryCache& cache, const std::vector<std::string>& paths, unsigned threads) {
  if (paths.size() < 2) return;
  bool progress = paths.size() >= kProgressThreshold && ::isatty(STDERR_FILENO);
  std::atomic<size_t> done{0};
  std::mutex print_mutex;
  auto read_one = [&](size_t i) {
    cache.prefetch_elf(paths[i]);
    size_t n = ++done;
    if (progress && (n % 64 == 0 || n == paths.size())) {
      std::lock_guard lock(print_mutex);
      std::fprintf(stderr, "\rdepscan: reading %zu/%zu files", n, paths.size());
      if (n == paths.size()) std::fputc('\n', stderr);
    }
  };
  if (threads == 0) threads = reading_would_wait(cache, paths) ? usable_cpus() : 1;
  parallel_for_index(paths.size(), read_one, threads);
}

}  // namespace depscan
