#include "analyzer/resolve/hwcaps.h"

#include <cpuid.h>

namespace depscan {
namespace {

struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  CpuidRegs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return CpuidRegs{};
  return r;
}

uint64_t xgetbv0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool bit(uint32_t reg, int n) { return (reg >> n) & 1u; }

// The CPU features glibc's get_isa_level() and the platform choice look at, "usable" meaning
// the CPU has them and the OS saves the registers they need.
struct Features {
  bool intel = false;
  bool baseline = false, v2 = false;
  bool avx = false, avx2 = false, f16c = false, fma = false, lzcnt = false, movbe = false;
  bool bmi1 = false, bmi2 = false, popcnt = false;
  bool avx512f = false, avx512bw = false, avx512cd = false, avx512dq = false, avx512vl = false;
  bool avx512er = false, avx512pf = false;
};

Features read_features() {
  Features f;
  CpuidRegs vendor = cpuid(0);
  f.intel = vendor.ebx == 0x756e6547 && vendor.edx == 0x49656e69 && vendor.ecx == 0x6c65746e;
  CpuidRegs l1 = cpuid(1);
  CpuidRegs l7 = vendor.eax >= 7 ? cpuid(7, 0) : CpuidRegs{};
  CpuidRegs ext = cpuid(0x80000001);
  uint64_t xcr0 = bit(l1.ecx, 27) ? xgetbv0() : 0;  // OSXSAVE
  bool os_avx = (xcr0 & 0x6) == 0x6;
  bool os_avx512 = (xcr0 & 0xe6) == 0xe6;
  f.baseline = bit(l1.edx, 15) && bit(l1.edx, 8) && bit(l1.edx, 0) && bit(l1.edx, 24) &&
               bit(l1.edx, 23) && bit(l1.edx, 25) && bit(l1.edx, 26);
  f.popcnt = bit(l1.ecx, 23);
  f.v2 = bit(l1.ecx, 13) && bit(ext.ecx, 0) && f.popcnt && bit(l1.ecx, 0) && bit(l1.ecx, 9) &&
         bit(l1.ecx, 19) && bit(l1.ecx, 20);
  f.avx = os_avx && bit(l1.ecx, 28);
  f.avx2 = f.avx && bit(l7.ebx, 5);
  f.f16c = f.avx && bit(l1.ecx, 29);
  f.fma = f.avx && bit(l1.ecx, 12);
  f.lzcnt = bit(ext.ecx, 5);
  f.movbe = bit(l1.ecx, 22);
  f.bmi1 = bit(l7.ebx, 3);
  f.bmi2 = bit(l7.ebx, 8);
  f.avx512f = os_avx512 && bit(l7.ebx, 16);
  f.avx512dq = f.avx512f && bit(l7.ebx, 17);
  f.avx512pf = f.avx512f && bit(l7.ebx, 26);
  f.avx512er = f.avx512f && bit(l7.ebx, 27);
  f.avx512cd = f.avx512f && bit(l7.ebx, 28);
  f.avx512bw = f.avx512f && bit(l7.ebx, 30);
  f.avx512vl = f.avx512f && bit(l7.ebx, 31);
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
  std::vector<std::string> names;
  for (int b = 0; b < 3; ++b)
    if (info.hwcap & (1ull << b)) names.push_back(x86_hwcap_name(b));
  names.push_back(info.platform);
  names.push_back("tls");
  info.legacy_subdirs = legacy_hwcap_subdirs(names);
  return info;
}

}  // namespace depscan
