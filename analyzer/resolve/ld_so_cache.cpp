#include "analyzer/resolve/ld_so_cache.h"

#include <cstring>

#include "analyzer/resolve/hwcaps.h"

namespace depscan {
namespace {

constexpr std::string_view kOldMagic = "ld.so-1.7.0";
constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";
constexpr uint64_t kOldHeaderSize = 16, kOldEntrySize = 12;
constexpr uint64_t kNewHeaderSize = 48, kNewEntrySize = 24;
constexpr uint32_t kExtensionMagic = static_cast<uint32_t>(-358342284);
constexpr uint32_t kExtensionTagHwcaps = 1;
constexpr size_t kMaxStringLength = 4096;  // PATH_MAX: an unterminated string is not read to the end of the file
constexpr uint64_t kIsaLevelMask = (1u << 10) - 1;
constexpr uint64_t kHwcapTlsMask = 1ull << 63;
constexpr uint64_t kX86PlatformMask = 0xfull << 48;  // four platforms from bit 48
constexpr uint8_t kEndianMask = 3, kEndianInvalid = 1, kEndianLittle = 2, kEndianBig = 3;
constexpr uint16_t kEm386 = 3, kEmX8664 = 62, kEmAarch64 = 183, kEmArm = 40, kEmPpc64 = 21, kEmS390 = 22,
                   kEmRiscv = 243;

bool starts_with(ByteView bytes, std::string_view magic) {
  return bytes.size() >= magic.size() && std::memcmp(bytes.data(), magic.data(), magic.size()) == 0;
}

// dl_cache_hwcap_extension: only the extension bit set in the upper half, ISA bits aside.
bool is_hwcap_extension(uint64_t hwcap) {
  return ((hwcap >> 32) & ~kIsaLevelMask) == (kCacheHwcapExtension >> 32);
}

// cache_extension_load: the glibc-hwcaps section (uint32 string offsets from the file start).
std::vector<std::string_view> read_hwcaps_extension(ByteView file, uint32_t extension_offset, bool le) {
  std::vector<std::string_view> names;
  if (extension_offset == 0 || extension_offset % 4 != 0) return names;
  auto magic = file.read<uint32_t>(extension_offset, le);
  auto count = file.read<uint32_t>(static_cast<uint64_t>(extension_offset) + 4, le);
  if (!magic || !count || *magic != kExtensionMagic) return names;
  std::optional<std::pair<uint32_t, uint32_t>> hwcaps;  // offset and size of the last hwcaps section, which wins
  for (uint32_t i = 0; i < *count; ++i) {
    uint64_t at = static_cast<uint64_t>(extension_offset) + 8 + static_cast<uint64_t>(i) * 16;
    auto tag = file.read<uint32_t>(at, le);
    auto offset = file.read<uint32_t>(at + 8, le);
    auto size = file.read<uint32_t>(at + 12, le);
    if (!tag || !offset || !size) return {};
    if (!file.contains(*offset, *size)) return {};
    if (*tag != kExtensionTagHwcaps || *size == 0 || *size % 4 != 0 || *offset % 4 != 0) continue;
    hwcaps.emplace(*offset, *size);
  }
  if (!hwcaps) return names;
  for (uint32_t k = 0; k < hwcaps->second / 4; ++k) {
    auto index = file.read<uint32_t>(static_cast<uint64_t>(hwcaps->first) + 4ull * k, le);
    auto name = index ? file.cstring(*index, kMaxStringLength) : std::nullopt;
    names.push_back(name.value_or(std::string_view()));
  }
  return names;
}

// The byte order of a table of `count_at`'s entry count: as the endian bits of its new-format
// flags say (glibc 2.33 and later write them), else the order whose entry count fits in the file;
// nullopt for bits marked invalid.
std::optional<bool> table_little_endian(ByteView table, uint64_t count_at, uint64_t entry_size,
                                        std::optional<uint8_t> flags) {
  uint8_t endian = flags ? *flags & kEndianMask : 0;
  if (endian == kEndianLittle) return true;
  if (endian == kEndianBig) return false;
  if (endian == kEndianInvalid) return std::nullopt;
  auto count = table.read<uint32_t>(count_at);
  return !count || *count <= table.size() / entry_size;
}

Expected<LdSoCache> fail(const char* why) { return Error{why}; }

}  // namespace

int cache_libcmp(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  auto at = [](std::string_view s, size_t k) { return k < s.size() ? s[k] : '\0'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (at(a, i) != '\0') {
    char c1 = at(a, i), c2 = at(b, j);
    if (digit(c1)) {
      if (!digit(c2)) return 1;
      uint32_t v1 = 0, v2 = 0;
      while (digit(at(a, i))) v1 = v1 * 10u + static_cast<uint32_t>(at(a, i++) - '0');
      while (digit(at(b, j))) v2 = v2 * 10u + static_cast<uint32_t>(at(b, j++) - '0');
      if (v1 != v2) return static_cast<int32_t>(v1) < static_cast<int32_t>(v2) ? -1 : 1;
    } else if (digit(c2)) {
      return -1;
    } else if (c1 != c2) {
      return static_cast<unsigned char>(c1) - static_cast<unsigned char>(c2);
    } else {
      ++i;
      ++j;
    }
  }
  return -static_cast<unsigned char>(at(b, j));
}

std::string cache_flags_name(int32_t flags) {
  std::string type;
  switch (flags & 0xff) {
    case 0: type = "libc4"; break;
    case kCacheFlagElf: type = "ELF"; break;
    case 2: type = "libc5"; break;
    case kCacheFlagElfLibc6: type = "libc6"; break;
    default: type = "unknown"; break;
  }
  switch (flags & 0xff00) {
    case 0: break;
    case kCacheFlagX8664Lib64: type += ",x86-64"; break;
    case kCacheFlagX8664LibX32: type += ",x32"; break;
    case kCacheFlagAarch64Lib64: type += ",AArch64"; break;
    case kCacheFlagS390Lib64: type += ",64bit"; break;
    case kCacheFlagPowerpcLib64: type += ",64bit"; break;
    case kCacheFlagArmLibHf: type += ",hard-float"; break;
    case kCacheFlagRiscvDoubleFloat: type += ",double-float"; break;
    default: type += ",unknown arch"; break;
  }
  return type;
}

CacheQuery cache_query_for(int bits, uint16_t machine, bool little_endian) {
  CacheQuery q;
  q.little_endian = little_endian;
  if (machine == kEmX8664 && bits == 64) {
    q.default_id = kCacheFlagElfLibc6 | kCacheFlagX8664Lib64;
  } else if (machine == kEmX8664 && bits == 32) {
    q.default_id = kCacheFlagElfLibc6 | kCacheFlagX8664LibX32;
  } else if (machine == kEmAarch64) {
    q.default_id = kCacheFlagElfLibc6 | kCacheFlagAarch64Lib64;
  } else if (machine == kEmPpc64) {
    q.default_id = kCacheFlagElfLibc6 | kCacheFlagPowerpcLib64;
  } else if (machine == kEmS390 && bits == 64) {
    q.default_id = kCacheFlagElfLibc6 | kCacheFlagS390Lib64;
  } else if (machine == kEmRiscv && bits == 64) {
    q.default_id = kCacheFlagElfLibc6 | kCacheFlagRiscvDoubleFloat;
  } else if (machine == kEmArm) {
    q.default_id = kCacheFlagElfLibc6 | kCacheFlagArmLibHf;
    q.also_accepted_id = kCacheFlagElfLibc6;
  } else {
    q.default_id = kCacheFlagElfLibc6;
    if (machine == kEm386 || bits == 32) q.also_accepted_id = kCacheFlagElf;
  }
  return q;
}

Expected<LdSoCache> LdSoCache::parse(ByteView bytes) {
  return parse(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Expected<LdSoCache> LdSoCache::parse(std::string bytes) {
  LdSoCache cache;
  cache.bytes_ = std::make_shared<const std::string>(std::move(bytes));
  ByteView file = cache.file();
  Table& table = cache.table_;
  if (starts_with(file, kNewMagic)) {
    auto le = table_little_endian(file, 20, kNewEntrySize, file.read<uint8_t>(28));
    if (!le) return fail("byte order marked invalid");
    auto nlibs = file.read<uint32_t>(20, *le);
    auto extension = file.read<uint32_t>(32, *le);
    if (!nlibs || !extension || file.size() <= kNewHeaderSize) return fail("file too short for the new-format header");
    if ((file.size() - kNewHeaderSize) / kNewEntrySize < *nlibs) return fail("entry count exceeds the file size");
    table = Table{kNewHeaderSize, *nlibs, kNewEntrySize, 0, true, *le};
    cache.hwcaps_names_ = read_hwcaps_extension(file, *extension, *le);
    cache.format_ = LdCacheFormat::New;
  } else if (starts_with(file, kOldMagic)) {
    bool old_le = *table_little_endian(file, 12, kOldEntrySize, std::nullopt);
    auto nlibs = file.read<uint32_t>(12, old_le);
    if (!nlibs || file.size() <= kOldHeaderSize) return fail("file too short for the old-format header");
    if ((file.size() - kOldHeaderSize) / kOldEntrySize < *nlibs) return fail("entry count exceeds the file size");
    uint64_t table_end = kOldHeaderSize + static_cast<uint64_t>(*nlibs) * kOldEntrySize;
    uint64_t new_at = (table_end + 7) & ~uint64_t{7};  // ALIGN_CACHE: alignof(cache_file_new)
    auto tail = file.sub(new_at, file.size() > new_at ? file.size() - new_at : 0);
    if (tail && tail->size() >= kNewHeaderSize && starts_with(*tail, kNewMagic)) {
      auto le = table_little_endian(*tail, 20, kNewEntrySize, tail->read<uint8_t>(28));
      if (!le) return fail("byte order marked invalid");
      auto nlibs_new = tail->read<uint32_t>(20, *le);
      if (!nlibs_new) return fail("truncated new-format header");
      if ((tail->size() - kNewHeaderSize) / kNewEntrySize < *nlibs_new) return fail("entry count exceeds the file size");
      table = Table{new_at + kNewHeaderSize, *nlibs_new, kNewEntrySize, new_at, true, *le};
      cache.format_ = LdCacheFormat::OldWithNew;
    } else {
      table = Table{kOldHeaderSize, *nlibs, kOldEntrySize, table_end, false, old_le};
      cache.format_ = LdCacheFormat::Old;
    }
  } else {
    return fail("not an ld.so.cache file (bad magic)");
  }
  return cache;
}

ByteView LdSoCache::file() const {
  return ByteView(reinterpret_cast<const uint8_t*>(bytes_->data()), bytes_->size());
}

// The table lies inside the file (parse checked its size), so each read succeeds.
LdCacheEntry LdSoCache::entry(size_t index) const {
  ByteView file = this->file();
  ByteView strings = file.sub(table_.strings_at, file.size() - table_.strings_at).value_or(ByteView());
  uint64_t at = table_.entries_at + static_cast<uint64_t>(index) * table_.entry_size;
  LdCacheEntry e;
  bool le = table_.little_endian;
  e.flags = file.read<int32_t>(at, le).value_or(0);
  e.key = strings.cstring(file.read<uint32_t>(at + 4, le).value_or(UINT32_MAX), kMaxStringLength);
  e.value = strings.cstring(file.read<uint32_t>(at + 8, le).value_or(UINT32_MAX), kMaxStringLength);
  e.is_new = table_.is_new;
  if (e.is_new) {
    e.hwcap = file.read<uint64_t>(at + 16, le).value_or(0);
    uint32_t name_index = static_cast<uint32_t>(e.hwcap);
    if (is_hwcap_extension(e.hwcap) && name_index < hwcaps_names_.size()) e.hwcaps_subdir = hwcaps_names_[name_index];
  }
  return e;
}

std::vector<LdCacheEntry> LdSoCache::entries() const {
  std::vector<LdCacheEntry> out;
  out.reserve(table_.count);
  for (size_t i = 0; i < table_.count; ++i) out.push_back(entry(i));
  return out;
}

bool LdSoCache::acceptable(const LdCacheEntry& e, const CacheQuery& q) const {
  bool flags_ok = e.flags == q.default_id || (q.also_accepted_id && e.flags == *q.also_accepted_id);
  return flags_ok && e.value.has_value();
}

// search_cache: binary search (the table is sorted descending by cache_libcmp), back up to the
// first entry with the name, then walk forward choosing the best acceptable entry.
std::optional<std::string> LdSoCache::lookup(std::string_view name, const CacheQuery& q) const {
  if (q.little_endian != table_.little_endian) return std::nullopt;
  uint64_t hwcap_exclude = ~(q.hwcap | kX86PlatformMask | kHwcapTlsMask);
  uint64_t platform_bit = q.platform_index < 0 ? ~uint64_t{0} : 1ull << (48 + q.platform_index);
  auto has_name = [&](const LdCacheEntry& e) { return e.key && cache_libcmp(name, *e.key) == 0; };
  int64_t left = 0, right = static_cast<int64_t>(size()) - 1;
  while (left <= right) {
    int64_t middle = (left + right) / 2;
    std::optional<std::string_view> key = entry(static_cast<size_t>(middle)).key;
    if (!key) return std::nullopt;
    int cmp = cache_libcmp(name, *key);
    if (cmp == 0) {
      left = middle;
      while (middle > 0 && has_name(entry(static_cast<size_t>(middle - 1)))) --middle;
      std::optional<std::string_view> best;
      uint32_t best_priority = 0;
      for (; middle <= right; ++middle) {
        const LdCacheEntry e = entry(static_cast<size_t>(middle));
        if (middle > left && !has_name(e)) break;
        if (!acceptable(e, q)) continue;
        bool named = false;
        if (e.is_new) {
          named = is_hwcap_extension(e.hwcap);
          if (named) {
            uint32_t level = 1u << ((e.hwcap >> 32) & kIsaLevelMask);
            if ((level & q.isa_levels) != level) continue;
          }
          if (!named && best) break;  // named entries come first; the best one is chosen
          if (!named && e.hwcap != 0 && !q.legacy_hwcap_entries) continue;
          if ((e.hwcap & hwcap_exclude) && !named) continue;
          if ((e.hwcap & kX86PlatformMask) != 0 && (e.hwcap & kX86PlatformMask) != platform_bit) continue;
          if (named) {
            uint32_t priority = 0;
            for (size_t k = 0; k < q.glibc_hwcaps.size() && e.hwcaps_subdir; ++k)
              if (q.glibc_hwcaps[k] == *e.hwcaps_subdir) priority = static_cast<uint32_t>(k + 1);
            if (priority == 0) continue;
            if (best && priority >= best_priority) continue;
            best_priority = priority;
          }
        }
        best = e.value;
        if (!named && e.flags == q.default_id) break;
      }
      if (!best) return std::nullopt;
      return std::string(*best);
    }
    if (cmp < 0) left = middle + 1;
    else right = middle - 1;
  }
  return std::nullopt;
}

}  // namespace depscan
