#include "ldso/loader_truth.h"

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <mutex>
#include <sstream>

#include "support.h"

namespace depscan::test {
namespace fs = std::filesystem;

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "PATH (0x00007f...)" -> PATH; empty if there is no address.
std::string strip_address(const std::string& s) {
  size_t open = s.rfind(" (0x");
  return open == std::string::npos ? "" : s.substr(0, open);
}

constexpr const char* kInterpreter = "/lib64/ld-linux-x86-64.so.2";

}  // namespace

std::string canonical_in(const RunPlace& place, const std::string& reported) {
  fs::path p = reported;
  if (p.is_relative()) p = (place.root.empty() ? fs::path(place.cwd) : fs::path("/")) / p;
  if (!place.root.empty()) p = fs::path(place.root) / p.relative_path();
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  return ec ? p.lexically_normal().string() : c.string();
}

std::optional<std::string> LoaderTrace::resolve(const std::string& name) const {
  if (auto it = by_name.find(name); it != by_name.end()) return it->second;
  for (const std::string& path : loaded)
    if (soname_of(path) == name) return path;
  if (!interpreter.empty() && soname_of(interpreter) == name) return interpreter;
  return std::nullopt;
}

LoaderTrace parse_trace(const std::string& listing, const RunPlace& place) {
  LoaderTrace trace;
  std::istringstream in(listing);
  std::string line;
  const std::string fatal = "error while loading shared libraries: ";
  const std::string cannot_open = ": cannot open shared object file";
  while (std::getline(in, line)) {
    if (size_t at = line.find(fatal); at != std::string::npos && line.find(cannot_open) != std::string::npos) {
      std::string name = line.substr(at + fatal.size());
      name = name.substr(0, name.find(cannot_open));
      trace.parsed = trace.partial = true;
      trace.not_found.insert(name);
      trace.by_name.emplace(name, kNotFound);
      continue;
    }
    if (!starts_with(line, "\t")) continue;
    line = trim(line);
    if (line == "statically linked") {
      trace.parsed = true;
      continue;
    }
    size_t arrow = line.find(" => ");
    if (arrow != std::string::npos) {
      std::string name = line.substr(0, arrow), target = line.substr(arrow + 4);
      trace.parsed = true;
      if (target == "not found") {
        trace.not_found.insert(name);
        trace.by_name.emplace(name, kNotFound);
        continue;
      }
      std::string path = strip_address(target);
      if (path.empty()) continue;
      std::string canonical = canonical_in(place, path);
      trace.loaded.push_back(canonical);
      trace.by_name.emplace(name, canonical);
      continue;
    }
    std::string path = strip_address(line);
    if (starts_with(path, "linux-vdso") || starts_with(path, "linux-gate")) continue;
    // Any other name without '/' was opened by that name in the working directory (an empty
    // RUNPATH entry), and the loader prints no " => " for a path that equals the name.
    trace.parsed = true;
    std::string canonical = canonical_in(place, path);
    trace.by_name.emplace(path, canonical);
    if (path == kInterpreter) trace.interpreter = canonical;
    else trace.loaded.push_back(canonical);
  }
  return trace;
}

std::map<std::string, std::vector<std::string>> parse_tried(const std::string& debug_output) {
  std::map<std::string, std::vector<std::string>> tried;
  std::set<std::string> searched;
  std::vector<std::string>* current = nullptr;
  std::istringstream in(debug_output);
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.find(":\t");
    if (tab == std::string::npos) continue;
    std::string text = line.substr(tab + 2);
    if (starts_with(text, "find library=")) {
      std::string name = text.substr(13, text.find(" [") - 13);
      current = searched.insert(name).second ? &tried[name] : nullptr;
    } else if (trim(text).empty()) {
      current = nullptr;
    } else if (current && starts_with(text, "  trying file=")) {
      std::string path = text.substr(14);
      if (std::find(current->begin(), current->end(), path) == current->end())
        current->push_back(path);
    }
  }
  return tried;
}

std::string soname_of(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(path); it != cache.end()) return it->second;
  }
  CommandResult r = run_command("readelf -d --wide " + shell_quote(path) + " 2>/dev/null");
  std::string soname;
  const std::string marker = "Library soname: [";
  if (size_t at = r.output.find(marker); at != std::string::npos) {
    size_t begin = at + marker.size();
    soname = r.output.substr(begin, r.output.find(']', begin) - begin);
  }
  std::lock_guard<std::mutex> lock(mutex);
  cache[path] = soname;
  return soname;
}

DepscanRun parse_depscan(int exit_code, const std::string& json_text, const RunPlace& place) {
  DepscanRun run;
  run.exit_code = exit_code;
  if (exit_code != 0 && exit_code != 1) {
    run.error = "depscan exited with " + std::to_string(exit_code);
    return run;
  }
  run.doc = nlohmann::json::parse(json_text, nullptr, false);
  if (run.doc.is_discarded() || !run.doc.is_object()) {
    run.error = "depscan printed no JSON document";
    return run;
  }
  const auto& objects = run.doc["objects"];
  for (const auto& root : run.doc["roots"]) run.root_paths.push_back(objects.at(root.get<size_t>())["path"]);
  // Only what the loader itself loads: objects reached from the root through needed/preload
  // edges (dlopen edges, and the NEEDED of what they open, are not in a load-time listing).
  std::map<size_t, std::set<size_t>> reached;
  for (size_t r = 0; r < run.doc["roots"].size(); ++r) reached[r].insert(run.doc["roots"][r].get<size_t>());
  std::vector<const nlohmann::json*> load_edges;
  for (const auto& e : run.doc["edges"]) {
    std::string kind = e.value("kind", "");
    if (kind == "needed" || kind == "preload") load_edges.push_back(&e);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const nlohmann::json* e : load_edges) {
      auto& set = reached[e->value("root", size_t{0})];
      if (!(*e)["to"].is_null() && set.count((*e)["from"].get<size_t>()))
        grew |= set.insert((*e)["to"].get<size_t>()).second;
    }
  }
  for (const nlohmann::json* ep : load_edges) {
    const auto& e = *ep;
    size_t root = e.value("root", size_t{0});
    if (!reached[root].count(e["from"].get<size_t>())) continue;
    DepscanEdge edge;
    edge.from_path = objects.at(e["from"].get<size_t>())["path"];
    edge.name = e["name"];
    edge.kind = e["kind"];
    edge.how = e.value("how", "");
    if (e["to"].is_null()) {
      edge.resolved = kNotFound;
    } else {
      const auto& target = objects.at(e["to"].get<size_t>());
      std::string real = target.value("realpath", "");
      edge.resolved = canonical_in(place, real.empty() ? target["path"].get<std::string>() : real);
    }
    for (const auto& t : e["tried"]) edge.tried.push_back(t);
    run.edges_by_root[root].push_back(std::move(edge));
  }
  return run;
}

std::vector<std::string> compare_with_loader(const LoaderTrace& trace,
                                             const std::vector<DepscanEdge>& edges,
                                             const std::string& root_canonical) {
  std::vector<std::string> diffs;
  std::set<std::string> depscan_files, depscan_missing;
  for (const DepscanEdge& e : edges) {
    std::string where = e.name + " (" + e.kind + " of " + e.from_path + ")";
    if (e.resolved == kNotFound) depscan_missing.insert(e.name);
    else depscan_files.insert(e.resolved);
    if (trace.partial && !trace.by_name.count(e.name)) continue;
    auto truth = trace.resolve(e.name);
    if (!truth) {
      diffs.push_back(where + ": depscan -> " + e.resolved + " [" + e.how +
                      "], the loader did not list this name");
    } else if (*truth != e.resolved) {
      std::string tried;
      for (const std::string& t : e.tried) tried += (tried.empty() ? "" : ", ") + t;
      diffs.push_back(where + ": depscan -> " + e.resolved + " [" + e.how + "], loader -> " +
                      *truth + (tried.empty() ? "" : "; depscan tried: " + tried));
    }
  }
  for (const std::string& name : trace.not_found)
    if (!depscan_missing.count(name))
      diffs.push_back(name + ": the loader did not find it, depscan has no unresolved edge of that name");
  for (const std::string& path : trace.loaded)
    if (path != root_canonical && !depscan_files.count(path))
      diffs.push_back(path + ": loaded by the loader, reached by no depscan edge");
  return diffs;
}

std::string shell_env(const std::map<std::string, std::string>& env) {
  std::string out;
  for (const auto& [name, value] : env) out += " " + name + "=" + shell_quote(value);
  return out;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace depscan::test
