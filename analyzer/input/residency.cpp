#include "analyzer/input/residency.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

namespace depscan {

Residency first_page_residency(const std::string& host_path) {
  int fd = ::open(host_path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Residency::Unknown;
  char byte;
  iovec target{&byte, 1};
  ssize_t got = ::preadv2(fd, &target, 1, 0, RWF_NOWAIT);
  int err = errno;
  ::close(fd);
  if (got >= 0) return Residency::Cached;
  return err == EAGAIN ? Residency::NotCached : Residency::Unknown;
}

}  // namespace depscan
