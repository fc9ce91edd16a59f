// GitHub Actions workflow commands: each finding becomes an annotation on the run.
#include <fmt/format.h>

#include "analyzer/util/strings.h"
#include "report/report.h"

namespace depscan {
namespace {

// Workflow-command data must not contain raw newlines, '%' or (in properties) ',' and ':'; the log
// is UTF-8, so a file name's invalid bytes become U+FFFD as in the JSON report.
std::string escape_data(std::string_view raw) {
  std::string out;
  for (char c : valid_utf8(raw)) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string escape_property(std::string_view text) {
  std::string out = escape_data(text);
  std::string result;
  for (char c : out) {
    if (c == ':') result += "%3A";
    else if (c == ',') result += "%2C";
    else result += c;
  }
  return result;
}

const char* command_for(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "notice";
  }
  return "notice";
}

}  // namespace

std::string render_github(const ScanReport& report) {
  std::string out;
  const Graph& g = report.result.graph;
  for (const Finding& f : report.result.findings) {
    std::string file = f.object && *f.object < g.objects.size() ? g.objects[*f.object].path : f.path;
    std::string props = "title=" + escape_property("depscan " + f.code);
    if (!file.empty()) props = "file=" + escape_property(file) + "," + props;
    std::string text = f.fix.empty() ? f.message : f.message + " Fix: " + f.fix;
    out += fmt::format("::{} {}::{}\n", command_for(f.severity), props, escape_data(text));
  }
  return out;
}

}  // namespace depscan
