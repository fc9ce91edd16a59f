// A FileSystem that shows host directories at logical mount points on top of another FileSystem:
// wheels installed into a private temporary prefix appear at that prefix's path while everything
// else (the system libraries they fall back to) comes from the base (the real or a --root tree).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/input/fs.h"

namespace depscan {

// `mounts`: (logical prefix, host directory). Inside a mount, symlinks resolve within the mount.
std::unique_ptr<FileSystem> make_mount_fs(std::unique_ptr<FileSystem> base,
                                          std::vector<std::pair<std::string, std::string>> mounts);

}  // namespace depscan
