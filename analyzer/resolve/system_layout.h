// The analysed system's library layout: where its loader's default search path points and what
// $LIB expands to. Debian multiarch (/lib/x86_64-linux-gnu), lib64 (Fedora, RHEL, SUSE), or
// plain /lib:/usr/lib. Decided from the files of the analysed root, not the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/resolve/elf_header_check.h"

namespace depscan {

struct SystemLayout {
  std::string kind;                      // "multiarch", "lib64" or "plain"
  std::vector<std::string> system_dirs;  // the loader's built-in search path, in order
  std::string lib;                       // $LIB
};

SystemLayout detect_layout(const FileSystem& fs, const ProcessAbi& abi);

// The class, byte order and machine of the process an ELF file loads into.
ProcessAbi process_abi_of(const Binary& b);

// The PT_INTERP glibc gives a program of this kind ("" for a kind depscan knows no loader of).
// 32-bit Arm is taken as hard-float (armhf) and RISC-V as lp64d, the ABIs Debian ships.
std::string default_interpreter(const ProcessAbi& abi);

// Debian's multiarch triplet for this kind ("" if none).
std::string multiarch_triplet(const ProcessAbi& abi);

}  // namespace depscan
