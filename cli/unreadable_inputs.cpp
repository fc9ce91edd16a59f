#include "cli/unreadable_inputs.h"

#include <fmt/format.h>

namespace depscan::cli {
namespace {

// The first error finding about the input; its message starts with the input's name.
const Finding* reason_for(const ScanReport& report, const std::string& input) {
  for (const Finding& f : report.result.findings)
    if (f.severity == Severity::Error && f.path == input && f.message.starts_with(input)) return &f;
  return nullptr;
}

}  // namespace

bool report_unreadable_inputs(const ScanReport& report) {
  for (const std::string& input : report.unreadable_inputs) {
    const Finding* reason = reason_for(report, input);
    if (reason) fmt::print(stderr, "depscan: error: {}\n", reason->message);
    else fmt::print(stderr, "depscan: error: {}: cannot be analysed\n", input);
  }
  return !report.unreadable_inputs.empty();
}

}  // namespace depscan::cli
