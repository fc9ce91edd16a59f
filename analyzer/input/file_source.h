// A regular file read with pread, a few kilobytes at a time. Reading an ELF file's dynamic-linking
// view this way costs a handful of small reads, where a memory map of the whole file costs the
// map, a page fault for every page touched and an unmap of hundreds of megabytes of address space.
// Opening refuses anything that is not a regular file (FIFOs and devices are never read).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/util/byte_source.h"
#include "analyzer/util/expected.h"

namespace depscan {

class FileSource final : public ByteSource {
 public:
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  ~FileSource() override;

  static Expected<std::unique_ptr<FileSource>> open(const std::string& host_path);

  uint64_t size() const override { return info_.size; }
  // Every range read stays in memory and answers later reads inside it: among the first few
  // buffers by a walk, beyond them by the blocks they cover (TensorFlow's libtensorflow_cc.so.2 has
  // 451,000 symbol names in 20,000 blocks). A read
  // of up to a block fetches the aligned blocks around it (the next string is usually there); a
  // larger one, just itself. Not thread-safe: one reader at a time.
  std::optional<ByteView> read(uint64_t offset, uint64_t length) const override;
  const FileInfo& info() const { return info_; }
  int descriptor() const { return fd_; }

 private:
  static constexpr uint64_t kBlock = 4096;
  static constexpr size_t kWalked = 16;  // buffers found by a walk; the block index starts after them
  struct Buffer {
    uint64_t offset = 0, size = 0;
    std::unique_ptr<uint8_t[]> bytes;
  };
  FileSource() = default;
  const Buffer* fetch(uint64_t offset, uint64_t length) const;
  const Buffer* find(uint64_t offset, uint64_t end) const;
  void index_blocks(size_t buffer) const;

  int fd_ = -1;
  FileInfo info_;
  mutable std::vector<Buffer> buffers_;
  // Block number -> the latest buffers holding part of it (a read spanning two blocks may sit in a
  // buffer that starts a block earlier or at its own block): any buffer holding a read holds its
  // first block.
  struct Holders {
    std::array<size_t, 4> buffers{};
    uint8_t count = 0, next = 0;
  };
  mutable std::unordered_map<uint64_t, Holders> by_block_;
};

}  // namespace depscan
