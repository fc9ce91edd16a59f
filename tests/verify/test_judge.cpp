// judge(): verdicts and findings from a child's events, without running a child.
#include <doctest/doctest.h>

#include "loader/verify.h"

using depscan::RuntimeReport;
using depscan::StepEvent;
using depscan::StepStatus;

namespace {

StepEvent end(const std::string& step, StepStatus status, nlohmann::json data, std::vector<std::string> loaded = {}) {
  StepEvent e;
  e.is_start = false;
  e.step = step;
  e.library = "libcudnn.so.9";
  e.status = status;
  e.message = step + " message";
  e.data = std::move(data);
  e.loaded = std::move(loaded);
  return e;
}

RuntimeReport cudnn_report(std::optional<std::string> predicted_path, const std::string& observed_path) {
  RuntimeReport r;
  r.prediction.cudnn_names = {"libcudnn.so.9"};
  r.prediction.cudnn = depscan::PredictedLibrary{"libcudnn.so.9", predicted_path, predicted_path ? "ld_library_path" : "not_found"};
  r.prediction.cudnn_major = 9;
  if (predicted_path)
    if (auto v = depscan::version_from_file_name(depscan::basename_of(*predicted_path), 3))
      r.prediction.cudnn_version = depscan::SourcedVersion{*v, "file name"};
  r.child.exited = true;
  r.child.exit_code = 0;
  if (observed_path.empty())
    r.child.events.push_back(end("cudnn.load", StepStatus::Failed, {{"errors", {"libcudnn.so.9: cannot open shared object file"}}}));
  else
    r.child.events.push_back(end("cudnn.load", StepStatus::Ok, {{"name", "libcudnn.so.9"}, {"path", observed_path}}, {observed_path}));
  return r;
}

// A cuDNN load of `path` whose version step reported `version` and `cudart`.
RuntimeReport versioned_report(const std::string& path, long version, long cudart) {
  RuntimeReport r = cudnn_report(path, path);
  r.child.events.push_back(end("cudnn.version", StepStatus::Ok, {{"version", version}, {"cudart", cudart}}));
  return r;
}

std::string verdict_of(const RuntimeReport& r, const std::string& subject) {
  for (const auto& v : r.verdicts)
    if (v.subject == subject) return depscan::to_string(v.verdict);
  return "absent";
}

}  // namespace

TEST_CASE("the loader picking another file than predicted is a contradiction and fails the verify") {
  RuntimeReport r = cudnn_report("/opt/a/libcudnn.so.9", "/opt/b/libcudnn.so.9");
  depscan::judge(r, {});
  CHECK(verdict_of(r, "cuDNN library") == "contradicted");
  CHECK(r.failed);
  bool found = false;
  for (const auto& f : r.findings) found = found || (f.code == "verify-contradiction" && f.message.find("/opt/b/libcudnn.so.9") != std::string::npos);
  CHECK(found);
}

TEST_CASE("predicted missing but loaded, and predicted found but missing, are both contradictions") {
  RuntimeReport loaded = cudnn_report(std::nullopt, "/opt/b/libcudnn.so.9");
  depscan::judge(loaded, {});
  CHECK(verdict_of(loaded, "cuDNN library") == "contradicted");
  RuntimeReport missing = cudnn_report("/opt/a/libcudnn.so.9", "");
  depscan::judge(missing, {});
  CHECK(verdict_of(missing, "cuDNN library") == "contradicted");
  RuntimeReport both_missing = cudnn_report(std::nullopt, "");
  depscan::judge(both_missing, {});
  CHECK(verdict_of(both_missing, "cuDNN library") == "confirmed");
  CHECK(both_missing.failed);  // the failed load step still fails the verify
}

TEST_CASE("a version other than the file name promises is a contradiction; the same one is confirmed") {
  RuntimeReport r = versioned_report("/opt/a/libcudnn.so.9.19.0", 91800, 12080);
  r.prediction.cudart_major = 13;
  depscan::judge(r, {});
  CHECK(verdict_of(r, "cuDNN library") == "confirmed");
  CHECK(verdict_of(r, "cuDNN version") == "contradicted");
  CHECK(verdict_of(r, "CUDA runtime of cuDNN") == "contradicted");
  RuntimeReport same = versioned_report("/opt/a/libcudnn.so.9.19.0", 91900, 13010);
  same.prediction.cudart_major = 13;
  depscan::judge(same, {});
  CHECK(verdict_of(same, "cuDNN version") == "confirmed");
  CHECK(verdict_of(same, "CUDA runtime of cuDNN") == "confirmed");
  CHECK(!same.failed);
}

TEST_CASE("without an application runtime, cuDNN's CUDA major is judged against the CUDA libraries it opens") {
  RuntimeReport r = versioned_report("/opt/a/libcudnn.so.9", 91900, 13010);
  r.prediction.cudnn_cuda_major = 12;
  r.prediction.cudnn_cuda_evidence = "libcudnn_adv.so.9 opens libcublasLt.so.12";
  depscan::judge(r, {});
  CHECK(verdict_of(r, "CUDA runtime of cuDNN") == "contradicted");
  RuntimeReport same = versioned_report("/opt/a/libcudnn.so.9", 91900, 13010);
  same.prediction.cudnn_cuda_major = 13;
  depscan::judge(same, {});
  CHECK(verdict_of(same, "CUDA runtime of cuDNN") == "confirmed");
  RuntimeReport unknown = versioned_report("/opt/a/libcudnn.so.9", 91900, 13010);
  depscan::judge(unknown, {});
  CHECK(verdict_of(unknown, "CUDA runtime of cuDNN") == "not checked");
}

TEST_CASE("a child killed in the middle of a step becomes a failed step naming it") {
  RuntimeReport r = cudnn_report("/opt/a/libcudnn.so.9", "/opt/a/libcudnn.so.9");
  StepEvent start;
  start.step = "driver.init";
  start.library = "libcuda.so.1";
  r.child.events.push_back(start);
  r.child.open_step = start;
  r.child.exited = false;
  r.child.signal = 7;
  depscan::judge(r, {});
  REQUIRE(!r.steps.empty());
  CHECK(r.steps.back().step == "driver.init");
  CHECK(r.steps.back().status == StepStatus::Failed);
  CHECK(r.steps.back().message.find("SIGBUS (signal 7)") != std::string::npos);
  CHECK(r.failed);
}

TEST_CASE("auditing this machine's stack, a cuDNN that is absent as predicted is not a failure") {
  RuntimeReport r = cudnn_report(std::nullopt, "");
  r.prediction.local_stack = true;
  depscan::judge(r, {});
  REQUIRE(!r.steps.empty());
  CHECK(r.steps.front().status == StepStatus::NotRun);
  CHECK(r.steps.front().message.rfind("not run: no cuDNN on this machine", 0) == 0);
  CHECK(verdict_of(r, "cuDNN library") == "confirmed");
  CHECK(!r.failed);
}

namespace {

StepEvent convolution(int device, const std::string& sm, StepStatus status) {
  StepEvent e = end("cudnn.convolution.device" + std::to_string(device), status, {{"device", device}, {"sm", sm}});
  if (status == StepStatus::Failed) e.data["status"] = 3007;  // CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH
  return e;
}

depscan::Finding no_image(const std::string& path, const std::string& cc, const std::string& has) {
  return {"no-kernel-image", depscan::Severity::Error, 0,
          path + " on GPU sm_" + cc.substr(0, cc.find('.')) + cc.substr(cc.find('.') + 1) + ", compute capability " + cc +
              ": no kernel image; it has " + has + ".", "", path};
}

}  // namespace

TEST_CASE("the kernel-image row weighs cuDNN's own finding for that GPU, not the application's or another GPU's") {
  RuntimeReport app_lacks;  // the application's kernels lack sm_86; cuDNN's convolution ran
  app_lacks.child.exited = true;
  app_lacks.child.exit_code = 0;
  app_lacks.child.events.push_back(convolution(0, "sm_86", StepStatus::Ok));
  depscan::judge(app_lacks, {no_image("/opt/app/bin/myapp", "8.6", "SASS sm_75")});
  CHECK(verdict_of(app_lacks, "kernel image for sm_86") == "confirmed");
  for (const auto& v : app_lacks.verdicts) CHECK_MESSAGE(v.verdict != depscan::Verdict::Contradicted, v.subject);

  RuntimeReport two_gpus;  // cuDNN lacks sm_86 only; its finding lists the sm_75 it has
  two_gpus.child.exited = true;
  two_gpus.child.events.push_back(convolution(0, "sm_75", StepStatus::Ok));
  two_gpus.child.events.push_back(convolution(1, "sm_86", StepStatus::Failed));
  depscan::judge(two_gpus, {no_image("/opt/lib/libcudnn_engines_precompiled.so.9", "8.6", "SASS sm_75")});
  CHECK(verdict_of(two_gpus, "kernel image for sm_75") == "confirmed");
  CHECK(verdict_of(two_gpus, "kernel image for sm_86") == "confirmed");
}
