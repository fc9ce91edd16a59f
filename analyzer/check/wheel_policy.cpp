#include "analyzer/check/wheel_policy.h"

#include <map>
#include <set>

#include <fmt/format.h>

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
};

std::string family_of(const std::string& version, std::string& number) {
  size_t underscore = version.find('_');
  if (underscore == std::string::npos) return "";
  number = version.substr(underscore + 1);
  return version.substr(0, underscore);
}

std::vector<std::string> symbols_needing(const Binary& binary, const VersionNeed& need) {
  std::vector<std::string> names;
  for (const Symbol& s : binary.symbols)
    if (!s.defined && s.version == need.version && (s.version_file.empty() || s.version_file == need.file))
      names.push_back(fmt::format("{}@{}", s.name, need.version));
  if (names.empty()) names.push_back("(a symbol)@" + need.version);
  return names;
}

void symbol_violations(const WheelPolicy& policy, const std::string& arch, size_t index, const Binary& binary,
                       std::vector<Violation>& out) {
  auto arch_it = policy.symbol_versions.find(arch);
  for (const VersionNeed& need : binary.version_needs) {
    if (!policy.lib_whitelist.count(need.file) || arch_it == policy.symbol_versions.end()) continue;
    std::string number;
    std::string family = family_of(need.version, number);
    auto allowed = arch_it->second.find(family);
    if (allowed == arch_it->second.end() || allowed->second.count(number)) continue;
    out.push_back({index, fmt::format("needs {} from {}, newer than {} allows", fmt::join(symbols_needing(binary, need), ", "),
                                      need.file, policy.name)});
  }
  for (const Symbol& s : binary.symbols) {
    if (s.defined) continue;
    for (const auto& [lib, names] : policy.blacklist)
      if (names.count(std::string(s.name)) && (s.version_file.empty() || s.version_file == lib))
        out.push_back({index, fmt::format("uses {} from {}, which {} forbids", s.name, lib, policy.name)});
  }
}

// The NVIDIA driver's libraries (libcuda.so.1) come from the target system and no wheel can bundle
// them, so needing one breaks no policy: otherwise the verdict would depend on whether the machine
// doing the scan has a driver.
std::set<std::string> driver_libraries(const Matrix& matrix) {
  std::set<std::string> names;
  for (const ComponentRow& row : matrix.components())
    if (row.component == "driver")
      for (const ComponentSoname& soname : row.sonames) names.insert(soname.name);
  return names;
}

void library_violations(const WheelPolicy& policy, const Graph& graph, size_t index,
                        const std::set<std::string>& driver, std::vector<Violation>& out) {
  std::set<std::string> reported;
  for (const Edge& e : graph.edges) {
    if (e.from != index || e.kind != EdgeKind::Needed || !e.to) continue;
    const Object& target = graph.objects[*e.to];
    std::string name = basename_of(e.name);
    bool interpreter = name.rfind("ld-", 0) == 0 || name.rfind("ld64.so", 0) == 0;  // part of the libc
    if (target.owner != "system" || interpreter || policy.lib_whitelist.count(name) || driver.count(name) ||
        !reported.insert(e.name).second)
      continue;
    out.push_back({index, fmt::format("takes {} from the system ({}), which {} does not allow", e.name, target.path,
                                      policy.name)});
  }
}

std::vector<Violation> violations(const WheelPolicy& policy, const std::string& arch, const Graph& graph,
                                  const std::vector<size_t>& objects, const std::set<std::string>& driver) {
  std::vector<Violation> out;
  for (size_t index : objects) {
    const Object& o = graph.objects[index];
    if (!o.binary) continue;
    symbol_violations(policy, arch, index, *o.binary, out);
    library_violations(policy, graph, index, driver, out);
  }
  return out;
}

std::string best_met(const PolicySet& policies, const Claim& claim, const Graph& graph, const std::vector<size_t>& objects,
                     const std::set<std::string>& driver) {
  for (const WheelPolicy& p : policies.policies())
    if (p.libc == claim.policy->libc && violations(p, claim.arch, graph, objects, driver).empty()) return p.name;
  return fmt::format("no {} policy", claim.policy->libc == "musl" ? "musllinux" : "manylinux");
}

}  // namespace

std::vector<Finding> check_wheel_policy(const CheckContext& ctx, const std::vector<Distribution>& dists) {
  std::vector<Finding> findings;
  if (dists.empty()) return findings;
  auto policies = load_embedded_policies();
  if (!policies) return {{"matrix-error", Severity::Error, std::nullopt, policies.error(), "", ""}};
  std::set<std::string> driver = driver_libraries(ctx.matrix);
  for (const Distribution& dist : dists) {
    Claim claim = claimed_policy(*policies, dist);
    if (!claim.policy) continue;
    std::vector<size_t> objects;
    std::set<std::string> seen;
    for (size_t i = 0; i < ctx.graph.objects.size(); ++i)
      if (ctx.graph.objects[i].owner == dist.name && seen.insert(ctx.graph.objects[i].realpath).second) objects.push_back(i);
    if (objects.empty()) continue;
    std::string who = dist.wheel_file.empty() ? dist.name + " " + dist.version : dist.wheel_file;
    std::string best = best_met(*policies, claim, ctx.graph, objects, driver);
    auto broken = violations(*claim.policy, claim.arch, ctx.graph, objects, driver);
    for (const Violation& v : broken)
      findings.push_back({"wheel-policy-violation", Severity::Error, v.object,
                          fmt::format("{}: {} (claimed by {} as {}; it meets {} at best)", ctx.graph.objects[v.object].path,
                                      v.what, who, claim.tag, best),
                          fmt::format("build in a {} image and bundle the libraries it names (auditwheel repair), or "
                                      "tag the wheel for the policy it meets ({})", claim.policy->name, best),
                          ""});
    if (broken.empty())
      findings.push_back({"wheel-policy", Severity::Info, std::nullopt,
                          fmt::format("{}: claims {} and meets it (best policy met: {})", who, claim.tag, best), "", ""});
  }
  return findings;
}

}  // namespace depscan
