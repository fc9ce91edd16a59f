// The CUDA driver API as depscan's probe calls it: types, constants and entry points declared
// here from cuda.h (CUDA 13.0) so the build never includes or links CUDA. Everything is reached
// with dlsym on the libcuda.so.1 the loader picked; the 64-bit APIs are exported as *_v2.
#pragma once

#include <string>

namespace depscan::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // CUdeviceptr_v2
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;

inline constexpr CUresult kSuccess = 0;
inline constexpr CUresult kErrorNotInitialized = 3;
inline constexpr CUresult kErrorStubLibrary = 34;
inline constexpr CUresult kErrorCallRequiresNewerDriver = 36;
inline constexpr CUresult kErrorDeviceUnavailable = 46;
inline constexpr CUresult kErrorNoDevice = 100;
inline constexpr CUresult kErrorNoBinaryForGpu = 209;
inline constexpr CUresult kErrorInvalidPtx = 218;
inline constexpr CUresult kErrorJitCompilerNotFound = 221;
inline constexpr CUresult kErrorUnsupportedPtxVersion = 222;
inline constexpr CUresult kErrorJitCompilationDisabled = 223;
inline constexpr CUresult kErrorContained = 226;
inline constexpr CUresult kErrorIllegalAddress = 700;
inline constexpr CUresult kErrorLaunchTimeout = 702;
inline constexpr CUresult kErrorAssert = 710;
inline constexpr CUresult kErrorHardwareStackError = 714;
inline constexpr CUresult kErrorIllegalInstruction = 715;
inline constexpr CUresult kErrorMisalignedAddress = 716;
inline constexpr CUresult kErrorInvalidAddressSpace = 717;
inline constexpr CUresult kErrorInvalidPc = 718;
inline constexpr CUresult kErrorLaunchFailed = 719;
inline constexpr CUresult kErrorTensorMemoryLeak = 721;
inline constexpr CUresult kErrorSystemDriverMismatch = 803;
inline constexpr CUresult kErrorCompatNotSupportedOnDevice = 804;
inline constexpr CUresult kErrorMpsClientTerminated = 810;
inline constexpr CUresult kErrorExternalDevice = 911;
inline constexpr int kJitErrorLogBuffer = 5;           // CU_JIT_ERROR_LOG_BUFFER: char*
inline constexpr int kJitErrorLogBufferSizeBytes = 6;  // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: unsigned int, in and out
inline constexpr int kAttributeComputeCapabilityMajor = 75;
inline constexpr int kAttributeComputeCapabilityMinor = 76;

struct DriverApi {
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuInit)(unsigned int) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;            // cuDeviceTotalMem_v2
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;            // _v2; unsuffixed before CUDA 11 (R450)
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned int, int*, void**) = nullptr;  // options: CUjit_option
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;               // cuMemAlloc_v2
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;                         // cuMemFree_v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr; // cuMemcpyHtoD_v2
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;       // cuMemcpyDtoH_v2
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void**, void**) = nullptr;
};

// Resolves every entry point from `handle`. Returns the names that are missing (empty = all found).
std::string bind_driver_api(void* handle, DriverApi& api);

// What an error leaves usable. Of some errors cuda.h says that "the process must be terminated and
// relaunched" to use CUDA again (Process; most add that "any further CUDA work will return the same
// error"), and of CUDA_ERROR_ASSERT that the context "cannot be used anymore" (Context).
enum class StickyScope { None, Context, Process };
StickyScope sticky_scope(CUresult result);

// "CUDA_ERROR_STUB_LIBRARY (34): CUDA driver is a stub library", from the driver's own tables
// when it has them.
std::string describe_cuda_error(const DriverApi& api, CUresult result);

}  // namespace depscan::cuda
