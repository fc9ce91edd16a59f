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
// Where the page cache cannot say, many files are read in parallel in case the disk is slow.
constexpr size_t kParallelWhenUnknown = 64;
// Threads reading from disk wait for it, not for a CPU: more of them keep more reads in flight.
constexpr unsigned kDiskReadThreads = 16;

unsigned read_threads_for(Residency residency, size_t files) {
  bool would_wait = residency == Residency::NotCached || (residency == Residency::Unknown && files >= kParallelWhenUnknown);
  return would_wait ? std::max(kDiskReadThreads, usable_cpus()) : 1;
}

}  // namespace

// The last pages are asked about: the section headers the reader needs next lie at the end.
unsigned default_read_threads(const BinaryCache& cache, const std::vector<std::string>& paths,
                              const std::vector<std::unique_ptr<FileSource>>& opened) {
  Residency residency = sampled_residency(paths.size(), [&](size_t i) {
    if (i < opened.size() && opened[i]) return std::optional<Residency>(page_residency(*opened[i], Page::Last));
    return logical_residency(cache.fs(), paths[i], Page::Last);
  });
  return read_threads_for(residency, paths.size());
}

void prefetch_binaries(BinaryCache& cache, const std::vector<std::string>& paths, unsigned threads,
                       OpenFiles open_files) {
  if (paths.size() < 2 && open_files.empty()) return;
  std::vector<std::unique_ptr<FileSource>> opened(paths.size());  // each taken by one thread
  for (size_t i = 0; i < paths.size(); ++i)
    if (auto it = open_files.find(paths[i]); it != open_files.end()) opened[i] = std::move(it->second);
  bool progress = paths.size() >= kProgressThreshold && ::isatty(STDERR_FILENO);
  std::atomic<size_t> done{0};
  std::mutex print_mutex;
  auto read_one = [&](size_t i) {
    cache.prefetch_elf(paths[i], std::move(opened[i]));
    size_t n = ++done;
    if (progress && (n % 64 == 0 || n == paths.size())) {
      std::lock_guard lock(print_mutex);
      std::fprintf(stderr, "\rdepscan: reading %zu/%zu files", n, paths.size());
      if (n == paths.size()) std::fputc('\n', stderr);
    }
  };
  if (threads == 0) threads = default_read_threads(cache, paths, opened);
  parallel_for_index(paths.size(), read_one, threads);
}

}  // namespace depscan
