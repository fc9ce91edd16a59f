// Version floors: the highest GLIBC_, GLIBCXX_, CXXABI_ and GCC_ version each root's own files
// require (the program, and libraries it ships rather than takes from the system), and every
// symbol too new for the machine named by --target-glibc, --target-glibcxx or --target.
#include <array>
#include <map>
#include <span>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "analyzer/check/baselines.h"
#include "analyzer/check/check.h"
#include "analyzer/util/listing.h"
#include "analyzer/util/system_libraries.h"

namespace depscan {
namespace {

using Numbers = std::vector<int>;
constexpr std::array<std::string_view, 4> kFamilies = {"GLIBC", "GLIBCXX", "CXXABI", "GCC"};

std::optional<Numbers> parse_numbers(std::string_view text) {
  Numbers out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('.', i);
    if (j == std::string_view::npos) j = text.size();
    if (j == i || j - i > 6) return std::nullopt;
    int n = 0;
    for (size_t k = i; k < j; ++k) {
      if (text[k] < '0' || text[k] > '9') return std::nullopt;
      n = n * 10 + (text[k] - '0');
    }
    out.push_back(n);
    i = j + 1;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

struct Versioned {
  std::string_view family;
  Numbers numbers;
};

// GLIBC_2.34 -> {GLIBC, 2.34}; GLIBC_PRIVATE, CXXABI_TM_1 and the like have no number.
std::optional<Versioned> split_version(std::string_view version) {
  if (version == "GLIBC_ABI_DT_RELR") return Versioned{"GLIBC", {2, 36}};  // introduced in 2.36
  size_t us = version.find('_');
  if (us == std::string_view::npos) return std::nullopt;
  std::string_view family = version.substr(0, us);
  bool known = false;
  for (std::string_view f : kFamilies) known = known || f == family;
  if (!known) return std::nullopt;
  auto numbers = parse_numbers(version.substr(us + 1));
  if (!numbers) return std::nullopt;
  return Versioned{family, *numbers};
}

std::string dotted(const Numbers& n) {
  std::string out;
  for (size_t i = 0; i < n.size(); ++i) out += (i ? "." : "") + std::to_string(n[i]);
  return out;
}

// Libraries that belong to the target system itself: their own needs are not the program's.
bool is_system_runtime(const Binary& binary) {
  return binary.soname && is_system_runtime_soname(*binary.soname);
}

// The root's own files: the root, and libraries found by RPATH, RUNPATH, LD_LIBRARY_PATH or
// path rather than from the system (ld.so.cache, default directories).
std::vector<size_t> shipped_objects(const Graph& graph, size_t root, std::span<const size_t> root_edges) {
  std::set<size_t> system;
  for (size_t i : root_edges)
    if (const Edge& e = graph.edges[i]; e.to && (e.how == How::LdSoCache || e.how == How::DefaultPath)) system.insert(*e.to);
  std::vector<size_t> out;
  for (size_t o : graph.load_order[root]) {
    const Object& obj = graph.objects[o];
    if (!obj.binary || obj.binary->format != Format::Elf) continue;
    if (o != graph.roots[root] && (system.count(o) || is_system_runtime(*obj.binary))) continue;
    out.push_back(o);
  }
  return out;
}

struct Limit {
  Numbers numbers;
  std::string label;  // "--target debian-11 (glibc 2.31)"
};

std::map<std::string_view, Limit> limits_of(const Target& target, const std::optional<Baseline>& baseline) {
  std::map<std::string_view, Limit> out;
  auto add = [&](std::string_view family, const std::string& value, const std::string& label) {
    if (auto n = parse_numbers(value)) out[family] = Limit{*n, label};
  };
  if (baseline) {
    add("GLIBC", baseline->glibc, fmt::format("--target {} (glibc {})", baseline->name, baseline->glibc));
    add("GLIBCXX", baseline->glibcxx, fmt::format("--target {} (GLIBCXX_{})", baseline->name, baseline->glibcxx));
    add("CXXABI", baseline->cxxabi, fmt::format("--target {} (CXXABI_{})", baseline->name, baseline->cxxabi));
  }
  if (target.glibc) add("GLIBC", *target.glibc, "--target-glibc " + *target.glibc);
  if (target.glibcxx) add("GLIBCXX", *target.glibcxx, "--target-glibcxx " + *target.glibcxx);
  return out;
}

struct Floor {
  const Numbers* numbers = nullptr;
  std::string_view version;  // a VersionNeed's, in the graph
  size_t object = 0;
};

class FloorScan {
 public:
  FloorScan(const CheckContext& ctx, std::map<std::string_view, Limit> limits)
      : ctx_(ctx), limits_(std::move(limits)), root_edges_(edges_by_root(ctx.graph)) {}

  void scan_root(size_t root) {
    std::map<std::string_view, Floor> floors;
    std::span<const size_t> edges = root < root_edges_.size() ? std::span<const size_t>(root_edges_[root]) : std::span<const size_t>();
    for (size_t o : shipped_objects(ctx_.graph, root, edges)) {
      for (const VersionNeed& need : ctx_.graph.objects[o].binary->version_needs) {
        const Versioned* v = parsed(need.version);
        if (!v) continue;
        Floor& f = floors[v->family];
        if (!f.numbers || v->numbers > *f.numbers) f = Floor{&v->numbers, need.version, o};
        check_limit(o, need, *v);
      }
    }
    if (!floors.empty()) out_.push_back(floor_finding(root, floors));
  }

  std::vector<Finding> take() { return std::move(out_); }

 private:
  // split_version once per distinct version name of the scan; null if it has no number.
  const Versioned* parsed(std::string_view version) {
    auto [it, added] = parsed_.try_emplace(version);
    if (added) it->second = split_version(version);
    return it->second ? &*it->second : nullptr;
  }

  void check_limit(size_t object, const VersionNeed& need, const Versioned& v) {
    auto limit = limits_.find(v.family);
    if (limit == limits_.end() || !(v.numbers > limit->second.numbers)) return;
    if (!reported_.emplace(object, need.version).second) return;
    const Object& obj = ctx_.graph.objects[object];
    std::vector<std::string> users = obj.binary->symbols_needing(need);
    Finding f;
    f.code = "symbol-too-new";
    f.severity = Severity::Error;
    f.object = object;
    f.path = obj.path;
    f.message = fmt::format("{} needs {} from {}, newer than {}{}{}", obj.path, need.version, need.file,
                            limit->second.label, users.empty() ? "" : ": ", join_limited(users, 64));
    f.fix = fmt::format("build {} against the oldest {} it must run with (an older distribution, "
                        "a manylinux image or a sysroot), or stop using these symbols",
                        obj.path, v.family == "GLIBC" ? "glibc" : "libstdc++/libgcc");
    out_.push_back(std::move(f));
  }

  Finding floor_finding(size_t root, const std::map<std::string_view, Floor>& floors) const {
    std::vector<std::string> parts;
    for (std::string_view family : kFamilies) {
      auto it = floors.find(family);
      if (it == floors.end()) continue;
      parts.push_back(fmt::format("{} (by {})", it->second.version, ctx_.graph.objects[it->second.object].path));
    }
    size_t r = ctx_.graph.roots[root];
    std::string glibc = floors.count("GLIBC") ? " glibc >= " + dotted(*floors.at("GLIBC").numbers) + ";" : "";
    return Finding{"version-floor", Severity::Info, r,
                   fmt::format("{} needs{} highest versions: {}", ctx_.graph.objects[r].path, glibc,
                               join_limited(parts, 4)),
                   "", ctx_.graph.objects[r].path};
  }

  const CheckContext& ctx_;
  std::map<std::string_view, Limit> limits_;
  std::vector<std::vector<size_t>> root_edges_;
  std::set<std::pair<size_t, std::string>> reported_;
  std::unordered_map<std::string_view, std::optional<Versioned>> parsed_;
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> check_target_floors(const CheckContext& ctx) {
  std::optional<Baseline> baseline;
  if (ctx.target.baseline) {
    baseline = find_baseline(*ctx.target.baseline);
    if (!baseline)
      return {Finding{"target-unknown", Severity::Error, std::nullopt,
                      fmt::format("--target {}: no such baseline in baselines.json", *ctx.target.baseline),
                      "", ""}};
  }
  FloorScan scan(ctx, limits_of(ctx.target, baseline));
  for (size_t root = 0; root < ctx.graph.load_order.size() && root < ctx.graph.roots.size(); ++root)
    scan.scan_root(root);
  return scan.take();
}

}  // namespace depscan
