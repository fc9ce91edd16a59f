#include "report/summary.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

namespace depscan {
namespace {

constexpr size_t kSummaryMinFindings = 10;

struct Group {
  std::string code;
  Severity severity = Severity::Info;
  size_t count = 0;
};

}  // namespace

std::string render_summary(const ScanReport& report, bool color) {
  const auto& findings = report.result.findings;
  if (report.result.graph.roots.size() <= 1 && findings.size() < kSummaryMinFindings) return "";
  // A code's errors and warnings are counted apart: 1 error and 10 warnings are not 11 errors.
  std::map<std::pair<std::string, Severity>, Group> by_code;
  size_t per_severity[3] = {0, 0, 0};
  for (const Finding& f : findings) {
    Group& g = by_code[{f.code, f.severity}];
    g.code = f.code;
    g.severity = f.severity;
    ++g.count;
    ++per_severity[static_cast<int>(f.severity)];
  }
  std::vector<Group> groups;
  for (auto& [code, g] : by_code) groups.push_back(g);
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return a.severity != b.severity ? a.severity > b.severity : a.count > b.count;
  });
  auto paint = [&](const std::string& text, const char* code) {
    return color ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
  };
  std::string out = paint(fmt::format("Findings by code ({} roots, {} objects: {} errors, {} warnings, {} info)",
                                      report.result.graph.roots.size(), report.result.graph.objects.size(),
                                      per_severity[2], per_severity[1], per_severity[0]),
                          "1") + "\n";
  for (const Group& g : groups)
    out += fmt::format("  {:>6}  {:<8} {}\n", g.count, to_string(g.severity), g.code);
  return out;
}

}  // namespace depscan
