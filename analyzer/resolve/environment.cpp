#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "analyzer/resolve/dst.h"
#include "analyzer/resolve/hwcaps.h"
#include "analyzer/resolve/resolve.h"

namespace depscan {

LoaderEnvironment default_environment() {
  LoaderEnvironment env;
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) env.ld_library_path = llp;
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
