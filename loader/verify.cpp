#include "loader/verify.h"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "loader/probe.h"
#include "loader/verify_internal.h"

extern char** environ;

namespace depscan {
namespace {

std::string self_executable() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "depscan";
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : ":") + p;
  return out;
}

// This process's environment with the application's LD_LIBRARY_PATH and LD_PRELOAD.
std::vector<std::string> child_environment(const ScanOptions& o, const Prediction& p, std::vector<std::string>& shown) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    if (kv.rfind("LD_LIBRARY_PATH=", 0) == 0 || kv.rfind("LD_PRELOAD=", 0) == 0) continue;
    env.emplace_back(kv);
  }
  const char* current_path = std::getenv("LD_LIBRARY_PATH");
  const char* current_preload = std::getenv("LD_PRELOAD");
  std::vector<std::string> parts = p.dirs_before_ld_library_path;
  parts.push_back(o.ld_library_path ? *o.ld_library_path : current_path ? current_path : "");
  parts.insert(parts.end(), p.dirs_after_ld_library_path.begin(), p.dirs_after_ld_library_path.end());
  std::string path = join(parts);
  std::string preload = o.preload ? *o.preload : current_preload ? current_preload : "";
  if (!path.empty()) env.push_back("LD_LIBRARY_PATH=" + path);
  if (!preload.empty()) env.push_back("LD_PRELOAD=" + preload);
  shown = {"LD_LIBRARY_PATH=" + path, "LD_PRELOAD=" + preload};
  return env;
}

// The static checks again, now that the probe has named the GPUs (no-kernel-image and friends).
std::vector<Finding> findings_for_devices(const ScanOptions& options, const RuntimeReport& report) {
  ScanOptions again = options;
  for (const StepEvent& e : report.child.events)
    if (!e.is_start && e.step.rfind("kernel.device", 0) == 0 && e.data.contains("sm") && e.data["sm"].is_string())
      again.target.gpus.push_back(e.data["sm"].get<std::string>());
  if (again.target.gpus.empty() || options.inputs.empty()) return {};
  ScanReport rescan = run_scan(again);
  std::vector<Finding> findings = std::move(rescan.result.findings);
  for (Finding& f : findings)  // the verdicts need to know which file a finding is about
    if (f.object && *f.object < rescan.result.graph.objects.size()) f.path = rescan.result.graph.objects[*f.object].path;
  return findings;
}

}  // namespace

void judge(RuntimeReport& report, const std::vector<Finding>& device_findings) {
  collect_steps(report, report.limits);
  collect_step_findings(report);
  collect_verdicts(report, device_findings);
  const StepRecord* kernel = find_step(report, "kernel");
  if (kernel && kernel->status == StepStatus::NotRun)
    report.findings.push_back({"verify-gpu-not-run", Severity::Info, std::nullopt,
                               "GPU steps " + kernel->message, "run depscan --verify on a machine with the NVIDIA driver and a GPU to check the kernel and cuDNN steps", ""});
  for (const StepRecord& s : report.steps)  // a GPU whose driver will not compile the probe's PTX
    if (s.step.starts_with("kernel.device") && s.status == StepStatus::NotRun && !data_flag(&s, "after_sticky_error"))
      report.findings.push_back({"verify-gpu-not-run", Severity::Info, std::nullopt, s.step + " " + s.message,
                                 "unset CUDA_DISABLE_PTX_JIT, or install the driver's libnvidia-ptxjitcompiler.so.1, "
                                 "to let depscan --verify run its kernel",
                                 ""});
  const StepRecord* init = find_step(report, "driver.init");
  const StepRecord* load = find_step(report, "driver.load");
  std::string load_path = data_string(load, "path");
  if (data_flag(load, "stub") || data_flag(init, "stub"))
    report.findings.push_back({"stub-driver", Severity::Warning, std::nullopt,
                               fmt::format("the loader picked the CUDA toolkit's stub libcuda.so.1 ({}): it answers every call with CUDA_ERROR_STUB_LIBRARY (34) and shadows a real driver",
                                           load_path.empty() ? "?" : load_path),
                               "remove the toolkit's stubs directory from LD_LIBRARY_PATH and the ld.so.cache; it is for linking only", ""});
  for (const Finding& f : report.findings)
    if (f.severity == Severity::Error) report.failed = true;
}

RuntimeReport run_verify(const ScanOptions& options, const ScanReport& scan, const VerifyOptions& verify) {
  RuntimeReport report;
  report.limits = {verify.step_timeout, verify.total_timeout};
  if (options.root) {
    report.refused = fmt::format("--verify loads the stack on this machine and cannot apply to --root {}: run depscan --verify inside that system (for example in the container) instead", *options.root);
    return report;
  }
  std::string program = verify.probe_program.empty() ? self_executable() : verify.probe_program;
  report.prediction = predict(options, scan, program);
  ProbeRequest request;
  request.cudnn_names = report.prediction.cudnn_names;
  request.max_devices = verify.max_devices;
  request.parent_pid = ::getpid();
  std::vector<std::string> env = child_environment(options, report.prediction, report.child_environment);
  std::vector<std::string> args = {program, "__probe", "--event-fd", std::to_string(kProbeEventFd), "--request", to_json(request).dump()};
  report.child = run_child(program, args, env, report.limits);
  std::vector<Finding> device_findings = findings_for_devices(options, report);
  judge(report, device_findings);
  return report;
}

}  // namespace depscan
