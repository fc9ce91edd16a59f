#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analyzer/util/system_libraries.h"
#include "report/report.h"
#include "report/summary.h"

namespace depscan {
namespace {

bool needs_escaping(std::string_view text) {
  for (char c : text) {
    auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b >= 0x7f) return true;  // past ASCII: maybe a C1 or bidirectional control, or not UTF-8
  }
  return false;
}

// Names and messages from the analysed files, appended as one line (see one_line).
void append_clean(std::string& out, std::string_view text) {
  if (needs_escaping(text)) out += one_line(text);
  else out.append(text);
}

std::string clean(std::string_view text) { return needs_escaping(text) ? one_line(text) : std::string(text); }

struct Style {
  bool color;
  std::string paint(std::string_view text, const char* code) const {
    return color ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  }
  // Appends the parts, painted as one piece.
  template <typename... Parts>
  void append(std::string& out, const char* code, const Parts&... parts) const {
    if (color) out.append("\033[").append(code).append("m");
    (append_clean(out, std::string_view(parts)), ...);
    if (color) out.append("\033[0m");
  }
};

// libc-family libraries are folded unless -v: every program needs them and they rarely matter.
bool is_libc_family(std::string_view name) { return is_system_runtime_soname(name); }

// The detail if there is one, else `fallback`. (A `?:` of a literal and a std::string would make
// a temporary string, and the view would outlive it.)
std::string_view detail_or(const Edge& e, std::string_view fallback) {
  if (e.how_detail.empty()) return fallback;
  return e.how_detail;
}

std::string_view how_label(const Edge& e) {
  switch (e.how) {
    case How::Rpath: return detail_or(e, "rpath");
    case How::LdLibraryPath: return "LD_LIBRARY_PATH";
    case How::Runpath: return detail_or(e, "runpath");  // musl: "runpath of app" up the chain
    case How::LdSoCache: return "ld.so.cache";
    case How::DefaultPath: return "default path";
    case How::DirectPath:  // "loaded first by import torch (direct path)" says who opened it
      return e.how_detail.starts_with("direct path") ? "direct path" : detail_or(e, "direct path");
    case How::AlreadyLoaded: return "already loaded";
    case How::Preload: return detail_or(e, "preload");
    case How::SearchOrder: return detail_or(e, "search order");
    case How::NotFound: return "not found";
  }
  return "?";
}

class TreePrinter {
 public:
  TreePrinter(const ScanReport& report, const TextOptions& options)
      : graph_(report.result.graph), audit_root_(report.cuda_audit_root), options_(options), style_{options.color} {
    by_from_.reserve(graph_.edges.size());
    for (size_t i = 0; i < graph_.edges.size(); ++i) by_from_.push_back({graph_.edges[i].root, graph_.edges[i].from, i});
    std::stable_sort(by_from_.begin(), by_from_.end(), [](const EdgeAt& a, const EdgeAt& b) {
      return std::tie(a.root, a.from) < std::tie(b.root, b.from);
    });
  }

  // Appends the tree of one root to `out`.
  void print_root(size_t root_index, std::string& out) {
    out_ = &out;
    expanded_.clear();
    missing_listed_.clear();
    size_t root = graph_.roots[root_index];
    style_.append(out, "1", graph_.objects[root].path);
    if (root_index == audit_root_) style_.append(out, "2", " (stands for a program that loads the CUDA libraries by name)");
    out.append(cuda_suffix(graph_.objects[root])).append("\n");
    expanded_.insert(root);
    print_children(root_index, root, "");
  }

 private:
  // The GPU code an object carries, e.g. " {GPU: SASS sm_80 sm_90, PTX compute_90 (ISA 9.0)}".
  std::string cuda_suffix(const Object& object) const {
    if (!options_.gpu_code || !object.binary || !object.binary->cuda_code) return "";
    return style_.paint(fmt::format(" {{GPU: {}}}", cuda_code_summary(*object.binary->cuda_code)), "35");
  }

  void print_children(size_t root_index, size_t object, const std::string& prefix) {
    auto it = std::lower_bound(by_from_.begin(), by_from_.end(), std::make_pair(root_index, object),
                               [](const EdgeAt& e, const std::pair<size_t, size_t>& key) {
                                 return std::tie(e.root, e.from) < std::tie(key.first, key.second);
                               });
    std::vector<size_t> shown;
    for (; it != by_from_.end() && it->root == root_index && it->from == object; ++it) {
      const Edge& edge = graph_.edges[it->edge];
      if (!options_.verbose && edge.to && is_libc_family(edge.name)) continue;
      shown.push_back(it->edge);
    }
    for (size_t k = 0; k < shown.size(); ++k) {
      const Edge& edge = graph_.edges[shown[k]];
      bool last = k + 1 == shown.size();
      print_edge(root_index, edge, prefix, last);
    }
  }

  // A PE file opens a DLL at run time with LoadLibrary.
  std::string_view kind_name(const Edge& edge) const {
    const Object& from = graph_.objects[edge.from];
    bool pe = from.binary && from.binary->format == Format::Pe;
    return edge.kind == EdgeKind::Dlopen && pe ? "LoadLibrary" : to_string(edge.kind);
  }

  std::string kind_label(const Edge& edge) const {
    if (edge.filtee == Filtee::Auxiliary)
      return edge.to || edge.filter_cycle ? " (auxiliary filter)" : " (auxiliary filter: ld.so goes on without it)";
    if (edge.filtee == Filtee::Filter) return " (filter)";
    if (edge.kind == EdgeKind::Needed) return "";
    return fmt::format(" ({}{})", kind_name(edge), edge.inferred ? ", inferred" : "");
  }

  void print_edge(size_t root_index, const Edge& edge, const std::string& prefix, bool last) {
    std::string& out = *out_;
    const char* branch = last ? "└── " : "├── ";
    std::string kind = kind_label(edge);
    out.append(prefix).append(branch);
    if (!edge.to && edge.system_provided) {
      append_clean(out, edge.name);
      style_.append(out, "33", " [", edge.how_detail, "]");
      out.append(kind).append("\n");
      return;
    }
    if (!edge.to) {
      // The paths tried are listed once per missing name (always with -v).
      bool first = missing_listed_.insert(edge.name).second;
      style_.append(out, edge.ignored_when_missing() ? "33" : "1;31", edge.name,
                    edge.filter_cycle ? " in a filter cycle: ld.so crashes" : " not found");
      out.append(kind).append(first || options_.verbose ? "" : " (paths tried are listed above)").append("\n");
      if (!first && !options_.verbose) return;
      std::string pad = prefix + (last ? "    " : "│   ");
      for (const Attempt& a : edge.tried) {
        out.append(pad);
        style_.append(out, "31", "  tried ", a.path, " (", a.outcome, ")");
        out.append("\n");
      }
      return;
    }
    const Object& target = graph_.objects[*edge.to];
    bool again = expanded_.count(*edge.to) > 0;
    std::string_view name = edge.name.empty() ? "\"\"" : std::string_view(edge.name);  // the program's own empty name
    if (again) append_clean(out, name);
    else style_.append(out, "36", name);
    style_.append(out, "33", " [", how_label(edge), "]");
    out.append(kind);
    if (options_.verbose || edge.name != target.path) append_clean(out.append(" => "), target.path);
    if (!target.owner.empty()) style_.append(out, "2", " (", target.owner, ")");
    if (!again) out.append(cuda_suffix(target));
    out.append("\n");
    if (again) return;
    expanded_.insert(*edge.to);
    std::string pad = prefix + (last ? "    " : "│   ");
    if (depth_ == kMaxTreeDepth) {  // bounds the recursion and the indentation (input-controlled)
      out.append(pad);
      style_.append(out, "2", fmt::format("└── … deeper levels not shown (limit {}; see --format json)",
                                          kMaxTreeDepth));
      out.append("\n");
      return;
    }
    ++depth_;
    print_children(root_index, *edge.to, pad);
    --depth_;
  }

  static constexpr size_t kMaxTreeDepth = 100;

  const Graph& graph_;
  std::optional<size_t> audit_root_;  // depscan with no file: the program standing for the application
  TextOptions options_;
  Style style_;
  struct EdgeAt {
    size_t root, from, edge;
  };
  std::vector<EdgeAt> by_from_;  // every edge, by (root, from), in graph order within each
  std::set<size_t> expanded_;
  std::set<std::string> missing_listed_;
  std::string* out_ = nullptr;  // the text being written by print_root
  size_t depth_ = 0;
};

// Info findings of one code beyond this many (a directory audit's per-root version floors) are
// counted in one line unless -v; errors and warnings are always listed.
constexpr size_t kInfoLinesPerCode = 3;

std::string render_findings(const ScanReport& report, const Style& style, bool verbose) {
  std::string out;
  std::map<std::string, size_t> info_seen;
  for (const Finding& f : report.result.findings) {
    const char* code = f.severity == Severity::Error ? "1;31" : f.severity == Severity::Warning ? "1;33" : "1";
    if (f.severity == Severity::Info && !verbose && ++info_seen[f.code] > kInfoLinesPerCode) continue;
    out += style.paint(fmt::format("{}[{}]", to_string(f.severity), f.code), code) + ": " + clean(f.message) + "\n";
    if (!f.fix.empty()) out += "  fix: " + clean(f.fix) + "\n";
  }
  for (const auto& [code, count] : info_seen)
    if (count > kInfoLinesPerCode)
      out += style.paint(fmt::format("info[{}]", code), "1") +
             fmt::format(": {} more like these (listed with -v and in --format json)\n", count - kInfoLinesPerCode);
  return out;
}

}  // namespace

std::string render_text(const ScanReport& report, const TextOptions& options) {
  TreePrinter printer(report, options);
  std::string out;
  for (size_t r = 0; r < report.result.graph.roots.size(); ++r) printer.print_root(r, out);
  std::string findings = render_findings(report, Style{options.color}, options.verbose);
  if (!findings.empty()) out += (out.empty() ? "" : "\n") + findings;
  std::string summary = render_summary(report, options.color);
  if (!summary.empty()) out += "\n" + summary;
  return out;
}

}  // namespace depscan
