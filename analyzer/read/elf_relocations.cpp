// The dynamic relocations of DT_RELA / DT_REL, and the PLT's of DT_JMPREL, read for three questions:
// - which symbols the loader binds before the program runs, lazy binding or not: GLOB_DAT,
//   R_X86_64_64 and their kin come from function pointers, vtables and -fno-plt calls, and a
//   missing symbol behind one fails at load ("symbol lookup error"), not when first called;
//   COPY names a variable the program keeps its own copy of, filled from the library that
//   defines it (the program's .dynsym lists it as defined);
// - which give a thread-local variable a fixed offset from the thread pointer (the initial-exec
//   model: R_X86_64_TPOFF64 and its kin). ld.so must place the block they point into in static TLS
//   (elf/dl-reloc.c, CHECK_STATIC_TLS); a library loaded by dlopen gets that room from a small
//   surplus only. Read only for objects flagged DF_STATIC_TLS, which linkers set when such
//   relocations exist.
// - which calls go through the PLT (DT_JMPREL): for a symbol the object defines itself, its own
//   call that the loader binds through the lookup scope, where an object loaded earlier may take it.
//   The TLS descriptors that share DT_JMPREL with them (-mtls-dialect=gnu2) are bound at load
//   (glibc 2.33 and later; before, x86's lazily, which makes the same binding).
// The RELATIVE relocations that DT_RELACOUNT / DT_RELCOUNT count at the start of a table name no
// symbol (glibc applies them as relative whatever their type) and are skipped unread.
#include <algorithm>

#include <fmt/format.h>

#include "analyzer/read/elf_dynamic.h"

namespace depscan::elf {
namespace {

inline constexpr uint64_t kDtRela = 7, kDtRelasz = 8, kDtRel = 17, kDtRelsz = 18;
inline constexpr uint64_t kDtRelacount = 0x6ffffff9, kDtRelcount = 0x6ffffffa;
inline constexpr uint64_t kDtPltrelsz = 2, kDtPltrel = 20, kDtJmprel = 23;
inline constexpr uint64_t kNoCount = 0;  // a tag no table has: DT_JMPREL's entries are all named
// Reading stops here: more than any real library has, and bounded work for a hostile one.
inline constexpr uint64_t kMaxRelocations = 16u << 20;

struct TableTags {
  uint64_t address, size, relative_count;
  bool with_addend;
};
constexpr TableTags kRela{kDtRela, kDtRelasz, kDtRelacount, true}, kRel{kDtRel, kDtRelsz, kDtRelcount, false};

// Calls visit(type, symbol index) for each relocation of the table after its relative ones.
template <typename Visit>
Problem for_each_relocation(const Image& image, const DynamicTable& dynamic, const TableTags& tags, const Visit& visit) {
  auto address = dynamic.value(tags.address);
  if (!address) return std::nullopt;
  const char* name = tags.address == kDtJmprel ? "DT_JMPREL" : tags.with_addend ? "DT_RELA" : "DT_REL";
  uint64_t entry = image.word_size() * (tags.with_addend ? 3 : 2);
  uint64_t declared = dynamic.value(tags.size).value_or(0) / entry, count = std::min(declared, kMaxRelocations);
  uint64_t relative = tags.relative_count == kNoCount ? 0 : std::min(dynamic.value(tags.relative_count).value_or(0), count);
  if (count == relative) return std::nullopt;
  auto offset = image.file_offset(*address, count * entry);
  if (!offset) return fmt::format("{} ({} entries) not inside any PT_LOAD segment", name, declared);
  auto table = image.bytes(*offset + relative * entry, (count - relative) * entry);
  if (!table) return table.error();
  for (uint64_t at = image.word_size(); at < (count - relative) * entry; at += entry) {
    uint64_t info = image.word(*table, at);
    uint32_t type = image.is64() ? static_cast<uint32_t>(info) : static_cast<uint32_t>(info & 0xff);
    uint32_t symbol = image.is64() ? static_cast<uint32_t>(info >> 32) : static_cast<uint32_t>(info >> 8);
    visit(type, symbol);
  }
  return std::nullopt;
}

template <typename Visit>
Problem for_each_relocation(const Image& image, const DynamicTable& dynamic, const Visit& visit) {
  if (auto problem = for_each_relocation(image, dynamic, kRela, visit)) return problem;
  return for_each_relocation(image, dynamic, kRel, visit);
}

}  // namespace

Problem read_static_tls_relocations(const Image& image, const DynamicTable& dynamic, Binary& binary) {
  std::vector<uint32_t>& symbols = binary.static_tls_symbols;
  auto problem = for_each_relocation(image, dynamic, [&](uint32_t type, uint32_t symbol) {
    if (is_static_tls_relocation(image.machine(), type)) symbols.push_back(symbol);
  });
  if (problem) return problem;
  std::sort(symbols.begin(), symbols.end());
  symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
  return std::nullopt;
}

Problem mark_load_time_references(const Image& image, const DynamicTable& dynamic, Binary& binary) {
  return for_each_relocation(image, dynamic, [&](uint32_t type, uint32_t symbol) {
    if (symbol == 0 || symbol > binary.symbols.size() || is_jump_slot_relocation(image.machine(), type)) return;
    Symbol& named = binary.symbols[symbol - 1];  // entry 0, the null symbol, is not stored
    named.bound_at_load = true;
    named.copy_relocated = named.copy_relocated || is_copy_relocation(image.machine(), type);
  });
}

Problem mark_plt_calls(const Image& image, const DynamicTable& dynamic, Binary& binary) {
  auto kind = dynamic.value(kDtPltrel);  // the entries' kind, which the ELF ABI requires beside DT_JMPREL
  if (!kind || (*kind != kDtRela && *kind != kDtRel)) return std::nullopt;
  TableTags plt{kDtJmprel, kDtPltrelsz, kNoCount, *kind == kDtRela};
  return for_each_relocation(image, dynamic, plt, [&](uint32_t type, uint32_t symbol) {
    if (symbol == 0 || symbol > binary.symbols.size()) return;
    Symbol& named = binary.symbols[symbol - 1];
    if (is_jump_slot_relocation(image.machine(), type)) named.plt_called = true;
    else if (is_tls_descriptor_relocation(image.machine(), type)) named.bound_at_load = true;
  });
}

}  // namespace depscan::elf
