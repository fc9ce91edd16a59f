// Runs the probe child in its own process group with the application's environment, reads
// its step events, and enforces a per-step and an overall timeout (SIGKILL to the group).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "loader/probe_events.h"

namespace depscan {

struct ChildLimits {
  std::chrono::milliseconds step_timeout{60000};
  std::chrono::milliseconds total_timeout{300000};
  std::chrono::milliseconds kill_grace{10000};  // how long a SIGKILLed probe may take to go
};

struct ChildRun {
  std::string spawn_error;            // the child could not be started at all
  std::vector<StepEvent> events;      // start and end events, in order
  std::optional<StepEvent> open_step; // a step that started and never ended
  bool exited = false;
  int exit_code = -1;                 // when exited
  int signal = 0;                     // when killed by a signal (ours after a timeout, or a crash)
  std::string timeout;                // "" or "step" / "overall": we killed it
  std::string stderr_tail;            // the last few KiB the child wrote to stderr
  size_t lines_ignored = 0;           // event lines after kMaxProbeEvents events: not decoded, not kept
  bool unkillable = false;            // still there kill_grace after SIGKILL: left behind
  double milliseconds = 0;
};

// The event pipe is the child's file descriptor 3.
inline constexpr int kProbeEventFd = 3;
// The probe sends at most about 50 events (8 GPUs, two steps each); more come from a library it
// loaded writing to descriptor 3. Those are not kept, and no longer restart the step clock.
inline constexpr size_t kMaxProbeEvents = 1024;

ChildRun run_child(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& environment, const ChildLimits& limits);

}  // namespace depscan
