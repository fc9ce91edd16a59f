// Helpers for the resolver tests: fixture paths, an in-process resolver walk over one file, and
// the real loader's answer for fixtures we built (LD_TRACE_LOADED_OBJECTS=1).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/read/read.h"
#include "analyzer/resolve/resolve.h"
#include "support.h"

namespace depscan::test {

inline std::string resolve_fixture(const std::string& rel) {
  return std::filesystem::absolute(std::filesystem::path(fixtures_dir()) / "resolve" / rel).lexically_normal().string();
}

// An environment independent of the test runner's own LD_LIBRARY_PATH / LD_PRELOAD.
inline LoaderEnvironment clean_environment(const std::string& cwd = "/") {
  LoaderEnvironment env = default_environment();
  env.ld_library_path.clear();
  env.preload.clear();
  env.cwd = cwd;
  return env;
}

struct Walk {
  std::unique_ptr<FileSystem> fs;
  std::unique_ptr<BinaryCache> cache;
  std::unique_ptr<Resolver> resolver;
  size_t root = 0;

  Walk(const std::string& path, LoaderEnvironment env, const std::string& host_root = "",
       std::vector<std::string> windows_system_dlls = {}, std::vector<std::string> windows_driver_dlls = {})
      : fs(host_root.empty() ? make_real_fs() : make_rooted_fs(host_root)),
        cache(std::make_unique<BinaryCache>(*fs)),
        resolver(std::make_unique<Resolver>(
            *cache, ResolveOptions{std::move(env), [system = std::move(windows_system_dlls), driver = std::move(windows_driver_dlls)] {
                                     return WindowsDllLists{system, driver};
                                   }})) {
    root = resolver->add_root(path);
  }
  const Graph& graph() const { return resolver->graph(); }

  // First edge in load order for `name` within this root, or nullptr.
  const Edge* edge(const std::string& name) const {
    for (const Edge& e : graph().edges)
      if (e.root == root && e.name == name) return &e;
    return nullptr;
  }
  // Where `name` resolved: the object's path, or "not found".
  std::string where(const std::string& name) const {
    const Edge* e = edge(name);
    if (!e) return "(no edge)";
    return e->to ? graph().objects[*e->to].path : "not found";
  }
  std::vector<std::string> load_order() const {
    std::vector<std::string> out;
    for (size_t object : graph().load_order[root]) out.push_back(graph().objects[object].path);
    return out;
  }
};

struct TraceLine {
  std::string name;  // NEEDED name, or the path for lines without "=>"
  std::string path;  // "not found" when missing
};

// Runs a fixture we built under the loader's trace mode and parses its lines.
inline std::vector<TraceLine> loader_trace(const std::string& exe, const std::string& env = "",
                                           const std::string& cwd = "") {
  std::string cmd = (cwd.empty() ? "" : "cd " + shell_quote(cwd) + " && ") + "env -u LD_LIBRARY_PATH -u LD_PRELOAD " +
                    env + " LD_TRACE_LOADED_OBJECTS=1 " + shell_quote(exe) + " 2>&1";
  CommandResult r = run_command(cmd);
  std::vector<TraceLine> out;
  size_t i = 0;
  while (i < r.output.size()) {
    size_t j = r.output.find('\n', i);
    if (j == std::string::npos) j = r.output.size();
    std::string line = r.output.substr(i, j - i);
    i = j + 1;
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    line = line.substr(start);
    size_t arrow = line.find(" => ");
    TraceLine t;
    if (arrow != std::string::npos) {
      t.name = line.substr(0, arrow);
      std::string rest = line.substr(arrow + 4);
      t.path = rest.rfind("not found", 0) == 0 ? "not found" : rest.substr(0, rest.find(" ("));
    } else {
      t.name = t.path = line.substr(0, line.find(" ("));
    }
    if (t.name == "linux-vdso.so.1" || t.name == "linux-gate.so.1") continue;  // the vDSO (x86-64, i386)
    out.push_back(t);
  }
  return out;
}

}  // namespace depscan::test
