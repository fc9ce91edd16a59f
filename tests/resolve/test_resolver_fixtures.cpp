// The resolver against the real loader on fixtures built from source (fixtures/resolve): for
// every library the loader reports, depscan must name the same file (or also not find it), and
// load objects in the same breadth-first order.
#include <doctest/doctest.h>

#include <fstream>

#include <algorithm>

#include "resolve_support.h"

namespace depscan::test {
namespace {

const std::string kInterp = "/lib64/ld-linux-x86-64.so.2";

std::string normal(const std::string& cwd, const std::string& path) {
  return normalize_path(path[0] == '/' ? path : join_path(cwd.empty() ? "/" : cwd, path));
}

void expect_matches_loader(const std::string& exe, LoaderEnvironment env, const std::string& env_text = "",
                           const std::string& cwd = "") {
  std::vector<TraceLine> trace = loader_trace(exe, env_text, cwd);
  REQUIRE_MESSAGE(!trace.empty(), "the loader printed nothing for " << exe);
  if (!cwd.empty()) env.cwd = cwd;
  Walk walk(exe, env);
  std::vector<std::string> loader_order, our_order;
  for (const TraceLine& t : trace) {
    INFO(exe << ": " << t.name << " => " << t.path);
    if (t.name == t.path) {  // the interpreter, a preload or a NEEDED with a '/'
      if (t.path == kInterp) continue;
      loader_order.push_back(normal(cwd, t.path));
      continue;
    }
    CHECK(walk.where(t.name) == t.path);
    if (t.path != "not found") loader_order.push_back(normal(cwd, t.path));
  }
  const std::vector<std::string> order = walk.load_order();
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i] != kInterp) our_order.push_back(normal(cwd, order[i]));
  auto joined = [](const std::vector<std::string>& paths) {
    std::string out;
    for (const std::string& p : paths) out += "\n  " + p;
    return out;
  };
  CHECK_MESSAGE(our_order == loader_order, "depscan's load order:" << joined(our_order) << "\nthe loader's:" << joined(loader_order));
}

}  // namespace

TEST_CASE("DT_RPATH is inherited down the loader chain, DT_RUNPATH is not") {
  expect_matches_loader(resolve_fixture("chain/exe_rpath"), clean_environment());
  expect_matches_loader(resolve_fixture("chain/exe_runpath"), clean_environment());
  Walk rpath(resolve_fixture("chain/exe_rpath"), clean_environment());
  const Edge* b = rpath.edge("libb.so");
  REQUIRE(b != nullptr);
  CHECK(b->how == How::Rpath);
  CHECK(b->how_detail == "rpath of exe_rpath");
  Walk runpath(resolve_fixture("chain/exe_runpath"), clean_environment());
  CHECK(runpath.where("libb.so") == "not found");
  CHECK(runpath.edge("liba.so")->how == How::Runpath);
}

TEST_CASE("a library with a RUNPATH uses no RPATH of its loaders") {
  expect_matches_loader(resolve_fixture("rb/exe"), clean_environment());
}

TEST_CASE("a candidate of the other ELF class is skipped and the search goes on") {
  expect_matches_loader(resolve_fixture("wc/exe"), clean_environment());
  expect_matches_loader(resolve_fixture("wc/exe_only32"), clean_environment());
  Walk found(resolve_fixture("wc/exe"), clean_environment());
  const Edge* e = found.edge("libw.so");
  REQUIRE(e != nullptr);
  bool skipped = std::any_of(e->tried.begin(), e->tried.end(), [](const Attempt& a) {
    return a.path.find("/w32/libw.so") != std::string::npos && a.outcome == "skipped: wrong ELF class: ELFCLASS32";
  });
  CHECK(skipped);
  Walk missing(resolve_fixture("wc/exe_only32"), clean_environment());
  CHECK(missing.edge("libw.so")->how_detail == "wrong ELF class: ELFCLASS32");
}

TEST_CASE("DF_1_NODEFLIB: no ld.so.cache entry in a system directory, no default path") {
  expect_matches_loader(resolve_fixture("nd/exe"), clean_environment());
  expect_matches_loader(resolve_fixture("nd/exe_runpath"), clean_environment());
  Walk nd(resolve_fixture("nd/exe"), clean_environment());
  const Edge* e = nd.edge("libc.so.6");
  REQUIRE(e != nullptr);
  CHECK_FALSE(e->to.has_value());
  bool cache_skipped = std::any_of(e->tried.begin(), e->tried.end(), [](const Attempt& a) {
    return a.outcome.find("DF_1_NODEFLIB") != std::string::npos;
  });
  CHECK(cache_skipped);
}

TEST_CASE("$ORIGIN: the executable's resolved directory, a library's opened-by directory") {
  expect_matches_loader(resolve_fixture("og/bin/exe"), clean_environment());
  Walk walk(resolve_fixture("og/bin/exe"), clean_environment());
  CHECK(walk.where("liby.so") == resolve_fixture("og/a/b") + "/../../lib/dep/liby.so");
}

TEST_CASE("an already loaded soname is reused") {
  expect_matches_loader(resolve_fixture("dup/exe"), clean_environment());
  expect_matches_loader(resolve_fixture("dup/exe_user"), clean_environment());
  Walk walk(resolve_fixture("dup/exe"), clean_environment());
  int reused = 0;
  for (const Edge& e : walk.graph().edges)
    if (e.name == "libdup.so.1" && e.how == How::AlreadyLoaded) ++reused;
  CHECK(reused == 1);
}

TEST_CASE("roots whose searches for a name are the same share the tried paths") {
  auto fs = make_real_fs();
  BinaryCache cache(*fs);
  Resolver resolver(cache, ResolveOptions{clean_environment(), {}});
  // both have the RUNPATH $ORIGIN, one directory: the same search lists for libc.so.6
  size_t first = resolver.add_root(resolve_fixture("bfs/liba1.so"));
  size_t second = resolver.add_root(resolve_fixture("bfs/liba2.so"));
  std::map<std::pair<size_t, std::string>, const Edge*> by_root_and_name;
  for (const Edge& e : resolver.graph().edges) by_root_and_name.emplace(std::make_pair(e.root, e.name), &e);
  const Edge* libc_first = by_root_and_name[{first, "libc.so.6"}];
  const Edge* libc_second = by_root_and_name[{second, "libc.so.6"}];
  REQUIRE(libc_first != nullptr);
  REQUIRE(libc_second != nullptr);
  REQUIRE(!libc_first->tried.empty());
  CHECK(libc_first->tried == libc_second->tried);
  CHECK(&libc_first->tried.front() == &libc_second->tried.front());
}

TEST_CASE("glibc-hwcaps and legacy hwcap subdirectories come before the directory") {
  expect_matches_loader(resolve_fixture("hw/exe"), clean_environment());
}

TEST_CASE("LD_LIBRARY_PATH comes after RPATH and before RUNPATH") {
  LoaderEnvironment env = clean_environment();
  env.ld_library_path = {resolve_fixture("llp/env")};
  std::string env_text = "LD_LIBRARY_PATH=" + shell_quote(resolve_fixture("llp/env"));
  expect_matches_loader(resolve_fixture("llp/exe_rpath"), env, env_text);
  expect_matches_loader(resolve_fixture("llp/exe_runpath"), env, env_text);
  Walk walk(resolve_fixture("llp/exe_runpath"), env);
  CHECK(walk.edge("libl.so")->how == How::LdLibraryPath);
}

TEST_CASE("a search list of thousands of directories keeps the first attempts and the last, and too long a path is not opened") {
  LoaderEnvironment env = clean_environment();
  for (int i = 0; i < 1000; ++i) env.ld_library_path += "/nonexistent-depscan/dir" + std::to_string(i) + ":";
  env.ld_library_path += "/" + std::string(5000, 'x') + ":";  // open() would say ENAMETOOLONG
  env.ld_library_path += resolve_fixture("llp/env");
  Walk walk(resolve_fixture("llp/exe_runpath"), env);
  const Edge* found = walk.edge("libl.so");
  REQUIRE(found);
  CHECK(found->how == How::LdLibraryPath);  // still found where the loader finds it
  REQUIRE(found->tried.size() == 256);
  CHECK(found->tried[0].path == "/nonexistent-depscan/dir0/libl.so");
  CHECK(found->tried[254].path == "[747 more candidates, not listed]");
  CHECK(found->tried[254].outcome == "not found");
  CHECK(found->tried[255].path == resolve_fixture("llp/env") + "/libl.so");
  CHECK(found->tried[255].outcome == "taken");

  // a 32-bit copy 500 directories in stays listed: only candidates that were not there are left out
  LoaderEnvironment wrong = clean_environment();
  for (int i = 0; i < 500; ++i) wrong.ld_library_path += "/nonexistent-depscan/dir" + std::to_string(i) + ":";
  wrong.ld_library_path += resolve_fixture("wc/w32");
  Walk only32(resolve_fixture("wc/exe_only32"), wrong);
  REQUIRE(only32.edge("libw.so"));
  bool listed = false;
  for (const Attempt& a : only32.edge("libw.so")->tried)
    listed |= a.path == resolve_fixture("wc/w32") + "/libw.so" && a.outcome.starts_with("skipped: wrong ELF class");
  CHECK(listed);

  // an existing directory whose file path is PATH_MAX bytes or more: glibc's open fails with
  // ENAMETOOLONG and the rest of the list is not searched (depscan used to skip a listed directory)
  TempDir deep_tmp("long-dir");
  std::string long_dir = deep_tmp.str();
  while (long_dir.size() < 4090 - 251) long_dir += "/" + std::string(250, 'd');
  long_dir += "/" + std::string(4090 - long_dir.size() - 1, 'e');
  std::filesystem::create_directories(long_dir);
  for (int i = 0; i < 20; ++i) std::ofstream(long_dir.substr(0, long_dir.rfind('/')) + "/other" + std::to_string(i));
  LoaderEnvironment stops = clean_environment();
  stops.ld_library_path = long_dir + ":" + resolve_fixture("llp/env");
  Walk stopped(resolve_fixture("llp/exe_runpath"), stops);
  REQUIRE(stopped.edge("libl.so"));
  CHECK(stopped.edge("libl.so")->tried[0].outcome == "File name too long (rest of this search list skipped)");
  CHECK(stopped.edge("libl.so")->how != How::LdLibraryPath);  // llp/env, after it in the list, is not searched

  env.ld_library_path = "/" + std::string(5000, 'x') + ":" + resolve_fixture("llp/env");
  Walk too_long(resolve_fixture("llp/exe_runpath"), env);
  REQUIRE(too_long.edge("libl.so"));
  const AttemptList& tried = too_long.edge("libl.so")->tried;
  REQUIRE(tried.size() == 2);
  CHECK(tried[0].outcome == "not found (no such directory: its name is 5001 bytes, File name too long)");
  CHECK(tried[0].path.size() < 200);  // shortened
  CHECK(tried[1].outcome == "taken");
}

TEST_CASE("LD_LIBRARY_PATH: a relative entry that is a file ends the list; an error in a hwcaps subdirectory does not") {
  TempDir tmp("llp-odd");
  std::ofstream(tmp.str() + "/afile") << "not a directory";
  std::string dir = tmp.str() + "/X";
  std::filesystem::create_directories(dir + "/glibc-hwcaps/x86-64-v3");
  std::filesystem::copy_file(resolve_fixture("llp/env/libl.so"), dir + "/libl.so");
  std::filesystem::create_symlink("libl.so", dir + "/glibc-hwcaps/x86-64-v3/libl.so");  // ELOOP
  LoaderEnvironment env = clean_environment();
  // glibc never notes a relative directory as missing: ENOTDIR ends the list, RUNPATH serves
  env.ld_library_path = "afile:" + resolve_fixture("llp/env");
  expect_matches_loader(resolve_fixture("llp/exe_runpath"), env,
                        "LD_LIBRARY_PATH=" + shell_quote(env.ld_library_path), tmp.str());
  std::filesystem::create_symlink("loop", tmp.str() + "/loop");
  for (const char* entry : {"afile/sub", "loop"}) {  // ENOTDIR through a file, ELOOP: the list ends too
    env.ld_library_path = std::string(entry) + ":" + resolve_fixture("llp/env");
    expect_matches_loader(resolve_fixture("llp/exe_runpath"), env,
                          "LD_LIBRARY_PATH=" + shell_quote(env.ld_library_path), tmp.str());
  }
  env.ld_library_path = "nodir:" + resolve_fixture("llp/env");  // ENOENT: the list goes on
  expect_matches_loader(resolve_fixture("llp/exe_runpath"), env,
                        "LD_LIBRARY_PATH=" + shell_quote(env.ld_library_path), tmp.str());
  // the subdirectory's symlink loop is passed over; the directory's own copy is loaded
  env.ld_library_path = dir;
  expect_matches_loader(resolve_fixture("llp/exe_runpath"), env, "LD_LIBRARY_PATH=" + shell_quote(dir));
  Walk walk(resolve_fixture("llp/exe_runpath"), env);
  CHECK(walk.where("libl.so") == dir + "/libl.so");
}

TEST_CASE("a NEEDED with a slash is opened relative to the working directory") {
  expect_matches_loader(resolve_fixture("sl/exe"), clean_environment(), "", resolve_fixture("sl"));
}

TEST_CASE("a filter's filtees load just before it, through its RUNPATH; a missing auxiliary one is left out") {
  expect_matches_loader(resolve_fixture("flt/exe"), clean_environment());
  expect_matches_loader(resolve_fixture("flt/exe_moved"), clean_environment());  // a later NEEDED moves up
  expect_matches_loader(resolve_fixture("flt/exe_missing"), clean_environment());
  expect_matches_loader(resolve_fixture("flt/exe_order"), clean_environment());
  Walk ordered(resolve_fixture("flt/exe_order"), clean_environment());  // the filtee ahead of the NEEDED is mapped first
  REQUIRE(ordered.edge("libdup2.so") != nullptr);
  CHECK(ordered.edge("libdup2.so")->how == How::AlreadyLoaded);
  CHECK(ordered.where("libdup2.so") == resolve_fixture("flt/o/libalias.so"));
  Walk walk(resolve_fixture("flt/exe"), clean_environment());
  const Edge* filtee = walk.edge("libfiltee2.so");
  REQUIRE(filtee != nullptr);
  CHECK(filtee->filtee == Filtee::Filter);
  CHECK(filtee->how == How::Runpath);
  CHECK(walk.graph().objects[filtee->from].path == resolve_fixture("flt/d/libflt.so"));
  const Edge* ignored = walk.edge("libnone.so");
  REQUIRE(ignored != nullptr);
  CHECK(ignored->filtee == Filtee::Auxiliary);
  CHECK(ignored->ignored_when_missing());
  Walk missing(resolve_fixture("flt/exe_missing"), clean_environment());
  REQUIRE(missing.edge("libnone.so") != nullptr);
  CHECK_FALSE(missing.edge("libnone.so")->ignored_when_missing());
  // what the program needs, not its optional filtee, decides the scan's outcome
  CHECK(run_command(depscan_bin() + " " + shell_quote(resolve_fixture("flt/exe")) + " >/dev/null").exit_code == 0);
  auto stopped = run_command(depscan_bin() + " --format json " + shell_quote(resolve_fixture("flt/exe_missing")));
  CHECK(stopped.exit_code == 1);
  CHECK(stopped.output.find("\"filtee\": \"filter\"") != std::string::npos);
  // filters of each other: the walk ends, and the crash the loader comes to is an error
  auto cycle = run_command("timeout 20 " + depscan_bin() + " --format json " + shell_quote(resolve_fixture("flt/exe_cycle")));
  CHECK(cycle.exit_code == 1);
  CHECK(cycle.output.find("symbol-interposed") == std::string::npos);  // the filtee's definitions win by design
  CHECK(cycle.output.find("filter cycle: libcyca.so, a filter already worked on, is a filtee of " + resolve_fixture("flt/c/libcycb.so")) !=
        std::string::npos);
  auto twice = run_command("timeout 20 " + depscan_bin() + " --format json " + shell_quote(resolve_fixture("flt/exe_cycle")) +
                           " " + shell_quote(resolve_fixture("flt/c/libcyca.so")));
  size_t said = 0;  // the same request in two roots: one finding
  const std::string finding = "\"message\": \"libcyca.so: filter cycle: ";
  for (size_t at = twice.output.find(finding); at != std::string::npos; at = twice.output.find(finding, at + 1)) ++said;
  CHECK(said == 1);
  auto crash = run_command("timeout 20 " + shell_quote(resolve_fixture("flt/exe_cycle")) + " >/dev/null 2>&1");
  CHECK(crash.exit_code >= 128);  // the loader's stack overflows
}

TEST_CASE("the program and ld.so are not found again by file id; an empty NEEDED names the program") {
  expect_matches_loader(resolve_fixture("self/exe_ld"), clean_environment());  // a second ld.so
  expect_matches_loader(resolve_fixture("self/exe_empty"), clean_environment());
  Walk empty(resolve_fixture("self/exe_empty"), clean_environment());
  CHECK(empty.where("") == resolve_fixture("self/exe_empty"));
  // a library's empty NEEDED names whichever program loads it: no edge, nothing missing
  Walk library(resolve_fixture("self/libempty_needed.so"), clean_environment());
  CHECK(library.edge("") == nullptr);
  Walk self(resolve_fixture("self/exe_self"), clean_environment());
  const Edge* refused = self.edge(resolve_fixture("self/exe_self"));
  REQUIRE(refused != nullptr);
  CHECK_FALSE(refused->to);
  CHECK(refused->how_detail == "cannot dynamically load position-independent executable");
  auto run = run_command(shell_quote(resolve_fixture("self/exe_self")) + " 2>&1");  // the loader's own words
  CHECK(run.exit_code == 127);
  CHECK(run.output.find(refused->how_detail) != std::string::npos);
}

TEST_CASE("a candidate the loader cannot map (no PT_DYNAMIC) stops it, a good copy later notwithstanding") {
  Walk walk(resolve_fixture("unmap/exe"), clean_environment());
  const Edge* v = walk.edge("libv.so");
  REQUIRE(v != nullptr);
  CHECK_FALSE(v->to);
  CHECK(v->how_detail == "object file has no dynamic section");
  auto run = run_command(shell_quote(resolve_fixture("unmap/exe")) + " 2>&1");  // the loader's own words
  CHECK(run.exit_code == 127);
  CHECK(run.output.find("libv.so: object file has no dynamic section") != std::string::npos);
}

TEST_CASE("an i386 program under Debian's /lib32 loader: its search path, $LIB and $PLATFORM") {
  expect_matches_loader(resolve_fixture("i386/exe"), clean_environment());
  Walk walk(resolve_fixture("i386/exe"), clean_environment());
  CHECK(walk.where("libv.so") == resolve_fixture("i386/x/lib32/libv.so"));  // $LIB = lib32
  CHECK(walk.where("libw.so") == resolve_fixture("i386/p/i686/libw.so"));   // $PLATFORM = i686
  size_t runtime_edges = 0;
  for (const Edge& e : walk.graph().edges)
    if (e.name.starts_with("libstdc++.so.6.")) {
      ++runtime_edges;
      CHECK(e.how == How::DefaultPath);  // /lib32, no cache entry
    }
  CHECK(runtime_edges == 1);
  auto why = run_command(depscan_bin() + " why " + shell_quote(resolve_fixture("i386/exe")) + " libv.so");
  CHECK(why.output.find("no glibc-hwcaps subdirectories (none for this machine)") != std::string::npos);  // ld.so --help
  CHECK(why.output.find("glibc-hwcaps levels") == std::string::npos);
}

TEST_CASE("breadth-first load order, and LD_PRELOAD before the NEEDED") {
  expect_matches_loader(resolve_fixture("bfs/exe"), clean_environment());
  LoaderEnvironment env = clean_environment();
  env.preload = {resolve_fixture("bfs/libb2.so")};
  expect_matches_loader(resolve_fixture("bfs/exe"), env, "LD_PRELOAD=" + shell_quote(resolve_fixture("bfs/libb2.so")));
  Walk walk(resolve_fixture("bfs/exe"), env);
  const Edge* pre = walk.edge(resolve_fixture("bfs/libb2.so"));
  REQUIRE(pre != nullptr);
  CHECK(pre->kind == EdgeKind::Preload);
  CHECK(pre->how == How::Preload);
  CHECK(walk.where("libb2.so") == resolve_fixture("bfs/libb2.so"));
  CHECK(walk.edge("libb2.so")->how == How::AlreadyLoaded);
}

TEST_CASE("an unreadable preload entry is a warning and loading goes on") {
  LoaderEnvironment env = clean_environment();
  env.preload = {"libdoes-not-exist.so"};
  Walk walk(resolve_fixture("bfs/exe"), env);
  CHECK(walk.where("liba1.so") == resolve_fixture("bfs/liba1.so"));
  bool warned = false;
  for (const Finding& f : walk.resolver->diagnostics())
    warned = warned || (f.code == "preload-not-loaded" && f.severity == Severity::Warning &&
                        f.message.find("libdoes-not-exist.so") != std::string::npos);
  CHECK(warned);
  // each root's process fails the same way: said once
  walk.resolver->add_root(resolve_fixture("chain/exe_rpath"));
  size_t said = 0;
  for (const Finding& f : walk.resolver->diagnostics()) said += f.code == "preload-not-loaded";
  CHECK(said == 1);
}

TEST_CASE("dlopen: the caller's RUNPATH applies, then the new object's NEEDED closure loads") {
  Walk walk(resolve_fixture("bfs/exe"), clean_environment());
  size_t exe = walk.graph().roots[walk.root];
  size_t before = walk.load_order().size();
  size_t edge = walk.resolver->add_dlopen(walk.root, exe, "liba1.so", false, "test");
  CHECK(walk.graph().edges[edge].how == How::AlreadyLoaded);
  edge = walk.resolver->add_dlopen(walk.root, exe, resolve_fixture("dl/libplug.so"), true, "strings");
  const Edge& e = walk.graph().edges[edge];
  CHECK(e.kind == EdgeKind::Dlopen);
  CHECK(e.inferred);
  CHECK(e.how == How::DirectPath);
  std::vector<std::string> order = walk.load_order();
  REQUIRE(order.size() == before + 2);
  CHECK(order[before] == resolve_fixture("dl/libplug.so"));
  CHECK(order[before + 1] == resolve_fixture("dl/libplug_dep.so"));
  size_t missing = walk.resolver->add_dlopen(walk.root, exe, "libplug_dep_not_here.so", false, "test");
  CHECK_FALSE(walk.graph().edges[missing].to.has_value());
}

TEST_CASE("explain lists every candidate and the result") {
  Walk walk(resolve_fixture("chain/exe_runpath"), clean_environment());
  size_t liba = *walk.edge("liba.so")->to;
  std::vector<Attempt> steps = walk.resolver->explain(walk.root, liba, "libb.so");
  REQUIRE(steps.size() >= 2);
  CHECK(steps.back().outcome.rfind("not found", 0) == 0);
  bool asked_cache = std::any_of(steps.begin(), steps.end(), [](const Attempt& a) { return a.path == "ld.so.cache"; });
  CHECK(asked_cache);
  size_t exe = walk.graph().roots[walk.root];
  std::vector<Attempt> again = walk.resolver->explain(walk.root, exe, "liba.so");
  CHECK(again.back().outcome.find("already loaded") != std::string::npos);
  size_t objects = walk.graph().objects.size();
  walk.resolver->explain(walk.root, exe, "libb.so");
  CHECK(walk.graph().objects.size() == objects);  // explaining loads nothing
}

}  // namespace depscan::test

namespace depscan::test {

TEST_CASE("a candidate that is not a usable ELF file stops the loader with its error") {
  std::string exe = resolve_fixture("fatal/exe");
  CommandResult real = run_command("env -u LD_LIBRARY_PATH -u LD_PRELOAD LD_TRACE_LOADED_OBJECTS=1 " + shell_quote(exe) + " 2>&1");
  Walk walk(exe, clean_environment());
  const Edge* e = walk.edge("libf.so");
  REQUIRE(e != nullptr);
  CHECK_FALSE(e->to.has_value());
  CHECK(e->how_detail == "file too short");
  INFO(real.output);
  CHECK(real.exit_code != 0);
  CHECK(real.output.find(resolve_fixture("fatal/bad/libf.so") + ": " + e->how_detail) != std::string::npos);
}

}  // namespace depscan::test
