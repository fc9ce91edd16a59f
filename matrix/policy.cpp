#include "matrix/policy.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "matrix/embedded.h"

namespace depscan {

namespace {

// Reads decimal digits at `pos`; returns how many.
size_t digits_at(std::string_view s, size_t pos) {
  size_t n = 0;
  while (pos + n < s.size() && s[pos + n] >= '0' && s[pos + n] <= '9') ++n;
  return n;
}

}  // namespace

std::optional<PlatformTag> split_platform_tag(std::string_view platform) {
  for (std::string_view family : {"manylinux", "musllinux"}) {
    if (platform.substr(0, family.size()) != family) continue;
    size_t pos = family.size();
    if (pos < platform.size() && platform[pos] == '_') {  // manylinux_2_17_x86_64
      size_t major = digits_at(platform, pos + 1);
      if (major == 0 || pos + 1 + major >= platform.size() || platform[pos + 1 + major] != '_') return std::nullopt;
      size_t minor = digits_at(platform, pos + 2 + major);
      if (minor == 0) return std::nullopt;
      pos += 2 + major + minor;
    } else {  // manylinux1_x86_64, manylinux2014_aarch64
      size_t n = digits_at(platform, pos);
      if (n == 0) return std::nullopt;
      pos += n;
    }
    if (pos + 1 >= platform.size() || platform[pos] != '_') return std::nullopt;
    return PlatformTag{std::string(platform.substr(0, pos)), std::string(platform.substr(pos + 1))};
  }
  return std::nullopt;
}

const WheelPolicy* PolicySet::find(std::string_view name) const {
  for (const WheelPolicy& p : policies_) {
    if (p.name == name) return &p;
    if (std::find(p.aliases.begin(), p.aliases.end(), name) != p.aliases.end()) return &p;
  }
  return nullptr;
}

void PolicySet::add(WheelPolicy policy) {
  policies_.push_back(std::move(policy));
  std::stable_sort(policies_.begin(), policies_.end(),
                   [](const WheelPolicy& a, const WheelPolicy& b) { return a.priority > b.priority; });
}

bool WheelPolicy::allows_library(const std::string& soname, const std::string& arch) const {
  auto musl_libc = libc_so_by_arch.find(arch);
  if (musl_libc != libc_so_by_arch.end() && lib_whitelist.count("libc.so")) {
    if (soname == musl_libc->second) return true;
    if (soname == "libc.so") return false;  // replaced by the architecture's name, as auditwheel does
  }
  return lib_whitelist.count(soname) != 0;
}

Expected<PolicySet> parse_policies(std::string_view json_text) {
  auto json = nlohmann::json::parse(json_text, nullptr, false);
  if (json.is_discarded()) return Error{"manylinux-policy.json: not valid JSON"};
  PolicySet set;
  try {
    for (const auto& row : json.at("policies")) {
      WheelPolicy p;
      p.name = row.at("name").get<std::string>();
      p.aliases = row.at("aliases").get<std::vector<std::string>>();
      p.libc = row.at("libc").get<std::string>();
      p.libc_version = row.at("libc_version").get<std::string>();
      p.priority = row.at("priority").get<int>();
      p.source = row.at("source").get<std::string>();
      if (p.source.empty()) return Error{fmt::format("manylinux-policy.json: {} has no source", p.name)};
      for (const auto& [arch, families] : row.at("symbol_versions").items())
        for (const auto& [family, versions] : families.items())
          for (const auto& v : versions) p.symbol_versions[arch][family].insert(v.get<std::string>());
      for (const auto& lib : row.at("lib_whitelist")) p.lib_whitelist.insert(lib.get<std::string>());
      if (row.contains("libc_so_by_arch")) p.libc_so_by_arch = row.at("libc_so_by_arch").get<std::map<std::string, std::string>>();
      for (const auto& [lib, symbols] : row.at("blacklist").items())
        for (const auto& s : symbols) p.blacklist[lib].insert(s.get<std::string>());
      set.add(std::move(p));
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("manylinux-policy.json: {}", e.what())};
  }
  if (set.policies().empty()) return Error{"manylinux-policy.json: no policies"};
  return set;
}

Expected<PolicySet> load_embedded_policies() { return parse_policies(embedded_file("manylinux-policy.json")); }

}  // namespace depscan
