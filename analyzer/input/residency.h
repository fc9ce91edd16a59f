// Whether reading a file would wait for the disk. A scan reads its roots in parallel only when
// it would: with the files in the page cache, two threads read no faster than one (they share
// the process's memory map and allocator) and the threads cost more than they save.
#pragma once

#include <string>
#include <vector>

#include "analyzer/input/fs.h"

namespace depscan {

enum class Residency { Cached, NotCached, Unknown };
enum class Page { First, Last };

// Asks for one byte of the file's first or last page with RWF_NOWAIT: the kernel answers from the
// page cache or refuses at once (and starts reading the page in the background). Unknown when the
// file cannot be opened or its file system cannot answer without waiting (procfs, some FUSE file
// systems) or not regular. It opens the file before it can tell (O_NONBLOCK): callers ask only
// about files stat has shown to be regular.
Residency page_residency(const std::string& host_path, Page page);

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

}  // namespace depscan
