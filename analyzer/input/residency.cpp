#include "analyzer/input/residency.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "analyzer/input/regular_file.h"

namespace depscan {
namespace {

constexpr off_t kHeadBytes = 4096;       // what a sniff and the ELF header read need

Residency residency_of_descriptor(int fd, uint64_t size, Page page) {
  off_t offset = page == Page::Last && size > 0 ? static_cast<off_t>(size - 1) : 0;
  char byte;
  iovec target{&byte, 1};
  ssize_t got = ::preadv2(fd, &target, 1, offset, RWF_NOWAIT);
  if (got >= 0) return Residency::Cached;
  return errno == EAGAIN ? Residency::NotCached : Residency::Unknown;
}

}  // namespace

Residency page_residency(const std::string& host_path, Page page) {
  auto file = open_regular_file(host_path);
  if (!file) return Residency::Unknown;
  Residency residency = residency_of_descriptor(file->fd, file->info.size, page);
  ::close(file->fd);
  return residency;
}

Residency page_residency(const FileSource& file, Page page) {
  return residency_of_descriptor(file.descriptor(), file.size(), page);
}

std::optional<Residency> logical_residency(const FileSystem& fs, const std::string& logical, Page page) {
  auto info = fs.stat(logical);
  if (!info || info->kind != FileKind::Regular) return std::nullopt;
  auto host = fs.host_path(logical);
  return host ? page_residency(*host, page) : Residency::Unknown;
}

Residency sampled_residency(const FileSystem& fs, const std::vector<std::string>& logical_paths, Page page) {
  return sampled_residency(logical_paths.size(),
                           [&](size_t i) { return logical_residency(fs, logical_paths[i], page); });
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
