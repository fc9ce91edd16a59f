// Tests that need software from outside the project (the CUDA toolkit and cuDNN in
// /usr/local/cuda, musl, mingw-w64, the glibc release some fixtures are sized for) skip with a
// note where it is absent. Where DEPSCAN_REQUIRE_TOOLCHAINS=1 (scripts/test.sh, which CI runs,
// sets it) an absent one fails the test instead of passing it.
#pragma once

#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

namespace depscan::test {

inline bool toolchains_required() {
  const char* value = std::getenv("DEPSCAN_REQUIRE_TOOLCHAINS");
  return value && std::string(value) == "1";
}

// True when `present`; otherwise the test fails (toolchains required) or notes that it skipped.
inline bool present_or_skip(bool present, const std::string& what) {
  if (present) return true;
  if (toolchains_required()) FAIL_CHECK("missing " << what << " (DEPSCAN_REQUIRE_TOOLCHAINS=1)");
  else MESSAGE("skipped: missing " << what);
  return false;
}

}  // namespace depscan::test
