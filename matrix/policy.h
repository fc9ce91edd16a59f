// Wheel platform policies (manylinux_x_y with the manylinux1/2010/2014 aliases, musllinux_x_y):
// which symbol versions a wheel's ELF files may need from the system and which libraries they
// may take from it. Data: matrix/data/manylinux-policy.json (PEP 513/571/599/600/656, values
// recorded from auditwheel's policy files, source on every row).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/expected.h"

namespace depscan {

struct WheelPolicy {
  std::string name;                      // canonical: manylinux_2_17
  std::vector<std::string> aliases;      // manylinux2014
  std::string libc;                      // "glibc" or "musl"
  std::string libc_version;              // "2.17"
  int priority = 0;                      // higher = runs on more systems
  // arch -> version family ("GLIBC", "GLIBCXX", "CXXABI", "GCC", ...) -> allowed versions
  std::map<std::string, std::map<std::string, std::set<std::string>>> symbol_versions;
  std::set<std::string> lib_whitelist;
  // musl: arch -> the soname "libc.so" in lib_whitelist stands for there (libc.musl-x86_64.so.1)
  std::map<std::string, std::string> libc_so_by_arch;
  std::map<std::string, std::set<std::string>> blacklist;  // library -> symbols refused
  std::string source;

  // Whether a wheel for `arch` may take the library named `soname` from the system.
  bool allows_library(const std::string& soname, const std::string& arch) const;
};

// A platform tag split into its policy and architecture.
struct PlatformTag {
  std::string policy;   // manylinux_2_17, musllinux_1_2, manylinux2014 (as written)
  std::string arch;     // x86_64, aarch64, ...
};
std::optional<PlatformTag> split_platform_tag(std::string_view platform);

class PolicySet {
 public:
  // Policies sorted from the most compatible (highest priority) to the newest.
  const std::vector<WheelPolicy>& policies() const { return policies_; }
  // The policy a manylinux/musllinux name or alias stands for; nullptr for "linux" or unknown.
  const WheelPolicy* find(std::string_view name) const;
  void add(WheelPolicy policy);

 private:
  std::vector<WheelPolicy> policies_;
};

Expected<PolicySet> parse_policies(std::string_view json_text);
Expected<PolicySet> load_embedded_policies();

}  // namespace depscan
