// Driver steps: load libcuda.so.1 by name, recognise the toolkit's stub, cuInit, versions and
// devices. Every CUresult is checked and described with the driver's own name and string.
#include <dlfcn.h>

#include <array>
#include <cstdlib>

#include <fmt/format.h>

#include "loader/loaded_objects.h"
#include "loader/probe.h"

namespace depscan {
namespace {

bool is_stub_path(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  std::string resolved = real ? real : path;
  std::free(real);
  return path.find("/stubs/") != std::string::npos || resolved.find("/stubs/") != std::string::npos;
}

std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

}  // namespace

StepResult load_driver(ProbeState& state, const ProbeRequest& request) {
  ::dlerror();
  void* handle = ::dlopen(request.driver_name.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    state.no_gpu_reason = fmt::format("no NVIDIA driver: {}", err ? err : "dlopen failed");
    return {StepStatus::NotRun, state.no_gpu_reason, {{"name", request.driver_name}, {"path", nullptr}}};
  }
  std::string path = handle_path(handle);
  bool stub = is_stub_path(path);
  nlohmann::json data = {{"name", request.driver_name}, {"path", path}, {"stub", stub}};
  std::string missing = bind_driver_api(handle, state.cu);
  if (!missing.empty()) {  // no later step may call through the entry points that are null
    state.no_gpu_reason = fmt::format("{} does not export {}", path, missing);
    return {StepStatus::Failed, state.no_gpu_reason, data};
  }
  state.driver = handle;
  if (stub)
    return {StepStatus::Ok,
            fmt::format("dlopen(\"{}\") picked {}: the CUDA toolkit's stub library, not a driver",
                        request.driver_name, path),
            data};
  return {StepStatus::Ok, fmt::format("dlopen(\"{}\") picked {}", request.driver_name, path), data};
}

StepResult init_driver(ProbeState& state) {
  if (!state.driver || !state.cu.cuInit) return {StepStatus::NotRun, "not run: " + state.no_gpu_reason, {}};
  const cuda::DriverApi& cu = state.cu;
  cuda::CUresult init = cu.cuInit(0);
  int version = 0;
  cuda::CUresult version_result = cu.cuDriverGetVersion(&version);
  nlohmann::json data = {{"cuInit", init}, {"cuInit_text", describe_cuda_error(cu, init)}};
  if (version_result == cuda::kSuccess) {
    data["driver_version"] = version;
    data["driver_version_text"] = cuda_version_text(version);
  } else {
    data["driver_version"] = nullptr;
  }
  if (init == cuda::kErrorStubLibrary) {
    data["stub"] = true;
    state.no_gpu_reason = fmt::format("no NVIDIA driver: the loader picked a stub libcuda.so.1 (cuInit returned {})",
                                      describe_cuda_error(cu, init));
    return {StepStatus::NotRun, state.no_gpu_reason, data};
  }
  if (init == cuda::kErrorNoDevice) {
    state.no_gpu_reason = "no CUDA device: cuInit returned " + describe_cuda_error(cu, init);
    return {StepStatus::NotRun, state.no_gpu_reason, data};
  }
  if (init != cuda::kSuccess) {
    state.no_gpu_reason = "cuInit(0) failed: " + describe_cuda_error(cu, init);
    return {StepStatus::Failed, "cuInit(0) returned " + describe_cuda_error(cu, init), data};
  }
  if (version_result != cuda::kSuccess) {
    state.no_gpu_reason = "cuDriverGetVersion failed";
    return {StepStatus::Failed, "cuDriverGetVersion returned " + describe_cuda_error(cu, version_result), data};
  }
  state.driver_ready = true;
  return {StepStatus::Ok,
          fmt::format("cuInit(0) = CUDA_SUCCESS, cuDriverGetVersion() = {} (CUDA {})", version,
                      cuda_version_text(version)),
          data};
}

StepResult list_devices(ProbeState& state, int max_devices) {
  if (!state.driver_ready) return {StepStatus::NotRun, "not run: " + state.no_gpu_reason, {}};
  const cuda::DriverApi& cu = state.cu;
  int count = 0;
  cuda::CUresult r = cu.cuDeviceGetCount(&count);
  if (r != cuda::kSuccess) {
    state.no_gpu_reason = "cuDeviceGetCount failed";
    return {StepStatus::Failed, "cuDeviceGetCount returned " + describe_cuda_error(cu, r), {}};
  }
  if (count == 0) {
    state.no_gpu_reason = "no CUDA device: cuDeviceGetCount() = 0";
    return {StepStatus::NotRun, state.no_gpu_reason, {{"count", 0}, {"devices", nlohmann::json::array()}}};
  }
  nlohmann::json devices = nlohmann::json::array();
  std::string summary;
  for (int i = 0; i < count && i < max_devices; ++i) {
    ProbeDevice d;
    d.ordinal = i;
    std::array<char, 256> name{};
    std::string failed;
    if ((r = cu.cuDeviceGet(&d.handle, i)) != cuda::kSuccess) failed = "cuDeviceGet";
    else if ((r = cu.cuDeviceGetName(name.data(), static_cast<int>(name.size() - 1), d.handle)) != cuda::kSuccess) failed = "cuDeviceGetName";
    else if ((r = cu.cuDeviceGetAttribute(&d.cc_major, cuda::kAttributeComputeCapabilityMajor, d.handle)) != cuda::kSuccess) failed = "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)";
    else if ((r = cu.cuDeviceGetAttribute(&d.cc_minor, cuda::kAttributeComputeCapabilityMinor, d.handle)) != cuda::kSuccess) failed = "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)";
    else if ((r = cu.cuDeviceTotalMem(&d.memory, d.handle)) != cuda::kSuccess) failed = "cuDeviceTotalMem_v2";
    if (!failed.empty()) {
      if (state.devices.empty()) state.no_gpu_reason = fmt::format("device {}: {} failed", i, failed);
      return {StepStatus::Failed, fmt::format("device {}: {} returned {}", i, failed, describe_cuda_error(cu, r)),
              {{"count", count}, {"devices", devices}}};
    }
    d.name = name.data();
    devices.push_back({{"ordinal", i}, {"name", d.name},
                       {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
                       {"sm", fmt::format("sm_{}{}", d.cc_major, d.cc_minor)}, {"memory_bytes", d.memory}});
    summary += fmt::format("{}device {}: {}, sm_{}{}, {} MiB", summary.empty() ? "" : "; ", i, d.name,
                           d.cc_major, d.cc_minor, d.memory >> 20);
    state.devices.push_back(std::move(d));
  }
  return {StepStatus::Ok, fmt::format("{} device(s): {}", count, summary), {{"count", count}, {"devices", devices}}};
}

std::string make_context_current(ProbeState& state, ProbeDevice& device) {
  const cuda::DriverApi& cu = state.cu;
  if (!device.context) {
    cuda::CUresult r = cu.cuDevicePrimaryCtxRetain(&device.context, device.handle);
    device.retain_error = r;
    if (r != cuda::kSuccess) {
      device.context = nullptr;
      return "cuDevicePrimaryCtxRetain returned " + describe_cuda_error(cu, r);
    }
  }
  cuda::CUresult r = cu.cuCtxSetCurrent(device.context);
  return r == cuda::kSuccess ? "" : "cuCtxSetCurrent returned " + describe_cuda_error(cu, r);
}

void release_contexts(ProbeState& state) {
  for (ProbeDevice& d : state.devices) {
    if (!d.context) continue;
    state.cu.cuCtxSetCurrent(nullptr);
    state.cu.cuDevicePrimaryCtxRelease(d.handle);
    d.context = nullptr;
  }
}

}  // namespace depscan
