// Host-side cuDNN steps: load the library by the application's name, query its versions,
// run the cross-library version checks. None of these needs a GPU.
#include <dlfcn.h>

#include <fmt/format.h>

#include "loader/loaded_objects.h"
#include "loader/probe.h"

namespace depscan {

StepResult load_cudnn(ProbeState& state, const ProbeRequest& request) {
  std::vector<std::string> errors;
  for (const std::string& name : request.cudnn_names) {
    ::dlerror();
    void* handle = ::dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
      const char* err = ::dlerror();
      errors.push_back(err ? err : fmt::format("{}: dlopen failed", name));
      continue;
    }
    state.cudnn = handle;
    state.cudnn_name = name;
    std::string path = handle_path(handle);
    return {StepStatus::Ok, fmt::format("dlopen(\"{}\") picked {}", name, path),
            {{"name", name}, {"path", path}}};
  }
  std::string joined;
  for (const std::string& e : errors) joined += (joined.empty() ? "" : "; ") + e;
  return {StepStatus::Failed, fmt::format("cuDNN could not be loaded: {}", joined),
          {{"errors", errors}}};
}

StepResult query_cudnn_versions(ProbeState& state) {
  if (!state.cudnn) return {StepStatus::NotRun, "not run: cuDNN was not loaded", {}};
  std::string missing = bind_version_api(state.cudnn, state.cudnn_api);
  if (!missing.empty())
    return {StepStatus::Failed, fmt::format("{} does not export {}", state.cudnn_name, missing), {}};
  const cudnn::CudnnApi& api = state.cudnn_api;
  size_t version = api.cudnnGetVersion();
  size_t cudart = api.cudnnGetCudartVersion();
  state.cudnn_major = cudnn::major_of(version);
  nlohmann::json data = {{"version", version}, {"version_text", cudnn::version_text(version)},
                         {"major", state.cudnn_major}, {"cudart", cudart}};
  std::string message = fmt::format("cudnnGetVersion() = {} ({}), cudnnGetCudartVersion() = {}",
                                    version, cudnn::version_text(version), cudart);
  if (api.cudnnGetMaxDeviceVersion) {
    size_t max_device = api.cudnnGetMaxDeviceVersion();
    data["max_device"] = max_device;
    message += fmt::format(", cudnnGetMaxDeviceVersion() = {}", max_device);
  } else {
    data["max_device"] = nullptr;
    message += ", cudnnGetMaxDeviceVersion absent (cuDNN 8 and older)";
  }
  return {StepStatus::Ok, message, data};
}

StepResult check_cudnn_sublibraries(ProbeState& state) {
  if (!state.cudnn || state.cudnn_major == 0)
    return {StepStatus::NotRun, "not run: cuDNN version unknown", {}};
  std::vector<std::string> functions = cudnn::version_check_functions(state.cudnn_major);
  if (functions.empty())
    return {StepStatus::NotRun,
            fmt::format("not run: cuDNN {} has no sub-libraries", state.cudnn_major), {}};
  nlohmann::json checks = nlohmann::json::array();
  std::vector<std::string> failures;
  for (const std::string& name : functions) {
    auto check = reinterpret_cast<cudnn::Status (*)()>(::dlsym(state.cudnn, name.c_str()));
    if (!check) {
      checks.push_back({{"function", name}, {"status", nullptr}, {"text", "not exported"}});
      failures.push_back(fmt::format("{} not exported", name));
      continue;
    }
    cudnn::Status status = check();
    std::string text = describe_status(state.cudnn_api, state.cudnn_major, status);
    checks.push_back({{"function", name}, {"status", status}, {"text", text}});
    if (status != cudnn::kSuccess) failures.push_back(fmt::format("{}() = {}", name, text));
  }
  if (!failures.empty()) {
    std::string joined;
    for (const std::string& f : failures) joined += (joined.empty() ? "" : "; ") + f;
    return {StepStatus::Failed, joined, {{"checks", checks}}};
  }
  return {StepStatus::Ok,
          fmt::format("{} sub-library version checks returned CUDNN_STATUS_SUCCESS", functions.size()),
          {{"checks", checks}}};
}

}  // namespace depscan
