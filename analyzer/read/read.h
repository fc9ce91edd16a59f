// The one way downstream code gets a Binary: sniff the file, then hand it to the reader for
// its format (the memory-mapped ELF reader, or LIEF for PE). Nothing downstream knows which
// reader ran. Each file is read once per run: BinaryCache keys results by device and inode.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "analyzer/input/file_source.h"
#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/read/read_options.h"
#include "analyzer/util/expected.h"

namespace depscan {

using BinaryPtr = std::shared_ptr<const Binary>;


// Reads one file (ELF or PE). The error is one line naming the problem, without the path.
Expected<BinaryPtr> read_binary(const FileSystem& fs, std::string_view logical, ReadOptions options = {});

class BinaryCache {
 public:
  explicit BinaryCache(const FileSystem& fs, ReadOptions options = {}) : fs_(fs), options_(options) {}
  // Thread-safe. The same (device, inode) is parsed once; its Binary's path is the first
  // logical path it was read by.
  Expected<BinaryPtr> get(std::string_view logical);
  // Thread-safe. Reads and keeps `logical` if it is an ELF file; anything else is left to get(),
  // because PE files go through LIEF one at a time. `opened`: the file, already open (it is
  // closed when read).
  void prefetch_elf(std::string_view logical, std::unique_ptr<FileSource> opened = nullptr);
  const FileSystem& fs() const { return fs_; }
  size_t parsed_count() const;

 private:
  struct Key {
    uint64_t device, inode;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.device * 1000003u ^ k.inode); }
  };
  Expected<Key> key_of(std::string_view logical) const;
  std::optional<Expected<BinaryPtr>> cached(Key key) const;
  Expected<BinaryPtr> keep(Key key, Expected<BinaryPtr> result);

  const FileSystem& fs_;
  ReadOptions options_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, Expected<BinaryPtr>, KeyHash> entries_;
};

}  // namespace depscan
