#include "analyzer/util/system_libraries.h"

#include <algorithm>
#include <array>

namespace depscan {

bool is_glibc_soname(std::string_view soname) {
  static constexpr std::array<std::string_view, 21> kNames = {
      "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libresolv.so.2",
      "libutil.so.1", "libanl.so.1", "libnsl.so.1", "libmvec.so.1", "libBrokenLocale.so.1",
      "libc_malloc_debug.so.0", "libthread_db.so.1",
      "ld-linux-x86-64.so.2", "ld-linux.so.2", "ld-linux-aarch64.so.1", "ld-linux-armhf.so.3",
      "ld64.so.2", "ld64.so.1", "ld-linux-riscv64-lp64d.so.1", "ld-linux-x32.so.2"};
  return std::ranges::find(kNames, soname) != kNames.end();
}

bool is_cxx_runtime_soname(std::string_view soname) {
  return soname == "libstdc++.so.6" || soname == "libgcc_s.so.1" || soname == "libc++.so.1" ||
         soname == "libc++abi.so.1";
}

bool is_system_runtime_soname(std::string_view soname) {
  return is_glibc_soname(soname) || soname == "libstdc++.so.6" || soname == "libgcc_s.so.1";
}

}  // namespace depscan
