#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "analyzer/resolve/dst.h"
#include "analyzer/resolve/hwcaps.h"
#include "analyzer/resolve/resolve.h"

namespace depscan {

std::vector<std::string> split_ld_library_path(std::string_view list) {
  std::vector<std::string> out;
  if (list.empty()) return out;  // unset and empty both mean: no LD_LIBRARY_PATH
  size_t i = 0;
  while (true) {
    size_t j = list.find_first_of(":;", i);
    out.emplace_back(list.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

LoaderEnvironment default_environment() {
  LoaderEnvironment env;
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) env.ld_library_path = split_ld_library_path(llp);
  if (const char* preload = std::getenv("LD_PRELOAD")) env.preload = split_preload_list(preload);
  char buf[PATH_MAX];
  if (::getcwd(buf, sizeof buf)) env.cwd = buf;
  set_hwcaps(env, detect_hwcaps());
  return env;
}

void set_hwcaps(LoaderEnvironment& env, const HwcapInfo& hw) {
  env.hwcaps = hw.glibc_hwcaps;
  env.legacy_hwcaps = hw.legacy_subdirs;
  env.platform = hw.platform;
  env.isa_levels = hw.isa_levels;
  env.hwcap_bits = hw.hwcap;
}

}  // namespace depscan
