#include "fuzz/fuzz_entries.h"

#include <unistd.h>

#include <cstdio>

#include "analyzer/read/elf_reader.h"
#include "analyzer/read/fatbin_reader.h"
#include "analyzer/resolve/ld_so_cache.h"
#include "analyzer/scan/scan.h"

namespace depscan::fuzz {
namespace {

void elf_reader(const uint8_t* data, size_t size) {
  (void)read_elf(ByteView(data, size), "fuzz.so");
}

void fatbin_reader(const uint8_t* data, size_t size) { (void)read_fatbin(ByteView(data, size)); }

// ld.so.cache: parse, then look every key up (binary search and hwcaps choice included).
void ld_so_cache(const uint8_t* data, size_t size) {
  auto cache = LdSoCache::parse(ByteView(data, size));
  if (!cache) return;
  CacheQuery query = cache_query_for(64, 62);
  query.glibc_hwcaps = {"x86-64-v3", "x86-64-v2"};
  query.isa_levels = 7;
  for (const LdCacheEntry& e : cache->entries())
    if (e.key) (void)cache->lookup(*e.key, query);
  (void)cache->lookup("libc.so.6", query);
}

// The whole static pipeline on one input file, with no environment influence.
void pipeline(const uint8_t* data, size_t size) {
  char path[] = "/tmp/depscan-fuzz-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) return;
  size_t written = 0;
  while (written < size) {
    ssize_t n = ::write(fd, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  ::close(fd);
  ScanOptions options;
  options.inputs = {path};
  options.ld_library_path = "";
  options.preload = "";
  options.no_etc_preload = true;
  (void)run_scan(options);
  ::unlink(path);
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"elf", elf_reader},
      {"pipeline", pipeline},
      {"fatbin", fatbin_reader},
      {"ld_so_cache", ld_so_cache},
  };
  return all;
}

}  // namespace depscan::fuzz
