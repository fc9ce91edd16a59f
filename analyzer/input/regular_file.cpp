#include "analyzer/input/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace depscan {

Expected<OpenedFile> open_regular_file(const std::string& host_path) {
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
  return OpenedFile{fd, FileInfo{FileKind::Regular, static_cast<uint64_t>(st.st_size), static_cast<uint64_t>(st.st_dev),
                                 static_cast<uint64_t>(st.st_ino), static_cast<uint32_t>(st.st_mode)}};
}

}  // namespace depscan
