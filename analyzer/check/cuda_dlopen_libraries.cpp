#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"
#include "analyzer/check/cuda_install_hint.h"
#include "analyzer/check/optional_reach.h"
#include "analyzer/check/other_roots.h"
#include "analyzer/check/per_file.h"
#include "analyzer/check/shipped_libraries.h"
#include "analyzer/check/windows_dlls.h"

namespace depscan {
namespace {

bool is_driver_name(std::string_view name) { return name == "libcuda.so.1" || name == "libcuda.so"; }

// Openers that need every library they name (TensorFlow's DSO loader, the matrix's
// "library_name_strings" rows).
bool needs_all_named(const Matrix& matrix, const std::string& opener) {
  for (const DlopenRow* row : matrix.dlopen_rows_for(opener))
    if (row->probe == "library_name_strings") return true;
  return false;
}

// A real (not stub) libcuda.so.1 was found somewhere: the driver is installed.
bool driver_present(const Graph& g, const CudaStack& stack) {
  for (const CudaLibrary* d : stack.of("driver"))
    if (!d->stub && d->name == "libcuda.so.1") {
      for (const Edge& e : g.edges)
        if (e.to == d->object) return true;
    }
  return false;
}

std::string tried_text(const Edge& e) {
  std::string tried;
  size_t shown = 0;
  for (const Attempt& a : e.tried) {
    if (++shown > 6) {
      tried += ", ...";
      break;
    }
    tried += (tried.empty() ? "" : ", ") + a.path;
  }
  return tried;
}

// Whose RUNPATH a dlopen searches: the caller's under glibc, the main program's under musl.
std::string runpath_owner(const Graph& g, const Edge& e) {
  bool musl = e.root < g.root_loaders.size() && g.root_loaders[e.root].musl;
  if (!musl) return basename_of(g.objects[e.from].path);
  const Object& root = g.objects[g.roots[e.root]];
  return root.binary && root.binary->is_executable() ? basename_of(root.path) : "the program";
}

std::string dlopen_fix(const Matrix& matrix, const std::string& name, const std::string& opener,
                       const std::vector<int>& process_majors) {
  if (auto hint = cuda_install_hint(matrix, name, opener, process_majors)) return *hint;
  return fmt::format("install the library that provides {} or add its directory to LD_LIBRARY_PATH or {}'s RUNPATH",
                     name, opener);
}

// LoadLibrary with a bare name searches the application's directory (the .exe's; a scan rooted at
// a DLL takes the DLL's), the system directories and PATH, unless the opener narrows the search
// with LoadLibraryEx flags or SetDefaultDllDirectories, which its strings do not show.
std::string load_library_fix(const std::string& name, const std::string& root) {
  const auto& windows = load_windows_dlls();
  if (windows && windows->is_driver_dll(name))
    return fmt::format("{} comes with the {}: install the driver on the target; never ship {} with the program", name,
                       windows->driver.package, name);
  return fmt::format("ship {} in the application directory (the program's .exe directory; this scan took that of {}) "
                     "or in a directory on PATH, unless the opener narrows its search with LoadLibraryEx flags",
                     name, root);
}

// The CUDA component of a SONAME or of a Windows DLL name.
const ComponentRow* component_of(const Matrix& matrix, const std::string& name) {
  const ComponentRow* c = matrix.component_of(name);
  return c ? c : matrix.windows_component_of(name);
}

// (root, object, component) of every CUDA library an object has, loaded or opened. A library that
// names several majors of one component in its read-only data (ONNX Runtime's "load any of"
// libcudart.so.13, libcudart.so.12) needs only the one it finds.

std::set<std::tuple<size_t, size_t, std::string>> components_reached(const Graph& g, const Matrix& matrix) {
  std::set<std::tuple<size_t, size_t, std::string>> out;
  for (const Edge& e : g.edges)
    if (e.to)
      if (const ComponentRow* c = component_of(matrix, e.name)) out.emplace(e.root, e.from, c->component);
  return out;
}

bool has_other_major(const std::set<std::tuple<size_t, size_t, std::string>>& reached, const Matrix& matrix, const Edge& e) {
  const ComponentRow* c = component_of(matrix, e.name);
  return c && reached.count({e.root, e.from, c->component});
}

// Another wheel of the install ships the file where the loader does not look: named, with who
// could load it first (shipped_libraries.h), or as another CUDA major's copy that is not the one.
void add_shipped_copy(Finding& f, const CheckContext& ctx, const Edge& e, const std::vector<int>& process_majors) {
  const Graph& g = ctx.graph;
  const Object& from = g.objects[e.from];
  const auto* found = shipped_library(ctx, e.name, process_majors);
  if (!found) return;
  if (auto major = copy_for_other_major(ctx.matrix, e.name, *found, process_majors)) {
    f.message += other_major_note(*found, *major, process_majors);
    return;
  }
  // The module's own dlopen (CuPy 13's runtime module and libcudart): its package loaded nothing for it.
  auto package = e.from == g.roots[e.root] ? package_loads_first(ctx, e.root) : std::nullopt;
  if (package) {
    f.message += not_loaded_first_note(ctx, *found, *package, e.root, "the dlopen");
  } else {  // cuDNN's dlopen of libnvrtc.so.12 in a PyTorch install
    f.severity = Severity::Warning;
    f.message += shipped_note(ctx, *found, "the dlopen", from);
  }
  f.fix = shipped_fix(ctx, *found, fmt::format("{} opens it", basename_of(from.path)), from);
}

}  // namespace

std::vector<Finding> check_dlopen_libraries(const CheckContext& ctx, const CudaStack& stack) {
  std::vector<Finding> out;
  const Graph& g = ctx.graph;
  bool has_driver = driver_present(g, stack);
  std::vector<std::vector<int>> majors;  // per root, computed on the first missing library
  std::optional<std::set<std::tuple<size_t, size_t, std::string>>> reached;  // on the first inferred name missing
  OptionalReach optional(g, ctx.matrix);
  std::optional<OtherRoots> others;  // built on the first missing library
  std::map<std::pair<std::string, std::string>, size_t> seen;
  for (const Edge& e : g.edges) {
    if (e.kind != EdgeKind::Dlopen || e.to || e.system_provided) continue;  // a Windows DLL: its own info line
    if (e.loaded_first) continue;  // the resolver reported the file that cannot be loaded
    if (is_driver_name(e.name) && !has_driver) continue;  // no driver at all: the stack summary says so
    const Object& from = g.objects[e.from];
    std::string opener = soname_or_file_name(from);
    if (ctx.matrix.dlopen_is_optional(opener, e.name)) continue;
    bool required = !e.inferred || needs_all_named(ctx.matrix, opener);
    if (!required && !reached) reached = components_reached(g, ctx.matrix);
    if (!required && has_other_major(*reached, ctx.matrix, e)) continue;
    std::string tried = tried_text(e);
    bool pe = from.binary && from.binary->format == Format::Pe;
    Finding f{"dlopen-library-not-found", required ? Severity::Error : Severity::Warning, e.from,
              fmt::format("{} opens {} with {} at run time{}, and it cannot be found{}: {} only when that code runs ({})",
                          from.path, e.name, pe ? "LoadLibrary" : "dlopen",
                          e.inferred ? " (name found in its read-only data)" : "",
                          tried.empty() ? "" : " (tried " + tried + ")",
                          pe ? "LoadLibrary fails with error 126 (ERROR_MOD_NOT_FOUND)"
                             : fmt::format("the loader reports '{}: cannot open shared object file'", e.name),
                          pe ? "the import table does not show it" : "ldd does not show it"),
              pe ? load_library_fix(e.name, basename_of(g.objects[g.roots[e.root]].path))
                 : dlopen_fix(ctx.matrix, e.name, runpath_owner(g, e), cuda_majors_of_root(majors, g, ctx.matrix, e.root)),
              ""};
    if (f.severity == Severity::Error) {
      if (!others) others.emplace(g, ctx.matrix);
      if (auto why = only_when_optional(optional, *others, g, e)) {  // ONNX Runtime's CUDA provider's cuDNN
        f.severity = Severity::Warning;
        f.message += *why;
      }
    }
    add_shipped_copy(f, ctx, e, cuda_majors_of_root(majors, g, ctx.matrix, e.root));
    add_once_per_request(out, seen, g, e, std::move(f));
  }
  return out;
}

}  // namespace depscan
