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
  // The range will be read soon, from start to end. Faults in it read ahead again (MADV_NORMAL;
  // the map is random-access by default). When its first page is not in the page cache, the
  // kernel is asked to start reading the whole range now (MADV_WILLNEED, in pieces of the
  // default read-ahead window, the most one request reads). Not MADV_SEQUENTIAL: it drops pages
  // from the page cache behind the reader.
  void read_ahead(uint64_t offset, uint64_t length) const;
  const FileInfo& info() const { return info_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  FileInfo info_;
};

}  // namespace depscan
