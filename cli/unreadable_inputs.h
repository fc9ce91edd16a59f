// The stderr line for each input the scan could not analyse, with the reason its input-error
// finding gives ("no ELF or PE file in this directory", "No such file or directory").
#pragma once

#include "analyzer/scan/scan.h"

namespace depscan::cli {

// Prints one line per unreadable input; true if there was any (exit code 2).
bool report_unreadable_inputs(const ScanReport& report);

}  // namespace depscan::cli
