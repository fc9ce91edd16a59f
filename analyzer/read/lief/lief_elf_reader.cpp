// LIEF 0.9 used as /work/shared/reference/lief-0.9.md recommends: COUNT_SECTION with fallbacks,
// dynamic entries up to DT_NULL, versions through index maps (its verdef naming is wrong),
// definedness from shndx, every call inside try/catch, and the result validated, because LIEF
// returns a silently partial object for a damaged file.
#include "analyzer/read/lief/lief_readers.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>

#include <LIEF/ELF.hpp>
#include <fmt/format.h>

#include "analyzer/util/bytes.h"

namespace depscan {
namespace {

namespace le = LIEF::ELF;
using Problem = std::optional<std::string>;

constexpr size_t kLiefMaxSections = 10000;  // Parser.tcc caps the section table there
constexpr uint64_t kDtAuxiliary = 0x7ffffffd, kDtFilter = 0x7fffffff;

std::unique_ptr<le::Binary> parse_counting_symbols(const std::string& path) {
  auto elf = le::Parser::parse(path, le::DYNSYM_COUNT_METHODS::COUNT_SECTION);
  if (!elf || !elf->has(le::DYNAMIC_TAGS::DT_SYMTAB) || elf->dynamic_symbols().size() != 0) return elf;
  // No usable .dynsym section header: the hash tables give the count (or a lower bound).
  for (auto method : {le::DYNSYM_COUNT_METHODS::COUNT_HASH, le::DYNSYM_COUNT_METHODS::COUNT_AUTO}) {
    auto retry = le::Parser::parse(path, method);
    if (retry && retry->dynamic_symbols().size() != 0) return retry;
  }
  return elf;
}

bool inside(uint64_t offset, uint64_t size, uint64_t file_size) {
  auto end = checked_add(offset, size);
  return end && *end <= file_size;
}

// The checks LIEF does not make: a damaged file parses into a partial object without a word.
Problem validate(const le::Binary& elf, uint64_t file_size) {
  const le::Header& h = elf.header();
  bool is64 = h.identity_class() == le::ELF_CLASS::ELFCLASS64;
  if (h.header_size() != (is64 ? 64u : 52u)) return "bad e_ehsize";
  if (h.numberof_segments() &&
      (!inside(h.program_headers_offset(), uint64_t{h.numberof_segments()} * h.program_header_size(), file_size) ||
       elf.segments().size() != h.numberof_segments()))
    return "program header table extends past end of file";
  for (const le::Segment& s : elf.segments())
    if (!inside(s.file_offset(), s.physical_size(), file_size)) return "a segment extends past end of file";
  if (h.numberof_sections()) {
    if (h.numberof_sections() > kLiefMaxSections && elf.sections().size() == kLiefMaxSections)
      return fmt::format("LIEF 0.9 reads at most {} sections; the file has {}", kLiefMaxSections, h.numberof_sections());
    if (!inside(h.section_headers_offset(), uint64_t{h.numberof_sections()} * h.section_header_size(), file_size) ||
        elf.sections().size() != h.numberof_sections())
      return "section header table extends past end of file";
    if (elf.sections()[0].type() != le::ELF_SECTION_TYPES::SHT_NULL) return "section 0 is not SHT_NULL";
    if (h.section_name_table_idx() >= h.numberof_sections()) return "e_shstrndx out of range";
    for (const le::Section& s : elf.sections())
      if (s.type() != le::ELF_SECTION_TYPES::SHT_NOBITS && !inside(s.file_offset(), s.size(), file_size))
        return fmt::format("section {} extends past end of file", s.name());
  }
  if (elf.has(le::SEGMENT_TYPES::PT_DYNAMIC) && elf.dynamic_entries().size() == 0) return "PT_DYNAMIC unreadable";
  return std::nullopt;
}

Problem check_symbol_count(const le::Binary& elf, size_t symbol_count) {
  if (elf.has(le::DYNAMIC_TAGS::DT_SYMTAB) && symbol_count == 0 && elf.has(le::ELF_SECTION_TYPES::SHT_DYNSYM))
    return "DT_SYMTAB present but no dynamic symbol read";
  for (const le::Section& s : elf.sections()) {
    if (s.type() != le::ELF_SECTION_TYPES::SHT_DYNSYM) continue;
    uint64_t entry = elf.header().identity_class() == le::ELF_CLASS::ELFCLASS64 ? 24 : 16;
    if (s.size() / entry != symbol_count)
      return fmt::format("LIEF read {} dynamic symbols where .dynsym holds {}", symbol_count, s.size() / entry);
  }
  return std::nullopt;
}

void read_header(const le::Binary& elf, Binary& out) {
  const le::Header& h = elf.header();
  out.format = Format::Elf;
  out.bits = h.identity_class() == le::ELF_CLASS::ELFCLASS64 ? 64 : 32;
  out.little_endian = h.identity_data() == le::ELF_DATA::ELFDATA2LSB;
  out.machine = static_cast<uint16_t>(h.machine_type());
  out.file_type = static_cast<uint16_t>(h.file_type());
  out.os_abi = static_cast<uint8_t>(h.identity_os_abi());
  if (elf.has_interpreter()) out.interpreter = elf.interpreter();
  for (const le::Segment& s : elf.segments()) {
    if (s.type() == le::SEGMENT_TYPES::PT_GNU_STACK) out.stack_flags = static_cast<uint32_t>(s.flags());
    if (s.type() == le::SEGMENT_TYPES::PT_TLS && s.virtual_size() != 0)
      set_tls_block(out, s.virtual_size(), s.alignment(), s.virtual_address());
    if (s.type() != le::SEGMENT_TYPES::PT_LOAD) continue;
    out.load_congruence = merge_power_of_two(out.load_congruence, s.virtual_address() - s.file_offset());
    out.load_alignment = merge_power_of_two(out.load_alignment, s.alignment());
  }
}

// The reference reading of the x86 ISA marker: the ISA_1_NEEDED item of the only
// NT_GNU_PROPERTY_TYPE_0 note, items padded to the word size. Two property notes: none counts.
void read_x86_isa_needed(const le::Binary& elf, Binary& out) {
  constexpr uint32_t kNtGnuPropertyType0 = 5, kX86Isa1Needed = 0xc0008002;
  if (!is_x86_machine(out.machine) || !elf.has(le::SEGMENT_TYPES::PT_NOTE)) return;  // LIEF also reads .o sections
  const le::Note* property = nullptr;
  for (const le::Note& n : elf.notes()) {
    if (static_cast<uint32_t>(n.type()) != kNtGnuPropertyType0 || n.name().c_str() != std::string("GNU")) continue;
    if (property) return;
    property = &n;
  }
  if (!property) return;
  const std::vector<uint8_t>& desc = property->description();
  ByteView items(desc.data(), desc.size());
  size_t word = out.bits / 8;
  for (size_t at = 0; at + 8 <= desc.size();) {
    uint32_t type = items.read<uint32_t>(at).value_or(0), size = items.read<uint32_t>(at + 4).value_or(0);
    if (type == kX86Isa1Needed && size == 4) out.x86_isa_needed = items.read<uint32_t>(at + 8).value_or(0);
    if (type >= kX86Isa1Needed) return;
    at += 8 + (size + word - 1) / word * word;
  }
}

// LIEF 0.9 keeps only the string-table offset of DT_FILTER and DT_AUXILIARY: the name is read
// from the PT_LOAD segment that holds it (a copy of the segment, made only for a filter).
Problem filtee_name(const le::Binary& elf, uint64_t offset, std::string& name) {
  if (!elf.has(le::DYNAMIC_TAGS::DT_STRTAB)) return "dynamic section names strings but has no DT_STRTAB";
  uint64_t address = elf.get(le::DYNAMIC_TAGS::DT_STRTAB).value() + offset;
  const le::Segment& load = elf.segment_from_virtual_address(address);  // throws not_found: caught by the caller
  std::vector<uint8_t> bytes = load.content();
  uint64_t at = address - load.virtual_address();
  auto end = at < bytes.size() ? std::find(bytes.begin() + static_cast<ptrdiff_t>(at), bytes.end(), 0) : bytes.end();
  if (end == bytes.end()) return "a filter's name is not a terminated string of DT_STRTAB";
  name.assign(bytes.begin() + static_cast<ptrdiff_t>(at), end);
  return std::nullopt;
}

Problem read_filtees(const le::Binary& elf, Binary& out) {
  size_t needed = 0;
  for (const le::DynamicEntry& e : elf.dynamic_entries()) {
    if (e.tag() == le::DYNAMIC_TAGS::DT_NULL) break;
    if (e.tag() == le::DYNAMIC_TAGS::DT_NEEDED) ++needed;
    auto tag = static_cast<uint64_t>(e.tag());  // LIEF 0.9 has no names for these two
    bool filter = tag == kDtFilter, auxiliary = tag == kDtAuxiliary;
    if (!filter && !auxiliary) continue;
    FilteeName filtee{"", auxiliary, needed};
    if (auto problem = filtee_name(elf, e.value(), filtee.name)) return problem;
    out.filtees.push_back(std::move(filtee));
  }
  return std::nullopt;
}

void read_dynamic(const le::Binary& elf, Binary& out) {
  out.has_dynamic = elf.has(le::SEGMENT_TYPES::PT_DYNAMIC);
  for (const le::DynamicEntry& e : elf.dynamic_entries()) {
    switch (e.tag()) {
      case le::DYNAMIC_TAGS::DT_NULL: return;  // LIEF keeps the padding after the terminator
      case le::DYNAMIC_TAGS::DT_NEEDED:
        out.needed.push_back(dynamic_cast<const le::DynamicEntryLibrary&>(e).name());
        break;
      case le::DYNAMIC_TAGS::DT_SONAME: out.soname = dynamic_cast<const le::DynamicSharedObject&>(e).name(); break;
      case le::DYNAMIC_TAGS::DT_RPATH: out.rpath = dynamic_cast<const le::DynamicEntryRpath&>(e).name(); break;
      case le::DYNAMIC_TAGS::DT_RUNPATH: out.runpath = dynamic_cast<const le::DynamicEntryRunPath&>(e).name(); break;
      case le::DYNAMIC_TAGS::DT_FLAGS: out.dt_flags = e.value(); break;
      case le::DYNAMIC_TAGS::DT_FLAGS_1: out.dt_flags_1 = e.value(); break;
      case le::DYNAMIC_TAGS::DT_BIND_NOW: out.has_dt_bind_now = true; break;
      case le::DYNAMIC_TAGS::DT_SYMBOLIC: out.has_dt_symbolic = true; break;
      default: break;
    }
  }
}

// LIEF keeps each relocation's symbol index in info().
void read_static_tls_relocations(const le::Binary& elf, Binary& out) {
  if (!out.static_tls()) return;
  for (const le::Relocation& r : elf.dynamic_relocations())
    if (is_static_tls_relocation(out.machine, r.type())) out.static_tls_symbols.push_back(r.info());
  std::sort(out.static_tls_symbols.begin(), out.static_tls_symbols.end());
  auto& symbols = out.static_tls_symbols;
  symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
}

// The symbols DT_RELA / DT_REL name, the jump slots aside: bound before the program runs.
void mark_load_time_references(const le::Binary& elf, Binary& out) {
  for (const le::Relocation& r : elf.dynamic_relocations()) {
    uint64_t symbol = r.info();
    if (symbol == 0 || symbol > out.symbols.size() || is_jump_slot_relocation(out.machine, r.type())) continue;
    out.symbols[symbol - 1].bound_at_load = true;
    if (is_copy_relocation(out.machine, r.type())) out.symbols[symbol - 1].copy_relocated = true;
  }
}

// The symbols the jump slots of DT_JMPREL name, and the TLS descriptors there (bound at load).
void mark_plt_calls(const le::Binary& elf, Binary& out) {
  if (!elf.has(le::DYNAMIC_TAGS::DT_PLTREL)) return;  // as the mapped reader and ld.so: the entries' kind is unknown
  for (const le::Relocation& r : elf.pltgot_relocations()) {
    uint64_t symbol = r.info();
    if (symbol == 0 || symbol > out.symbols.size()) continue;
    if (is_jump_slot_relocation(out.machine, r.type())) out.symbols[symbol - 1].plt_called = true;
    else if (is_tls_descriptor_relocation(out.machine, r.type())) out.symbols[symbol - 1].bound_at_load = true;
  }
}

void read_versions(const le::Binary& elf, Binary& out) {
  for (const le::SymbolVersionRequirement& r : elf.symbols_version_requirement())
    for (const le::SymbolVersionAuxRequirement& a : r.auxiliary_symbols())
      out.version_needs.push_back(VersionNeed{r.name(), a.name(), a.other(), (a.flags() & 0x2) != 0});
  for (const le::SymbolVersionDefinition& d : elf.symbols_version_definition()) {
    VersionDef def;
    def.index = d.ndx();
    def.base = d.flags() & 0x1;
    bool first = true;
    for (const le::SymbolVersionAux& aux : d.symbols_aux()) {
      if (first) def.name = aux.name();
      else def.parents.push_back(aux.name());
      first = false;
    }
    out.version_defs.push_back(std::move(def));
  }
}

SymbolBinding binding_of(le::SYMBOL_BINDINGS b) {
  auto raw = static_cast<uint8_t>(b);
  return raw <= 2 || raw == 10 ? static_cast<SymbolBinding>(raw) : SymbolBinding::Other;
}

SymbolType type_of(le::ELF_SYMBOL_TYPES t) {
  auto raw = static_cast<uint8_t>(t);
  return raw <= 6 || raw == 10 ? static_cast<SymbolType>(raw) : SymbolType::Other;
}

size_t read_symbols(const le::Binary& elf, Binary& out) {
  StringArena& arena = *out.symbol_strings;
  struct Named {
    std::string_view version, file;
  };
  std::map<uint16_t, Named> needs, defs;  // version index -> names kept in the arena
  for (const VersionNeed& n : out.version_needs) needs[n.index & 0x7fff] = {arena.keep(n.version), arena.keep(n.file)};
  for (const VersionDef& d : out.version_defs) defs[d.index & 0x7fff] = {arena.keep(d.name), {}};
  size_t index = 0;
  for (const le::Symbol& s : elf.dynamic_symbols()) {  // iterated once: operator[] is O(n)
    if (index++ == 0) continue;                         // the null symbol
    Symbol symbol;
    symbol.name = arena.keep(s.name());
    symbol.defined = s.shndx() != 0;
    symbol.no_value = s.value() == 0;
    symbol.absolute = s.shndx() == 0xfff1;  // SHN_ABS
    symbol.binding = binding_of(s.binding());
    symbol.type = type_of(s.type());
    symbol.visibility = s.other() & 3;
    symbol.size = static_cast<uint32_t>(std::min<uint64_t>(s.size(), UINT32_MAX));
    symbol.version_index = kNoVersym;
    if (s.has_version()) {
      uint16_t raw = s.symbol_version().value();
      symbol.hidden = raw & 0x8000;
      symbol.version_index = raw & 0x7fff;
      auto def = symbol.defined ? defs.find(symbol.version_index) : defs.end();
      auto need = needs.find(symbol.version_index);  // a defined one: a copy relocation's
      if (symbol.version_index >= 2 && def != defs.end()) {
        symbol.version = def->second.version;
      } else if (symbol.version_index >= 2 && need != needs.end()) {
        symbol.version = need->second.version;
        symbol.version_file = need->second.file;
      }
    }
    out.symbols.push_back(std::move(symbol));
  }
  return index;
}

void read_sections(const le::Binary& elf, Binary& out) {
  for (const le::Section& s : elf.sections())
    out.sections.push_back(Section{s.name(), static_cast<uint32_t>(s.type()), s.flags(), s.virtual_address(),
                                   s.file_offset(), s.size()});
}

Expected<Binary> convert(const le::Binary& elf, uint64_t file_size, Binary out) {
  if (auto problem = validate(elf, file_size)) return Error{*problem};
  read_header(elf, out);
  read_x86_isa_needed(elf, out);
  read_dynamic(elf, out);
  if (auto problem = read_filtees(elf, out)) return Error{*problem};
  read_versions(elf, out);
  read_static_tls_relocations(elf, out);
  size_t symbol_count = read_symbols(elf, out);
  if (auto problem = check_symbol_count(elf, symbol_count)) return Error{*problem};
  mark_load_time_references(elf, out);
  mark_plt_calls(elf, out);
  read_sections(elf, out);
  return out;
}

}  // namespace

Expected<Binary> parse_elf_with_lief(const std::string& host_path, const std::string& logical_path) {
  struct stat info {};
  if (::stat(host_path.c_str(), &info) != 0) return Error{"cannot stat the file"};
  if (!S_ISREG(info.st_mode)) return Error{"not a regular file"};  // LIEF blocks forever on a FIFO
  if (info.st_size < 64) return Error{"file too small for an ELF header"};
  Binary out;
  out.path = logical_path;
  out.file_size = static_cast<uint64_t>(info.st_size);
  try {
    auto elf = parse_counting_symbols(host_path);
    if (!elf) return Error{"not an ELF file"};
    return convert(*elf, out.file_size, std::move(out));
  } catch (const std::exception& e) {
    return Error{fmt::format("LIEF: {}", e.what())};
  }
}

}  // namespace depscan
