// The summary section of `depscan` with no file: which driver, runtime and cuDNN the system
// would load, from where, and whether they fit together.
#pragma once

#include <string>

#include "analyzer/scan/scan.h"

namespace depscan::cli {

// The options with the CUDA audit switched on when no file (and no --python-env) is given.
ScanOptions with_cuda_audit(ScanOptions options);

// `rendered` with the summary added: a text section, or a "cuda_stack" member in JSON.
std::string with_cuda_summary(const std::string& format, const ScanReport& report, std::string rendered);

}  // namespace depscan::cli
