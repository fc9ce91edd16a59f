// The layout of one ELF file: the header, the program headers and the section headers, with
// every offset and count checked against the file size. Reads of class- and byte-order-dependent
// fields go through here. The bytes come from a ByteSource: only the tables the reader asks for
// are read (or, from memory, viewed), nothing is copied whole.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/byte_source.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan::elf {

inline constexpr uint32_t kPtLoad = 1, kPtDynamic = 2, kPtInterp = 3, kPtTls = 7, kPtGnuStack = 0x6474e551;
inline constexpr uint32_t kShtNobits = 8, kShtDynsym = 11;

struct Segment {
  uint32_t type = 0, flags = 0;
  uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0, align = 0;
};

struct SectionHeader {
  uint32_t name = 0, type = 0;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0;
  uint32_t link = 0, info = 0;
  uint64_t entsize = 0;
};

class Image {
 public:
  // `source` must outlive the image and every view read through it.
  static Expected<Image> parse(const ByteSource& source);

  const ByteSource& source() const { return *source_; }
  uint64_t file_size() const { return source_->size(); }
  bool is64() const { return is64_; }
  bool little_endian() const { return little_; }
  uint16_t type() const { return type_; }
  uint16_t machine() const { return machine_; }
  uint8_t os_abi() const { return os_abi_; }
  uint32_t shstrndx() const { return shstrndx_; }
  const std::vector<Segment>& segments() const { return segments_; }
  const std::vector<SectionHeader>& sections() const { return sections_; }

  // Size of an address-sized word, a symbol and a dynamic entry for this class.
  uint64_t word_size() const { return is64_ ? 8 : 4; }
  uint64_t symbol_size() const { return is64_ ? 24 : 16; }
  uint64_t dynamic_entry_size() const { return is64_ ? 16 : 8; }

  // A range of the file already checked to lie inside it (a segment, a section, a table).
  SourceRange range(uint64_t offset, uint64_t size) const { return SourceRange(*source_, offset, size); }
  // The bytes of such a range, or the problem reading them (an I/O error, a file that shrank).
  Expected<ByteView> bytes(uint64_t offset, uint64_t size) const;

  // Field reads in the file's byte order from a view taken out of this file (0 when the view is
  // too short: callers check a table's extent once, then read its fields).
  uint16_t u16(ByteView v, uint64_t offset) const { return v.read<uint16_t>(offset, little_).value_or(0); }
  uint32_t u32(ByteView v, uint64_t offset) const { return v.read<uint32_t>(offset, little_).value_or(0); }
  uint64_t u64(ByteView v, uint64_t offset) const { return v.read<uint64_t>(offset, little_).value_or(0); }
  uint64_t word(ByteView v, uint64_t offset) const { return is64_ ? u64(v, offset) : u32(v, offset); }
  uint16_t u16(const SourceRange& r, uint64_t offset) const { return r.read<uint16_t>(offset, little_).value_or(0); }
  uint32_t u32(const SourceRange& r, uint64_t offset) const { return r.read<uint32_t>(offset, little_).value_or(0); }

  // The file offset holding [address, address + size) of the loaded image: the range must lie in
  // the file-backed part of one PT_LOAD segment.
  std::optional<uint64_t> file_offset(uint64_t address, uint64_t size) const;
  // From `address` to the end of the file-backed part of its PT_LOAD segment.
  std::optional<SourceRange> range_from_address(uint64_t address) const;

 private:
  std::optional<std::string> read_header();
  std::optional<std::string> read_section_headers(uint64_t shoff, uint16_t shentsize, uint32_t shnum);
  std::optional<std::string> read_program_headers(uint64_t phoff, uint16_t phentsize, uint32_t phnum);
  bool contains(uint64_t offset, uint64_t length) const;

  const ByteSource* source_ = nullptr;
  bool is64_ = true, little_ = true;
  uint16_t type_ = 0, machine_ = 0;
  uint32_t shstrndx_ = 0;
  uint8_t os_abi_ = 0;
  std::vector<Segment> segments_;
  std::vector<SectionHeader> sections_;
};

}  // namespace depscan::elf
