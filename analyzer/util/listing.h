// Short human lists for finding messages: "a, b, c and 12 more".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace depscan {

inline std::string join_limited(const std::vector<std::string>& items, size_t limit = 8) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > limit) out += " and " + std::to_string(items.size() - limit) + " more";
  return out;
}

// The last `limit` items (the newest, for version lists in definition order).
inline std::string join_last(const std::vector<std::string>& items, size_t limit = 8) {
  if (items.size() <= limit) return join_limited(items, limit);
  std::string out = "... ";
  for (size_t i = items.size() - limit; i < items.size(); ++i)
    out += (i > items.size() - limit ? ", " : "") + items[i];
  return out;
}

// `text` cut to about `limit` bytes, at the start of a UTF-8 character, with "..." after it: a
// hostile input may hold megabytes.
inline std::string shortened(std::string_view text, size_t limit = 120) {
  if (text.size() <= limit) return std::string(text);
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

}  // namespace depscan
