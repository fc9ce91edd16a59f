// SARIF 2.1.0, the format GitHub code scanning and most CI dashboards import.
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "analyzer/input/fs.h"
#include "report/json_text.h"
#include "report/report.h"

namespace depscan {
namespace {

using nlohmann::json;

const char* sarif_level(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "note";
  }
  return "none";
}

// A path as a URI reference: every byte but the unreserved characters and '/' percent-encoded, so
// that a space, '%' or a non-ASCII name reaches the SARIF reader unchanged.
std::string uri_reference(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                 c == '.' || c == '_' || c == '~' || c == '/';
    if (plain) out += static_cast<char>(c);
    else out += {'%', kHex[c >> 4], kHex[c & 15]};
  }
  return out;
}

// A file under the source root (the directory depscan ran in: a CI job's checkout) as a path
// relative to SRCROOT, which code scanning maps to the repository; any other as a file: URI.
// The source root as a directory prefix: "/opt/ci/" ("/" stays "/").
std::string directory_prefix(const std::string& root) { return root == "/" ? root : root + "/"; }

json artifact_location(const std::string& path, const std::string& source_root) {
  std::string absolute = absolute_path(path);
  std::string prefix = directory_prefix(source_root);
  if (absolute.starts_with(prefix) && absolute.size() > prefix.size())
    return {{"uri", uri_reference(absolute.substr(prefix.size()))}, {"uriBaseId", "SRCROOT"}};
  return {{"uri", "file://" + uri_reference(absolute)}};
}

std::string location_of(const ScanReport& report, const Finding& f) {
  if (f.object && *f.object < report.result.graph.objects.size())
    return report.result.graph.objects[*f.object].path;
  return f.path;
}

}  // namespace

std::string render_sarif(const ScanReport& report, const std::string& source_root) {
  json rules = json::array(), results = json::array();
  std::map<std::string, size_t> rule_index;
  for (const Finding& f : report.result.findings) {
    auto [it, added] = rule_index.emplace(f.code, rule_index.size());
    if (added) rules.push_back({{"id", f.code}, {"name", f.code}});
    json result = {{"ruleId", f.code}, {"ruleIndex", it->second}, {"level", sarif_level(f.severity)},
                   {"message", {{"text", f.fix.empty() ? f.message : f.message + " Fix: " + f.fix}}}};
    std::string where = location_of(report, f);
    if (!where.empty())
      result["locations"] =
          json::array({{{"physicalLocation", {{"artifactLocation", artifact_location(where, source_root)}}}}});
    results.push_back(std::move(result));
  }
  json doc = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", json::array({{{"tool", {{"driver", {{"name", "depscan"}, {"rules", rules}}}}},
                                     {"originalUriBaseIds", {{"SRCROOT", {{"uri", "file://" + uri_reference(directory_prefix(source_root))}}}}},
                                     {"results", results}}})}};
  return json_text(doc);
}

}  // namespace depscan
