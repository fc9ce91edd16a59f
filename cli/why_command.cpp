// depscan why FILE LIBNAME: how the loader finds LIBNAME in FILE's graph, step by step - every
// candidate in order with why it was taken or skipped. The request explained is the first one
// in load order (the object that NEEDs it, or opens it with dlopen as a scan models it: cuDNN's
// sub-libraries, the driver); without one, FILE itself asks for it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include "analyzer/input/collect.h"
#include "analyzer/input/python_env.h"
#include "analyzer/input/sniff.h"
#include "analyzer/read/read.h"
#include "analyzer/resolve/glibc_release.h"
#include "analyzer/resolve/resolve.h"
#include "analyzer/resolve/system_layout.h"
#include "analyzer/scan/dlopen_edges.h"
#include "analyzer/scan/loaded_first.h"
#include "analyzer/scan/scan.h"
#include "cli/commands.h"
#include "cli/safe_print.h"
#include "matrix/matrix.h"

namespace depscan::cli {
namespace {

struct WhyArgs {
  std::string file;
  std::string library;
  ScanOptions scan;
  std::string python_env;  // the venv or prefix whose interpreter imports the file
  bool dlopen = true;
};

bool names_library(const Graph& g, const Edge& e, const std::string& library) {
  if (e.name == library) return true;
  if (!e.to) return false;
  const Object& target = g.objects[*e.to];
  if (target.binary && target.binary->soname == library) return true;
  return basename_of(target.path) == library;
}

void print_steps(const std::vector<Attempt>& steps) {
  size_t n = 0;
  for (const Attempt& a : steps) print_safe("  {:>3}. {}: {}\n", ++n, a.path, a.outcome);
}

std::string describe(const Graph& g, const Edge& e) {
  std::string how = e.how_detail.empty() ? to_string(e.how) : e.how_detail;
  if (e.to) return fmt::format("found {} (real path {}) [{}]", g.objects[*e.to].path, g.objects[*e.to].realpath, how);
  return fmt::format("NOT FOUND: {}", how);
}

// The libraries the graph opens at run time, added as a scan adds them (the embedded matrix's
// dlopen rows and names in read-only data).
void add_run_time_edges(Resolver& resolver, const Expected<Matrix>& matrix, const FileSystem& fs) {
  if (matrix) add_dlopen_edges(resolver, *matrix, fs);
  else print_safe(stderr, "depscan: warning: no dlopen edges: {}\n", matrix.error());
}

// What the file's Python package loads before it (matrix loaded_first), as a scan of its
// environment finds it.
FileLoadedFirst loaded_first_of(const std::string& logical, const Expected<Matrix>& matrix, const FileSystem& fs,
                                const std::string& python_env) {
  if (!matrix) return {};
  return libraries_loaded_first_for_file(logical, *matrix, fs, python_env);
}

// --python-env: the prefix as the file system names it, or an error naming why it is no environment.
Expected<std::string> python_env_of(const WhyArgs& args, const FileSystem& fs) {
  std::string prefix = args.scan.root ? normalize_path(args.python_env) : absolute_path(args.python_env);
  if (!interpreter_site_packages(fs, prefix).empty()) return prefix;
  return Error{why_not_python_environment(fs, prefix)};
}

// The package's copies of LIBNAME it did not load first, and why (CuPy 13 and a cutensor-cu11 wheel).
void print_passed_over(const FileLoadedFirst& loaded_first, const std::string& library) {
  for (const PassedOver& p : loaded_first.passed_over)
    if (basename_of(p.path) == library)
      print_safe("  not loaded before the module by its Python package: {} {}\n", p.path, p.why);
}

// Which loader and glibc's rules the search follows (the hwcaps subdirectories changed with its
// releases), and the glibc-hwcaps levels of the CPU. `own` is the program's own loader the
// resolver followed, if any.
void print_loader(const FileSystem& fs, const Binary& binary, const ScanOptions& options, const OwnLoader* own) {
  if (binary.format != Format::Elf) return;
  std::string interpreter = default_interpreter(process_abi_of(binary));
  std::vector<std::string> system_dirs = layout_for(fs, process_abi_of(binary)).system_dirs;
  if (own && own->musl) {
    print_safe("musl's loader {}: LD_LIBRARY_PATH, the RPATH or RUNPATH of each object up the chain that loaded it, "
               "then {} ({}); no ld.so.cache, no hwcaps subdirectories\n",
               own->path, fmt::join(own->build.system_dirs, ":"),
               own->musl_path_file.empty() ? "musl's default" : "from " + own->musl_path_file);
    return;
  }
  if (own) {
    interpreter = own->path;
    system_dirs = own->build.system_dirs;
    print_safe("the program's own loader {}: search path {}; cache {}\n", own->path, fmt::join(system_dirs, ":"),
               own->build.cache_path.empty() ? "none" : own->build.cache_path);
  }
  if (interpreter.empty()) return;
  auto release = glibc_release_of(fs, interpreter, system_dirs);
  bool x86_64 = process_abi_of(binary) == ProcessAbi{};  // the one ABI with glibc-hwcaps levels here
  print_safe("loader {}: {}\n", interpreter, describe_hwcap_rules(release, x86_64));
  if (!x86_64) return;
  auto levels = environment_for(options).hwcaps;
  print_safe("cpu: {}; glibc-hwcaps levels: {}\n", options.target.cpu_isa_levels ? "--cpu-level" : "this machine's",
             levels.empty() ? std::string("none") : fmt::format("{}", fmt::join(levels, ", ")));
}

// --root IMAGE: the image archive unpacked into a scratch directory; nullopt when --root is a
// directory. Its defects are printed; `failed` is set when nothing could be unpacked. A compressed
// file is unpacked without a first look, as a scan does.
std::optional<UnpackedImageRoot> unpack_root_image(const std::string& root, const ImageChoice& choice, bool& failed) {
  std::error_code ec;
  if (std::filesystem::is_directory(root, ec)) return std::nullopt;
  auto format = std::filesystem::is_regular_file(root, ec) ? sniff(*make_real_fs(), root) : Expected<Sniffed>(Error{""});
  bool archive = format && (format->format == FileFormat::Compressed || (format->format == FileFormat::Tar && is_image_archive(root)));
  if (!archive) {
    print_safe(stderr, "depscan: error: {}: --root takes a directory or a container image archive, and this is "
                       "neither\n", root);
    failed = true;
    return std::nullopt;
  }
  UnpackedImageRoot image = unpack_image_root(root, root, choice);
  for (const Finding& f : image.findings) print_safe(stderr, "depscan: {}: {}\n", to_string(f.severity), f.message);
  failed = !image.ok();
  if (image.ok()) print_safe("image {}: {} layers applied{}\n", root, image.layers, loader_settings_note(image.environment, "--ld-library-path or --preload"));
  return image;
}

int run(const WhyArgs& args) {
  bool unpack_failed = false;
  auto image = args.scan.root ? unpack_root_image(*args.scan.root, args.scan.image, unpack_failed) : std::nullopt;
  if (unpack_failed) return kExitUsage;
  if (!image && (args.scan.image.platform || args.scan.image.name))
    print_safe(stderr, "depscan: warning: {} chooses the image of an image archive given to --root; there is none: ignored\n",
               args.scan.image.platform && args.scan.image.name ? "--platform and --image" :
               args.scan.image.platform ? "--platform" : "--image");
  // An image unpacked with errors (a damaged layer, an unsafe member) may lack files: not a clean answer.
  bool damaged = image && std::any_of(image->findings.begin(), image->findings.end(),
                                      [](const Finding& f) { return f.severity == Severity::Error; });
  auto finish = [damaged](int code) {
    if (!damaged || code != kExitClean) return code;
    print_safe(stderr, "depscan: the image was unpacked with errors (above), so the answer may not hold in a container\n");
    return kExitFindings;
  };
  std::unique_ptr<FileSystem> fs = image               ? make_rooted_fs(image->rootfs)
                                   : args.scan.root    ? make_rooted_fs(absolute_path(*args.scan.root))
                                                       : make_real_fs();
  std::string logical = args.scan.root ? normalize_path(args.file) : absolute_path(args.file);
  auto sniffed = sniff(*fs, logical);
  if (!sniffed) {
    print_safe(stderr, "depscan: error: {}: {}\n", args.file, sniffed.error());
    return kExitUsage;
  }
  BinaryCache cache(*fs);
  ResolveOptions resolve = resolve_options_for(args.scan);
  if (image) use_image_environment(resolve.env, image->environment, args.scan);
  Resolver resolver(cache, std::move(resolve));
  auto matrix = load_embedded_matrix(MatrixUse::Scan);
  std::string python_env;
  if (!args.python_env.empty()) {
    auto prefix = python_env_of(args, *fs);
    if (!prefix) {
      print_safe(stderr, "depscan: error: {}: {}\n", args.python_env, prefix.error());
      return kExitUsage;
    }
    python_env = *prefix;
  }
  FileLoadedFirst loaded_first = loaded_first_of(logical, matrix, *fs, python_env);
  if (!python_env.empty() && !matrix)
    print_safe(stderr, "depscan: warning: --python-env {}: nothing is loaded before {}: {}\n", args.python_env,
               args.file, matrix.error());
  else if (!python_env.empty() && loaded_first.site_packages.empty())
    print_safe(stderr, "depscan: warning: {} is in no site-packages directory: --python-env {} has no module to "
                       "answer for\n", args.file, args.python_env);
  else if (loaded_first.outside_python_env)
    print_safe(stderr, "depscan: warning: {} is in {}, which is not on the sys.path of {}'s interpreter: answered as "
                       "if that interpreter imported it from there\n", args.file, loaded_first.site_packages,
               args.python_env);
  size_t root = resolver.add_root(logical, loaded_first.loaded);
  if (args.dlopen) add_run_time_edges(resolver, matrix, *fs);
  const Graph& g = resolver.graph();
  size_t root_object = g.roots[root];
  if (!g.objects[root_object].binary) {
    print_safe(stderr, "depscan: error: {}: {}\n", args.file, g.objects[root_object].read_error);
    return kExitUsage;
  }
  const Edge* first = nullptr;
  std::vector<const Edge*> later;
  for (const Edge& e : g.edges) {
    if (e.root != root || !names_library(g, e, args.library)) continue;
    if (!first) first = &e;
    else later.push_back(&e);
  }
  if (!first) {
    print_loader(*fs, *g.objects[root_object].binary, args.scan, resolver.own_loader(root));
    print_safe("{} is not requested by anything in the graph of {}; if {} asked for it:\n", args.library,
               logical, logical);
    std::vector<Attempt> steps = resolver.explain(root, root_object, args.library);
    Attempt conclusion = steps.back();  // "found P via ld.so.cache" or "not found: ..."
    steps.pop_back();
    print_passed_over(loaded_first, args.library);
    print_steps(steps);
    bool found = conclusion.outcome.starts_with("found");
    std::string outcome = conclusion.outcome;
    if (outcome.starts_with("not found: ")) outcome.erase(0, std::string_view("not found: ").size());
    else if (!found) outcome = conclusion.path + ": " + outcome;  // "could not be read": whose
    print_safe("  => {}{}\n", found ? "" : "NOT FOUND: ", outcome);
    return finish(found ? kExitClean : kExitFindings);
  }
  print_loader(*fs, *g.objects[root_object].binary, args.scan, resolver.own_loader(root));
  print_safe("{} requested by {} ({}), first in load order:\n", first->name, g.objects[first->from].path,
             to_string(first->kind));
  if (first->loaded_first) print_safe("  loaded before the module by its Python package: {}\n", first->how_detail);
  else if (first->kind == EdgeKind::Dlopen) print_safe("  opened at run time with dlopen: {}\n", first->source);
  if (!first->loaded_first) print_passed_over(loaded_first, first->name);
  print_steps(first->tried.to_vector());
  print_safe("  => {}\n", describe(g, *first));
  for (const Edge* e : later)
    print_safe("also requested by {} as {}: {}\n", g.objects[e->from].path, e->name, describe(g, *e));
  return finish(first->to ? kExitClean : kExitFindings);
}

}  // namespace

void add_why_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<WhyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "why", "explain step by step how the loader finds LIBNAME in FILE's graph: every candidate and why "
             "it was taken or skipped (exit 1 if it is not found)");
  cmd->add_option("file", args->file, "the executable or library whose graph to explain")->required();
  cmd->add_option("library", args->library, "the library name (NEEDED entry or soname)")->required();
  cmd->add_option("--root", args->scan.root,
                  "analyse a container root file system as if it were /: a directory, or an image archive "
                  "(`docker save`, OCI; its config's LD_LIBRARY_PATH, LD_PRELOAD and WORKDIR apply)")
      ->check(CLI::ExistingPath);
  add_image_choice_options(*cmd, args->scan.image);
  cmd->add_option("--python-env", args->python_env,
                  "the venv or conda prefix whose interpreter imports FILE: a venv that includes its base "
                  "environment's site-packages imports the base's modules with its own site-packages first "
                  "(default: the interpreter of FILE's own environment)");
  cmd->add_option("--ld-library-path", args->scan.ld_library_path, "LD_LIBRARY_PATH of the target process");
  cmd->add_option("--preload", args->scan.preload, "LD_PRELOAD of the target process");
  add_cpu_level_option(*cmd, args->scan.target.cpu_isa_levels);
  cmd->add_flag("--no-etc-preload", args->scan.no_etc_preload, "ignore /etc/ld.so.preload");
  cmd->add_flag("--no-color", [](int64_t) {}, "accepted as the scan takes it: why's output has no colour");
  cmd->add_flag("--no-dlopen", [args](int64_t) { args->dlopen = false; },
                "only the libraries the loader maps at start-up, not those opened with dlopen");
  cmd->callback([args, &exit_code] {
    exit_code = run(*args);
  });
}

}  // namespace depscan::cli
