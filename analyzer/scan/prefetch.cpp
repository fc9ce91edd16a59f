#include "analyzer/scan/prefetch.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>

#include "analyzer/util/parallel.h"

namespace depscan {
namespace {

constexpr size_t kProgressThreshold = 200;  // fewer files finish before a progress line helps

}  // namespace

void prefetch_binaries(BinaryCache& cache, const std::vector<std::string>& paths) {
  if (paths.size() < 2) return;
  bool progress = paths.size() >= kProgressThreshold && ::isatty(STDERR_FILENO);
  std::atomic<size_t> done{0};
  std::mutex print_mutex;
  parallel_for_index(paths.size(), [&](size_t i) {
    cache.prefetch_elf(paths[i]);
    size_t n = ++done;
    if (progress && (n % 64 == 0 || n == paths.size())) {
      std::lock_guard lock(print_mutex);
      std::fprintf(stderr, "\rdepscan: reading %zu/%zu files", n, paths.size());
      if (n == paths.size()) std::fputc('\n', stderr);
    }
  });
}

}  // namespace depscan
