// What the GPU-code check needs to know about GPUs, PTX and drivers: compute capability from
// what the user typed (sm_90, 9.0, H100: the matrix's gpus.json), the CUDA version a PTX ISA
// version came with (matrix/data/gpu_code.json), and the newest CUDA version a driver supports
// (the matrix's driver table).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace depscan {

class Matrix;

struct ComputeCapability {
  int major = 0, minor = 0;
  int number() const { return major * 10 + minor; }  // 9.0 -> 90, 12.1 -> 121 (the sm_ number)
  std::string str() const;                           // "9.0"
  auto operator<=>(const ComputeCapability&) const = default;
};

struct CudaVersion {
  int major = 0, minor = 0;
  std::string str() const;
  auto operator<=>(const CudaVersion&) const = default;
};

// "sm_90", "sm_90a", "compute_90", "90", "9.0", or a GPU name ("H100", "NVIDIA A100-SXM4-80GB").
std::optional<ComputeCapability> compute_capability_of(const Matrix& matrix, std::string_view gpu);

// The CUDA release that introduced a PTX ISA version (9.1 -> 13.1); nullopt if unknown.
std::optional<CudaVersion> cuda_version_for_ptx_isa(int major, int minor);
// For a PTX ISA newer than every row of the table: the CUDA release of its newest row, which is
// too old for it (PTX ISA 9.5 when the table ends at 9.1: CUDA 13.1). nullopt otherwise.
std::optional<CudaVersion> newest_cuda_before_ptx_isa(int major, int minor);

// The newest CUDA version a Linux driver runs: "580.65.06" -> 13.0. A CUDA version ("13.0") is
// taken as it is. nullopt if the text is neither or the driver is older than the table.
std::optional<CudaVersion> cuda_version_of_driver(const Matrix& matrix, std::string_view driver);

// The oldest Linux driver for a CUDA version (13.1 -> "590.44.01"; a version without a row, like
// 12.7, takes the next release's); empty if unknown.
std::string minimum_driver_for(const Matrix& matrix, CudaVersion cuda);

}  // namespace depscan
