// DEPSCAN_TIMINGS=1 prints how long each stage of a scan took to stderr: the figures behind
// bench/ and the README's performance notes. Otherwise it costs one getenv per scan.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace depscan {

class PhaseTimer {
 public:
  PhaseTimer() : enabled_(std::getenv("DEPSCAN_TIMINGS") != nullptr), last_(Clock::now()) {}

  // Ends the phase that began at the previous mark (or at construction).
  void mark(const char* phase) {
    if (!enabled_) return;
    auto now = Clock::now();
    std::fprintf(stderr, "depscan timing: %-22s %8.2f ms\n", phase,
                 std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  Clock::time_point last_;
};

}  // namespace depscan
