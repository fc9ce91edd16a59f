// /etc/ld.so.cache as glibc 2.36 reads it (elf/dl-cache.c, sysdeps/generic/dl-cache.h): the
// new format "glibc-ld.so.cache1.1" (with its glibc-hwcaps extension), the old "ld.so-1.7.0"
// format, and old followed by new. Every read is bounds-checked; bad input is an Error.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan {

// Entry flags (dl-cache.h): low byte the type, high byte the required architecture.
inline constexpr int32_t kCacheFlagElf = 0x0001, kCacheFlagElfLibc6 = 0x0003;
inline constexpr int32_t kCacheFlagX8664Lib64 = 0x0300, kCacheFlagS390Lib64 = 0x0400,
                         kCacheFlagPowerpcLib64 = 0x0500, kCacheFlagX8664LibX32 = 0x0800,
                         kCacheFlagArmLibHf = 0x0900, kCacheFlagAarch64Lib64 = 0x0a00,
                         kCacheFlagRiscvDoubleFloat = 0x1000;
inline constexpr uint64_t kCacheHwcapExtension = 1ull << 62;

enum class LdCacheFormat { New, OldWithNew, Old };

// The strings are views into the LdSoCache's own copy of the file.
struct LdCacheEntry {
  int32_t flags = 0;
  std::optional<std::string_view> key;    // soname; nullopt if its string offset is bad
  std::optional<std::string_view> value;  // path; nullopt if its string offset is bad
  uint64_t hwcap = 0;                // 0 in the old format
  bool is_new = false;               // from the new-format table (hwcap meaningful)
  // For glibc-hwcaps entries (DL_CACHE_HWCAP_EXTENSION): the subdirectory name, e.g. x86-64-v3.
  std::optional<std::string_view> hwcaps_subdir;
};

// What the requesting process is, for choosing among entries with the same soname.
struct CacheQuery {
  int32_t default_id = kCacheFlagElfLibc6 | kCacheFlagX8664Lib64;  // _DL_CACHE_DEFAULT_ID
  std::optional<int32_t> also_accepted_id;  // _dl_cache_check_flags' second value: 1 (generic), 3 (armhf)
  bool little_endian = true;               // the process's byte order
  std::vector<std::string> glibc_hwcaps;  // supported levels, best first
  uint32_t isa_levels = 0;                // kIsa* bits of this CPU (model.h)
  uint64_t hwcap = 0;                     // dl_hwcap & mask (legacy hwcap entries)
  int platform_index = -1;                // x86_platform_index(dl_platform)
  bool legacy_hwcap_entries = true;       // entries with legacy hwcap or platform bits (before 2.40)
};

// The query for an ELF process of this class, byte order and machine on this CPU.
CacheQuery cache_query_for(int bits, uint16_t machine, bool little_endian = true);

class LdSoCache {
 public:
  // Entries point into the cache's own bytes, which copies of the LdSoCache share.
  static Expected<LdSoCache> parse(ByteView bytes);  // copies the bytes
  static Expected<LdSoCache> parse(std::string bytes);

  // _dl_load_cache_lookup: the path the loader would try for `name`, or nullopt.
  std::optional<std::string> lookup(std::string_view name, const CacheQuery& query) const;

  // The entries in file order (sorted as ldconfig wrote them), decoded when asked for: a lookup
  // decodes only the ten or so its binary search visits.
  size_t size() const { return table_.count; }
  LdCacheEntry entry(size_t index) const;  // index < size()
  std::vector<LdCacheEntry> entries() const;
  LdCacheFormat format() const { return format_; }
  // The byte order of the machine ldconfig wrote it for: a process of the other order finds
  // nothing in it, as its loader refuses the file.
  bool little_endian() const { return table_.little_endian; }
  // Names in the glibc-hwcaps extension section, by index (empty if none).
  const std::vector<std::string_view>& hwcaps_names() const { return hwcaps_names_; }

 private:
  struct Table {
    uint64_t entries_at = 0;   // the first entry's offset in the file
    uint32_t count = 0;
    uint64_t entry_size = 0;
    uint64_t strings_at = 0;   // what the entries' string offsets count from
    bool is_new = false;       // new-format entries (with hwcap)
    bool little_endian = true; // the byte order ldconfig wrote it in
  };
  ByteView file() const;
  bool acceptable(const LdCacheEntry& entry, const CacheQuery& query) const;
  std::shared_ptr<const std::string> bytes_;
  Table table_;
  std::vector<std::string_view> hwcaps_names_;
  LdCacheFormat format_ = LdCacheFormat::New;
};

// glibc's _dl_cache_libcmp: digit runs compare numerically.
int cache_libcmp(std::string_view a, std::string_view b);

// The flags of an entry as `ldconfig -p` prints them, e.g. "libc6,x86-64".
std::string cache_flags_name(int32_t flags);

}  // namespace depscan
