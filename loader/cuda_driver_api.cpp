#include "loader/cuda_driver_api.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "analyzer/util/dl_symbol.h"

namespace depscan::cuda {
namespace {

// Names from cuda.h for the results the probe reasons about, for drivers (like the toolkit's
// stub) whose cuGetErrorName does not answer.
const char* name_from_header(CUresult result) {
  switch (result) {
    case kErrorNotInitialized: return "CUDA_ERROR_NOT_INITIALIZED";
    case kErrorStubLibrary: return "CUDA_ERROR_STUB_LIBRARY";
    case kErrorCallRequiresNewerDriver: return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
    case kErrorDeviceUnavailable: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case kErrorNoDevice: return "CUDA_ERROR_NO_DEVICE";
    case kErrorNoBinaryForGpu: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case kErrorInvalidPtx: return "CUDA_ERROR_INVALID_PTX";
    case kErrorJitCompilerNotFound: return "CUDA_ERROR_JIT_COMPILER_NOT_FOUND";
    case kErrorUnsupportedPtxVersion: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case kErrorJitCompilationDisabled: return "CUDA_ERROR_JIT_COMPILATION_DISABLED";
    case kErrorContained: return "CUDA_ERROR_CONTAINED";
    case kErrorIllegalAddress: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case kErrorLaunchTimeout: return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case kErrorAssert: return "CUDA_ERROR_ASSERT";
    case kErrorHardwareStackError: return "CUDA_ERROR_HARDWARE_STACK_ERROR";
    case kErrorIllegalInstruction: return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
    case kErrorMisalignedAddress: return "CUDA_ERROR_MISALIGNED_ADDRESS";
    case kErrorInvalidAddressSpace: return "CUDA_ERROR_INVALID_ADDRESS_SPACE";
    case kErrorInvalidPc: return "CUDA_ERROR_INVALID_PC";
    case kErrorLaunchFailed: return "CUDA_ERROR_LAUNCH_FAILED";
    case kErrorTensorMemoryLeak: return "CUDA_ERROR_TENSOR_MEMORY_LEAK";
    case kErrorMpsClientTerminated: return "CUDA_ERROR_MPS_CLIENT_TERMINATED";
    case kErrorExternalDevice: return "CUDA_ERROR_EXTERNAL_DEVICE";
    case kErrorSystemDriverMismatch: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case kErrorCompatNotSupportedOnDevice: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    default: return nullptr;
  }
}

}  // namespace

std::string bind_driver_api(void* handle, DriverApi& api) {
  std::string missing;
  bind_symbol(handle, "cuGetErrorName", api.cuGetErrorName, &missing);
  bind_symbol(handle, "cuGetErrorString", api.cuGetErrorString, &missing);
  bind_symbol(handle, "cuInit", api.cuInit, &missing);
  bind_symbol(handle, "cuDriverGetVersion", api.cuDriverGetVersion, &missing);
  bind_symbol(handle, "cuDeviceGetCount", api.cuDeviceGetCount, &missing);
  bind_symbol(handle, "cuDeviceGet", api.cuDeviceGet, &missing);
  bind_symbol(handle, "cuDeviceGetName", api.cuDeviceGetName, &missing);
  bind_symbol(handle, "cuDeviceGetAttribute", api.cuDeviceGetAttribute, &missing);
  bind_symbol(handle, "cuDeviceTotalMem_v2", api.cuDeviceTotalMem, &missing);
  bind_symbol(handle, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain, &missing);
  bind_symbol(handle, "cuDevicePrimaryCtxRelease_v2", api.cuDevicePrimaryCtxRelease, nullptr);
  if (!api.cuDevicePrimaryCtxRelease)  // drivers before CUDA 11 (R450) export only the first version
    bind_symbol(handle, "cuDevicePrimaryCtxRelease", api.cuDevicePrimaryCtxRelease, &missing);
  bind_symbol(handle, "cuCtxSetCurrent", api.cuCtxSetCurrent, &missing);
  bind_symbol(handle, "cuCtxSynchronize", api.cuCtxSynchronize, &missing);
  bind_symbol(handle, "cuModuleLoadDataEx", api.cuModuleLoadDataEx, &missing);
  bind_symbol(handle, "cuModuleGetFunction", api.cuModuleGetFunction, &missing);
  bind_symbol(handle, "cuModuleUnload", api.cuModuleUnload, &missing);
  bind_symbol(handle, "cuMemAlloc_v2", api.cuMemAlloc, &missing);
  bind_symbol(handle, "cuMemFree_v2", api.cuMemFree, &missing);
  bind_symbol(handle, "cuMemcpyHtoD_v2", api.cuMemcpyHtoD, &missing);
  bind_symbol(handle, "cuMemcpyDtoH_v2", api.cuMemcpyDtoH, &missing);
  bind_symbol(handle, "cuLaunchKernel", api.cuLaunchKernel, &missing);
  return missing;
}

StickyScope sticky_scope(CUresult result) {
  switch (result) {
    case kErrorContained:
    case kErrorIllegalAddress:
    case kErrorLaunchTimeout:
    case kErrorHardwareStackError:
    case kErrorIllegalInstruction:
    case kErrorMisalignedAddress:
    case kErrorInvalidAddressSpace:
    case kErrorInvalidPc:
    case kErrorLaunchFailed:
    case kErrorTensorMemoryLeak:
    case kErrorMpsClientTerminated:
    case kErrorExternalDevice:
      return StickyScope::Process;
    case kErrorAssert:
      return StickyScope::Context;
    default:
      return StickyScope::None;
  }
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
