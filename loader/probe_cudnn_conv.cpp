// The cuDNN operation step: cudnnCreate on the device's primary context, then a small NCHW
// float convolution forward through the legacy API (present in cuDNN 8 and 9), compared element
// by element with a CPU reference. Architecture and sub-library problems surface here.
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "loader/device_buffers.h"
#include "loader/probe.h"

namespace depscan {
namespace {

struct Shape { int n = 1, c = 2, h = 6, w = 6, k = 3, r = 3, s = 3, pad = 1; };

std::vector<float> reference_convolution(const Shape& d, const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<float> y(static_cast<size_t>(d.k) * d.h * d.w, 0.0f);
  for (int k = 0; k < d.k; ++k)
    for (int i = 0; i < d.h; ++i)
      for (int j = 0; j < d.w; ++j) {
        float sum = 0;
        for (int c = 0; c < d.c; ++c)
          for (int r = 0; r < d.r; ++r)
            for (int s = 0; s < d.s; ++s) {
              int yi = i + r - d.pad, xj = j + s - d.pad;
              if (yi < 0 || yi >= d.h || xj < 0 || xj >= d.w) continue;
              sum += x[(c * d.h + yi) * d.w + xj] * w[((k * d.c + c) * d.r + r) * d.s + s];
            }
        y[(k * d.h + i) * d.w + j] = sum;
      }
  return y;
}

// Destroys what was created, in reverse order, whatever path the step leaves by.
class Cleanups {
 public:
  void add(std::function<void()> f) { steps_.push_back(std::move(f)); }
  void run_all() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) (*it)();
    steps_.clear();
  }
  ~Cleanups() { run_all(); }

 private:
  std::vector<std::function<void()>> steps_;
};

class Convolution {
 public:
  Convolution(ProbeState& state, nlohmann::json& data) : s_(state), api_(state.cudnn_api), data_(data) {}

  // Returns "" on success or the failing call with cuDNN's or the driver's own error text.
  std::string run() {
    cudnn::Handle handle = nullptr;
    if (auto e = call("cudnnCreate", api_.cudnnCreate(&handle)); !e.empty()) return e;
    cleanups_.add([this, handle] { note("cudnnDestroy", api_.cudnnDestroy(handle)); });
    cudnn::TensorDescriptor x = nullptr, y = nullptr;
    cudnn::FilterDescriptor w = nullptr;
    cudnn::ConvolutionDescriptor conv = nullptr;
    if (auto e = create_descriptors(x, w, conv); !e.empty()) return e;
    int on = 0, oc = 0, oh = 0, ow = 0;
    if (auto e = call("cudnnGetConvolution2dForwardOutputDim",
                      api_.cudnnGetConvolution2dForwardOutputDim(conv, x, w, &on, &oc, &oh, &ow)); !e.empty()) return e;
    if (on != d_.n || oc != d_.k || oh != d_.h || ow != d_.w)
      return fmt::format("cudnnGetConvolution2dForwardOutputDim gave {}x{}x{}x{}, expected {}x{}x{}x{}", on, oc, oh, ow,
                         d_.n, d_.k, d_.h, d_.w);
    if (auto e = call("cudnnCreateTensorDescriptor", api_.cudnnCreateTensorDescriptor(&y)); !e.empty()) return e;
    cleanups_.add([this, y] { note("cudnnDestroyTensorDescriptor", api_.cudnnDestroyTensorDescriptor(y)); });
    if (auto e = call("cudnnSetTensor4dDescriptor(y)", api_.cudnnSetTensor4dDescriptor(y, cudnn::kTensorNchw, cudnn::kDataFloat, on, oc, oh, ow)); !e.empty()) return e;
    return forward(handle, x, w, conv, y);
  }

  // Destroys the handle and descriptors; returns the first failed destroy call, or "".
  std::string finish() {
    cleanups_.run_all();
    return cleanup_error_;
  }

 private:
  std::string create_descriptors(cudnn::TensorDescriptor& x, cudnn::FilterDescriptor& w, cudnn::ConvolutionDescriptor& conv) {
    if (auto e = call("cudnnCreateTensorDescriptor", api_.cudnnCreateTensorDescriptor(&x)); !e.empty()) return e;
    cleanups_.add([this, x] { note("cudnnDestroyTensorDescriptor", api_.cudnnDestroyTensorDescriptor(x)); });
    if (auto e = call("cudnnSetTensor4dDescriptor(x)", api_.cudnnSetTensor4dDescriptor(x, cudnn::kTensorNchw, cudnn::kDataFloat, d_.n, d_.c, d_.h, d_.w)); !e.empty()) return e;
    if (auto e = call("cudnnCreateFilterDescriptor", api_.cudnnCreateFilterDescriptor(&w)); !e.empty()) return e;
    cleanups_.add([this, w] { note("cudnnDestroyFilterDescriptor", api_.cudnnDestroyFilterDescriptor(w)); });
    if (auto e = call("cudnnSetFilter4dDescriptor", api_.cudnnSetFilter4dDescriptor(w, cudnn::kDataFloat, cudnn::kTensorNchw, d_.k, d_.c, d_.r, d_.s)); !e.empty()) return e;
    if (auto e = call("cudnnCreateConvolutionDescriptor", api_.cudnnCreateConvolutionDescriptor(&conv)); !e.empty()) return e;
    cleanups_.add([this, conv] { note("cudnnDestroyConvolutionDescriptor", api_.cudnnDestroyConvolutionDescriptor(conv)); });
    if (auto e = call("cudnnSetConvolution2dDescriptor", api_.cudnnSetConvolution2dDescriptor(conv, d_.pad, d_.pad, 1, 1, 1, 1, cudnn::kCrossCorrelation, cudnn::kDataFloat)); !e.empty()) return e;
    if (api_.cudnnSetConvolutionMathType && s_.cudnn_major >= 8)  // FMA math (cuDNN 8+): no TF32 rounding
      if (auto e = call("cudnnSetConvolutionMathType", api_.cudnnSetConvolutionMathType(conv, cudnn::kFmaMath)); !e.empty()) return e;
    return "";
  }

  // The heuristic's usable algorithms in its order, each tried until one runs, as frameworks do
  // (PyTorch falls back to the next on a cuDNN error): one may be offered and still fail to run.
  // Wrong results end the search: they are a defect whichever algorithm gave them.
  std::string forward(cudnn::Handle handle, cudnn::TensorDescriptor x, cudnn::FilterDescriptor w,
                      cudnn::ConvolutionDescriptor conv, cudnn::TensorDescriptor y) {
    cudnn::ConvolutionFwdAlgoPerf perf[8] = {};
    int returned = 0;
    if (auto e = call("cudnnGetConvolutionForwardAlgorithm_v7", api_.cudnnGetConvolutionForwardAlgorithm_v7(handle, x, w, conv, y, 8, &returned, perf)); !e.empty()) return e;
    std::vector<int> algorithms;
    for (int i = 0; i < returned && i < 8; ++i)
      if (perf[i].status == cudnn::kSuccess) algorithms.push_back(perf[i].algo);
    if (algorithms.empty()) return fmt::format("cudnnGetConvolutionForwardAlgorithm_v7 offered no usable algorithm ({} returned)", returned);
    const nlohmann::json before = data_;  // each attempt records into a clean copy
    std::string first_failure;
    nlohmann::json failed = nlohmann::json::array(), first_attempt;
    for (int algo : algorithms) {
      data_ = before;
      bool retry = false;
      std::string outcome = forward_with(handle, x, w, conv, y, algo, retry);
      if (!retry || outcome.empty()) {
        if (!failed.empty()) data_["algorithms_failed"] = failed;
        return outcome;
      }
      failed.push_back({{"algorithm", algo}, {"error", outcome}});
      if (first_failure.empty()) {
        first_failure = outcome;
        first_attempt = data_;
      }
      if (context_lost()) break;  // the failed call left an error no other algorithm can get past
    }
    data_ = first_attempt;  // every one tried failed: the record is the first failure's
    data_["algorithms_failed"] = failed;
    if (failed.size() == algorithms.size())
      return algorithms.size() == 1 ? first_failure
                                    : fmt::format("{} (each of the {} algorithms offered failed)", first_failure, algorithms.size());
    return fmt::format("{} (not tried after it: {} of the {} algorithms offered)", first_failure,
                       algorithms.size() - failed.size(), algorithms.size());
  }

  // One algorithm: `retry` is set when cuDNN refused it or its memory could not be allocated, the
  // failures another algorithm may not meet. A driver error leaves the context unusable: no retry.
  std::string forward_with(cudnn::Handle handle, cudnn::TensorDescriptor x, cudnn::FilterDescriptor w,
                           cudnn::ConvolutionDescriptor conv, cudnn::TensorDescriptor y, int algo, bool& retry) {
    data_["algorithm"] = algo;
    size_t workspace_bytes = 0;
    retry = true;
    if (auto e = call("cudnnGetConvolutionForwardWorkspaceSize", api_.cudnnGetConvolutionForwardWorkspaceSize(handle, x, w, conv, y, algo, &workspace_bytes)); !e.empty()) return e;
    data_["workspace_bytes"] = workspace_bytes;
    std::vector<float> hx(static_cast<size_t>(d_.c) * d_.h * d_.w), hw(static_cast<size_t>(d_.k) * d_.c * d_.r * d_.s);
    for (size_t i = 0; i < hx.size(); ++i) hx[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    for (size_t i = 0; i < hw.size(); ++i) hw[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
    std::vector<float> expected = reference_convolution(d_, hx, hw), hy(expected.size(), -1.0f);
    DeviceBuffers mem(s_.cu);
    cuda::CUdeviceptr dx = mem.upload(hx.data(), hx.size() * sizeof(float), "x");
    cuda::CUdeviceptr dw = dx ? mem.upload(hw.data(), hw.size() * sizeof(float), "w") : 0;
    cuda::CUdeviceptr dy = dw ? mem.upload(nullptr, hy.size() * sizeof(float), "y") : 0;
    cuda::CUdeviceptr ws = dy && workspace_bytes ? mem.upload(nullptr, workspace_bytes, "workspace") : 0;
    if (!dy || (workspace_bytes && !ws)) return mem.error();
    float alpha = 1.0f, beta = 0.0f;
    auto t0 = std::chrono::steady_clock::now();
    if (auto e = call("cudnnConvolutionForward", api_.cudnnConvolutionForward(handle, &alpha, x, reinterpret_cast<void*>(dx), w, reinterpret_cast<void*>(dw), conv, algo, reinterpret_cast<void*>(ws), workspace_bytes, &beta, y, reinterpret_cast<void*>(dy))); !e.empty()) return e;
    retry = false;
    if (cuda::CUresult r = s_.cu.cuCtxSynchronize(); r != cuda::kSuccess)
      return "cuCtxSynchronize after cudnnConvolutionForward returned " + describe_cuda_error(s_.cu, r);
    data_["forward_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!mem.download(hy.data(), dy, hy.size() * sizeof(float), "y")) return mem.error();
    std::string outcome = compare(expected, hy);
    if (!mem.free_all() && outcome.empty()) return mem.error();
    return outcome;
  }

  bool context_lost() const { return cuda::sticky_scope(s_.cu.cuCtxSynchronize()) != cuda::StickyScope::None; }

  std::string compare(const std::vector<float>& expected, const std::vector<float>& got) {
    int wrong = 0;
    size_t first = 0;
    for (size_t i = 0; i < expected.size(); ++i)
      if (!(std::fabs(expected[i] - got[i]) <= 1e-4f * std::max(1.0f, std::fabs(expected[i]))) && wrong++ == 0) first = i;  // NaN too
    data_["elements"] = expected.size();
    data_["mismatches"] = wrong;
    if (wrong == 0) return "";
    return fmt::format("cudnnConvolutionForward returned wrong results: {} of {} elements differ from the CPU reference (first: y[{}] = {}, expected {})",
                       wrong, expected.size(), first, got[first], expected[first]);
  }

  std::string call(const char* what, cudnn::Status status) {
    if (status == cudnn::kSuccess) return "";
    data_["failed_call"] = what;
    data_["status"] = status;
    data_["status_name"] = cudnn::status_name(s_.cudnn_major, status);
    return fmt::format("{} returned {}", what, describe_status(api_, s_.cudnn_major, status));
  }

  void note(const char* what, cudnn::Status status) {
    if (status != cudnn::kSuccess && cleanup_error_.empty())
      cleanup_error_ = fmt::format("{} returned {}", what, describe_status(api_, s_.cudnn_major, status));
  }

  ProbeState& s_;
  const cudnn::CudnnApi& api_;
  nlohmann::json& data_;
  Shape d_;
  std::string cleanup_error_;
  Cleanups cleanups_;  // last member: runs first on destruction, while the rest is alive
};

}  // namespace

StepResult run_cudnn_convolution(ProbeState& state, ProbeDevice& device) {
  nlohmann::json data = {{"device", device.ordinal}, {"sm", fmt::format("sm_{}{}", device.cc_major, device.cc_minor)}};
  if (!state.cudnn || state.cudnn_major == 0) return {StepStatus::NotRun, "not run: cuDNN was not loaded", data};
  if (std::string missing = bind_convolution_api(state.cudnn, state.cudnn_api); !missing.empty())
    return {StepStatus::Failed, fmt::format("{} does not export {}", state.cudnn_name, missing), data};
  if (std::string err = make_context_current(state, device); !err.empty()) return {StepStatus::Failed, err, data};
  auto t0 = std::chrono::steady_clock::now();
  std::string error, cleanup;
  {
    Convolution conv(state, data);
    error = conv.run();
    cleanup = conv.finish();
  }
  data["total_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!error.empty()) return {StepStatus::Failed, error, data};
  if (!cleanup.empty()) return {StepStatus::Failed, cleanup, data};
  return {StepStatus::Ok,
          fmt::format("cudnnCreate + 1x2x6x6 * 3x2x3x3 convolution forward (algorithm {}) on device {}: {} elements match the CPU reference, {:.1f} ms",
                      data.value("algorithm", -1), device.ordinal, data.value("elements", 0), data.value("total_ms", 0.0)),
          data};
}

}  // namespace depscan
