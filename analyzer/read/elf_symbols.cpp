// The dynamic symbol table (DT_SYMTAB) with its versions (DT_VERSYM). The table has no size in
// the dynamic section: it comes from the .dynsym section header when there are section headers,
// else from DT_HASH's nchain or from walking the DT_GNU_HASH chains.
#include <algorithm>

#include <fmt/format.h>

#include "analyzer/read/elf_dynamic.h"

namespace depscan::elf {
namespace {

constexpr uint16_t kVersymHidden = 0x8000, kVersymIndexMask = 0x7fff;
constexpr uint16_t kShnAbs = 0xfff1;

Problem count_from_sysv_hash(const Image& image, uint64_t address, uint64_t& count) {
  auto range = image.range_from_address(address);
  if (!range || !range->contains(0, 8)) return "DT_HASH not inside any PT_LOAD segment";
  count = image.u32(*range, 4);  // nchain
  return std::nullopt;
}

// The highest symbol index any bucket reaches, followed along its chain to the end marker.
Problem count_from_gnu_hash(const Image& image, uint64_t address, uint64_t& count) {
  auto range = image.range_from_address(address);
  if (!range || !range->contains(0, 16)) return "DT_GNU_HASH not inside any PT_LOAD segment";
  uint32_t buckets = image.u32(*range, 0), symoffset = image.u32(*range, 4), bloom = image.u32(*range, 8);
  auto bloom_bytes = checked_mul(bloom, image.word_size());
  auto bucket_start = checked_add(16, *bloom_bytes);
  if (!range->contains(*bucket_start, uint64_t{buckets} * 4)) return "DT_GNU_HASH buckets run past their segment";
  auto bucket_bytes = range->bytes(*bucket_start, uint64_t{buckets} * 4);
  if (!bucket_bytes) return "cannot read the DT_GNU_HASH buckets";
  uint32_t last = 0;
  for (uint32_t i = 0; i < buckets; ++i) last = std::max(last, image.u32(*bucket_bytes, 4 * uint64_t{i}));
  if (last < symoffset) {
    count = symoffset;
    return std::nullopt;
  }
  uint64_t chains = *bucket_start + uint64_t{buckets} * 4;
  for (uint64_t index = last;; ++index) {
    uint64_t at = chains + (index - symoffset) * 4;
    if (!range->contains(at, 4)) return "DT_GNU_HASH chain runs past its segment";
    if (image.u32(*range, at) & 1) {
      count = index + 1;
      return std::nullopt;
    }
  }
}

Problem symbol_count(const Image& image, const DynamicTable& dynamic, uint64_t& count) {
  if (!image.sections().empty()) {
    for (const SectionHeader& s : image.sections())
      if (s.type == kShtDynsym) {
        count = s.size / image.symbol_size();
        return std::nullopt;
      }
  }
  if (auto hash = dynamic.value(kDtHash)) return count_from_sysv_hash(image, *hash, count);
  if (auto gnu_hash = dynamic.value(kDtGnuHash)) return count_from_gnu_hash(image, *gnu_hash, count);
  count = 0;  // nothing says how many symbols there are
  return std::nullopt;
}

SymbolBinding binding_of(uint8_t info) {
  uint8_t b = info >> 4;
  return b <= 2 || b == 10 ? static_cast<SymbolBinding>(b) : SymbolBinding::Other;
}

SymbolType type_of(uint8_t info) {
  uint8_t t = info & 0xf;
  return t <= 6 || t == 10 ? static_cast<SymbolType>(t) : SymbolType::Other;
}

// Version index -> the version name (and the file that should provide it) a symbol with that
// index is versioned as, kept in the binary's string arena.
struct VersionNames {
  struct Named {
    std::string_view version, file;
  };
  std::vector<std::optional<Named>> needed, defined;

  explicit VersionNames(const Binary& binary) {
    StringArena& arena = *binary.symbol_strings;
    for (const VersionNeed& n : binary.version_needs)
      place(needed, n.index & kVersymIndexMask, Named{arena.keep(n.version), arena.keep(n.file)});
    for (const VersionDef& d : binary.version_defs) place(defined, d.index & kVersymIndexMask, Named{arena.keep(d.name), {}});
  }
  static void place(std::vector<std::optional<Named>>& table, uint16_t index, Named value) {
    if (table.size() <= index) table.resize(index + 1u);
    table[index] = value;
  }
  static const Named* find(const std::vector<std::optional<Named>>& table, uint16_t index) {
    return index < table.size() && table[index] ? &*table[index] : nullptr;
  }
};

void apply_version(uint16_t versym, const VersionNames& names, Symbol& symbol) {
  symbol.hidden = versym & kVersymHidden;
  symbol.version_index = versym & kVersymIndexMask;
  if (symbol.version_index < 2) return;  // *local* or *global*
  // A defined symbol with a DT_VERNEED index is a copy relocation's (stdout@GLIBC_2.2.5 in a program):
  // ld.so looks its value up by that version.
  const auto* def = symbol.defined ? VersionNames::find(names.defined, symbol.version_index) : nullptr;
  if (def) {
    symbol.version = def->version;
  } else if (const auto* need = VersionNames::find(names.needed, symbol.version_index)) {
    symbol.version = need->version;
    symbol.version_file = need->file;
  }
}

// Symbol names as views into one copy of the string table in the binary's arena (a huge table
// a hostile file claims is not preloaded: its names are kept one by one).
class SymbolNames {
 public:
  SymbolNames(const StringTable& strings, StringArena& arena) : strings_(strings), arena_(arena) {
    if (auto table = strings.loaded()) {
      start_ = table->data();
      copy_ = arena.keep(table->as_chars());
    }
  }
  Problem get(uint64_t offset, std::string_view& out) const {
    std::string_view found;
    if (auto problem = strings_.view(offset, "symbol name", found)) return problem;
    out = start_ ? copy_.substr(static_cast<size_t>(reinterpret_cast<const uint8_t*>(found.data()) - start_), found.size())
                 : arena_.keep(found);
    return std::nullopt;
  }

 private:
  const StringTable& strings_;
  StringArena& arena_;
  const uint8_t* start_ = nullptr;  // the preloaded table, which copy_ copies
  std::string_view copy_;
};

}  // namespace

Problem read_dynamic_symbols(const Image& image, const DynamicTable& dynamic, const StringTable& strings,
                             Binary& binary) {
  auto address = dynamic.value(kDtSymtab);
  if (!address) return std::nullopt;
  uint64_t count = 0;
  if (auto problem = symbol_count(image, dynamic, count)) return problem;
  if (count == 0) return std::nullopt;
  auto table_size = checked_mul(count, image.symbol_size());
  auto table_offset = table_size ? image.file_offset(*address, *table_size) : std::nullopt;
  if (!table_offset) return fmt::format("dynamic symbol table ({} entries) not inside any PT_LOAD segment", count);
  auto table = image.bytes(*table_offset, *table_size);
  if (!table) return table.error();

  ByteView versyms;
  auto versym_address = dynamic.value(kDtVersym);
  if (versym_address) {
    auto offset = image.file_offset(*versym_address, count * 2);
    if (!offset) return fmt::format("DT_VERSYM ({} entries) not inside any PT_LOAD segment", count);
    auto read = image.bytes(*offset, count * 2);
    if (!read) return read.error();
    versyms = *read;
  }
  if (auto problem = strings.preload()) return problem;

  VersionNames names(binary);
  SymbolNames symbol_names(strings, *binary.symbol_strings);
  binary.symbols.reserve(count - 1);
  uint64_t size = image.symbol_size();
  for (uint64_t i = 1; i < count; ++i) {  // entry 0 is the null symbol
    uint64_t at = i * size;
    Symbol symbol;
    uint8_t info = table->read<uint8_t>(at + (image.is64() ? 4 : 12)).value_or(0);
    uint8_t other = table->read<uint8_t>(at + (image.is64() ? 5 : 13)).value_or(0);
    uint16_t shndx = image.u16(*table, at + (image.is64() ? 6 : 14));
    symbol.defined = shndx != 0;
    symbol.no_value = image.word(*table, at + (image.is64() ? 8 : 4)) == 0;
    symbol.size = static_cast<uint32_t>(std::min<uint64_t>(image.word(*table, at + (image.is64() ? 16 : 8)), UINT32_MAX));
    symbol.absolute = shndx == kShnAbs;
    symbol.binding = binding_of(info);
    symbol.type = type_of(info);
    symbol.visibility = other & 3;
    if (auto problem = symbol_names.get(image.u32(*table, at), symbol.name))
      return fmt::format("dynamic symbol {}: {}", i, *problem);
    if (versym_address) apply_version(image.u16(versyms, i * 2), names, symbol);
    else symbol.version_index = kNoVersym;
    binary.symbols.push_back(std::move(symbol));
  }
  return std::nullopt;
}

}  // namespace depscan::elf
