#include "analyzer/check/windows_dlls.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "analyzer/resolve/pe_search.h"
#include "matrix/embedded.h"

namespace depscan {
namespace {

constexpr const char* kFile = "windows-dlls.json";

Expected<std::vector<std::string>> lower_case_names(const nlohmann::json& row, const std::string& where) {
  if (!row.contains("names") || !row["names"].is_array() || row["names"].empty())
    return Error{std::string(kFile) + ": " + where + " has no names"};
  std::vector<std::string> names;
  for (const auto& n : row["names"]) {
    if (!n.is_string() || n.get<std::string>().empty()) return Error{std::string(kFile) + ": " + where + " has a bad name"};
    names.push_back(pe_name_key(n.get<std::string>()));
  }
  return names;
}

std::string source_of(const nlohmann::json& row) {
  return row.contains("source") && row["source"].is_string() ? row["source"].get<std::string>() : "";
}

Expected<WindowsDlls> parse_windows_dlls() {
  auto doc = nlohmann::json::parse(embedded_file(kFile), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("system") || !doc["system"].is_object())
    return Error{std::string(kFile) + ": not a Windows DLL table"};
  WindowsDlls out;
  auto system = lower_case_names(doc["system"], "system");
  if (!system) return Error{system.error()};
  out.system = std::move(*system);
  out.system_source = source_of(doc["system"]);
  if (out.system_source.empty()) return Error{std::string(kFile) + ": system has no source"};
  if (doc.contains("redistributable") && doc["redistributable"].is_array())
    for (const auto& row : doc["redistributable"]) {
      if (!row.is_object()) return Error{std::string(kFile) + ": a redistributable row is not an object"};
      auto names = lower_case_names(row, "a redistributable row");
      if (!names) return Error{names.error()};
      WindowsRedistributable r{std::move(*names), row.value("package", ""), source_of(row)};
      if (r.package.empty() || r.source.empty()) return Error{std::string(kFile) + ": a redistributable row lacks its package or source"};
      out.redistributables.push_back(std::move(r));
    }
  if (!doc.contains("driver") || !doc["driver"].is_object()) return Error{std::string(kFile) + ": no driver row"};
  auto driver = lower_case_names(doc["driver"], "driver");
  if (!driver) return Error{driver.error()};
  out.driver = WindowsRedistributable{std::move(*driver), doc["driver"].value("package", ""), source_of(doc["driver"])};
  if (out.driver.package.empty() || out.driver.source.empty()) return Error{std::string(kFile) + ": the driver row lacks its package or source"};
  return out;
}

}  // namespace

const WindowsRedistributable* WindowsDlls::redistributable_of(std::string_view name) const {
  std::string key = pe_name_key(std::string(name));
  for (const WindowsRedistributable& r : redistributables)
    if (std::find(r.names.begin(), r.names.end(), key) != r.names.end()) return &r;
  return nullptr;
}

bool WindowsDlls::is_driver_dll(std::string_view name) const {
  return std::find(driver.names.begin(), driver.names.end(), pe_name_key(std::string(name))) != driver.names.end();
}

const Expected<WindowsDlls>& load_windows_dlls() {
  static const Expected<WindowsDlls> dlls = parse_windows_dlls();
  return dlls;
}

}  // namespace depscan
