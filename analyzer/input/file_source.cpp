#include "analyzer/input/file_source.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "analyzer/input/regular_file.h"

namespace depscan {
namespace {

// pread until `length` bytes are in or the file ends; false on an error or a short file.
bool read_fully(int fd, uint8_t* out, uint64_t length, uint64_t offset) {
  while (length > 0) {
    ssize_t got = ::pread(fd, out, length, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    offset += static_cast<uint64_t>(got);
    length -= static_cast<uint64_t>(got);
  }
  return true;
}

}  // namespace

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<std::unique_ptr<FileSource>> FileSource::open(const std::string& host_path) {
  auto opened = open_regular_file(host_path);
  if (!opened) return Error{opened.error()};
  std::unique_ptr<FileSource> file(new FileSource());
  file->fd_ = opened->fd;
  file->info_ = opened->info;
  return file;
}

const FileSource::Buffer* FileSource::fetch(uint64_t offset, uint64_t length) const {
  Buffer b{offset, length, std::make_unique_for_overwrite<uint8_t[]>(length)};
  if (!read_fully(fd_, b.bytes.get(), length, offset)) return nullptr;
  buffers_.push_back(std::move(b));
  if (buffers_.size() == kWalked + 1)
    for (size_t i = 0; i < kWalked; ++i) index_blocks(i);
  if (buffers_.size() > kWalked) index_blocks(buffers_.size() - 1);
  return &buffers_.back();
}

void FileSource::index_blocks(size_t buffer) const {
  const Buffer& b = buffers_[buffer];
  for (uint64_t block = b.offset / kBlock; block * kBlock < b.offset + b.size; ++block) {
    Holders& h = by_block_[block];
    if (h.count < h.buffers.size()) {
      h.buffers[h.count++] = buffer;
    } else {  // rare: the oldest gives way, at worst costing a read again
      h.buffers[h.next] = buffer;
      h.next = static_cast<uint8_t>((h.next + 1) % h.buffers.size());
    }
  }
}

const FileSource::Buffer* FileSource::find(uint64_t offset, uint64_t end) const {
  if (buffers_.size() <= kWalked) {
    for (const Buffer& b : buffers_)
      if (offset >= b.offset && end <= b.offset + b.size) return &b;
    return nullptr;
  }
  auto it = by_block_.find(offset / kBlock);
  if (it == by_block_.end()) return nullptr;
  for (uint8_t i = 0; i < it->second.count; ++i) {
    const Buffer& b = buffers_[it->second.buffers[i]];
    if (offset >= b.offset && end <= b.offset + b.size) return &b;
  }
  return nullptr;
}

std::optional<ByteView> FileSource::read(uint64_t offset, uint64_t length) const {
  auto end = checked_add(offset, length);
  if (!end || *end > info_.size) return std::nullopt;
  if (length == 0) return ByteView();
  if (const Buffer* cached = find(offset, *end)) return ByteView(cached->bytes.get() + (offset - cached->offset), length);
  const Buffer* b = nullptr;
  if (length <= kBlock) {
    uint64_t start = offset - offset % kBlock;
    uint64_t stop = std::min(info_.size, *end + (kBlock - *end % kBlock) % kBlock);
    b = fetch(start, stop - start);
  } else {
    b = fetch(offset, length);
  }
  if (!b) return std::nullopt;
  return ByteView(b->bytes.get() + (offset - b->offset), length);
}

}  // namespace depscan
