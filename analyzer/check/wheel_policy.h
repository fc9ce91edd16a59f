// Checks of an install of Python distributions (wheels given together, a site-packages or a
// --python-env): the manylinux/musllinux policy each wheel claims in its WHEEL tags, and the
// Requires-Dist pins between the distributions found.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/input/distribution.h"
#include "matrix/matrix.h"

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

// The lowest release a specifier list admits: 9.12.0.46 in "<10.0,>=9.12.0.46"; also from
// "==9.8.0.87", "==9.8.*", "~=9.8" and ">9.7" (then just below what it admits). nullopt when no
// clause bounds it from below ("<10", "!=9.1", "===x").
std::optional<Version> specifier_floor(std::string_view specifiers);

}  // namespace depscan
