// DEPSCAN_TIMINGS=1 prints how long each stage of a scan took, and how many page faults it took,
// to stderr: the figures behind bench/ and the README's performance notes. Otherwise it costs one
// getenv per scan.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace depscan {

class PhaseTimer {
 public:
  PhaseTimer() : enabled_(std::getenv("DEPSCAN_TIMINGS") != nullptr), last_(Clock::now()), last_faults_(enabled_ ? faults() : 0) {}

  // Ends the phase that began at the previous mark (or at construction).
  void mark(const char* phase) {
    if (!enabled_) return;
    auto now = Clock::now();
    long now_faults = faults();
    std::fprintf(stderr, "depscan timing: %-22s %8.2f ms %6ld page faults\n", phase,
                 std::chrono::duration<double, std::milli>(now - last_).count(), now_faults - last_faults_);
    last_ = now;
    last_faults_ = now_faults;
  }

 private:
  using Clock = std::chrono::steady_clock;

  // Minor and major faults of the whole process (every thread) so far.
  static long faults() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt + usage.ru_majflt;
  }

  bool enabled_;
  Clock::time_point last_;
  long last_faults_;
};

}  // namespace depscan
