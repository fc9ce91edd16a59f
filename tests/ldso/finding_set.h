// The findings of one code in depscan's JSON report, as a set a test can compare.
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "support.h"

namespace depscan::test {

// "severity tail" of each finding with this code, where tail is the last `components` parts of
// the path of the object the finding is about. `args` are depscan's arguments after --format json;
// `prefix` goes before depscan's command: VAR=value settings for its process, or a program that
// runs it (qemu-x86_64 -cpu ...).
inline std::set<std::string> finding_set(const std::string& args, const std::string& code, int components,
                                         const std::string& prefix = "") {
  auto r = run_command(prefix + " " + depscan_bin() + " --format json " + args);
  nlohmann::json report = nlohmann::json::parse(r.output, nullptr, false);
  REQUIRE_MESSAGE(!report.is_discarded(), r.output);
  std::set<std::string> out;
  for (const nlohmann::json& f : report["findings"]) {
    if (f["code"] != code) continue;
    std::string path = report["objects"][f["object"].get<size_t>()]["path"];
    size_t at = path.size();
    for (int i = 0; i < components && at != std::string::npos && at > 0; ++i) at = path.rfind('/', at - 1);
    out.insert(f["severity"].get<std::string>() + " " + path.substr(at == std::string::npos ? 0 : at + 1));
  }
  return out;
}

}  // namespace depscan::test
