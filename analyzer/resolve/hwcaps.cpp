#include "analyzer/resolve/hwcaps.h"

#include <cpuid.h>
#if defined(__clang__)
#define _Bool bool  // glibc 2.36's <sys/platform/x86.h> spells C's _Bool, which clang's C++ lacks
#include <sys/platform/x86.h>
#undef _Bool
#else
#include <sys/platform/x86.h>
#endif

namespace depscan {
namespace {

// The CPU features glibc's get_isa_level() and the platform choice look at, "usable" meaning
// the CPU has them and the OS saves the registers they need. glibc computed them at start-up
// (init_cpu_features, GLIBC_TUNABLES hwcaps masks applied), and asking it costs nothing, where
// each cpuid instruction under a hypervisor costs ~14 us; only the vendor takes one.
struct Features {
  bool intel = false;
  bool baseline = false, v2 = false;
  bool avx = false, avx2 = false, f16c = false, fma = false, lzcnt = false, movbe = false;
  bool bmi1 = false, bmi2 = false, popcnt = false;
  bool avx512f = false, avx512bw = false, avx512cd = false, avx512dq = false, avx512vl = false;
  bool avx512er = false, avx512pf = false;
};

bool is_intel() {
  uint32_t max_leaf = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &max_leaf, &ebx, &ecx, &edx)) return false;
  return ebx == 0x756e6547 && edx == 0x49656e69 && ecx == 0x6c65746e;  // "GenuineIntel"
}

Features read_features() {
  Features f;
  f.intel = is_intel();
  // get_isa_level asks whether the FPU is present, the rest whether they are usable.
  f.baseline = CPU_FEATURE_ACTIVE(CMOV) && CPU_FEATURE_ACTIVE(CX8) && CPU_FEATURE_PRESENT(FPU) &&
               CPU_FEATURE_ACTIVE(FXSR) && CPU_FEATURE_ACTIVE(MMX) && CPU_FEATURE_ACTIVE(SSE) &&
               CPU_FEATURE_ACTIVE(SSE2);
  f.popcnt = CPU_FEATURE_ACTIVE(POPCNT);
  f.v2 = CPU_FEATURE_ACTIVE(CMPXCHG16B) && CPU_FEATURE_ACTIVE(LAHF64_SAHF64) && f.popcnt &&
         CPU_FEATURE_ACTIVE(SSE3) && CPU_FEATURE_ACTIVE(SSSE3) && CPU_FEATURE_ACTIVE(SSE4_1) &&
         CPU_FEATURE_ACTIVE(SSE4_2);
  f.avx = CPU_FEATURE_ACTIVE(AVX);
  f.avx2 = CPU_FEATURE_ACTIVE(AVX2);
  f.f16c = CPU_FEATURE_ACTIVE(F16C);
  f.fma = CPU_FEATURE_ACTIVE(FMA);
  f.lzcnt = CPU_FEATURE_ACTIVE(LZCNT);
  f.movbe = CPU_FEATURE_ACTIVE(MOVBE);
  f.bmi1 = CPU_FEATURE_ACTIVE(BMI1);
  f.bmi2 = CPU_FEATURE_ACTIVE(BMI2);
  f.avx512f = CPU_FEATURE_ACTIVE(AVX512F);
  f.avx512dq = CPU_FEATURE_ACTIVE(AVX512DQ);
  f.avx512pf = CPU_FEATURE_ACTIVE(AVX512PF);
  f.avx512er = CPU_FEATURE_ACTIVE(AVX512ER);
  f.avx512cd = CPU_FEATURE_ACTIVE(AVX512CD);
  f.avx512bw = CPU_FEATURE_ACTIVE(AVX512BW);
  f.avx512vl = CPU_FEATURE_ACTIVE(AVX512VL);
  return f;
}

uint32_t isa_levels_of(const Features& f) {
  if (!f.baseline) return 0;
  uint32_t levels = kIsaBaseline;
  if (!f.v2) return levels;
  levels |= kIsaV2;
  if (!(f.avx && f.avx2 && f.f16c && f.fma && f.lzcnt && f.movbe)) return levels;
  levels |= kIsaV3;
  if (f.avx512f && f.avx512bw && f.avx512cd && f.avx512dq && f.avx512vl) levels |= kIsaV4;
  return levels;
}

constexpr uint64_t kHwcapX86_64 = 1u << 1, kHwcapAvx512_1 = 1u << 2;

std::vector<std::string> legacy_subdirs_of(const HwcapInfo& info) {
  std::vector<std::string> names;
  for (int b = 0; b < 3; ++b)
    if (info.hwcap & (1ull << b)) names.push_back(x86_hwcap_name(b));
  names.push_back(info.platform);
  names.push_back("tls");
  return legacy_hwcap_subdirs(names);
}

}  // namespace

std::vector<std::string> glibc_hwcaps_for(uint32_t isa_levels) {
  // _dl_hwcaps_subdirs_active: a level counts only if every lower level is there too.
  std::vector<std::string> out;
  if (!(isa_levels & kIsaV2)) return out;
  out.insert(out.begin(), "x86-64-v2");
  if (!(isa_levels & kIsaV3)) return out;
  out.insert(out.begin(), "x86-64-v3");
  if (!(isa_levels & kIsaV4)) return out;
  out.insert(out.begin(), "x86-64-v4");
  return out;
}

std::vector<std::string> legacy_hwcap_subdirs(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  size_t count = names.size();
  if (count == 0 || count > 16) return out;
  for (uint32_t mask = (1u << count) - 1; mask > 0; --mask) {
    std::string dir;
    for (size_t n = count; n-- > 0;) {
      if (!(mask & (1u << n))) continue;
      if (!dir.empty()) dir += '/';
      dir += names[n];
    }
    out.push_back(std::move(dir));
  }
  return out;
}

const char* x86_hwcap_name(int bit_index) {
  static const char* const names[] = {"sse2", "x86_64", "avx512_1"};
  return bit_index >= 0 && bit_index < 3 ? names[bit_index] : nullptr;
}

int x86_platform_index(const std::string& platform) {
  static const char* const names[] = {"i586", "i686", "haswell", "xeon_phi"};
  for (int i = 2; i < 4; ++i)  // HWCAP_PLATFORMS_START is 2 for x86-64
    if (platform == names[i]) return i;
  return -1;
}

HwcapInfo detect_hwcaps() {
  Features f = read_features();
  HwcapInfo info;
  info.isa_levels = isa_levels_of(f);
  info.glibc_hwcaps = glibc_hwcaps_for(info.isa_levels);
  info.hwcap = kHwcapX86_64;
  std::string platform;
  if (f.intel) {
    if (f.avx512cd) {
      if (f.avx512er) {
        if (f.avx512pf) platform = "xeon_phi";
      } else if (f.avx512bw && f.avx512dq && f.avx512vl) {
        info.hwcap |= kHwcapAvx512_1;
      }
    }
    if (platform.empty() && f.avx2 && f.fma && f.bmi1 && f.bmi2 && f.lzcnt && f.movbe && f.popcnt)
      platform = "haswell";
  }
  if (!platform.empty()) info.platform = platform;
  info.legacy_subdirs = legacy_subdirs_of(info);
  return info;
}

std::optional<uint32_t> parse_cpu_level(std::string_view name) {
  if (name == "x86-64" || name == "x86-64-v1" || name == "x86-64-baseline") return kIsaBaseline;
  if (name == "x86-64-v2") return kIsaBaseline | kIsaV2;
  if (name == "x86-64-v3") return kIsaBaseline | kIsaV2 | kIsaV3;
  if (name == "x86-64-v4") return kIsaBaseline | kIsaV2 | kIsaV3 | kIsaV4;
  return std::nullopt;
}

HwcapInfo hwcaps_at_level(HwcapInfo host, uint32_t isa_levels) {
  host.isa_levels = isa_levels;
  host.glibc_hwcaps = glibc_hwcaps_for(isa_levels);
  // haswell and xeon_phi need features of x86-64-v3, the AVX-512 hwcap bit those of v4.
  if (!(isa_levels & kIsaV3)) host.platform = "x86_64";
  if (!(isa_levels & kIsaV4)) host.hwcap &= ~kHwcapAvx512_1;
  host.legacy_subdirs = legacy_subdirs_of(host);
  return host;
}

}  // namespace depscan
