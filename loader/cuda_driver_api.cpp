#include "loader/cuda_driver_api.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace depscan::cuda {
namespace {

template <typename Fn>
void bind(void* handle, const char* symbol, Fn& slot, std::string& missing) {
  slot = reinterpret_cast<Fn>(::dlsym(handle, symbol));
  if (!slot) missing += missing.empty() ? symbol : fmt::format(", {}", symbol);
}

// Names from cuda.h for the results the probe reasons about, for drivers (like the toolkit's
// stub) whose cuGetErrorName does not answer.
const char* name_from_header(CUresult result) {
  switch (result) {
    case kErrorNotInitialized: return "CUDA_ERROR_NOT_INITIALIZED";
    case kErrorStubLibrary: return "CUDA_ERROR_STUB_LIBRARY";
    case kErrorInsufficientDriver: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case kErrorNoDevice: return "CUDA_ERROR_NO_DEVICE";
    case kErrorNoBinaryForGpu: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case kErrorUnsupportedPtxVersion: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    default: return nullptr;
  }
}

}  // namespace

std::string bind_driver_api(void* handle, DriverApi& api) {
  std::string missing;
  bind(handle, "cuGetErrorName", api.cuGetErrorName, missing);
  bind(handle, "cuGetErrorString", api.cuGetErrorString, missing);
  bind(handle, "cuInit", api.cuInit, missing);
  bind(handle, "cuDriverGetVersion", api.cuDriverGetVersion, missing);
  bind(handle, "cuDeviceGetCount", api.cuDeviceGetCount, missing);
  bind(handle, "cuDeviceGet", api.cuDeviceGet, missing);
  bind(handle, "cuDeviceGetName", api.cuDeviceGetName, missing);
  bind(handle, "cuDeviceGetAttribute", api.cuDeviceGetAttribute, missing);
  bind(handle, "cuDeviceTotalMem_v2", api.cuDeviceTotalMem, missing);
  bind(handle, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain, missing);
  bind(handle, "cuDevicePrimaryCtxRelease_v2", api.cuDevicePrimaryCtxRelease, missing);
  bind(handle, "cuCtxSetCurrent", api.cuCtxSetCurrent, missing);
  bind(handle, "cuCtxSynchronize", api.cuCtxSynchronize, missing);
  bind(handle, "cuModuleLoadData", api.cuModuleLoadData, missing);
  bind(handle, "cuModuleGetFunction", api.cuModuleGetFunction, missing);
  bind(handle, "cuModuleUnload", api.cuModuleUnload, missing);
  bind(handle, "cuMemAlloc_v2", api.cuMemAlloc, missing);
  bind(handle, "cuMemFree_v2", api.cuMemFree, missing);
  bind(handle, "cuMemcpyHtoD_v2", api.cuMemcpyHtoD, missing);
  bind(handle, "cuMemcpyDtoH_v2", api.cuMemcpyDtoH, missing);
  bind(handle, "cuLaunchKernel", api.cuLaunchKernel, missing);
  return missing;
}

std::string describe_cuda_error(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(result, &name) != kSuccess) name = nullptr;
  if (api.cuGetErrorString && api.cuGetErrorString(result, &text) != kSuccess) text = nullptr;
  if (!name && (name = name_from_header(result)))
    return fmt::format("{} ({}; the driver's cuGetErrorName gave no name, this one is from cuda.h){}{}", name, result,
                       text ? ": " : "", text ? text : "");
  return fmt::format("{} ({}): {}", name ? name : "unknown CUresult", result,
                     text ? text : "no description from the driver");
}

}  // namespace depscan::cuda
