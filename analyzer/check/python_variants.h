// A Python distribution that ships one build of its native library per CUDA version and loads
// one of them (matrix python_variants: bitsandbytes loads libbitsandbytes_cuda128.so for
// torch.version.cuda 12.8). The builds it does not load for this install's torch cannot fail its
// import, and an install whose torch has no fitting build fails it whatever the other files say.
#pragma once

#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/input/distribution.h"

namespace depscan {

// Turns errors about the builds not loaded into warnings that say which build is; adds
// python-variant (info: the build loaded, and why) and python-variant-missing (error: torch's CUDA
// version has no build of the same major).
void apply_python_variants(std::vector<Finding>& findings, const CheckContext& ctx,
                           const std::vector<Distribution>& dists);

}  // namespace depscan
