// The CUDA stack checks: each takes the identified stack (cuda_stack.h) and returns findings.
// run_scan identifies the stack once and calls check_cuda_stack(), which runs them all.
#pragma once

#include <string>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/check/cuda_stack.h"

namespace depscan {

// cuDNN libraries of different releases or majors in one process, or from two places.
std::vector<Finding> check_cudnn_version_mismatch(const CheckContext& ctx, const CudaStack& stack);
// cuDNN built for another CUDA major than the process's CUDA libraries.
std::vector<Finding> check_cudnn_cuda_mismatch(const CheckContext& ctx, const CudaStack& stack);
// The installed driver is older than the CUDA runtime needs (minor-version rules applied).
std::vector<Finding> check_cuda_driver(const CheckContext& ctx, const CudaStack& stack);
// The user-space driver (libcuda.so.NNN) and the kernel module are of different releases.
std::vector<Finding> check_driver_library_mismatch(const CheckContext& ctx, const CudaStack& stack);
// libcuda.so.1 resolves to the toolkit's stub library.
std::vector<Finding> check_stub_driver(const CheckContext& ctx, const CudaStack& stack);
// A library opened with dlopen (known or inferred) cannot be found.
std::vector<Finding> check_dlopen_libraries(const CheckContext& ctx, const CudaStack& stack);
// CUDA libraries of different majors in one process.
std::vector<Finding> check_cuda_major_mismatch(const CheckContext& ctx, const CudaStack& stack);

// All of the above.
std::vector<Finding> check_cuda_stack(const CheckContext& ctx, const CudaStack& stack);

// ---- shared by the CUDA checks

// The stack's libraries loaded in one root's process, in load order.
std::vector<const CudaLibrary*> libraries_in_root(const Graph& graph, const CudaStack& stack, size_t root);
// Whether a library's file version is the CUDA version itself (the runtime's 13.0.96), not a
// library's own (cuBLAS 11.11.3 in CUDA 11.8, cuFFT 11.3 in CUDA 12.6).
bool carries_cuda_version(const CudaLibrary& lib);
// "libcudart.so.12 (/usr/lib/libcudart.so.12)".
std::string describe(const Graph& graph, const CudaLibrary& lib);
// Appends findings whose code and message were not seen before (roots share objects).
void append_unique(std::vector<Finding>& out, Finding finding);

}  // namespace depscan
