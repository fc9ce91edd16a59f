#include "analyzer/resolve/system_layout.h"

namespace depscan {
namespace {
constexpr uint16_t kEm386 = 3, kEmX8664 = 62, kEmAarch64 = 183, kEmArm = 40, kEmPpc64 = 21,
                   kEmS390 = 22, kEmRiscv = 243;
}  // namespace

ProcessAbi process_abi_of(const Binary& b) { return ProcessAbi{b.bits ? b.bits : 64, b.little_endian, b.machine}; }

std::optional<MachineFacts> machine_facts(const ProcessAbi& abi) {
  switch (abi.machine) {
    case kEmX8664:
      if (abi.bits == 64) return MachineFacts{"x86-64", "amd64", "x86_64-linux-gnu", "/lib64/ld-linux-x86-64.so.2", "x86_64"};
      return MachineFacts{"x32", "x32", "x86_64-linux-gnux32", "/libx32/ld-linux-x32.so.2", "x32"};
    case kEm386: return MachineFacts{"i386", "i386", "i386-linux-gnu", "/lib/ld-linux.so.2", "i386"};
    case kEmAarch64: return MachineFacts{"aarch64", "arm64", "aarch64-linux-gnu", "/lib/ld-linux-aarch64.so.1", "aarch64"};
    case kEmArm:
      if (abi.bits != 32) return std::nullopt;
      return MachineFacts{"armhf", "armhf", "arm-linux-gnueabihf", "/lib/ld-linux-armhf.so.3", "armhf"};
    case kEmPpc64:
      if (abi.little_endian) return MachineFacts{"ppc64le", "ppc64el", "powerpc64le-linux-gnu", "/lib64/ld64.so.2", "powerpc64le"};
      return MachineFacts{"ppc64", "ppc64", "powerpc64-linux-gnu", "/lib64/ld64.so.1", "powerpc64"};
    case kEmS390:
      if (abi.bits != 64) return std::nullopt;
      return MachineFacts{"s390x", "s390x", "s390x-linux-gnu", "/lib/ld64.so.1", "s390x"};
    case kEmRiscv:
      if (abi.bits != 64) return std::nullopt;
      return MachineFacts{"riscv64", "riscv64", "riscv64-linux-gnu", "/lib/ld-linux-riscv64-lp64d.so.1", "riscv64"};
    default: return std::nullopt;
  }
}

std::string multiarch_triplet(const ProcessAbi& abi) {
  auto facts = machine_facts(abi);
  return facts ? std::string(facts->triplet) : std::string();
}

std::string default_interpreter(const ProcessAbi& abi) {
  auto facts = machine_facts(abi);
  return facts ? std::string(facts->interpreter) : std::string();
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
