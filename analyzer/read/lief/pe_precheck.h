// What LIEF 0.9 cannot be handed safely: it follows a PE's resource tree by recursion, without a
// depth limit or a check for loops, and copies every section's raw data, overlapping or not.
#pragma once

#include <optional>
#include <string>

#include "analyzer/util/bytes.h"

namespace depscan {

// The reason a PE file is refused before LIEF parses it, or nullopt. A header too damaged to read
// here is left to LIEF, which reports it.
std::optional<std::string> pe_refusal(ByteView file);

}  // namespace depscan
