#include "analyzer/scan/merge_findings.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "analyzer/input/fs.h"

namespace depscan {
namespace {

bool is_delimiter(char c) { return c == ' ' || c == ',' || c == '(' || c == ')' || c == ';' || c == '\'' || c == '"'; }

// The text with every path that goes through "/../" or "/./" written without the detour.
std::string without_detours(const std::string& text) {
  if (text.find("/../") == std::string::npos && text.find("/./") == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  while (at < text.size()) {
    size_t end = at;
    while (end < text.size() && !is_delimiter(text[end])) ++end;
    std::string_view token(text.data() + at, end - at);
    bool detour = token.starts_with('/') && (token.find("/../") != std::string_view::npos ||
                                             token.find("/./") != std::string_view::npos);
    out += detour ? normalize_path(token) : std::string(token);
    if (end < text.size()) out += text[end];
    at = end + 1;
  }
  return out;
}

}  // namespace

void merge_findings_on_one_file(ScanResult& result) {
  bool detours = std::any_of(result.graph.objects.begin(), result.graph.objects.end(), [](const Object& o) {
    return o.path.find("/../") != std::string::npos || o.path.find("/./") != std::string::npos;
  });
  if (!detours) return;  // one path per file
  std::set<std::tuple<std::string, Severity, std::string, std::string, std::string>> said;
  std::vector<Finding> kept;
  kept.reserve(result.findings.size());
  for (Finding& f : result.findings) {
    std::string where = f.object ? file_path(result.graph.objects[*f.object]) : without_detours(f.path);
    if (said.emplace(f.code, f.severity, where, without_detours(f.message), without_detours(f.fix)).second)
      kept.push_back(std::move(f));
  }
  result.findings = std::move(kept);
}

}  // namespace depscan
