#include "analyzer/read/elf_image.h"

#include <fmt/format.h>

namespace depscan::elf {
namespace {

constexpr uint16_t kShnXindex = 0xffff;
constexpr uint64_t kElf64HeaderSize = 64, kElf32HeaderSize = 52;
constexpr uint64_t kElf64PhdrSize = 56, kElf32PhdrSize = 32;
constexpr uint64_t kElf64ShdrSize = 64, kElf32ShdrSize = 40;

// The extent [offset, offset + count * entsize) of a table, checked against the file.
std::optional<std::string> check_table(ByteView file, std::string_view offset_field, std::string_view table,
                                       uint64_t offset, uint64_t entsize, uint64_t count) {
  if (offset >= file.size()) return fmt::format("{} past end of file", offset_field);
  auto bytes = checked_mul(entsize, count);
  if (!bytes || !file.contains(offset, *bytes))
    return fmt::format("{} table ({} entries) extends past end of file", table, count);
  return std::nullopt;
}

}  // namespace

Expected<Image> Image::parse(ByteView file) {
  Image image;
  image.file_ = file;
  if (auto problem = image.read_header()) return Error{*problem};
  return image;
}

std::optional<std::string> Image::read_header() {
  if (file_.size() < 16) return "file too small for an ELF header";
  if (file_.as_chars().substr(0, 4) != "\x7f" "ELF") return "not an ELF file (bad magic)";
  uint8_t elf_class = file_.data()[4], encoding = file_.data()[5];
  if (elf_class != 1 && elf_class != 2) return fmt::format("unknown ELF class {}", elf_class);
  if (encoding != 1 && encoding != 2) return fmt::format("unknown ELF data encoding {}", encoding);
  is64_ = elf_class == 2;
  little_ = encoding == 1;
  os_abi_ = file_.data()[7];
  if (file_.size() < (is64_ ? kElf64HeaderSize : kElf32HeaderSize)) return "file truncated inside the ELF header";

  type_ = u16(file_, 16);
  machine_ = u16(file_, 18);
  uint64_t phoff = is64_ ? u64(file_, 32) : u32(file_, 28);
  uint64_t shoff = is64_ ? u64(file_, 40) : u32(file_, 32);
  uint64_t fields = is64_ ? 54 : 42;  // e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
  uint16_t phentsize = u16(file_, fields), phnum = u16(file_, fields + 2);
  uint16_t shentsize = u16(file_, fields + 4), shnum = u16(file_, fields + 6);
  shstrndx_ = u16(file_, fields + 8);

  // e_phnum is a plain count, as ld.so reads it (PN_XNUM only matters in core files).
  uint32_t shnum_real = shnum;
  if (shoff != 0) {
    // Section 0 carries the real section count when it does not fit the header.
    uint64_t min_size = is64_ ? kElf64ShdrSize : kElf32ShdrSize;
    if (shentsize < min_size) return fmt::format("e_shentsize {} too small", shentsize);
    if (auto problem = check_table(file_, "e_shoff", "section header", shoff, shentsize, 1)) return problem;
    ByteView first = file_.sub(shoff, shentsize).value();
    uint64_t first_size = is64_ ? u64(first, 32) : u32(first, 20);
    if (shnum == 0) {
      if (first_size > file_.size() / shentsize) return "section count in section 0 exceeds the file";
      shnum_real = static_cast<uint32_t>(first_size);
    }
    if (shstrndx_ == kShnXindex) shstrndx_ = is64_ ? u32(first, 40) : u32(first, 24);
    if (auto problem = read_section_headers(shoff, shentsize, shnum_real)) return problem;
  }
  return read_program_headers(phoff, phentsize, phnum);
}

std::optional<std::string> Image::read_program_headers(uint64_t phoff, uint16_t phentsize, uint32_t phnum) {
  if (phnum == 0) return std::nullopt;
  if (phentsize < (is64_ ? kElf64PhdrSize : kElf32PhdrSize)) return fmt::format("e_phentsize {} too small", phentsize);
  if (auto problem = check_table(file_, "e_phoff", "program header", phoff, phentsize, phnum)) return problem;
  segments_.reserve(phnum);
  for (uint32_t i = 0; i < phnum; ++i) {
    ByteView p = file_.sub(phoff + uint64_t{i} * phentsize, phentsize).value();
    Segment s;
    s.type = u32(p, 0);
    if (is64_) {
      s.offset = u64(p, 8), s.vaddr = u64(p, 16), s.filesz = u64(p, 32), s.memsz = u64(p, 40);
    } else {
      s.offset = u32(p, 4), s.vaddr = u32(p, 8), s.filesz = u32(p, 16), s.memsz = u32(p, 20);
    }
    if (!file_.contains(s.offset, s.filesz))
      return fmt::format("segment {} (type {:#x}) extends past end of file", i, s.type);
    segments_.push_back(s);
  }
  return std::nullopt;
}

std::optional<std::string> Image::read_section_headers(uint64_t shoff, uint16_t shentsize, uint32_t shnum) {
  if (shnum == 0) return std::nullopt;
  if (auto problem = check_table(file_, "e_shoff", "section header", shoff, shentsize, shnum)) return problem;
  if (shstrndx_ >= shnum) return fmt::format("e_shstrndx {} out of range ({} sections)", shstrndx_, shnum);
  sections_.reserve(shnum);
  for (uint32_t i = 0; i < shnum; ++i) {
    ByteView h = file_.sub(shoff + uint64_t{i} * shentsize, shentsize).value();
    SectionHeader s;
    s.name = u32(h, 0), s.type = u32(h, 4);
    if (is64_) {
      s.flags = u64(h, 8), s.addr = u64(h, 16), s.offset = u64(h, 24), s.size = u64(h, 32);
      s.link = u32(h, 40), s.info = u32(h, 44), s.entsize = u64(h, 56);
    } else {
      s.flags = u32(h, 8), s.addr = u32(h, 12), s.offset = u32(h, 16), s.size = u32(h, 20);
      s.link = u32(h, 24), s.info = u32(h, 28), s.entsize = u32(h, 36);
    }
    if (s.type != kShtNobits && i != 0 && !file_.contains(s.offset, s.size))
      return fmt::format("section {} extends past end of file", i);
    sections_.push_back(s);
  }
  return std::nullopt;
}

std::optional<uint64_t> Image::file_offset(uint64_t address, uint64_t size) const {
  auto end = checked_add(address, size);
  if (!end) return std::nullopt;
  for (const Segment& s : segments_) {
    if (s.type != kPtLoad || address < s.vaddr) continue;
    uint64_t delta = address - s.vaddr;
    if (delta >= s.filesz || *end - s.vaddr > s.filesz) continue;
    return s.offset + delta;  // inside the segment, which was checked against the file
  }
  return std::nullopt;
}

std::optional<ByteView> Image::bytes_from_address(uint64_t address) const {
  for (const Segment& s : segments_) {
    if (s.type != kPtLoad || address < s.vaddr || address - s.vaddr >= s.filesz) continue;
    uint64_t delta = address - s.vaddr;
    return file_.sub(s.offset + delta, s.filesz - delta);
  }
  return std::nullopt;
}

}  // namespace depscan::elf
