#include "analyzer/input/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace depscan {

MappedFile::~MappedFile() {
  if (data_ && size_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

Expected<std::unique_ptr<MappedFile>> MappedFile::open(const std::string& host_path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  int fd = ::open(host_path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Error{std::strerror(errno)};
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error{std::strerror(err)};
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file"};
  }
  std::unique_ptr<MappedFile> file(new MappedFile());
  file->info_ = FileInfo{FileKind::Regular, static_cast<uint64_t>(st.st_size),
                         static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                         static_cast<uint32_t>(st.st_mode)};
  file->size_ = static_cast<size_t>(st.st_size);
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
    // read-ahead themselves (advise_scan).
    ::madvise(map, file->size_, MADV_RANDOM);
  }
  ::close(fd);
  return file;
}

void MappedFile::advise_scan(uint64_t offset, uint64_t length) const {
  if (!data_ || offset >= size_) return;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t start = offset - offset % page;
  uint64_t end = std::min<uint64_t>(size_, offset + std::min<uint64_t>(length, size_ - offset));
  ::madvise(const_cast<uint8_t*>(data_) + start, end - start, MADV_NORMAL);
}

}  // namespace depscan
