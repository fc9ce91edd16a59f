// The dynamic section of an ELF image and the pieces read through it: the dynamic string table,
// version needs and definitions, and the dynamic symbols. Each reader returns a one-line
// problem instead of reading anything outside the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model.h"
#include "analyzer/read/elf_image.h"

namespace depscan::elf {

inline constexpr uint64_t kDtNull = 0, kDtNeeded = 1, kDtHash = 4, kDtStrtab = 5, kDtSymtab = 6,
                          kDtStrsz = 10, kDtSoname = 14, kDtRpath = 15, kDtBindNow = 24,
                          kDtSymbolic = 16, kDtRunpath = 29, kDtFlags = 30, kDtGnuHash = 0x6ffffef5,
                          kDtVersym = 0x6ffffff0, kDtFlags1 = 0x6ffffffb, kDtVerdef = 0x6ffffffc,
                          kDtVerdefnum = 0x6ffffffd, kDtVerneed = 0x6ffffffe, kDtVerneednum = 0x6fffffff,
                          kDtAuxiliary = 0x7ffffffd, kDtFilter = 0x7fffffff;

struct DynamicEntry {
  uint64_t tag = 0, value = 0;
};

// The entries of PT_DYNAMIC up to DT_NULL, and the last value of each tag the reader uses.
struct DynamicTable {
  std::vector<DynamicEntry> entries;
  std::optional<uint64_t> value(uint64_t tag) const;
};

using Problem = std::optional<std::string>;

// DT_STRTAB limited to DT_STRSZ (or to the end of its segment when DT_STRSZ is absent), read
// string by string unless preloaded.
class StringTable {
 public:
  static Problem locate(const Image& image, const DynamicTable& dynamic, StringTable& out);
  // The NUL-terminated string at offset, or a problem naming what is wrong with it.
  Problem get(uint64_t offset, std::string_view what, std::string& out) const;
  // The same, as a view valid while the source lives (into the preloaded table when there is one).
  Problem view(uint64_t offset, std::string_view what, std::string_view& out) const;
  // The whole table, when preload() read it.
  std::optional<ByteView> loaded() const { return loaded_; }
  bool present() const { return present_; }
  // Reads the whole table at once, before asking for most of its strings (the symbol names).
  Problem preload() const;

 private:
  SourceRange range_;
  mutable std::optional<ByteView> loaded_;  // the whole table, once preloaded
  bool present_ = false;
};

Problem read_version_needs(const Image& image, const DynamicTable& dynamic, const StringTable& strings,
                           std::vector<VersionNeed>& out);
Problem read_version_defs(const Image& image, const DynamicTable& dynamic, const StringTable& strings,
                          std::vector<VersionDef>& out);
// The dynamic symbols (0: the object's own block) that thread-pointer-relative relocations name,
// sorted and unique, into Binary::static_tls_symbols.
Problem read_static_tls_relocations(const Image& image, const DynamicTable& dynamic, Binary& binary);
// Needs the symbols already read: marks Symbol::bound_at_load on those the relocations of DT_RELA /
// DT_REL name (all but the jump slots, which lazy binding leaves to the first call).
Problem mark_load_time_references(const Image& image, const DynamicTable& dynamic, Binary& binary);
// Needs the symbols already read: marks Symbol::plt_called on those the jump slots of DT_JMPREL name,
// and Symbol::bound_at_load on those its TLS descriptors name.
Problem mark_plt_calls(const Image& image, const DynamicTable& dynamic, Binary& binary);
// Needs the version tables already read: symbols name the version their versym index selects.
Problem read_dynamic_symbols(const Image& image, const DynamicTable& dynamic, const StringTable& strings,
                             Binary& binary);

}  // namespace depscan::elf
