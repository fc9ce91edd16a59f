// One verdict per prediction: what the static analysis said, what the probe saw, and whether
// they agree. A row is `not checked` when either side has nothing to compare.
#include <algorithm>

#include <fmt/format.h>

#include "analyzer/input/fs.h"
#include "loader/cudnn_api.h"
#include "loader/verify_internal.h"

namespace depscan {

std::string data_string(const StepRecord* s, const char* key) { return s ? string_member(s->data, key) : ""; }
std::optional<long long> data_number(const StepRecord* s, const char* key) {
  return s ? number_member(s->data, key) : std::nullopt;
}
bool data_flag(const StepRecord* s, const char* key) { return s && flag_member(s->data, key); }

namespace {

std::string describe(const PredictedLibrary& lib) {
  if (!lib.path) return fmt::format("{}: not found", lib.name);
  return fmt::format("{} -> {} ({})", lib.name, *lib.path, lib.how);
}

std::vector<std::string> all_loaded(const RuntimeReport& r) {
  std::vector<std::string> out;
  for (const StepRecord& s : r.steps)
    for (const std::string& p : s.loaded) out.push_back(canonical_or_same(p));
  return out;
}

Verdict agree(bool same) { return same ? Verdict::Confirmed : Verdict::Contradicted; }

void library_row(RuntimeReport& r) {
  const Prediction& p = r.prediction;
  if (p.cudnn_names.empty()) {
    r.verdicts.push_back({"cuDNN library", "the application does not load cuDNN", "not probed", Verdict::NotChecked});
    return;
  }
  const StepRecord* load = find_step(r, "cudnn.load");
  std::string path = data_string(load, "path");
  std::string observed = !load ? "the step did not finish" : path.empty() ? load->message
                         : fmt::format("{} -> {}", data_string(load, "name"), canonical_or_same(path));
  if (!p.cudnn || !load) {
    r.verdicts.push_back({"cuDNN library", p.cudnn ? describe(*p.cudnn) : "no prediction: the resolver gave no answer", observed, Verdict::NotChecked});
    return;
  }
  bool same = p.cudnn->path ? (!path.empty() && canonical_or_same(path) == *p.cudnn->path) : path.empty();
  r.verdicts.push_back({"cuDNN library", describe(*p.cudnn), observed, agree(same)});
}

void version_row(RuntimeReport& r) {
  const Prediction& p = r.prediction;
  const StepRecord* v = find_step(r, "cudnn.version");
  auto version = data_number(v, "version");
  if (!p.cudnn || !version) return;
  std::string observed = fmt::format("cudnnGetVersion() = {} ({})", *version, cudnn::version_text(static_cast<size_t>(*version)));
  if (const auto& predicted = p.cudnn_version) {
    std::string text = fmt::format("{}.{}.{}", predicted->version.major(), predicted->version.minor(), predicted->version.patch());
    r.verdicts.push_back({"cuDNN version", fmt::format("{} ({})", predicted->version.str(), predicted->source), observed,
                          agree(text == cudnn::version_text(static_cast<size_t>(*version)))});
    return;
  }
  r.verdicts.push_back({"cuDNN version", fmt::format("{}.x (the name {})", p.cudnn_major, p.cudnn->name), observed,
                        agree(cudnn::major_of(static_cast<size_t>(*version)) == p.cudnn_major)});
}

void cudart_row(RuntimeReport& r) {
  const Prediction& p = r.prediction;
  auto cudart = data_number(find_step(r, "cudnn.version"), "cudart");
  if (!cudart) return;
  std::string observed = fmt::format("cuDNN was built with the CUDA {}.{} runtime (cudnnGetCudartVersion() = {})", *cudart / 1000, *cudart % 1000 / 10, *cudart);
  if (!p.cudart_major && p.cudnn_cuda_major) {  // no application runtime (the input is cuDNN itself)
    r.verdicts.push_back({"CUDA runtime of cuDNN", fmt::format("CUDA {}.x ({})", *p.cudnn_cuda_major, p.cudnn_cuda_evidence),
                          observed, agree(*cudart / 1000 == *p.cudnn_cuda_major)});
    return;
  }
  if (!p.cudart_major) {
    r.verdicts.push_back({"CUDA runtime of cuDNN", "no libcudart in the graph", observed, Verdict::NotChecked});
    return;
  }
  r.verdicts.push_back({"CUDA runtime of cuDNN", fmt::format("CUDA {}.x (libcudart.so.{} resolved for {})", *p.cudart_major, *p.cudart_major, p.subject), observed,
                        agree(*cudart / 1000 == *p.cudart_major)});
}

bool same_library(const std::string& loaded, const std::string& soname) {
  std::string stem = soname.substr(0, soname.find(".so") + 3);  // libcudnn_ops.so
  std::string base = basename_of(loaded);
  return base.rfind(stem, 0) == 0 && (base.size() == stem.size() || base[stem.size()] == '.');
}

void sublibrary_rows(RuntimeReport& r) {
  std::vector<std::string> loaded = all_loaded(r);
  for (const PredictedLibrary& sub : r.prediction.sublibraries) {
    std::string seen;
    for (const std::string& l : loaded)
      if (same_library(l, sub.name)) seen = l;
    if (seen.empty()) {
      r.verdicts.push_back({"cuDNN sub-library " + sub.name, describe(sub), "not loaded by the steps that ran (cuDNN loads it on demand)", Verdict::NotChecked});
      continue;
    }
    r.verdicts.push_back({"cuDNN sub-library " + sub.name, describe(sub), "loaded " + seen, agree(sub.path && *sub.path == seen)});
  }
  if (r.prediction.sublibraries.empty()) return;
  for (const std::string& l : loaded) {
    std::string base = basename_of(l);
    if (base.rfind("libcudnn_", 0) != 0) continue;
    bool predicted = false;
    for (const PredictedLibrary& sub : r.prediction.sublibraries) predicted = predicted || same_library(l, sub.name);
    if (!predicted) r.verdicts.push_back({"cuDNN sub-library " + base, "not in the predicted graph", "loaded " + l, Verdict::Contradicted});
  }
}

// Every object the probe's steps added, against the predicted graph. Objects outside it are
// listed, not judged: a real driver opens its own helpers (PTX JIT compiler and others) that no
// static graph contains; cuDNN's own sub-libraries are judged in sublibrary_rows.
void loaded_objects_row(RuntimeReport& r) {
  std::vector<std::string> loaded = all_loaded(r), outside;
  if (loaded.empty()) return;
  for (const std::string& l : loaded)
    if (std::find(r.prediction.graph_objects.begin(), r.prediction.graph_objects.end(), l) == r.prediction.graph_objects.end())
      outside.push_back(l);
  std::string predicted = fmt::format("{} objects in the predicted graph", r.prediction.graph_objects.size());
  if (outside.empty()) {
    r.verdicts.push_back({"objects loaded by the probe", predicted, fmt::format("{} loaded, all in the predicted graph", loaded.size()), Verdict::Confirmed});
    return;
  }
  std::string list;
  for (const std::string& o : outside) list += (list.empty() ? "" : ", ") + o;
  r.verdicts.push_back({"objects loaded by the probe", predicted,
                        fmt::format("{} loaded, {} not in the predicted graph: {}", loaded.size(), outside.size(), list), Verdict::NotChecked});
}

void driver_row(RuntimeReport& r) {
  const Prediction& p = r.prediction;
  const StepRecord* load = find_step(r, "driver.load");
  if (!load) return;
  std::string path = data_string(load, "path");
  bool stub = data_flag(load, "stub");
  std::string observed = path.empty() ? load->message : fmt::format("{}{}", canonical_or_same(path), stub ? " (the toolkit's stub)" : "");
  if (!p.driver) {
    r.verdicts.push_back({"driver library", "no prediction: the resolver gave no answer", observed, Verdict::NotChecked});
    return;
  }
  std::string predicted = describe(*p.driver) + (p.driver->path && is_stub_driver_path(*p.driver->path) ? " (the toolkit's stub)" : "");
  bool same = p.driver->path ? (!path.empty() && canonical_or_same(path) == *p.driver->path) : path.empty();
  r.verdicts.push_back({"driver library", predicted, observed, agree(same)});
}

void driver_version_row(RuntimeReport& r) {
  const Prediction& p = r.prediction;
  auto driver = data_number(find_step(r, "driver.init"), "driver_version");
  auto cudart = data_number(find_step(r, "cudnn.version"), "cudart");
  long long need = std::max<long long>(cudart.value_or(0), p.cudart_major.value_or(0) * 1000LL);
  if (need == 0) return;
  bool no_driver_predicted = p.driver && !p.driver->path;
  std::string predicted = p.driver_too_old        ? "too old for the runtime (cuda-driver-too-old)"
                          : no_driver_predicted ? "nothing to judge: libcuda.so.1 not found"
                                                : "new enough (no cuda-driver-too-old finding)";
  if (!driver || !find_step(r, "driver.init") || find_step(r, "driver.init")->status != StepStatus::Ok) {
    const StepRecord* init = find_step(r, "driver.init");
    r.verdicts.push_back({"driver version for the runtime", predicted, init ? init->message : "no NVIDIA driver", Verdict::NotChecked});
    return;
  }
  bool fits = *driver / 1000 >= need / 1000;
  if (no_driver_predicted) {  // the driver-library row already contradicts the prediction
    r.verdicts.push_back({"driver version for the runtime", predicted, fmt::format("driver supports CUDA {}.{}", *driver / 1000,
                          *driver % 1000 / 10), Verdict::NotChecked});
    return;
  }
  std::string observed = fmt::format("driver supports CUDA {}.{}, the runtime needs CUDA {}.x{}", *driver / 1000, *driver % 1000 / 10, need / 1000,
                                     fits ? (*driver < need ? " (minor-version compatibility)" : "") : ": too old");
  r.verdicts.push_back({"driver version for the runtime", predicted, observed, agree(fits != p.driver_too_old)});
}

bool no_image_failure(const StepRecord& s) {
  long long status = data_number(&s, "status").value_or(0);
  return status == 6 || status == 3007 || s.message.find("CUDA_ERROR_NO_BINARY_FOR_GPU") != std::string::npos ||
         s.message.find("no kernel image is available") != std::string::npos;
}

// "sm_86" -> "compute capability 8.6:", as a no-kernel-image finding names its GPU (the rest of the
// message lists the file's own sm_ targets, which name other GPUs).
std::string finding_subject_of(const std::string& sm) {
  if (sm.size() < 5 || !sm.starts_with("sm_")) return sm;
  return fmt::format("compute capability {}.{}:", sm.substr(3, sm.size() - 4), sm.back());
}

// The convolution step runs cuDNN's kernels: the application's own GPU code is not what it observes.
bool about_cudnn(const Finding& f) { return basename_of(f.path).starts_with("libcudnn"); }

void kernel_image_rows(RuntimeReport& r, const std::vector<Finding>& device_findings) {
  for (const StepRecord& s : r.steps) {
    if (s.step.rfind("cudnn.convolution.device", 0) != 0) continue;
    std::string sm = data_string(&s, "sm");
    std::vector<std::string> missing;
    for (const Finding& f : device_findings)
      if (f.code == "no-kernel-image" && about_cudnn(f) && f.message.find(finding_subject_of(sm)) != std::string::npos)
        missing.push_back(f.message);
    std::string predicted = missing.empty() ? fmt::format("kernel images for {} (no no-kernel-image finding)", sm) : missing.front();
    if (s.status == StepStatus::NotRun) continue;
    bool observed_missing = s.status == StepStatus::Failed && no_image_failure(s);
    std::string observed = s.status == StepStatus::Ok ? fmt::format("cuDNN ran a convolution on {}", sm) : s.message;
    Verdict v = s.status == StepStatus::Ok || observed_missing ? agree(observed_missing == !missing.empty()) : Verdict::NotChecked;
    r.verdicts.push_back({"kernel image for " + sm, predicted, observed, v});
  }
}

}  // namespace

const StepRecord* find_step(const RuntimeReport& report, const std::string& step) {
  for (const StepRecord& s : report.steps)
    if (s.step == step) return &s;
  return nullptr;
}

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::Confirmed: return "confirmed";
    case Verdict::Contradicted: return "contradicted";
    case Verdict::NotChecked: return "not checked";
  }
  return "?";
}

void collect_verdicts(RuntimeReport& report, const std::vector<Finding>& device_findings) {
  library_row(report);
  version_row(report);
  cudart_row(report);
  sublibrary_rows(report);
  loaded_objects_row(report);
  driver_row(report);
  driver_version_row(report);
  kernel_image_rows(report, device_findings);
  for (const VerdictRow& v : report.verdicts)
    if (v.verdict == Verdict::Contradicted)
      report.findings.push_back({"verify-contradiction", Severity::Error, std::nullopt,
                                 fmt::format("{}: predicted {}, observed {}", v.subject, v.predicted, v.observed),
                                 "the static prediction and the live loader disagree: trust the observation, and report the case if depscan predicted wrongly", ""});
}

}  // namespace depscan
