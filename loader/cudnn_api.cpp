#include "loader/cudnn_api.h"

#include <dlfcn.h>

#include <utility>

#include <fmt/format.h>

#include "analyzer/util/dl_symbol.h"

namespace depscan::cudnn {
namespace {

// cudnn_graph.h (9.x; 2001 is deprecated there) and cudnn_ops_infer.h (8.x) numbering.
constexpr std::pair<Status, const char*> kStatus9[] = {
    {0, "CUDNN_STATUS_SUCCESS"}, {1001, "CUDNN_STATUS_NOT_INITIALIZED"},
    {1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"}, {1003, "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH"},
    {1004, "CUDNN_STATUS_DEPRECATED"}, {1005, "CUDNN_STATUS_LICENSE_ERROR"},
    {1006, "CUDNN_STATUS_RUNTIME_IN_PROGRESS"}, {1007, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW"},
    {1008, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"}, {2000, "CUDNN_STATUS_BAD_PARAM"},
    {2001, "CUDNN_STATUS_INVALID_VALUE"}, {2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER"},
    {2003, "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER"}, {2004, "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED"},
    {2005, "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND"}, {2006, "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT"},
    {2007, "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH"}, {2008, "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH"},
    {2009, "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES"}, {2010, "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE"},
    {2011, "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH"}, {2012, "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE"},
    {3000, "CUDNN_STATUS_NOT_SUPPORTED"}, {3001, "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN"},
    {3002, "CUDNN_STATUS_NOT_SUPPORTED_SHAPE"}, {3003, "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE"},
    {3004, "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT"}, {3005, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER"},
    {3006, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART"}, {3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"},
    {3008, "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING"},
    {3009, "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE"},
    {3010, "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT"}, {3011, "CUDNN_STATUS_NOT_SUPPORTED_PADDING"},
    {3012, "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM"},
    {3013, "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API"},
    {3014, "CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE"}, {4000, "CUDNN_STATUS_INTERNAL_ERROR"},
    {4001, "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED"},
    {4002, "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE"},
    {4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"},
    {4004, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"},
    {4005, "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM"},
    {4006, "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED"}, {5000, "CUDNN_STATUS_EXECUTION_FAILED"},
    {5001, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER"}, {5002, "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS"},
    {5003, "CUDNN_STATUS_EXECUTION_FAILED_CUDART"}, {5004, "CUDNN_STATUS_EXECUTION_FAILED_CURAND"}};
constexpr const char* kStatus8[] = {
    "CUDNN_STATUS_SUCCESS", "CUDNN_STATUS_NOT_INITIALIZED", "CUDNN_STATUS_ALLOC_FAILED",
    "CUDNN_STATUS_BAD_PARAM", "CUDNN_STATUS_INTERNAL_ERROR", "CUDNN_STATUS_INVALID_VALUE",
    "CUDNN_STATUS_ARCH_MISMATCH", "CUDNN_STATUS_MAPPING_ERROR", "CUDNN_STATUS_EXECUTION_FAILED",
    "CUDNN_STATUS_NOT_SUPPORTED", "CUDNN_STATUS_LICENSE_ERROR", "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING",
    "CUDNN_STATUS_RUNTIME_IN_PROGRESS", "CUDNN_STATUS_RUNTIME_FP_OVERFLOW", "CUDNN_STATUS_VERSION_MISMATCH"};

}  // namespace

std::string bind_version_api(void* handle, CudnnApi& api) {
  std::string missing;
  bind_symbol(handle, "cudnnGetVersion", api.cudnnGetVersion, &missing);
  bind_symbol(handle, "cudnnGetCudartVersion", api.cudnnGetCudartVersion, &missing);
  bind_symbol(handle, "cudnnGetErrorString", api.cudnnGetErrorString, &missing);
  bind_symbol(handle, "cudnnGetMaxDeviceVersion", api.cudnnGetMaxDeviceVersion, nullptr);
  bind_symbol(handle, "cudnnGetLastErrorString", api.cudnnGetLastErrorString, nullptr);
  return missing;
}

std::string bind_convolution_api(void* handle, CudnnApi& api) {
  std::string missing;
  bind_symbol(handle, "cudnnCreate", api.cudnnCreate, &missing);
  bind_symbol(handle, "cudnnDestroy", api.cudnnDestroy, &missing);
  bind_symbol(handle, "cudnnCreateTensorDescriptor", api.cudnnCreateTensorDescriptor, &missing);
  bind_symbol(handle, "cudnnSetTensor4dDescriptor", api.cudnnSetTensor4dDescriptor, &missing);
  bind_symbol(handle, "cudnnDestroyTensorDescriptor", api.cudnnDestroyTensorDescriptor, &missing);
  bind_symbol(handle, "cudnnCreateFilterDescriptor", api.cudnnCreateFilterDescriptor, &missing);
  bind_symbol(handle, "cudnnSetFilter4dDescriptor", api.cudnnSetFilter4dDescriptor, &missing);
  bind_symbol(handle, "cudnnDestroyFilterDescriptor", api.cudnnDestroyFilterDescriptor, &missing);
  bind_symbol(handle, "cudnnCreateConvolutionDescriptor", api.cudnnCreateConvolutionDescriptor, &missing);
  bind_symbol(handle, "cudnnSetConvolution2dDescriptor", api.cudnnSetConvolution2dDescriptor, &missing);
  bind_symbol(handle, "cudnnSetConvolutionMathType", api.cudnnSetConvolutionMathType, nullptr);
  bind_symbol(handle, "cudnnDestroyConvolutionDescriptor", api.cudnnDestroyConvolutionDescriptor, &missing);
  bind_symbol(handle, "cudnnGetConvolution2dForwardOutputDim", api.cudnnGetConvolution2dForwardOutputDim, &missing);
  bind_symbol(handle, "cudnnGetConvolutionForwardAlgorithm_v7", api.cudnnGetConvolutionForwardAlgorithm_v7, &missing);
  bind_symbol(handle, "cudnnGetConvolutionForwardWorkspaceSize", api.cudnnGetConvolutionForwardWorkspaceSize, &missing);
  bind_symbol(handle, "cudnnConvolutionForward", api.cudnnConvolutionForward, &missing);
  return missing;
}

std::vector<std::string> version_check_functions(int major) {
  if (major >= 9)
    return {"cudnnGraphVersionCheck", "cudnnOpsVersionCheck", "cudnnCnnVersionCheck",
            "cudnnAdvVersionCheck"};
  if (major == 8)
    return {"cudnnOpsInferVersionCheck", "cudnnOpsTrainVersionCheck", "cudnnCnnInferVersionCheck",
            "cudnnCnnTrainVersionCheck", "cudnnAdvInferVersionCheck", "cudnnAdvTrainVersionCheck"};
  return {};
}

std::string status_name(int major, Status status) {
  if (major >= 9) {
    for (const auto& [value, name] : kStatus9)
      if (value == status) return name;
    return "";
  }
  if (status >= 0 && status < static_cast<Status>(std::size(kStatus8))) return kStatus8[status];
  return "";
}

std::string describe_status(const CudnnApi& api, int major, Status status) {
  std::string name = status_name(major, status);
  const char* text = api.cudnnGetErrorString ? api.cudnnGetErrorString(status) : nullptr;
  std::string out = fmt::format("{} ({}): {}", name.empty() ? "cudnnStatus_t" : name, status,
                                text ? text : "no description from cuDNN");
  if (api.cudnnGetLastErrorString && status != 0) {
    char last[1024] = {};
    api.cudnnGetLastErrorString(last, sizeof last);
    last[sizeof last - 1] = '\0';
    std::string_view why(last);
    why = why.substr(0, why.find('\n'));
    if (!why.empty()) out += fmt::format("; cudnnGetLastErrorString: {}", why);
  }
  return out;
}

int major_of(size_t version) {
  return version >= 10000 ? static_cast<int>(version / 10000) : static_cast<int>(version / 1000);
}

std::string version_text(size_t version) {
  if (version >= 10000) return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
  return fmt::format("{}.{}.{}", version / 1000, version / 100 % 10, version % 100);
}

}  // namespace depscan::cudnn
