#include "analyzer/input/mount_fs.h"

namespace depscan {
namespace {

class MountFs final : public FileSystem {
 public:
  MountFs(std::unique_ptr<FileSystem> base, std::vector<std::pair<std::string, std::string>> mounts)
      : base_(std::move(base)) {
    for (auto& [prefix, host] : mounts) mounts_.push_back({normalize_path(prefix), make_rooted_fs(host)});
  }

  Expected<std::string> canonical(std::string_view logical) const override {
    std::string rest;
    if (const Mount* m = find(logical, rest)) {
      auto inner = m->fs->canonical(rest);
      if (!inner) return inner;
      return *inner == "/" ? m->prefix : m->prefix + *inner;
    }
    return base_->canonical(logical);
  }
  Expected<FileInfo> stat(std::string_view logical) const override {
    std::string rest;
    if (const Mount* m = find(logical, rest)) return m->fs->stat(rest);
    return base_->stat(logical);
  }
  Expected<std::string> host_path(std::string_view logical) const override {
    std::string rest;
    if (const Mount* m = find(logical, rest)) return m->fs->host_path(rest);
    return base_->host_path(logical);
  }
  std::vector<std::string> list(std::string_view logical_dir) const override {
    std::string rest;
    if (const Mount* m = find(logical_dir, rest)) return m->fs->list(rest);
    return base_->list(logical_dir);
  }
  const std::string& root() const override { return base_->root(); }

 private:
  struct Mount {
    std::string prefix;
    std::unique_ptr<FileSystem> fs;
  };
  const Mount* find(std::string_view logical, std::string& rest) const {
    std::string path = normalize_path(logical);
    for (const Mount& m : mounts_) {
      if (path == m.prefix) {
        rest = "/";
        return &m;
      }
      if (path.size() > m.prefix.size() && path.compare(0, m.prefix.size(), m.prefix) == 0 &&
          path[m.prefix.size()] == '/') {
        rest = path.substr(m.prefix.size());
        return &m;
      }
    }
    return nullptr;
  }
  std::unique_ptr<FileSystem> base_;
  std::vector<Mount> mounts_;
};

}  // namespace

std::unique_ptr<FileSystem> make_mount_fs(std::unique_ptr<FileSystem> base,
                                          std::vector<std::pair<std::string, std::string>> mounts) {
  return std::make_unique<MountFs>(std::move(base), std::move(mounts));
}

}  // namespace depscan
