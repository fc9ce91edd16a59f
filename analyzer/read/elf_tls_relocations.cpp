// The dynamic relocations that give a thread-local variable a fixed offset from the thread pointer
// (the initial-exec model: R_X86_64_TPOFF64 and its kin). ld.so must place the block they point
// into in static TLS (elf/dl-reloc.c, CHECK_STATIC_TLS); a library loaded by dlopen gets that room
// from a small surplus only. Read only for objects flagged DF_STATIC_TLS, which linkers set when
// such relocations exist.
#include <algorithm>

#include <fmt/format.h>

#include "analyzer/read/elf_dynamic.h"

namespace depscan::elf {
namespace {

inline constexpr uint64_t kDtRela = 7, kDtRelasz = 8, kDtRel = 17, kDtRelsz = 18;
// Reading stops here: more than any real library has, and bounded work for a hostile one.
inline constexpr uint64_t kMaxRelocations = 16u << 20;

Problem read_table(const Image& image, const DynamicTable& dynamic, uint64_t address_tag, uint64_t size_tag,
                   bool with_addend, std::vector<uint32_t>& out) {
  auto address = dynamic.value(address_tag);
  if (!address) return std::nullopt;
  const char* name = with_addend ? "DT_RELA" : "DT_REL";
  uint64_t entry = image.word_size() * (with_addend ? 3 : 2);
  uint64_t count = std::min(dynamic.value(size_tag).value_or(0) / entry, kMaxRelocations);
  if (count == 0) return std::nullopt;
  auto offset = image.file_offset(*address, count * entry);
  if (!offset) return fmt::format("{} ({} entries) not inside any PT_LOAD segment", name, count);
  auto table = image.bytes(*offset, count * entry);
  if (!table) return table.error();
  for (uint64_t at = image.word_size(); at < count * entry; at += entry) {
    uint64_t info = image.word(*table, at);
    uint32_t type = image.is64() ? static_cast<uint32_t>(info) : static_cast<uint32_t>(info & 0xff);
    uint32_t symbol = image.is64() ? static_cast<uint32_t>(info >> 32) : static_cast<uint32_t>(info >> 8);
    if (is_static_tls_relocation(image.machine(), type)) out.push_back(symbol);
  }
  return std::nullopt;
}

}  // namespace

Problem read_static_tls_relocations(const Image& image, const DynamicTable& dynamic, Binary& binary) {
  std::vector<uint32_t>& symbols = binary.static_tls_symbols;
  if (auto problem = read_table(image, dynamic, kDtRela, kDtRelasz, true, symbols)) return problem;
  if (auto problem = read_table(image, dynamic, kDtRel, kDtRelsz, false, symbols)) return problem;
  std::sort(symbols.begin(), symbols.end());
  symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
  return std::nullopt;
}

}  // namespace depscan::elf
