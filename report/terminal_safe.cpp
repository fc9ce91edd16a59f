#include <fmt/format.h>

#include "report/report.h"

namespace depscan {
namespace {

// The length of a colour sequence (ESC [ digits and semicolons m) at `at`, or 0.
size_t colour_sequence_at(std::string_view text, size_t at) {
  if (at + 2 >= text.size() || text[at] != '\033' || text[at + 1] != '[') return 0;
  size_t i = at + 2;
  while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == ';')) ++i;
  return i < text.size() && text[i] == 'm' ? i + 1 - at : 0;
}

bool is_control(unsigned char c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; }

}  // namespace

std::string terminal_safe(std::string_view text, bool keep_colour) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (size_t n = keep_colour ? colour_sequence_at(text, i) : 0) {
      out.append(text.substr(i, n));
      i += n - 1;
    } else if (is_control(static_cast<unsigned char>(text[i]))) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string for_output(std::string_view format, std::string rendered, const TextOptions& options) {
  if (format == "text") return terminal_safe(rendered, options.color);
  if (format == "github") return terminal_safe(rendered, false);
  return rendered;
}

}  // namespace depscan
