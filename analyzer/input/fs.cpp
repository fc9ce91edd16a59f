#include "analyzer/input/fs.h"
#include "analyzer/input/file_source.h"
#include "analyzer/util/strings.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include <fmt/format.h>

namespace depscan {
namespace {

constexpr int kMaxSymlinks = 40;  // the kernel's own limit (MAXSYMLINKS)

FileKind kind_of(mode_t mode) {
  if (S_ISREG(mode)) return FileKind::Regular;
  if (S_ISDIR(mode)) return FileKind::Directory;
  if (S_ISFIFO(mode)) return FileKind::Fifo;
  if (S_ISCHR(mode)) return FileKind::CharDevice;
  if (S_ISBLK(mode)) return FileKind::BlockDevice;
  if (S_ISSOCK(mode)) return FileKind::Socket;
  return FileKind::Other;
}

FileInfo info_of(const struct stat& st) {
  return FileInfo{kind_of(st.st_mode), static_cast<uint64_t>(st.st_size),
                  static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                  static_cast<uint32_t>(st.st_mode)};
}

Error errno_error(int err) { return Error{std::strerror(err)}; }

std::vector<std::string> split_components(std::string_view path) { return split_nonempty(path, "/"); }

std::vector<std::string> list_host_dir(const std::string& host) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(host.c_str());
  if (!dir) return names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

class RealFs final : public FileSystem {
 public:
  Expected<std::string> canonical(std::string_view logical) const override {
    char buf[PATH_MAX];
    std::string path(logical);
    if (!::realpath(path.c_str(), buf)) return errno_error(errno);
    return std::string(buf);
  }
  Expected<FileInfo> stat(std::string_view logical) const override {
    struct stat st;
    if (::stat(std::string(logical).c_str(), &st) != 0) return errno_error(errno);
    return info_of(st);
  }
  Expected<std::string> host_path(std::string_view logical) const override {
    return std::string(logical);
  }
  std::vector<std::string> list(std::string_view dir) const override {
    return list_host_dir(std::string(dir));
  }
  const std::string& root() const override { return root_; }

 private:
  std::string root_ = "/";
};

// Resolves every component itself with lstat/readlink on host paths under root_, so that
// ".." stops at the root and absolute symlink targets are re-rooted.
class RootedFs final : public FileSystem {
 public:
  explicit RootedFs(std::string root) : root_(std::move(root)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  }

  Expected<std::string> canonical(std::string_view logical) const override {
    std::vector<std::string> resolved;
    std::deque<std::string> pending;
    for (auto& part : split_components(logical)) pending.push_back(std::move(part));
    int links = 0;
    while (!pending.empty()) {
      std::string part = std::move(pending.front());
      pending.pop_front();
      if (part == ".") continue;
      if (part == "..") {
        if (!resolved.empty()) resolved.pop_back();
        continue;
      }
      resolved.push_back(part);
      std::string host = to_host(resolved);
      struct stat st;
      if (::lstat(host.c_str(), &st) != 0) return errno_error(errno);
      if (!S_ISLNK(st.st_mode)) {
        if (!pending.empty() && !S_ISDIR(st.st_mode)) return errno_error(ENOTDIR);
        continue;
      }
      if (++links > kMaxSymlinks) return errno_error(ELOOP);
      auto target = read_link(host);
      if (!target) return Error{target.error()};
      resolved.pop_back();
      if (!target->empty() && (*target)[0] == '/') resolved.clear();
      auto target_parts = split_components(*target);
      pending.insert(pending.begin(), target_parts.begin(), target_parts.end());
    }
    std::string out;
    for (const auto& part : resolved) out += "/" + part;
    return out.empty() ? std::string("/") : out;
  }

  Expected<FileInfo> stat(std::string_view logical) const override {
    auto host = host_path(logical);
    if (!host) return Error{host.error()};
    struct stat st;
    if (::lstat(host->c_str(), &st) != 0) return errno_error(errno);
    return info_of(st);
  }

  Expected<std::string> host_path(std::string_view logical) const override {
    auto canon = canonical(logical);
    if (!canon) return Error{canon.error()};
    return root_ == "/" ? *canon : root_ + (*canon == "/" ? "" : *canon);
  }

  std::vector<std::string> list(std::string_view dir) const override {
    auto host = host_path(dir);
    if (!host) return {};
    return list_host_dir(*host);
  }

  const std::string& root() const override { return root_; }

 private:
  std::string to_host(const std::vector<std::string>& parts) const {
    std::string out = root_ == "/" ? "" : root_;
    for (const auto& part : parts) out += "/" + part;
    return out.empty() ? "/" : out;
  }

  static Expected<std::string> read_link(const std::string& host) {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(host.c_str(), buf, sizeof buf);
    if (n < 0) return errno_error(errno);
    if (static_cast<size_t>(n) >= sizeof buf) return errno_error(ENAMETOOLONG);
    return std::string(buf, static_cast<size_t>(n));
  }

  std::string root_;
};

}  // namespace

Expected<std::unique_ptr<FileSource>> FileSystem::open(std::string_view logical) const {
  auto host = host_path(logical);
  if (!host) return Error{host.error()};
  return FileSource::open(*host);
}

Expected<std::string> FileSystem::read_head(std::string_view logical, size_t bytes) const {
  return read_text(logical, bytes);
}

Expected<std::string> FileSystem::read_text(std::string_view logical, size_t max_bytes) const {
  auto host = host_path(logical);
  if (!host) return Error{host.error()};
  int fd = ::open(host->c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{"not a regular file"};
  }
  // Sized by fstat, then read on to the end: /proc and /sys files report 0 or 4096 bytes.
  std::string out(std::min<size_t>(max_bytes, static_cast<size_t>(st.st_size)), '\0');
  size_t filled = 0;
  while (filled < max_bytes) {
    ssize_t n;
    if (filled < out.size()) {
      n = ::read(fd, out.data() + filled, out.size() - filled);
    } else {
      char more[4096];
      n = ::read(fd, more, std::min(sizeof more, max_bytes - filled));
      if (n > 0) out.append(more, static_cast<size_t>(n));
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    filled += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(filled);
  return out;
}

bool FileSystem::is_regular(std::string_view logical) const {
  auto info = stat(logical);
  return info && info->kind == FileKind::Regular;
}

bool FileSystem::is_directory(std::string_view logical) const {
  auto info = stat(logical);
  return info && info->kind == FileKind::Directory;
}

std::unique_ptr<FileSystem> make_real_fs() { return std::make_unique<RealFs>(); }

std::unique_ptr<FileSystem> make_rooted_fs(std::string host_root) {
  return std::make_unique<RootedFs>(std::move(host_root));
}

std::string join_path(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return std::string(dir) + std::string(name);
  return std::string(dir) + "/" + std::string(name);
}

std::string dirname_of(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string normalize_path(std::string_view path) {
  std::string result;
  result.reserve(path.size() + 1);
  for (size_t start = 0; start < path.size();) {
    size_t end = std::min(path.find('/', start), path.size());
    std::string_view part = path.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      size_t slash = result.rfind('/');
      result.resize(slash == std::string::npos ? 0 : slash);
      continue;
    }
    result += '/';
    result += part;
  }
  return result.empty() ? "/" : result;
}

std::string absolute_path(std::string_view path) {
  if (!path.empty() && path[0] == '/') return normalize_path(path);
  char buf[PATH_MAX];
  std::string cwd = ::getcwd(buf, sizeof buf) ? buf : "/";
  return normalize_path(join_path(cwd, path));
}

}  // namespace depscan
