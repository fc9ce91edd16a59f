// Extension modules a distribution imports only inside try/except ImportError (matrix
// optional_modules: numba's TBB and OpenMP threading layers). Such a module failing to load
// leaves the distribution working, so its errors are warnings that say what it falls back to.
#pragma once

#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/input/distribution.h"

namespace depscan {

void apply_optional_modules(std::vector<Finding>& findings, const CheckContext& ctx,
                            const std::vector<Distribution>& dists);

}  // namespace depscan
