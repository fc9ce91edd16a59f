// Decides what a file is from its type and first bytes, before any reader touches it.
// A FIFO, device or socket is refused from stat alone, without opening it for reading.
#pragma once

#include <string_view>

#include "analyzer/input/fs.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan {

enum class FileFormat { Elf, Pe, Zip, Tar, Ar, Fatbin, Directory, Unknown };

struct Sniffed {
  FileFormat format = FileFormat::Unknown;
  FileInfo info;
};

// Classifies the first bytes of a file (at least 4 bytes are needed for any answer).
FileFormat sniff_bytes(ByteView head);

// stat, refuse non-regular files, then read the head and classify.
Expected<Sniffed> sniff(const FileSystem& fs, std::string_view logical);

const char* to_string(FileFormat format);

}  // namespace depscan
