// A library loaded by dlopen whose thread-local variables are reached with the initial-exec model
// (DF_STATIC_TLS; R_X86_64_TPOFF64 and its kin) needs its TLS block at a fixed offset from the
// thread pointer. ld.so can only take that from the static TLS block's small surplus (1664 bytes);
// when it does not fit, dlopen fails with "cannot allocate memory in static TLS block" (libgomp on
// aarch64, jemalloc, the sanitizer runtimes). Objects loaded at start-up never fail: the block is
// sized for them. musl's loader has no surplus: every such block of a library loaded later fails.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/check/load_order.h"
#include "analyzer/check/static_tls_process.h"
#include "analyzer/check/loader_releases.h"
#include "analyzer/resolve/glibc_tunables.h"

namespace depscan {
namespace {

constexpr GlibcRelease kRseqInStaticTls{2, 41}, kSurplusTunables{2, 32};

// For each object, the first object of the same file.
std::vector<size_t> file_ids(const Graph& g) {
  std::map<std::pair<uint64_t, uint64_t>, size_t> first;
  std::vector<size_t> out(g.objects.size());
  for (size_t i = 0; i < g.objects.size(); ++i) out[i] = first.emplace(file_key(g, i), i).first->second;
  return out;
}

bool is_libc(const Binary& b) { return b.soname && *b.soname == "libc.so.6"; }

// Whether some object's initial-exec relocations may need a block other than the C library's, which
// is loaded at start-up: the C library's own, and other libraries' references to its variables
// (libm's errno@GLIBC_PRIVATE), are in every graph and never fail, so the usual scan stops here.
bool could_need_static_tls(const Graph& g) {
  for (size_t i = 0; i < g.objects.size(); ++i) {
    const Binary* b = elf_binary(g, i);
    if (!b || !b->static_tls() || is_libc(*b)) continue;
    for (uint32_t index : b->static_tls_symbols) {
      bool named = index != 0 && b->symbols_read && index <= b->symbols.size();
      if (!named && b->tls_size) return true;  // its own block
      if (!named) continue;
      const Symbol& s = b->symbols[index - 1];
      if (s.defined ? b->tls_size != 0 : s.version_file != "libc.so.6") return true;
    }
  }
  return false;
}

class StaticTlsCheck {
 public:
  explicit StaticTlsCheck(const CheckContext& ctx)
      : ctx_(ctx), g_(ctx.graph), tunables_(parse_glibc_tunables(ctx.target.glibc_tunables)), file_of_(file_ids(g_)) {}

  std::vector<Finding> run() {
    auto by_root = edges_by_root(g_);
    for (size_t r = 0; r < g_.roots.size(); ++r) check_root(r, by_root[r]);
    check_imported_together(by_root);
    return std::move(out_);
  }

 private:
  void check_root(size_t r, const std::vector<size_t>& edges) {
    const Binary* bin = elf_binary(g_, g_.roots[r]);
    if (!bin) return;
    auto abi = tls_abi(bin->machine);
    if (!abi) return;
    if (bin->is_executable()) return check_program(r, edges, *abi);
    check_library(r, edges, *abi);
  }

  // glibc's process draws from the surplus; musl's has none.
  StaticTlsProcess new_process(TlsAbi abi, size_t r) {
    StaticTlsProcess process(g_, new_block(abi, r), names_, file_of_);
    if (releases_.musl_root(r)) process.without_surplus();
    return process;
  }

  void check_program(size_t r, const std::vector<size_t>& edges, TlsAbi abi) {
    size_t root = g_.roots[r];
    StaticTlsProcess process = new_process(abi, r);
    process.start(load_closure(g_, edges, {root}, false));
    for (size_t e : edges) {
      const Edge& edge = g_.edges[e];
      if (edge.kind != EdgeKind::Dlopen || !edge.to || process.loaded(*edge.to)) continue;
      if (auto failure = process.open(load_closure(g_, edges, {*edge.to}, false))) {
        std::string how = fmt::format("{} opens {} with dlopen", g_.objects[edge.from].path, edge.name);
        return report(*failure, how, Severity::Error, releases_.musl_root(r));
      }
    }
  }

  // An install's extension modules each fit, but Python may import them into one process, where
  // their static TLS adds up: the one imported last fails. Modules are taken in the scan's order.
  void check_imported_together(const std::vector<std::vector<size_t>>& by_root) {
    std::optional<StaticTlsProcess> process;
    uint16_t machine = 0;
    std::vector<std::string> takers;  // modules whose import took static TLS, with the bytes
    for (size_t r = 0; r < g_.roots.size(); ++r) {
      size_t root = g_.roots[r];
      const Binary* bin = elf_binary(g_, root);
      if (!bin || bin->is_executable() || !python_extension_name(g_.objects[root].path) || releases_.musl_root(r)) continue;
      auto abi = tls_abi(bin->machine);
      if (!abi || failed_alone_.count(root) || (process && bin->machine != machine)) continue;
      auto [startup, group] = split_libc(load_closure(g_, by_root[r], {root}, true));
      if (!process) {
        process.emplace(g_, new_block(*abi, r), names_, file_of_);
        process->start(startup);
        machine = bin->machine;
      }
      uint64_t before = process->bytes_left();
      auto failure = process->open(group);
      if (failure && takers.empty()) return;  // as on its own: check_library has said it
      if (failure) {
        std::string how = fmt::format("Python imports {} into a process that imported {} first", g_.objects[root].path,
                                      fmt::join(takers, ", "));
        return report(*failure, how, Severity::Warning, false);
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
  void check_library(size_t r, const std::vector<size_t>& edges, TlsAbi abi) {
    size_t root = g_.roots[r];
    auto [startup, group] = split_libc(load_closure(g_, edges, {root}, true));
    StaticTlsProcess tight = new_process(abi, r), wide = tight;
    tight.start(startup);
    wide.start(startup);
    auto failure = tight.open(group);
    if (!failure) return;
    failed_alone_.insert(root);
    bool musl = releases_.musl_root(r);
    wide.widen(abi.tcb_alignment - 1);
    bool certain = musl || wide.open(group).has_value();
    bool python = python_extension_name(g_.objects[root].path);
    std::string how = python ? fmt::format("Python imports {} with dlopen", g_.objects[root].path)
                             : fmt::format("a program that loads {} with dlopen (a library scanned on its own)",
                                           g_.objects[root].path);
    if (!certain) how += ", and it fits only if the program's own TLS leaves room for rounding";
    report(*failure, how, python && certain ? Severity::Error : Severity::Warning, musl);
  }

  StaticTlsBlock new_block(TlsAbi abi, size_t root_index) {
    const auto& release = releases_.of_root(root_index);
    uint64_t surplus = release && *release < kSurplusTunables ? StaticTlsBlock::kDefaultSurplus
                                                                : tunables_.static_tls_surplus();
    return StaticTlsBlock(abi, surplus, release && *release >= kRseqInStaticTls);
  }

  void report(const StaticTlsProcess::Failure& failure, const std::string& how, Severity severity, bool musl) {
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
    std::string fix = "rebuild it with the global-dynamic or TLS-descriptor model (drop -ftls-model=initial-exec; "
                      "-mtls-dialect=gnu2 on x86-64), or load it at start-up (link the program against it, or "
                      "LD_PRELOAD it)";
    Finding finding{"static-tls", severity, d.object,
                    fmt::format("{}: its {} bytes of thread-local storage must go into static TLS ({}); {}, and {}: "
                                "dlopen fails with \"cannot allocate memory in static TLS block\"",
                                o.path, b.tls_size, why, how, fit),
                    fix + "; on glibc 2.32 and later GLIBC_TUNABLES=glibc.rtld.optional_static_tls=N makes the "
                          "surplus 1152 + N bytes",
                    ""};
    if (musl) {
      std::string relocating = g_.objects[d.from ? *d.from : d.object].path;
      std::string reached = d.from ? fmt::format("{} reaches its thread-local {} with initial-exec accesses",
                                                 g_.objects[*d.from].path, d.symbol)
                                   : "its own initial-exec TLS accesses (DF_STATIC_TLS) reach it";
      finding.message = fmt::format(
          "{}: {}, so its {} bytes of thread-local storage must be in static TLS; {}, and musl's loader has no static "
          "TLS for a library loaded after start-up: dlopen fails with \"Error relocating {}: {}: initial-exec TLS "
          "resolves to dynamic definition in {}\"",
          o.path, reached, b.tls_size, how, relocating, d.symbol, o.path);
      finding.fix = fix;
    }
    if (added) return out_.push_back(std::move(finding));
    out_[it->second] = std::move(finding);
  }

  const CheckContext& ctx_;
  const Graph& g_;
  GlibcTunables tunables_;
  TlsNames names_;
  std::vector<size_t> file_of_;
  std::set<size_t> failed_alone_;  // library roots whose own load does not fit
  LoaderReleases releases_{ctx_.graph};
  std::map<std::pair<uint64_t, uint64_t>, size_t> said_;  // file -> index into out_
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> check_static_tls(const CheckContext& ctx) {
  if (ctx.graph.roots.empty() || !could_need_static_tls(ctx.graph)) return {};
  return StaticTlsCheck(ctx).run();
}

}  // namespace depscan
