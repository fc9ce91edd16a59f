// Files are read through this interface, so a container root file system can stand in for "/"
// and tests need not touch the host's libraries. Paths given to it are *logical*: absolute paths
// as the analysed system sees them. RootedFs maps them inside its root and resolves symlinks
// itself, so neither ".." nor an absolute symlink can escape the root.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/expected.h"

namespace depscan {

class FileSource;

enum class FileKind { Regular, Directory, Fifo, CharDevice, BlockDevice, Socket, Other };

struct FileInfo {
  FileKind kind = FileKind::Other;
  uint64_t size = 0;
  uint64_t device = 0;
  uint64_t inode = 0;
  uint32_t mode = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // The logical path with every symlink resolved (like realpath(3), but inside the root).
  virtual Expected<std::string> canonical(std::string_view logical) const = 0;
  // stat(2) of the logical path, following symlinks.
  virtual Expected<FileInfo> stat(std::string_view logical) const = 0;
  // The host path to open for a logical path (symlinks resolved inside the root).
  virtual Expected<std::string> host_path(std::string_view logical) const = 0;
  // Names in a directory (no "." or ".."), unsorted; empty on error.
  virtual std::vector<std::string> list(std::string_view logical_dir) const = 0;
  // The host directory standing for "/" ("/" for the real file system).
  virtual const std::string& root() const = 0;
  // Reads at most max_bytes of a regular file.
  virtual Expected<std::string> read_text(std::string_view logical, size_t max_bytes = 1 << 20) const;
  // Opens a regular file for reading (FileSource::open of its host path).
  virtual Expected<std::unique_ptr<FileSource>> open(std::string_view logical) const;
  // The first `bytes` bytes of a regular file, fewer if it is shorter: a header to check before
  // the file is opened again to be read (a cached file system keeps it open for that open()).
  virtual Expected<std::string> read_head(std::string_view logical, size_t bytes) const;
  bool is_regular(std::string_view logical) const;
  bool is_directory(std::string_view logical) const;
};

std::unique_ptr<FileSystem> make_real_fs();
std::unique_ptr<FileSystem> make_rooted_fs(std::string host_root);
// Remembers every answer of `inner` (thread-safe): for a scan, which asks about the same system
// libraries once per root. Only for a file system that does not change while it is used.
std::unique_ptr<FileSystem> make_cached_fs(std::unique_ptr<FileSystem> inner);

// Path helpers on logical paths (pure string operations, no file system access).
std::string join_path(std::string_view dir, std::string_view name);
std::string dirname_of(std::string_view path);
std::string basename_of(std::string_view path);
// Removes ".", duplicate slashes and resolves ".." lexically (never above "/").
std::string normalize_path(std::string_view path);
// Makes a path absolute against the process's working directory, then normalizes it.
std::string absolute_path(std::string_view path);

}  // namespace depscan
