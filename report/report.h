// Renderers of a finished scan. They never analyse: they only format a ScanReport.
#pragma once

#include <string>

#include "analyzer/scan/scan.h"

namespace depscan {

struct TextOptions {
  bool color = false;     // ANSI colour (only on a terminal, never with NO_COLOR)
  bool verbose = false;   // -v: show libc-family libraries and every tried path
};

std::string render_text(const ScanReport& report, const TextOptions& options);
std::string render_json(const ScanReport& report);

}  // namespace depscan
