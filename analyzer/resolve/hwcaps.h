// Which hardware-capability subdirectories glibc's loader searches on this CPU (glibc 2.36,
// elf/dl-hwcaps.c and sysdeps/x86): the glibc-hwcaps levels (x86-64-v4, v3, v2, best first) and
// the legacy power-set subdirectories built from dl_hwcap, the platform and "tls".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model.h"

namespace depscan {

struct HwcapInfo {
  std::vector<std::string> glibc_hwcaps;    // levels searched, best first (GLIBC_TUNABLES masks applied)
  std::vector<std::string> legacy_subdirs;  // legacy subdirectories in search order, "" excluded
  std::string platform = "x86_64";          // GLRO(dl_platform): x86_64, haswell or xeon_phi
  uint32_t isa_levels = 0;                  // kIsa* bits of the CPU (glibc's isa_1: GLIBC_TUNABLES masks aside)
  uint64_t hwcap = 0;                       // dl_hwcap & hwcap_mask (legacy ld.so.cache filter)
};

// What an x86-64 process would see on this CPU (the features glibc's init_cpu_features found).
HwcapInfo detect_hwcaps();

// A level as --cpu-level names it (x86-64, x86-64-v1 .. x86-64-v4): the kIsa* bits of a CPU at that
// level; nullopt for another name.
std::optional<uint32_t> parse_cpu_level(std::string_view name);

// What a process sees on a CPU of exactly these ISA levels, taking what the levels do not decide
// (the vendor's platform names) from `host`.
HwcapInfo hwcaps_at_level(HwcapInfo host, uint32_t isa_levels);

// Levels of x86-64-v4..v2 contained in an ISA mask, best first.
std::vector<std::string> glibc_hwcaps_for(uint32_t isa_levels);

// The legacy subdirectories from the capability names (ascending hwcap bits, then the platform,
// then "tls"), in glibc's power-set order: "tls/x86_64/x86_64", "tls/x86_64", ... "x86_64".
std::vector<std::string> legacy_hwcap_subdirs(const std::vector<std::string>& names);

// dl_x86_hwcap_flags / dl_x86_platforms: bit names and platform indexes for ld.so.cache checks.
const char* x86_hwcap_name(int bit);
int x86_platform_index(const std::string& platform);  // -1 if not a cache platform

}  // namespace depscan
