// The analysed system's library layout: where its loader's default search path points and what
// $LIB expands to. Debian multiarch (/lib/x86_64-linux-gnu), lib64 (Fedora, RHEL, SUSE), or
// plain /lib:/usr/lib. Decided from the files of the analysed root, not the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/input/fs.h"

namespace depscan {

struct SystemLayout {
  std::string kind;                      // "multiarch", "lib64" or "plain"
  std::vector<std::string> system_dirs;  // the loader's built-in search path, in order
  std::string lib;                       // $LIB
};

SystemLayout detect_layout(const FileSystem& fs, int bits, uint16_t machine);

// The PT_INTERP a program of this class and machine would normally carry.
std::string default_interpreter(int bits, uint16_t machine);

// Debian's multiarch triplet for the class and machine ("" if none).
std::string multiarch_triplet(int bits, uint16_t machine);

}  // namespace depscan
