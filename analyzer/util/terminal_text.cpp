#include "analyzer/util/terminal_text.h"

#include <fmt/format.h>

#include "analyzer/util/strings.h"

namespace depscan {
namespace {

// The length of a colour sequence (ESC [ digits and semicolons m) at `at`, or 0.
size_t colour_sequence_at(std::string_view text, size_t at) {
  if (at + 2 >= text.size() || text[at] != '\033' || text[at + 1] != '[') return 0;
  size_t i = at + 2;
  while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == ';')) ++i;
  return i < text.size() && text[i] == 'm' ? i + 1 - at : 0;
}

bool is_control(unsigned char c, bool keep_lines) {
  return (c < 0x20 && !(keep_lines && (c == '\n' || c == '\t'))) || c == 0x7f;
}

// The code point of a well-formed UTF-8 sequence of `length` bytes at `at`.
char32_t code_point_at(std::string_view text, size_t at, size_t length) {
  static constexpr unsigned char lead_bits[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
  char32_t point = static_cast<unsigned char>(text[at]) & lead_bits[length];
  for (size_t k = 1; k < length; ++k) point = (point << 6) | (static_cast<unsigned char>(text[at + k]) & 0x3f);
  return point;
}

// Code points a terminal would act on, or that hide or reorder what is shown, so a name can read as
// another: C1 controls (U+009B is CSI), the bidirectional formatting characters, the zero-width
// ones and the line and paragraph separators.
bool is_hidden_control(char32_t point) {
  return (point >= 0x80 && point <= 0x9f) || point == 0x61c || (point >= 0x200b && point <= 0x200f) ||
         (point >= 0x2028 && point <= 0x202e) || (point >= 0x2060 && point <= 0x2064) ||
         (point >= 0x2066 && point <= 0x2069) || point == 0xfeff;
}

// How many bytes from `at` are printable ASCII, kept as they are.
size_t plain_run(std::string_view text, size_t at, bool keep_lines) {
  size_t end = at;
  while (end < text.size() && static_cast<unsigned char>(text[end]) < 0x80 &&
         !is_control(static_cast<unsigned char>(text[end]), keep_lines))
    ++end;
  return end - at;
}

std::string escaped(std::string_view text, bool keep_colour, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (size_t run = plain_run(text, i, keep_lines)) {
      out.append(text.substr(i, run));
      i += run - 1;
    } else if (size_t n = keep_colour ? colour_sequence_at(text, i) : 0) {
      out.append(text.substr(i, n));
      i += n - 1;
    } else if (is_control(byte, keep_lines)) {
      out += fmt::format("\\x{:02x}", byte);
    } else if (size_t length = utf8_sequence_length(text, i); length == 0) {
      out += fmt::format("\\x{:02x}", byte);  // not UTF-8: a lone 0x9b is CSI to an 8-bit terminal
    } else {
      char32_t point = code_point_at(text, i, length);
      if (is_hidden_control(point)) out += fmt::format("\\u{:04x}", static_cast<uint32_t>(point));
      else out.append(text.substr(i, length));
      i += length - 1;
    }
  }
  return out;
}

}  // namespace

std::string terminal_safe(std::string_view text, bool keep_colour) { return escaped(text, keep_colour, true); }

std::string one_line(std::string_view text) { return escaped(text, false, false); }

}  // namespace depscan
