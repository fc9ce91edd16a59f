// Dynamic string tokens ($ORIGIN, $LIB, $PLATFORM in both spellings) and the splitting of
// RPATH / RUNPATH / LD_LIBRARY_PATH lists, as glibc 2.36 does it (elf/dl-load.c:
// _dl_dst_substitute, fillin_rpath).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depscan {

struct DstContext {
  std::string origin;                     // directory of the object; empty = unknown
  std::string lib;                        // $LIB
  std::string platform;                   // $PLATFORM
  bool secure = false;                    // setuid/setgid process
  bool is_executable = false;             // the object is the main program
  std::vector<std::string> trusted_dirs;  // system directories, for secure $ORIGIN
};

// True if the string holds a DST glibc knows ($ORIGIN, $LIB, $PLATFORM, braced or not).
bool has_dst(std::string_view input);

// Substitutes every known DST. nullopt when glibc discards the element: an unusable $ORIGIN
// (unknown origin, or secure mode rules) or a result outside trusted directories.
std::optional<std::string> substitute_dst(std::string_view input, const DstContext& ctx);

// One element of a search list after expansion: "" means the current directory.
// Elements keep a trailing slash off (except "/").
std::vector<std::string> split_search_path(std::string_view list, std::string_view separators,
                                           const DstContext& ctx);

// Splits LD_PRELOAD: names separated by spaces or colons, empty names dropped.
std::vector<std::string> split_preload_list(std::string_view list);

// The names listed in /etc/ld.so.preload: '#' comments, separators ' ', '\t', '\n', ':'.
std::vector<std::string> parse_ld_so_preload(std::string_view text);

}  // namespace depscan
