// Which glibc release the analysed system's loader is, and the hardware-capability rules that
// changed with it (elf/dl-hwcaps.c and elf/dl-cache.c, checked against the loaders of Debian 11,
// 12 and 13 inside their root file systems):
//   2.33  glibc-hwcaps subdirectories and their ld.so.cache entries appear;
//   2.37  the legacy hwcap subdirectories (tls, x86_64, haswell, ...) are no longer searched;
//   2.40  ld.so.cache entries with legacy hwcap or platform bits are skipped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"

namespace depscan {

// The release in a glibc banner ("... stable release version 2.31."), as ld.so (from 2.33) and
// libc.so.6 carry it.
std::optional<GlibcRelease> parse_release_banner(std::string_view bytes);

// The release of the loader at `interpreter` inside fs: its own banner, else that of the
// libc.so.6 beside it, else of the first libc.so.6 in `system_dirs` that has one. nullopt when none says.
std::optional<GlibcRelease> glibc_release_of(const FileSystem& fs, const std::string& interpreter,
                                             const std::vector<std::string>& system_dirs = {});

struct HwcapRules {
  bool glibc_hwcaps = true;          // glibc-hwcaps subdirectories and cache entries (2.33 on)
  bool legacy_subdirs = true;        // legacy hwcap subdirectories searched (before 2.37)
  bool legacy_cache_entries = true;  // cache entries with legacy hwcap bits usable (before 2.40)
};

// An unknown release is treated as glibc 2.36, which has all three.
HwcapRules hwcap_rules_for(std::optional<GlibcRelease> release);

// One line for `why`: the release and what its loader uses, e.g. "glibc 2.31: no glibc-hwcaps
// subdirectories (added in 2.33); legacy hwcap subdirectories; legacy ld.so.cache entries".
// `has_hwcaps_levels`: the machine has glibc-hwcaps levels (x86-64; i386 has none).
std::string describe_hwcap_rules(std::optional<GlibcRelease> release, bool has_hwcaps_levels = true);

}  // namespace depscan
