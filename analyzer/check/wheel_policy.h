// Checks of an install of Python distributions (wheels given together, a site-packages or a
// --python-env): the manylinux/musllinux policy each wheel claims in its WHEEL tags, and the
// Requires-Dist pins between the distributions found.
#pragma once

#include <string_view>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/input/distribution.h"

namespace depscan {

// wheel-policy-violation (error): every symbol version and system library that breaks the policy
// a wheel claims, by name; wheel-policy (info): the best policy each wheel actually meets.
// A library another installed wheel ships (ctx.shipped) is part of the install.
std::vector<Finding> check_wheel_policy(const CheckContext& ctx, const std::vector<Distribution>& dists);

// wheel-pin-mismatch (warning): a Requires-Dist specifier that the installed version of that
// distribution does not satisfy.
std::vector<Finding> check_wheel_pins(const std::vector<Distribution>& dists);

// PEP 440 subset: whether `version` satisfies a specifier list such as "==9.1.0.70" or ">=12,<13".
bool version_satisfies(std::string_view version, std::string_view specifiers);

}  // namespace depscan
