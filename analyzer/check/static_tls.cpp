// A library loaded by dlopen whose thread-local variables are reached with the initial-exec model
// (DF_STATIC_TLS; R_X86_64_TPOFF64 and its kin) needs its TLS block at a fixed offset from the
// thread pointer. ld.so can only take that from the static TLS block's small surplus (1664 bytes);
// when it does not fit, dlopen fails with "cannot allocate memory in static TLS block" (libgomp on
// aarch64, jemalloc, the sanitizer runtimes). Objects loaded at start-up never fail: the block is
// sized for them.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/check/load_order.h"
#include "analyzer/check/static_tls_block.h"
#include "analyzer/resolve/glibc_release.h"
#include "analyzer/resolve/glibc_tunables.h"

namespace depscan {
namespace {

constexpr GlibcRelease kRseqInStaticTls{2, 41}, kSurplusTunables{2, 32};
constexpr uint64_t kLargestModelledBlock = uint64_t{1} << 40;  // past it, a hostile header: never fits

const Binary* elf_binary(const Graph& g, size_t object) {
  const auto& b = g.objects[object].binary;
  return b && b->format == Format::Elf ? b.get() : nullptr;
}

bool any_static_tls(const Graph& g) {
  for (size_t i = 0; i < g.objects.size(); ++i)
    if (const Binary* b = elf_binary(g, i); b && b->static_tls()) return true;
  return false;
}

TlsBlockSpec block_of(const Binary& b) { return {b.tls_size, b.tls_align, b.tls_first_byte}; }

// For each object, the first object of the same file.
std::vector<size_t> file_ids(const Graph& g) {
  std::map<std::pair<uint64_t, uint64_t>, size_t> first;
  std::vector<size_t> out(g.objects.size());
  for (size_t i = 0; i < g.objects.size(); ++i) out[i] = first.emplace(file_key(g, i), i).first->second;
  return out;
}

bool is_libc(const Binary& b) { return b.soname && *b.soname == "libc.so.6"; }

// Why an object's block must be static: its own initial-exec accesses, or another object's.
struct Demand {
  size_t object;               // whose block
  std::optional<size_t> from;  // the object whose relocations ask for it, when another one
  std::string symbol;          // the variable, when named
};

// The thread-local symbols each object defines, found once per scan.
class TlsNames {
 public:
  const std::vector<std::string_view>& of(size_t object, const Binary& b) {
    auto [it, added] = names_.try_emplace(object);
    if (added)
      for (const Symbol& s : b.symbols)
        if (s.defined && s.type == SymbolType::Tls && s.binding != SymbolBinding::Local) it->second.push_back(s.name);
    return it->second;
  }

 private:
  std::map<size_t, std::vector<std::string_view>> names_;
};

// One process: the objects loaded at start-up, then each dlopen in turn.
class Process {
 public:
  // `file_of`: one index per file, the same for every object (path) of that file: ld.so loads a
  // file once, by device and inode.
  Process(const Graph& g, StaticTlsBlock block, TlsNames& names, const std::vector<size_t>& file_of)
      : g_(g), block_(std::move(block)), loaded_(g.objects.size()), names_(&names), file_of_(&file_of) {}

  void start(const std::vector<size_t>& startup) {
    for (size_t o : startup) {
      if (loaded(o)) continue;
      loaded_[file(o)] = true;
      scope_.push_back(o);
      if (const Binary* b = elf_binary(g_, o); b && b->tls_size && b->tls_size <= kLargestModelledBlock &&
                                                 b->tls_align <= kLargestModelledBlock)
        block_.add_startup_block(block_of(*b));
    }
    static_ = loaded_;  // start-up blocks are all static
    block_.finish_startup();
  }
  void widen(uint64_t bytes) { block_.widen(bytes); }

  // Loads `searchlist` (what a dlopen'd object needs, in load order): the first block of a new
  // object that does not fit.
  struct Failure {
    Demand demand;
    StaticTlsBlock::Outcome outcome;
    uint64_t left;
  };
  std::optional<Failure> open(const std::vector<size_t>& searchlist) {
    std::vector<size_t> local = scope_, group;  // lookups: the global scope, then the searchlist
    for (size_t o : searchlist) {
      local.push_back(o);
      if (!loaded(o)) group.push_back(o), loaded_[file(o)] = true;
    }
    for (auto it = group.rbegin(); it != group.rend(); ++it)  // relocated dependencies first
      for (const Demand& d : demands(*it, local))
        if (auto failure = place(d)) return failure;
    return std::nullopt;
  }
  bool loaded(size_t object) const { return loaded_[file(object)]; }
  uint64_t bytes_left() const { return block_.bytes_left(); }

 private:
  std::vector<Demand> demands(size_t object, const std::vector<size_t>& scope) {
    const Binary* b = elf_binary(g_, object);
    std::vector<Demand> out;
    if (!b || !b->static_tls()) return out;
    for (uint32_t index : b->static_tls_symbols) {
      // Without its symbol table (--no-symbols) a named variable is taken to be the object's own.
      if (index == 0 || (!b->symbols_read && b->tls_size)) {
        out.push_back({object, std::nullopt, ""});
        continue;
      }
      if (index > b->symbols.size()) continue;
      const Symbol& s = b->symbols[index - 1];
      if (s.defined && (s.binding == SymbolBinding::Local || s.visibility >= 2)) {
        out.push_back({object, std::nullopt, std::string(s.name)});
        continue;
      }
      if (auto provider = definer(s.name, scope))
        out.push_back({*provider, *provider == object ? std::nullopt : std::optional<size_t>(object), std::string(s.name)});
    }
    return out;
  }

  // The first object of the scope that defines thread-local `name`, as the symbol lookup finds it.
  std::optional<size_t> definer(std::string_view name, const std::vector<size_t>& scope) {
    for (size_t o : scope) {
      const Binary* b = elf_binary(g_, o);
      if (!b || b->tls_size == 0) continue;  // only an object with a TLS block defines TLS symbols
      const auto& names = names_->of(o, *b);
      if (std::find(names.begin(), names.end(), name) != names.end()) return o;
    }
    return std::nullopt;
  }

  size_t file(size_t object) const { return (*file_of_)[object]; }

  std::optional<Failure> place(const Demand& d) {
    if (static_[file(d.object)]) return std::nullopt;
    const Binary* b = elf_binary(g_, d.object);
    if (!b || b->tls_size == 0) return std::nullopt;
    static_[file(d.object)] = true;
    uint64_t left = block_.bytes_left();
    auto outcome = b->tls_size > kLargestModelledBlock || b->tls_align > kLargestModelledBlock
                       ? StaticTlsBlock::Outcome::TooLarge
                       : block_.allocate(block_of(*b));
    if (outcome == StaticTlsBlock::Outcome::Placed) return std::nullopt;
    return Failure{d, outcome, left};
  }

  const Graph& g_;
  StaticTlsBlock block_;
  std::vector<bool> loaded_, static_;
  std::vector<size_t> scope_;
  TlsNames* names_;
  const std::vector<size_t>* file_of_;
};

class StaticTlsCheck {
 public:
  explicit StaticTlsCheck(const CheckContext& ctx)
      : ctx_(ctx), g_(ctx.graph), tunables_(parse_glibc_tunables(ctx.target.glibc_tunables)), file_of_(file_ids(g_)) {}

  std::vector<Finding> run() {
    auto by_root = edges_by_root(g_);
    for (size_t r = 0; r < g_.roots.size(); ++r) check_root(g_.roots[r], by_root[r]);
    check_imported_together(by_root);
    return std::move(out_);
  }

 private:
  void check_root(size_t root, const std::vector<size_t>& edges) {
    const Binary* bin = elf_binary(g_, root);
    if (!bin) return;
    auto abi = tls_abi(bin->machine);
    if (!abi) return;
    if (bin->is_executable()) return check_program(root, edges, *abi);
    check_library(root, edges, *abi);
  }

  void check_program(size_t root, const std::vector<size_t>& edges, TlsAbi abi) {
    Process process(g_, new_block(abi, *elf_binary(g_, root)), names_, file_of_);
    process.start(load_closure(g_, edges, {root}, false));
    for (size_t e : edges) {
      const Edge& edge = g_.edges[e];
      if (edge.kind != EdgeKind::Dlopen || !edge.to || process.loaded(*edge.to)) continue;
      if (auto failure = process.open(load_closure(g_, edges, {*edge.to}, false))) {
        std::string how = fmt::format("{} opens {} with dlopen", g_.objects[edge.from].path, edge.name);
        return report(*failure, how, Severity::Error);
      }
    }
  }

  // An install's extension modules each fit, but Python may import them into one process, where
  // their static TLS adds up: the one imported last fails. Modules are taken in the scan's order.
  void check_imported_together(const std::vector<std::vector<size_t>>& by_root) {
    std::optional<Process> process;
    uint16_t machine = 0;
    std::vector<std::string> takers;  // modules whose import took static TLS, with the bytes
    for (size_t r = 0; r < g_.roots.size(); ++r) {
      size_t root = g_.roots[r];
      const Binary* bin = elf_binary(g_, root);
      if (!bin || bin->is_executable() || !python_extension_name(g_.objects[root].path)) continue;
      auto abi = tls_abi(bin->machine);
      if (!abi || failed_alone_.count(root) || (process && bin->machine != machine)) continue;
      auto [startup, group] = split_libc(load_closure(g_, by_root[r], {root}, true));
      if (!process) {
        process.emplace(g_, new_block(*abi, *bin), names_, file_of_);
        process->start(startup);
        machine = bin->machine;
      }
      uint64_t before = process->bytes_left();
      auto failure = process->open(group);
      if (failure) {
        std::string how = fmt::format("Python imports {} into a process that imported {} first", g_.objects[root].path,
                                      fmt::join(takers, ", "));
        return report(*failure, how, Severity::Warning);
      }
      if (process->bytes_left() < before)
        takers.push_back(fmt::format("{} ({} bytes)", g_.objects[root].path, before - process->bytes_left()));
    }
  }

  // The objects of a library's load, split into the C library (which the unknown host program has
  // loaded at start-up: the graph's, when this library does not need it itself) and the rest.
  std::pair<std::vector<size_t>, std::vector<size_t>> split_libc(const std::vector<size_t>& all) const {
    std::pair<std::vector<size_t>, std::vector<size_t>> out;
    for (size_t o : all) {
      const Binary* b = elf_binary(g_, o);
      (b && is_libc(*b) ? out.first : out.second).push_back(o);
    }
    if (out.first.empty() && !all.empty())
      if (auto libc = graph_libc(*elf_binary(g_, all.front()))) out.first.push_back(*libc);
    return out;
  }

  std::optional<size_t> graph_libc(const Binary& like) const {
    for (size_t o = 0; o < g_.objects.size(); ++o)
      if (const Binary* b = elf_binary(g_, o); b && is_libc(*b) && b->machine == like.machine && b->bits == like.bits)
        return o;
    return std::nullopt;
  }

  // The program that loads a library is unknown: its start-up TLS is taken as the C library's, and
  // a failure is certain only when it also happens with the most the block's rounding can add.
  void check_library(size_t root, const std::vector<size_t>& edges, TlsAbi abi) {
    auto [startup, group] = split_libc(load_closure(g_, edges, {root}, true));
    Process tight(g_, new_block(abi, *elf_binary(g_, root)), names_, file_of_), wide = tight;
    tight.start(startup);
    wide.start(startup);
    auto failure = tight.open(group);
    if (!failure) return;
    failed_alone_.insert(root);
    wide.widen(abi.tcb_alignment - 1);
    bool certain = wide.open(group).has_value();
    bool python = python_extension_name(g_.objects[root].path);
    std::string how = python ? fmt::format("Python imports {} with dlopen", g_.objects[root].path)
                             : fmt::format("a program that loads {} with dlopen (a library scanned on its own)",
                                           g_.objects[root].path);
    if (!certain) how += ", and it fits only if the program's own TLS leaves room for rounding";
    report(*failure, how, python && certain ? Severity::Error : Severity::Warning);
  }

  StaticTlsBlock new_block(TlsAbi abi, const Binary& root) {
    auto [it, added] = releases_.emplace(std::pair(root.bits, root.machine), std::nullopt);
    if (added) it->second = system_glibc_release(ctx_.fs, root.bits, root.machine);
    const auto& release = it->second;
    uint64_t surplus = release && *release < kSurplusTunables ? StaticTlsBlock::kDefaultSurplus
                                                                : tunables_.static_tls_surplus();
    return StaticTlsBlock(abi, surplus, release && *release >= kRseqInStaticTls);
  }

  void report(const Process::Failure& failure, const std::string& how, Severity severity) {
    const Demand& d = failure.demand;
    const Object& o = g_.objects[d.object];
    auto [it, added] = said_.emplace(file_key(g_, d.object), out_.size());
    if (!added && out_[it->second].severity >= severity) return;
    const Binary& b = *o.binary;
    std::string why = d.from ? fmt::format("{} reaches its thread-local {} with initial-exec accesses",
                                           g_.objects[*d.from].path, d.symbol)
                             : "its initial-exec TLS accesses (DF_STATIC_TLS) need it at a fixed offset";
    std::string fit = failure.outcome == StaticTlsBlock::Outcome::OverAligned
                          ? fmt::format("its alignment of {} bytes is more than the static TLS block's", b.tls_align)
                          : fmt::format("only {} bytes of the static TLS block's surplus are left", failure.left);
    Finding finding{
        "static-tls", severity, d.object,
        fmt::format("{}: its {} bytes of thread-local storage must go into static TLS ({}); {}, and {}: dlopen fails "
                    "with \"cannot allocate memory in static TLS block\"",
                    o.path, b.tls_size, why, how, fit),
        "rebuild it with the global-dynamic or TLS-descriptor model (drop -ftls-model=initial-exec; "
        "-mtls-dialect=gnu2 on x86-64), or load it at start-up (link the program against it, or LD_PRELOAD it); "
        "on glibc 2.32 and later GLIBC_TUNABLES=glibc.rtld.optional_static_tls=N makes the surplus 1152 + N bytes",
        ""};
    if (added) return out_.push_back(std::move(finding));
    out_[it->second] = std::move(finding);
  }

  const CheckContext& ctx_;
  const Graph& g_;
  GlibcTunables tunables_;
  TlsNames names_;
  std::vector<size_t> file_of_;
  std::set<size_t> failed_alone_;  // library roots whose own load does not fit
  std::map<std::pair<int, uint16_t>, std::optional<GlibcRelease>> releases_;  // by class and machine
  std::map<std::pair<uint64_t, uint64_t>, size_t> said_;  // file -> index into out_
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> check_static_tls(const CheckContext& ctx) {
  if (ctx.graph.roots.empty() || !any_static_tls(ctx.graph)) return {};
  return StaticTlsCheck(ctx).run();
}

}  // namespace depscan
