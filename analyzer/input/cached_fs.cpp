// A scan of 31 CUDA libraries asked the real file system about libc.so.6 94 times (stat, the
// symlink walk of canonical, the 64-byte header read): once per root and search step.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>

#include "analyzer/input/file_source.h"
#include "analyzer/input/fs.h"
#include "analyzer/util/string_map.h"

namespace depscan {
namespace {

// Header reads (the loader's ELF header check) are small and repeated; larger reads are not.
constexpr size_t kMaxCachedRead = 4096;

template <typename Value>
class Memo {
 public:
  template <typename Compute>
  Value get(std::string_view key, Compute compute) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = values_.find(key); it != values_.end()) return it->second;
    }
    Value value = compute();
    std::lock_guard lock(mutex_);
    return values_.try_emplace(std::string(key), std::move(value)).first->second;
  }

 private:
  std::mutex mutex_;
  StringMap<Value> values_;
};

class CachedFs final : public FileSystem {
 public:
  explicit CachedFs(std::unique_ptr<FileSystem> inner) : inner_(std::move(inner)) {}

  Expected<std::string> canonical(std::string_view logical) const override { return canonical_within(logical, 0, 0); }
  Expected<FileInfo> stat(std::string_view logical) const override {
    return stat_.get(logical, [&] { return inner_->stat(logical); });
  }
  Expected<std::string> host_path(std::string_view logical) const override {
    return host_path_.get(logical, [&] { return inner_->host_path(logical); });
  }
  std::vector<std::string> list(std::string_view logical_dir) const override {
    return list_.get(logical_dir, [&] { return inner_->list(logical_dir); });
  }
  const std::string& root() const override { return inner_->root(); }
  Expected<std::string> read_text(std::string_view logical, size_t max_bytes) const override {
    if (max_bytes > kMaxCachedRead) return inner_->read_text(logical, max_bytes);
    std::string key = std::to_string(max_bytes) + ':' + std::string(logical);
    return head_.get(key, [&] { return inner_->read_text(logical, max_bytes); });
  }
  // The search checks a library's header, then the resolver reads the library it took: the file
  // the header came from stays open for that next open() of the same path.
  Expected<std::string> read_head(std::string_view logical, size_t bytes) const override {
    std::string key = std::to_string(bytes) + ':' + std::string(logical);
    return header_.get(key, [&] { return read_head_keeping_open(logical, bytes); });
  }
  Expected<std::unique_ptr<FileSource>> open(std::string_view logical) const override {
    {
      std::lock_guard lock(kept_mutex_);
      if (kept_ && kept_path_ == logical) return std::move(kept_);
    }
    return inner_->open(logical);
  }

 private:
  // realpath(3) reads every component's link again for each file of a directory (seven readlink
  // calls per library under /usr/local/cuda/lib64). With the parent's answer remembered, a file
  // costs one lstat, and a relative symlink one readlink more; anything unusual (".." in a path or
  // a link target, an absolute target, which a rooted or mounted file system maps its own way, a
  // long chain of links) goes to the inner file system.
  // `depth`: how many calls deep the walk up the parents is; a hostile tree thousands of
  // directories deep goes to the inner file system instead of the stack.
  Expected<std::string> canonical_within(std::string_view logical, int links, int depth) const {
    return canonical_.get(logical, [&] { return canonical_from_parent(logical, links, depth); });
  }

  Expected<std::string> canonical_from_parent(std::string_view logical, int links, int depth) const {
    std::string name = basename_of(logical);
    if (links > kMaxLinksFollowed || depth > kMaxDepth || !plain_name(name) || normalize_path(logical) != logical)
      return inner_->canonical(logical);
    auto dir = canonical_within(dirname_of(logical), links, depth + 1);
    auto host_dir = dir ? host_path(*dir) : dir;
    if (!host_dir) return inner_->canonical(logical);
    std::string host = join_path(*host_dir, name);
    struct stat st;
    if (::lstat(host.c_str(), &st) != 0) return inner_->canonical(logical);
    if (!S_ISLNK(st.st_mode)) return join_path(*dir, name);
    std::string target = read_link(host);
    if (target.empty() || target[0] == '/' || normalize_path("/" + target) != "/" + target)
      return inner_->canonical(logical);
    return canonical_within(join_path(*dir, target), links + 1, depth + 1);
  }

  Expected<std::string> read_head_keeping_open(std::string_view logical, size_t bytes) const {
    auto file = inner_->open(logical);
    if (!file) return Error{file.error()};
    auto head = (*file)->read(0, std::min<uint64_t>((*file)->size(), bytes));
    if (!head) return Error{"cannot read the start of the file"};
    std::string text(reinterpret_cast<const char*>(head->data()), head->size());
    std::lock_guard lock(kept_mutex_);
    kept_ = std::move(*file);
    kept_path_ = logical;
    return text;
  }

  static bool plain_name(const std::string& name) { return !name.empty() && name != "." && name != ".."; }

  static std::string read_link(const std::string& host) {
    char buf[4096];
    ssize_t n = ::readlink(host.c_str(), buf, sizeof buf);
    return n > 0 && static_cast<size_t>(n) < sizeof buf ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }

  static constexpr int kMaxLinksFollowed = 40;  // the kernel's own limit; past it the inner walk says ELOOP
  static constexpr int kMaxDepth = 256;

  std::unique_ptr<FileSystem> inner_;
  mutable Memo<Expected<std::string>> canonical_, host_path_, head_, header_;
  mutable std::mutex kept_mutex_;
  mutable std::unique_ptr<FileSource> kept_;  // the file of the last header read, still open
  mutable std::string kept_path_;
  mutable Memo<Expected<FileInfo>> stat_;
  mutable Memo<std::vector<std::string>> list_;
};

}  // namespace

std::unique_ptr<FileSystem> make_cached_fs(std::unique_ptr<FileSystem> inner) {
  return std::make_unique<CachedFs>(std::move(inner));
}

}  // namespace depscan
