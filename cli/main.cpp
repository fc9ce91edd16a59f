#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/terminal_text.h"
#include "cli/commands.h"

namespace {

struct Subcommand {
  const char* name;
  void (*add)(CLI::App&, int&);
};

constexpr Subcommand kSubcommands[] = {
    {"__probe", depscan::cli::add_probe_command}, {"symbol", depscan::cli::add_symbol_command},
    {"why", depscan::cli::add_why_command},       {"inspect", depscan::cli::add_inspect_command},
    {"matrix", depscan::cli::add_matrix_command},
};

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg.starts_with("--help")) return true;
  }
  return false;
}

bool names(int argc, char** argv, const char* word) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], word) == 0) return true;
  return false;
}

// Options given before a subcommand's name belong to the scan, which then does not run: `depscan
// --root DIR why FILE LIB` would explain this machine's graph. The usage error, or "" if none.
std::string options_before_subcommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const Subcommand* named = nullptr;
    for (const Subcommand& sub : kSubcommands)
      if (std::strcmp(argv[i], sub.name) == 0) named = &sub;
    if (!named) continue;
    std::string options;
    for (int k = 1; k < i; ++k)
      if (argv[k][0] == '-') options += (options.empty() ? "" : " ") + std::string(argv[k]);
    if (options.empty()) return "";
    return "depscan: " + options + " before '" + named->name + "': a subcommand's options go after its name (depscan " +
           named->name + " --root DIR ...)";
  }
  return "";
}

// CLI11 names every argument it could not place when a subcommand is given an option it does not
// take (`why --python-env VENV FILE LIB`: "FILE --python-env were not expected"). The usage error
// naming that option, or "" if every option after the subcommand's name is its own.
std::string unknown_subcommand_option(const CLI::App& app, int argc, char** argv) {
  const CLI::App* sub = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (!sub) {
      for (const CLI::App* s : app.get_subcommands([&](const CLI::App* s) { return s->get_name() == arg; })) sub = s;
      continue;
    }
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    std::string option(arg.substr(0, arg.find('=')));
    if (!sub->get_option_no_throw(option))
      return "depscan " + sub->get_name() + ": " + option + " is not an option of '" + sub->get_name() + "' (depscan " +
             sub->get_name() + " --help lists them)";
  }
  return "";
}

// CLI11 2.1 reads `--opt=` (an empty value) as a bare `--opt` and takes the next argument for its
// value: `--ld-library-path="$EMPTY" app` would take `app` as the path list and scan nothing. Each
// such argument (before a `--`) is split into `--opt` and an empty argument, which CLI11 keeps.
std::vector<std::string> with_empty_values_split(int argc, char** argv) {
  std::vector<std::string> args;
  bool options_end = false;
  for (int i = 0; i < argc; ++i) {
    std::string_view arg = argv[i];
    options_end = options_end || arg == "--";
    if (i > 0 && !options_end && arg.starts_with("--") && arg.find('=') == arg.size() - 1) {
      args.emplace_back(arg.substr(0, arg.size() - 1));
      args.emplace_back();
    } else {
      args.emplace_back(arg);
    }
  }
  return args;
}

// A report that did not reach its file (a full disk, a closed pipe's EPIPE) must not pass a pipeline.
int with_output_checked(int exit_code) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return exit_code;
  std::fprintf(stderr, "depscan: error: cannot write the report to standard output: %s\n", std::strerror(errno));
  return depscan::cli::kExitUsage;
}

}  // namespace

int main(int original_argc, char** original_argv) {
  std::vector<std::string> arguments = with_empty_values_split(original_argc, original_argv);
  std::vector<char*> pointers;
  for (std::string& a : arguments) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  int argc = static_cast<int>(arguments.size());
  char** argv = pointers.data();
  CLI::App app{"depscan: will this binary, wheel or container load and run with CUDA and cuDNN?",
               "depscan"};
  app.set_version_flag("--version", "depscan 0.1.0");
  int exit_code = depscan::cli::kExitClean;
  depscan::cli::add_scan_command(app, exit_code);
  // CLI11 builds every option up front (a fifth of a millisecond for all subcommands) and can only
  // run a subcommand whose name is on the command line: the others are added for --help alone.
  bool help = asks_for_help(argc, argv);
  if (std::string misplaced = options_before_subcommand(argc, argv); !help && !misplaced.empty()) {
    std::fprintf(stderr, "%s\n", depscan::one_line(misplaced).c_str());
    return depscan::cli::kExitUsage;
  }
  for (const Subcommand& sub : kSubcommands)
    if (help || names(argc, argv, sub.name)) sub.add(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (std::string unknown = unknown_subcommand_option(app, argc, argv); !unknown.empty()) {
      std::fprintf(stderr, "%s\n", depscan::one_line(unknown).c_str());
      return depscan::cli::kExitUsage;
    }
    if (e.get_exit_code() == 0) return with_output_checked(app.exit(e));  // --help, --version
    // the message quotes what was typed: a path or name with escape sequences stays inert
    std::fprintf(stderr, "%s\nRun with --help for more information.\n", depscan::one_line(e.what()).c_str());
    return depscan::cli::kExitUsage;
  }
  return with_output_checked(exit_code);
}
