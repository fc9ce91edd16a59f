// Device allocations made with cuMemAlloc_v2 (never managed memory), freed with cuMemFree_v2
// when the owner goes away; every failed call is remembered with the driver's error text.
#pragma once

#include <string>
#include <vector>

#include "loader/cuda_driver_api.h"

namespace depscan {

class DeviceBuffers {
 public:
  explicit DeviceBuffers(const cuda::DriverApi& cu) : cu_(cu) {}
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers() { free_all(); }

  // Allocates and, if `host` is given, copies it in. Returns 0 and sets error() on failure.
  cuda::CUdeviceptr upload(const void* host, size_t bytes, const char* what);
  bool download(void* host, cuda::CUdeviceptr from, size_t bytes, const char* what);
  // Frees everything now; returns false if a cuMemFree_v2 failed (see error()).
  bool free_all();
  const std::string& error() const { return error_; }

 private:
  const cuda::DriverApi& cu_;
  std::vector<cuda::CUdeviceptr> owned_;
  std::string error_;
};

}  // namespace depscan
