#include "analyzer/input/residency.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <optional>

#include "analyzer/input/regular_file.h"

namespace depscan {
namespace {

constexpr off_t kHeadBytes = 4096;       // what a sniff and the ELF header read need

#ifndef __NR_cachestat
#define __NR_cachestat 451  // Linux 6.5, the same number on every architecture
#endif

// The kernel's struct cachestat_range and struct cachestat (cachestat(2)); Debian's kernel
// headers predate them.
struct CacheStatRange {
  uint64_t offset;
  uint64_t length;
};
struct CacheStat {
  uint64_t cached, dirty, writeback, evicted, recently_evicted;
};

std::atomic<bool> cachestat_missing{false};  // ENOSYS: a kernel older than 6.5

uint64_t offset_of(uint64_t size, Page page) { return page == Page::Last && size > 0 ? size - 1 : 0; }

// cachestat(2) only counts pages: unlike a read, asking starts no reading, so the answer cannot be
// changed by a read the question started and finished before it returned. Recent kernels answer
// only about files the caller owns or may write, or to root (else EPERM, as under some seccomp
// filters; seen on 6.18): those files are asked by reading.
std::optional<Residency> residency_by_cachestat(int fd, uint64_t size, Page page) {
  if (cachestat_missing.load(std::memory_order_relaxed)) return std::nullopt;
  CacheStatRange range{offset_of(size, page), 1};
  CacheStat stat{};
  if (::syscall(__NR_cachestat, fd, &range, &stat, 0) == 0)
    return stat.cached > 0 ? Residency::Cached : Residency::NotCached;
  if (errno == ENOSYS) cachestat_missing.store(true, std::memory_order_relaxed);
  return std::nullopt;
}

// RWF_NOWAIT refuses at once when the page is not cached, but first starts reading it, and on a
// fast disk that read can finish before the kernel looks again: then a page that was on disk is
// said to be cached.
Residency residency_by_nowait_read(int fd, uint64_t size, Page page) {
  char byte;
  iovec target{&byte, 1};
  ssize_t got = ::preadv2(fd, &target, 1, static_cast<off_t>(offset_of(size, page)), RWF_NOWAIT);
  if (got >= 0) return Residency::Cached;
  return errno == EAGAIN ? Residency::NotCached : Residency::Unknown;
}

// An empty file has no page to count: it is asked by reading, which file systems without a page
// cache (procfs) refuse.
Residency residency_of_descriptor(int fd, uint64_t size, Page page) {
  if (size > 0)
    if (auto counted = residency_by_cachestat(fd, size, page)) return *counted;
  return residency_by_nowait_read(fd, size, page);
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
