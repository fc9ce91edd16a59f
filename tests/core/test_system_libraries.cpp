// Which sonames belong to glibc and to the C++ runtimes, for the checks and the folded text tree.
#include <doctest/doctest.h>

#include "analyzer/util/system_libraries.h"

using namespace depscan;

TEST_CASE("glibc's libraries and the loaders of every machine are glibc's") {
  for (auto name : {"libc.so.6", "libm.so.6", "libpthread.so.0", "libnsl.so.1", "libBrokenLocale.so.1",
                    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "ld64.so.2", "ld-linux.so.2"})
    CHECK_MESSAGE(is_glibc_soname(name), name);
  for (auto name : {"libstdc++.so.6", "libcrypt.so.1", "libc.so", "libc.so.7", "libcudart.so.12", ""})
    CHECK_FALSE_MESSAGE(is_glibc_soname(name), name);
}

TEST_CASE("the C++ runtimes are GCC's and LLVM's, and only GCC's ship with the system") {
  for (auto name : {"libstdc++.so.6", "libgcc_s.so.1", "libc++.so.1", "libc++abi.so.1"})
    CHECK_MESSAGE(is_cxx_runtime_soname(name), name);
  CHECK_FALSE(is_cxx_runtime_soname("libc.so.6"));
  CHECK(is_system_runtime_soname("libstdc++.so.6"));
  CHECK(is_system_runtime_soname("libc.so.6"));
  CHECK_FALSE(is_system_runtime_soname("libc++.so.1"));
  CHECK_FALSE(is_system_runtime_soname("libcudnn.so.9"));
}
