// Small string helpers shared by the readers and parsers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace depscan {

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

}  // namespace depscan
