// Ground truth from the real loader, and depscan's answer for the same program, in one shape:
// which file every NEEDED name resolves to (canonical host path, or "not found").
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace depscan::test {

inline constexpr const char* kNotFound = "<not found>";

// Where a run happens: the working directory (relative paths), and the root the program sees
// as "/" (empty for the host). Paths reported inside a root are logical; these map them back.
struct RunPlace {
  std::string cwd;
  std::string root;
  std::map<std::string, std::string> env;  // LD_LIBRARY_PATH, LD_PRELOAD, ...
};

// The canonical host path of a path reported by the loader or depscan in `place`.
std::string canonical_in(const RunPlace& place, const std::string& reported);

// One `LD_TRACE_LOADED_OBJECTS=1` listing (`name => path (addr)`, `path (addr)`,
// `name => not found`, `statically linked` for an object without NEEDED), made canonical; also
// the fatal `error while loading shared libraries: NAME: cannot open shared object file`.
struct LoaderTrace {
  bool parsed = false;                          // at least one listing line was seen
  // The loader stopped at a fatal "cannot open shared object file" (it does so for some
  // libraries listed on their own): only the names it reported can be compared.
  bool partial = false;
  std::vector<std::string> loaded;              // canonical paths, in load order (no interpreter)
  std::string interpreter;                      // canonical path of the listed ld.so, if any
  std::map<std::string, std::string> by_name;   // name as listed -> canonical path or kNotFound
  std::set<std::string> not_found;
  // The file a NEEDED name resolves to: a listed name, else a loaded object's soname; nullopt
  // if the listing says nothing about the name.
  std::optional<std::string> resolve(const std::string& name) const;
};
LoaderTrace parse_trace(const std::string& listing, const RunPlace& place);

// LD_DEBUG=libs: for each library name, the files the loader tried in its first search, in
// order, each path once.
std::map<std::string, std::vector<std::string>> parse_tried(const std::string& debug_output);

// DT_SONAME of a file (readelf), cached; empty if none.
std::string soname_of(const std::string& path);

// One NEEDED/preload edge of depscan's JSON, made comparable.
struct DepscanEdge {
  std::string from_path;   // path of the requesting object as depscan reports it
  std::string name;
  std::string kind;
  std::string how;
  std::string resolved;    // canonical path or kNotFound
  std::vector<std::string> tried;
};

struct DepscanRun {
  int exit_code = -1;
  std::string error;       // why the output could not be used, empty if fine
  nlohmann::json doc;
  // root index -> its needed/preload edges, in report order
  std::map<size_t, std::vector<DepscanEdge>> edges_by_root;
  std::vector<std::string> root_paths;  // graph roots, as reported
};
DepscanRun parse_depscan(int exit_code, const std::string& json_text, const RunPlace& place);

// What disagrees between the loader and depscan for one root (empty = agreement): every edge's
// file against the loader's, the not-found sets, and every loaded file reached by depscan.
std::vector<std::string> compare_with_loader(const LoaderTrace& trace,
                                             const std::vector<DepscanEdge>& edges,
                                             const std::string& root_canonical);

std::string shell_env(const std::map<std::string, std::string>& env);
std::string read_text_file(const std::string& path);

}  // namespace depscan::test
