// PE files: LIEF 0.9 parses the headers, sections and import directory; what its API lacks or gets
// wrong (delay-load imports, ordinal-only exports, forwarders listed twice) is read raw from a
// memory map of the file, through ByteView, at file offsets found from LIEF's section table.
#include "analyzer/read/lief/lief_readers.h"

#include <LIEF/PE.hpp>
#include <fmt/format.h>

#include <unordered_map>

#include "analyzer/input/mapped_file.h"
#include "analyzer/read/lief/pe_precheck.h"

namespace depscan {
namespace {

namespace lp = LIEF::PE;
using Problem = std::optional<std::string>;

constexpr uint64_t kDelayDescriptorSize = 32, kExportDirectorySize = 40;
constexpr size_t kMaxNameLength = 4096;
constexpr const char* kDelayNamesTooLarge = "delay-import names add up to more than 4 times the file";

// Image RVAs -> bytes of the file, through the section table.
class RvaReader {
 public:
  RvaReader(const lp::Binary& pe, ByteView file) : file_(file) {
    for (const lp::Section& s : pe.sections())
      sections_.push_back({s.virtual_address(), s.sizeof_raw_data(), s.pointerto_raw_data()});
  }
  // The file bytes from rva to the end of its section's raw data.
  std::optional<ByteView> at(uint64_t rva) const {
    for (const Span& s : sections_) {
      if (rva < s.rva || rva - s.rva >= s.raw_size) continue;
      auto start = checked_add(s.raw_offset, rva - s.rva);
      return file_.sub(*start, s.raw_size - (rva - s.rva));
    }
    return std::nullopt;
  }
  uint64_t file_size() const { return file_.size(); }
  std::optional<uint32_t> u32(uint64_t rva) const {
    auto bytes = at(rva);
    return bytes ? bytes->read<uint32_t>(0) : std::nullopt;
  }
  std::optional<uint64_t> u64(uint64_t rva) const {
    auto bytes = at(rva);
    return bytes ? bytes->read<uint64_t>(0) : std::nullopt;
  }
  std::optional<std::string> cstring(uint64_t rva) const {
    auto bytes = at(rva);
    if (!bytes) return std::nullopt;
    auto text = bytes->cstring(0, kMaxNameLength);
    return text ? std::optional<std::string>(std::string(*text)) : std::nullopt;
  }

 private:
  struct Span {
    uint64_t rva, raw_size, raw_offset;
  };
  ByteView file_;
  std::vector<Span> sections_;
};

// An import whose name and DLL name the binary's StringArena already holds.
Symbol kept_import(std::string_view name, std::string_view dll) {
  Symbol s;
  s.name = name;
  s.defined = false;
  s.type = SymbolType::Func;
  s.version_file = dll;
  s.version_index = 0xffff;
  return s;
}

Symbol import_symbol(StringArena& arena, std::string_view name, std::string_view dll) {
  return kept_import(arena.keep(name), arena.keep(dll));
}

// A hostile name table points every thunk at one long name: each name is kept once, and all of them
// together may not outgrow the file.
class DelayNames {
 public:
  DelayNames(StringArena& arena, uint64_t file_size) : arena_(arena), budget_(4 * file_size + 65536) {}
  std::optional<std::string_view> keep(uint64_t rva, std::string_view name) {
    auto [at, added] = by_rva_.try_emplace(rva);
    if (!added) return at->second;
    if (name.size() > budget_) return std::nullopt;
    budget_ -= name.size();
    return at->second = arena_.keep(name);
  }

 private:
  StringArena& arena_;
  uint64_t budget_;
  std::unordered_map<uint64_t, std::string_view> by_rva_;
};

void read_imports(const lp::Binary& pe, Binary& out) {
  for (const lp::Import& import : pe.imports()) {
    out.needed.push_back(import.name());
    for (const lp::ImportEntry& e : import.entries())
      out.symbols.push_back(import_symbol(*out.symbol_strings, e.is_ordinal() ? fmt::format("#{}", e.ordinal()) : e.name(),
                                          import.name()));
  }
}

// One IMAGE_DELAYLOAD_DESCRIPTOR: its DLL name and the functions of its import name table.
Problem read_delay_descriptor(const RvaReader& image, uint64_t image_base, bool pe32_plus,
                              const uint32_t (&d)[8], DelayNames& names, Binary& out) {
  bool rva_based = d[0] & 1;  // old (VC6) descriptors hold VAs
  auto to_rva = [&](uint64_t value) -> std::optional<uint64_t> {
    if (rva_based) return value;
    if (value < image_base) return std::nullopt;
    return value - image_base;
  };
  auto name_rva = to_rva(d[1]);
  auto dll = name_rva ? image.cstring(*name_rva) : std::nullopt;
  if (!dll) return "delay-import DLL name outside every section";
  auto kept_dll = names.keep(*name_rva, *dll);
  if (!kept_dll) return kDelayNamesTooLarge;
  out.delay_needed.push_back(*dll);
  auto table = to_rva(d[4]);
  if (!table) return fmt::format("delay-import name table of {} outside the image", *dll);
  uint64_t thunk_size = pe32_plus ? 8 : 4, ordinal_flag = pe32_plus ? 1ull << 63 : 1ull << 31;
  for (uint64_t i = 0;; ++i) {
    std::optional<uint64_t> thunk = pe32_plus ? image.u64(*table + i * thunk_size) : std::optional<uint64_t>(image.u32(*table + i * thunk_size));
    if (!thunk) return fmt::format("delay-import name table of {} runs outside its section", *dll);
    if (*thunk == 0) return std::nullopt;
    if (*thunk & ordinal_flag) {
      out.symbols.push_back(kept_import(out.symbol_strings->keep(fmt::format("#{}", *thunk & 0xffff)), *kept_dll));
      continue;
    }
    auto hint_name = to_rva(*thunk & 0x7fffffff);
    auto name = hint_name ? image.cstring(*hint_name + 2) : std::nullopt;
    if (!name) return fmt::format("delay-import name of {} outside every section", *dll);
    auto kept_name = names.keep(*hint_name + 2, *name);
    if (!kept_name) return kDelayNamesTooLarge;
    out.symbols.push_back(kept_import(*kept_name, *kept_dll));
  }
}

Problem read_delay_imports(const lp::Binary& pe, const RvaReader& image, Binary& out) {
  const lp::DataDirectory& dir = pe.data_directory(lp::DATA_DIRECTORY::DELAY_IMPORT_DESCRIPTOR);
  if (dir.RVA() == 0) return std::nullopt;
  bool pe32_plus = pe.type() == lp::PE_TYPE::PE32_PLUS;
  DelayNames names(*out.symbol_strings, image.file_size());
  for (uint64_t i = 0; (i + 1) * kDelayDescriptorSize <= dir.size(); ++i) {
    auto bytes = image.at(dir.RVA() + i * kDelayDescriptorSize);
    if (!bytes || bytes->size() < kDelayDescriptorSize) return "delay-import descriptor outside every section";
    uint32_t d[8];
    for (int f = 0; f < 8; ++f) d[f] = bytes->read<uint32_t>(4 * f).value_or(0);
    if (d[1] == 0) break;  // the all-zero terminator
    if (auto problem = read_delay_descriptor(image, pe.optional_header().imagebase(), pe32_plus, d, names, out)) return problem;
  }
  return std::nullopt;
}

// The Export Address Table, read raw: LIEF 0.9 drops ordinal-only exports and lists forwarders
// twice. A forwarder's version_file holds its target ("KERNEL32.GetTickCount").
Problem read_exports(const lp::Binary& pe, const RvaReader& image, Binary& out) {
  const lp::DataDirectory& dir = pe.data_directory(lp::DATA_DIRECTORY::EXPORT_TABLE);
  if (dir.RVA() == 0) return std::nullopt;
  auto header = image.at(dir.RVA());
  if (!header || header->size() < kExportDirectorySize) return "export directory outside every section";
  auto field = [&](uint64_t offset) { return header->read<uint32_t>(offset).value_or(0); };
  uint32_t base = field(16), functions = field(20), names = field(24);
  uint32_t functions_rva = field(28), names_rva = field(32), ordinals_rva = field(36);
  auto eat = image.at(functions_rva), name_table = image.at(names_rva), ordinal_table = image.at(ordinals_rva);
  if (functions && (!eat || !eat->contains(0, uint64_t{functions} * 4))) return "export address table outside its section";
  if (names && (!name_table || !ordinal_table || !name_table->contains(0, uint64_t{names} * 4) ||
                !ordinal_table->contains(0, uint64_t{names} * 2)))
    return "export name tables outside their section";
  std::unordered_map<uint32_t, std::string> name_of;  // EAT index -> name
  for (uint32_t i = 0; i < names; ++i) {
    auto name = image.cstring(name_table->read<uint32_t>(4ull * i).value_or(0));
    if (!name) return fmt::format("export name {} outside every section", i);
    name_of.emplace(ordinal_table->read<uint16_t>(2ull * i).value_or(0), *name);
  }
  for (uint32_t i = 0; i < functions; ++i) {
    uint32_t rva = eat->read<uint32_t>(4ull * i).value_or(0);
    if (rva == 0) continue;  // unused ordinal
    Symbol s;
    auto named = name_of.find(i);
    s.name = out.symbol_strings->keep(named != name_of.end() ? named->second : fmt::format("#{}", uint64_t{base} + i));
    s.defined = true;
    s.type = SymbolType::Func;
    s.version_index = 0xffff;
    if (rva >= dir.RVA() && rva - dir.RVA() < dir.size()) s.version_file = out.symbol_strings->keep(image.cstring(rva).value_or(""));
    out.symbols.push_back(std::move(s));
  }
  return std::nullopt;
}

void read_header(const lp::Binary& pe, Binary& out) {
  out.format = Format::Pe;
  out.bits = pe.type() == lp::PE_TYPE::PE32_PLUS ? 64 : 32;
  out.little_endian = true;
  out.machine = static_cast<uint16_t>(pe.header().machine());
  out.file_type = static_cast<uint16_t>(pe.header().characteristics());
  for (const lp::Section& s : pe.sections())
    out.sections.push_back(Section{s.name(), 0, s.characteristics(), s.virtual_address(), s.pointerto_raw_data(),
                                   s.sizeof_raw_data()});
}

// LIEF returns a partial object for a truncated file; the section table says what must be there.
Problem validate(const lp::Binary& pe, ByteView file) {
  for (const lp::Section& s : pe.sections())
    if (!file.contains(s.pointerto_raw_data(), s.sizeof_raw_data()))
      return fmt::format("section {} extends past end of file", s.name());
  return std::nullopt;
}

Expected<Binary> convert(const lp::Binary& pe, ByteView file, Binary out) {
  if (auto problem = validate(pe, file)) return Error{*problem};
  read_header(pe, out);
  read_imports(pe, out);
  RvaReader image(pe, file);
  if (auto problem = read_delay_imports(pe, image, out)) return Error{*problem};
  if (auto problem = read_exports(pe, image, out)) return Error{*problem};
  return out;
}

}  // namespace

Expected<Binary> parse_pe_with_lief(const std::string& host_path, const std::string& logical_path) {
  auto mapped = MappedFile::open(host_path);
  if (!mapped) return Error{mapped.error()};
  Binary out;
  out.path = logical_path;
  out.file_size = (*mapped)->bytes().size();
  if (auto refusal = pe_refusal((*mapped)->bytes())) return Error{*refusal};
  try {
    std::unique_ptr<lp::Binary> pe = lp::Parser::parse(host_path);
    if (!pe) return Error{"not a PE file"};
    return convert(*pe, (*mapped)->bytes(), std::move(out));
  } catch (const std::exception& e) {
    return Error{fmt::format("LIEF: {}", e.what())};
  }
}

}  // namespace depscan
