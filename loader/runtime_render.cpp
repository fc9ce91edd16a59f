// The `runtime` section of the JSON report and the step-by-step text of --verify.
#include <fmt/format.h>

#include "analyzer/util/terminal_text.h"

#include "loader/verify.h"

namespace depscan {
namespace {

nlohmann::json library_json(const std::optional<PredictedLibrary>& lib) {
  if (!lib) return nullptr;
  return {{"name", lib->name}, {"path", lib->path ? nlohmann::json(*lib->path) : nlohmann::json(nullptr)}, {"how", lib->how}};
}

nlohmann::json prediction_json(const Prediction& p) {
  nlohmann::json subs = nlohmann::json::array();
  for (const PredictedLibrary& s : p.sublibraries) subs.push_back(library_json(s));
  return {{"subject", p.subject}, {"root", p.root}, {"cudnn_names", p.cudnn_names},
          {"cudnn", library_json(p.cudnn)},
          {"cudnn_version", p.cudnn_version ? nlohmann::json(p.cudnn_version->version.str()) : nlohmann::json(nullptr)},
          {"cudnn_version_source", p.cudnn_version ? nlohmann::json(p.cudnn_version->source) : nlohmann::json(nullptr)},
          {"sublibraries", subs}, {"driver", library_json(p.driver)},
          {"cudart_major", p.cudart_major ? nlohmann::json(*p.cudart_major) : nlohmann::json(nullptr)},
          {"driver_too_old", p.driver_too_old}};
}

nlohmann::json child_json(const ChildRun& c) {
  return {{"exit_code", c.exited ? nlohmann::json(c.exit_code) : nlohmann::json(nullptr)},
          {"signal", c.signal ? nlohmann::json(c.signal) : nlohmann::json(nullptr)},
          {"timeout", c.timeout.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.timeout)},
          {"lines_ignored", c.lines_ignored},
          {"ms", c.milliseconds}};
}

const char* mark(StepStatus s) {
  switch (s) {
    case StepStatus::Ok: return "ok";
    case StepStatus::Failed: return "FAILED";
    case StepStatus::NotRun: return "not run";
  }
  return "?";
}

// "passed" alone would claim a GPU check that did not happen on a machine without a driver.
std::string closing_line(const RuntimeReport& r) {
  if (r.failed) return "runtime verification FAILED\n";
  size_t confirmed = 0, not_checked = 0;
  for (const VerdictRow& v : r.verdicts) {
    confirmed += v.verdict == Verdict::Confirmed;
    not_checked += v.verdict == Verdict::NotChecked;
  }
  bool gpu_not_run = false;
  for (const Finding& f : r.findings) gpu_not_run = gpu_not_run || f.code == "verify-gpu-not-run";
  return fmt::format("runtime verification passed: {} confirmed, {} not checked{}\n", confirmed, not_checked,
                     !gpu_not_run ? ""
                     : confirmed > 0 ? "; the GPU steps did not run here, so loading is proven, running on a GPU is not"
                                     : "; the GPU steps did not run here");
}

}  // namespace

nlohmann::json runtime_json(const RuntimeReport& r) {
  nlohmann::json out = {{"status", !r.refused.empty() ? "refused" : r.failed ? "failed" : "passed"}};
  if (!r.refused.empty()) {
    out["refused"] = r.refused;
    return out;
  }
  nlohmann::json steps = nlohmann::json::array(), verdicts = nlohmann::json::array();
  for (const StepRecord& s : r.steps)
    steps.push_back({{"step", s.step}, {"library", s.library}, {"status", to_string(s.status)}, {"message", s.message},
                     {"data", s.data}, {"loaded", s.loaded}, {"ms", s.milliseconds}});
  for (const VerdictRow& v : r.verdicts)
    verdicts.push_back({{"subject", v.subject}, {"predicted", v.predicted}, {"observed", v.observed}, {"verdict", to_string(v.verdict)}});
  out["prediction"] = prediction_json(r.prediction);
  out["environment"] = r.child_environment;
  out["limits"] = {{"step_seconds", r.limits.step_timeout.count() / 1000.0}, {"total_seconds", r.limits.total_timeout.count() / 1000.0}};
  out["child"] = child_json(r.child);
  out["steps"] = steps;
  out["verdicts"] = verdicts;
  return out;
}

std::string runtime_text(const RuntimeReport& r) {
  if (!r.refused.empty()) return fmt::format("runtime verification: refused: {}\n", r.refused);
  // paths, messages and the probe's stderr come from the analysed files: each on its own line
  std::string out = fmt::format("\nruntime verification of {} (in a child process; the application itself is not run)\n",
                                one_line(r.prediction.subject));
  for (const std::string& e : r.child_environment) out += fmt::format("  {}\n", one_line(e));
  for (const StepRecord& s : r.steps) {
    out += fmt::format("  [{}] {}: {}\n", mark(s.status), s.step, one_line(s.message));
    for (const std::string& p : s.loaded) out += fmt::format("        loaded {}\n", one_line(p));
  }
  out += "verdicts\n";
  for (const VerdictRow& v : r.verdicts)
    out += fmt::format("  [{}] {}\n        predicted: {}\n        observed:  {}\n", to_string(v.verdict),
                       one_line(v.subject), one_line(v.predicted), one_line(v.observed));
  out += closing_line(r);
  return out;
}

}  // namespace depscan
