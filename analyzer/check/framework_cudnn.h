// A framework's cuDNN build against the cuDNN its process loads. PyTorch, and XLA in TensorFlow
// and JAX, check at run time that the loaded cuDNN has the major they were built with and at
// least its minor (cuDNN 7 and later are backward compatible within a major), and refuse an older one.
#pragma once

#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/check/cuda_stack.h"
#include "analyzer/input/distribution.h"

namespace depscan {

// cudnn-version-mismatch (error): the loaded cuDNN is older, within the same major, than the one
// the installed torch, tensorflow or JAX CUDA plugin was built with (framework_builds.h).
std::vector<Finding> check_framework_cudnn(const CheckContext& ctx, const CudaStack& stack,
                                           const std::vector<Distribution>& dists);

}  // namespace depscan
