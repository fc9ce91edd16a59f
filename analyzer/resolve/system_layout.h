// The analysed system's library layout: where its loader's default search path points and what
// $LIB expands to. Debian multiarch (/lib/x86_64-linux-gnu), lib64 (Fedora, RHEL, SUSE), or
// plain /lib:/usr/lib. Decided from the files of the analysed root, not the host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

// What depscan knows of one kind of process. 32-bit Arm is taken as hard-float (armhf) and
// RISC-V as lp64d, the ABIs Debian ships.
struct MachineFacts {
  std::string_view label;        // as findings name it: "x86-64", "ppc64le"
  std::string_view debian;       // Debian's architecture: "amd64", "ppc64el"
  std::string_view triplet;      // Debian's multiarch triplet
  std::string_view interpreter;  // the PT_INTERP glibc gives its programs
  std::string_view musl_arch;    // musl's LDSO_ARCH (arch/*/reloc.h): ld-musl-<arch>.so.1
};

// nullopt for a kind depscan knows no loader of.
std::optional<MachineFacts> machine_facts(const ProcessAbi& abi);

// The PT_INTERP glibc gives a program of this kind ("" for a kind depscan knows no loader of).
std::string default_interpreter(const ProcessAbi& abi);

// Debian's multiarch triplet for this kind ("" if none).
std::string multiarch_triplet(const ProcessAbi& abi);

}  // namespace depscan
