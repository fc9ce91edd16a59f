#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analyzer/check/wheel_policy.h"

namespace depscan {
namespace {

// Release numbers of a version ("2.3.0+cu121" -> 2,3,0; "9.1.0.70" -> 9,1,0,70; "1!2.0" ignores
// the epoch). Parsing stops at the first non-numeric segment (pre/post/dev releases).
std::vector<long> release_of(std::string_view version) {
  size_t bang = version.find('!');
  if (bang != std::string_view::npos) version.remove_prefix(bang + 1);
  if (!version.empty() && (version.front() == 'v' || version.front() == 'V')) version.remove_prefix(1);
  std::vector<long> parts;
  long current = 0;
  bool digits = false;
  for (char c : version) {
    if (c >= '0' && c <= '9') {
      current = current * 10 + (c - '0');
      digits = true;
    } else if (c == '.' && digits) {
      parts.push_back(current);
      current = 0;
      digits = false;
    } else {
      break;
    }
  }
  if (digits) parts.push_back(current);
  return parts;
}

int compare_release(std::vector<long> a, std::vector<long> b) {
  size_t n = std::max(a.size(), b.size());
  a.resize(n, 0);
  b.resize(n, 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

std::string_view without_local(std::string_view v) { return v.substr(0, v.find('+')); }

// One clause of a specifier list as its operator and the version after it; no operator: "".
std::pair<std::string_view, std::string_view> split_clause(std::string_view spec) {
  static constexpr std::string_view ops[] = {"===", "==", "!=", "~=", ">=", "<=", ">", "<"};
  for (std::string_view op : ops)
    if (spec.starts_with(op)) return {op, spec.substr(op.size())};
  return {"", spec};
}

// Each non-empty clause of a comma-separated specifier list, in order, until `visit` returns true.
template <typename Visit>
void for_each_clause(std::string_view specifiers, const Visit& visit) {
  size_t i = 0;
  while (i <= specifiers.size()) {
    size_t j = specifiers.find(',', i);
    if (j == std::string_view::npos) j = specifiers.size();
    std::string_view spec = specifiers.substr(i, j - i);
    if (!spec.empty() && visit(spec)) return;
    i = j + 1;
  }
}

bool satisfies_one(std::string_view version, std::string_view spec) {
  auto [o, value] = split_clause(spec);
  if (o.empty()) return true;  // an operator this subset does not know: not reported
  if (o == "===") return version == value;
  bool wildcard = value.size() > 2 && value.substr(value.size() - 2) == ".*";
  if (wildcard) value.remove_suffix(2);
  auto want = release_of(value);
  auto have = release_of(value.find('+') == std::string_view::npos ? without_local(version) : version);
  if (wildcard) {
    bool prefix = have.size() >= want.size() && std::equal(want.begin(), want.end(), have.begin());
    return o == "!=" ? !prefix : prefix;
  }
  if (value.find('+') != std::string_view::npos && (o == "==" || o == "!="))
    return (version == value) == (o == "==");
  int cmp = compare_release(have, want);
  if (o == "==") return cmp == 0;
  if (o == "!=") return cmp != 0;
  if (o == ">=") return cmp >= 0;
  if (o == "<=") return cmp <= 0;
  if (o == ">") return cmp > 0;
  if (o == "<") return cmp < 0;
  if (want.size() < 2) return cmp >= 0;  // ~=V: >= V and the same release up to V's last-but-one part
  return cmp >= 0 && have.size() >= want.size() - 1 && std::equal(want.begin(), want.end() - 1, have.begin());
}

}  // namespace

bool version_satisfies(std::string_view version, std::string_view specifiers) {
  bool satisfied = true;
  for_each_clause(specifiers, [&](std::string_view spec) { return !(satisfied = satisfies_one(version, spec)); });
  return satisfied;
}

std::optional<Version> specifier_floor(std::string_view specifiers) {
  std::optional<Version> floor;
  for_each_clause(specifiers, [&](std::string_view spec) {
    auto [op, value] = split_clause(spec);
    if (op != ">=" && op != ">" && op != "==" && op != "~=") return false;
    if (value.ends_with(".*")) value.remove_suffix(2);
    floor = Version::parse(without_local(value));
    return true;
  });
  return floor;
}

std::vector<Finding> check_wheel_pins(const std::vector<Distribution>& dists) {
  std::vector<Finding> findings;
  for (const Distribution& d : dists) {
    for (const Requirement& req : d.requires_dist) {
      if (req.specifier.empty() || req.marker.find("extra") != std::string::npos) continue;
      for (const Distribution& other : dists) {
        if (normalize_dist_name(other.name) != req.name || version_satisfies(other.version, req.specifier)) continue;
        std::string from = other.wheel_file.empty() ? other.dist_info : other.wheel_file;
        findings.push_back({"wheel-pin-mismatch", Severity::Warning, std::nullopt,
                            fmt::format("{} {} requires {}{} but {} {} is installed (from {})", d.name, d.version,
                                        req.name, req.specifier, other.name, other.version, from),
                            fmt::format("install {}{} alongside {}", req.name, req.specifier, d.name),
                            from});
      }
    }
  }
  return findings;
}

}  // namespace depscan
