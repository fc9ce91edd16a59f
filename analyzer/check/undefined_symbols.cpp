// Relocation-time symbol lookup (dl-lookup.c): every non-weak undefined dynamic symbol of every
// loaded object must bind to a definition in the root's lookup scope.
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/check/cuda_install_hint.h"
#include "analyzer/util/listing.h"
#include "analyzer/check/symbol_index.h"

namespace depscan {
namespace {

bool is_data(SymbolType type) {
  return type == SymbolType::Object || type == SymbolType::Tls || type == SymbolType::Common;
}

// A missing library of the objects loaded at start-up: the loader stops before binding the program.
bool has_missing_library(const Graph& graph, const SymbolIndex& symbols, size_t root) {
  for (size_t i : symbols.edges_of(root))
    if (const Edge& e = graph.edges[i]; !e.to && (e.kind == EdgeKind::Needed || e.kind == EdgeKind::Preload) &&
                                        !e.ignored_when_missing() && !symbols.is_dlopened(root, e.from))
      return true;
  return false;
}

bool defines_version(const Binary& binary, std::string_view version) {
  for (const VersionDef& d : binary.version_defs)
    if (d.name == version) return true;
  return false;
}

// A VER_FLG_WEAK need that is missing only warns (dl-version.c), so the lookup of a symbol of
// that version still runs and fails.
bool need_is_weak(const Binary& requester, const Symbol& ref) {
  for (const VersionNeed& need : requester.version_needs)
    if (need.version == ref.version && need.file == ref.version_file) return need.weak;
  return false;
}

struct RootFacts {
  size_t root = 0;
  bool program = false;          // an executable: nothing comes before it in the scope
  bool missing_library = false;  // the loader stops at library-not-found before binding
  bool musl = false;             // musl's loader binds every reference at load
  // Each dlopen call fails or succeeds on its own: one plugin's missing library says nothing of another's.
  bool missing_for(const SymbolIndex& symbols, size_t object) const {
    return symbols.is_dlopened(root, object) ? symbols.dlopen_fails(root, object) : missing_library;
  }
};

// A library scanned on its own may be a plugin or extension: the program that loads it comes
// first in the scope and may define its unversioned references (Perl_*, Py*).
bool may_come_from_host(const RootFacts& facts, const Symbol& ref) {
  return !facts.program && ref.version_file.empty();
}

// One warning per plugin-like object for all the symbols its host must define.
Finding host_symbols_finding(const Graph& graph, size_t root, size_t object, const std::vector<std::string>& names) {
  const Object& requester = graph.objects[object];
  Finding f;
  f.code = "undefined-symbol";
  f.severity = Severity::Warning;
  f.object = object;
  f.path = requester.path;
  f.message = fmt::format("symbol lookup error: {}: undefined symbol: {}{}; no loaded object defines {}, so "
                          "the program that loads {} must (a plugin or extension module?)",
                          requester.path, names.front(),
                          names.size() > 1 ? fmt::format(" and {} more ({})", names.size() - 1,
                                                         join_limited({names.begin() + 1, names.end()}, 5))
                                           : "",
                          names.size() > 1 ? "them" : "it", graph.objects[graph.roots[root]].path);
  f.fix = "load it from the program it was built for, or link the library that defines these symbols";
  return f;
}

// CPython extension modules export PyInit_<module>. The interpreter that imports one defines the
// C API the module calls: the python3.x executable exports it, or libpython3.x.so does.
std::optional<std::string_view> python_init_function(const Binary& binary) {
  for (const Symbol& s : binary.symbols)
    if (s.defined && s.binding == SymbolBinding::Global && s.name.starts_with("PyInit_")) return s.name;
  return std::nullopt;
}

// Py_*, PyList_New, _Py_Dealloc, _PyRuntime: not Pyramid_draw.
bool is_python_api(std::string_view name) {
  if (name.starts_with('_')) name.remove_prefix(1);
  return name.size() > 2 && name.starts_with("Py") && (name[2] == '_' || (name[2] >= 'A' && name[2] <= 'Z'));
}

// "CPython 3.11" from foo.cpython-311-x86_64-linux-gnu.so, "the stable ABI" from foo.abi3.so.
std::string python_build_of(std::string_view path) {
  std::string_view name = path.substr(path.rfind('/') + 1);
  if (name.find(".abi3.") != std::string_view::npos) return "; built for the stable ABI (abi3)";
  size_t at = name.find(".cpython-3");
  if (at == std::string_view::npos) return "";
  std::string_view digits = name.substr(at + 10);
  size_t end = digits.find_first_not_of("0123456789");
  bool free_threaded = end != std::string_view::npos && digits[end] == 't';  // cpython-313t
  digits = digits.substr(0, end);
  if (digits.empty()) return "";
  return fmt::format("; built for CPython 3.{}{}", digits, free_threaded ? " (free-threaded)" : "");
}

// Why the interpreter is the host: the module's PyInit_ function, or a library of a Python
// environment (jaxlib's libjax_common.so, which the extension modules load).
std::optional<std::string> python_host_reason(const Object& object) {
  if (object.binary)
    if (auto init = python_init_function(*object.binary))
      return fmt::format("is a CPython extension module ({})", *init);
  const std::string& path = file_path(object);
  if (path.find("/site-packages/") != std::string::npos || path.find("/dist-packages/") != std::string::npos)
    return std::string("is a library of a Python environment (site-packages)");
  return std::nullopt;
}

Finding python_api_finding(const Graph& graph, size_t object, const std::string& reason, const std::vector<std::string>& names) {
  const Object& module = graph.objects[object];
  Finding f;
  f.code = "python-extension";
  f.severity = Severity::Info;
  f.object = object;
  f.path = module.path;
  bool one = names.size() == 1;
  f.message = fmt::format("{} {}: its {} Python C-API symbol{} ({}) come{} from the interpreter that imports it{}",
                          module.path, reason, names.size(), one ? "" : "s", join_limited(names, 5), one ? "s" : "",
                          python_build_of(module.path));
  return f;
}

// The symbols a library root's host must define, in findings: the Python C API from the interpreter
// for an extension module or a library in site-packages (info), everything else from an unknown
// program (warning).
void add_host_symbol_findings(const Graph& graph, size_t root, size_t object, const std::vector<std::string>& names,
                              std::vector<Finding>& out) {
  auto reason = python_host_reason(graph.objects[object]);
  if (!reason) {
    out.push_back(host_symbols_finding(graph, root, object, names));
    return;
  }
  std::vector<std::string> python, other;
  for (const std::string& name : names) (is_python_api(name) ? python : other).push_back(name);
  if (!python.empty()) out.push_back(python_api_finding(graph, object, *reason, python));
  if (!other.empty()) out.push_back(host_symbols_finding(graph, root, object, other));
}

// Why and when the unresolved reference fails: at load, or only at its first call.
std::string when_it_fails(const Binary& requester, const Symbol& ref, const Target& target, bool musl) {
  if (musl) return "fails at load: musl's loader binds every reference before the program starts";
  if (ref.copy_relocated) return "fails at load: the program keeps its own copy of this variable (a copy relocation), filled from the library at start-up";
  if (is_data(ref.type)) return "fails at load: data reference";
  if (ref.bound_at_load) return "fails at load: a relocation the loader applies at start-up names it (a function pointer, vtable or -fno-plt call), lazy binding or not";
  if (requester.bind_now()) return "fails at load: the object is linked with -z now (BIND_NOW)";
  if (target.bind_now) return "fails at load: LD_BIND_NOW is set (--bind-now)";
  return "fails only when first called (lazy binding); at load with LD_BIND_NOW=1";
}

bool fails_at_load(const Binary& requester, const Symbol& ref, const Target& target, bool musl) {
  return musl || is_data(ref.type) || ref.bound_at_load || requester.bind_now() || target.bind_now;
}

// Listed, yet no definition to the loader.
bool lists_without_value(const Object& o, std::string_view name) {
  if (!o.binary) return false;
  return std::any_of(o.binary->symbols.begin(), o.binary->symbols.end(), [&](const Symbol& s) {
    return s.name == name && s.valueless_definition();
  });
}

Finding named_provider_finding(const CheckContext& ctx, size_t provider, const Object& requester, const Symbol& ref,
                               const std::vector<int>& process_majors, bool musl) {
  const Object& p = ctx.graph.objects[provider];
  std::string soname = soname_or_file_name(p);
  Finding f;
  f.code = "undefined-symbol";
  f.severity = fails_at_load(*requester.binary, ref, ctx.target, musl) ? Severity::Error : Severity::Warning;
  f.path = requester.path;
  std::string loader_says = musl ? fmt::format("Error relocating {}: {}: symbol not found", requester.path, ref.name)
                                 : fmt::format("symbol lookup error: {}: undefined symbol: {}", requester.path, ref.name);
  if (lists_without_value(p, ref.name)) {
    f.message = fmt::format("{} (named after {}, which it NEEDs: the loaded {} lists it with value 0, which the loader "
                            "does not take for a definition)", loader_says, soname, p.path);
    f.fix = fmt::format("rebuild {} so that {} has an address, or load the {} release {} was built against",
                        p.path, ref.name, soname, basename_of(requester.path));
    return f;
  }
  f.message = fmt::format("{} (named after {}, which it NEEDs: the loaded {} does not define it, so it is another "
                          "release than the one {} was built against)",
                          loader_says, soname, p.path, basename_of(requester.path));
  f.fix = fmt::format("load the {} release {} was built against (one that defines {}), ahead of {} on the search path",
                      soname, basename_of(requester.path), ref.name, p.path);
  if (auto hint = cuda_install_hint(ctx.matrix, soname, basename_of(requester.path), process_majors)) f.fix += "; " + *hint;
  return f;
}

std::string needed_list(const Graph& graph, const SymbolIndex& symbols, size_t root, size_t object) {
  std::vector<std::string> names;
  for (size_t n : symbols.direct_needed(root, object)) names.push_back(graph.objects[n].path);
  return names.empty() ? "no NEEDED libraries" : "NEEDED " + join_limited(names, 6);
}

// "nccl" from libnccl.so.2, "cudnn_ops" from libcudnn_ops.so.9.
std::string_view library_stem(std::string_view soname) {
  if (!soname.starts_with("lib")) return {};
  soname.remove_prefix(3);
  return soname.substr(0, soname.find(".so"));
}

// `name` begins with `stem` as a C API's names do: ncclWaitSignal, png_read_info.
bool named_by_stem(std::string_view name, std::string_view stem) {
  if (stem.size() < 3 || name.size() <= stem.size() || !name.starts_with(stem)) return false;
  char next = name[stem.size()];
  return next == '_' || (next >= 'A' && next <= 'Z');
}

bool defines_some_named(const Binary& binary, std::string_view stem) {
  return std::any_of(binary.symbols.begin(), binary.symbols.end(),
                     [&](const Symbol& s) { return s.defined && named_by_stem(s.name, stem); });
}

// An unversioned reference named after a library the requester NEEDs (ncclCommRegister and
// libnccl.so.2, cudnnBackendExecute and libcudnn.so.9): that library was expected to define it, and
// the copy loaded is another release than the one it was linked against. The longest stem wins
// (cutensorMgInit: libcutensorMg.so.2, not libcutensor.so.2), and only a library that defines
// other names of its stem counts (libcuda.so.1 defines cu*, never cuda*).
std::optional<size_t> named_provider(const Graph& graph, const SymbolIndex& symbols, size_t root, size_t object,
                                     const Symbol& ref) {
  if (!ref.version.empty()) return std::nullopt;
  std::optional<size_t> best;
  size_t best_length = 0;
  for (size_t n : symbols.direct_needed(root, object)) {
    const Object& library = graph.objects[n];
    std::string soname = soname_or_file_name(library);
    std::string_view stem = library_stem(soname);
    if (stem.size() <= best_length || !named_by_stem(ref.name, stem)) continue;
    if (!library.binary || !defines_some_named(*library.binary, stem)) continue;
    best = n;
    best_length = stem.size();
  }
  return best;
}

// A definition of `ref` in a library a dlopen of the root loads (and does not unload) outside the
// requester's scope: a sibling plugin, or a plugin the program itself refers to.
std::optional<Binding> defined_by_another_dlopen(const SymbolIndex& symbols, size_t root, const Symbol& ref) {
  std::vector<size_t> loaded;
  for (size_t o : symbols.members(root))
    if (symbols.is_dlopened(root, o) && !symbols.dlopen_fails(root, o)) loaded.push_back(o);
  return symbols.bind(loaded, ref);
}

// `majors`: the CUDA majors per root (cuda_majors_of_root), filled on first use.
std::optional<Finding> unresolved(const CheckContext& ctx, const SymbolIndex& symbols, std::vector<std::vector<int>>& majors,
                                  const RootFacts& facts, size_t object, const Symbol& ref) {
  const Object& requester = ctx.graph.objects[object];
  std::optional<size_t> provider;
  if (!facts.missing_for(symbols, object)) {
    if (auto named = named_provider(ctx.graph, symbols, facts.root, object, ref)) {
      Finding f = named_provider_finding(ctx, *named, requester, ref,
                                         cuda_majors_of_root(majors, ctx.graph, ctx.matrix, facts.root), facts.musl);
      f.object = object;
      f.message += "; " + when_it_fails(*requester.binary, ref, ctx.target, facts.musl);
      if (symbols.is_dlopened(facts.root, object)) f.message += " (it is loaded by dlopen: the dlopen call fails)";
      return f;
    }
  }
  if (!ref.version.empty() && !ref.version_file.empty()) {
    provider = symbols.loaded(facts.root, ref.version_file);
    if (!provider) return std::nullopt;  // library-not-found
    const Binary& p = *ctx.graph.objects[*provider].binary;
    if (!p.version_defs.empty() && !defines_version(p, ref.version) && !need_is_weak(*requester.binary, ref))
      return std::nullopt;  // the version check fails first
  } else if (facts.missing_for(symbols, object)) {
    return std::nullopt;  // the missing library may define it; the loader stops before binding
  }
  Finding f;
  f.code = "undefined-symbol";
  f.severity = fails_at_load(*requester.binary, ref, ctx.target, facts.musl) ? Severity::Error : Severity::Warning;
  f.object = object;
  f.path = requester.path;
  std::string versioned = ref.version.empty() ? "" : fmt::format(", version {}", ref.version);
  f.message = facts.musl ? fmt::format("Error relocating {}: {}: symbol not found", requester.path, ref.name)
                         : fmt::format("symbol lookup error: {}: undefined symbol: {}{}", requester.path, ref.name, versioned);
  if (provider) {
    const Object& p = ctx.graph.objects[*provider];
    f.message += fmt::format(" (expected from {} => {}, which does not define it)", ref.version_file, p.path);
    f.fix = fmt::format("install the {} that {} was built against (it defines {}@{}), or rebuild {} "
                        "against {}", ref.version_file, requester.path, ref.name, ref.version,
                        requester.path, p.path);
  } else if (auto elsewhere = defined_by_another_dlopen(symbols, facts.root, ref)) {
    const Object& e = ctx.graph.objects[elsewhere->object];
    f.message += fmt::format(" ({} defines it, but a dlopen of its own loads it, outside {}'s lookup scope; {} has {})",
                             e.path, requester.path, requester.path, needed_list(ctx.graph, symbols, facts.root, object));
    f.fix = symbols.is_dlopened(facts.root, object)
                ? fmt::format("add {} to {}'s NEEDED (link it with -l), or have it opened with RTLD_GLOBAL before {} is loaded",
                              soname_or_file_name(e), requester.path, requester.path)
                : fmt::format("add {} to {}'s NEEDED (link it with -l), or preload it: {} is loaded at start-up, before "
                              "any dlopen", soname_or_file_name(e), requester.path, requester.path);
  } else {
    f.message += fmt::format(" (no loaded object defines it; {} has {})", requester.path,
                             needed_list(ctx.graph, symbols, facts.root, object));
    f.fix = fmt::format("load the library that defines {} (add it to NEEDED or LD_PRELOAD), or "
                        "rebuild {} without the reference", ref.name, requester.path);
  }
  f.message += "; " + when_it_fails(*requester.binary, ref, ctx.target, facts.musl);
  if (symbols.is_dlopened(facts.root, object)) f.message += " (it is loaded by dlopen: the dlopen call fails)";
  return f;
}

// check_match (dl-lookup.c) asserts when a versioned reference meets its name in the very file its
// version need names and that file has no symbol versioning at all (no DT_VERSYM): a library
// rebuilt without its version script under the same name. glibc only.
std::optional<Finding> unversioned_version_file(const CheckContext& ctx, const SymbolIndex& symbols,
                                                const RootFacts& facts, size_t object, const Symbol& ref,
                                                const Binding& binding) {
  if (facts.musl || ref.version.empty() || ref.version_file.empty() || binding.symbol->version_index != kNoVersym)
    return std::nullopt;
  auto named = symbols.loaded(facts.root, ref.version_file);
  const Object& provider = ctx.graph.objects[binding.object];
  if (!named || ctx.graph.objects[*named].path != provider.path) return std::nullopt;
  const Object& requester = ctx.graph.objects[object];
  Finding f;
  f.code = "symbol-version-not-found";
  f.severity = fails_at_load(*requester.binary, ref, ctx.target, false) ? Severity::Error : Severity::Warning;
  f.object = object;
  f.path = requester.path;
  f.message = fmt::format("Inconsistency detected by ld.so: dl-lookup.c: check_match: Assertion `version->filename == "
                          "NULL || ! _dl_name_match_p (version->filename, map)' failed! ({} binds {}@{} in {}, which "
                          "has no symbol versioning at all); {}",
                          requester.path, ref.name, ref.version, provider.path,
                          when_it_fails(*requester.binary, ref, ctx.target, false));
  f.fix = fmt::format("install the {} that {} was built against (it defines {}), or rebuild {} against the installed one",
                      ref.version_file, requester.path, ref.version, requester.path);
  return f;
}

// Of the names a library root leaves to its host, those that bind where another root of the scan
// loads that library (libtorch_nvshmem.so's c10::cuda symbols, defined by libc10_cuda.so, which
// libtorch_cuda.so loads with it) come from the libraries loaded with it, not from a host.
void drop_names_bound_elsewhere(const Graph& graph, const SymbolIndex& symbols, size_t own_root, size_t object,
                                std::vector<std::string>& names) {
  for (size_t root = 0; root < graph.load_order.size() && root < graph.roots.size() && !names.empty(); ++root) {
    if (root == own_root || graph.roots[root] == object) continue;
    const std::vector<size_t>& members = symbols.members(root);
    if (std::find(members.begin(), members.end(), object) == members.end()) continue;
    for (const SymbolIndex::Reference& reference : symbols.references(object)) {
      auto named = std::find(names.begin(), names.end(), reference.symbol->name);
      if (named != names.end() && symbols.bind_in(root, object, reference)) names.erase(named);
    }
  }
}

}  // namespace

std::vector<Finding> check_undefined_symbols(const CheckContext& ctx, const SymbolIndex& symbols) {
  std::map<std::tuple<size_t, std::string_view, std::string_view>, Finding> found;
  std::map<size_t, std::pair<size_t, std::vector<std::string>>> host_symbols;  // object -> root, names
  std::vector<std::vector<int>> cuda_majors;  // per root, on the first library blamed by name
  for (size_t root = 0; root < ctx.graph.load_order.size() && root < ctx.graph.roots.size(); ++root) {
    const Object& root_object = ctx.graph.objects[ctx.graph.roots[root]];
    RootFacts facts{root, root_object.binary && root_object.binary->is_executable(),
                    has_missing_library(ctx.graph, symbols, root),
                    root < ctx.graph.root_loaders.size() && ctx.graph.root_loaders[root].musl};
    for (size_t o : symbols.members(root)) {
      for (const SymbolIndex::Reference& reference : symbols.references(o)) {
        const Symbol& ref = *reference.symbol;
        if (ref.binding != SymbolBinding::Global) continue;
        if (auto binding = symbols.bind_in(root, o, reference)) {
          if (auto f = unversioned_version_file(ctx, symbols, facts, o, ref, *binding))
            found.try_emplace({o, ref.name, ref.version}, std::move(*f));
          continue;
        }
        if (may_come_from_host(facts, ref) && !facts.missing_for(symbols, o) &&
            !named_provider(ctx.graph, symbols, root, o, ref)) {
          auto& [first_root, names] = host_symbols.try_emplace(o, root, std::vector<std::string>()).first->second;
          if (first_root == root) names.emplace_back(ref.name);
          continue;
        }
        auto finding = unresolved(ctx, symbols, cuda_majors, facts, o, ref);
        if (!finding) continue;
        auto [it, inserted] = found.try_emplace({o, ref.name, ref.version}, *finding);
        if (!inserted && finding->severity > it->second.severity) it->second = std::move(*finding);
      }
    }
  }
  std::vector<Finding> out;
  for (auto& [key, f] : found) out.push_back(std::move(f));
  for (auto& [object, entry] : host_symbols) {
    drop_names_bound_elsewhere(ctx.graph, symbols, entry.first, object, entry.second);
    if (!entry.second.empty()) add_host_symbol_findings(ctx.graph, entry.first, object, entry.second, out);
  }
  return out;
}

}  // namespace depscan
