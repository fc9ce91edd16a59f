// Turns what the child reported (or how it died) into step records and findings.
#include <signal.h>
#include <string.h>

#include <fmt/format.h>

#include "loader/cuda_driver_api.h"
#include "loader/verify.h"
#include "loader/verify_internal.h"

namespace depscan {
namespace {

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{} (signal {})", abbrev, sig) : fmt::format("signal {}", sig);
}

Finding error(std::string code, std::string message, std::string fix) {
  return {std::move(code), Severity::Error, std::nullopt, std::move(message), std::move(fix), ""};
}

StepRecord record_of(const StepEvent& e) {
  return {e.step, e.library, e.status, e.message, e.data, e.loaded, e.milliseconds};
}

// "libcuda.so.1 (PTX JIT)" -> "libcuda.so.1 (PTX JIT) = /usr/lib/x86_64-linux-gnu/libcuda.so.1" when an
// earlier step recorded which file the loader picked for that name.
std::string with_file(const RuntimeReport& report, const std::string& library) {
  std::string name = library.substr(0, library.find(' '));
  for (const StepRecord& s : report.steps)
    if (data_string(&s, "name") == name)
      if (std::string path = data_string(&s, "path"); !path.empty()) return fmt::format("{} = {}", library, path);
  return library;
}

// A library the probe loaded wrote events of its own: what the steps after that reported is lost.
void add_event_flood(RuntimeReport& report) {
  std::string message = fmt::format(
      "the probe's event descriptor ({}) carried more than {} events ({} more lines were ignored): a library the probe "
      "loaded writes to it, so the steps after that point are unknown",
      kProbeEventFd, kMaxProbeEvents, report.child.lines_ignored);
  report.findings.push_back(error("verify-failed", message,
                                  "a library the application loads writes to file descriptors it does not own: find it "
                                  "among the files the steps above loaded and replace it"));
}

std::string left_behind(const ChildRun& run, const ChildLimits& limits) {
  if (!run.unkillable) return "";
  return fmt::format("; it was still there {} s later, stuck in the kernel (a driver call in uninterruptible sleep: "
                     "look for NVIDIA Xid errors in dmesg), and was left behind",
                     limits.kill_grace.count() / 1000.0);
}

// cuDNN aborts the process when a sub-library it forwards a call to cannot be loaded: 9.x prints
// "Invalid handle. Cannot load symbol cudnnGetVersion", 8.x "Could not load library libcudnn_cnn_infer.so.8".
std::string crash_fix(const StepEvent& open, const std::string& stderr_line) {
  bool cudnn_sublibrary = open.step.starts_with("cudnn.") && (stderr_line.find("Cannot load symbol") != std::string::npos ||
                                                              stderr_line.find("Could not load library") != std::string::npos);
  if (cudnn_sublibrary)
    return fmt::format("{} could not load one of its sub-libraries and aborted, as the application would: install every "
                       "sub-library of the same cuDNN release beside it (cuDNN 9: libcudnn_graph.so.9 holds the version "
                       "functions, libcudnn_ops, _cnn, _adv, _engines_* and _heuristic the rest; cuDNN 8: libcudnn_ops_infer, "
                       "_ops_train, _cnn_infer, _cnn_train, _adv_infer, _adv_train), or reinstall the nvidia-cudnn-cuNN wheel",
                       open.library);
  return fmt::format("{} crashes the process that loads it: the application would crash the same way. Check which file "
                     "was loaded (see the step's library) and replace it", open.library);
}

void add_interrupted_step(RuntimeReport& report, const ChildLimits& limits) {
  const ChildRun& run = report.child;
  StepEvent open = *run.open_step;
  open.library = with_file(report, open.library);
  std::string stderr_line = last_line(run.stderr_tail);
  std::string tail = stderr_line.empty() ? "" : fmt::format(" (last stderr line: {})", stderr_line);
  if (!run.timeout.empty()) {
    auto limit = run.timeout == "step" ? limits.step_timeout : limits.total_timeout;
    std::string message = fmt::format("timed out in step {} while in {}: no answer within the {} limit of {} s; the probe was killed with SIGKILL{}{}",
                                      open.step, open.library, run.timeout == "step" ? "per-step" : "overall",
                                      limit.count() / 1000.0, left_behind(run, limits), tail);
    report.steps.push_back({open.step, open.library, StepStatus::Failed, message, {{"timeout", run.timeout}}, {}, 0});
    report.findings.push_back(error("verify-timeout", message,
        fmt::format("{} hangs when called as the application would call it; check the driver installation (nvidia-smi) and that no other process holds the GPU", open.library)));
    return;
  }
  std::string how = run.signal ? "crashed with " + signal_name(run.signal)
                               : fmt::format("exited with code {} without finishing", run.exit_code);
  std::string message = fmt::format("{} in step {} while loading or calling {}{}", how, open.step, open.library, tail);
  report.steps.push_back({open.step, open.library, StepStatus::Failed, message, {{"signal", run.signal}}, {}, 0});
  report.findings.push_back(error("verify-crash", "the probe " + message, crash_fix(open, stderr_line)));
}

// The fix for a failed step. The probe's kernel is a correct vector add, so an error from it that
// outlives the step is the GPU's, the driver's or the MPS server's.
std::string step_fix(const StepRecord& s) {
  if (!s.step.starts_with("kernel.device") || !s.data.contains("sticky_error"))
    return fmt::format("the application would meet the same error when it calls into {}", s.library);
  if (s.data["sticky_error"] == cuda::kErrorMpsClientTerminated)
    return "the MPS server ended this client; a fault in any client of the server ends them all: check the MPS "
           "server's log and restart it (nvidia-cuda-mps-control)";
  std::string cause = s.data.contains("sticky_error_call")
                          ? "the driver could not make a context on this GPU (cuDevicePrimaryCtxRetain)"
                          : "the probe's own kernel does not fault";
  return cause + ", so the GPU or the driver is at fault and other CUDA programs on this GPU are likely to fail too: "
                 "look for Xid errors in the kernel log (dmesg, journalctl -k), check nvidia-smi -q for ECC errors and "
                 "retired or remapped rows, then reset the GPU (nvidia-smi --gpu-reset) or reboot";
}

}  // namespace

void collect_steps(RuntimeReport& report, const ChildLimits& limits) {
  const ChildRun& run = report.child;
  if (!run.spawn_error.empty()) {
    report.steps.push_back({"probe", "depscan __probe", StepStatus::Failed, run.spawn_error, {}, {}, 0});
    report.findings.push_back(error("verify-failed", run.spawn_error, "reinstall depscan; the probe is depscan itself"));
    return;
  }
  for (const StepEvent& e : run.events)
    if (!e.is_start) report.steps.push_back(record_of(e));
  if (run.lines_ignored) add_event_flood(report);
  // Auditing the machine's own stack, a cuDNN that is absent as predicted is not a failure.
  for (StepRecord& s : report.steps)
    if (s.step == "cudnn.load" && s.status == StepStatus::Failed && report.prediction.local_stack &&
        (!report.prediction.cudnn || !report.prediction.cudnn->path)) {
      s.status = StepStatus::NotRun;
      s.message = "not run: no cuDNN on this machine: " + s.message;
    }
  // After a flood the last start event kept is not the probe's: its step is not named.
  if (run.open_step && !run.lines_ignored) return add_interrupted_step(report, limits);
  if (!run.timeout.empty() || run.signal || run.exit_code != 0) {
    std::string message = !run.timeout.empty() ? fmt::format("the probe was killed after the {} timeout between steps{}", run.timeout,
                                                             left_behind(run, limits))
                          : run.signal ? "the probe died with " + signal_name(run.signal) + " between steps"
                                       : fmt::format("the probe exited with code {}: {}", run.exit_code, last_line(run.stderr_tail));
    report.steps.push_back({"probe", "depscan __probe", StepStatus::Failed, message, {}, {}, 0});
    report.findings.push_back(error(run.timeout.empty() ? "verify-failed" : "verify-timeout", message,
                                    "run depscan __probe by hand with the same environment to see its output"));
  }
}

void collect_step_findings(RuntimeReport& report) {
  for (const StepRecord& s : report.steps) {
    if (s.status != StepStatus::Failed || s.step == "probe" || s.data.contains("timeout") || s.data.contains("signal")) continue;
    report.findings.push_back(error("verify-step-failed", fmt::format("{}: {}", s.step, s.message), step_fix(s)));
  }
}

}  // namespace depscan
