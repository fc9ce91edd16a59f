#include "analyzer/check/driver_libraries.h"

#include <algorithm>

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
  out.source = doc.value("source", "");
  if (out.source.empty()) return bad("no source");
  for (const auto& row : doc["capabilities"]) {
    if (!row.is_object() || !row.contains("capability") || !row["capability"].is_string()) return bad("a row has no capability");
    auto prefixes = strings_of(row, "prefixes");
    if (!prefixes) return Error{prefixes.error()};
    out.capabilities.push_back({row["capability"].get<std::string>(), row.value("what", ""), std::move(*prefixes)});
  }
  return out;
}

bool matches(std::string_view name, std::string_view prefix) {
  return name.starts_with(prefix) && (name.size() == prefix.size() || name[prefix.size()] == '.');
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The hook's split of the variable: on commas, each part trimmed, empty parts left out.
std::vector<std::string> capability_names(std::string_view text) {
  std::vector<std::string> out;
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  while (true) {
    size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    size_t first = part.find_first_not_of(kSpace);
    if (first != std::string_view::npos) {
      part = part.substr(first, part.find_last_not_of(kSpace) - first + 1);
      if (!contains(out, part)) out.emplace_back(part);
    }
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

const DriverCapability* DriverLibraries::capability_of(std::string_view name) const {
  for (const DriverCapability& c : capabilities)
    for (const std::string& prefix : c.prefixes)
      if (matches(name, prefix)) return &c;
  return nullptr;
}

const Expected<DriverLibraries>& load_driver_libraries() {
  static const Expected<DriverLibraries> table = parse_driver_libraries();
  return table;
}

bool SelectedCapabilities::has(std::string_view capability) const { return contains(names, capability); }

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
  return out;
}

}  // namespace depscan
