// One fixture per loader rule (fixtures/ldso/build.sh): the real loader runs the fixture's
// program with LD_TRACE_LOADED_OBJECTS=1 (and LD_DEBUG=libs for the tried paths), depscan analyses
// it with the same environment given explicitly, and both must name the same file for every
// NEEDED, the same missing libraries, the expected rule on each edge, and the same tried paths.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ldso/loader_truth.h"
#include "support.h"

namespace depscan::test {
namespace {
namespace fs = std::filesystem;

struct HowExpectation {
  std::string from;  // file name of the requesting object
  std::string name;
  std::string how;
};

struct FixtureCase {
  std::string dir;
  std::string exe;
  std::string root;
  std::map<std::string, std::string> env;
  std::vector<HowExpectation> hows;
  std::vector<std::string> missing;
  std::vector<std::string> tried;
};

std::string substitute_dir(std::string value, const std::string& dir) {
  for (size_t at = value.find('@'); at != std::string::npos; at = value.find('@', at + dir.size()))
    value.replace(at, 1, dir);
  return value;
}

FixtureCase load_case(const std::string& rule) {
  FixtureCase c;
  c.dir = fs::absolute(fs::path(fixtures_dir()) / "ldso" / rule).lexically_normal().string();
  std::ifstream in(c.dir + "/case");
  REQUIRE_MESSAGE(in.good(), "fixture not built: " << c.dir);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    std::string rest;
    std::getline(words >> std::ws, rest);
    rest = substitute_dir(rest, c.dir);
    if (key == "exe") c.exe = rest;
    else if (key == "root") c.root = rest;
    else if (key == "env") c.env[rest.substr(0, rest.find('='))] = rest.substr(rest.find('=') + 1);
    else if (key == "missing") c.missing.push_back(rest);
    else if (key == "tried") c.tried.push_back(rest);
    else if (key == "how") {
      std::istringstream parts(rest);
      HowExpectation h;
      parts >> h.from >> h.name >> h.how;
      c.hows.push_back(h);
    }
  }
  REQUIRE_MESSAGE(!c.exe.empty(), "fixture case names no executable: " << c.dir);
  return c;
}

RunPlace place_of(const FixtureCase& c) { return RunPlace{c.dir, c.root, c.env}; }

struct LoaderOutput {
  bool available = true;  // false: the loader cannot be run here (chroot not permitted)
  std::string listing;
  std::string debug;
};

LoaderOutput run_loader(const FixtureCase& c) {
  TempDir tmp("ldso-loader");
  std::string debug_file = tmp.str() + "/debug";
  std::string vars = " LD_TRACE_LOADED_OBJECTS=1 LD_DEBUG=libs" + shell_env(c.env);
  std::string command;
  if (c.root.empty()) {
    command = "cd " + shell_quote(c.dir) + " && timeout 20 env -i" + vars + " ./" + shell_quote(c.exe);
  } else {
    std::string launcher = fixtures_dir() + "/ldso/.tools/chroot_exec";
    command = "timeout 20 " + shell_quote(launcher) + " " + shell_quote(c.root) + " " + shell_quote(c.exe) + vars;
  }
  CommandResult r = run_command(command + " 2>" + shell_quote(debug_file));
  LoaderOutput out;
  out.listing = r.output;
  out.debug = read_text_file(debug_file);
  if (!c.root.empty() && r.exit_code == 125) out.available = false;
  return out;
}

DepscanRun run_depscan(const FixtureCase& c) {
  std::string bin = fs::absolute(depscan_bin()).string();
  std::string command = "cd " + shell_quote(c.dir) + " && timeout 60 env -i PATH=/usr/bin:/bin " + shell_quote(bin) +
                        " --format json";
  if (!c.root.empty()) command += " --root " + shell_quote(c.root);
  if (auto it = c.env.find("LD_LIBRARY_PATH"); it != c.env.end())
    command += " --ld-library-path " + shell_quote(it->second);
  if (auto it = c.env.find("LD_PRELOAD"); it != c.env.end())
    command += " --preload " + shell_quote(it->second);
  command += " " + shell_quote(c.exe);
  CommandResult r = run_command(command + " 2>/dev/null");
  return parse_depscan(r.exit_code, r.output, place_of(c));
}

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

void check_hows(const FixtureCase& c, const std::vector<DepscanEdge>& edges) {
  for (const HowExpectation& h : c.hows) {
    int seen = 0;
    for (const DepscanEdge& e : edges) {
      if (e.name != h.name || file_name(e.from_path) != h.from) continue;
      ++seen;
      CHECK_MESSAGE(e.how == h.how, h.name << " requested by " << h.from << ": depscan says how="
                                           << e.how << ", the rule gives " << h.how);
    }
    CHECK_MESSAGE(seen > 0, "depscan has no edge " << h.from << " -> " << h.name);
  }
}

void check_missing(const FixtureCase& c, const LoaderTrace& trace, const std::vector<DepscanEdge>& edges,
                   bool loader_available) {
  std::set<std::string> depscan_missing;
  for (const DepscanEdge& e : edges)
    if (e.resolved == kNotFound) depscan_missing.insert(e.name);
  std::set<std::string> expected(c.missing.begin(), c.missing.end());
  CHECK_MESSAGE(depscan_missing == expected, "depscan's unresolved names differ from the fixture's");
  if (loader_available)
    CHECK_MESSAGE(trace.not_found == expected, "the loader's unresolved names differ from the fixture's");
}

// The loader also tries NAME in every glibc-hwcaps and legacy hwcap subdirectory of each search
// directory, existing or not; depscan lists a subdirectory's candidate only when that
// subdirectory exists. Candidates in subdirectories that do not exist are dropped from the
// loader's list before comparing (a file cannot be found in a directory that is not there).
// The subdirectory names depend on the CPU (x86_64, avx512_1, haswell, tls...), so any missing
// directory below one where the loader also tried NAME counts.
bool in_missing_subdirectory(const std::string& path, const std::string& name,
                             const std::vector<std::string>& all) {
  fs::path dir = fs::path(path).parent_path();
  if (fs::is_directory(dir)) return false;
  for (fs::path base = dir.parent_path(); base.has_relative_path(); base = base.parent_path())
    if (std::find(all.begin(), all.end(), (base / name).string()) != all.end()) return true;
  return false;
}

// depscan's tried paths for NAME (each once, only candidate files of that name) against the
// paths the loader tried in its first search for it (LD_DEBUG=libs).
void check_tried(const FixtureCase& c, const LoaderOutput& loader, const std::vector<DepscanEdge>& edges) {
  auto loader_tried = parse_tried(loader.debug);
  for (const std::string& name : c.tried) {
    REQUIRE_MESSAGE(loader_tried.count(name), "LD_DEBUG shows no search for " << name);
    const DepscanEdge* edge = nullptr;
    for (const DepscanEdge& e : edges)
      if (e.name == name && e.resolved == kNotFound) edge = edge ? edge : &e;
    REQUIRE_MESSAGE(edge != nullptr, "depscan has no unresolved edge named " << name);
    std::vector<std::string> ours;
    for (const std::string& t : edge->tried)
      if (file_name(t) == name && std::find(ours.begin(), ours.end(), t) == ours.end()) ours.push_back(t);
    const std::vector<std::string>& all = loader_tried[name];
    std::vector<std::string> theirs;
    for (const std::string& t : all)
      if (!in_missing_subdirectory(t, name, all)) theirs.push_back(t);
    CHECK_MESSAGE(!theirs.empty(), "the loader tried no path for " << name);
    std::string diff;
    for (size_t i = 0; i < std::max(ours.size(), theirs.size()); ++i) {
      std::string a = i < ours.size() ? ours[i] : "-", b = i < theirs.size() ? theirs[i] : "-";
      if (a != b) diff += "\n  #" + std::to_string(i) + " depscan " + a + " | loader " + b;
    }
    CHECK_MESSAGE(diff.empty(), "tried paths for " << name << " differ (" << ours.size() << " vs "
                                                  << theirs.size() << "):" << diff);
  }
}

void check_rule(const std::string& rule) {
  INFO("rule fixture: " << rule);
  FixtureCase c = load_case(rule);
  LoaderOutput loader = run_loader(c);
  LoaderTrace trace = parse_trace(loader.listing, place_of(c));
  if (loader.available) {
    REQUIRE_MESSAGE(trace.parsed, "the loader printed no listing:\n" << loader.listing << loader.debug);
  } else {
    MESSAGE("chroot not permitted here: " << rule << " is checked against its rules, not the loader");
  }
  DepscanRun depscan = run_depscan(c);
  REQUIRE_MESSAGE(depscan.error.empty(), depscan.error);
  REQUIRE(depscan.root_paths.size() == 1);
  const std::vector<DepscanEdge>& edges = depscan.edges_by_root[0];
  if (loader.available) {
    std::string exe_canonical = canonical_in(place_of(c), c.exe);
    for (const std::string& diff : compare_with_loader(trace, edges, exe_canonical))
      FAIL_CHECK("disagrees with the loader: " << diff);
  }
  check_hows(c, edges);
  check_missing(c, trace, edges, loader.available);
  if (!c.missing.empty()) CHECK_MESSAGE(depscan.exit_code == 1, "a missing library must fail the scan");
  if (loader.available) check_tried(c, loader, edges);
}

}  // namespace

TEST_CASE("ldso rule: breadth-first load order") { check_rule("bfs_order"); }
TEST_CASE("ldso rule: LD_PRELOAD by path and by name") { check_rule("preload"); }
TEST_CASE("ldso rule: /etc/ld.so.preload of a --root") { check_rule("etc_preload"); }
TEST_CASE("ldso rule: ld.so.cache of a --root (ldconfig -r, include glob)") { check_rule("root_cache"); }
TEST_CASE("ldso rule: a program's own loader, with its own search path and no cache") { check_rule("own_loader"); }
TEST_CASE("ldso rule: a program's own loader in a --root, with its own cache") { check_rule("own_loader_root"); }
TEST_CASE("the program-loader finding and depscan why name the loader, its search path and cache") {
  std::string root = fixtures_dir() + "/ldso/own_loader_root/root";
  CommandResult r = run_command(depscan_bin() + " why --root " + shell_quote(root) + " /app/app libcached.so.1");
  CHECK(r.output.starts_with("the program's own loader /opt/glibc-2.36-build/lib/ld-linux-x86-64.so.2: search path "
                             "/lib/x86_64-linux-gnu:/opt/glibc-2.36-build/lib:/lib:/usr/lib; cache /opt/ld.so.cache\n"
                             "loader /opt/glibc-2.36-build/lib/ld-linux-x86-64.so.2: "));
  CHECK(r.output.find("=> found /opt/cached/libcached.so.1 ") != std::string::npos);
  CommandResult here = run_command(depscan_bin() + " --no-color " + shell_quote(fixtures_dir() + "/ldso/own_loader/app"));
  CHECK(here.output.find("info[program-loader]: ") != std::string::npos);
  CHECK(here.output.find("and cache (/nx/ld.so.cache, absent: not used)") != std::string::npos);
}

TEST_CASE("a program's own loader whose search path cannot be read: a warning, and the system's search") {
  std::string dir = fixtures_dir() + "/ldso/own_loader";
  CommandResult r = run_command(depscan_bin() + " --format json " + shell_quote(dir + "/app_unknown_loader"));
  nlohmann::json doc = nlohmann::json::parse(r.output, nullptr, false);
  REQUIRE(!doc.is_discarded());
  int warnings = 0;
  for (const nlohmann::json& f : doc["findings"])
    if (f["code"] == "program-loader") {
      CHECK(f["severity"] == "warning");
      CHECK(f["message"].get<std::string>().find("cannot read that loader's built-in search path") != std::string::npos);
      ++warnings;
    }
  CHECK(warnings == 1);
  int own_edges = 0;
  for (const nlohmann::json& e : doc["edges"])
    if (e["name"] == "libown.so.1") {
      CHECK(e["to"].is_null());  // only the loader built with $SYSDIR searches it
      ++own_edges;
    }
  CHECK(own_edges == 1);
}
TEST_CASE("ldso rule: NEEDED with a slash") { check_rule("needed_slash"); }
TEST_CASE("ldso rule: an already-loaded soname is reused") { check_rule("soname_reuse"); }
TEST_CASE("ldso rule: RPATH chain inherited through a library") { check_rule("rpath_chain"); }
TEST_CASE("ldso rule: RPATH blocked by the library's RUNPATH") { check_rule("rpath_blocked"); }
TEST_CASE("ldso rule: executable RPATH ignored beside RUNPATH") { check_rule("exe_rpath_and_runpath"); }
TEST_CASE("ldso rule: library RPATH dropped beside RUNPATH") { check_rule("lib_rpath_and_runpath"); }
TEST_CASE("ldso rule: RPATH, LD_LIBRARY_PATH, RUNPATH order") { check_rule("search_order"); }
TEST_CASE("ldso rule: RUNPATH is not inherited") { check_rule("runpath_not_inherited"); }
TEST_CASE("ldso rule: an empty RPATH or RUNPATH is ignored, an empty entry is the working directory") {
  for (const char* rule : {"empty_rpath", "empty_runpath", "empty_runpath_entry"}) {
    CAPTURE(rule);
    check_rule(rule);
  }
}
TEST_CASE("ldso rule: $ORIGIN and ${ORIGIN} in RPATH and RUNPATH") { check_rule("origin_tokens"); }
TEST_CASE("ldso rule: $ORIGIN of a symlinked executable") { check_rule("origin_symlink_exe"); }
TEST_CASE("ldso rule: $ORIGIN through a symlinked directory") { check_rule("origin_symlink_dir"); }
TEST_CASE("ldso rule: $ORIGIN of a symlinked library file") { check_rule("origin_symlink_lib"); }
TEST_CASE("ldso rule: $LIB and $PLATFORM") { check_rule("lib_platform"); }
TEST_CASE("ldso rule: DF_1_NODEFLIB") { check_rule("nodeflib"); }
TEST_CASE("ldso rule: wrong ELF class skipped") { check_rule("wrong_class"); }
TEST_CASE("ldso rule: wrong machine skipped") { check_rule("wrong_machine"); }
TEST_CASE("ldso rule: glibc-hwcaps subdirectory preferred") { check_rule("hwcaps"); }
TEST_CASE("ldso rule: legacy hwcap subdirectory") { check_rule("legacy_hwcaps"); }
TEST_CASE("ldso rule: missing library with the tried paths") { check_rule("missing"); }

// The harness itself: depscan given another environment than the loader's must disagree.
TEST_CASE("ldso harness: a wrong answer is caught") {
  FixtureCase c = load_case("search_order");
  LoaderOutput loader = run_loader(c);
  LoaderTrace trace = parse_trace(loader.listing, place_of(c));
  REQUIRE(trace.parsed);
  FixtureCase without_path = c;
  without_path.env.erase("LD_LIBRARY_PATH");
  DepscanRun depscan = run_depscan(without_path);
  REQUIRE(depscan.error.empty());
  auto diffs = compare_with_loader(trace, depscan.edges_by_root[0], canonical_in(place_of(c), c.exe));
  CHECK_MESSAGE(diffs.size() >= 1, "libtwo.so resolves to dU without LD_LIBRARY_PATH, dL with it");
}

TEST_CASE("ldso fixtures: every built rule has a test case") {
  std::set<std::string> tested = {
      "bfs_order", "preload", "etc_preload", "root_cache", "needed_slash", "soname_reuse",
      "rpath_chain", "rpath_blocked", "exe_rpath_and_runpath", "lib_rpath_and_runpath",
      "search_order", "runpath_not_inherited", "empty_rpath", "empty_runpath", "empty_runpath_entry", "origin_tokens", "origin_symlink_exe",
      "origin_symlink_dir", "origin_symlink_lib", "lib_platform", "nodeflib", "wrong_class",
      "wrong_machine", "hwcaps", "legacy_hwcaps", "missing", "own_loader", "own_loader_root"};
  std::set<std::string> built;
  for (const auto& entry : fs::directory_iterator(fs::path(fixtures_dir()) / "ldso"))
    if (entry.is_directory() && entry.path().filename().string()[0] != '.')
      built.insert(entry.path().filename().string());
  CHECK(built == tested);
}

}  // namespace depscan::test
