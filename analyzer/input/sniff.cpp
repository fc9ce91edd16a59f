#include "analyzer/input/sniff.h"

#include <cstring>

namespace depscan {

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
  return FileFormat::Unknown;
}

std::optional<unsigned> elf_type_of(ByteView head) {
  constexpr size_t kTypeEnd = 18, kDataByte = 5, kTypeAt = 16;
  if (head.size() < kTypeEnd) return std::nullopt;
  bool big_endian = head.data()[kDataByte] == 2;  // EI_DATA: ELFDATA2MSB
  unsigned low = head.data()[kTypeAt + (big_endian ? 1 : 0)], high = head.data()[kTypeAt + (big_endian ? 0 : 1)];
  return low | high << 8;
}

Expected<Sniffed> sniff(const FileSystem& fs, std::string_view logical) {
  auto info = fs.stat(logical);
  if (!info) return Error{info.error()};
  Sniffed out{FileFormat::Unknown, *info, std::nullopt};
  switch (info->kind) {
    case FileKind::Directory: out.format = FileFormat::Directory; return out;
    case FileKind::Regular: break;
    case FileKind::Fifo: return Error{"is a FIFO, not a regular file (not opened)"};
    case FileKind::CharDevice:
    case FileKind::BlockDevice: return Error{"is a device, not a regular file (not opened)"};
    case FileKind::Socket: return Error{"is a socket, not a regular file (not opened)"};
    case FileKind::Other: return Error{"is not a regular file (not opened)"};
  }
  auto head = fs.read_text(logical, 512);
  if (!head) return Error{head.error()};
  ByteView bytes(reinterpret_cast<const uint8_t*>(head->data()), head->size());
  out.format = sniff_bytes(bytes);
  if (out.format == FileFormat::Elf) out.elf_type = elf_type_of(bytes);
  return out;
}

const char* to_string(FileFormat format) {
  switch (format) {
    case FileFormat::Elf: return "ELF";
    case FileFormat::Pe: return "PE";
    case FileFormat::Zip: return "zip";
    case FileFormat::Tar: return "tar";
    case FileFormat::Ar: return "ar archive";
    case FileFormat::Fatbin: return "fatbin";
    case FileFormat::Directory: return "directory";
    case FileFormat::Unknown: return "unknown";
  }
  return "?";
}

}  // namespace depscan
