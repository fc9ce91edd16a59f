// Runtime confirmation (--verify): a child process loads cuDNN and the driver as the
// application would, runs a kernel and a cuDNN operation, and reports each step; the parent
// compares what happened with the static prediction. The parent never loads CUDA, cuDNN or the
// application, and the application itself is never executed.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/scan/scan.h"
#include "loader/child_process.h"
#include "loader/prediction.h"

namespace depscan {

struct VerifyOptions {
  std::chrono::milliseconds step_timeout{60000};
  std::chrono::milliseconds total_timeout{300000};
  int max_devices = 8;
  std::string probe_program;   // the depscan executable to start as `depscan __probe` ("" = this one)
};

struct StepRecord {
  std::string step, library;
  StepStatus status = StepStatus::Ok;
  std::string message;
  nlohmann::json data = nlohmann::json::object();
  std::vector<std::string> loaded;
  double milliseconds = 0;
};

enum class Verdict { Confirmed, Contradicted, NotChecked };
const char* to_string(Verdict verdict);

struct VerdictRow {
  std::string subject;      // "cuDNN library", "cuDNN sub-library libcudnn_ops.so.9", ...
  std::string predicted;
  std::string observed;
  Verdict verdict = Verdict::NotChecked;
};

struct RuntimeReport {
  std::string refused;                    // non-empty: verify did not run (e.g. --root), why
  Prediction prediction;
  std::vector<std::string> child_environment;  // LD_LIBRARY_PATH / LD_PRELOAD the child ran with
  ChildLimits limits;
  ChildRun child;
  std::vector<StepRecord> steps;
  std::vector<VerdictRow> verdicts;
  std::vector<Finding> findings;
  bool failed = false;                    // a contradiction, a failed step, a crash or a timeout
};

RuntimeReport run_verify(const ScanOptions& options, const ScanReport& scan, const VerifyOptions& verify);

// Steps, verdicts and findings from report.child and report.prediction (split out so it can be
// tested on its own). device_findings: the static checks re-run for the devices the probe found.
void judge(RuntimeReport& report, const std::vector<Finding>& device_findings);

nlohmann::json runtime_json(const RuntimeReport& report);
std::string runtime_text(const RuntimeReport& report);

// The hidden `depscan __probe` mode: the child side. Events go to kProbeEventFd.
int probe_main(const std::string& request_json, int event_fd);

}  // namespace depscan
