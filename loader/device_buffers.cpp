#include "loader/device_buffers.h"

#include <fmt/format.h>

namespace depscan {

cuda::CUdeviceptr DeviceBuffers::upload(const void* host, size_t bytes, const char* what) {
  cuda::CUdeviceptr ptr = 0;
  cuda::CUresult r = cu_.cuMemAlloc(&ptr, bytes);
  if (r != cuda::kSuccess) {
    error_ = fmt::format("cuMemAlloc_v2({} bytes for {}) returned {}", bytes, what, describe_cuda_error(cu_, r));
    return 0;
  }
  owned_.push_back(ptr);
  if (host && (r = cu_.cuMemcpyHtoD(ptr, host, bytes)) != cuda::kSuccess) {
    error_ = fmt::format("cuMemcpyHtoD_v2({}) returned {}", what, describe_cuda_error(cu_, r));
    return 0;
  }
  return ptr;
}

bool DeviceBuffers::download(void* host, cuda::CUdeviceptr from, size_t bytes, const char* what) {
  cuda::CUresult r = cu_.cuMemcpyDtoH(host, from, bytes);
  if (r == cuda::kSuccess) return true;
  error_ = fmt::format("cuMemcpyDtoH_v2({}) returned {}", what, describe_cuda_error(cu_, r));
  return false;
}

bool DeviceBuffers::free_all() {
  bool ok = true;
  for (cuda::CUdeviceptr p : owned_) {
    cuda::CUresult r = cu_.cuMemFree(p);
    if (r != cuda::kSuccess && ok) {
      error_ = fmt::format("cuMemFree_v2 returned {}", describe_cuda_error(cu_, r));
      ok = false;
    }
  }
  owned_.clear();
  return ok;
}

}  // namespace depscan
