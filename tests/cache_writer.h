// A new-format ld.so.cache ("glibc-ld.so.cache1.1", glibc's dl-cache.h) written in either byte
// order, for machines whose ldconfig does not run here (ldconfig only writes its own machine's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace depscan::test {

struct CacheEntryToWrite {
  int32_t flags;      // FLAG_ELF_LIBC6 | the machine's FLAG_*_LIB64 etc.
  std::string key;    // soname; entries must come sorted as ldconfig sorts them (one name each is)
  std::string value;  // path
};

inline std::string new_format_cache(const std::vector<CacheEntryToWrite>& entries, bool little_endian) {
  constexpr uint32_t kHeaderSize = 48, kEntrySize = 24;
  auto put = [&](std::string& out, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      int shift = 8 * (little_endian ? i : bytes - 1 - i);
      out += static_cast<char>((value >> shift) & 0xff);
    }
  };
  std::string strings;
  uint32_t strings_at = kHeaderSize + kEntrySize * static_cast<uint32_t>(entries.size());
  std::string table;
  for (const CacheEntryToWrite& e : entries) {
    put(table, static_cast<uint32_t>(e.flags), 4);
    put(table, strings_at + strings.size(), 4);
    strings += e.key + '\0';
    put(table, strings_at + strings.size(), 4);
    strings += e.value + '\0';
    put(table, 0, 4);  // osversion
    put(table, 0, 8);  // hwcap
  }
  std::string out = "glibc-ld.so.cache1.1";
  put(out, entries.size(), 4);
  put(out, strings.size(), 4);
  out += static_cast<char>(little_endian ? 2 : 3);  // cache_file_new_flags_endian_little / _big
  out += std::string(3, '\0');
  put(out, 0, 4);                                   // no extension
  out += std::string(12, '\0');
  return out + table + strings;
}

}  // namespace depscan::test
