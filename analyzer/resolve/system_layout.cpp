#include "analyzer/resolve/system_layout.h"

namespace depscan {
namespace {
constexpr uint16_t kEm386 = 3, kEmX8664 = 62, kEmAarch64 = 183, kEmArm = 40, kEmPpc64 = 21,
                   kEmS390 = 22, kEmRiscv = 243;
}  // namespace

ProcessAbi process_abi_of(const Binary& b) { return ProcessAbi{b.bits ? b.bits : 64, b.little_endian, b.machine}; }

std::string multiarch_triplet(const ProcessAbi& abi) {
  switch (abi.machine) {
    case kEmX8664: return abi.bits == 64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
    case kEm386: return "i386-linux-gnu";
    case kEmAarch64: return "aarch64-linux-gnu";
    case kEmArm: return "arm-linux-gnueabihf";
    case kEmPpc64: return abi.little_endian ? "powerpc64le-linux-gnu" : "powerpc64-linux-gnu";
    case kEmS390: return abi.bits == 64 ? "s390x-linux-gnu" : "";
    case kEmRiscv: return abi.bits == 64 ? "riscv64-linux-gnu" : "";
    default: return "";
  }
}

std::string default_interpreter(const ProcessAbi& abi) {
  switch (abi.machine) {
    case kEmX8664: return abi.bits == 64 ? "/lib64/ld-linux-x86-64.so.2" : "/libx32/ld-linux-x32.so.2";
    case kEm386: return "/lib/ld-linux.so.2";
    case kEmAarch64: return "/lib/ld-linux-aarch64.so.1";
    case kEmArm: return abi.bits == 32 ? "/lib/ld-linux-armhf.so.3" : "";
    case kEmPpc64: return abi.little_endian ? "/lib64/ld64.so.2" : "/lib64/ld64.so.1";
    case kEmS390: return abi.bits == 64 ? "/lib/ld64.so.1" : "";
    case kEmRiscv: return abi.bits == 64 ? "/lib/ld-linux-riscv64-lp64d.so.1" : "";
    default: return "";
  }
}

SystemLayout detect_layout(const FileSystem& fs, const ProcessAbi& abi) {
  SystemLayout layout;
  std::string triplet = multiarch_triplet(abi);
  if (!triplet.empty() &&
      (fs.is_directory("/lib/" + triplet) || fs.is_directory("/usr/lib/" + triplet))) {
    layout.kind = "multiarch";
    layout.system_dirs = {"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"};
    layout.lib = "lib/" + triplet;
    return layout;
  }
  bool lib64 = abi.bits == 64 && (fs.is_regular("/lib64/libc.so.6") || fs.is_regular("/usr/lib64/libc.so.6"));
  if (lib64) {
    layout.kind = "lib64";
    layout.system_dirs = {"/lib64", "/usr/lib64"};
    layout.lib = "lib64";
    return layout;
  }
  layout.kind = "plain";
  layout.system_dirs = {"/lib", "/usr/lib"};
  layout.lib = "lib";
  return layout;
}

}  // namespace depscan
