#include "cli/unreadable_inputs.h"

#include <optional>

#include <fmt/format.h>

#include "analyzer/input/fs.h"
#include "report/report.h"

namespace depscan::cli {
namespace {

// The first error finding about the input, as typed: its message starts with the input's name,
// or, for a wheel or an image, with its file name.
std::optional<std::string> reason_for(const ScanReport& report, const std::string& input) {
  std::string file_name = basename_of(input);
  for (const Finding& f : report.result.findings) {
    bool about_input = f.path == input || (!file_name.empty() && f.path == file_name);
    if (f.severity != Severity::Error || !about_input || !f.message.starts_with(f.path))
      continue;
    return input + f.message.substr(f.path.size());
  }
  return std::nullopt;
}

}  // namespace

bool report_unreadable_inputs(const ScanReport& report) {
  for (const std::string& input : report.unreadable_inputs) {
    if (auto reason = reason_for(report, input)) fmt::print(stderr, "depscan: error: {}\n", one_line(*reason));
    else fmt::print(stderr, "depscan: error: {}: cannot be analysed\n", one_line(input));
  }
  return !report.unreadable_inputs.empty();
}

}  // namespace depscan::cli
