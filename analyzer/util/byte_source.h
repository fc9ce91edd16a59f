// Bytes read on demand by file offset: the ELF reader asks for the headers and tables it needs
// from a buffer already in memory (MemorySource) or from a file read with pread (FileSource in
// input/file_source.h), and never for more. SourceRange is a checked window of a source, read
// piece by piece: the tree needs ten names of a string table that can hold a megabyte.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "analyzer/util/bytes.h"

namespace depscan {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // [offset, offset + length) of the source, valid as long as the source; nullopt when the range
  // is not inside the source or cannot be read.
  virtual std::optional<ByteView> read(uint64_t offset, uint64_t length) const = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(ByteView bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  std::optional<ByteView> read(uint64_t offset, uint64_t length) const override { return bytes_.sub(offset, length); }

 private:
  ByteView bytes_;
};

// The checks of ByteView over [offset, offset + size) of a source, each read fetching only what it
// asks for. Small reads are served from the last window read (4 KiB at most): walking a version
// chain or the names of a string table asks the source once per window, not once per field.
class SourceRange {
 public:
  SourceRange() = default;
  SourceRange(const ByteSource& source, uint64_t offset, uint64_t size) : source_(&source), offset_(offset), size_(size) {}

  uint64_t size() const { return size_; }
  uint64_t offset() const { return offset_; }  // in the source

  bool contains(uint64_t offset, uint64_t length) const {
    auto end = checked_add(offset, length);
    return end && *end <= size_;
  }

  std::optional<SourceRange> sub(uint64_t offset, uint64_t length) const {
    if (!contains(offset, length)) return std::nullopt;
    return SourceRange(*source_, offset_ + offset, length);
  }

  // The bytes of the whole range (or of a part of it), read at once.
  std::optional<ByteView> bytes() const { return source_ ? source_->read(offset_, size_) : std::optional<ByteView>(ByteView()); }
  std::optional<ByteView> bytes(uint64_t offset, uint64_t length) const {
    if (!contains(offset, length)) return std::nullopt;
    if (offset >= window_start_ && offset - window_start_ + length <= window_.size())
      return ByteView(window_.data() + (offset - window_start_), length);
    if (length > kWindow) return source_->read(offset_ + offset, length);
    uint64_t window = std::min(kWindow, size_ - offset);
    auto read = source_->read(offset_ + offset, window);
    if (!read) return source_->read(offset_ + offset, length);
    window_ = *read;
    window_start_ = offset;
    return ByteView(window_.data(), length);
  }

  template <class T>
  std::optional<T> read(uint64_t offset, bool little_endian = true) const {
    auto field = bytes(offset, sizeof(T));
    if (!field) return std::nullopt;
    return field->read<T>(0, little_endian);
  }

  // NUL-terminated string starting at offset; nullopt if no terminator before the end of the range.
  // Reads a window after offset, and a larger one only when the string is longer.
  std::optional<std::string_view> cstring(uint64_t offset, size_t max_length = SIZE_MAX) const {
    if (offset >= size_) return std::nullopt;
    uint64_t avail = size_ - offset;
    if (max_length < avail) avail = max_length;
    for (uint64_t window = kFirstWindow;; window *= 16) {
      uint64_t length = window < avail ? window : avail;
      auto text = bytes(offset, length);
      if (!text) return std::nullopt;
      if (auto found = text->cstring(0)) return found;
      if (length == avail) return std::nullopt;
    }
  }

 private:
  static constexpr uint64_t kFirstWindow = 256, kWindow = 4096;
  const ByteSource* source_ = nullptr;
  uint64_t offset_ = 0, size_ = 0;
  mutable ByteView window_;         // the last window read, valid as long as the source
  mutable uint64_t window_start_ = 0;  // its offset in the range
};

}  // namespace depscan
