#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "analyzer/check/gpu_targets.h"
#include "analyzer/check/baselines.h"
#include "analyzer/input/image.h"
#include "analyzer/resolve/hwcaps.h"
#include "analyzer/util/keep_until_exit.h"
#include "analyzer/util/phase_timer.h"
#include "cli/commands.h"
#include "cli/unreadable_inputs.h"
#include "cli/cuda_summary.h"
#include "cli/verify_command.h"
#include "matrix/matrix.h"
#include "report/report.h"

namespace depscan::cli {
namespace {

// A version of two or more dotted numbers (2.28, 3.4.25, 550.54.14); anything else would switch
// the check it feeds off without a word.
CLI::Validator dotted_version() {
  return CLI::Validator(
      [](std::string& text) {
        auto v = Version::parse(text);
        return v && v->parts.size() >= 2 ? std::string() : "not a dotted version number: '" + text + "'";
      },
      "VERSION");
}

struct ScanArgs {
  ScanOptions scan;
  std::string format = "text";
  std::string fail_on = "error";
  bool verbose = false;
  bool no_color = false;
  VerifyCliOptions verify;  // --verify: runtime confirmation (cli/verify_command.cpp)
};

Severity threshold_of(const std::string& name) {
  if (name == "warning") return Severity::Warning;
  if (name == "info") return Severity::Info;
  return Severity::Error;
}

// no-color.org: NO_COLOR turns colour off when it is set and not empty.
bool use_color(const ScanArgs& args) {
  const char* no_color = std::getenv("NO_COLOR");
  bool asked_off = args.no_color || (no_color != nullptr && *no_color != '\0');
  return !asked_off && ::isatty(STDOUT_FILENO);
}

int run(const ScanArgs& args) {
  TextOptions text{use_color(args), args.verbose, args.verbose || args.scan.gpu_code || !args.scan.target.gpus.empty(),
                   threshold_of(args.fail_on)};
  if (args.verify.enabled) return run_verify_mode(args.scan, args.format, text, args.verify);
  ScanOptions scan = with_cuda_audit(args.scan);  // no file: audit the CUDA stack
  scan.gpu_code = scan.gpu_code || args.verbose;  // -v shows the GPU code in the tree
  ScanReport& report = keep_until_exit(run_scan(scan));  // the process exits next
  PhaseTimer timer;
  std::string out = for_output(args.format, with_cuda_summary(args.format, report, render(args.format, report, text)), text);
  timer.mark("render");
  std::fwrite(out.data(), 1, out.size(), stdout);
  timer.mark("write");
  if (report_unreadable_inputs(report)) return kExitUsage;
  for (const Finding& f : report.result.findings)
    if (f.severity >= text.fail_on) return kExitFindings;
  return kExitClean;
}

}  // namespace

void add_image_choice_options(CLI::App& app, ImageChoice& choice) {
  app.add_option("--platform", choice.platform,
                 "the image of a multi-platform image archive to audit, as os/arch[/variant] (default: " +
                     host_image_platform() + ", this machine's, or the archive's only image)")
      ->check(CLI::Validator(
          [](std::string& p) {
            size_t slashes = std::count(p.begin(), p.end(), '/');
            bool ok = (slashes == 1 || slashes == 2) && p.front() != '/' && p.back() != '/' && p.find("//") == std::string::npos;
            return ok ? std::string() : "not an os/arch[/variant] platform: '" + p + "'";
          },
          "PLATFORM"));
  app.add_option("--image", choice.name,
                 "the image to audit of an archive holding several (docker save a b), by name: ubuntu:22.04 (default: "
                 "the first the archive lists, with a warning)");
}

void add_cpu_level_option(CLI::App& app, std::optional<uint32_t>& isa_levels) {
  app.add_option_function<std::string>(
         "--cpu-level", [&isa_levels](const std::string& name) { isa_levels = parse_cpu_level(name); },
         "x86-64 ISA level of the target CPU (x86-64, x86-64-v2, x86-64-v3, x86-64-v4; default: this CPU's): the "
         "glibc-hwcaps subdirectories searched and the ISA level each object may need")
      ->check(CLI::Validator(
          [](std::string& name) { return parse_cpu_level(name) ? std::string() : "unknown ISA level: " + name; },
          "LEVEL"));
}

void add_scan_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ScanArgs>();
  app.add_option("inputs", args->scan.inputs, "ELF/PE files, directories, wheels or images");
  app.add_option("--root", args->scan.root, "analyse a container root file system as if it were /")
      ->check(CLI::ExistingDirectory);
  app.add_option("--python-env", args->scan.python_env, "a venv or conda prefix: audit its site-packages as one install");
  add_image_choice_options(app, args->scan.image);
  app.add_option("--ld-library-path", args->scan.ld_library_path,
                 "LD_LIBRARY_PATH of the target process (default: this environment's; for an image, its config's)");
  app.add_option("--preload", args->scan.preload,
                 "LD_PRELOAD of the target process (default: this environment's; for an image, its config's)");
  app.add_flag("--no-etc-preload", args->scan.no_etc_preload, "ignore /etc/ld.so.preload");
  if (const char* bind_now = std::getenv("LD_BIND_NOW"); bind_now && *bind_now) args->scan.target.bind_now = true;
  CLI::Option* bind_now = app.add_flag("--bind-now", args->scan.target.bind_now,
               "model LD_BIND_NOW=1: every undefined symbol must bind at load, not at first call "
               "(default: this environment's LD_BIND_NOW; for an image, its config's; --bind-now=false turns it off)");
  app.add_option("--page-size", args->scan.target.page_size,
                 "page size of the target's aarch64 or ppc64 kernel in bytes (4096, 16384, 65536): every object must map with it")
      ->check(CLI::Validator(
          [](std::string& bytes) {
            return bytes == "4096" || bytes == "16384" || bytes == "65536" ? std::string()
                                                                             : bytes + " is not 4096, 16384 or 65536";
          },
          "{4096,16384,65536}"));
  add_cpu_level_option(app, args->scan.target.cpu_isa_levels);
  if (const char* tunables = std::getenv("GLIBC_TUNABLES")) args->scan.target.glibc_tunables = tunables;
  CLI::Option* tunables = app.add_option("--glibc-tunables", args->scan.target.glibc_tunables,
                 "GLIBC_TUNABLES of the target process (default: this environment's; for an image, its config's); "
                 "glibc.rtld.optional_static_tls and glibc.rtld.nns size the static TLS surplus");
  app.add_option("--target-glibc", args->scan.target.glibc,
                 "oldest glibc the binaries must run with (2.28): every symbol too new is an error")
      ->check(dotted_version());
  app.add_option("--target-glibcxx", args->scan.target.glibcxx,
                 "oldest libstdc++ (GLIBCXX_ version, 3.4.25) the binaries must run with")
      ->check(dotted_version());
  app.add_option("--target", args->scan.target.baseline,
                 "named baseline for the version floors: debian-11, ubuntu-22.04, rhel-8, manylinux2014, ...")
      ->check(CLI::Validator([](std::string& name) { return known_baseline_or_error(name); }, "BASELINE"));
  app.add_flag("--gpu-code", args->scan.gpu_code,
               "list the GPU code (fatbin SASS/PTX) of every object; implied by --gpu and -v");
  app.add_option("--gpu", args->scan.target.gpus,
                 "target GPU for the device-code check: compute capability (8.6), sm_90 or a name (H100); repeatable")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::Validator(
          [](std::string& gpu) {
            static const Expected<Matrix> matrix = load_embedded_matrix(MatrixUse::Scan);
            bool known = matrix && compute_capability_of(*matrix, gpu);
            return known ? std::string() : "unknown GPU: " + gpu;
          },
          "GPU"));
  app.add_option("--driver", args->scan.target.driver,
                 "installed NVIDIA driver version (550.54.14) for the CUDA driver checks (default: read from the "
                 "analysed system)")
      ->check(dotted_version());
  app.add_option("--matrix", args->scan.matrix_path, "replace the embedded CUDA/cuDNN data with this matrix file")
      ->check(CLI::ExistingFile);
  app.add_flag("--no-dlopen", [args](int64_t) { args->scan.dlopen_edges = false; },
               "do not add the libraries opened with dlopen (known from the matrix or named in read-only data)");
  app.add_flag("--no-symbols", [args](int64_t) { args->scan.symbols = false; },
               "do not read dynamic symbol tables: no undefined-symbol or interposition checks (the tree, "
               "symbol versions and CUDA checks remain); the same work as libtree");
  app.add_option("--format", args->format, "output format")->check(CLI::IsMember({"text", "json", "sarif", "junit", "github"}));
  app.add_option("--fail-on", args->fail_on, "lowest severity that fails (exit 1)")
      ->check(CLI::IsMember({"error", "warning", "info"}));
  app.add_option("-j,--jobs", args->scan.read_threads,
                 "threads reading the input files (default: one when they are in the page cache, else 16, or one "
                 "per CPU if more, that wait for the disk together)");
  app.add_flag("-v,--verbose", args->verbose, "show libc-family libraries and every tried path");
  app.add_flag("--no-color", args->no_color, "never colour the output");
  add_verify_options(app, args->verify);
  // CLI11 runs the top-level callback after a subcommand's: the scan runs only without one.
  app.callback([args, &exit_code, &app, tunables, bind_now] {
    args->scan.glibc_tunables_given = tunables->count() > 0;
    args->scan.bind_now_given = bind_now->count() > 0;
    if (app.get_subcommands().empty()) exit_code = run(*args);
  });
}

}  // namespace depscan::cli
