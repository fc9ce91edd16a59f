// Small string helpers shared by the readers and parsers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace depscan {

// a + b in one allocation.
inline std::string concat(std::string_view a, std::string_view b) {
  std::string out;
  out.reserve(a.size() + b.size());
  out.append(a).append(b);
  return out;
}

// `file` is `name` followed by "." and more: "libfoo.so.1.2" or "libfoo.so.1" for "libfoo.so".
inline bool is_dotted_extension_of(std::string_view file, std::string_view name) {
  return file.size() > name.size() && file.starts_with(name) && file[name.size()] == '.';
}

// `file` is `name` itself or a dotted extension of it; "libfoo.son" is neither.
inline bool is_name_or_dotted_extension_of(std::string_view file, std::string_view name) {
  return file == name || is_dotted_extension_of(file, name);
}

inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `text` with its ASCII letters in lower case ("NVCUDA.DLL" -> "nvcuda.dll").
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

// a == b with ASCII letters compared without case ("cublasLt" and "cublaslt").
inline bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

// `text` without the ASCII white space at its ends.
inline std::string_view trim_spaces(std::string_view text) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// The non-empty pieces of `text` between any of the `separators` characters.
inline std::vector<std::string> split_nonempty(std::string_view text, std::string_view separators) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find_first_of(separators, i);
    if (j == std::string_view::npos) j = text.size();
    if (j > i) out.emplace_back(text.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The lines of `text` without their "\n" or "\r\n" ends (views into `text`).
inline std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view line = text.substr(i, j - i);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    i = j + 1;
  }
  return lines;
}

// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF) that starts at `at`, or 0 when the byte there starts none.
inline size_t utf8_sequence_length(std::string_view text, size_t at) {
  unsigned char c = static_cast<unsigned char>(text[at]);
  size_t length = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (length == 0 || at + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k)
    if ((static_cast<unsigned char>(text[at + k]) & 0xc0) != 0x80) return 0;
  if (length >= 3) {
    unsigned char second = static_cast<unsigned char>(text[at + 1]);
    if ((c == 0xe0 && second < 0xa0) || (c == 0xed && second > 0x9f) || (c == 0xf0 && second < 0x90) ||
        (c == 0xf4 && second > 0x8f))
      return 0;
  }
  return length;
}

// `text` with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD.
// File names are any bytes; JSON and XML reports are UTF-8.
inline std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (size_t length = utf8_sequence_length(text, i)) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

}  // namespace depscan
