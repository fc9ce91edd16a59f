// Opening a file for reading only if it is a regular file: a FIFO is opened without waiting for
// a writer (O_NONBLOCK) and then refused, as are devices and directories.
#pragma once

#include <string>

#include "analyzer/input/fs.h"
#include "analyzer/util/expected.h"

namespace depscan {

struct OpenedFile {
  int fd = -1;  // the caller closes it
  FileInfo info;
};

Expected<OpenedFile> open_regular_file(const std::string& host_path);

}  // namespace depscan
