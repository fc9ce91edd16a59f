#include "analyzer/check/driver_libraries.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "matrix/embedded.h"

namespace depscan {
namespace {

constexpr const char* kFile = "driver-libraries.json";

Error bad(const std::string& what) { return Error{std::string(kFile) + ": " + what}; }

Expected<std::vector<std::string>> strings_of(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_array() || it->empty()) return bad(std::string("no ") + key);
  std::vector<std::string> out;
  for (const auto& s : *it) {
    if (!s.is_string() || s.get_ref<const std::string&>().empty()) return bad(std::string("a bad entry in ") + key);
    out.push_back(s.get<std::string>());
  }
  return out;
}

Expected<DriverLibraries> parse_driver_libraries() {
  auto doc = nlohmann::json::parse(embedded_file(kFile), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("capabilities") || !doc["capabilities"].is_array())
    return bad("not a driver library table");
  DriverLibraries out;
  auto default_set = strings_of(doc, "default");
  auto supported = strings_of(doc, "supported");
  if (!default_set) return Error{default_set.error()};
  if (!supported) return Error{supported.error()};
  out.default_set = std::move(*default_set);
  out.supported = std::move(*supported);
  if (doc.value("source", "").empty()) return bad("no source");
  for (const auto& row : doc["capabilities"]) {
    if (!row.is_object() || !row.contains("capability") || !row["capability"].is_string()) return bad("a row has no capability");
    auto prefixes = strings_of(row, "prefixes");
    if (!prefixes) return Error{prefixes.error()};
    out.capabilities.push_back({row["capability"].get<std::string>(), row.value("what", ""), std::move(*prefixes)});
  }
  auto mounts = doc.find("mounts");
  if (mounts == doc.end() || !mounts->is_object()) return bad("no mounts");
  for (const std::string& name : out.supported) {
    auto lists = mounts->find(name);
    if (lists == mounts->end() || !lists->is_array()) return bad("no mounts for " + name);
    for (const auto& list : *lists) {
      if (!list.is_string() || !out.capability_of_list(list.get_ref<const std::string&>()))
        return bad("a bad entry in the mounts of " + name);
      out.mounts[name].push_back(list.get<std::string>());
    }
  }
  return out;
}

bool matches(std::string_view name, std::string_view prefix) {
  return name.starts_with(prefix) && (name.size() == prefix.size() || name[prefix.size()] == '.');
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Go's unicode.IsSpace beyond ASCII, as UTF-8: U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028,
// U+2029, U+202F, U+205F, U+3000. strings.TrimSpace trims them too.
size_t space_at_front(std::string_view s) {
  if (!s.empty() && std::string_view(" \t\n\v\f\r").find(s[0]) != std::string_view::npos) return 1;
  auto byte = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  if (byte(0) == 0xC2 && (byte(1) == 0x85 || byte(1) == 0xA0)) return 2;
  if (byte(0) == 0xE1 && byte(1) == 0x9A && byte(2) == 0x80) return 3;
  if (byte(0) == 0xE2 && byte(1) == 0x80 && ((byte(2) >= 0x80 && byte(2) <= 0x8A) || byte(2) == 0xA8 || byte(2) == 0xA9 || byte(2) == 0xAF))
    return 3;
  if (byte(0) == 0xE2 && byte(1) == 0x81 && byte(2) == 0x9F) return 3;
  if (byte(0) == 0xE3 && byte(1) == 0x80 && byte(2) == 0x80) return 3;
  return 0;
}

size_t space_at_back(std::string_view s) {
  for (size_t width = 1; width <= 3 && width <= s.size(); ++width)
    if (space_at_front(s.substr(s.size() - width)) == width) return width;
  return 0;
}

std::string_view trimmed(std::string_view s) {
  while (size_t n = space_at_front(s)) s.remove_prefix(n);
  while (size_t n = space_at_back(s)) s.remove_suffix(n);
  return s;
}

// The hook's split of the variable: on commas, each part trimmed, empty parts left out.
std::vector<std::string> capability_names(std::string_view text) {
  std::vector<std::string> out;
  std::set<std::string_view> seen;
  while (true) {
    size_t comma = text.find(',');
    std::string_view part = trimmed(text.substr(0, comma));
    if (!part.empty() && seen.insert(part).second) out.emplace_back(part);
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

const DriverCapability* DriverLibraries::capability_of(std::string_view name) const {
  name = name.substr(name.find_last_of('/') + 1);  // dlopen("/usr/lib64/libnvidia-ml.so.1")
  for (const DriverCapability& c : capabilities)
    for (const std::string& prefix : c.prefixes)
      if (matches(name, prefix)) return &c;
  return nullptr;
}

const DriverCapability* DriverLibraries::capability_of_list(std::string_view list) const {
  for (const DriverCapability& c : capabilities)
    if (c.name == list) return &c;
  return nullptr;
}

const Expected<DriverLibraries>& load_driver_libraries() {
  static const Expected<DriverLibraries> table = parse_driver_libraries();
  return table;
}

bool SelectedCapabilities::mounts(std::string_view library_list) const { return contains(mounted, library_list); }
bool SelectedCapabilities::selects(std::string_view capability) const { return contains(names, capability); }

SelectedCapabilities selected_capabilities(const DriverLibraries& table, const std::optional<std::string>& setting,
                                           bool legacy_image) {
  SelectedCapabilities out;
  std::vector<std::string> asked;
  if (!setting && legacy_image) asked = {"all"};
  else if (!setting || setting->empty()) asked = table.default_set;
  else asked = capability_names(*setting);
  bool all = contains(asked, "all");
  for (const std::string& name : table.supported)
    if (all || contains(asked, name)) out.names.push_back(name);
  if (!all)
    for (const std::string& name : asked)
      if (!contains(table.supported, name)) out.unknown.push_back(name);
  std::sort(out.names.begin(), out.names.end());
  for (const std::string& name : out.names)
    if (auto lists = table.mounts.find(name); lists != table.mounts.end())
      for (const std::string& list : lists->second)
        if (!contains(out.mounted, list)) out.mounted.push_back(list);
  return out;
}

}  // namespace depscan
