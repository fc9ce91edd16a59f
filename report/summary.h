// The closing summary of a text report: findings grouped by code with their counts, worst
// first, so a directory or image audit with thousands of roots still reads at a glance.
#pragma once

#include <string>

#include "analyzer/scan/scan.h"

namespace depscan {

// Empty when there is at most one root and fewer than kSummaryMinFindings findings.
std::string render_summary(const ScanReport& report, bool color);

}  // namespace depscan
