// /etc/ld.so.conf as ldconfig (glibc 2.36, elf/ldconfig.c parse_conf) reads it: one directory
// per line, '#' comments, `include` glob patterns (relative ones against the including file's
// directory), `hwcap` lines ignored. Used when the analysed root has no usable ld.so.cache.
// Include loops terminate: a file already on the include stack is skipped with a warning.
#pragma once

#include <string>
#include <vector>

#include "analyzer/input/fs.h"

namespace depscan {

struct LdSoConf {
  std::vector<std::string> dirs;        // in file order, duplicates removed
  std::vector<std::string> files_read;  // every configuration file parsed, in order
  std::vector<std::string> warnings;    // loops, ignored hwcap lines, unreadable includes
};

LdSoConf read_ld_so_conf(const FileSystem& fs, const std::string& path = "/etc/ld.so.conf");

// glob(3) on logical paths of `fs` (sorted, only existing paths; '*', '?', '[...]').
std::vector<std::string> glob_paths(const FileSystem& fs, const std::string& pattern);

}  // namespace depscan
