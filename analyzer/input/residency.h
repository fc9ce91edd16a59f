// Whether reading a file would wait for the disk. A scan reads its roots in parallel only when
// it would: with the files in the page cache, two threads read no faster than one (they share
// the process's memory map and allocator) and the threads cost more than they save.
#pragma once

#include <string>

namespace depscan {

enum class Residency { Cached, NotCached, Unknown };

// Asks for the first byte of the file with RWF_NOWAIT: the kernel answers from the page cache or
// refuses at once (and starts reading the page in the background). Unknown when the file cannot
// be opened or its file system cannot answer without waiting (procfs, some FUSE file systems).
Residency first_page_residency(const std::string& host_path);

}  // namespace depscan
