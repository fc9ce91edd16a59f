// Named target baselines (--target debian-11): the highest glibc, GLIBCXX_ and CXXABI_ versions
// each distribution or wheel policy provides, read from the embedded matrix/data/baselines.json.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/expected.h"

namespace depscan {

struct Baseline {
  std::string name;     // debian-11, rhel-8, manylinux2014, ...
  std::string glibc;    // 2.31
  std::string glibcxx;  // 3.4.28
  std::string cxxabi;   // 1.3.12
  std::string source;   // where the numbers come from
};

Expected<std::vector<Baseline>> load_baselines();
std::optional<Baseline> find_baseline(std::string_view name);

// Empty if `name` is a known baseline, else a one-line error listing the known names.
std::string known_baseline_or_error(std::string_view name);

}  // namespace depscan
