// The kernel step: JIT the embedded PTX vector add on the device's primary context, run it,
// and compare every element with the host's answer.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "loader/device_buffers.h"
#include "loader/probe.h"
#include "loader/vector_add_ptx.h"

namespace depscan {
namespace {

constexpr int kElements = 1 << 16;
constexpr unsigned kBlock = 256;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

StepResult launch(const cuda::DriverApi& cu, cuda::CUfunction fn, DeviceBuffers& mem, nlohmann::json& data) {
  std::vector<float> a(kElements), b(kElements), c(kElements, -1.0f);
  for (int i = 0; i < kElements; ++i) {
    a[i] = static_cast<float>(i) * 0.5f;
    b[i] = static_cast<float>(kElements - i);
  }
  size_t bytes = kElements * sizeof(float);
  cuda::CUdeviceptr da = mem.upload(a.data(), bytes, "a");
  cuda::CUdeviceptr db = da ? mem.upload(b.data(), bytes, "b") : 0;
  cuda::CUdeviceptr dc = db ? mem.upload(nullptr, bytes, "c") : 0;
  if (!dc) return {StepStatus::Failed, mem.error(), data};
  int n = kElements;
  void* params[] = {&da, &db, &dc, &n};
  unsigned grid = (kElements + kBlock - 1) / kBlock;
  auto t0 = std::chrono::steady_clock::now();
  cuda::CUresult r = cu.cuLaunchKernel(fn, grid, 1, 1, kBlock, 1, 1, 0, nullptr, params, nullptr);
  if (r != cuda::kSuccess) return {StepStatus::Failed, "cuLaunchKernel returned " + describe_cuda_error(cu, r), data};
  if ((r = cu.cuCtxSynchronize()) != cuda::kSuccess)
    return {StepStatus::Failed, "cuCtxSynchronize after the launch returned " + describe_cuda_error(cu, r), data};
  data["kernel_ms"] = ms_since(t0);
  if (!mem.download(c.data(), dc, bytes, "c")) return {StepStatus::Failed, mem.error(), data};
  int wrong = 0, first = -1;
  for (int i = 0; i < kElements; ++i)
    if (c[i] != a[i] + b[i] && wrong++ == 0) first = i;
  data["elements"] = kElements;
  data["mismatches"] = wrong;
  if (wrong > 0)
    return {StepStatus::Failed,
            fmt::format("vector_add returned wrong results: {} of {} elements differ (first: c[{}] = {}, expected {})",
                        wrong, kElements, first, c[first], a[first] + b[first]),
            data};
  return {StepStatus::Ok, "", data};
}

struct ModuleLoad {
  cuda::CUresult result = cuda::kSuccess;
  std::string error_log;  // the JIT's, when it failed
};

ModuleLoad load_vector_add(const cuda::DriverApi& cu, cuda::CUmodule& module) {
  char log[4096] = {};
  int options[] = {cuda::kJitErrorLogBuffer, cuda::kJitErrorLogBufferSizeBytes};
  void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log))};
  ModuleLoad load;
  load.result = cu.cuModuleLoadDataEx(&module, kVectorAddPtx, 2, options, values);
  log[sizeof log - 1] = '\0';
  load.error_log = log;
  while (!load.error_log.empty() && (load.error_log.back() == '\n' || load.error_log.back() == ' '))
    load.error_log.pop_back();
  return load;
}

// The driver will not compile PTX at all: the kernel cannot be run, which says nothing of an
// application that ships SASS for this GPU.
// With lazy module loading (the default from CUDA 12.2) cuModuleGetFunction compiles, so either
// call may say so.
std::optional<std::string> jit_unavailable(const cuda::DriverApi& cu, cuda::CUresult r, const char* call) {
  if (r != cuda::kErrorJitCompilationDisabled && r != cuda::kErrorJitCompilerNotFound) return std::nullopt;
  std::string why = r == cuda::kErrorJitCompilationDisabled
                        ? "PTX JIT is disabled (CUDA_DISABLE_PTX_JIT=1 in the environment)"
                        : "the driver's PTX JIT compiler (libnvidia-ptxjitcompiler.so.1) is missing";
  return fmt::format("not run: the probe's kernel is PTX and {} returned {}: {}; an application whose GPU code for "
                     "this device is PTX only fails the same way, one with SASS for it does not",
                     call, describe_cuda_error(cu, r), why);
}

}  // namespace

StepResult run_vector_add(ProbeState& state, ProbeDevice& device) {
  const cuda::DriverApi& cu = state.cu;
  auto t0 = std::chrono::steady_clock::now();
  nlohmann::json data = {{"device", device.ordinal}, {"sm", fmt::format("sm_{}{}", device.cc_major, device.cc_minor)},
                         {"ptx", kVectorAddPtxTarget}};
  if (std::string err = make_context_current(state, device); !err.empty()) return {StepStatus::Failed, err, data};
  cuda::CUmodule module = nullptr;
  ModuleLoad load = load_vector_add(cu, module);
  cuda::CUresult r = load.result;
  if (r != cuda::kSuccess) {
    if (!load.error_log.empty()) data["jit_error_log"] = load.error_log;
    if (auto not_run = jit_unavailable(cu, r, "cuModuleLoadDataEx")) return {StepStatus::NotRun, *not_run, data};
    return {StepStatus::Failed,
            "cuModuleLoadDataEx (PTX JIT) returned " + describe_cuda_error(cu, r) +
                (load.error_log.empty() ? "" : "; the JIT's log: " + load.error_log.substr(0, load.error_log.find('\n'))),
            data};
  }
  cuda::CUfunction fn = nullptr;
  StepResult result;
  if ((r = cu.cuModuleGetFunction(&fn, module, kVectorAddEntry)) != cuda::kSuccess) {
    auto not_run = jit_unavailable(cu, r, "cuModuleGetFunction");
    result = not_run ? StepResult{StepStatus::NotRun, *not_run, data}
                     : StepResult{StepStatus::Failed, "cuModuleGetFunction returned " + describe_cuda_error(cu, r), data};
  } else {
    DeviceBuffers mem(cu);
    result = launch(cu, fn, mem, data);
    if (!mem.free_all() && result.status == StepStatus::Ok) result = {StepStatus::Failed, mem.error(), result.data};
  }
  if ((r = cu.cuModuleUnload(module)) != cuda::kSuccess && result.status == StepStatus::Ok)
    result = {StepStatus::Failed, "cuModuleUnload returned " + describe_cuda_error(cu, r), result.data};
  result.data["total_ms"] = ms_since(t0);
  if (result.status == StepStatus::Ok)
    result.message = fmt::format("vector_add on device {} ({}, sm_{}{}): {} elements correct, kernel {:.3f} ms, total {:.1f} ms",
                                 device.ordinal, device.name, device.cc_major, device.cc_minor, kElements,
                                 result.data.value("kernel_ms", 0.0), result.data.value("total_ms", 0.0));
  return result;
}

}  // namespace depscan
