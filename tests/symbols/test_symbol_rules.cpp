// The symbol checks on hand-built graphs: ld.so's binding and version rules, one at a time.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "analyzer/check/baselines.h"
#include "analyzer/check/provenance.h"
#include "graph_builder.h"

using namespace depscan;
using namespace depscan::test;

namespace {

auto versions = [](const CheckContext& c, const SymbolIndex& s) { return check_symbol_versions(c, s); };
auto undefined = [](const CheckContext& c, const SymbolIndex& s) { return check_undefined_symbols(c, s); };
auto interposed = [](const CheckContext& c, const SymbolIndex& s) { return check_interposition(c, s); };
auto floors = [](const CheckContext& c, const SymbolIndex&) { return check_target_floors(c); };

// libfoo.so.1 with foo@FOO_1 (hidden), foo@@FOO_2, bar@@FOO_1, baz (base version).
Binary versioned_libfoo() {
  Binary b = elf("libfoo.so.1");
  b.version_defs = {verdef("libfoo.so.1", 1, true), verdef("FOO_1", 2), verdef("FOO_2", 3)};
  b.symbols = {def("foo", "FOO_1", 2, true), def("foo", "FOO_2", 3), def("bar", "FOO_1", 2),
               def("baz", "", 1), def("qux", "FOO_2", 3, true)};
  return b;
}

}  // namespace

TEST_CASE("versioned references take their version, unversioned ones the default") {
  GraphBuilder g;
  size_t lib = g.add("/lib/libfoo.so.1", versioned_libfoo());
  g.root({lib});
  SymbolIndex index(g.graph);

  const Symbol* s = index.match(lib, ref("foo", "FOO_1", "libfoo.so.1", 2));
  REQUIRE(s);
  CHECK(s->version == "FOO_1");  // a hidden version still serves a reference that names it
  s = index.match(lib, ref("foo", "FOO_2", "libfoo.so.1", 3));
  REQUIRE(s);
  CHECK(s->version == "FOO_2");
  CHECK_FALSE(index.match(lib, ref("foo", "FOO_3", "libfoo.so.1", 4)));
  // foo@FOO_1 has index 2 (the oldest version), which check_match accepts for an unversioned
  // reference even though it is hidden.
  s = index.match(lib, ref("foo"));
  REQUIRE(s);
  CHECK(s->version == "FOO_1");
  CHECK_FALSE(index.match(lib, ref("qux")));                       // only a hidden FOO_2 copy
  CHECK(index.match(lib, ref("qux", "FOO_2", "libfoo.so.1", 3)));
  CHECK(index.match(lib, ref("baz", "FOO_2", "libfoo.so.1", 3)));  // base-version definitions serve any version
  CHECK_FALSE(index.match(lib, ref("missing")));
}

TEST_CASE("an unversioned reference binds to the only non-hidden versioned definition") {
  GraphBuilder g;
  Binary b = elf("libv.so");
  b.version_defs = {verdef("libv.so", 1, true), verdef("V_1", 2), verdef("V_2", 3), verdef("V_3", 4)};
  b.symbols = {def("f", "V_2", 3, true), def("f", "V_3", 4)};
  size_t lib = g.add("/lib/libv.so", b);
  g.root({lib});
  SymbolIndex index(g.graph);
  const Symbol* s = index.match(lib, ref("f"));
  REQUIRE(s);
  CHECK(s->version == "V_3");
}

TEST_CASE("an object without symbol versioning satisfies versioned references") {
  GraphBuilder g;
  Binary b = elf("libplain.so");
  b.symbols = {def("foo", "", kNoVersym)};
  size_t lib = g.add("/lib/libplain.so", b);
  g.root({lib});
  SymbolIndex index(g.graph);
  CHECK(index.match(lib, ref("foo", "FOO_9", "libother.so", 5)));
  CHECK(index.match(lib, ref("foo")));
}

TEST_CASE("local, undefined and section symbols are not definitions") {
  GraphBuilder g;
  Binary b = elf("liba.so");
  b.symbols = {def("local", "", 1, false, SymbolType::Func, SymbolBinding::Local),
               def("sect", "", 1, false, SymbolType::Section), ref("undef")};
  size_t lib = g.add("/lib/liba.so", b);
  g.root({lib});
  SymbolIndex index(g.graph);
  CHECK(index.definitions(lib, "local").empty());
  CHECK(index.definitions(lib, "sect").empty());
  CHECK(index.definitions(lib, "undef").empty());
}

TEST_CASE("the first definition in load order wins") {
  GraphBuilder g;
  Binary a = elf("liba.so"), b = elf("libb.so");
  a.symbols = {def("shared", "", 1)};
  b.symbols = {def("shared", "", 1)};
  size_t app = g.add("/app", elf(std::nullopt, true));
  size_t la = g.add("/lib/liba.so", a), lb = g.add("/lib/libb.so", b);
  g.edge(app, "libb.so", lb);
  g.edge(app, "liba.so", la);
  size_t root = g.root({app, lb, la});
  SymbolIndex index(g.graph);
  auto bound = index.bind(index.scope(root), ref("shared"));
  REQUIRE(bound);
  CHECK(bound->object == lb);
}

TEST_CASE("one file opened by two paths: its definitions and references are shared, bindings name each root's object") {
  GraphBuilder g;
  Binary lib = elf("libshared.so");
  lib.symbols = {def("shared_fn"), ref("from_app")};
  Binary app = elf(std::nullopt, true), tool = elf(std::nullopt, true);
  app.symbols = {ref("shared_fn"), def("from_app")};
  tool.symbols = {ref("shared_fn")};
  size_t first = g.add("/opt/lib/libshared.so", lib);
  size_t p1 = g.add("/app", app), p2 = g.add("/tool", tool);
  Object second = g.graph.objects[first];  // the same file (one Binary) by another path
  second.path = "/opt/bin/../lib/libshared.so";
  size_t other = g.graph.objects.size();
  g.graph.objects.push_back(second);
  g.edge(p1, "libshared.so", first, How::Runpath, EdgeKind::Needed, 0);
  g.edge(p2, "libshared.so", other, How::Runpath, EdgeKind::Needed, 1);
  size_t r1 = g.root({p1, first}), r2 = g.root({p2, other});
  SymbolIndex index(g.graph);
  for (auto [root, program, library] : {std::tuple{r1, p1, first}, std::tuple{r2, p2, other}}) {
    CAPTURE(root);
    REQUIRE(index.references(program).size() == 1);
    auto bound = index.bind_in(root, program, index.references(program)[0]);
    REQUIRE(bound);
    CHECK(bound->object == library);  // the object of this root's scope, not the first one indexed
    CHECK(index.bind(index.scope(root), ref("shared_fn"))->object == library);
    CHECK(index.definitions(library, "shared_fn").size() == 1);
    REQUIRE(index.references(library).size() == 1);  // from_app, shared with the other path
    CHECK(index.references(library)[0].symbol->name == "from_app");
  }
  auto from_app = index.bind_in(r1, first, index.references(first)[0]);
  REQUIRE(from_app);
  CHECK(from_app->object == p1);
  CHECK_FALSE(index.bind_in(r2, other, index.references(other)[0]));  // /tool defines no from_app
}

TEST_CASE("symbol-version-not-found: the loader's wording, the provider's versions, the users") {
  GraphBuilder g;
  Binary app = elf(std::nullopt, true);
  app.needed = {"libfoo.so.1"};
  app.version_needs = {verneed("libfoo.so.1", "FOO_3", 4)};
  app.symbols = {ref("newfunc", "FOO_3", "libfoo.so.1", 4)};
  size_t a = g.add("/opt/app", app);
  size_t lib = g.add("/lib/libfoo.so.1", versioned_libfoo());
  g.edge(a, "libfoo.so.1", lib);
  g.root({a, lib});
  CheckRun run;
  auto found = run.run(g.graph, versions);
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "symbol-version-not-found");
  CHECK(found[0].severity == Severity::Error);
  CHECK(found[0].object == a);
  CHECK(found[0].message.find("/lib/libfoo.so.1: version 'FOO_3' not found (required by /opt/app)") == 0);
  CHECK(found[0].message.find("FOO_1, FOO_2") != std::string::npos);
  CHECK(found[0].message.find("newfunc") != std::string::npos);
  // and the undefined-symbol check leaves it to the version check (the loader stops there)
  CHECK(run.run(g.graph, undefined).empty());
}

// SymbolIndex::loaded: the names a root knows an object by, as dl-version.c's find_needed matches
// them: sonames of the root's objects, and the names its edges asked for.
TEST_CASE("SymbolIndex::loaded finds an object by its soname and by every name an edge of the root asked for") {
  GraphBuilder g;
  size_t app = g.add("/opt/app", elf(std::nullopt, true));
  size_t other = g.add("/opt/other", elf(std::nullopt, true));
  size_t foo = g.add("/lib/libfoo.so.1", elf("libfoo.so.1"));
  size_t bar = g.add("/lib/libbar.so.2", elf("libbar.so.2"));
  g.edge(app, "libfoo.so", foo, How::Runpath, EdgeKind::Needed, 0);  // a name other than the soname
  g.edge(app, "libfoo.so.1", foo, How::AlreadyLoaded, EdgeKind::Needed, 0);
  g.edge(app, "libbar.so.2", bar, How::Runpath, EdgeKind::Needed, 0);  // bar is not in root 0's load order
  g.root({app, foo});
  g.edge(other, "libbar.so.2", bar, How::Runpath, EdgeKind::Needed, 1);
  g.root({other, bar});
  SymbolIndex index(g.graph);
  CHECK(index.loaded(0, "libfoo.so.1") == foo);
  CHECK(index.loaded(0, "libfoo.so") == foo);
  CHECK(index.loaded(0, "libbar.so.2") == bar);  // from the edge alone: no soname of root 0 names it
  CHECK(index.loaded(1, "libbar.so.2") == bar);
  CHECK_FALSE(index.loaded(1, "libfoo.so.1"));
  CHECK_FALSE(index.loaded(1, "libfoo.so"));
}

// check_symbol_versions checks the needs of one file against one provider once for the scan:
// each provider met in any root is checked, whatever the order of the roots and of the needs.
TEST_CASE("symbol-version-not-found: a library two programs load is checked against each provider it meets") {
  for (bool bad_first : {true, false}) {
    CAPTURE(bad_first);
    GraphBuilder g;
    Binary mid = elf("libmid.so");
    mid.needed = {"libfoo.so.1", "libbar.so"};
    // libfoo.so.1's needs are split by libbar.so's: the second run is checked too
    mid.version_needs = {verneed("libfoo.so.1", "FOO_1", 2), verneed("libbar.so", "BAR_1", 3),
                         verneed("libfoo.so.1", "FOO_3", 4)};
    Binary bar = elf("libbar.so");
    bar.version_defs = {verdef("libbar.so", 1, true), verdef("BAR_1", 2)};
    Binary new_foo = versioned_libfoo();
    new_foo.version_defs.push_back(verdef("FOO_3", 4));
    size_t app1 = g.add("/opt/app1", elf(std::nullopt, true));
    size_t app2 = g.add("/opt/app2", elf(std::nullopt, true));
    size_t m = g.add("/opt/lib/libmid.so", mid);
    size_t b = g.add("/opt/lib/libbar.so", bar);
    size_t old_foo = g.add("/lib/libfoo.so.1", versioned_libfoo());
    size_t good_foo = g.add("/opt/new/libfoo.so.1", new_foo);
    size_t first_foo = bad_first ? old_foo : good_foo, second_foo = bad_first ? good_foo : old_foo;
    for (auto [root, app, foo] : {std::tuple{size_t{0}, app1, first_foo}, std::tuple{size_t{1}, app2, second_foo}}) {
      g.edge(app, "libmid.so", m, How::Runpath, EdgeKind::Needed, root);
      g.edge(m, "libfoo.so.1", foo, How::Runpath, EdgeKind::Needed, root);
      g.edge(m, "libbar.so", b, How::Runpath, EdgeKind::Needed, root);
      g.root({app, m, foo, b});
    }
    CheckRun run;
    auto found = run.run(g.graph, versions);
    REQUIRE(found.size() == 1);
    CHECK(found[0].object == m);
    CHECK(found[0].message.find("/lib/libfoo.so.1: version 'FOO_3' not found (required by /opt/lib/libmid.so)") == 0);
  }
}

TEST_CASE("symbol-version-not-found: weak needs warn, unloaded providers are skipped") {
  GraphBuilder g;
  Binary app = elf(std::nullopt, true);
  app.version_needs = {verneed("libfoo.so.1", "FOO_3", 4, true), verneed("libgone.so", "GONE_1", 5)};
  app.needed = {"libfoo.so.1", "libgone.so"};
  size_t a = g.add("/opt/app", app);
  size_t lib = g.add("/lib/libfoo.so.1", versioned_libfoo());
  g.edge(a, "libfoo.so.1", lib);
  g.edge(a, "libgone.so", std::nullopt);
  g.root({a, lib});
  CheckRun run;
  auto found = run.run(g.graph, versions);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Warning);
  CHECK(found[0].message.find("weak version 'FOO_3'") != std::string::npos);
}

TEST_CASE("symbol-version-not-found: a need naming a file no DT_NEEDED loads stops the loader") {
  auto findings_with = [](Binary app) {
    GraphBuilder g;
    app.version_needs = {verneed("libfoo.so.1", "FOO_1", 2), verneed("libfoo.so.1", "FOO_2", 3)};
    app.needed = {"libalt.so.1"};
    size_t a = g.add("/opt/app", app);
    Binary same_versions = versioned_libfoo();
    same_versions.soname = "libalt.so.1";
    size_t alt = g.add("/lib/libalt.so.1", same_versions);
    g.edge(a, "libalt.so.1", alt);
    g.root({a, alt});
    CheckRun run;
    return run.run(g.graph, versions);
  };
  auto found = findings_with(elf(std::nullopt, true));
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Error);
  CHECK(found[0].message.find("Assertion `needed != NULL' failed! (/opt/app needs FOO_1 from libfoo.so.1, which nothing") !=
        std::string::npos);

  // a library that carries PT_INTERP as libc.so.6 does is still a library: its host may have loaded the file
  Binary runnable = elf("librunnable.so.1");
  runnable.interpreter = "/lib64/ld-linux-x86-64.so.2";
  auto library = findings_with(runnable);
  REQUIRE(library.size() == 1);
  CHECK(library[0].severity == Severity::Warning);
  runnable.dt_flags_1 = kDf1Pie;  // a PIE program that happens to have a SONAME
  auto pie = findings_with(runnable);
  REQUIRE(pie.size() == 1);
  CHECK(pie[0].severity == Severity::Error);
}

TEST_CASE("symbol-version-not-found: a provider without versions only gets a note") {
  GraphBuilder g;
  Binary app = elf(std::nullopt, true);
  app.version_needs = {verneed("libplain.so", "PLAIN_1", 2)};
  size_t a = g.add("/opt/app", app);
  Binary plain = elf("libplain.so");
  plain.symbols = {def("p", "", kNoVersym)};
  size_t lib = g.add("/lib/libplain.so", plain);
  g.edge(a, "libplain.so", lib);
  g.root({a, lib});
  CheckRun run;
  auto found = run.run(g.graph, versions);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Warning);
  CHECK(found[0].message.find("no version information available (required by /opt/app)") != std::string::npos);
}

namespace {

// /opt/app (executable) -> libfoo.so.1 (versioned) -> libc-like nothing; app references `refs`.
struct AppGraph {
  GraphBuilder g;
  size_t app = 0, lib = 0;
  explicit AppGraph(std::vector<Symbol> refs, uint64_t dt_flags = 0) {
    Binary b = elf(std::nullopt, true);
    b.needed = {"libfoo.so.1"};
    b.version_needs = {verneed("libfoo.so.1", "FOO_1", 2), verneed("libfoo.so.1", "FOO_2", 3)};
    b.symbols = std::move(refs);
    b.dt_flags = dt_flags;
    app = g.add("/opt/app", b);
    lib = g.add("/lib/libfoo.so.1", versioned_libfoo());
    g.edge(app, "libfoo.so.1", lib);
    g.root({app, lib});
  }
};

}  // namespace

TEST_CASE("undefined-symbol: lazy functions warn, BIND_NOW and data references fail at load") {
  SUBCASE("lazy function") {
    AppGraph a({ref("gone")});
    CheckRun run;
    auto found = run.run(a.g.graph, undefined);
    REQUIRE(found.size() == 1);
    CHECK(found[0].severity == Severity::Warning);
    CHECK(found[0].message.find("symbol lookup error: /opt/app: undefined symbol: gone") == 0);
    CHECK(found[0].message.find("first called") != std::string::npos);
  }
  SUBCASE("--bind-now models LD_BIND_NOW=1") {
    AppGraph a({ref("gone")});
    CheckRun run;
    run.target.bind_now = true;
    auto found = run.run(a.g.graph, undefined);
    REQUIRE(found.size() == 1);
    CHECK(found[0].severity == Severity::Error);
    CHECK(found[0].message.find("LD_BIND_NOW") != std::string::npos);
  }
  SUBCASE("DF_BIND_NOW in DT_FLAGS") {
    AppGraph a({ref("gone")}, kDfBindNow);
    CheckRun run;
    auto found = run.run(a.g.graph, undefined);
    REQUIRE(found.size() == 1);
    CHECK(found[0].severity == Severity::Error);
  }
  SUBCASE("data reference") {
    AppGraph a({ref("gone_var", "", "", 1, SymbolType::Object)});
    CheckRun run;
    auto found = run.run(a.g.graph, undefined);
    REQUIRE(found.size() == 1);
    CHECK(found[0].severity == Severity::Error);
    CHECK(found[0].message.find("data reference") != std::string::npos);
  }
  SUBCASE("weak references may stay undefined") {
    AppGraph a({ref("gone", "", "", 1, SymbolType::Func, SymbolBinding::Weak)});
    CheckRun run;
    run.target.bind_now = true;
    CHECK(run.run(a.g.graph, undefined).empty());
  }
  SUBCASE("defined references are fine") {
    AppGraph a({ref("foo", "FOO_2", "libfoo.so.1", 3), ref("bar", "FOO_1", "libfoo.so.1", 2), ref("baz")});
    CheckRun run;
    run.target.bind_now = true;
    CHECK(run.run(a.g.graph, undefined).empty());
  }
}

TEST_CASE("undefined-symbol: a versioned reference names the library it was expected from") {
  AppGraph a({ref("removed", "FOO_2", "libfoo.so.1", 3, SymbolType::Func)}, kDfBindNow);
  CheckRun run;
  auto found = run.run(a.g.graph, undefined);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Error);
  CHECK(found[0].message.find("undefined symbol: removed, version FOO_2") != std::string::npos);
  CHECK(found[0].message.find("expected from libfoo.so.1 => /lib/libfoo.so.1") != std::string::npos);
}

TEST_CASE("undefined-symbol: the program and preloads define symbols too") {
  GraphBuilder g;
  Binary app = elf(std::nullopt, true);
  app.symbols = {def("from_app"), ref("from_preload")};
  app.dt_flags = kDfBindNow;
  Binary pre = elf("libpre.so");
  pre.symbols = {def("from_preload")};
  Binary lib = elf("libneeds.so");
  lib.symbols = {ref("from_app"), ref("from_preload")};
  lib.dt_flags = kDfBindNow;
  size_t a = g.add("/opt/app", app), p = g.add("/opt/libpre.so", pre), l = g.add("/lib/libneeds.so", lib);
  g.edge(a, "/opt/libpre.so", p, How::Preload, EdgeKind::Preload);
  g.edge(a, "libneeds.so", l);
  g.root({a, p, l});
  CheckRun run;
  CHECK(run.run(g.graph, undefined).empty());
}

TEST_CASE("undefined-symbol: unreadable objects are out of the scope; missing libraries stop the loader first") {
  SUBCASE("unreadable") {
    GraphBuilder g;
    Binary app = elf(std::nullopt, true);
    app.symbols = {ref("in_broken", "", "", 1, SymbolType::Object)};
    size_t a = g.add("/opt/app", app), broken = g.add_unreadable("/lib/libbroken.so");
    g.edge(a, "libbroken.so", broken);
    g.root({a, broken});
    CheckRun run;
    CHECK(run.run(g.graph, undefined).size() == 1);
  }
  SUBCASE("missing") {
    GraphBuilder g;
    Binary app = elf(std::nullopt, true);
    app.symbols = {ref("in_missing", "", "", 1, SymbolType::Object), ref("v", "M_1", "libmissing.so", 2)};
    size_t a = g.add("/opt/app", app);
    g.edge(a, "libmissing.so", std::nullopt);
    g.root({a});
    CheckRun run;
    CHECK(run.run(g.graph, undefined).empty());
  }
}

TEST_CASE("undefined-symbol: a library root may get its symbols from the program that loads it") {
  GraphBuilder g;
  Binary plugin = elf("libplugin.so");
  plugin.symbols = {ref("host_function")};
  plugin.dt_flags = kDfBindNow;
  size_t p = g.add("/lib/libplugin.so", plugin);
  g.root({p});
  CheckRun run;
  auto found = run.run(g.graph, undefined);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Warning);
  CHECK(found[0].message.find("the program that loads /lib/libplugin.so must") != std::string::npos);
}

TEST_CASE("undefined-symbol: a library root's names that bind where another root loads it are not left to a host") {
  // libtorch_nvshmem.so's c10::cuda symbols: libc10_cuda.so defines them, and libtorch_cuda.so loads both.
  GraphBuilder g;
  Binary plugin = elf("libplugin.so");
  plugin.symbols = {ref("peer_function"), ref("host_function")};
  Binary peer = elf("libpeer.so");
  peer.symbols = {def("peer_function")};
  size_t p = g.add("/lib/libplugin.so", plugin);
  size_t d = g.add("/lib/libpeer.so", peer);
  size_t user = g.add("/lib/libuser.so", elf("libuser.so"));
  g.root({p});
  g.edge(user, "libpeer.so", d, How::Runpath, EdgeKind::Needed, 1);
  g.edge(user, "libplugin.so", p, How::Runpath, EdgeKind::Needed, 1);
  g.root({user, d, p});
  CheckRun run;
  auto found = run.run(g.graph, undefined);
  REQUIRE(found.size() == 1);
  CHECK(found[0].message.find("host_function") != std::string::npos);  // nothing loaded with it defines this one
  CHECK(found[0].message.find("peer_function") == std::string::npos);

  g.graph.roots.pop_back();  // scanned alone, both are left to the host
  g.graph.load_order.pop_back();
  g.graph.edges.clear();
  auto alone = run.run(g.graph, undefined);
  REQUIRE(alone.size() == 1);
  CHECK(alone[0].message.find("peer_function") != std::string::npos);
}

TEST_CASE("python-extension: a CPython extension module gets the C API from the interpreter, not a warning") {
  GraphBuilder g;
  Binary module = elf();
  module.symbols = {def("PyInit_fast"), ref("PyList_New"), ref("_Py_Dealloc"),
                    ref("PyExc_TypeError", "", "", 1, SymbolType::Object)};
  size_t m = g.add("/site-packages/fast.cpython-311-x86_64-linux-gnu.so", module);
  g.root({m});
  CheckRun run;
  auto found = run.run(g.graph, undefined);
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "python-extension");
  CHECK(found[0].severity == Severity::Info);
  CHECK(found[0].object == m);
  CHECK(found[0].message.find("(PyInit_fast): its 3 Python C-API symbols") != std::string::npos);
  CHECK(found[0].message.find("built for CPython 3.11") != std::string::npos);

  GraphBuilder free;
  size_t f = free.add("/site-packages/fast.cpython-313t-x86_64-linux-gnu.so", module);
  free.root({f});
  auto threaded = run.run(free.graph, undefined);
  REQUIRE(threaded.size() == 1);
  CHECK(threaded[0].message.find("built for CPython 3.13 (free-threaded)") != std::string::npos);
}

TEST_CASE("python-extension: other symbols an extension module lacks still warn, without the Python ones") {
  GraphBuilder g;
  Binary module = elf();
  module.symbols = {def("PyInit_conv"), ref("PyList_New"), ref("cudnnCreate"), ref("Pyramid_draw")};
  size_t m = g.add("/site-packages/conv.abi3.so", module);
  g.root({m});
  CheckRun run;
  auto found = run.run(g.graph, undefined);
  auto python = with_code(found, "python-extension");
  auto warned = with_code(found, "undefined-symbol");
  REQUIRE(python.size() == 1);
  CHECK(python[0].message.find("its 1 Python C-API symbol (PyList_New) comes from the interpreter") != std::string::npos);
  CHECK(python[0].message.find("stable ABI") != std::string::npos);
  REQUIRE(warned.size() == 1);
  CHECK(warned[0].severity == Severity::Warning);
  CHECK(warned[0].message.find("cudnnCreate") != std::string::npos);
  CHECK(warned[0].message.find("Pyramid_draw") != std::string::npos);  // not the Py API
  CHECK(warned[0].message.find("PyList_New") == std::string::npos);
}

TEST_CASE("python-extension: a library in site-packages gets the C API from the interpreter too") {
  GraphBuilder g;
  Binary common = elf("libjax_common.so");
  common.symbols = {def("jax_entry"), ref("PyModuleDef_Init"), ref("_Py_Dealloc")};
  size_t c = g.add("/venv/lib/python3.11/site-packages/jaxlib/libjax_common.so", common);
  g.root({c});
  CheckRun run;
  auto found = run.run(g.graph, undefined);
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "python-extension");
  CHECK(found[0].message.find("is a library of a Python environment (site-packages): its 2 Python C-API symbols") !=
        std::string::npos);
}

TEST_CASE("python-extension: without PyInit_ a library's Py symbols are a host-symbol warning as before") {
  GraphBuilder g;
  Binary embedder = elf("libembed.so");
  embedder.symbols = {def("embed_run"), ref("Py_Initialize")};
  size_t e = g.add("/lib/libembed.so", embedder);
  g.root({e});
  CheckRun run;
  auto found = run.run(g.graph, undefined);
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "undefined-symbol");
  CHECK(found[0].message.find("Py_Initialize") != std::string::npos);
}

namespace {

// app -> libtorch.so -> libcudart.so.12 (bundled, RUNPATH); app -> libother.so -> ... but an
// earlier libcudart-copy.so (NEEDED by app first) defines the same functions.
struct TwoCopies {
  GraphBuilder g;
  size_t app = 0, copy = 0, torch = 0, cudart = 0;
  explicit TwoCopies(SymbolBinding copy_binding = SymbolBinding::Global) {
    Binary a = elf(std::nullopt, true);
    a.needed = {"libcudart-copy.so", "libtorch.so"};
    Binary c = elf("libcudart-copy.so");
    c.symbols = {def("cudaMalloc", "", 1, false, SymbolType::Func, copy_binding), def("cudaFree")};
    Binary t = elf("libtorch.so");
    t.needed = {"libcudart.so.12"};
    t.symbols = {ref("cudaMalloc"), ref("cudaFree"), ref("cudaLaunchKernel")};
    Binary r = elf("libcudart.so.12");
    r.symbols = {def("cudaMalloc"), def("cudaFree"), def("cudaLaunchKernel")};
    app = g.add("/opt/app", a);
    copy = g.add("/opt/lib/libcudart-copy.so", c);
    torch = g.add("/opt/lib/libtorch.so", t);
    cudart = g.add("/usr/local/cuda/lib64/libcudart.so.12", r);
    g.edge(app, "libcudart-copy.so", copy);
    g.edge(app, "libtorch.so", torch);
    g.edge(torch, "libcudart.so.12", cudart);
    g.root({app, copy, torch, cudart});
  }
};

}  // namespace

TEST_CASE("symbol-interposed: an earlier copy wins over the library the requester was linked against") {
  TwoCopies t;
  CheckRun run;
  auto found = run.run(t.g.graph, interposed);
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "symbol-interposed");
  CHECK(found[0].severity == Severity::Warning);
  CHECK(found[0].object == t.copy);
  CHECK(found[0].message.find("2 symbols that /opt/lib/libtorch.so was linked against from "
                              "/usr/local/cuda/lib64/libcudart.so.12 bind to /opt/lib/libcudart-copy.so") == 0);
  CHECK(found[0].message.find("cudaFree, cudaMalloc") != std::string::npos);
  CHECK(found[0].message.find("cudaLaunchKernel") == std::string::npos);
}

TEST_CASE("symbol-interposed: weak (inline, template) copies and the program's own definitions are quiet") {
  SUBCASE("weak winner") {
    TwoCopies t(SymbolBinding::Weak);
    CheckRun run;
    auto found = run.run(t.g.graph, interposed);
    REQUIRE(found.size() == 1);  // cudaFree is still a strong duplicate
    CHECK(found[0].message.find("cudaMalloc") == std::string::npos);
  }
  SUBCASE("the program") {
    GraphBuilder g;
    Binary a = elf(std::nullopt, true);
    a.symbols = {def("malloc")};
    Binary l = elf("libx.so");
    l.needed = {"libc.so.6"};
    l.symbols = {ref("malloc")};
    Binary c = elf("libc.so.6");
    c.symbols = {def("malloc")};
    size_t app = g.add("/opt/app", a), x = g.add("/lib/libx.so", l), libc = g.add("/lib/libc.so.6", c);
    g.edge(app, "libx.so", x);
    g.edge(x, "libc.so.6", libc);
    g.root({app, x, libc});
    CheckRun run;
    CHECK(run.run(g.graph, interposed).empty());
  }
}

TEST_CASE("symbol-interposed: LD_PRELOAD's copy is quiet, a copy a Python package loaded first is not") {
  for (How how : {How::Preload, How::DirectPath}) {
    CAPTURE(static_cast<int>(how));
    GraphBuilder g;
    Binary m = elf(std::nullopt);
    m.needed = {"libcudart.so.12"};
    m.symbols = {ref("cudaMalloc")};
    Binary c = elf("libcudart-copy.so");
    c.symbols = {def("cudaMalloc")};
    Binary r = elf("libcudart.so.12");
    r.symbols = {def("cudaMalloc")};
    size_t module = g.add("/venv/pkg/module.so", m), copy = g.add("/venv/other/libcudart-copy.so", c),
           cudart = g.add("/venv/nvidia/libcudart.so.12", r);
    g.edge(module, "/venv/other/libcudart-copy.so", copy, how, EdgeKind::Preload);
    g.edge(module, "libcudart.so.12", cudart);
    g.root({module, copy, cudart});
    CheckRun run;
    auto found = run.run(g.graph, interposed);
    if (how == How::Preload) {
      CHECK(found.empty());  // LD_PRELOAD interposes on purpose
    } else {
      REQUIRE(found.size() == 1);
      CHECK(found[0].message.find("bind to /venv/other/libcudart-copy.so") != std::string::npos);
    }
  }
}

namespace {

// A definition the object's own relocations name: a call through its PLT.
Symbol own_call(std::string name, SymbolBinding binding = SymbolBinding::Global) {
  Symbol s = def(std::move(name), "", 1, false, SymbolType::Func, binding);
  s.plt_called = true;
  return s;
}

// app -> liba.so, libb.so: both export b_helper's name; libb.so calls its own through its PLT.
// Extra objects opened by dlopen (from app) come after them.
struct OwnCall {
  GraphBuilder g;
  size_t app = 0, a = 0, b = 0;
  explicit OwnCall(Symbol b_helper = own_call("helper"), std::optional<std::string> b_soname = "libb.so",
                   bool b_symbolic = false) {
    Binary program = elf(std::nullopt, true);
    Binary first = elf("liba.so");
    first.symbols = {def(std::string(b_helper.name))};
    Binary second = elf(std::move(b_soname));
    second.symbols = {std::move(b_helper)};
    second.has_dt_symbolic = b_symbolic;
    app = g.add("/opt/app", std::move(program));
    a = g.add("/opt/lib/liba.so", std::move(first));
    b = g.add("/opt/lib/libb.so", std::move(second));
    g.edge(app, "liba.so", a);
    g.edge(app, "libb.so", b);
  }
};

}  // namespace

TEST_CASE("symbol-interposed: a library's own call of a function it exports binds to an earlier copy") {
  OwnCall t;
  t.g.root({t.app, t.a, t.b});
  CheckRun run;
  auto found = run.run(t.g.graph, interposed);
  REQUIRE(found.size() == 1);
  CHECK(found[0].object == t.a);
  CHECK(found[0].message == "/opt/lib/libb.so calls or refers to 1 symbol of its own through the lookup scope, and "
                            "/opt/lib/liba.so, earlier in that scope, defines it too: those references bind to "
                            "liba.so's: helper");
  CHECK(found[0].fix.find("link libb.so with -Wl,-Bsymbolic") != std::string::npos);
}

TEST_CASE("symbol-interposed: a library dlopen opens comes before its dependencies in their local scope") {
  OwnCall t;  // app dlopens libplugin.so, which defines helper and needs libb.so, which calls its own
  Binary plugin = elf("libplugin.so");
  plugin.symbols = {def("helper")};
  size_t p = t.g.add("/opt/lib/libplugin.so", std::move(plugin));
  t.g.graph.edges.clear();
  t.g.edge(t.app, "libplugin.so", p, How::Runpath, EdgeKind::Dlopen);
  t.g.edge(p, "libb.so", t.b);
  t.g.root({t.app, p, t.b});
  CheckRun run;
  auto found = run.run(t.g.graph, interposed);
  REQUIRE(found.size() == 1);
  CHECK(found[0].message.find("/opt/lib/libb.so calls or refers to 1 symbol of its own") == 0);
  CHECK(found[0].message.find("bind to libplugin.so's: helper") != std::string::npos);
}

TEST_CASE("symbol-interposed: own references that bind at home, or elsewhere on purpose, are quiet") {
  CheckRun run;
  auto quiet_after_liba = [&](OwnCall t) {  // libb.so's own references, liba.so first in the scope
    t.g.root({t.app, t.a, t.b});
    return run.run(t.g.graph, interposed).empty();
  };
  SUBCASE("the object comes first") {
    OwnCall t;
    t.g.root({t.app, t.b, t.a});
    CHECK(run.run(t.g.graph, interposed).empty());
  }
  SUBCASE("no relocation names it (-Bsymbolic, or never called)") { CHECK(quiet_after_liba(OwnCall(def("helper")))); }
  SUBCASE("weak (vague linkage), protected, or a non-default version") {
    Symbol protected_helper = own_call("helper");
    protected_helper.visibility = 3;
    Symbol old_version = own_call("helper");
    old_version.hidden = true;
    for (Symbol helper : {own_call("helper", SymbolBinding::Weak), protected_helper, old_version})
      CHECK(quiet_after_liba(OwnCall(helper)));
  }
  SUBCASE("DT_SYMBOLIC: the object looks in itself first") {
    CHECK(quiet_after_liba(OwnCall(own_call("helper"), "libb.so", true)));
  }
  SUBCASE("a symbol the linker defines in every object") { CHECK(quiet_after_liba(OwnCall(own_call("_end")))); }
  SUBCASE("the C++ runtime: a module's static copy of libstdc++'s parts takes libstdc++'s own calls") {
    CHECK(quiet_after_liba(OwnCall(own_call("helper"), "libstdc++.so.6")));
  }
  SUBCASE("two plugins opened with dlopen: neither is in the other's scope") {
    OwnCall t;
    Binary one = elf("libplugone.so.1"), two = elf("libplugtwo.so.1");
    one.symbols = {own_call("plugin_helper")};
    two.symbols = {own_call("plugin_helper")};
    size_t p1 = t.g.add("/opt/lib/libplugone.so.1", std::move(one)), p2 = t.g.add("/opt/lib/libplugtwo.so.1", std::move(two));
    t.g.edge(t.app, "libplugone.so.1", p1, How::Runpath, EdgeKind::Dlopen);
    t.g.edge(t.app, "libplugtwo.so.1", p2, How::Runpath, EdgeKind::Dlopen);
    t.g.root({t.app, t.b, t.a, p1, p2});  // libb.so first: only the plugins could be reported
    CHECK(run.run(t.g.graph, interposed).empty());
  }
}

namespace {

struct FloorGraph {
  GraphBuilder g;
  size_t app = 0, bundled = 0, system = 0;
  FloorGraph() {
    Binary a = elf(std::nullopt, true);
    a.version_needs = {verneed("libc.so.6", "GLIBC_2.2.5", 2), verneed("libc.so.6", "GLIBC_2.34", 3),
                       verneed("libstdc++.so.6", "GLIBCXX_3.4.30", 4), verneed("libc.so.6", "GLIBC_PRIVATE", 5)};
    a.symbols = {ref("printf", "GLIBC_2.2.5", "libc.so.6", 2), ref("pthread_create", "GLIBC_2.34", "libc.so.6", 3),
                 ref("__libc_start_main", "GLIBC_2.34", "libc.so.6", 3),
                 ref("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE10_M_replaceEmmPKcm",
                     "GLIBCXX_3.4.30", "libstdc++.so.6", 4)};
    Binary b = elf("libbundled.so");
    b.version_needs = {verneed("libc.so.6", "GLIBC_2.33", 2)};
    b.symbols = {ref("stat64", "GLIBC_2.33", "libc.so.6", 2)};
    Binary s = elf("libsystem.so");
    s.version_needs = {verneed("libc.so.6", "GLIBC_2.36", 2)};
    app = g.add("/opt/app", a);
    bundled = g.add("/opt/lib/libbundled.so", b);
    system = g.add("/usr/lib/x86_64-linux-gnu/libsystem.so", s);
    g.edge(app, "libbundled.so", bundled, How::Runpath);
    g.edge(app, "libsystem.so", system, How::LdSoCache);
    g.root({app, bundled, system});
  }
};

}  // namespace

TEST_CASE("version floors: the highest versions the program and its bundled libraries need") {
  FloorGraph f;
  CheckRun run;
  auto found = run.run(f.g.graph, floors);
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "version-floor");
  CHECK(found[0].severity == Severity::Info);
  CHECK(found[0].message.find("glibc >= 2.34") != std::string::npos);  // not 2.36: that library comes from the system
  CHECK(found[0].message.find("GLIBCXX_3.4.30 (by /opt/app)") != std::string::npos);
}

TEST_CASE("symbol-too-new names every symbol above --target-glibc") {
  FloorGraph f;
  CheckRun run;
  run.target.glibc = "2.32";
  auto found = with_code(run.run(f.g.graph, floors), "symbol-too-new");
  REQUIRE(found.size() == 2);
  CHECK(found[0].severity == Severity::Error);
  CHECK(found[0].object == f.app);
  CHECK(found[0].message.find("GLIBC_2.34") != std::string::npos);
  CHECK(found[0].message.find("pthread_create") != std::string::npos);
  CHECK(found[0].message.find("__libc_start_main") != std::string::npos);
  CHECK(found[1].object == f.bundled);
  CHECK(found[1].message.find("stat64") != std::string::npos);

  run.target.glibc = "2.34";
  CHECK(with_code(run.run(f.g.graph, floors), "symbol-too-new").empty());
}

TEST_CASE("--target NAME uses the baseline's glibc and libstdc++ versions") {
  FloorGraph f;
  CheckRun run;
  run.target.baseline = "debian-11";
  auto found = with_code(run.run(f.g.graph, floors), "symbol-too-new");
  REQUIRE(found.size() == 3);
  bool glibcxx = false;
  for (const Finding& x : found) glibcxx = glibcxx || x.message.find("GLIBCXX_3.4.30") != std::string::npos;
  CHECK(glibcxx);
  run.target.baseline = "debian-12";
  CHECK(with_code(run.run(f.g.graph, floors), "symbol-too-new").empty());
  run.target.baseline = "no-such-distro";
  CHECK(with_code(run.run(f.g.graph, floors), "target-unknown").size() == 1);
}

TEST_CASE("the baseline table has a source on every row") {
  auto all = load_baselines();
  REQUIRE(all);
  CHECK(all->size() >= 10);
  for (const Baseline& b : *all) {
    CHECK(!b.source.empty());
    CHECK(!b.glibc.empty());
  }
  auto rhel8 = find_baseline("rhel-8");
  REQUIRE(rhel8);
  CHECK(rhel8->glibc == "2.28");
  CHECK(find_baseline("manylinux2014")->glibc == "2.17");
}

TEST_CASE("objects opened by dlopen do not serve the program's references, but see the global scope") {
  GraphBuilder g;
  Binary app = elf(std::nullopt, true);
  app.symbols = {def("host_api"), ref("plugin_only", "", "", 1, SymbolType::Object)};
  Binary plugin = elf("libplugin.so");
  plugin.symbols = {def("plugin_only", "", 1, false, SymbolType::Object), ref("host_api"), ref("nowhere")};
  plugin.dt_flags = kDfBindNow;
  size_t a = g.add("/opt/app", app), p = g.add("/opt/libplugin.so", plugin);
  g.edge(a, "libplugin.so", p, How::Runpath, EdgeKind::Dlopen);
  g.root({a, p});
  CheckRun run;
  auto found = run.run(g.graph, undefined);
  REQUIRE(found.size() == 2);
  CHECK(found[0].object == a);  // plugin_only: the dlopened copy is not in the global scope
  CHECK(found[0].severity == Severity::Error);
  CHECK(found[1].object == p);  // nowhere; host_api binds to the program
  CHECK(found[1].message.find("undefined symbol: nowhere") != std::string::npos);
  CHECK(found[1].message.find("dlopen call fails") != std::string::npos);
  CHECK(found[0].fix == "add libplugin.so to /opt/app's NEEDED (link it with -l), or preload it: /opt/app is loaded at "
                        "start-up, before any dlopen");
}

TEST_CASE("a library missing under a dlopened object stops that dlopen, not the program's own binding") {
  GraphBuilder g;
  Binary app = elf(std::nullopt, true);
  app.symbols = {ref("gone_api", "", "", 1, SymbolType::Object)};
  Binary plugin = elf("libplugin.so");
  plugin.symbols = {ref("plugin_needs")};
  size_t a = g.add("/opt/app", app), p = g.add("/opt/libplugin.so", plugin);
  g.edge(a, "libplugin.so", p, How::Runpath, EdgeKind::Dlopen);
  g.edge(p, "libmpi.so.40", std::nullopt, How::NotFound);
  g.root({a, p});
  CheckRun run;
  auto found = run.run(g.graph, undefined);
  REQUIRE(found.size() == 1);  // plugin_needs may come from the missing libmpi: not judged
  CHECK(found[0].object == a);
  CHECK(found[0].message.find("undefined symbol: gone_api") != std::string::npos);
}

TEST_CASE("one dlopen's missing library does not hide another dlopen's undefined symbols") {
  GraphBuilder g;
  Binary app = elf(std::nullopt, true);
  Binary mpi_plugin = elf("libmpi_plugin.so"), other = elf("libother.so"), shared = elf("libshared.so");
  mpi_plugin.symbols = {ref("maybe_from_mpi"), def("mpi_plugin_api")};
  other.symbols = {ref("other_needs"), def("other_api")};
  shared.symbols = {ref("shared_needs"), ref("other_api"), ref("mpi_plugin_api")};
  size_t a = g.add("/opt/app", app), m = g.add("/opt/libmpi_plugin.so", mpi_plugin), o = g.add("/opt/libother.so", other),
         s = g.add("/opt/libshared.so", shared);
  g.edge(a, "libmpi_plugin.so", m, How::Runpath, EdgeKind::Dlopen);
  g.edge(a, "libother.so", o, How::Runpath, EdgeKind::Dlopen);
  g.edge(m, "libmpi.so.40", std::nullopt, How::NotFound);
  g.edge(m, "libshared.so", s);  // shared by both plugins: the second dlopen loads and binds it
  g.edge(o, "libshared.so", s, How::AlreadyLoaded);
  g.root({a, m, o, s});
  CheckRun run;
  auto found = run.run(g.graph, undefined);
  std::set<std::string> named;
  for (const Finding& f : found) named.insert(f.message.substr(f.message.find("undefined symbol: ") + 18, 12));
  // maybe_from_mpi: its dlopen fails first, and unloads libmpi_plugin.so; libother.so's dlopen loads
  // libshared.so again, in its own scope, where other_api is and mpi_plugin_api is not
  CHECK(named == std::set<std::string>{"other_needs ", "shared_needs", "mpi_plugin_a"});
  for (const Finding& f : found)
    if (f.message.find("mpi_plugin_api") != std::string::npos)
      CHECK(f.message.find("no loaded object defines it") != std::string::npos);  // not the unloaded library
}

namespace {

// app dlopens libone.so (which needs libonedep.so) and then libtwo.so, each RTLD_LOCAL.
struct Siblings {
  GraphBuilder g;
  size_t app = 0, one = 0, onedep = 0, two = 0;
  explicit Siblings(std::vector<Symbol> two_symbols, bool two_needs_onedep = false,
                    std::vector<Symbol> one_symbols = {def("one_data", "", 1, false, SymbolType::Object)}) {
    Binary program = elf(std::nullopt, true);
    program.symbols = {def("host_api")};
    Binary first = elf("libone.so"), dep = elf("libonedep.so"), second = elf("libtwo.so");
    first.symbols = std::move(one_symbols);
    dep.symbols = {def("onedep_api")};
    second.symbols = std::move(two_symbols);
    second.dt_flags = kDfBindNow;
    app = g.add("/opt/app", std::move(program));
    one = g.add("/opt/lib/libone.so", std::move(first));
    onedep = g.add("/opt/lib/libonedep.so", std::move(dep));
    two = g.add("/opt/lib/libtwo.so", std::move(second));
    g.edge(app, "libone.so", one, How::Runpath, EdgeKind::Dlopen);
    g.edge(one, "libonedep.so", onedep);
    g.edge(app, "libtwo.so", two, How::Runpath, EdgeKind::Dlopen);
    if (two_needs_onedep) g.edge(two, "libonedep.so", onedep, How::AlreadyLoaded);
    g.root({app, one, onedep, two});
  }
};

std::set<std::string> undefined_names(const std::vector<Finding>& found) {
  std::set<std::string> names;
  for (const Finding& f : found) {
    size_t at = f.message.find("undefined symbol: ");
    if (at != std::string::npos) names.insert(f.message.substr(at + 18, f.message.find(' ', at + 18) - at - 18));
  }
  return names;
}

}  // namespace

TEST_CASE("undefined-symbol: a library dlopen opens sees the global scope and its own search list, not another dlopen's") {
  CheckRun run;
  SUBCASE("another dlopen's library and its dependencies are out of scope") {
    Siblings t({ref("one_data", "", "", 1, SymbolType::Object), ref("onedep_api"), ref("host_api")});
    auto found = run.run(t.g.graph, undefined);
    CHECK(undefined_names(found) == std::set<std::string>{"one_data", "onedep_api"});
    REQUIRE(!found.empty());
    CHECK(found[0].object == t.two);
    CHECK(found[0].message.find("/opt/lib/libone.so defines it, but a dlopen of its own loads it, outside "
                                "/opt/lib/libtwo.so's lookup scope") != std::string::npos);
    CHECK(found[0].fix.find("add libone.so to /opt/lib/libtwo.so's NEEDED") == 0);
  }
  SUBCASE("a library it NEEDs is in its search list, though another dlopen loaded it first") {
    Siblings t({ref("onedep_api")}, true);
    CHECK(run.run(t.g.graph, undefined).empty());
  }
  SUBCASE("a library it opens with dlopen itself is in neither's scope") {
    Siblings t({ref("one_data", "", "", 1, SymbolType::Object)});
    t.g.graph.edges.clear();
    t.g.edge(t.app, "libone.so", t.one, How::Runpath, EdgeKind::Dlopen);
    t.g.edge(t.one, "libtwo.so", t.two, How::Runpath, EdgeKind::Dlopen);
    t.g.root({t.app, t.one, t.two});
    CHECK(undefined_names(run.run(t.g.graph, undefined)) == std::set<std::string>{"one_data"});
  }
}

TEST_CASE("undefined-symbol: a library two dlopens load binds in both their search lists (update_scopes; their order is unknown)") {
  GraphBuilder g;  // app dlopens liba.so and libb.so, which both NEED libc_shared.so; only libb.so's libd.so defines d_api
  Binary app = elf(std::nullopt, true), first = elf("liba.so"), second = elf("libb.so"), shared = elf("libc_shared.so"),
         defining = elf("libd.so");
  shared.symbols = {ref("d_api")};
  defining.symbols = {def("d_api")};
  size_t a = g.add("/opt/app", app), la = g.add("/opt/liba.so", first), lb = g.add("/opt/libb.so", second),
         lc = g.add("/opt/libc_shared.so", shared), ld = g.add("/opt/libd.so", defining);
  g.edge(a, "liba.so", la, How::Runpath, EdgeKind::Dlopen);
  g.edge(la, "libc_shared.so", lc);
  g.edge(a, "libb.so", lb, How::Runpath, EdgeKind::Dlopen);
  g.edge(lb, "libc_shared.so", lc, How::AlreadyLoaded);
  g.edge(lb, "libd.so", ld);
  g.root({a, la, lc, lb, ld});
  CheckRun run;
  CHECK(run.run(g.graph, undefined).empty());
  SymbolIndex symbols(g.graph);
  const std::vector<size_t>& scope = symbols.scope_for(0, lc);
  CHECK(scope == std::vector<size_t>{a, la, lc, lb, lc, ld});  // liba.so's list, then libb.so's
  CHECK(symbols.scope_for(0, la) == std::vector<size_t>{a, la, lc});
}

TEST_CASE("depscan symbol: each of two libraries opened by separate dlopens binds its own uses to its own copy") {
  Siblings t({own_call("plugin_helper")}, false, {own_call("plugin_helper")});
  SymbolIndex symbols(t.g.graph);
  auto found = symbol_provenance(symbols, "plugin_helper");
  REQUIRE(found.size() == 1);
  REQUIRE(found[0].uses.size() == 2);
  for (const SymbolSite& use : found[0].uses) {
    REQUIRE(use.bound);
    CHECK(use.bound->object == use.object);
  }
}

TEST_CASE("symbol-interposed: copies of the C++ runtime's std:: functions are quiet among themselves, not over libstdc++.so.6") {
  const std::string throw_fn = "_ZSt28__throw_bad_array_new_lengthv";
  GraphBuilder g;  // librogue.so and libc10.so both carry copies; librogue.so comes first
  Binary app = elf(std::nullopt, true), rogue = elf("librogue.so"), c10 = elf("libc10.so"), user = elf("libuser.so"),
         prog = elf("libprog.so"), cxx = elf("libstdc++.so.6");
  const std::string old_abi_swap = "_ZNSs4swapERSs", libcxx_fn = "_ZNSt3__112__next_primeEm";  // libc++'s std::__1
  rogue.symbols = {def(throw_fn), def("cpuinfo_isa"), def(old_abi_swap), def(libcxx_fn)};
  c10.symbols = {own_call(throw_fn), own_call("cpuinfo_isa"), def(old_abi_swap), def(libcxx_fn)};
  user.symbols = {ref(throw_fn), ref("cpuinfo_isa"), ref(old_abi_swap), ref(libcxx_fn)};
  prog.symbols = {ref(throw_fn, "GLIBCXX_3.4.29", "libstdc++.so.6", 2)};
  prog.version_needs = {verneed("libstdc++.so.6", "GLIBCXX_3.4.29", 2)};
  cxx.symbols = {def(throw_fn, "GLIBCXX_3.4.29", 2)};
  cxx.version_defs = {verdef("libstdc++.so.6", 1, true), verdef("GLIBCXX_3.4.29", 2)};
  size_t a = g.add("/opt/app", app), r = g.add("/opt/lib/librogue.so", rogue), c = g.add("/opt/lib/libc10.so", c10),
         u = g.add("/opt/lib/libuser.so", user), p = g.add("/opt/lib/libprog.so", prog), s = g.add("/usr/lib/libstdc++.so.6", cxx);
  for (auto [to, name] : {std::pair{r, "librogue.so"}, {c, "libc10.so"}, {u, "libuser.so"}, {p, "libprog.so"}}) g.edge(a, name, to);
  g.edge(u, "libc10.so", c, How::AlreadyLoaded);
  g.edge(p, "libstdc++.so.6", s);
  g.root({a, r, c, u, p, s});
  CheckRun run;
  auto found = run.run(g.graph, interposed);
  std::vector<std::string> messages;
  for (const Finding& f : found) messages.push_back(f.message);
  std::sort(messages.begin(), messages.end());
  REQUIRE(messages.size() == 3);
  CHECK(messages[0] == "/opt/lib/libc10.so calls or refers to 1 symbol of its own through the lookup scope, and "
                       "/opt/lib/librogue.so, earlier in that scope, defines it too: those references bind to "
                       "librogue.so's: cpuinfo_isa");
  CHECK(messages[1].find("1 symbol that /opt/lib/libprog.so was linked against from /usr/lib/libstdc++.so.6 bind to "
                         "/opt/lib/librogue.so") == 0);
  CHECK(messages[2] == "2 symbols that /opt/lib/libuser.so was linked against from /opt/lib/libc10.so bind to "
                       "/opt/lib/librogue.so, loaded earlier: _ZNSt3__112__next_primeEm, cpuinfo_isa");
}
