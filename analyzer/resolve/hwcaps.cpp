#include "analyzer/resolve/hwcaps.h"

#include <cpuid.h>

#include <cstdlib>
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

// Whether the OS saves these XCR0 state components (xgetbv), as glibc asks before AVX or AVX-512
// counts as usable.
bool os_saves(uint32_t components) {
  if (!CPU_FEATURE_PRESENT(OSXSAVE)) return false;
  uint32_t low = 0, high = 0;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (low & components) == components;
}

constexpr uint32_t kXcrYmm = 0x6, kXcrZmm = 0xe6;  // SSE+AVX state; and the three AVX-512 states

// The features as glibc left them (`before_tunables` false: GLIBC_TUNABLES' glibc.cpu.hwcaps masks
// applied), or as the CPU and the OS offer them, which glibc computed its isa_1 from before masking.
Features read_features(bool before_tunables) {
  bool ymm = !before_tunables || os_saves(kXcrYmm), zmm = !before_tunables || os_saves(kXcrZmm);
#define DEPSCAN_USABLE(name, os) (before_tunables ? CPU_FEATURE_PRESENT(name) && (os) : CPU_FEATURE_ACTIVE(name))
  Features f;
  f.intel = is_intel();
  // get_isa_level asks whether the FPU is present, the rest whether they are usable.
  f.baseline = DEPSCAN_USABLE(CMOV, true) && DEPSCAN_USABLE(CX8, true) && CPU_FEATURE_PRESENT(FPU) &&
               DEPSCAN_USABLE(FXSR, true) && DEPSCAN_USABLE(MMX, true) && DEPSCAN_USABLE(SSE, true) &&
               DEPSCAN_USABLE(SSE2, true);
  f.popcnt = DEPSCAN_USABLE(POPCNT, true);
  f.v2 = DEPSCAN_USABLE(CMPXCHG16B, true) && DEPSCAN_USABLE(LAHF64_SAHF64, true) && f.popcnt &&
         DEPSCAN_USABLE(SSE3, true) && DEPSCAN_USABLE(SSSE3, true) && DEPSCAN_USABLE(SSE4_1, true) &&
         DEPSCAN_USABLE(SSE4_2, true);
  f.avx = DEPSCAN_USABLE(AVX, ymm);
  f.avx2 = DEPSCAN_USABLE(AVX2, ymm);
  f.f16c = DEPSCAN_USABLE(F16C, ymm);
  f.fma = DEPSCAN_USABLE(FMA, ymm);
  f.lzcnt = DEPSCAN_USABLE(LZCNT, true);
  f.movbe = DEPSCAN_USABLE(MOVBE, true);
  f.bmi1 = DEPSCAN_USABLE(BMI1, true);
  f.bmi2 = DEPSCAN_USABLE(BMI2, true);
  f.avx512f = DEPSCAN_USABLE(AVX512F, zmm);
  f.avx512dq = DEPSCAN_USABLE(AVX512DQ, zmm);
  f.avx512pf = DEPSCAN_USABLE(AVX512PF, zmm);
  f.avx512er = DEPSCAN_USABLE(AVX512ER, zmm);
  f.avx512cd = DEPSCAN_USABLE(AVX512CD, zmm);
  f.avx512bw = DEPSCAN_USABLE(AVX512BW, zmm);
  f.avx512vl = DEPSCAN_USABLE(AVX512VL, zmm);
#undef DEPSCAN_USABLE
  return f;
}

// get_isa_level (sysdeps/x86/get-isa-level.h). x86-64-v3 needs BMI1 and BMI2 since glibc 2.37
// (b80f16adbd), and in 2.33 to 2.36 from their release branches on (Debian 12's 2.36 has it).
uint32_t isa_levels_of(const Features& f) {
  if (!f.baseline) return 0;
  uint32_t levels = kIsaBaseline;
  if (!f.v2) return levels;
  levels |= kIsaV2;
  if (!(f.avx && f.avx2 && f.bmi1 && f.bmi2 && f.f16c && f.fma && f.lzcnt && f.movbe)) return levels;
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
  Features f = read_features(false);
  HwcapInfo info;
  // The loader's ISA check and ld.so.cache filter use isa_1, computed before GLIBC_TUNABLES masks
  // features; the glibc-hwcaps subdirectories follow the masked features (dl-hwcaps-subdirs.c).
  info.isa_levels = std::getenv("GLIBC_TUNABLES") ? isa_levels_of(read_features(true)) : isa_levels_of(f);
  info.glibc_hwcaps = glibc_hwcaps_for(isa_levels_of(f));
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
