// A private temporary directory (mkdtemp, removed with everything in it when the owner dies) and
// SafeTree, the only way archive contents are written: every path is relative to the tree's root
// and walked component by component with O_NOFOLLOW, so no symlink (in the archive or planted by
// an earlier member or layer) can make a write, link or removal land outside the root.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "analyzer/util/expected.h"

namespace depscan {

class TempDirectory {
 public:
  // Creates $TMPDIR/depscan-<purpose>-XXXXXX (or /tmp) with mode 0700.
  static Expected<std::unique_ptr<TempDirectory>> create(std::string_view purpose);
  ~TempDirectory();
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  explicit TempDirectory(std::string path);
  std::string path_;
  int signal_slot_ = -1;  // removed if a signal stops depscan (temp_cleanup.h)
};

// Checks a member name from an archive and returns it normalised ("a/b/c": relative, no "." or
// empty components, backslashes read as separators), or an error saying why it is refused
// (absolute, "..", empty, NUL).
Expected<std::string> safe_relative_name(std::string_view name);

// Whether a symbolic link at member name `link` with `target` stays inside the archive root
// (relative, and no ".." climbing above the root).
bool link_stays_inside(std::string_view link, std::string_view target);

class SafeTree {
 public:
  explicit SafeTree(std::string host_root);
  ~SafeTree();
  SafeTree(const SafeTree&) = delete;
  SafeTree& operator=(const SafeTree&) = delete;

  const std::string& root() const { return root_; }
  std::string host_path(std::string_view rel) const;

  // Creates the directory and its parents (replacing a non-directory in the way).
  Expected<bool> make_dirs(std::string_view rel);
  // Creates (replacing whatever was there) a regular file; returns an fd the caller must close.
  Expected<int> create_file(std::string_view rel, unsigned mode = 0644);
  Expected<bool> make_symlink(std::string_view rel, const std::string& target);
  // A hard link to an existing regular file of the tree (target is a normalised relative name).
  Expected<bool> make_hardlink(std::string_view target_rel, std::string_view rel);
  // Removes the entry (recursively for directories, never following symlinks). Missing is fine.
  Expected<bool> remove(std::string_view rel);
  // Removes everything inside the directory, keeping it (an OCI opaque whiteout).
  Expected<bool> clear_directory(std::string_view rel);

 private:
  Expected<int> open_parent(std::string_view rel, bool create, std::string& leaf) const;
  std::string root_;
  int root_fd_ = -1;
};

}  // namespace depscan
