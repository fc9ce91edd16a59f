#include "analyzer/util/terminal_text.h"

#include <fmt/format.h>

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

// A C1 control character (U+0080 to U+009F) in UTF-8: a terminal may read U+009B as CSI.
bool is_c1_at(std::string_view text, size_t at) {
  return at + 1 < text.size() && static_cast<unsigned char>(text[at]) == 0xc2 &&
         static_cast<unsigned char>(text[at + 1]) >= 0x80 && static_cast<unsigned char>(text[at + 1]) <= 0x9f;
}

std::string escaped(std::string_view text, bool keep_colour, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (size_t n = keep_colour ? colour_sequence_at(text, i) : 0) {
      out.append(text.substr(i, n));
      i += n - 1;
    } else if (is_control(static_cast<unsigned char>(text[i]), keep_lines)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
    } else if (is_c1_at(text, i)) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string terminal_safe(std::string_view text, bool keep_colour) { return escaped(text, keep_colour, true); }

std::string one_line(std::string_view text) { return escaped(text, false, false); }

}  // namespace depscan
