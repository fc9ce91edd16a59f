// A scan of 31 CUDA libraries asked the real file system about libc.so.6 94 times (stat, the
// symlink walk of canonical, the 64-byte header read): once per root and search step.
#include <mutex>
#include <unordered_map>

#include "analyzer/input/fs.h"

namespace depscan {
namespace {

// Header reads (the loader's ELF header check) are small and repeated; larger reads are not.
constexpr size_t kMaxCachedRead = 4096;

template <typename Value>
class Memo {
 public:
  template <typename Compute>
  Value get(const std::string& key, Compute compute) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = values_.find(key); it != values_.end()) return it->second;
    }
    Value value = compute();
    std::lock_guard lock(mutex_);
    return values_.try_emplace(key, std::move(value)).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, Value> values_;
};

class CachedFs final : public FileSystem {
 public:
  explicit CachedFs(std::unique_ptr<FileSystem> inner) : inner_(std::move(inner)) {}

  Expected<std::string> canonical(std::string_view logical) const override {
    return canonical_.get(std::string(logical), [&] { return inner_->canonical(logical); });
  }
  Expected<FileInfo> stat(std::string_view logical) const override {
    return stat_.get(std::string(logical), [&] { return inner_->stat(logical); });
  }
  Expected<std::string> host_path(std::string_view logical) const override {
    return host_path_.get(std::string(logical), [&] { return inner_->host_path(logical); });
  }
  std::vector<std::string> list(std::string_view logical_dir) const override {
    return list_.get(std::string(logical_dir), [&] { return inner_->list(logical_dir); });
  }
  const std::string& root() const override { return inner_->root(); }
  Expected<std::string> read_text(std::string_view logical, size_t max_bytes) const override {
    if (max_bytes > kMaxCachedRead) return inner_->read_text(logical, max_bytes);
    std::string key = std::to_string(max_bytes) + ':' + std::string(logical);
    return head_.get(key, [&] { return inner_->read_text(logical, max_bytes); });
  }

 private:
  std::unique_ptr<FileSystem> inner_;
  mutable Memo<Expected<std::string>> canonical_, host_path_, head_;
  mutable Memo<Expected<FileInfo>> stat_;
  mutable Memo<std::vector<std::string>> list_;
};

}  // namespace

std::unique_ptr<FileSystem> make_cached_fs(std::unique_ptr<FileSystem> inner) {
  return std::make_unique<CachedFs>(std::move(inner));
}

}  // namespace depscan
