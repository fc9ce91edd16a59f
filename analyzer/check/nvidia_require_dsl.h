// libnvidia-container's requirement language (src/cli/dsl.c), in which an image's NVIDIA_REQUIRE_*
// variables are written: how one constraint is read, and how versions compare.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace depscan {

// PROPERTY OPERATOR VALUE.
struct Constraint {
  std::string property;     // lower case: cuda, driver, arch, brand (dsl.c matches ignoring case)
  std::string_view written;  // the property as written
  std::string_view op;       // one of = != < <= > >=
  std::string_view value;    // not empty
};

// As evaluate_rule reads it: the property up to the first of <>=! (not empty), the whole run of
// those characters as the operator, taken by the first of = != < <= > >= it begins ("!" is !=,
// "==" is none), and a value that is not empty. nullopt: an "invalid expression".
std::optional<Constraint> parse_constraint(std::string_view text);

// dsl_compare_version: both versions digits and dots only, compared number by number (runs of
// dots skipped; past the shorter, trailing dots and zeros ignored). nullopt where dsl.c returns
// -1 (not a version, a number that overflows), which makes the expression invalid.
std::optional<bool> compare_dsl_versions(std::string_view have, std::string_view op, std::string_view want);

// dsl.c formats a false constraint as "PROPERTY OP VALUE" into a 128-byte buffer for its error
// message; one that does not fit makes the expression invalid instead.
bool overflows_error_buffer(const Constraint& c);

}  // namespace depscan
