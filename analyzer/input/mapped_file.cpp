#include "analyzer/input/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "analyzer/input/regular_file.h"

namespace depscan {

MappedFile::~MappedFile() {
  if (data_ && size_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

Expected<std::unique_ptr<MappedFile>> MappedFile::open(const std::string& host_path) {
  auto opened = open_regular_file(host_path);
  if (!opened) return Error{opened.error()};
  int fd = opened->fd;
  std::unique_ptr<MappedFile> file(new MappedFile());
  file->info_ = opened->info;
  file->size_ = static_cast<size_t>(opened->info.size);
  if (file->size_ > 0) {
    void* map = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Error{std::string("cannot map: ") + std::strerror(err)};
    }
    file->data_ = static_cast<const uint8_t*>(map);
    // Readers touch a few scattered pages (headers, tables, fatbin entry headers) of files of
    // hundreds of MB: fault-around would map pages nobody reads. Sequential scans ask for
    // read-ahead themselves (read_ahead).
    ::madvise(map, file->size_, MADV_RANDOM);
  }
  ::close(fd);
  return file;
}

void MappedFile::read_ahead(uint64_t offset, uint64_t length) const {
  if (!data_ || offset >= size_) return;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t start = offset - offset % page;
  uint64_t end = std::min<uint64_t>(size_, offset + std::min<uint64_t>(length, size_ - offset));
  uint8_t* base = const_cast<uint8_t*>(data_);
  ::madvise(base + start, end - start, MADV_NORMAL);  // faults here read ahead again
  unsigned char resident = 0;
  if (::mincore(base + start, page, &resident) == 0 && (resident & 1)) return;  // cached: nothing to ask for
  // One request reads at most the device's read-ahead window (128 KiB by default): ask in pieces.
  constexpr uint64_t kPiece = uint64_t{128} << 10;
  for (uint64_t at = start; at < end; at += kPiece) ::madvise(base + at, std::min(kPiece, end - at), MADV_WILLNEED);
}

}  // namespace depscan
