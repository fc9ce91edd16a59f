// DT_VERNEED (.gnu.version_r) and DT_VERDEF (.gnu.version_d): linked lists of fixed-size
// records whose "next" fields are byte offsets. Every record must lie inside the segment holding
// the list, and the walk is capped by what that segment can hold, so no chain can run forever.
#include <fmt/format.h>

#include "analyzer/read/elf_dynamic.h"

namespace depscan::elf {
namespace {

constexpr uint64_t kVerneedSize = 16, kVernauxSize = 16, kVerdefSize = 20, kVerdauxSize = 8;
constexpr uint16_t kVerFlagBase = 0x1, kVerFlagWeak = 0x2;

struct Chain {
  const char* name;         // "verneed", "verdef"
  uint64_t count_tag;       // DT_VERNEEDNUM, DT_VERDEFNUM
  const char* count_name;
  uint64_t entry_size;
};

constexpr Chain kVerneed{"verneed", kDtVerneednum, "DT_VERNEEDNUM", kVerneedSize};
constexpr Chain kVerdef{"verdef", kDtVerdefnum, "DT_VERDEFNUM", kVerdefSize};

// Walks a version list: calls visit(record offset) for each record; visit returns the record's
// "next" field (0 ends the list) or a problem.
template <class Visit>
Problem walk_chain(const Chain& chain, const SourceRange& list, const DynamicTable& dynamic, Visit visit) {
  uint64_t cap = list.size() / chain.entry_size;
  auto expected = dynamic.value(chain.count_tag);
  if (expected && *expected > cap)
    return fmt::format("{} {} exceeds what its segment can hold ({})", chain.count_name, *expected, cap);
  uint64_t limit = expected.value_or(cap);
  uint64_t offset = 0;
  for (uint64_t done = 0; done < limit; ++done) {
    if (!list.contains(offset, chain.entry_size))
      return fmt::format("{} entry {} lies outside its segment", chain.name, done);
    uint32_t next = 0;
    if (auto problem = visit(offset, next)) return problem;
    if (next == 0) {
      if (expected && done + 1 < *expected)
        return fmt::format("{} chain ends after {} of {} {} entries", chain.name, done + 1, *expected, chain.count_name);
      return std::nullopt;
    }
    offset += next;  // offset < list size and next < 2^32: no wrap
  }
  if (!expected) return fmt::format("{} chain loops", chain.name);
  return std::nullopt;
}

// The auxiliary records of one version record: `count` of them, linked by their "next" field at
// next_field, starting at first.
template <class Visit>
Problem walk_aux(const SourceRange& list, const Image& image, const char* name, uint64_t first, uint16_t count,
                 uint64_t entry_size, uint64_t next_field, Visit visit) {
  uint64_t offset = first;
  for (uint16_t i = 0; i < count; ++i) {
    if (!list.contains(offset, entry_size)) return fmt::format("{} entry {} lies outside its segment", name, i);
    if (auto problem = visit(offset)) return problem;
    uint32_t next = image.u32(list, offset + next_field);
    if (next == 0 && i + 1 < count) return fmt::format("{} chain ends after {} of {} entries", name, i + 1, count);
    offset += next;
  }
  return std::nullopt;
}

Problem locate_list(const Image& image, const DynamicTable& dynamic, uint64_t tag, const char* tag_name,
                    SourceRange& list, bool& present) {
  auto address = dynamic.value(tag);
  present = address.has_value();
  if (!address) return std::nullopt;
  auto range = image.range_from_address(*address);
  if (!range) return fmt::format("{} not inside any PT_LOAD segment", tag_name);
  list = *range;
  return std::nullopt;
}

}  // namespace

Problem read_version_needs(const Image& image, const DynamicTable& dynamic, const StringTable& strings,
                           std::vector<VersionNeed>& out) {
  SourceRange list;
  bool present = false;
  if (auto problem = locate_list(image, dynamic, kDtVerneed, "DT_VERNEED", list, present)) return problem;
  if (!present) return std::nullopt;
  std::string file;
  return walk_chain(kVerneed, list, dynamic, [&](uint64_t offset, uint32_t& next) -> Problem {
    if (auto problem = strings.get(image.u32(list, offset + 4), "vn_file", file)) return problem;
    uint16_t count = image.u16(list, offset + 2);
    auto first = checked_add(offset, image.u32(list, offset + 8));
    next = image.u32(list, offset + 12);
    return walk_aux(list, image, "vernaux", *first, count, kVernauxSize, 12, [&](uint64_t aux) -> Problem {
      VersionNeed need;
      need.file = file;
      need.weak = image.u16(list, aux + 4) & kVerFlagWeak;
      need.index = image.u16(list, aux + 6);
      if (auto problem = strings.get(image.u32(list, aux + 8), "vna_name", need.version)) return problem;
      out.push_back(std::move(need));
      return std::nullopt;
    });
  });
}

Problem read_version_defs(const Image& image, const DynamicTable& dynamic, const StringTable& strings,
                          std::vector<VersionDef>& out) {
  SourceRange list;
  bool present = false;
  if (auto problem = locate_list(image, dynamic, kDtVerdef, "DT_VERDEF", list, present)) return problem;
  if (!present) return std::nullopt;
  return walk_chain(kVerdef, list, dynamic, [&](uint64_t offset, uint32_t& next) -> Problem {
    VersionDef def;
    def.base = image.u16(list, offset + 2) & kVerFlagBase;
    def.index = image.u16(list, offset + 4);
    uint16_t count = image.u16(list, offset + 6);
    auto first = checked_add(offset, image.u32(list, offset + 12));
    next = image.u32(list, offset + 16);
    std::string name;
    auto problem = walk_aux(list, image, "verdaux", *first, count, kVerdauxSize, 4, [&](uint64_t aux) -> Problem {
      if (auto bad = strings.get(image.u32(list, aux), "vda_name", name)) return bad;
      if (aux == *first) def.name = name;
      else def.parents.push_back(name);
      return std::nullopt;
    });
    if (problem) return problem;
    out.push_back(std::move(def));
    return std::nullopt;
  });
}

}  // namespace depscan::elf
