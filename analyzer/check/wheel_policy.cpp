#include "analyzer/check/wheel_policy.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyzer/check/cuda_install_hint.h"
#include "analyzer/check/shipped_libraries.h"
#include "analyzer/input/fs.h"
#include "analyzer/input/wheel.h"
#include "matrix/matrix.h"
#include "matrix/policy.h"

namespace depscan {
namespace {

struct Claim {
  const WheelPolicy* policy = nullptr;
  std::string tag;   // the platform tag as written
  std::string arch;
};

// The platform tags of the wheel's file name (what installers select on) and of its WHEEL file.
std::vector<std::string> tags_of(const Distribution& dist) {
  std::vector<std::string> tags = dist.tags;
  if (auto name = parse_wheel_file_name(dist.wheel_file)) tags.push_back(name->python + "-" + name->abi + "-" + name->platform);
  return tags;
}

// The claimed policy that matters: the most compatible one among the wheel's platform tags
// (an installer accepts the wheel on any system any tag allows).
Claim claimed_policy(const PolicySet& policies, const Distribution& dist) {
  Claim best;
  for (const std::string& tag : tags_of(dist)) {
    size_t dash = tag.rfind('-');
    std::string platforms = dash == std::string::npos ? tag : tag.substr(dash + 1);
    size_t i = 0;
    while (i <= platforms.size()) {
      size_t j = platforms.find('.', i);
      if (j == std::string::npos) j = platforms.size();
      std::string platform = platforms.substr(i, j - i);
      i = j + 1;
      auto split = split_platform_tag(platform);
      const WheelPolicy* p = split ? policies.find(split->policy) : nullptr;
      if (p && (!best.policy || p->priority > best.policy->priority)) best = {p, platform, split->arch};
    }
  }
  return best;
}

struct Violation {
  size_t object;
  std::string what;   // "needs pthread_create@GLIBC_2.34 (libc.so.6)"
  std::string cuda_library;  // a CUDA or cuDNN library the wheel leaves out, else empty
  size_t root = 0;           // of the edge that needs cuda_library
};

std::string family_of(const std::string& version, std::string& number) {
  size_t underscore = version.find('_');
  if (underscore == std::string::npos) return "";
  number = version.substr(underscore + 1);
  return version.substr(0, underscore);
}

std::vector<std::string> versioned_names(const Binary& binary, const VersionNeed& need) {
  std::vector<std::string> names = binary.symbols_needing(need);
  for (std::string& name : names) name += "@" + need.version;
  if (names.empty()) names.push_back("(a symbol)@" + need.version);
  return names;
}

void symbol_violations(const WheelPolicy& policy, const std::string& arch, size_t index, const Binary& binary,
                       std::vector<Violation>& out) {
  auto arch_it = policy.symbol_versions.find(arch);
  for (const VersionNeed& need : binary.version_needs) {
    if (!policy.allows_library(need.file, arch) || arch_it == policy.symbol_versions.end()) continue;
    std::string number;
    std::string family = family_of(need.version, number);
    auto allowed = arch_it->second.find(family);
    if (allowed == arch_it->second.end() || allowed->second.count(number)) continue;
    out.push_back({index, fmt::format("needs {} from {}, newer than {} allows", fmt::join(versioned_names(binary, need), ", "),
                                      need.file, policy.name), ""});
  }
  for (const Symbol& s : binary.symbols) {
    if (s.defined) continue;
    for (const auto& [lib, names] : policy.blacklist)
      if (names.count(std::string(s.name)) && (s.version_file.empty() || s.version_file == lib))
        out.push_back({index, fmt::format("uses {} from {}, which {} forbids", s.name, lib, policy.name), ""});
  }
}

// What a wheel may take from outside itself besides the policy's libraries. The NVIDIA driver's
// (libcuda.so.1) come from the target system and no wheel can bundle them, so needing one breaks
// no policy. Another installed wheel's libraries are part of the install, found or not.
struct Outside {
  const Matrix& matrix;
  std::set<std::string> driver;
  const ShippedLibraries* shipped;  // ctx.shipped: another installed wheel's libraries
  std::set<std::string> plugins;  // files only an optional dlopen opens

  bool is_cuda_library(const std::string& name) const {
    const ComponentRow* row = matrix.component_of(name);
    return (row && row->component != "driver") || matrix.cudnn_series_of(name);
  }
};

std::set<std::string> driver_libraries(const Matrix& matrix) {
  std::set<std::string> names;
  for (const ComponentRow& row : matrix.components())
    if (row.component == "driver")
      for (const ComponentSoname& soname : row.sonames) names.insert(soname.name);
  return names;
}

// NVSHMEM's transports, cuFile's RDMA support: what they break matters only where their feature is used.
std::set<std::string> optional_plugins(const Graph& graph, const Matrix& matrix) {
  std::set<std::string> files;
  for (const Edge& e : graph.edges)
    if (e.kind == EdgeKind::Dlopen && e.to && matrix.dlopen_is_optional(soname_or_file_name(graph.objects[e.from]), e.name))
      files.insert(file_path(graph.objects[*e.to]));
  return files;
}

// Every NEEDED library from outside the install that the policy does not list, whether or not the
// scanning machine has it: otherwise the verdict would depend on the machine doing the scan.
void library_violations(const WheelPolicy& policy, const std::string& arch, const Graph& graph, size_t index,
                        const Outside& outside, std::vector<Violation>& out) {
  std::set<std::string> reported;
  for (const Edge& e : graph.edges) {
    if (e.from != index || e.kind != EdgeKind::Needed || e.filtee != Filtee::None) continue;  // the policies list NEEDED
    std::string name = basename_of(e.name);
    if (e.to ? graph.objects[*e.to].owner != "system" : (outside.shipped && outside.shipped->find(name))) continue;
    bool interpreter = name.rfind("ld-", 0) == 0 || name.rfind("ld64.so", 0) == 0;  // part of the libc
    if (interpreter || policy.allows_library(name, arch) || outside.driver.count(name) || !reported.insert(e.name).second)
      continue;
    std::string where = e.to ? fmt::format("takes {} from the system ({})", e.name, graph.objects[*e.to].path)
                             : fmt::format("needs {} from outside the install (no installed wheel ships it)", e.name);
    out.push_back({index, fmt::format("{}, which {} does not allow", where, policy.name),
                   outside.is_cuda_library(name) ? name : "", e.root});
  }
}

std::vector<Violation> violations(const WheelPolicy& policy, const std::string& arch, const Graph& graph,
                                  const std::vector<size_t>& objects, const Outside& outside) {
  std::vector<Violation> out;
  for (size_t index : objects) {
    const Object& o = graph.objects[index];
    if (!o.binary) continue;
    symbol_violations(policy, arch, index, *o.binary, out);
    library_violations(policy, arch, graph, index, outside, out);
  }
  return out;
}

bool only_cuda_libraries(const std::vector<Violation>& list) {
  return std::all_of(list.begin(), list.end(), [](const Violation& v) { return !v.cuda_library.empty(); });
}

// The CUDA libraries a wheel leaves out do not count: every CUDA wheel leaves them out. A policy
// without the wheel's architecture (manylinux1 has no aarch64) is no candidate, unless the data
// has that architecture for no policy at all (their symbols are then not checked). None: no policy.
std::optional<std::string> best_met(const PolicySet& policies, const Claim& claim, const Graph& graph,
                                    const std::vector<size_t>& objects, const Outside& outside) {
  const auto& all = policies.policies();
  bool arch_known = std::any_of(all.begin(), all.end(), [&](const WheelPolicy& p) {
    return p.libc == claim.policy->libc && p.symbol_versions.count(claim.arch);
  });
  for (const WheelPolicy& p : all)
    if (p.libc == claim.policy->libc && (!arch_known || p.symbol_versions.count(claim.arch)) &&
        only_cuda_libraries(violations(p, claim.arch, graph, objects, outside)))
      return p.name;
  return std::nullopt;
}

// "it meets manylinux_2_24 at best", or "it meets no manylinux policy".
std::string meets(const std::optional<std::string>& best, const Claim& claim) {
  if (best) return fmt::format("it meets {} at best", *best);
  return fmt::format("it meets no {} policy", claim.policy->libc == "musl" ? "musllinux" : "manylinux");
}

// `majors`: cuda_majors_by_root, filled on the first CUDA library.
Finding violation_finding(const Graph& graph, const Outside& outside, const Violation& v, const std::string& who,
                          const Claim& claim, const std::optional<std::string>& best,
                          std::vector<std::vector<int>>& majors) {
  const Matrix& matrix = outside.matrix;
  const Object& object = graph.objects[v.object];
  if (v.cuda_library.empty()) {
    bool plugin = outside.plugins.count(file_path(object)) != 0;
    std::string claimed = fmt::format("claimed by {} as {}; {}{}", who, claim.tag, meets(best, claim),
                                      plugin ? "; it is a plugin opened with dlopen only when its feature is used" : "");
    std::string retag = best ? fmt::format(", or tag the wheel for the policy it meets ({})", *best) : "";
    return {"wheel-policy-violation", plugin ? Severity::Warning : Severity::Error, v.object,
            fmt::format("{}: {} ({})", object.path, v.what, claimed),
            fmt::format("build in a {} image and bundle the libraries it names (auditwheel repair){}", claim.policy->name,
                        retag), ""};
  }
  // CUDA wheels leave CUDA's libraries out on purpose (auditwheel repair --exclude) and take them
  // from the NVIDIA wheels or a toolkit; whether the target has them is library-not-found's question.
  auto hint = cuda_install_hint(matrix, v.cuda_library, basename_of(object.path),
                                cuda_majors_of_root(majors, graph, matrix, v.root));
  return {"wheel-policy-violation", Severity::Warning, v.object,
          fmt::format("{}: {} (claimed by {} as {}; CUDA wheels leave CUDA's libraries out on purpose, and apart from "
                      "them {})", object.path, v.what, who, claim.tag, meets(best, claim)),
          fmt::format("make sure the target has it: name the NVIDIA wheel that ships it in Requires-Dist, or document "
                      "the CUDA toolkit the wheel needs{}", hint ? "; " + *hint : ""), ""};
}

// One object per file of the distribution: the one named by its own path rather than through a
// ../ detour (torch/lib/../../nvidia/...), which a module loaded after torch may have reached first.
std::vector<size_t> objects_of(const Graph& graph, const std::string& owner) {
  std::map<std::string_view, size_t> by_file;
  std::vector<size_t> objects;
  for (size_t i = 0; i < graph.objects.size(); ++i) {
    const Object& o = graph.objects[i];
    if (o.owner != owner) continue;
    auto [at, added] = by_file.try_emplace(o.realpath, objects.size());
    if (added) objects.push_back(i);
    else if (graph.objects[objects[at->second]].path.find("/../") != std::string::npos && o.path.find("/../") == std::string::npos)
      objects[at->second] = i;
  }
  return objects;
}

}  // namespace

std::vector<Finding> check_wheel_policy(const CheckContext& ctx, const std::vector<Distribution>& dists) {
  std::vector<Finding> findings;
  if (dists.empty()) return findings;
  auto policies = load_embedded_policies();
  if (!policies) return {{"matrix-error", Severity::Error, std::nullopt, policies.error(), "", ""}};
  Outside outside{ctx.matrix, driver_libraries(ctx.matrix), ctx.shipped, optional_plugins(ctx.graph, ctx.matrix)};
  std::vector<std::vector<int>> majors;
  for (const Distribution& dist : dists) {
    Claim claim = claimed_policy(*policies, dist);
    if (!claim.policy) continue;
    std::vector<size_t> objects = objects_of(ctx.graph, dist.name);
    if (objects.empty()) continue;
    std::string who = dist.wheel_file.empty() ? dist.name + " " + dist.version : dist.wheel_file;
    std::optional<std::string> best = best_met(*policies, claim, ctx.graph, objects, outside);
    auto broken = violations(*claim.policy, claim.arch, ctx.graph, objects, outside);
    for (const Violation& v : broken) findings.push_back(violation_finding(ctx.graph, outside, v, who, claim, best, majors));
    if (broken.empty())
      findings.push_back({"wheel-policy", Severity::Info, std::nullopt,
                          fmt::format("{}: claims {} and meets it (best policy met: {})", who, claim.tag,
                                      best.value_or(claim.policy->name)), "", ""});
  }
  return findings;
}

}  // namespace depscan
