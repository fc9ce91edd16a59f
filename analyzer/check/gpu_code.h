// The GPU-code check: the device code embedded in each object against the --gpu targets.
#pragma once

#include <optional>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/check/cuda_stack.h"

namespace depscan {

// Device code that cannot run on the --gpu targets (no-kernel-image, ptx-jit-only,
// ptx-needs-newer-driver), unknown --gpu names (unknown-gpu), malformed fatbins (fatbin-error).
// `driver` is the installed driver the scan found (--driver, libcuda's file name, /proc), whose
// CUDA version bounds the PTX its JIT accepts.
std::vector<Finding> check_gpu_code(const CheckContext& ctx, const std::optional<SourcedVersion>& driver);

}  // namespace depscan
