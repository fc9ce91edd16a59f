#include "analyzer/read/elf_reader.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/read/elf_dynamic.h"
#include "analyzer/read/elf_gnu_property.h"

namespace depscan {
namespace {

using elf::Problem;

constexpr uint64_t kDynamicChunk = 4096;  // a multiple of both entry sizes
constexpr uint64_t kSectionNamesReadWhole = 64 * 1024;

const elf::Segment* first_segment(const elf::Image& image, uint32_t type) {
  for (const elf::Segment& s : image.segments())
    if (s.type == type) return &s;
  return nullptr;
}

Problem read_interpreter(const elf::Image& image, Binary& binary) {
  const elf::Segment* interp = first_segment(image, elf::kPtInterp);
  if (!interp) return std::nullopt;
  auto text = image.range(interp->offset, interp->filesz).cstring(0);  // segments are checked
  if (!text) return "PT_INTERP is not NUL-terminated";
  binary.interpreter = std::string(*text);
  return std::nullopt;
}

// p_flags of PT_GNU_STACK and the TLS block (the last one counts, as in ld.so), and the page sizes
// PT_LOADs allow.
void read_segment_facts(const elf::Image& image, Binary& binary) {
  for (const elf::Segment& s : image.segments()) {
    if (s.type == elf::kPtGnuStack) binary.stack_flags = s.flags;
    if (s.type == elf::kPtTls && s.memsz != 0) set_tls_block(binary, s.memsz, s.align, s.vaddr);
    if (s.type != elf::kPtLoad) continue;
    binary.load_congruence = merge_power_of_two(binary.load_congruence, s.vaddr - s.offset);
    binary.load_alignment = merge_power_of_two(binary.load_alignment, s.align);
  }
}

Problem read_dynamic_table(const elf::Image& image, elf::DynamicTable& table, bool& present) {
  const elf::Segment* dynamic = first_segment(image, elf::kPtDynamic);
  present = dynamic != nullptr;
  if (!dynamic) return std::nullopt;
  uint64_t entry_size = image.dynamic_entry_size(), word = image.word_size();
  uint64_t usable = dynamic->filesz - dynamic->filesz % entry_size;
  // Read in chunks of whole entries: a hostile p_filesz may cover the file, DT_NULL comes early.
  for (uint64_t start = 0; start < usable; start += kDynamicChunk) {
    auto chunk = image.bytes(dynamic->offset + start, std::min(kDynamicChunk, usable - start));  // segments are checked
    if (!chunk) return chunk.error();
    for (uint64_t off = 0; off + entry_size <= chunk->size(); off += entry_size) {
      elf::DynamicEntry entry{image.word(*chunk, off), image.word(*chunk, off + word)};
      if (entry.tag == elf::kDtNull) return std::nullopt;
      table.entries.push_back(entry);
    }
  }
  return std::nullopt;  // no DT_NULL inside p_filesz: the loader stops at the end as well
}

Problem read_dynamic_strings(const elf::DynamicTable& dynamic, const elf::StringTable& strings, Binary& binary) {
  std::string text;
  for (const elf::DynamicEntry& e : dynamic.entries) {
    const char* what = e.tag == elf::kDtNeeded ? "DT_NEEDED" : e.tag == elf::kDtSoname ? "DT_SONAME"
                     : e.tag == elf::kDtRpath ? "DT_RPATH" : e.tag == elf::kDtRunpath ? "DT_RUNPATH"
                     : e.tag == elf::kDtFilter ? "DT_FILTER" : e.tag == elf::kDtAuxiliary ? "DT_AUXILIARY" : nullptr;
    if (!what) continue;
    if (auto problem = strings.get(e.value, what, text)) return problem;
    if (e.tag == elf::kDtNeeded) binary.needed.push_back(text);
    else if (e.tag == elf::kDtFilter || e.tag == elf::kDtAuxiliary)
      binary.filtees.push_back(FilteeName{text, e.tag == elf::kDtAuxiliary, binary.needed.size()});
    else if (e.tag == elf::kDtSoname) binary.soname = text;
    else if (e.tag == elf::kDtRpath) binary.rpath = text;
    else binary.runpath = text;
  }
  binary.dt_flags = dynamic.value(elf::kDtFlags).value_or(0);
  binary.dt_flags_1 = dynamic.value(elf::kDtFlags1).value_or(0);
  binary.has_dt_bind_now = dynamic.value(elf::kDtBindNow).has_value();
  binary.has_dt_symbolic = dynamic.value(elf::kDtSymbolic).has_value();
  return std::nullopt;
}

bool scan_reads(std::string_view section_name) { return section_name == ".text" || section_name == ".rodata"; }

Problem read_sections(const elf::Image& image, Binary& binary, bool all_sections) {
  if (image.sections().empty()) return std::nullopt;
  const elf::SectionHeader& names_header = image.sections()[image.shstrndx()];
  SourceRange names;
  if (image.shstrndx() != 0) {
    if (names_header.type == elf::kShtNobits) return "the section name table has no bytes in the file";
    names = image.range(names_header.offset, names_header.size);  // checked with the headers
    if (names.size() <= kSectionNamesReadWhole && !names.bytes()) return "cannot read the section name table";
  }
  if (all_sections) binary.sections.reserve(image.sections().size());
  for (size_t i = 0; i < image.sections().size(); ++i) {
    const elf::SectionHeader& h = image.sections()[i];
    std::string_view name;
    if (image.shstrndx() != 0) {
      auto text = names.cstring(h.name);
      if (!text) return fmt::format("section {} name is not a terminated string of the section name table", i);
      name = *text;
    }
    if (all_sections || scan_reads(name))
      binary.sections.push_back(Section{std::string(name), h.type, h.flags, h.addr, h.offset, h.size});
  }
  return std::nullopt;
}

Problem read_dynamic_view(const elf::Image& image, Binary& binary, bool with_symbols) {
  elf::DynamicTable dynamic;
  if (auto problem = read_dynamic_table(image, dynamic, binary.has_dynamic)) return problem;
  if (dynamic.entries.empty()) return std::nullopt;
  elf::StringTable strings;
  if (auto problem = elf::StringTable::locate(image, dynamic, strings)) return problem;
  if (auto problem = read_dynamic_strings(dynamic, strings, binary)) return problem;
  if (auto problem = elf::read_version_needs(image, dynamic, strings, binary.version_needs)) return problem;
  if (auto problem = elf::read_version_defs(image, dynamic, strings, binary.version_defs)) return problem;
  if (binary.static_tls())
    if (auto problem = elf::read_static_tls_relocations(image, dynamic, binary)) return problem;
  binary.symbols_read = with_symbols;
  if (!with_symbols) return std::nullopt;
  if (auto problem = elf::read_dynamic_symbols(image, dynamic, strings, binary)) return problem;
  if (auto problem = elf::mark_load_time_references(image, dynamic, binary)) return problem;
  return elf::mark_plt_calls(image, dynamic, binary);
}

}  // namespace

namespace elf {

std::optional<uint64_t> DynamicTable::value(uint64_t tag) const {
  std::optional<uint64_t> found;
  for (const DynamicEntry& e : entries)
    if (e.tag == tag) found = e.value;  // the last one wins, as in ld.so
  return found;
}

Problem StringTable::locate(const Image& image, const DynamicTable& dynamic, StringTable& out) {
  auto address = dynamic.value(kDtStrtab);
  if (!address) {
    for (const DynamicEntry& e : dynamic.entries)
      if (e.tag == kDtNeeded || e.tag == kDtSoname || e.tag == kDtRpath || e.tag == kDtRunpath ||
          e.tag == kDtFilter || e.tag == kDtAuxiliary || e.tag == kDtVerneed || e.tag == kDtVerdef ||
          e.tag == kDtSymtab)
        return "dynamic section names strings but has no DT_STRTAB";
    return std::nullopt;
  }
  auto range = image.range_from_address(*address);
  if (!range) return "DT_STRTAB not inside any PT_LOAD segment";
  if (auto size = dynamic.value(kDtStrsz)) {
    auto limited = range->sub(0, *size);
    if (!limited) return "DT_STRSZ extends past the segment holding DT_STRTAB";
    range = limited;
  }
  out.range_ = *range;
  out.present_ = true;
  return std::nullopt;
}

Problem StringTable::preload() const {
  // Past this size (only a hostile file has it) the strings are read one by one instead.
  constexpr uint64_t kMaxPreload = uint64_t{64} << 20;
  if (!present_ || range_.size() > kMaxPreload) return std::nullopt;
  loaded_ = range_.bytes();
  if (!loaded_) return "cannot read the dynamic string table";
  return std::nullopt;
}

Problem StringTable::view(uint64_t offset, std::string_view what, std::string_view& out) const {
  if (!present_) return fmt::format("{} needs DT_STRTAB, which is absent", what);
  if (offset >= range_.size()) return fmt::format("{} string offset {:#x} past the end of the string table", what, offset);
  auto text = loaded_ ? loaded_->cstring(offset) : range_.cstring(offset);
  if (!text) return fmt::format("{} string at offset {:#x} has no terminator", what, offset);
  out = *text;
  return std::nullopt;
}

Problem StringTable::get(uint64_t offset, std::string_view what, std::string& out) const {
  std::string_view text;
  if (auto problem = view(offset, what, text)) return problem;
  out.assign(text.data(), text.size());
  return std::nullopt;
}

}  // namespace elf

Expected<Binary> read_elf(ByteView file, const std::string& logical_path, ReadOptions options) {
  MemorySource source(file);
  return read_elf(source, logical_path, options);
}

Expected<Binary> read_elf(const ByteSource& file, const std::string& logical_path, ReadOptions options) {
  auto image = elf::Image::parse(file);
  if (!image) return Error{image.error()};
  Binary binary;
  binary.path = logical_path;
  binary.format = Format::Elf;
  binary.bits = image->is64() ? 64 : 32;
  binary.little_endian = image->little_endian();
  binary.machine = image->machine();
  binary.file_type = image->type();
  binary.os_abi = image->os_abi();
  binary.file_size = file.size();
  if (auto problem = read_interpreter(*image, binary)) return Error{*problem};
  read_segment_facts(*image, binary);
  if (auto problem = elf::read_x86_isa_needed(*image, binary)) return Error{*problem};
  if (auto problem = read_dynamic_view(*image, binary, options.symbols)) return Error{*problem};
  if (auto problem = read_sections(*image, binary, options.all_sections)) return Error{*problem};
  return binary;
}

}  // namespace depscan
