// Each subcommand registers itself on the CLI11 app and sets the exit code when it runs.
// Exit codes (DESIGN.md): 0 clean, 1 findings at or above --fail-on, 2 usage or unreadable
// input, 3 runtime verification contradicted the prediction or failed.
#pragma once

#include <cstdint>
#include <optional>

#include <CLI/CLI.hpp>

#include "analyzer/input/image.h"

namespace depscan::cli {

inline constexpr int kExitClean = 0, kExitFindings = 1, kExitUsage = 2, kExitVerify = 3;

void add_scan_command(CLI::App& app, int& exit_code);
void add_probe_command(CLI::App& app, int& exit_code);  // hidden: the --verify child
void add_symbol_command(CLI::App& app, int& exit_code);  // depscan symbol NAME FILE...
void add_why_command(CLI::App& app, int& exit_code);     // depscan why FILE LIBNAME
void add_inspect_command(CLI::App& app, int& exit_code);  // depscan inspect FILE (deep LIEF view)
void add_matrix_command(CLI::App& app, int& exit_code);   // depscan matrix driver 12.4 | cudnn 9.1 | ...

// --platform and --image: which image of an image archive is taken.
void add_image_choice_options(CLI::App& app, ImageChoice& choice);

// --cpu-level x86-64-v2: the target CPU's ISA levels, for the glibc-hwcaps search and the x86 ISA check.
void add_cpu_level_option(CLI::App& app, std::optional<uint32_t>& isa_levels);

}  // namespace depscan::cli
