// Decides what a file is from its type and first bytes, before any reader touches it.
// A FIFO, device or socket is refused from stat alone, without opening it for reading.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "analyzer/input/file_source.h"
#include "analyzer/input/fs.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan {

// Compressed: gzip, xz, zstd or bzip2 data (a compressed tar such as `docker save | gzip`).
enum class FileFormat { Elf, Pe, Zip, Tar, Compressed, Ar, Fatbin, Directory, Unknown };

struct Sniffed {
  FileFormat format = FileFormat::Unknown;
  FileInfo info;
  std::optional<unsigned> elf_type;  // e_type of an ELF file whose head holds one (ET_DYN = 3, ...)
};

// Classifies the first bytes of a file (at least 4 bytes are needed for any answer).
FileFormat sniff_bytes(ByteView head);

// e_type of an ELF header in either byte order, if the head is long enough to hold one.
std::optional<unsigned> elf_type_of(ByteView head);

// stat, refuse non-regular files, then read the head and classify.
Expected<Sniffed> sniff(const FileSystem& fs, std::string_view logical);

// sniff() that hands back the regular file it opened (null for a directory), so that a file
// found to be a root can be read through the same descriptor instead of being opened again.
struct SniffedFile {
  Sniffed sniffed;
  std::unique_ptr<FileSource> file;
};
Expected<SniffedFile> sniff_and_keep_open(const FileSystem& fs, std::string_view logical);

const char* to_string(FileFormat format);

}  // namespace depscan
