#include "analyzer/input/sniff.h"

#include <algorithm>
#include <cstring>

namespace depscan {
namespace {

constexpr uint64_t kHeadBytes = 512;  // enough for every magic and the ELF header's e_type

}  // namespace

FileFormat sniff_bytes(ByteView head) {
  auto starts = [&](const char* magic, size_t n) {
    return head.size() >= n && std::memcmp(head.data(), magic, n) == 0;
  };
  if (starts("\x7f" "ELF", 4)) return FileFormat::Elf;
  if (starts("MZ", 2) && head.size() >= 64) return FileFormat::Pe;
  if (starts("PK\x03\x04", 4) || starts("PK\x05\x06", 4)) return FileFormat::Zip;
  if (starts("!<arch>\n", 8)) return FileFormat::Ar;
  if (starts("\x50\xed\x55\xba", 4)) return FileFormat::Fatbin;
  if (head.size() >= 262 && std::memcmp(head.data() + 257, "ustar", 5) == 0) return FileFormat::Tar;
  if (starts("\x1f\x8b", 2) || starts("\xfd" "7zXZ\0", 6) || starts("\x28\xb5\x2f\xfd", 4) || starts("BZh", 3))
    return FileFormat::Compressed;
  return FileFormat::Unknown;
}

std::optional<unsigned> elf_type_of(ByteView head) {
  constexpr size_t kDataByte = 5, kTypeAt = 16;
  auto data = head.read<uint8_t>(kDataByte);
  if (!data) return std::nullopt;
  auto type = head.read<uint16_t>(kTypeAt, /*little_endian=*/*data != 2);  // EI_DATA 2: ELFDATA2MSB
  if (!type) return std::nullopt;
  return *type;
}

Expected<Sniffed> sniff(const FileSystem& fs, std::string_view logical) {
  auto sniffed = sniff_and_keep_open(fs, logical);
  if (!sniffed) return Error{sniffed.error()};
  return sniffed->sniffed;
}

Expected<SniffedFile> sniff_and_keep_open(const FileSystem& fs, std::string_view logical) {
  auto info = fs.stat(logical);
  if (!info) return Error{info.error()};
  SniffedFile out{{FileFormat::Unknown, *info, std::nullopt}, nullptr};
  switch (info->kind) {
    case FileKind::Directory: out.sniffed.format = FileFormat::Directory; return out;
    case FileKind::Regular: break;
    case FileKind::Fifo: return Error{"is a FIFO, not a regular file (not opened)"};
    case FileKind::CharDevice:
    case FileKind::BlockDevice: return Error{"is a device, not a regular file (not opened)"};
    case FileKind::Socket: return Error{"is a socket, not a regular file (not opened)"};
    case FileKind::Other: return Error{"is not a regular file (not opened)"};
  }
  auto file = fs.open(logical);
  if (!file) return Error{file.error()};
  auto head = (*file)->read(0, std::min<uint64_t>((*file)->size(), kHeadBytes));
  if (!head) return Error{"cannot read the start of the file"};
  out.sniffed.format = sniff_bytes(*head);
  if (out.sniffed.format == FileFormat::Elf) out.sniffed.elf_type = elf_type_of(*head);
  out.file = std::move(*file);
  return out;
}

const char* to_string(FileFormat format) {
  switch (format) {
    case FileFormat::Elf: return "ELF";
    case FileFormat::Pe: return "PE";
    case FileFormat::Zip: return "zip";
    case FileFormat::Tar: return "tar";
    case FileFormat::Compressed: return "compressed";
    case FileFormat::Ar: return "ar archive";
    case FileFormat::Fatbin: return "fatbin";
    case FileFormat::Directory: return "directory";
    case FileFormat::Unknown: return "unknown";
  }
  return "?";
}

}  // namespace depscan
