#include "analyzer/input/safe_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "analyzer/input/temp_cleanup.h"
#include "analyzer/util/listing.h"

namespace depscan {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

Error errno_error(std::string_view what) {
  return Error{fmt::format("{}: {}", what, std::strerror(errno))};
}

std::vector<std::string> components(std::string_view rel) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= rel.size()) {
    size_t j = rel.find('/', i);
    if (j == std::string_view::npos) j = rel.size();
    if (j > i) parts.emplace_back(rel.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

// Removes `name` inside `dir_fd` without following symlinks; a directory's contents first.
bool remove_at(int dir_fd, const std::string& name);

bool clear_fd(int fd) {
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return false;
  }
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string_view n = entry->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  bool ok = true;
  for (const std::string& n : names) ok = remove_at(::dirfd(dir), n) && ok;
  ::closedir(dir);
  return ok;
}

bool remove_at(int dir_fd, const std::string& name) {
  struct stat st;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
  if (!S_ISDIR(st.st_mode)) return ::unlinkat(dir_fd, name.c_str(), 0) == 0;
  int fd = ::openat(dir_fd, name.c_str(), kDirFlags);
  if (fd < 0) return false;
  clear_fd(fd);
  return ::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) == 0;
}

}  // namespace

Expected<std::unique_ptr<TempDirectory>> TempDirectory::create(std::string_view purpose) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/depscan-{}-XXXXXX", base && *base ? base : "/tmp", purpose);
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) return errno_error("cannot create a temporary directory");
  return std::unique_ptr<TempDirectory>(new TempDirectory(buf.data()));
}

TempDirectory::TempDirectory(std::string path) : path_(std::move(path)), signal_slot_(remove_on_signal(path_.c_str())) {}

TempDirectory::~TempDirectory() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // never follows symlinks inside
  forget_on_signal(signal_slot_);          // after: a signal during the removal still finishes it
}

constexpr size_t kPathMax = 4096;
constexpr size_t kMaxMemberDepth = 100;

Expected<std::string> safe_relative_name(std::string_view name) {
  if (name.empty()) return Error{"empty member name"};
  // Linux opens no path longer than PATH_MAX, so no installer or container runtime writes such a
  // member; nesting is capped like a directory walk's, which a hostile archive would make quadratic.
  if (name.size() >= kPathMax)
    return Error{fmt::format("member name '{}' is {} bytes long, longer than any path Linux opens ({})",
                             shortened(name), name.size(), kPathMax - 1)};
  if (name.find('\0') != std::string_view::npos) return Error{"member name contains a NUL byte"};
  std::string unified(name);
  for (char& c : unified)
    if (c == '\\') c = '/';
  if (unified[0] == '/' || (unified.size() > 1 && unified[1] == ':'))
    return Error{fmt::format("absolute member name '{}'", shortened(name))};
  std::string out;
  size_t depth = 0;
  for (const std::string& part : components(unified)) {
    if (part == ".") continue;
    if (part == "..") return Error{fmt::format("member name '{}' climbs out with '..'", shortened(name))};
    if (++depth > kMaxMemberDepth + 1)  // the directories and the file itself
      return Error{fmt::format("member name '{}' nests more than {} directories deep", shortened(name), kMaxMemberDepth)};
    out += out.empty() ? part : "/" + part;
  }
  if (out.empty()) return Error{fmt::format("member name '{}' names the archive root", shortened(name))};
  return out;
}

bool link_stays_inside(std::string_view link, std::string_view target) {
  if (target.empty() || target.front() == '/') return false;
  auto parts = components(link);
  if (!parts.empty()) parts.pop_back();
  long depth = static_cast<long>(parts.size());
  for (const std::string& part : components(target)) {
    if (part == ".") continue;
    depth += part == ".." ? -1 : 1;
    if (depth < 0) return false;
  }
  return true;
}

SafeTree::SafeTree(std::string host_root) : root_(std::move(host_root)) {
  root_fd_ = ::open(root_.c_str(), kDirFlags);
}

SafeTree::~SafeTree() {
  if (root_fd_ >= 0) ::close(root_fd_);
}

std::string SafeTree::host_path(std::string_view rel) const {
  return rel.empty() ? root_ : root_ + "/" + std::string(rel);
}

Expected<int> SafeTree::open_parent(std::string_view rel, bool create, std::string& leaf) const {
  if (root_fd_ < 0) return Error{"the extraction directory could not be opened"};
  auto parts = components(rel);
  if (parts.empty()) return Error{"empty path"};
  for (const std::string& part : parts)
    if (part == "." || part == "..") return Error{fmt::format("'{}' has a '{}' component", rel, part)};
  leaf = parts.back();
  parts.pop_back();
  int fd = ::dup(root_fd_);
  for (const std::string& part : parts) {
    int next = ::openat(fd, part.c_str(), kDirFlags);
    if (next < 0 && errno == ENOENT && create) {
      if (::mkdirat(fd, part.c_str(), 0755) != 0 && errno != EEXIST) {
        ::close(fd);
        return errno_error(fmt::format("cannot create directory '{}'", part));
      }
      next = ::openat(fd, part.c_str(), kDirFlags);
    }
    if (next < 0) {
      int err = errno;
      ::close(fd);
      if (err == ELOOP || err == ENOTDIR)
        return Error{fmt::format("'{}' goes through a symbolic link or a file ('{}')", rel, part)};
      errno = err;
      return errno_error(fmt::format("cannot open directory '{}'", part));
    }
    ::close(fd);
    fd = next;
  }
  return fd;
}

Expected<bool> SafeTree::make_dirs(std::string_view rel) {
  std::string leaf;
  auto parent = open_parent(rel, true, leaf);
  if (!parent) return Error{parent.error()};
  struct stat st;
  bool ok = true;
  if (::fstatat(*parent, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
    remove_at(*parent, leaf);
  if (::mkdirat(*parent, leaf.c_str(), 0755) != 0 && errno != EEXIST) ok = false;
  ::close(*parent);
  if (!ok) return Error{fmt::format("cannot create directory '{}'", rel)};
  return true;
}

Expected<int> SafeTree::create_file(std::string_view rel, unsigned mode) {
  std::string leaf;
  auto parent = open_parent(rel, true, leaf);
  if (!parent) return Error{parent.error()};
  remove_at(*parent, leaf);
  int fd = ::openat(*parent, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    mode & 0755);
  int err = errno;
  ::close(*parent);
  if (fd < 0) {
    errno = err;
    return errno_error(fmt::format("cannot create '{}'", rel));
  }
  return fd;
}

Expected<bool> SafeTree::make_symlink(std::string_view rel, const std::string& target) {
  std::string leaf;
  auto parent = open_parent(rel, true, leaf);
  if (!parent) return Error{parent.error()};
  remove_at(*parent, leaf);
  bool ok = ::symlinkat(target.c_str(), *parent, leaf.c_str()) == 0;
  ::close(*parent);
  if (!ok) return Error{fmt::format("cannot create symbolic link '{}'", rel)};
  return true;
}

Expected<bool> SafeTree::make_hardlink(std::string_view target_rel, std::string_view rel) {
  std::string target_leaf, leaf;
  auto target_parent = open_parent(target_rel, false, target_leaf);
  if (!target_parent) return Error{fmt::format("hard link target: {}", target_parent.error())};
  auto parent = open_parent(rel, true, leaf);
  if (!parent) {
    ::close(*target_parent);
    return Error{parent.error()};
  }
  struct stat st;
  bool ok = ::fstatat(*target_parent, target_leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode);
  if (ok) {
    remove_at(*parent, leaf);
    ok = ::linkat(*target_parent, target_leaf.c_str(), *parent, leaf.c_str(), 0) == 0;
  }
  ::close(*target_parent);
  ::close(*parent);
  if (!ok) return Error{fmt::format("hard link '{}' -> '{}' does not name a file of the archive", rel, target_rel)};
  return true;
}

Expected<bool> SafeTree::remove(std::string_view rel) {
  std::string leaf;
  auto parent = open_parent(rel, false, leaf);
  if (!parent) return true;  // a missing parent means nothing to remove
  bool ok = remove_at(*parent, leaf);
  ::close(*parent);
  if (!ok) return Error{fmt::format("cannot remove '{}'", rel)};
  return true;
}

Expected<bool> SafeTree::clear_directory(std::string_view rel) {
  if (root_fd_ < 0) return Error{"the extraction directory could not be opened"};
  int fd = -1;
  if (rel.empty()) {
    fd = ::dup(root_fd_);
  } else {
    std::string leaf;
    auto parent = open_parent(rel, false, leaf);
    if (!parent) return true;
    fd = ::openat(*parent, leaf.c_str(), kDirFlags);
    ::close(*parent);
    if (fd < 0) return true;
  }
  clear_fd(fd);
  return true;
}

}  // namespace depscan
