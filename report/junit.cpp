// JUnit XML: one test case per scanned root, failed when it has error findings; read by
// Jenkins, GitLab and most CI test-report widgets.
#include <fmt/format.h>

#include "analyzer/util/strings.h"
#include "report/report.h"

namespace depscan {
namespace {

// U+FFFE and U+FFFF (EF BF BE, EF BF BF) are valid UTF-8 and not XML characters.
bool xml_noncharacter_at(const std::string& text, size_t i) {
  return i + 2 < text.size() && text[i] == '\xEF' && text[i + 1] == '\xBF' && (text[i + 2] == '\xBE' || text[i + 2] == '\xBF');
}

std::string xml_escape(std::string_view raw) {
  std::string text = valid_utf8(raw);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (xml_noncharacter_at(text, i)) {
      out += "\xEF\xBF\xBD";  // U+FFFD, as for the invalid bytes valid_utf8 replaced
      i += 2;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';
        else out += c;
    }
  }
  return out;
}

// Findings that belong to a root: on the root itself or on an object in its load order.
bool belongs_to(const Graph& g, size_t root_index, const Finding& f) {
  if (!f.object) return false;
  for (size_t o : g.load_order[root_index])
    if (o == *f.object) return true;
  return false;
}

// One <failure> per test case: Jenkins and Azure DevOps show only the first, and some parsers
// (junitparser) reject a second. Its type and message are the first error's, with a count of the
// others; the body lists every error with its fix.
std::string failure(const std::vector<const Finding*>& errors) {
  if (errors.empty()) return "";
  std::string message = errors.front()->message;
  if (errors.size() > 1) message += fmt::format(" (and {} more error{})", errors.size() - 1, errors.size() > 2 ? "s" : "");
  std::string body;
  for (const Finding* f : errors)
    body += fmt::format("{}: {}\n", f->code, f->message) + (f->fix.empty() ? "" : "  fix: " + f->fix + "\n");
  return fmt::format("    <failure type=\"{}\" message=\"{}\">{}</failure>\n", xml_escape(errors.front()->code),
                     xml_escape(message), xml_escape(body));
}

std::string testcase(const ScanReport& report, size_t root_index) {
  const Graph& g = report.result.graph;
  std::vector<const Finding*> errors;
  for (const Finding& f : report.result.findings)
    if (f.severity == Severity::Error && belongs_to(g, root_index, f)) errors.push_back(&f);
  return fmt::format("  <testcase classname=\"depscan\" name=\"{}\">\n{}  </testcase>\n",
                     xml_escape(g.objects[g.roots[root_index]].path), failure(errors));
}

}  // namespace

std::string render_junit(const ScanReport& report) {
  const Graph& g = report.result.graph;
  std::string cases;
  size_t failed = 0;
  for (size_t r = 0; r < g.roots.size(); ++r) {
    std::string one = testcase(report, r);
    if (one.find("<failure") != std::string::npos) ++failed;
    cases += one;
  }
  for (const Finding& f : report.result.findings) {
    if (f.object || f.severity != Severity::Error) continue;  // inputs that could not be read
    ++failed;
    cases += fmt::format("  <testcase classname=\"depscan\" name=\"{}\">\n    <failure type=\"{}\" "
                         "message=\"{}\"/>\n  </testcase>\n",
                         xml_escape(f.path), xml_escape(f.code), xml_escape(f.message));
  }
  size_t total = g.roots.size();
  for (const Finding& f : report.result.findings)
    if (!f.object && f.severity == Severity::Error) ++total;
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"depscan\" tests=\"{}\" "
                     "failures=\"{}\">\n{}</testsuite>\n", total, failed, cases);
}

}  // namespace depscan
