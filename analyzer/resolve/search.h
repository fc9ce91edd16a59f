// The search for one library name, as glibc 2.36's _dl_map_object does it once the "already
// loaded" check failed: the given search lists (RPATH chain, LD_LIBRARY_PATH, RUNPATH) with
// their hwcaps subdirectories, then ld.so.cache (or, without a cache, the ld.so.conf
// directories), then the system directories. Every candidate is recorded as an Attempt.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/resolve/elf_header_check.h"
#include "analyzer/resolve/ld_so_cache.h"

namespace depscan {

// What an attempt that ends the whole search (not only its list) says after its reason.
inline constexpr std::string_view kLoaderStops = " (the loader stops here)";

struct SearchList {
  How how = How::Rpath;
  std::string detail;             // "rpath", "rpath of libfoo.so.1", "LD_LIBRARY_PATH", "runpath"
  // Expanded; "" is the current directory. The caller keeps the list for the whole scan: searches
  // are remembered by the list's address, not by its contents.
  const std::vector<std::string>* dirs = nullptr;
};

struct SearchRequest {
  std::string name;               // contains no '/'
  std::vector<SearchList> lists;  // in the order the loader tries them
  bool nodeflib = false;          // DF_1_NODEFLIB of the requesting object
};

struct SearchResult {
  std::optional<std::string> path;  // logical path the loader opens
  How how = How::NotFound;
  std::string how_detail;
  AttemptList attempts;
  std::string fatal;                // non-empty: the loader stops with this error
  bool found_other_class = false;
};

struct SearchConfig {
  ProcessAbi abi;
  std::string cwd = "/";
  std::vector<std::string> subdirs;      // glibc-hwcaps/<level>..., legacy subdirs; "" excluded
  std::vector<std::string> system_dirs;  // the default path
  bool use_cache = true;                 // false in secure mode for __RTLD_SECURE loads
  bool first_file_wins = false;          // musl: the first file found is loaded or the load fails
};

// Where ld.so.cache answers come from: the parsed cache, or the ld.so.conf fallback.
struct CacheSource {
  const LdSoCache* cache = nullptr;         // null: no usable cache
  CacheQuery query;
  const std::vector<std::string>* conf_dirs = nullptr;  // fallback when cache is null
};

// Directory listings and stat results, cached for one run. A directory is listed once enough
// probes found nothing there that the listing costs less than the stats it will save: one miss
// per 128 bytes of directory, at least eight (32 for a directory of one 4 KiB block; listing the
// 1,200 names of /usr/lib/x86_64-linux-gnu, 52 KiB, costs about as much as 400 stats). Hits
// need their stat anyway. Names of one directory (/lib/x86_64-linux-gnu and
// /usr/lib/x86_64-linux-gnu) share one listing.
class DirCache {
 public:
  explicit DirCache(const FileSystem& fs) : fs_(fs) {}
  bool is_directory(const std::string& dir);
  // False when the directory's listing proves `name` absent.
  bool may_contain(const std::string& dir, const std::string& name);
  // A probe of `dir` found no file there.
  void record_miss(const std::string& dir);
  // The entry of `dir` equal to `name` ignoring ASCII case (Windows file names), if any.
  std::optional<std::string> find_ignoring_case(const std::string& dir, const std::string& name);

 private:
  static constexpr uint64_t kMissesBeforeListing = 8, kDirectoryBytesPerMiss = 128;
  struct Listing {
    bool tried = false;
    bool listed = false;  // the listing succeeded: names is complete
    uint64_t misses = 0;
    std::unordered_map<std::string, bool> names;
    std::unordered_map<std::string, std::string> lowercase;  // built on first use
  };
  struct Entry {
    bool exists = false;
    uint64_t size = 0;           // st_size of the directory
    Listing* listing = nullptr;  // shared by every name of the directory
  };
  Entry& entry(const std::string& dir);
  void list(Entry& e, const std::string& dir);
  const FileSystem& fs_;
  std::unordered_map<std::string, Entry> dirs_;
  std::map<std::pair<uint64_t, uint64_t>, Listing> listings_;  // (device, inode) -> listing
};

class LibrarySearch {
 public:
  LibrarySearch(const FileSystem& fs, DirCache& dirs, SearchConfig config, CacheSource cache);

  // Remembered per request: every root of a scan asks again for libc.so.6 through the same lists.
  // The answer lives as long as this LibrarySearch.
  const SearchResult& search(const SearchRequest& request) const;
  // A name containing '/': opened as is (relative to the working directory).
  SearchResult open_direct(const std::string& path) const;
  const SearchConfig& config() const { return config_; }

 private:
  enum class Probe { Taken, Continue, StopList, Fatal };
  Probe probe(const std::string& path, bool record_missing, SearchResult& out) const;
  // Tries one directory with its hwcaps subdirectories.
  Probe try_dir(const std::string& dir, const std::string& name, SearchResult& out) const;
  // The hwcaps subdirectories of `base` that exist, in search order.
  const std::vector<std::string>& existing_subdirs(const std::string& base) const;
  bool try_cache(const SearchRequest& request, SearchResult& out) const;
  std::string absolute(const std::string& dir) const;
  SearchResult search_uncached(const SearchRequest& request) const;

  const FileSystem& fs_;
  DirCache& dirs_;
  SearchConfig config_;
  CacheSource cache_;
  mutable std::unordered_map<std::string, SearchResult> searched_;  // key: request_key()
  mutable std::unordered_map<std::string, std::vector<std::string>> subdirs_;  // key: absolute directory
};

}  // namespace depscan
