// A read-only memory map of one regular file. Opening refuses anything that is not a regular
// file (FIFOs and devices are never read), so callers cannot hang on a pipe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "analyzer/input/fs.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan {

class MappedFile {
 public:
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  static Expected<std::unique_ptr<MappedFile>> open(const std::string& host_path);

  ByteView bytes() const { return ByteView(data_, size_); }
  // The range will be read soon: the kernel starts reading what is not in the page cache now, in
  // large requests (MADV_WILLNEED; the map is random-access by default, so a scan without this
  // would wait for the disk one page at a time). Not MADV_SEQUENTIAL: it drops pages from the
  // page cache behind the reader.
  void read_ahead(uint64_t offset, uint64_t length) const;
  const FileInfo& info() const { return info_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  FileInfo info_;
};

}  // namespace depscan
