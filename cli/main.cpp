#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"depscan: will this binary, wheel or container load and run with CUDA and cuDNN?",
               "depscan"};
  app.set_version_flag("--version", "depscan 0.1.0");
  int exit_code = depscan::cli::kExitClean;
  depscan::cli::add_scan_command(app, exit_code);
  depscan::cli::add_probe_command(app, exit_code);
  depscan::cli::add_symbol_command(app, exit_code);
  depscan::cli::add_why_command(app, exit_code);
  depscan::cli::add_inspect_command(app, exit_code);
  depscan::cli::add_matrix_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : depscan::cli::kExitUsage;
  }
  return exit_code;
}
