// Renderers of a finished scan. They never analyse: they only format a ScanReport.
#pragma once

#include <string>

#include "analyzer/scan/scan.h"
#include "analyzer/util/terminal_text.h"

namespace depscan {

struct TextOptions {
  bool color = false;     // ANSI colour (only on a terminal, never with NO_COLOR)
  bool verbose = false;   // -v: show libc-family libraries and every tried path
  bool gpu_code = false;  // --gpu-code, --gpu or -v: each object's embedded GPU code
  Severity fail_on = Severity::Error;  // --fail-on: JUnit fails a test case at this severity
};

std::string render_text(const ScanReport& report, const TextOptions& options);
std::string render_json(const ScanReport& report);
// SARIF 2.1.0; files under `source_root` (the working directory) relative to SRCROOT, others file: URIs.
std::string render_sarif(const ScanReport& report, const std::string& source_root);
std::string render_junit(const ScanReport& report, Severity fail_on = Severity::Error);  // JUnit XML, one case per root
std::string render_github(const ScanReport& report);  // GitHub Actions annotations

// The renderer named by --format: text, json, sarif, junit or github.
std::string render(std::string_view format, const ScanReport& report, const TextOptions& options);

// The rendered output of `format` as it is written: terminal_safe for text (keeping the colours
// `options` asked for) and GitHub annotations, as it is for the escaped formats.
std::string for_output(std::string_view format, std::string rendered, const TextOptions& options);

}  // namespace depscan
