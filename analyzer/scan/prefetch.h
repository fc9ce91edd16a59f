// Reads the roots of a scan into the BinaryCache before the resolver runs: in parallel (16
// threads, or one per usable CPU if more) when the files are not in the page cache, in this
// thread when they are (see analyzer/input/residency.h).
// The Resolver itself is not thread-safe and stays sequential: it then finds every root (and
// most of the libraries, which are roots themselves in a directory audit) already parsed, so a
// directory audit spends its parallel time where the time goes (reading) and still builds one
// graph with one set of objects. Each file is read once: the cache is keyed by device and inode.
// Only ELF files are read in parallel (the memory-mapped reader); PE files are parsed by LIEF,
// whose thread safety is not documented, so the resolver reads them later, sequentially.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/read/read.h"

namespace depscan {

// How many threads read `paths` when the caller does not say: one when their last pages are in the
// page cache (their first pages were just read to tell what the files are), the disk threads when
// they are not, or when the cache cannot say for many files.
// opened[i]: paths[i] already open, asked through its descriptor.
unsigned default_read_threads(const BinaryCache& cache, const std::vector<std::string>& paths,
                              const std::vector<std::unique_ptr<FileSource>>& opened = {});

// Files already open, by logical path: read through their descriptors instead of opened again.
using OpenFiles = std::unordered_map<std::string, std::unique_ptr<FileSource>>;

// Shows "reading N/M" on standard error when it is a terminal and there are many files.
// threads: how many read at once; 0 asks default_read_threads().
void prefetch_binaries(BinaryCache& cache, const std::vector<std::string>& paths, unsigned threads = 0,
                       OpenFiles open_files = {});

}  // namespace depscan
