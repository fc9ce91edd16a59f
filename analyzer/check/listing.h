// Short human lists for finding messages: "a, b, c and 12 more".
#pragma once

#include <string>
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

}  // namespace depscan
