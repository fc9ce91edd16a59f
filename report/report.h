// Renderers of a finished scan. They never analyse: they only format a ScanReport.
#pragma once

#include <string>

#include "analyzer/scan/scan.h"

namespace depscan {

struct TextOptions {
  bool color = false;     // ANSI colour (only on a terminal, never with NO_COLOR)
  bool verbose = false;   // -v: show libc-family libraries and every tried path
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

// Text for a terminal or a log: the control characters file names and library strings may carry
// (ESC sequences that clear the screen or move the cursor) shown as \xNN, C1 controls as \uNNNN,
// newlines and tabs kept,
// and with `keep_colour` depscan's own colour sequences (ESC [ digits ; m).
std::string terminal_safe(std::string_view text, bool keep_colour);
// A name or message from the analysed files, for one line of text: every control character
// escaped, newlines and tabs too, so a file name cannot start a line of its own.
std::string one_line(std::string_view text);
// The rendered output of `format` as it is written: terminal_safe for text (keeping the colours
// `options` asked for) and GitHub annotations, as it is for the escaped formats.
std::string for_output(std::string_view format, std::string rendered, const TextOptions& options);

}  // namespace depscan
