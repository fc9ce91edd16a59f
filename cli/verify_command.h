// --verify, as the scan command uses it: the options it adds and the run that replaces the
// plain scan when it is given.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "report/report.h"

namespace depscan::cli {

struct VerifyCliOptions {
  bool enabled = false;
  double step_seconds = 60;
  double total_seconds = 300;
};

void add_verify_options(CLI::App& app, VerifyCliOptions& options);

// The static scan, then the runtime probe. Exit code 3 when the probe contradicts the
// prediction or a step fails, crashes or times out; otherwise the scan's own rules.
int run_verify_mode(const ScanOptions& options, const std::string& format, const TextOptions& text,
                    const VerifyCliOptions& verify);

}  // namespace depscan::cli
