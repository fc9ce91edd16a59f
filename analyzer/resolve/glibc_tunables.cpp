#include "analyzer/resolve/glibc_tunables.h"

#include <algorithm>
#include <vector>

namespace depscan {
namespace {

// An unsigned number as _dl_strtoul reads it (decimal, 0x hex, 0 octal), the whole value or nothing.
std::optional<uint64_t> parse_number(std::string_view text) {
  uint64_t base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) base = 16, text.remove_prefix(2);
  else if (text.size() > 1 && text[0] == '0') base = 8, text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    uint64_t digit = c >= '0' && c <= '9' ? uint64_t(c - '0')
                     : c >= 'a' && c <= 'f' ? uint64_t(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? uint64_t(c - 'A' + 10)
                                            : base;
    if (digit >= base || value > (UINT64_MAX - digit) / base) return std::nullopt;
    value = value * base + digit;
  }
  return value;
}

struct Setting {
  std::string_view name, value;
};

// The name=value pairs, or nothing when ld.so would ignore the whole string.
std::optional<std::vector<Setting>> split(std::string_view text) {
  std::vector<Setting> out;
  while (!text.empty()) {
    size_t end = text.find_first_of("=:");
    if (end == std::string_view::npos) return std::nullopt;  // a name with no value at the end
    if (text[end] == ':') {                                   // a name with no value: skipped
      text.remove_prefix(end + 1);
      continue;
    }
    std::string_view name = text.substr(0, end);
    text.remove_prefix(end + 1);
    size_t value_end = text.find_first_of("=:");
    if (value_end != std::string_view::npos && text[value_end] == '=') return std::nullopt;
    out.push_back({name, text.substr(0, value_end)});
    text.remove_prefix(value_end == std::string_view::npos ? text.size() : value_end + 1);
  }
  return out;
}

}  // namespace

uint64_t GlibcTunables::static_tls_surplus() const {
  constexpr uint64_t kLibcIeTls = 144, kOtherIeTls = 144, kLegacy = 144;
  uint64_t namespaces = nns.value_or(4);
  return (namespaces - 1) * kLibcIeTls + namespaces * kOtherIeTls + optional_static_tls.value_or(512) + kLegacy;
}

// The value of the last setting of `name`: a later one replaces an earlier one even when invalid.
std::optional<uint64_t> last_number(const std::vector<Setting>& settings, std::string_view name) {
  for (auto it = settings.rbegin(); it != settings.rend(); ++it)
    if (it->name == name) return parse_number(it->value);
  return std::nullopt;
}

GlibcTunables parse_glibc_tunables(std::string_view text) {
  GlibcTunables out;
  auto settings = split(text);
  if (!settings) return out;
  if (auto opt = last_number(*settings, "glibc.rtld.optional_static_tls"))
    out.optional_static_tls = std::min(*opt, uint64_t{1} << 40);  // keeps the sums below from overflowing
  if (auto nns = last_number(*settings, "glibc.rtld.nns"); nns && *nns >= 1 && *nns <= 16) out.nns = nns;
  out.execstack = last_number(*settings, "glibc.rtld.execstack");
  return out;
}

}  // namespace depscan
