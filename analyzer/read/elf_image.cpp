#include "analyzer/read/elf_image.h"

#include <algorithm>

#include <fmt/format.h>

namespace depscan::elf {
namespace {

constexpr uint16_t kShnXindex = 0xffff;
constexpr uint64_t kElf64HeaderSize = 64, kElf32HeaderSize = 52;
constexpr uint64_t kElf64PhdrSize = 56, kElf32PhdrSize = 32;
constexpr uint64_t kElf64ShdrSize = 64, kElf32ShdrSize = 40;

}  // namespace

Expected<Image> Image::parse(const ByteSource& source) {
  Image image;
  image.source_ = &source;
  if (auto problem = image.read_header()) return Error{*problem};
  return image;
}

bool Image::contains(uint64_t offset, uint64_t length) const {
  auto end = checked_add(offset, length);
  return end && *end <= file_size();
}

Expected<ByteView> Image::bytes(uint64_t offset, uint64_t size) const {
  auto read = source_->read(offset, size);
  if (!read) return Error{fmt::format("cannot read {} bytes at offset {:#x} of the file", size, offset)};
  return *read;
}

std::optional<std::string> Image::read_header() {
  if (file_size() < 16) return "file too small for an ELF header";
  auto head = bytes(0, std::min<uint64_t>(file_size(), kElf64HeaderSize));
  if (!head) return head.error();
  if (head->as_chars().substr(0, 4) != "\x7f" "ELF") return "not an ELF file (bad magic)";
  uint8_t elf_class = head->data()[4], encoding = head->data()[5];
  if (elf_class != 1 && elf_class != 2) return fmt::format("unknown ELF class {}", elf_class);
  if (encoding != 1 && encoding != 2) return fmt::format("unknown ELF data encoding {}", encoding);
  is64_ = elf_class == 2;
  little_ = encoding == 1;
  os_abi_ = head->data()[7];
  if (file_size() < (is64_ ? kElf64HeaderSize : kElf32HeaderSize)) return "file truncated inside the ELF header";

  type_ = u16(*head, 16);
  machine_ = u16(*head, 18);
  uint64_t phoff = is64_ ? u64(*head, 32) : u32(*head, 28);
  uint64_t shoff = is64_ ? u64(*head, 40) : u32(*head, 32);
  uint64_t fields = is64_ ? 54 : 42;  // e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
  uint16_t phentsize = u16(*head, fields), phnum = u16(*head, fields + 2);
  uint16_t shentsize = u16(*head, fields + 4), shnum = u16(*head, fields + 6);
  shstrndx_ = u16(*head, fields + 8);

  // e_phnum is a plain count, as ld.so reads it (PN_XNUM only matters in core files).
  uint32_t shnum_real = shnum;
  if (shoff != 0) {
    // Section 0 carries the real section count when it does not fit the header.
    uint64_t min_size = is64_ ? kElf64ShdrSize : kElf32ShdrSize;
    if (shentsize < min_size) return fmt::format("e_shentsize {} too small", shentsize);
    if (shoff >= file_size()) return "e_shoff past end of file";
    if (!contains(shoff, shentsize)) return "section header table (1 entries) extends past end of file";
    if (shnum == 0 || shstrndx_ == kShnXindex) {
      auto first = bytes(shoff, shentsize);
      if (!first) return first.error();
      uint64_t first_size = is64_ ? u64(*first, 32) : u32(*first, 20);
      if (shnum == 0) {
        if (first_size > file_size() / shentsize) return "section count in section 0 exceeds the file";
        shnum_real = static_cast<uint32_t>(first_size);
      }
      if (shstrndx_ == kShnXindex) shstrndx_ = is64_ ? u32(*first, 40) : u32(*first, 24);
    }
    if (auto problem = read_section_headers(shoff, shentsize, shnum_real)) return problem;
  }
  return read_program_headers(phoff, phentsize, phnum);
}

std::optional<std::string> Image::read_program_headers(uint64_t phoff, uint16_t phentsize, uint32_t phnum) {
  if (phnum == 0) return std::nullopt;
  if (phentsize < (is64_ ? kElf64PhdrSize : kElf32PhdrSize)) return fmt::format("e_phentsize {} too small", phentsize);
  if (phoff >= file_size()) return "e_phoff past end of file";
  uint64_t table_size = uint64_t{phentsize} * phnum;  // both 16-bit: no overflow
  if (!contains(phoff, table_size)) return fmt::format("program header table ({} entries) extends past end of file", phnum);
  auto table = bytes(phoff, table_size);
  if (!table) return table.error();
  segments_.reserve(phnum);
  for (uint32_t i = 0; i < phnum; ++i) {
    ByteView p = *table->sub(uint64_t{i} * phentsize, phentsize);
    Segment s;
    s.type = u32(p, 0);
    s.flags = u32(p, is64_ ? 4 : 24);
    if (is64_) {
      s.offset = u64(p, 8), s.vaddr = u64(p, 16), s.filesz = u64(p, 32), s.memsz = u64(p, 40), s.align = u64(p, 48);
    } else {
      s.offset = u32(p, 4), s.vaddr = u32(p, 8), s.filesz = u32(p, 16), s.memsz = u32(p, 20), s.align = u32(p, 28);
    }
    if (!contains(s.offset, s.filesz))
      return fmt::format("segment {} (type {:#x}) extends past end of file", i, s.type);
    segments_.push_back(s);
  }
  return std::nullopt;
}

std::optional<std::string> Image::read_section_headers(uint64_t shoff, uint16_t shentsize, uint32_t shnum) {
  if (shnum == 0) return std::nullopt;
  auto table_size = checked_mul(shentsize, shnum);
  if (!table_size || !contains(shoff, *table_size))
    return fmt::format("section header table ({} entries) extends past end of file", shnum);
  if (shstrndx_ >= shnum) return fmt::format("e_shstrndx {} out of range ({} sections)", shstrndx_, shnum);
  auto table = bytes(shoff, *table_size);
  if (!table) return table.error();
  sections_.reserve(shnum);
  for (uint32_t i = 0; i < shnum; ++i) {
    ByteView h = *table->sub(uint64_t{i} * shentsize, shentsize);
    SectionHeader s;
    s.name = u32(h, 0), s.type = u32(h, 4);
    if (is64_) {
      s.flags = u64(h, 8), s.addr = u64(h, 16), s.offset = u64(h, 24), s.size = u64(h, 32);
      s.link = u32(h, 40), s.info = u32(h, 44), s.entsize = u64(h, 56);
    } else {
      s.flags = u32(h, 8), s.addr = u32(h, 12), s.offset = u32(h, 16), s.size = u32(h, 20);
      s.link = u32(h, 24), s.info = u32(h, 28), s.entsize = u32(h, 36);
    }
    if (s.type != kShtNobits && i != 0 && !contains(s.offset, s.size))
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

std::optional<SourceRange> Image::range_from_address(uint64_t address) const {
  for (const Segment& s : segments_) {
    if (s.type != kPtLoad || address < s.vaddr || address - s.vaddr >= s.filesz) continue;
    uint64_t delta = address - s.vaddr;
    return range(s.offset + delta, s.filesz - delta);
  }
  return std::nullopt;
}

}  // namespace depscan::elf
