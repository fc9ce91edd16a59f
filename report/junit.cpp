// JUnit XML: one test case per scanned root, failed when it has findings at or above --fail-on
// (errors by default), with the others in its <system-out>; read by Jenkins, GitLab and most CI
// test-report widgets.
#include <algorithm>

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

std::string finding_line(const Finding& f) {
  return fmt::format("{}[{}]: {}\n", to_string(f.severity), f.code, f.message) + (f.fix.empty() ? "" : "  fix: " + f.fix + "\n");
}

// One <failure> per test case: Jenkins and Azure DevOps show only the first, and some parsers
// (junitparser) reject a second. Its type and message are the first failing finding's, with a
// count of the others; the body lists every one with its fix.
std::string failure(const std::vector<const Finding*>& failing) {
  if (failing.empty()) return "";
  std::string message = failing.front()->message;
  bool all_errors = std::all_of(failing.begin(), failing.end(), [](const Finding* f) { return f->severity == Severity::Error; });
  if (failing.size() > 1)
    message += fmt::format(" (and {} more {}{})", failing.size() - 1, all_errors ? "error" : "finding", failing.size() > 2 ? "s" : "");
  std::string body;
  for (const Finding* f : failing) body += finding_line(*f);
  return fmt::format("    <failure type=\"{}\" message=\"{}\">{}</failure>\n", xml_escape(failing.front()->code),
                     xml_escape(message), xml_escape(body));
}

// The findings below the threshold, which do not fail the case, as its standard output.
std::string system_out(const std::vector<const Finding*>& passing, const char* indent) {
  if (passing.empty()) return "";
  std::string body;
  for (const Finding* f : passing) body += finding_line(*f);
  return fmt::format("{}<system-out>{}</system-out>\n", indent, xml_escape(body));
}

std::string testcase(const ScanReport& report, size_t root_index, Severity fail_on) {
  const Graph& g = report.result.graph;
  std::vector<const Finding*> failing, passing;
  for (const Finding& f : report.result.findings)
    if (belongs_to(g, root_index, f)) (f.severity >= fail_on ? failing : passing).push_back(&f);
  return fmt::format("  <testcase classname=\"depscan\" name=\"{}\">\n{}{}  </testcase>\n",
                     xml_escape(g.objects[g.roots[root_index]].path), failure(failing), system_out(passing, "    "));
}

}  // namespace

std::string render_junit(const ScanReport& report, Severity fail_on) {
  const Graph& g = report.result.graph;
  std::string cases;
  size_t failed = 0, total = g.roots.size();
  for (size_t r = 0; r < g.roots.size(); ++r) {
    std::string one = testcase(report, r, fail_on);
    if (one.find("<failure") != std::string::npos) ++failed;
    cases += one;
  }
  std::vector<const Finding*> about_the_scan;  // on no object, below the threshold: the suite's output
  for (const Finding& f : report.result.findings) {
    if (f.object) continue;
    if (f.severity < fail_on) {
      about_the_scan.push_back(&f);
      continue;
    }
    ++failed, ++total;  // an input that could not be read, or a finding about the whole scan
    cases += fmt::format("  <testcase classname=\"depscan\" name=\"{}\">\n{}  </testcase>\n",
                         xml_escape(f.path.empty() ? f.code : f.path), failure({&f}));
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"depscan\" tests=\"{}\" "
                     "failures=\"{}\">\n{}{}</testsuite>\n", total, failed, cases, system_out(about_the_scan, "  "));
}

}  // namespace depscan
