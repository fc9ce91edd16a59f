#include "analyzer/resolve/elf_header_check.h"

#include <fmt/format.h>

namespace depscan {
namespace {
constexpr uint8_t kElfOsabiSysv = 0, kElfOsabiGnu = 3;
constexpr uint8_t kLibcAbiMax = 4;  // LIBC_ABI_MAX on x86-64 glibc 2.36
constexpr uint16_t kEtExec = 2, kEtDyn = 3;
}  // namespace

HeaderCheck check_elf_header(ByteView head, const ProcessAbi& abi) {
  uint64_t ehdr_size = abi.bits == 64 ? 64 : 52;
  if (head.size() < ehdr_size) return {HeaderVerdict::Fatal, "file too short"};
  auto ident = [&](size_t i) { return *head.read<uint8_t>(i); };
  if (!(ident(0) == 0x7f && ident(1) == 'E' && ident(2) == 'L' && ident(3) == 'F'))
    return {HeaderVerdict::Fatal, "invalid ELF header"};
  uint8_t want_class = abi.bits == 64 ? 2 : 1, want_data = abi.little_endian ? 1 : 2;
  if (ident(4) != want_class)
    return {HeaderVerdict::OtherClass, ident(4) == 1 ? "wrong ELF class: ELFCLASS32"
                                       : ident(4) == 2 ? "wrong ELF class: ELFCLASS64"
                                                       : "wrong ELF class"};
  if (ident(5) != want_data)
    return {HeaderVerdict::Fatal, abi.little_endian ? "ELF file data encoding not little-endian"
                                                    : "ELF file data encoding not big-endian"};
  if (ident(6) != 1) return {HeaderVerdict::Fatal, "ELF file version ident does not match current one"};
  uint8_t osabi = ident(7), abiversion = ident(8);
  if (osabi != kElfOsabiSysv && osabi != kElfOsabiGnu) return {HeaderVerdict::Fatal, "ELF file OS ABI invalid"};
  if (!(abiversion == 0 || (osabi == kElfOsabiGnu && abiversion < kLibcAbiMax)))
    return {HeaderVerdict::Fatal, "ELF file ABI version invalid"};
  for (size_t i = 9; i < 16; ++i)
    if (ident(i) != 0) return {HeaderVerdict::Fatal, "nonzero padding in e_ident"};
  bool le = abi.little_endian;
  uint16_t type = *head.read<uint16_t>(16, le);
  uint16_t machine = *head.read<uint16_t>(18, le);
  uint32_t version = *head.read<uint32_t>(20, le);
  uint16_t phentsize = *head.read<uint16_t>(abi.bits == 64 ? 54 : 42, le);
  if (version != 1) return {HeaderVerdict::Fatal, "ELF file version does not match current one"};
  if (machine != abi.machine)
    return {HeaderVerdict::OtherMachine, fmt::format("wrong machine: e_machine {}", machine)};
  if (type != kEtDyn && type != kEtExec) return {HeaderVerdict::Fatal, "only ET_DYN and ET_EXEC can be loaded"};
  if (phentsize != (abi.bits == 64 ? 56 : 32))
    return {HeaderVerdict::Fatal, "ELF file's phentsize not the expected size"};
  return {HeaderVerdict::Fits, ""};
}

}  // namespace depscan
