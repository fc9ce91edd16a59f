// --verify: the static scan, then the runtime probe, reported together. And the hidden
// `__probe` subcommand: the child side, which only the parent starts.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/util/terminal_text.h"
#include "report/json_text.h"
#include "cli/commands.h"
#include "cli/cuda_summary.h"
#include "cli/unreadable_inputs.h"
#include "cli/verify_command.h"
#include "loader/verify.h"
#include "report/report.h"

namespace depscan::cli {
namespace {

// The longest --verify limit: 11.6 days. A steady_clock deadline overflows past about 292 years.
constexpr double kMaxTimeoutSeconds = 1e6;

// Above 0 and at most kMaxTimeoutSeconds. CLI::PositiveNumber and CLI::Range let NaN through.
CLI::Validator timeout_seconds() {
  return CLI::Validator(
      [](std::string& text) {
        double seconds = 0;
        bool ok = CLI::detail::lexical_cast(text, seconds) && seconds > 0 && seconds <= kMaxTimeoutSeconds;
        return ok ? std::string()
                  : fmt::format("not a number of seconds above 0 and at most {}: '{}'", kMaxTimeoutSeconds, text);
      },
      "SECONDS");
}

std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(std::min(seconds, kMaxTimeoutSeconds) * 1000));
}

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// The static report with the CUDA-stack summary of an audit (no file), then the runtime's.
std::string render_with_runtime(const std::string& format, const ScanReport& report, const RuntimeReport& runtime,
                                const TextOptions& text) {
  if (format == "json") {
    auto doc = nlohmann::json::parse(with_cuda_summary(format, report, render_json(report)));
    doc["runtime"] = runtime_json(runtime);
    return json_text(doc);
  }
  if (format == "text")  // the runtime text has no colours of its own; the probe's stderr lines are untrusted
    return with_cuda_summary(format, report, render_text(report, text)) + terminal_safe(runtime_text(runtime), false);
  return render(format, report, text);
}

}  // namespace

int run_verify_mode(const ScanOptions& options, const std::string& format, const TextOptions& text,
                    const VerifyCliOptions& cli) {
  ScanReport report = run_scan(with_cuda_audit(options));  // no file: the CUDA stack audit, as without --verify
  VerifyOptions verify;
  verify.step_timeout = milliseconds_of(cli.step_seconds);
  verify.total_timeout = milliseconds_of(cli.total_seconds);
  RuntimeReport runtime = run_verify(options, report, verify);
  if (!runtime.refused.empty()) {
    fmt::print(stderr, "depscan: error: {}\n", one_line(runtime.refused));
    return kExitUsage;
  }
  for (const Finding& f : runtime.findings) report.result.findings.push_back(f);
  print(for_output(format, render_with_runtime(format, report, runtime, text), text));
  if (report_unreadable_inputs(report)) return kExitUsage;
  if (runtime.failed) return kExitVerify;
  for (const Finding& f : report.result.findings)
    if (f.severity >= text.fail_on) return kExitFindings;
  return kExitClean;
}

void add_verify_options(CLI::App& app, VerifyCliOptions& options) {
  app.add_flag("--verify", options.enabled,
               "confirm the prediction at run time: load cuDNN and the driver in a child process as the "
               "application would, run a kernel and a cuDNN convolution (never the application itself)");
  app.add_option("--verify-step-timeout", options.step_seconds, "seconds one --verify step may take (default 60)")
      ->check(timeout_seconds());
  app.add_option("--verify-timeout", options.total_seconds, "seconds the whole --verify run may take (default 300)")
      ->check(timeout_seconds());
}

void add_probe_command(CLI::App& app, int& exit_code) {
  auto* probe = app.add_subcommand("__probe", "internal: the --verify child process");
  probe->group("");  // hidden from --help
  auto event_fd = std::make_shared<int>(3);
  auto request = std::make_shared<std::string>("{}");
  probe->add_option("--event-fd", *event_fd);
  probe->add_option("--request", *request);
  probe->immediate_callback();
  // The child leaves with _exit once its steps are reported: the scan callback of the main
  // command must not run, and library destructors are not part of what --verify checks.
  probe->callback([event_fd, request, &exit_code] {
    exit_code = probe_main(*request, *event_fd);
    std::fflush(nullptr);
    ::_exit(exit_code);
  });
}

}  // namespace depscan::cli
