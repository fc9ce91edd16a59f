// A parallel loop over indices on plain std::threads. The standard library's threads are what
// ThreadSanitizer models exactly; Debian's TBB is not instrumented, and its task pool made TSan
// report races inside TBB itself, which hid whether depscan's own code was race-free.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace depscan {

// CPUs this process may run on (its affinity mask, as a container or taskset sets it).
inline unsigned usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1u, std::thread::hardware_concurrency());
}

// Calls body(i) for every i in [0, count), on up to max_threads threads (0: usable_cpus(); the
// caller's thread included); returns when all calls have returned. The first exception thrown by
// body is rethrown here.
template <class Body>
void parallel_for_index(size_t count, const Body& body, size_t max_threads = 0) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      for (size_t i; (i = next.fetch_add(1)) < count;) body(i);
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = count;  // stop handing out work
    }
  };
  size_t threads = std::min<size_t>(count, max_threads ? max_threads : usable_cpus());
  {
    std::vector<std::jthread> helpers;
    for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
  }  // helpers join here
  if (failure) std::rethrow_exception(failure);
}

}  // namespace depscan
