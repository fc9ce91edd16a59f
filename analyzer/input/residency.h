// Whether reading a file would wait for the disk. A scan reads its roots in parallel only when
// it would: with the files in the page cache, two threads read no faster than one (they share
// the process's memory map and allocator) and the threads cost more than they save.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/input/file_source.h"
#include "analyzer/input/fs.h"

namespace depscan {

enum class Residency { Cached, NotCached, Unknown };
enum class Page { First, Last };

// Whether the file's first or last page is in the page cache: counted with cachestat(2) (Linux 6.5),
// else asked by reading one byte with RWF_NOWAIT, which the kernel answers from the page cache or
// refuses at once (starting to read the page in the background). Unknown when the file cannot be
// opened, or cachestat is missing and the file system cannot answer without waiting (procfs, some
// FUSE file systems). It opens the file before it can tell (O_NONBLOCK): callers ask only
// about files stat has shown to be regular.
Residency page_residency(const std::string& host_path, Page page);
Residency page_residency(const FileSource& file, Page page);  // a file already open
// page_residency() of a logical path; nullopt when stat shows it is not a regular file (then it
// is not opened).
std::optional<Residency> logical_residency(const FileSystem& fs, const std::string& logical, Page page);

// NotCached if any of the `count` files, sampled a few spread over them, is not in the page
// cache, Unknown if none is known to be missing but some could not say. residency_of(i) asks
// file i, or answers nullopt to skip it.
template <typename ResidencyOf>
Residency sampled_residency(size_t count, const ResidencyOf& residency_of);

// The residency of a few of the regular files, spread over the list: NotCached if any of them is
// not in the page cache, Unknown if none is known to be missing but some could not say.
Residency sampled_residency(const FileSystem& fs, const std::vector<std::string>& logical_paths, Page page);

// When the first pages of these files are not in the page cache, asks the kernel to start reading
// the first page of every regular one now (POSIX_FADV_WILLNEED), so that reading their heads one
// by one afterwards finds most of them read or on the way instead of waiting for each in turn.
// Does nothing when they are cached (a warm scan pays only the sampling), nor for fewer than
// kMinFilesToReadAhead files, which wait for the disk only a few times anyway.
inline constexpr size_t kMinFilesToReadAhead = 8;
void read_heads_ahead(const FileSystem& fs, const std::vector<std::string>& logical_paths);

inline constexpr size_t kResidencySamples = 8;  // files asked whether they are in the page cache

template <typename ResidencyOf>
Residency sampled_residency(size_t count, const ResidencyOf& residency_of) {
  size_t step = (count + kResidencySamples - 1) / kResidencySamples;  // at most kResidencySamples asked
  bool unknown = false;
  for (size_t i = 0; i < count; i += step) {
    std::optional<Residency> residency = residency_of(i);
    if (residency == Residency::NotCached) return Residency::NotCached;
    unknown = unknown || residency == Residency::Unknown;
  }
  return unknown ? Residency::Unknown : Residency::Cached;
}

}  // namespace depscan
