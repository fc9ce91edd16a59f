#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/check/cuda_install_hint.h"
#include "analyzer/check/driver_libraries.h"
#include "analyzer/check/load_order.h"
#include "analyzer/check/optional_reach.h"
#include "analyzer/check/other_roots.h"
#include "analyzer/check/per_file.h"
#include "analyzer/check/shipped_libraries.h"
#include "analyzer/check/windows_dlls.h"
#include "analyzer/resolve/musl_loader.h"
#include "analyzer/resolve/pe_search.h"

namespace depscan {
namespace {

// The driver's other libraries (NVML, NVDEC, ...) come with it as libcuda.so.1 does.
std::optional<std::string> driver_library_hint(const std::string& name) {
  const auto& table = load_driver_libraries();
  const DriverCapability* capability = table ? table->capability_of(name) : nullptr;
  if (!capability) return std::nullopt;
  return fmt::format("{} comes with the NVIDIA driver (its {} libraries: {}), not with a program or pip: install the "
                     "driver on the target; in a container, docker run --gpus mounts it when NVIDIA_DRIVER_CAPABILITIES "
                     "selects {}", name, capability->name, capability->what, capability->name);
}

// What to do differs by format: ld.so searches RUNPATH and LD_LIBRARY_PATH, Windows the
// application directory and its system directories; the C++ runtime has its own installer, and
// CUDA libraries come from the driver, PyPI or the toolkit.
std::string elf_fix(const Matrix& matrix, const std::string& name, const std::vector<int>& process_majors) {
  if (is_musl_libc_name(name))
    return fmt::format("{} is musl's C library: the file needing it is built for musl (Alpine; a musllinux wheel) and "
                       "loads only in a process of musl's loader (/lib/ld-musl-<arch>.so.1), which the analysed system "
                       "does not have: run it on a musl system, or use its glibc (manylinux) build",
                       name);
  if (auto hint = cuda_install_hint(matrix, name, "the binary", process_majors)) return *hint;
  if (auto hint = driver_library_hint(name)) return *hint;
  return fmt::format("install {} or add its directory to LD_LIBRARY_PATH or the binary's RUNPATH", name);
}

std::string pe_fix(const std::string& name) {
  const auto& windows = load_windows_dlls();
  if (windows && std::find(windows->system.begin(), windows->system.end(), pe_name_key(name)) != windows->system.end())
    return fmt::format("{} is part of Windows, and the scanned Windows directory lacks it: scan a copy of the target's "
                       "complete Windows/System32", name);
  if (windows && windows->is_driver_dll(name))
    return fmt::format("{} comes with the {}: install the driver on the target; never ship {} with the program", name,
                       windows->driver.package, name);
  if (const WindowsRedistributable* r = windows ? windows->redistributable_of(name) : nullptr)
    return fmt::format("ship {} in the application directory or install the {} on the target", name, r->package);
  return fmt::format("put {} in the application directory, or scan with --root DIR where DIR/Windows/System32 "
                     "holds the system DLLs", name);
}

std::string fix_for(const Matrix& matrix, const Object& importer, const std::string& name, const std::string& tried,
                    const std::vector<int>& process_majors) {
  if (tried.empty()) return "install the library or add its directory to the search path";
  bool pe = importer.binary && importer.binary->format == Format::Pe;
  return fmt::format("{}; tried: {}", pe ? pe_fix(name) : elf_fix(matrix, name, process_majors), tried);
}

// One line for the Windows system DLLs and one for the NVIDIA driver's DLLs the scan could not
// look for (API sets need none).
std::vector<Finding> unchecked_windows_dlls(const Graph& g) {
  std::vector<std::string> system, driver;
  for (const Edge& e : g.edges) {
    if (!e.system_provided || is_api_set_name(e.name)) continue;
    const auto& windows = load_windows_dlls();  // read on the first such DLL: ELF scans have none
    auto& names = windows && windows->is_driver_dll(e.name) ? driver : system;
    if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
  }
  std::vector<Finding> out;
  if (system.empty() && driver.empty()) return out;
  const auto& windows = load_windows_dlls();
  if (!system.empty())
    out.push_back(Finding{"windows-system-dll", Severity::Info, std::nullopt,
                          fmt::format("{}: Windows system DLL{}, not checked: the scan has no Windows directory",
                                      fmt::join(system, ", "), system.size() == 1 ? "" : "s"),
                          "scan with --root DIR where DIR/Windows/System32 holds the target's system DLLs to check them", ""});
  if (!driver.empty())
    out.push_back(Finding{"windows-driver-dll", Severity::Info, std::nullopt,
                          fmt::format("{}: installed by the {}, not checked: the scan has no Windows directory; the "
                                      "target needs the driver", fmt::join(driver, ", "), windows->driver.package),
                          fmt::format("install the {} on the target (never ship {} with the program); scan with --root "
                                      "DIR where DIR/Windows/System32 holds the target's DLLs to check it",
                                      windows->driver.package, fmt::join(driver, ", ")), ""});
  return out;
}

std::string tried_paths(const Edge& edge) {
  std::string tried;
  for (const Attempt& a : edge.tried) tried += (tried.empty() ? "" : ", ") + a.path;
  return tried;
}

Finding missing_library(const Graph& g, const Matrix& matrix, const Edge& edge, const std::string& tried,
                        const std::vector<int>& process_majors) {
  const Object& from = g.objects[edge.from];
  std::string reason = edge.how_detail.empty() ? "cannot open shared object file: No such file or directory"
                                               : edge.how_detail;
  Finding f;
  f.code = "library-not-found";
  // A delay-loaded DLL fails only when the program first calls into it.
  f.severity = edge.kind == EdgeKind::Delay ? Severity::Warning : Severity::Error;
  f.object = edge.from;
  f.message = fmt::format("{}: {} (needed by {})", edge.name, reason, from.path);
  f.fix = edge.filter_cycle ? "relink a library of the cycle without its -Wl,--filter or -Wl,--auxiliary entry"
          : edge.how_detail.starts_with("cannot dynamically load")  // ld.so refuses a program as a library
              ? fmt::format("{} is a program, which ld.so does not load as a library: link against a shared library "
                            "(-shared) instead, or drop the entry", edge.name)
              : fix_for(matrix, from, edge.name, tried, process_majors);
  return f;
}

// Libraries the shipping distribution's Python code loads by path first: one info finding per
// library, however many modules need it (RAPIDS' librmm.so: 140 modules).
class PreloadedLibraries {
 public:
  void add(const Graph& g, const Edge& edge, const ShippedLibraries::Shipped& shipped, const PythonPreload& row) {
    auto [it, inserted] = uses_.try_emplace(shipped.path, Use{edge.from, edge.name, &shipped, &row, {}});
    it->second.requesters.insert(file_path(g.objects[edge.from]));
  }
  void emit(const Graph& g, std::vector<Finding>& out) const {
    for (const auto& [path, use] : uses_) {
      const Object& first = g.objects[use.first];
      size_t others = use.requesters.size() - 1;
      const Distribution& d = *use.shipped->distribution;
      out.push_back(Finding{
          "library-not-found", Severity::Info, use.first,
          fmt::format("{}: not on the loader's search path of {}{}; {} {} installs it at {} and loads it by that path "
                      "first: {}, so the import works (the loader then finds it by its soname)",
                      use.name, first.path, others ? fmt::format(" and {} other file{}", others, others == 1 ? "" : "s") : "", d.name, d.version,
                      path, use.row->by),
          fmt::format("nothing to do when the modules are imported through {}'s Python package; a program that loads "
                      "them itself must load {} first (ctypes.CDLL)", d.name, path),
          ""});
    }
  }

 private:
  struct Use {
    size_t first;
    std::string name;
    const ShippedLibraries::Shipped* shipped;
    const PythonPreload* row;
    std::set<std::string> requesters;
  };
  std::map<std::string, Use> uses_;
};

}  // namespace

std::vector<Finding> check_missing_libraries(const CheckContext& ctx) {
  std::vector<Finding> out;
  const Graph& g = ctx.graph;
  std::vector<std::vector<int>> majors;  // per root, computed on the first missing library
  OptionalReach optional(g, ctx.matrix);
  std::optional<OtherRoots> others;  // built on the first missing library
  std::map<std::pair<std::string, std::string>, size_t> seen;
  PreloadedLibraries preloaded;
  for (const Edge& edge : g.edges) {
    if (edge.to) continue;
    // dlopen edges belong to the CUDA checks; the loader ignores a preload it cannot load
    // (the resolver reports preload-not-loaded).
    if (edge.kind == EdgeKind::Dlopen || edge.kind == EdgeKind::Preload || edge.system_provided ||
        edge.ignored_when_missing())
      continue;
    std::string tried = tried_paths(edge);
    const std::vector<int>& process_majors = cuda_majors_of_root(majors, g, ctx.matrix, edge.root);
    Finding f = missing_library(g, ctx.matrix, edge, tried, process_majors);
    if (edge.filter_cycle) {  // no other search would do better: the loader crashes
      add_once_per_request(out, seen, g, edge, std::move(f));
      continue;
    }
    if (!others) others.emplace(g, ctx.matrix);
    bool found_by_another_root = false;
    if (auto why = only_when_optional(optional, *others, g, edge)) {
      f.severity = Severity::Warning;
      f.message += *why;
    } else if (auto finder = others->root_finding(edge)) {
      f.severity = Severity::Warning;
      f.message += *finder;
      found_by_another_root = true;
    }
    // A library the loading program's own search finds (auditwheel's grafted libraries) needs no preload.
    const auto* found = found_by_another_root ? nullptr : shipped_library(ctx, edge.name, process_majors);
    if (auto major = found ? copy_for_other_major(ctx.matrix, edge.name, *found, process_majors) : std::nullopt) {  // cu12 wheel, CUDA 13 build
      f.message += other_major_note(*found, *major, process_majors);
      found = nullptr;
    }
    // No Python code runs before a program starts: it cannot load the file first.
    const Binary* start = edge.root < g.roots.size() ? g.objects[g.roots[edge.root]].binary.get() : nullptr;
    bool program = start && start->is_program_only();
    if (found && !edge.tried.empty() && !program) {
      // CuPy's modules need libcublas.so.12 from site-packages/nvidia/cublas/lib and load it first.
      const Object& importer = g.objects[edge.from];
      if (const PythonPreload* row = python_preload_of(ctx, *found)) {
        preloaded.add(g, edge, *found, *row);
        continue;
      }
      // ONNX Runtime's CUDA provider is a library its own code opens when a session starts, not a module
      bool module = python_extension_name(importer.path);
      std::string what = module ? "the import" : "loading " + basename_of(importer.path);
      if (auto package = package_loads_first(ctx, edge.root)) {  // CuPy 13: no pathfinder; the import fails
        f.message += not_loaded_first_note(ctx, *found, *package, edge.root, what);
      } else {
        f.severity = Severity::Warning;
        f.message += shipped_note(ctx, *found, what, importer);
      }
      std::string before = (module ? "importing " : "loading ") + importer.path;
      f.fix = fmt::format("{}; tried: {}", shipped_fix(ctx, *found, before, importer), tried);
    }
    add_once_per_request(out, seen, g, edge, std::move(f));
  }
  preloaded.emit(g, out);
  for (Finding& f : unchecked_windows_dlls(g)) out.push_back(std::move(f));
  for (size_t i = 0; i < g.objects.size(); ++i) {
    const Object& obj = g.objects[i];
    if (obj.binary || obj.read_error.empty()) continue;
    out.push_back(Finding{"parse-error", Severity::Error, i,
                          fmt::format("{}: {}", obj.path, obj.read_error), "", obj.path});
  }
  return out;
}

}  // namespace depscan
