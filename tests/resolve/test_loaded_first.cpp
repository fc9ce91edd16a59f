// Libraries a process loaded before a root (a Python package's own loads, matrix loaded_first):
// their NEEDED closures are complete before the root's NEEDED entries are searched, which bind to
// them by soname. Compared with the real loader through Python's ctypes.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "resolve_support.h"

namespace depscan::test {
namespace {

struct LoadedFirstWalk {
  std::unique_ptr<FileSystem> fs = make_real_fs();
  BinaryCache cache{*fs};
  Resolver resolver{cache, ResolveOptions{clean_environment(), {}}};
  size_t root;

  LoadedFirstWalk(const std::string& module, const std::vector<LoadedBeforeRoot>& first)
      : root(resolver.add_root(module, first)) {}

  const Edge* edge(size_t from_object, const std::string& name) const {
    for (const Edge& e : resolver.graph().edges)
      if (e.root == root && e.from == from_object && e.name == name) return &e;
    return nullptr;
  }
  size_t root_object() const { return resolver.graph().roots[root]; }
  std::string path_of(const Edge* e) const { return e && e->to ? resolver.graph().objects[*e->to].path : "not found"; }
};

// 1 when Python's ctypes loads every path in order (RTLD_GLOBAL, as pathfinder does), else 0.
std::string python_loads(const std::vector<std::string>& paths) {
  std::string args;
  for (const std::string& p : paths) args += " " + shell_quote(p);
  return run_command("python3 -c 'import ctypes, os, sys\ntry:\n  [ctypes.CDLL(p, os.RTLD_NOW | os.RTLD_GLOBAL) for p in "
                     "sys.argv[1:]]; print(1)\nexcept OSError:\n  print(0)'" + args).output;
}

}  // namespace

TEST_CASE("a library loaded before the root: its closure comes first, and the root's NEEDED binds to it by soname") {
  const std::string host = resolve_fixture("loadedfirst/host/libhost.so");
  const std::string hostdep = resolve_fixture("loadedfirst/host/libhostdep.so");
  const std::string module = resolve_fixture("loadedfirst/mod/module.so");

  LoadedFirstWalk with(module, {{host, "loaded first by a test", true}});
  const Edge* first = with.edge(with.root_object(), host);
  REQUIRE(first);
  CHECK(first->kind == EdgeKind::Preload);  // RTLD_GLOBAL: in the global scope, as a preload is
  CHECK(first->how == How::DirectPath);     // but not LD_PRELOAD, whose interposition is on purpose
  CHECK(first->how_detail == "loaded first by a test (direct path)");
  const Edge* needed = with.edge(with.root_object(), "libhostdep.so");
  REQUIRE(needed);
  CHECK(needed->how == How::AlreadyLoaded);  // found by libhost.so's RUNPATH before the module's own search
  CHECK(with.path_of(needed) == hostdep);
  const std::vector<size_t>& order = with.resolver.graph().load_order[with.root];
  REQUIRE(order.size() >= 3);  // the process had them when it loaded the module: they come first in its scope
  CHECK(with.resolver.graph().objects[order[0]].path == host);
  CHECK(with.resolver.graph().objects[order[1]].path == hostdep);
  auto module_at = std::ranges::find_if(order, [&](size_t o) { return with.resolver.graph().objects[o].path == module; });
  CHECK(module_at - order.begin() > 1);
  CHECK(python_loads({host, module}) == "1\n");

  LoadedFirstWalk local(module, {{host, "loaded first by a test", false}});  // RTLD_LOCAL: a dlopen of its own
  const Edge* opened = local.edge(local.root_object(), host);
  REQUIRE(opened);
  CHECK(opened->kind == EdgeKind::Dlopen);
  CHECK(local.path_of(local.edge(local.root_object(), "libhostdep.so")) == hostdep);  // sonames match all the same

  LoadedFirstWalk alone(module, {});
  CHECK(alone.path_of(alone.edge(alone.root_object(), "libhostdep.so")) == "not found");
  CHECK(python_loads({module}) == "0\n");
}

TEST_CASE("LD_PRELOAD and a library root: the process had the preload's closure first, in the scope and in the search") {
  const std::string host = resolve_fixture("loadedfirst/host/libhost.so");
  const std::string hostdep = resolve_fixture("loadedfirst/host/libhostdep.so");
  const std::string module = resolve_fixture("loadedfirst/mod/module.so");
  const std::string preload = " --no-etc-preload --preload " + shell_quote(host) + " ";

  CommandResult scan = run_command(depscan_bin() + preload + "--no-color " + shell_quote(module) + " 2>&1");
  CHECK_MESSAGE(scan.exit_code == 0, scan.output);  // libhostdep.so: libhost.so's RUNPATH found it first
  CHECK_MESSAGE(scan.output.find("libhostdep.so [already loaded]") != std::string::npos, scan.output);
  CHECK(run_command("LD_PRELOAD=" + shell_quote(host) + " python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1]); "
                    "print(1)' " + shell_quote(module) + " 2>&1").output == "1\n");

  // module.so's own call of fixture_marker binds to the preload's definition, which comes first.
  CommandResult symbol = run_command(depscan_bin() + " symbol fixture_marker" + preload + shell_quote(module) + " 2>&1");
  CHECK_MESSAGE(symbol.output.find("* " + host + "  fixture_marker (global function)  <- wins") != std::string::npos,
                symbol.output);
  CHECK_MESSAGE(symbol.output.find(module + "  fixture_marker (global function)  (shadowed)") != std::string::npos,
                symbol.output);
  CHECK_MESSAGE(symbol.output.find(module + "  fixture_marker (its own definition) -> " + host) != std::string::npos,
                symbol.output);
  std::string called = run_command("LD_PRELOAD=" + shell_quote(host) + " python3 -c 'import ctypes, sys\n"
                                   "f = ctypes.CDLL(sys.argv[1]).fixture_marker_bound\nf.restype = ctypes.c_char_p\n"
                                   "print(f().decode())' " + shell_quote(module)).output;
  CHECK(called == "loadedfirst/host/libhost.so\n");
}

TEST_CASE("LD_PRELOAD and a library root of the soname the preload needs: the process knows the root by it only later") {
  const std::string host = resolve_fixture("loadedfirst/host/libhost.so");
  const std::string hostdep = resolve_fixture("loadedfirst/host/libhostdep.so");
  const std::string other = resolve_fixture("loadedfirst/other/libhostdep.so");
  CommandResult scan = run_command(depscan_bin() + " --no-color --no-etc-preload --preload " + shell_quote(host) + " " +
                                   shell_quote(other) + " 2>&1");
  CHECK_MESSAGE(scan.output.find("libhostdep.so [runpath] => " + hostdep) != std::string::npos, scan.output);
  // The real loader maps both copies: the preload's first, then the root.
  std::string mapped = run_command("LD_PRELOAD=" + shell_quote(host) + " python3 -c 'import ctypes, sys\n"
                                   "ctypes.CDLL(sys.argv[1])\nprint(sorted({l.split()[-1] for l in open(\"/proc/self/maps\") "
                                   "if l.rstrip().endswith(\"libhostdep.so\")}))' " + shell_quote(other)).output;
  CHECK(mapped == "['" + hostdep + "', '" + other + "']\n");
}

TEST_CASE("a file loaded before the root that cannot be loaded is an error: the import that loads it fails") {
  TempDir dir("resolve-loaded-first-bad");
  const std::string bad = dir.str() + "/libbad.so";
  std::ofstream(bad) << "not a shared object\n";
  const std::string module = resolve_fixture("loadedfirst/mod/module.so");
  LoadedFirstWalk walk(module, {{bad, "loaded first by a test", true}});
  const std::vector<Finding>& diagnostics = walk.resolver.diagnostics();
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].code == "library-not-found");
  CHECK(diagnostics[0].severity == Severity::Error);
  CHECK(diagnostics[0].message.starts_with(bad + ": cannot be loaded ("));
  CHECK(diagnostics[0].message.ends_with("), loaded first by a test, so importing " + module + " fails"));
  CHECK(python_loads({bad}) == "0\n");
}

TEST_CASE("a program is started, not loaded into a process: it takes no library loaded first") {
  const std::string host = resolve_fixture("loadedfirst/host/libhost.so");
  LoadedFirstWalk program(resolve_fixture("chain/exe_runpath"), {{host, "loaded first by a test", true}});
  CHECK_FALSE(program.edge(program.root_object(), host));
  for (size_t object : program.resolver.graph().load_order[program.root])
    CHECK(program.resolver.graph().objects[object].path != host);
}

}  // namespace depscan::test
