#include "analyzer/scan/scan.h"
#include "analyzer/resolve/dst.h"

#include <cstdlib>
#include <iterator>

#include <fmt/format.h>

#include "analyzer/check/container_capabilities.h"
#include "analyzer/check/container_requirements.h"
#include "analyzer/check/cuda_checks.h"
#include "analyzer/check/framework_cudnn.h"
#include "analyzer/check/gpu_code.h"
#include "analyzer/check/optional_modules.h"
#include "analyzer/check/python_variants.h"
#include "analyzer/check/shipped_libraries.h"
#include "analyzer/check/symbol_index.h"
#include "analyzer/check/windows_dlls.h"
#include "analyzer/check/wheel_policy.h"
#include "analyzer/input/collect.h"
#include "analyzer/input/sniff.h"
#include "analyzer/read/fatbin_reader.h"
#include "analyzer/resolve/hwcaps.h"
#include "analyzer/scan/prefetch.h"
#include "analyzer/scan/cuda_audit.h"
#include "analyzer/scan/dlopen_edges.h"
#include "analyzer/scan/loaded_first.h"
#include "analyzer/scan/merge_findings.h"
#include "analyzer/util/phase_timer.h"
#include "matrix/matrix.h"

namespace depscan {
namespace {

// What the scan works from: the file system, the knowledge, the inputs, every binary read and the
// resolver's tables: thousands of heap blocks. The report keeps them, so that freeing them is the
// caller's choice (the CLI leaves them to the process's exit).
struct ScanWork {
  std::unique_ptr<FileSystem> fs;
  Matrix matrix;
  CollectedInputs inputs;
  std::optional<BinaryCache> cache;
  std::optional<Resolver> resolver;
};

std::unique_ptr<FileSystem> file_system_for(const ScanOptions& options) {
  return options.root ? make_rooted_fs(absolute_path(*options.root)) : make_real_fs();
}

// The framework rows are needed only where installed distributions can name a framework's
// version (TensorFlow's dlopen names come from its build there); a scan of files skips them.
MatrixUse matrix_use_for(const CollectedInputs& inputs) {
  return inputs.distributions.empty() ? MatrixUse::Scan : MatrixUse::Everything;
}

Matrix matrix_for(const ScanOptions& options, const CollectedInputs& inputs, std::vector<Finding>& findings) {
  MatrixUse use = matrix_use_for(inputs);
  auto loaded = options.matrix_path ? load_matrix_file(*options.matrix_path, use) : load_embedded_matrix(use);
  if (loaded) return std::move(*loaded);
  findings.push_back({"matrix-error", Severity::Error, std::nullopt, loaded.error(), "", ""});
  return Matrix();
}

CollectRequest collect_request(const ScanOptions& options) {
  CollectRequest request{options.inputs, options.root.has_value(), options.python_env};
  request.image = options.image;
  return request;
}

// The collected inputs' findings and unreadable inputs become the report's; returns the roots.
const std::vector<std::string>& adopt_inputs(CollectedInputs& inputs, ScanReport& report) {
  for (Finding& f : inputs.findings) report.result.findings.push_back(std::move(f));
  inputs.findings.clear();
  for (const std::string& input : inputs.unreadable_inputs) report.unreadable_inputs.push_back(input);
  return inputs.roots;
}

}  // namespace

namespace {

// Every root has its own load order and edges, so a directory of libraries that load each other
// (a 10,000-library chain) grows as roots x depth. Past this many edges (5 times a whole audit
// of /usr/lib/x86_64-linux-gnu) the remaining roots are named in one error, not analysed.
constexpr size_t kMaxScanEdges = 100'000;

void add_roots_within_budget(Resolver& resolver, const std::vector<std::string>& roots,
                             const std::vector<std::vector<LoadedBeforeRoot>>& loaded_first, std::vector<Finding>& findings) {
  resolver.reserve_roots(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    if (resolver.graph().edges.size() >= kMaxScanEdges) {
      Finding f;
      f.code = "scan-limit";
      f.severity = Severity::Error;
      f.path = roots[i];
      f.message = fmt::format("{}: not analysed, nor {} more input file{}: the scan's dependency graph reached {} edges "
                              "after {} of {} files",
                              roots[i], roots.size() - i - 1, roots.size() - i - 1 == 1 ? "" : "s", kMaxScanEdges, i,
                              roots.size());
      f.fix = "scan the remaining files in smaller groups (a directory at a time, or one program and its libraries)";
      findings.push_back(std::move(f));
      return;
    }
    resolver.add_root(roots[i], i < loaded_first.size() ? loaded_first[i] : std::span<const LoadedBeforeRoot>());
  }
}

// The target as the options give it; an image's processes start with its GLIBC_TUNABLES and
// LD_BIND_NOW, not this shell's.
Target target_for(const ScanOptions& options, const std::optional<ImageEnvironment>& image) {
  Target target = options.target;
  if (image && !options.glibc_tunables_given) target.glibc_tunables = image->glibc_tunables;
  if (image && !options.bind_now_given) target.bind_now = image->bind_now;
  return target;
}

}  // namespace

void use_image_environment(LoaderEnvironment& env, const ImageEnvironment& image, const ScanOptions& options) {
  if (!options.ld_library_path) env.ld_library_path = image.ld_library_path;
  if (!options.preload) env.preload = split_preload_list(image.ld_preload);
  env.cwd = image.working_dir;
}

LoaderEnvironment environment_for(const ScanOptions& options) {
  LoaderEnvironment env = default_environment();
  if (options.ld_library_path) env.ld_library_path = *options.ld_library_path;
  if (options.preload) env.preload = split_preload_list(*options.preload);
  if (options.no_etc_preload) env.use_etc_preload = false;
  if (options.root) env.cwd = "/";
  if (options.target.cpu_isa_levels) set_hwcaps(env, hwcaps_at_level(detect_hwcaps(), *options.target.cpu_isa_levels));
  return env;
}

ResolveOptions resolve_options_for(const ScanOptions& options) {
  ResolveOptions resolve{environment_for(options), {}};
  resolve.windows_dlls = [] {
    const auto& windows = load_windows_dlls();
    return windows ? WindowsDllLists{windows->system, windows->driver.names} : WindowsDllLists{};
  };
  return resolve;
}

ScanReport run_scan(const ScanOptions& options) {
  ScanReport report;
  auto work = std::make_shared<ScanWork>();
  report.scan_work = work;
  PhaseTimer timer;
  std::unique_ptr<FileSystem>& fs = work->fs = file_system_for(options);
  CollectedInputs& inputs = work->inputs = collect_inputs(fs, collect_request(options));  // inputs: wheels installed, images unpacked
  auto unpacked = std::move(inputs.temp_dirs);                              // removed when run_scan returns
  const std::vector<std::string>& roots = adopt_inputs(inputs, report);     // inputs -> roots
  timer.mark("inputs");
  fs = make_cached_fs(std::move(fs));                                       // from here on the files hold still
  BinaryCache& cache = work->cache.emplace(*fs, ReadOptions{.symbols = options.symbols, .all_sections = false});  // read, once per inode
  prefetch_binaries(cache, roots, options.read_threads, std::move(inputs.open_roots));  // roots read (in parallel if from disk)
  timer.mark("read roots");
  ResolveOptions resolve = resolve_options_for(options);
  if (inputs.image_environment) use_image_environment(resolve.env, *inputs.image_environment, options);
  uint32_t cpu_isa_levels = resolve.env.isa_levels;
  Resolver& resolver = work->resolver.emplace(cache, std::move(resolve));  // ld.so rules
  std::vector<Finding> matrix_findings;
  auto decode_matrix = [&]() -> Matrix& {
    work->matrix = matrix_for(options, inputs, matrix_findings);
    timer.mark("matrix");
    return work->matrix;
  };
  // Knowledge, decoded after resolving (a second thread to decode it beside the reading cost more
  // than it saved), unless a Python install's roots need it first.
  FileOwners owners(inputs.distributions);
  bool python = !inputs.distributions.empty();
  Matrix* decoded = python ? &decode_matrix() : nullptr;
  add_roots_within_budget(resolver, roots, python ? libraries_loaded_first(roots, inputs.distributions, *decoded, owners, *fs)
                                                  : std::vector<std::vector<LoadedBeforeRoot>>(),
                          report.result.findings);
  timer.mark("resolve");
  Matrix& matrix = decoded ? *decoded : decode_matrix();
  report.result.findings.insert(report.result.findings.begin(), std::make_move_iterator(matrix_findings.begin()),
                                std::make_move_iterator(matrix_findings.end()));  // the matrix's come first
  for (const Finding& f : resolver.diagnostics()) report.result.findings.push_back(f);
  if (options.cuda_audit) report.cuda_audit_root = add_cuda_audit_root(resolver, matrix, *fs);  // no file: the CUDA stack a program would load
  if (options.dlopen_edges) add_dlopen_edges(resolver, matrix, *fs, &owners);  // run-time edges: known (matrix) and inferred (.rodata) dlopen
  timer.mark("dlopen edges");
  report.result.graph = resolver.take_graph();
  if (options.gpu_code || !options.target.gpus.empty())                      // GPU code: fatbin listings,
    attach_cuda_code(report.result.graph, *fs);                             //   read only when asked for
  for (auto& f : attribute_owners(report.result.graph, inputs, owners)) report.result.findings.push_back(std::move(f));  // distributions
  ShippedLibraries shipped(&inputs.distributions, &owners);
  const Target target = target_for(options, inputs.image_environment);
  CheckContext ctx{report.result.graph, matrix, target, *fs, &shipped, cpu_isa_levels};  // checks
  for (auto& f : check_program_interpreters(ctx)) report.result.findings.push_back(std::move(f));  // PT_INTERP
  for (auto& f : check_library_loaders(ctx)) report.result.findings.push_back(std::move(f));       // a library's loader
  for (auto& f : check_missing_libraries(ctx)) report.result.findings.push_back(std::move(f));
  for (auto& f : check_working_directory_search(ctx)) report.result.findings.push_back(std::move(f));  // RPATH ".", ""
  for (auto& f : check_executable_stack(ctx)) report.result.findings.push_back(std::move(f));  // PT_GNU_STACK
  for (auto& f : check_page_size(ctx)) report.result.findings.push_back(std::move(f));         // PT_LOAD vs pages
  for (auto& f : check_cpu_isa_level(ctx)) report.result.findings.push_back(std::move(f));     // x86 ISA marker
  for (auto& f : check_static_tls(ctx)) report.result.findings.push_back(std::move(f));        // PT_TLS vs surplus
  CudaStack cuda_stack = identify_cuda_stack(ctx);
  for (auto& f : check_gpu_code(ctx, cuda_stack.driver)) report.result.findings.push_back(std::move(f));  // --gpu vs fatbin
  for (auto& f : check_cuda_stack(ctx, cuda_stack)) report.result.findings.push_back(std::move(f));  // CUDA/cuDNN/driver
  for (auto& f : check_framework_cudnn(ctx, cuda_stack, inputs.distributions))
    report.result.findings.push_back(std::move(f));                                              // torch/TF vs cuDNN
  if (inputs.image_environment)                                              // NVIDIA_REQUIRE_* vs --driver
    for (auto& f : check_container_requirements(matrix, target, inputs.image_environment->requirements,
                                                 inputs.image_display))
      report.result.findings.push_back(std::move(f));
  if (inputs.image_environment)                                              // NVIDIA_DRIVER_CAPABILITIES vs the graph
    for (auto& f : check_container_capabilities(report.result.graph, matrix, *inputs.image_environment, inputs.image_display))
      report.result.findings.push_back(std::move(f));
  timer.mark("cuda checks");
  if (options.cuda_audit) report.cuda_stack = std::move(cuda_stack);                           // for the summary
  SymbolIndex symbols(report.result.graph);                                 // symbol tables, once per object
  timer.mark("symbol tables");
  for (auto& f : check_symbol_versions(ctx, symbols)) report.result.findings.push_back(std::move(f));    // DT_VERNEED
  timer.mark("symbol versions");
  if (options.symbols) {
    for (auto& f : check_undefined_symbols(ctx, symbols)) report.result.findings.push_back(std::move(f));  // symbol binding
    for (auto& f : check_copy_relocation_sizes(ctx, symbols)) report.result.findings.push_back(std::move(f));  // copied variables
    timer.mark("undefined symbols");
    for (auto& f : check_interposition(ctx, symbols)) report.result.findings.push_back(std::move(f));      // shadowed symbols
    timer.mark("interposition");
  }
  for (auto& f : check_target_floors(ctx)) report.result.findings.push_back(std::move(f));               // --target floors
  for (auto& f : check_wheel_policy(ctx, inputs.distributions)) report.result.findings.push_back(std::move(f));  // manylinux tags
  for (auto& f : check_wheel_pins(inputs.distributions)) report.result.findings.push_back(std::move(f));        // Requires-Dist pins
  apply_python_variants(report.result.findings, ctx, inputs.distributions);  // keep after the checks: one build per CUDA version loads
  apply_optional_modules(report.result.findings, ctx, inputs.distributions);  // likewise: modules imported in try/except
  timer.mark("other checks");
  merge_findings_on_one_file(report.result);     // one file by several paths: said once
  show_installed_paths(report.result, inputs);  // keep last: temporary paths -> installed locations
  return report;
}

}  // namespace depscan
