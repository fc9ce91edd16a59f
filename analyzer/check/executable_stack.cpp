// Since glibc 2.41, dlopen no longer makes the stack executable for a library that asks for it
// (PF_X in PT_GNU_STACK, or no PT_GNU_STACK where the ABI then presumes it): the load fails with
// "cannot enable executable stack as shared object requires: Invalid argument" unless the stack
// is executable already (elf/dl-load.c, _dl_map_object_from_fd). At start-up ld.so still makes it
// executable, so only libraries loaded by dlopen, and what they need, are at risk, unless the
// glibc.rtld.execstack tunable says otherwise.
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/check/load_order.h"
#include "analyzer/check/loader_releases.h"
#include "analyzer/resolve/glibc_tunables.h"

namespace depscan {
namespace {

constexpr GlibcRelease kRefusesDlopenExecstack{2, 41}, kForcesExecstack{2, 42};

// glibc.rtld.execstack (2.41 and later): 0 refuses executable stacks at start-up too; 1, the default,
// only in dlopen; 2 (2.42 and later) makes the stack executable at start-up, so no dlopen is refused.
enum class ExecstackMode { Default, Disable, Force };

ExecstackMode execstack_mode(const std::optional<GlibcRelease>& release, const std::optional<uint64_t>& value) {
  if (!release || *release < kRefusesDlopenExecstack || !value) return ExecstackMode::Default;
  if (*value == 0) return ExecstackMode::Disable;
  if (*value == 2 && *release >= kForcesExecstack) return ExecstackMode::Force;
  return ExecstackMode::Default;  // 1, or out of the release's range: ignored
}

bool needs_exec(const Graph& g, size_t object) {
  const auto& b = g.objects[object].binary;
  return b && b->format == Format::Elf && b->needs_executable_stack();
}

bool any_needs_exec(const Graph& g) {
  for (size_t i = 0; i < g.objects.size(); ++i)
    if (needs_exec(g, i)) return true;
  return false;
}

std::string stack_reason(const Binary& b) {
  return b.stack_flags ? "its PT_GNU_STACK asks for an executable stack (RWE)"
                       : "it has no PT_GNU_STACK header, so glibc presumes it needs an executable stack";
}

class StackCheck {
 public:
  explicit StackCheck(const CheckContext& ctx)
      : g_(ctx.graph), releases_(ctx.graph), execstack_tunable_(parse_glibc_tunables(ctx.target.glibc_tunables).execstack) {}

  std::vector<Finding> run() {
    auto by_root = edges_by_root(g_);
    for (size_t r = 0; r < g_.roots.size(); ++r) check_root(r, by_root[r]);
    return std::move(out_);
  }

 private:
  void check_root(size_t r, const std::vector<size_t>& edges) {
    size_t root = g_.roots[r];
    const auto& bin = g_.objects[root].binary;
    if (!bin || bin->format != Format::Elf || releases_.musl_root(r)) return;  // musl ignores PT_GNU_STACK
    ExecstackMode mode = execstack_mode(releases_.of_root(r), execstack_tunable_);
    if (mode == ExecstackMode::Force) return;
    if (!bin->is_executable()) {  // a library: whatever program loads it may use dlopen
      for (size_t o : load_closure(g_, edges, {root}, true)) report_library_root(o, r);
      return;
    }
    std::vector<size_t> startup = load_closure(g_, edges, {root}, false);
    for (size_t o : startup)
      if (needs_exec(g_, o)) {  // ld.so makes the stack executable at start-up, unless told not to
        if (mode == ExecstackMode::Disable) return report_refused_at_startup(o, root);
        return;
      }
    std::vector<bool> at_startup(g_.objects.size());
    for (size_t o : startup) at_startup[o] = true;
    for (size_t e : edges) {
      const Edge& edge = g_.edges[e];
      if (edge.kind != EdgeKind::Dlopen || !edge.to || at_startup[*edge.to]) continue;
      for (size_t o : load_closure(g_, edges, {*edge.to}, false))
        if (!at_startup[o]) report_dlopened(o, edge, r);
    }
  }

  // glibc.rtld.execstack=0: the program does not start.
  void report_refused_at_startup(size_t object, size_t program) {
    const Object& o = g_.objects[object];
    std::string refusal = object == program
        ? "\"Fatal glibc error: executable stack is not allowed\""
        : fmt::format("{} needs it at start-up: \"cannot enable executable stack as shared object requires: "
                      "Invalid argument\"", g_.objects[program].path);
    add(object,
        fmt::format("{}: {}; GLIBC_TUNABLES sets glibc.rtld.execstack=0, so the program does not start ({})", o.path,
                    stack_reason(*o.binary), refusal),
        Severity::Error, true);
  }

  void report_dlopened(size_t object, const Edge& opened_by, size_t r) {
    if (!needs_exec(g_, object)) return;
    std::string how = fmt::format("{} opens {} with dlopen, and the program's stack is not executable",
                                  g_.objects[opened_by.from].path, opened_by.name);
    add(object, dlopen_message(object, how, r), refuses(r) ? Severity::Error : Severity::Warning, true);
  }

  void report_library_root(size_t object, size_t r) {
    if (!needs_exec(g_, object)) return;
    size_t root = g_.roots[r];
    const std::string& root_path = g_.objects[root].path;
    bool python = python_extension_name(root_path);
    std::string loads = object == root ? "it" : root_path + ", which needs it,";
    std::string how = python ? fmt::format("Python imports {} with dlopen", object == root ? "it" : root_path)
                             : fmt::format("a program whose stack is not executable (Python's is not) may load {} "
                                           "with dlopen", loads);
    add(object, dlopen_message(object, how, r), python && refuses(r) ? Severity::Error : Severity::Warning, python);
  }

  // One finding per file (one file may be several objects, by several paths): the most severe, then
  // the one that knows who opens it.
  void add(size_t object, std::string message, Severity severity, bool opener_known) {
    auto [it, added] = by_file_.emplace(file_key(g_, object), Said{out_.size(), severity, opener_known});
    if (!added && std::tie(severity, opener_known) <= std::tie(it->second.severity, it->second.opener_known)) return;
    Finding finding{
        "executable-stack", severity, object, std::move(message),
        "relink it with -Wl,-z,noexecstack, or clear the flag (patchelf --clear-execstack, execstack -c) once its code "
        "is known not to run on the stack; until then GLIBC_TUNABLES=glibc.rtld.execstack=2 (glibc 2.42 and later) "
        "lets dlopen make the stack executable; glibc.rtld.execstack=0 refuses it at start-up as well",
        ""};
    if (added) return out_.push_back(std::move(finding));
    it->second = Said{it->second.index, severity, opener_known};
    out_[it->second.index] = std::move(finding);
  }

  // "...: its PT_GNU_STACK asks ...; <how>: glibc 2.41 and later refuse that (...); <the loader's release>"
  std::string dlopen_message(size_t object, const std::string& how, size_t r) {
    const Object& o = g_.objects[object];
    std::string release = releases_.describe(r);
    if (releases_.of_root(r) && !refuses(r)) release += ", which still allows it and makes the whole stack executable";
    return fmt::format("{}: {}; {}: glibc 2.41 and later refuse that (\"cannot enable executable stack as shared "
                       "object requires: Invalid argument\"); {}", o.path, stack_reason(*o.binary), how, release);
  }

  bool refuses(size_t r) const {
    const auto& release = releases_.of_root(r);
    return release && *release >= kRefusesDlopenExecstack;
  }

  const Graph& g_;
  LoaderReleases releases_;
  std::optional<uint64_t> execstack_tunable_;
  struct Said {
    size_t index;  // into out_
    Severity severity;
    bool opener_known;
  };
  std::map<std::pair<uint64_t, uint64_t>, Said> by_file_;
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> check_executable_stack(const CheckContext& ctx) {
  if (ctx.graph.roots.empty() || !any_needs_exec(ctx.graph)) return {};
  return StackCheck(ctx).run();
}

}  // namespace depscan
