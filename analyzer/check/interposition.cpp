// Interposition: a reference binds to the first definition in load order, which may belong to a
// different object than the library the requester was linked against (two copies of libcudart,
// a bundled and a system cuDNN). One warning per (winner, intended provider) pair. A library's
// calls of its own exported functions go through the same lookup (unless linked -Bsymbolic), so an
// object loaded earlier that defines them takes those too (two libraries that bundle one
// statically linked dependency and export it).
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/util/listing.h"
#include "analyzer/util/system_libraries.h"
#include "analyzer/check/symbol_index.h"

namespace depscan {
namespace {

// glibc's own libraries define the same symbols on purpose (libpthread/libdl compatibility
// stubs for libc); a winner among them is not news.
bool is_glibc_library(const Object& object) {
  return object.binary->soname && is_glibc_soname(*object.binary->soname);
}

// Replacing glibc's allocator (jemalloc, tcmalloc, tbbmalloc_proxy, profilers) is done on purpose.
bool is_allocator_function(std::string_view name) {
  static const std::set<std::string, std::less<>> names = {
      "malloc", "free", "calloc", "realloc", "memalign", "posix_memalign", "aligned_alloc", "valloc",
      "pvalloc", "malloc_usable_size", "reallocarray"};
  return names.count(name) > 0;
}

// The C++ and GCC runtimes export what a module may carry its own copy of (manylinux wheels link
// libstdc++'s newer parts statically), and glibc's libraries refer to their own variables through
// the GOT so that a program's copy relocation takes them: their own references going elsewhere
// is the design, not news.
bool is_toolchain_runtime(const Object& object) {
  return object.binary->soname && is_cxx_runtime_soname(*object.binary->soname);
}

// A name of libstdc++'s own (namespace std, the old ABI's std::string and streams, the C++ ABI's
// type information): what libstdc++.so.6 defines, and what a library carries a copy of when it
// links libstdc++'s newer parts statically (devtoolset's libstdc++_nonshared.a in manylinux
// builds: PyTorch's libc10.so, libtorch.so and cuFile all export std::__throw_bad_array_new_length).
// libc++'s std::__1 is another runtime and is not one of them. The mangled name cannot tell a
// program's own non-inline specialisation in std (std::hash<T>) from libstdc++'s: it is taken for one.
bool is_cxx_runtime_name(std::string_view name) {
  static constexpr std::string_view kPrefixes[] = {
      "_ZSt", "_ZNSt", "_ZNKSt", "_ZTISt", "_ZTSSt", "_ZTVSt", "_ZTINSt", "_ZTSNSt", "_ZTVNSt", "_ZTTNSt",
      "_ZGTtNSt", "_ZGTtNKSt",  // transactional-memory clones
      "_ZNSs", "_ZNKSs", "_ZNSi", "_ZNKSi", "_ZNSo", "_ZNKSo", "_ZNSd", "_ZNKSd",
      "_ZN10__cxxabiv1", "_ZTIN10__cxxabiv1", "_ZTSN10__cxxabiv1", "_ZTVN10__cxxabiv1"};
  for (std::string_view prefix : kPrefixes)
    if (name.starts_with(prefix)) return !name.substr(prefix.size()).starts_with("3__1");
  return false;
}

// Symbols the linker defines in every object it links (the ends of its segments).
bool is_linker_defined(std::string_view name) {
  return name == "_end" || name == "_edata" || name == "__bss_start" || name == "_etext" || name == "end" ||
         name == "edata" || name == "etext";
}

bool is_preloaded(const Graph& graph, const SymbolIndex& symbols, size_t root, size_t object) {
  for (size_t i : symbols.edges_of(root))
    if (const Edge& e = graph.edges[i]; e.kind == EdgeKind::Preload && e.how == How::Preload && e.to == object)
      return true;  // LD_PRELOAD or /etc/ld.so.preload, not a library a Python package loaded first
  return false;
}

struct Shadowing {
  std::set<std::string> symbols;
  std::set<std::string> requesters;
};

class InterpositionScan {
 public:
  InterpositionScan(const CheckContext& ctx, const SymbolIndex& symbols) : ctx_(ctx), symbols_(symbols) {}

  void scan_root(size_t root) {
    for (size_t o : symbols_.members(root)) {
      providers_.clear();
      for (const SymbolIndex::Reference& reference : symbols_.references(o)) check(root, o, reference);
      if (!glibc(o) && !is_toolchain_runtime(ctx_.graph.objects[o]))
        for (const SymbolIndex::Reference& reference : symbols_.own_references(o)) check_own(root, o, reference);
    }
  }

  std::vector<Finding> findings() const {
    std::vector<Finding> out;
    for (const auto& [pair, s] : shadowed_) out.push_back(finding(pair.first, pair.second, s));
    for (const auto& [pair, names] : own_shadowed_) out.push_back(own_finding(pair.first, pair.second, names));
    return out;
  }

 private:
  // The library the requester was linked against for this reference: the file its version
  // names, or else the first of its own NEEDED that defines the symbol.
  std::optional<size_t> intended(size_t root, size_t requester, const Symbol& ref, size_t winner) {
    if (!ref.version_file.empty()) return provider_of(root, ref.version_file);
    auto needed = symbols_.direct_needed(root, requester);
    for (size_t n : needed)
      if (n == winner) return std::nullopt;
    for (size_t n : needed)
      if (symbols_.match(n, ref)) return n;
    return std::nullopt;
  }

  // The object the root knows by a version's file name. The requester's references name a handful
  // of files, each as one view into its binary's strings: asked once per view and requester.
  std::optional<size_t> provider_of(size_t root, std::string_view file) {
    for (const auto& [seen, provider] : providers_)
      if (seen.data() == file.data() && seen.size() == file.size()) return provider;
    return providers_.emplace_back(file, symbols_.loaded(root, file)).second;
  }

  // is_glibc_library, asked once per object.
  bool glibc(size_t object) {
    if (glibc_.empty()) glibc_.assign(ctx_.graph.objects.size(), -1);
    if (glibc_[object] < 0) glibc_[object] = is_glibc_library(ctx_.graph.objects[object]);
    return glibc_[object];
  }

  bool is_noise(size_t root, const Binding& winner, size_t provider, const Symbol& ref) {
    const Object& w = ctx_.graph.objects[winner.object];
    if (winner.object == ctx_.graph.roots[root] && w.binary->is_executable()) return true;  // the program's own (copy relocations, deliberate overrides)
    if (glibc(winner.object) && glibc(provider)) return true;
    if (glibc(provider) && is_allocator_function(ref.name)) return true;
    if (winner.symbol->binding == SymbolBinding::Weak) return true;  // vague linkage: inline and template copies
    // copies of libstdc++'s parts, libstdc++.so.6 among them, taking each other's references are one
    // implementation; a copy taking what a library was linked against libstdc++.so.6 for is not
    if (is_cxx_runtime_name(ref.name) && !is_toolchain_runtime(ctx_.graph.objects[provider])) return true;
    const Symbol* theirs = symbols_.match(provider, ref);
    if (!theirs || theirs->binding == SymbolBinding::Weak) return true;
    if (is_filtee_of(winner.object, provider)) return true;  // a filter's definitions come from its filtee: its design
    return is_preloaded(ctx_.graph, symbols_, root, winner.object);  // LD_PRELOAD interposes on purpose
  }

  bool is_filtee_of(size_t filtee, size_t filter) {
    if (!filtees_) {
      filtees_.emplace();
      for (const Edge& e : ctx_.graph.edges)
        if (e.filtee != Filtee::None && e.to) filtees_->emplace(e.from, *e.to);
    }
    return filtees_->count({filter, filtee}) > 0;
  }

  void check(size_t root, size_t requester, const SymbolIndex::Reference& reference) {
    const Symbol& ref = *reference.symbol;
    auto winner = symbols_.bind_in(root, requester, reference);
    if (!winner) return;
    auto provider = intended(root, requester, ref, winner->object);
    if (!provider || *provider == winner->object || is_noise(root, *winner, *provider, ref)) return;
    Shadowing& s = shadowed_[{winner->object, *provider}];
    s.symbols.insert(ref.version.empty() ? std::string(ref.name) : fmt::format("{}@{}", ref.name, ref.version));
    s.requesters.insert(ctx_.graph.objects[requester].path);
  }

  // A definition of `object` that its own relocations name binds to another object's: one earlier
  // in the object's scope (for an object dlopen loaded, the search list of that dlopen: the other
  // libraries dlopen opens are not in it, as nvshmem's bootstrap plugins, one of which is opened).
  void check_own(size_t root, size_t object, const SymbolIndex::Reference& reference) {
    const Symbol& own = *reference.symbol;
    if (is_linker_defined(own.name)) return;
    auto winner = symbols_.bind_in(root, object, reference);
    if (!winner || ctx_.graph.objects[winner->object].binary == ctx_.graph.objects[object].binary ||
        is_noise(root, *winner, object, own))
      return;
    own_shadowed_[{winner->object, object}].insert(own.version.empty() ? std::string(own.name)
                                                                       : fmt::format("{}@@{}", own.name, own.version));
  }

  Finding own_finding(size_t winner, size_t object, const std::set<std::string>& symbols) const {
    const Object& w = ctx_.graph.objects[winner];
    const Object& o = ctx_.graph.objects[object];
    std::vector<std::string> names(symbols.begin(), symbols.end());
    std::string message = fmt::format("{} calls or refers to {} symbol{} of its own through the lookup scope, and {}, "
                                      "earlier in that scope, defines {} too: those references bind to {}'s: {}",
                                      o.path, names.size(), names.size() == 1 ? "" : "s", w.path,
                                      names.size() == 1 ? "it" : "them", basename_of(w.path), join_limited(names));
    std::string fix = fmt::format("make sure only one of {} and {} defines them (one copy of a bundled library), or "
                                  "link {} with -Wl,-Bsymbolic (or hide what it does not export on purpose) so it "
                                  "binds its own",
                                  w.path, o.path, basename_of(o.path));
    return {"symbol-interposed", Severity::Warning, winner, std::move(message), std::move(fix), w.path};
  }

  Finding finding(size_t winner, size_t provider, const Shadowing& s) const {
    const Object& w = ctx_.graph.objects[winner];
    const Object& p = ctx_.graph.objects[provider];
    std::vector<std::string> names(s.symbols.begin(), s.symbols.end());
    std::vector<std::string> who(s.requesters.begin(), s.requesters.end());
    Finding f;
    f.code = "symbol-interposed";
    f.severity = Severity::Warning;
    f.object = winner;
    f.path = w.path;
    f.message = fmt::format("{} symbol{} that {} {} linked against from {} bind to {}, loaded earlier: {}",
                            names.size(), names.size() == 1 ? "" : "s", join_limited(who, 3),
                            who.size() == 1 ? "was" : "were", p.path, w.path, join_limited(names));
    f.fix = fmt::format("make sure only one of {} and {} is loaded (remove the extra copy from the "
                        "search path or the preload list)", w.path, p.path);
    return f;
  }

  const CheckContext& ctx_;
  const SymbolIndex& symbols_;
  std::map<std::pair<size_t, size_t>, Shadowing> shadowed_;
  std::map<std::pair<size_t, size_t>, std::set<std::string>> own_shadowed_;  // (winner, object) -> its symbols
  std::vector<std::pair<std::string_view, std::optional<size_t>>> providers_;  // provider_of, for one requester in one root
  std::vector<int8_t> glibc_;  // per object: -1 not asked yet
  std::optional<std::set<std::pair<size_t, size_t>>> filtees_;  // (filter, filtee), built on first use
};

}  // namespace

std::vector<Finding> check_interposition(const CheckContext& ctx, const SymbolIndex& symbols) {
  InterpositionScan scan(ctx, symbols);
  for (size_t root = 0; root < ctx.graph.load_order.size() && root < ctx.graph.roots.size(); ++root)
    scan.scan_root(root);
  return scan.findings();
}

}  // namespace depscan
