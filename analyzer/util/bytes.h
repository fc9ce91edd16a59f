// Bounds-checked access to raw bytes (ELF tables, ld.so.cache, fatbin headers, zip members).
// Nothing here can read past the end of the view: every read returns std::nullopt instead.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace depscan {

// a + b, or nullopt when it wraps.
inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

class ByteView {
 public:
  ByteView() = default;
  ByteView(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  explicit ByteView(std::span<const uint8_t> s) : data_(s.data()), size_(s.size()) {}

  size_t size() const { return size_; }
  const uint8_t* data() const { return data_; }
  bool empty() const { return size_ == 0; }

  // True when [offset, offset + length) lies inside the view.
  bool contains(uint64_t offset, uint64_t length) const {
    auto end = checked_add(offset, length);
    return end && *end <= size_;
  }

  std::optional<ByteView> sub(uint64_t offset, uint64_t length) const {
    if (!contains(offset, length)) return std::nullopt;
    return ByteView(data_ + offset, static_cast<size_t>(length));
  }

  // Reads a trivially copyable value at offset, little- or big-endian as stored.
  template <class T>
  std::optional<T> read(uint64_t offset, bool little_endian = true) const {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!contains(offset, sizeof(T))) return std::nullopt;
    T value;
    std::memcpy(&value, data_ + offset, sizeof(T));
    if constexpr (std::is_integral_v<T> && sizeof(T) > 1) {
      if (!little_endian) value = byteswap(value);
    }
    return value;
  }

  // NUL-terminated string starting at offset; nullopt if no terminator before the end.
  std::optional<std::string_view> cstring(uint64_t offset, size_t max_length = SIZE_MAX) const {
    if (offset >= size_) return std::nullopt;
    size_t avail = size_ - static_cast<size_t>(offset);
    if (max_length < avail) avail = max_length;
    const void* nul = std::memchr(data_ + offset, 0, avail);
    if (!nul) return std::nullopt;
    return std::string_view(reinterpret_cast<const char*>(data_ + offset),
                            static_cast<const uint8_t*>(nul) - (data_ + offset));
  }

  std::string_view as_chars() const {
    return std::string_view(reinterpret_cast<const char*>(data_), size_);
  }

 private:
  template <class T>
  static T byteswap(T v) {
    using U = std::make_unsigned_t<T>;
    U u = static_cast<U>(v), r = 0;
    for (size_t i = 0; i < sizeof(T); ++i) r = static_cast<U>((r << 8) | ((u >> (8 * i)) & 0xff));
    return static_cast<T>(r);
  }

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace depscan
