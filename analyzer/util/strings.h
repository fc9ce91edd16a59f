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

}  // namespace depscan
