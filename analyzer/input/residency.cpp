#include "analyzer/input/residency.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "analyzer/input/regular_file.h"

namespace depscan {
namespace {

constexpr size_t kResidencySamples = 8;  // files asked whether they are in the page cache
constexpr off_t kHeadBytes = 4096;       // what a sniff and the ELF header read need

}  // namespace

Residency page_residency(const std::string& host_path, Page page) {
  auto file = open_regular_file(host_path);
  if (!file) return Residency::Unknown;
  int fd = file->fd;
  off_t offset = page == Page::Last && file->info.size > 0 ? static_cast<off_t>(file->info.size - 1) : 0;
  char byte;
  iovec target{&byte, 1};
  ssize_t got = ::preadv2(fd, &target, 1, offset, RWF_NOWAIT);
  int err = errno;
  ::close(fd);
  if (got >= 0) return Residency::Cached;
  return err == EAGAIN ? Residency::NotCached : Residency::Unknown;
}

Residency sampled_residency(const FileSystem& fs, const std::vector<std::string>& logical_paths, Page page) {
  size_t step = std::max<size_t>(1, logical_paths.size() / kResidencySamples);
  bool unknown = false;
  for (size_t i = 0; i < logical_paths.size(); i += step) {
    auto info = fs.stat(logical_paths[i]);
    if (!info || info->kind != FileKind::Regular) continue;  // FIFOs and devices are never opened
    auto host = fs.host_path(logical_paths[i]);
    Residency residency = host ? page_residency(*host, page) : Residency::Unknown;
    if (residency == Residency::NotCached) return residency;
    unknown = unknown || residency == Residency::Unknown;
  }
  return unknown ? Residency::Unknown : Residency::Cached;
}

void read_heads_ahead(const FileSystem& fs, const std::vector<std::string>& logical_paths) {
  if (logical_paths.size() < kMinFilesToReadAhead) return;
  if (sampled_residency(fs, logical_paths, Page::First) != Residency::NotCached) return;
  for (const std::string& logical : logical_paths) {
    auto info = fs.stat(logical);
    if (!info || info->kind != FileKind::Regular) continue;  // FIFOs and devices are never opened
    auto host = fs.host_path(logical);
    if (!host) continue;
    auto file = open_regular_file(*host);
    if (!file) continue;
    ::posix_fadvise(file->fd, 0, kHeadBytes, POSIX_FADV_WILLNEED);
    ::close(file->fd);
  }
}

}  // namespace depscan
