// The cuDNN an installed framework distribution was built with: torch and TensorFlow from the
// framework table; JAX's PJRT plugin from the metadata of the CUDA plugin that pins it (its
// Requires-Dist on nvidia-cudnn-cuNN), an old jaxlib from its local version ("+cuda12.cudnn89").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/input/distribution.h"
#include "matrix/matrix.h"

namespace depscan {

// Whose words the refusal of an older cuDNN is in: PyTorch's, or XLA's cuda_dnn.cc (TensorFlow, JAX).
enum class CudnnRefusal { PyTorch, TensorFlow, Jax };

struct FrameworkBuild {
  std::string label;       // "torch 2.9.1 (torch.version.cuda 12.8: cu128 (stable))"
  Version cudnn;           // 9.10.2.21; with floor_only, the lowest release the metadata allows
  bool floor_only = false; // JAX's plugin: its Requires-Dist floor, not the exact release it was built with
  int cuda_major = 0;
  std::string source;
  CudnnRefusal refusal = CudnnRefusal::PyTorch;
};

// A distribution's build, or the name of a CUDA build of a framework the table has no row for.
struct BuildLookup {
  std::optional<FrameworkBuild> build;
  std::string unknown;  // "torch 2.15.0 (torch.version.cuda 13.0)"
};

// `dists` are every installed distribution: JAX's PJRT plugin takes its floor from the
// jax-cudaNN-plugin distribution that pins it.
BuildLookup framework_build_of(const CheckContext& ctx, const Distribution& d, const std::vector<Distribution>& dists);

}  // namespace depscan
