#include "analyzer/read/lief/pe_precheck.h"

#include <fmt/format.h>

#include <vector>

namespace depscan {
namespace {

constexpr size_t kMaxSections = 96;           // the Windows loader's own limit
constexpr uint64_t kRawDataPerFileByte = 4;   // sections may overlap a little, not without bound
constexpr size_t kMaxResourceDepth = 16;      // Windows uses 3 levels: type, name, language
constexpr size_t kMaxResourceEntries = 1 << 16;  // counted as LIEF visits them, shared subtrees again
constexpr uint32_t kSubdirectoryBit = 0x80000000u;

struct Section {
  uint32_t rva = 0, raw_size = 0, raw_offset = 0;
};

struct Headers {
  std::vector<Section> sections;
  uint32_t resource_rva = 0;
};

std::optional<Headers> read_headers(ByteView file) {
  auto pe_at = file.read<uint32_t>(0x3c);
  if (!pe_at || file.read<uint32_t>(*pe_at) != 0x00004550u) return std::nullopt;
  uint64_t coff = *pe_at + 4ull;
  auto count = file.read<uint16_t>(coff + 2);
  auto optional_size = file.read<uint16_t>(coff + 16);
  auto magic = file.read<uint16_t>(coff + 20);
  if (!count || !optional_size || !magic) return std::nullopt;
  Headers out;
  uint64_t directories = coff + 20 + (*magic == 0x20b ? 112 : 96);
  auto directory_count = file.read<uint32_t>(directories - 4);
  if (directory_count && *directory_count > 2) out.resource_rva = file.read<uint32_t>(directories + 2 * 8).value_or(0);
  uint64_t table = coff + 20 + *optional_size;
  for (uint64_t i = 0; i < *count && i <= kMaxSections; ++i) {
    uint64_t at = table + 40 * i;
    auto rva = file.read<uint32_t>(at + 12), raw_size = file.read<uint32_t>(at + 16), raw_offset = file.read<uint32_t>(at + 20);
    if (!rva || !raw_size || !raw_offset) break;
    out.sections.push_back({*rva, *raw_size, *raw_offset});
  }
  return out;
}

// The file offset of the resource directory, through the section that holds its RVA.
std::optional<uint64_t> file_offset(const Headers& headers, uint32_t rva) {
  for (const Section& s : headers.sections)
    if (rva >= s.rva && rva - s.rva < s.raw_size) return uint64_t{s.raw_offset} + (rva - s.rva);
  return std::nullopt;
}

std::optional<std::string> resource_refusal(ByteView file, uint64_t base) {
  struct Pending {
    uint64_t offset;
    size_t depth;
  };
  std::vector<Pending> pending{{0, 1}};
  size_t visited = 0;
  while (!pending.empty()) {
    Pending dir = pending.back();
    pending.pop_back();
    if (dir.depth > kMaxResourceDepth)
      return fmt::format("resource directory nested more than {} levels deep (a loop?)", kMaxResourceDepth);
    auto named = file.read<uint16_t>(base + dir.offset + 12), ids = file.read<uint16_t>(base + dir.offset + 14);
    if (!named || !ids) continue;
    for (uint64_t i = 0; i < uint64_t{*named} + *ids; ++i) {
      if (++visited > kMaxResourceEntries)
        return fmt::format("resource tree has more than {} entries, counting shared subtrees each time", kMaxResourceEntries);
      auto target = file.read<uint32_t>(base + dir.offset + 16 + 8 * i + 4);
      if (!target) break;
      if (*target & kSubdirectoryBit) pending.push_back({*target & ~kSubdirectoryBit, dir.depth + 1});
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> pe_refusal(ByteView file) {
  auto headers = read_headers(file);
  if (!headers) return std::nullopt;
  if (headers->sections.size() > kMaxSections)
    return fmt::format("more than {} sections (the Windows loader's limit)", kMaxSections);
  uint64_t raw_total = 0;
  for (const Section& s : headers->sections) raw_total += s.raw_size;
  if (raw_total / kRawDataPerFileByte > file.size())
    return fmt::format("its sections' raw data add up to {} bytes, more than {} times the file's size", raw_total,
                       kRawDataPerFileByte);
  if (headers->resource_rva == 0) return std::nullopt;
  auto base = file_offset(*headers, headers->resource_rva);
  return base ? resource_refusal(file, *base) : std::nullopt;
}

}  // namespace depscan
