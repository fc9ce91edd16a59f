#pragma once
// The libraries a Linux system provides itself: glibc's and the GCC and LLVM C++ runtimes.

#include <string_view>

namespace depscan {

// One of glibc's own libraries, its dynamic loaders included (every machine glibc supports).
bool is_glibc_soname(std::string_view soname);

// The C++ language runtime and the unwinder it needs: libstdc++ and libgcc_s, libc++ and libc++abi.
bool is_cxx_runtime_soname(std::string_view soname);

// What the target system installs beside the program: glibc and GCC's runtimes.
bool is_system_runtime_soname(std::string_view soname);

}  // namespace depscan
