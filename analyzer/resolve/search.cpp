#include "analyzer/resolve/search.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "analyzer/util/listing.h"

namespace depscan {
namespace {

constexpr size_t kPathMax = 4096;  // open() refuses longer paths with ENAMETOOLONG
constexpr size_t kMuslPathBuffer = 512;  // musl's path_open: char buf[2*NAME_MAX+2]

const char* const kNoEntry = "No such file or directory";
const char* const kNoAccess = "Permission denied";

bool under_system_dir(const std::string& path, const std::vector<std::string>& system_dirs) {
  for (const std::string& dir : system_dirs) {
    std::string prefix = dir.back() == '/' ? dir : dir + "/";
    if (path.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

}  // namespace

DirCache::Entry& DirCache::entry(const std::string& dir) {
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) return it->second;
  Entry e;
  auto info = fs_.stat(dir);
  e.exists = info && info->kind == FileKind::Directory;
  if (e.exists) {
    e.size = info->size;
    e.listing = &listings_[{info->device, info->inode}];
  }
  return dirs_.emplace(dir, std::move(e)).first->second;
}

void DirCache::list(Entry& e, const std::string& dir) {
  if (!e.exists || e.listing->tried) return;
  Listing& l = *e.listing;
  l.tried = true;
  std::vector<std::string> names = fs_.list(dir);
  l.listed = !names.empty();  // an unreadable directory lists empty: fall back to stat
  for (std::string& n : names) l.names.emplace(std::move(n), true);
}

bool DirCache::is_directory(const std::string& dir) { return entry(dir).exists; }

bool DirCache::may_contain(const std::string& dir, const std::string& name) {
  Entry& e = entry(dir);
  if (!e.exists) return false;
  return !e.listing->listed || e.listing->names.count(name) > 0;
}

void DirCache::record_miss(const std::string& dir) {
  Entry& e = entry(dir);
  if (!e.exists) return;
  uint64_t threshold = std::max(kMissesBeforeListing, e.size / kDirectoryBytesPerMiss);
  if (++e.listing->misses > threshold) list(e, dir);
}

std::optional<std::string> DirCache::find_ignoring_case(const std::string& dir, const std::string& name) {
  Entry& e = entry(dir);
  if (!e.exists) return std::nullopt;
  list(e, dir);
  Listing& l = *e.listing;
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  if (l.lowercase.empty())
    for (const auto& [n, present] : l.names) l.lowercase.emplace(lower(n), n);
  auto it = l.lowercase.find(lower(name));
  if (it != l.lowercase.end()) return it->second;
  return std::nullopt;
}

LibrarySearch::LibrarySearch(const FileSystem& fs, DirCache& dirs, SearchConfig config,
                             CacheSource cache)
    : fs_(fs), dirs_(dirs), config_(std::move(config)), cache_(cache) {}

std::string LibrarySearch::absolute(const std::string& dir) const {
  if (dir.empty()) return config_.cwd;
  if (dir[0] == '/') return dir;
  return join_path(config_.cwd, dir);
}

LibrarySearch::Probe LibrarySearch::probe(const std::string& path, bool record_missing,
                                          SearchResult& out) const {
  if (path.size() >= kPathMax && !config_.first_file_wins) {  // open() and stat() fail with ENAMETOOLONG
    out.attempts.push_back({shortened(path), "File name too long (rest of this search list skipped)"});
    return Probe::StopList;
  }
  if (!dirs_.may_contain(dirname_of(path), basename_of(path))) {
    if (record_missing) out.attempts.push_back({path, "not found"});
    return Probe::Continue;
  }
  auto info = fs_.stat(path);
  if (!info) {
    const std::string& why = info.error();
    if (why == kNoEntry || why == kNoAccess) {
      if (why == kNoEntry) dirs_.record_miss(dirname_of(path));
      out.attempts.push_back({path, why == kNoEntry ? "not found" : "permission denied, skipped"});
      return Probe::Continue;
    }
    // open_path gives up on the rest of this list when open fails with another errno; musl on the
    // whole search.
    if (config_.first_file_wins) {
      out.fatal = why;
      out.attempts.push_back({path, why + std::string(kLoaderStops)});
      return Probe::Fatal;
    }
    out.attempts.push_back({path, why + " (rest of this search list skipped)"});
    return Probe::StopList;
  }
  if (info->kind != FileKind::Regular) {
    out.fatal = info->kind == FileKind::Directory ? "cannot read file data: Is a directory"
                                                  : "cannot read file data: not a regular file";
    out.attempts.push_back({path, out.fatal + std::string(kLoaderStops)});
    return Probe::Fatal;
  }
  auto head = fs_.read_head(path, 64);
  if (!head) {
    out.attempts.push_back({path, head.error() == kNoAccess ? "permission denied, skipped"
                                                            : head.error() + ", skipped"});
    return Probe::Continue;
  }
  ByteView bytes(reinterpret_cast<const uint8_t*>(head->data()), head->size());
  HeaderCheck check = check_elf_header(bytes, config_.abi);
  switch (check.verdict) {
    case HeaderVerdict::Fits:
      out.attempts.push_back({path, "taken"});
      out.path = path;
      return Probe::Taken;
    case HeaderVerdict::OtherClass:
    case HeaderVerdict::OtherMachine:
      if (config_.first_file_wins) {  // musl maps the first file it opens, or fails
        out.fatal = "Exec format error (" + check.message + ")";
        out.attempts.push_back({path, out.fatal + std::string(kLoaderStops)});
        return Probe::Fatal;
      }
      out.found_other_class = out.found_other_class || check.verdict == HeaderVerdict::OtherClass;
      out.attempts.push_back({path, "skipped: " + check.message});
      return Probe::Continue;
    case HeaderVerdict::Fatal:
      break;
  }
  out.fatal = check.message;
  out.attempts.push_back({path, check.message + std::string(kLoaderStops)});
  return Probe::Fatal;
}

const std::vector<std::string>& LibrarySearch::existing_subdirs(const std::string& base) const {
  if (auto it = subdirs_.find(base); it != subdirs_.end()) return it->second;
  std::vector<std::string> existing;
  for (const std::string& sub : config_.subdirs) {
    std::string subdir = join_path(base, sub);
    if (dirs_.is_directory(subdir)) existing.push_back(std::move(subdir));  // glibc notes the others as nonexisting
  }
  return subdirs_.emplace(base, std::move(existing)).first->second;
}

LibrarySearch::Probe LibrarySearch::try_dir(const std::string& dir, const std::string& name,
                                            SearchResult& out) const {
  // musl writes each candidate into a 512-byte buffer and passes over one that does not fit.
  if (config_.first_file_wins && dir.size() + 1 + name.size() >= kMuslPathBuffer) {
    out.attempts.push_back({shortened(join_path(dir, name)),
                            fmt::format("not found (longer than musl's {}-byte path buffer)", kMuslPathBuffer)});
    return Probe::Continue;
  }
  std::string base = absolute(dir);
  // An absolute directory named by PATH_MAX bytes or more (a hostile $ORIGIN expansion) cannot be
  // opened or stat'ed (ENAMETOOLONG): glibc notes it as nonexisting and goes on. A shorter
  // directory whose file path is too long is probed, and that error ends the list, as in glibc.
  if (!dir.empty() && dir[0] == '/' && base.size() >= kPathMax) {
    out.attempts.push_back({fmt::format("{}/{}", shortened(base), name),
                            fmt::format("not found (no such directory: its name is {} bytes, File name too long)",
                                        base.size())});
    return Probe::Continue;
  }
  if (!dirs_.is_directory(base)) {
    // glibc never notes a relative directory as missing: opening a file under one that is a file
    // fails with ENOTDIR, which ends the list (an absolute one is noted as missing and skipped).
    bool relative = dir.empty() || dir[0] != '/';
    if (relative && !config_.first_file_wins) {
      auto info = fs_.stat(base);
      std::string why = info ? std::string("Not a directory") : info.error();  // a file; a loop; ...
      if (why != kNoEntry && why != kNoAccess) {
        out.attempts.push_back({join_path(base, name), why + " (rest of this search list skipped)"});
        return Probe::StopList;
      }
    }
    out.attempts.push_back({join_path(base, name), "not found (no such directory)"});
    return Probe::Continue;
  }
  // glibc tries every hwcaps subdirectory and the directory itself, and only the last open's
  // error decides whether the list goes on: an error in a subdirectory is passed over.
  for (const std::string& subdir : existing_subdirs(base)) {
    Probe p = probe(join_path(subdir, name), true, out);
    if (p == Probe::StopList && !config_.first_file_wins) {
      std::string& outcome = out.attempts.edit().back().outcome;
      outcome = outcome.substr(0, outcome.rfind(" (rest of this search list skipped)")) + ", skipped";
      continue;
    }
    if (p != Probe::Continue) return p;
  }
  return probe(join_path(base, name), true, out);
}

bool LibrarySearch::try_cache(const SearchRequest& request, SearchResult& out) const {
  if (cache_.cache) {
    auto hit = cache_.cache->lookup(request.name, cache_.query);
    if (!hit) {
      out.attempts.push_back({"ld.so.cache", "no entry for " + request.name});
      return false;
    }
    if (request.nodeflib && under_system_dir(*hit, config_.system_dirs)) {
      out.attempts.push_back({*hit, "from ld.so.cache, skipped: system directory and DF_1_NODEFLIB"});
      return false;
    }
    Probe p = probe(*hit, true, out);
    if (p == Probe::Taken) {
      out.how = How::LdSoCache;
      out.how_detail = "ld.so.cache";
    }
    return p == Probe::Taken || p == Probe::Fatal;
  }
  if (!cache_.conf_dirs) return false;
  for (const std::string& dir : *cache_.conf_dirs) {
    if (request.nodeflib && under_system_dir(dir + "/", config_.system_dirs)) continue;
    Probe p = try_dir(dir, request.name, out);
    if (p == Probe::Taken) {
      out.how = How::LdSoCache;
      out.how_detail = "ld.so.conf (no ld.so.cache)";
    }
    if (p == Probe::Taken || p == Probe::Fatal) return true;
  }
  return false;
}

namespace {

// A search list of thousands of directories, asked for thousands of missing names (a hostile
// RPATH), would keep millions of attempts: each search keeps its first ones and its last.
constexpr size_t kMaxListedAttempts = 256;
constexpr size_t kMaxListedOthers = 4096;  // other outcomes: wrong class or machine, permission denied

// Candidates that were not there are listed up to 254; other outcomes (a file of the wrong class,
// a permission error), which the checks read, up to 4,096; the last one, the file taken or the
// error that ended the search, always.
void keep_listing_short(AttemptList& attempts) {
  if (attempts.size() <= kMaxListedAttempts) return;
  const AttemptList& all = attempts;
  std::vector<Attempt> kept;
  size_t routine_kept = 0, left_out = 0, marker_at = 0;
  size_t others_kept = 0, others_left_out = 0;  // a hostile list can hold thousands of wrong-class files too
  for (size_t i = 0; i < all.size(); ++i) {
    bool last = i + 1 == all.size() || all[i].outcome.ends_with("(rest of this search list skipped)") ||
                all[i].outcome.ends_with(kLoaderStops);  // what ended a list, or the search
    bool routine = all[i].outcome.starts_with("not found");
    if (routine && !last && routine_kept >= kMaxListedAttempts - 2) {
      if (left_out++ == 0) marker_at = kept.size();
      continue;
    }
    if (!routine && !last && others_kept >= kMaxListedOthers) {
      ++others_left_out;
      continue;
    }
    (routine ? routine_kept : others_kept) += 1;
    kept.push_back(all[i]);
  }
  if (left_out == 0 && others_left_out == 0) return;
  if (others_left_out > 0)
    kept.insert(kept.end() - 1, Attempt{fmt::format("[{} more candidates, not listed]", others_left_out), "skipped"});
  if (left_out > 0)
    kept.insert(kept.begin() + static_cast<long>(marker_at),
                Attempt{fmt::format("[{} more candidates, not listed]", left_out), "not found"});
  attempts = AttemptList(std::move(kept));
}

// Everything a search's answer depends on besides the (unchanging) file system and config. A list
// stands for its directories by its address (the caller keeps each list for the whole scan).
std::string request_key(const SearchRequest& request) {
  std::string key;
  key.reserve(request.name.size() + 1 + request.lists.size() * (2 + sizeof(void*) + 24));
  key += request.name;
  key += request.nodeflib ? '\1' : '\2';
  for (const SearchList& list : request.lists) {
    key += static_cast<char>(list.how);
    key.append(reinterpret_cast<const char*>(&list.dirs), sizeof list.dirs);
    key += list.detail;
    key += '\0';
  }
  return key;
}

}  // namespace

const SearchResult& LibrarySearch::search(const SearchRequest& request) const {
  std::string key = request_key(request);
  if (auto it = searched_.find(key); it != searched_.end()) return it->second;
  SearchResult result = search_uncached(request);
  keep_listing_short(result.attempts);
  return searched_.emplace(std::move(key), std::move(result)).first->second;
}

SearchResult LibrarySearch::search_uncached(const SearchRequest& request) const {
  SearchResult out;
  // A directory gives the same answer twice, so a repeat is not searched again; one whose error
  // ended its list ends a later list too. Relative and absolute spellings follow different rules.
  std::unordered_map<std::string, Probe> tried_dirs;
  auto search_dir = [&](const std::string& dir) -> std::optional<Probe> {  // nullopt: a repeat passed over
    auto [it, first] = tried_dirs.try_emplace((dir.empty() || dir[0] != '/' ? "R" : "A") + absolute(dir), Probe::Continue);
    if (first) return it->second = try_dir(dir, request.name, out);
    if (it->second != Probe::StopList) return std::nullopt;
    out.attempts.push_back({join_path(absolute(dir), request.name),
                            "the same error as before (rest of this search list skipped)"});
    return Probe::StopList;
  };
  auto finish_not_found = [&] {
    out.how = How::NotFound;
    if (out.fatal.empty())
      out.how_detail = out.found_other_class
                           ? (config_.abi.bits == 64 ? "wrong ELF class: ELFCLASS32" : "wrong ELF class: ELFCLASS64")
                           : "cannot open shared object file: No such file or directory";
    else
      out.how_detail = out.fatal;
    out.path.reset();
    return out;
  };
  for (const SearchList& list : request.lists) {
    for (const std::string& dir : *list.dirs) {
      auto searched = search_dir(dir);
      if (!searched) continue;
      Probe p = *searched;
      if (p == Probe::Taken) {
        out.how = list.how;
        out.how_detail = list.detail;
        return out;
      }
      if (p == Probe::Fatal) return finish_not_found();
      if (p == Probe::StopList) break;
    }
  }
  if (config_.use_cache && try_cache(request, out)) {
    if (!out.fatal.empty()) return finish_not_found();
    return out;
  }
  if (request.nodeflib) {
    out.attempts.push_back({"default path", "skipped: DF_1_NODEFLIB"});
    return finish_not_found();
  }
  for (const std::string& dir : config_.system_dirs) {
    auto searched = search_dir(dir);
    if (!searched) continue;
    Probe p = *searched;
    if (p == Probe::Taken) {
      out.how = How::DefaultPath;
      out.how_detail = "default path";
      return out;
    }
    if (p == Probe::Fatal) return finish_not_found();
    if (p == Probe::StopList) break;
  }
  return finish_not_found();
}

SearchResult LibrarySearch::open_direct(const std::string& path) const {
  SearchResult out;
  std::string full = !path.empty() && path[0] == '/' ? path : join_path(config_.cwd, path);
  Probe p = probe(full, true, out);
  if (p == Probe::Taken) {
    out.how = How::DirectPath;
    out.how_detail = "direct path";
    return out;
  }
  out.how = How::NotFound;
  out.how_detail = !out.fatal.empty() ? out.fatal
                   : out.found_other_class ? (config_.abi.bits == 64 ? "wrong ELF class: ELFCLASS32"
                                                                     : "wrong ELF class: ELFCLASS64")
                                           : "cannot open shared object file: No such file or directory";
  return out;
}

}  // namespace depscan
