// The part of the cuDNN 8/9 API the probe calls, declared here from cudnn_graph.h, cudnn_ops.h
// and cudnn_cnn.h (cuDNN 9.19) so the build never includes or links cuDNN. The legacy
// convolution API below exists with the same signatures in 8.x and 9.x.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace depscan::cudnn {

using Status = int;  // cudnnStatus_t: 8.x numbers 0..14, 9.x numbers 1001..5004
using Handle = struct cudnnContext*;
using TensorDescriptor = struct cudnnTensorStruct*;
using FilterDescriptor = struct cudnnFilterStruct*;
using ConvolutionDescriptor = struct cudnnConvolutionStruct*;

inline constexpr Status kSuccess = 0;
inline constexpr int kTensorNchw = 0;          // CUDNN_TENSOR_NCHW
inline constexpr int kDataFloat = 0;           // CUDNN_DATA_FLOAT
inline constexpr int kCrossCorrelation = 1;    // CUDNN_CROSS_CORRELATION
inline constexpr int kFmaMath = 3;             // CUDNN_FMA_MATH: no TF32, exact float sums

struct ConvolutionFwdAlgoPerf {                // cudnnConvolutionFwdAlgoPerf_t
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

struct CudnnApi {
  size_t (*cudnnGetVersion)() = nullptr;
  size_t (*cudnnGetCudartVersion)() = nullptr;
  size_t (*cudnnGetMaxDeviceVersion)() = nullptr;  // 9.x only; may be absent
  const char* (*cudnnGetErrorString)(Status) = nullptr;
  void (*cudnnGetLastErrorString)(char*, size_t) = nullptr;  // 9.x only: why the last call failed
  Status (*cudnnCreate)(Handle*) = nullptr;
  Status (*cudnnDestroy)(Handle) = nullptr;
  Status (*cudnnCreateTensorDescriptor)(TensorDescriptor*) = nullptr;
  Status (*cudnnSetTensor4dDescriptor)(TensorDescriptor, int, int, int, int, int, int) = nullptr;
  Status (*cudnnDestroyTensorDescriptor)(TensorDescriptor) = nullptr;
  Status (*cudnnCreateFilterDescriptor)(FilterDescriptor*) = nullptr;
  Status (*cudnnSetFilter4dDescriptor)(FilterDescriptor, int, int, int, int, int, int) = nullptr;
  Status (*cudnnDestroyFilterDescriptor)(FilterDescriptor) = nullptr;
  Status (*cudnnCreateConvolutionDescriptor)(ConvolutionDescriptor*) = nullptr;
  Status (*cudnnSetConvolution2dDescriptor)(ConvolutionDescriptor, int, int, int, int, int, int,
                                            int, int) = nullptr;
  Status (*cudnnSetConvolutionMathType)(ConvolutionDescriptor, int) = nullptr;  // optional
  Status (*cudnnDestroyConvolutionDescriptor)(ConvolutionDescriptor) = nullptr;
  Status (*cudnnGetConvolution2dForwardOutputDim)(ConvolutionDescriptor, TensorDescriptor,
                                                  FilterDescriptor, int*, int*, int*, int*) = nullptr;
  Status (*cudnnGetConvolutionForwardAlgorithm_v7)(Handle, TensorDescriptor, FilterDescriptor,
                                                   ConvolutionDescriptor, TensorDescriptor, int,
                                                   int*, ConvolutionFwdAlgoPerf*) = nullptr;
  Status (*cudnnGetConvolutionForwardWorkspaceSize)(Handle, TensorDescriptor, FilterDescriptor,
                                                    ConvolutionDescriptor, TensorDescriptor, int,
                                                    size_t*) = nullptr;
  Status (*cudnnConvolutionForward)(Handle, const void*, TensorDescriptor, const void*,
                                    FilterDescriptor, const void*, ConvolutionDescriptor, int,
                                    void*, size_t, const void*, TensorDescriptor, void*) = nullptr;
};

// Version queries only (cudnnGetVersion and friends). Returns the missing required names.
std::string bind_version_api(void* handle, CudnnApi& api);
// Handle and convolution entry points. Returns the missing required names.
std::string bind_convolution_api(void* handle, CudnnApi& api);

// The cross-library version checks of a major: 9.x cudnn{Graph,Ops,Cnn,Adv}VersionCheck,
// 8.x cudnn{Ops,Cnn,Adv}{Infer,Train}VersionCheck.
std::vector<std::string> version_check_functions(int major);

// The status name for the major's numbering ("CUDNN_STATUS_NOT_INITIALIZED"), or "".
std::string status_name(int major, Status status);
// "CUDNN_STATUS_NOT_INITIALIZED (1001): <cudnnGetErrorString text>", and cuDNN 9's own account of
// the last failure (cudnnGetLastErrorString) when it has one.
std::string describe_status(const CudnnApi& api, int major, Status status);

// 91900 -> 9, 8902 -> 8 (cudnn_version.h encodings differ between 8.x and 9.x).
int major_of(size_t version);
std::string version_text(size_t version);  // 91900 -> "9.19.0", 8902 -> "8.9.2"

}  // namespace depscan::cudnn
