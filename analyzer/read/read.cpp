#include "analyzer/read/read.h"

#include <algorithm>
#include <optional>

#include "analyzer/input/file_source.h"
#include "analyzer/input/sniff.h"
#include "analyzer/read/elf_reader.h"
#include "analyzer/read/pe_reader.h"

namespace depscan {

namespace {

struct OpenedBinary {
  std::string host;
  std::unique_ptr<FileSource> file;
  FileFormat format = FileFormat::Unknown;
};

// `host` may be empty for an ELF file (only LIEF, for PE, opens the file by name).
Expected<OpenedBinary> with_format(std::string host, std::unique_ptr<FileSource> file) {
  auto head = file->read(0, std::min<uint64_t>(file->size(), 512));
  if (!head) return Error{"cannot read the start of the file"};
  FileFormat format = sniff_bytes(*head);
  return OpenedBinary{std::move(host), std::move(file), format};
}

Expected<OpenedBinary> open_binary(const FileSystem& fs, std::string_view logical) {
  auto file = fs.open(logical);
  if (!file) return Error{file.error()};
  auto opened = with_format(std::string(), std::move(*file));
  if (!opened || opened->format != FileFormat::Pe) return opened;
  auto host = fs.host_path(logical);  // LIEF opens a PE file by name
  if (!host) return Error{host.error()};
  opened->host = std::move(*host);
  return opened;
}

Expected<BinaryPtr> parse_binary(const OpenedBinary& opened, std::string_view logical, ReadOptions options) {
  std::string path(logical);
  Expected<Binary> parsed = Error{"not an ELF or PE file"};
  if (opened.format == FileFormat::Elf) parsed = read_elf(*opened.file, path, options);
  else if (opened.format == FileFormat::Pe) parsed = read_pe(opened.host, path);
  if (!parsed) return Error{parsed.error()};
  parsed->file_size = opened.file->size();
  return BinaryPtr(std::make_shared<const Binary>(std::move(*parsed)));
}

}  // namespace

Expected<BinaryPtr> read_binary(const FileSystem& fs, std::string_view logical, ReadOptions options) {
  auto opened = open_binary(fs, logical);
  if (!opened) return Error{opened.error()};
  return parse_binary(*opened, logical, options);
}

Expected<BinaryCache::Key> BinaryCache::key_of(std::string_view logical) const {
  auto info = fs_.stat(logical);
  if (!info) return Error{info.error()};
  if (info->kind != FileKind::Regular) return Error{"not a regular file"};
  return Key{info->device, info->inode};
}

std::optional<Expected<BinaryPtr>> BinaryCache::cached(Key key) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

Expected<BinaryPtr> BinaryCache::keep(Key key, Expected<BinaryPtr> result) {
  std::lock_guard lock(mutex_);
  return entries_.emplace(key, std::move(result)).first->second;
}

Expected<BinaryPtr> BinaryCache::get(std::string_view logical) {
  auto key = key_of(logical);
  if (!key) return Error{key.error()};
  if (auto hit = cached(*key)) return std::move(*hit);
  return keep(*key, read_binary(fs_, logical, options_));
}

void BinaryCache::prefetch_elf(std::string_view logical, std::unique_ptr<FileSource> file) {
  auto key = file ? Expected<Key>(Key{file->info().device, file->info().inode}) : key_of(logical);
  if (!key || cached(*key)) return;
  auto opened = file ? with_format(std::string(), std::move(file)) : open_binary(fs_, logical);
  if (opened && opened->format != FileFormat::Elf) return;
  keep(*key, opened ? parse_binary(*opened, logical, options_) : Expected<BinaryPtr>(Error{opened.error()}));
}

size_t BinaryCache::parsed_count() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace depscan
