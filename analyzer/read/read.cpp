#include "analyzer/read/read.h"

#include "analyzer/input/mapped_file.h"
#include "analyzer/input/sniff.h"
#include "analyzer/read/elf_reader.h"
#include "analyzer/read/pe_reader.h"

namespace depscan {

Expected<BinaryPtr> read_binary(const FileSystem& fs, std::string_view logical, ReadOptions options) {
  auto host = fs.host_path(logical);
  if (!host) return Error{host.error()};
  auto file = MappedFile::open(*host);
  if (!file) return Error{file.error()};
  ByteView bytes = (*file)->bytes();
  FileFormat format = sniff_bytes(bytes.sub(0, std::min<size_t>(bytes.size(), 512)).value_or(ByteView()));
  std::string path(logical);
  Expected<Binary> parsed = Error{"not an ELF or PE file"};
  if (format == FileFormat::Elf) parsed = read_elf(bytes, path, options.symbols);
  else if (format == FileFormat::Pe) parsed = read_pe(*host, path);
  if (!parsed) return Error{parsed.error()};
  parsed->file_size = bytes.size();
  return BinaryPtr(std::make_shared<const Binary>(std::move(*parsed)));
}

Expected<BinaryPtr> BinaryCache::get(std::string_view logical) {
  auto info = fs_.stat(logical);
  if (!info) return Error{info.error()};
  if (info->kind != FileKind::Regular) return Error{"not a regular file"};
  Key key{info->device, info->inode};
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
  }
  auto result = read_binary(fs_, logical, options_);
  std::lock_guard lock(mutex_);
  return entries_.emplace(key, std::move(result)).first->second;
}

size_t BinaryCache::parsed_count() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace depscan
