// search-path-working-directory: RPATH and RUNPATH entries the loader takes relative to the
// process's working directory. The loader's own reading of an empty entry is compared with the
// real loader in tests/ldso (fixtures empty_runpath_entry, empty_runpath).
#include <doctest/doctest.h>

#include "symbols/graph_builder.h"

using namespace depscan;
using namespace depscan::test;

namespace {

auto working_directory = [](const CheckContext& c, const SymbolIndex&) { return check_working_directory_search(c); };

std::vector<Finding> findings_for(std::optional<std::string> rpath, std::optional<std::string> runpath, bool musl = false) {
  GraphBuilder g;
  Binary b = elf("libx.so");
  b.rpath = std::move(rpath);
  b.runpath = std::move(runpath);
  size_t x = g.add("/opt/lib/libx.so", b);
  g.root({x});
  if (musl) g.graph.root_loaders.assign(1, RootLoader{"", std::nullopt, true});
  CheckRun run;
  return run.run(g.graph, working_directory);
}

}  // namespace

TEST_CASE("an empty or relative RPATH or RUNPATH entry searches the working directory") {
  auto stray = findings_for(std::nullopt, std::string("$ORIGIN:"));
  REQUIRE(stray.size() == 1);
  CHECK(stray[0].severity == Severity::Warning);
  CHECK(stray[0].message.find("/opt/lib/libx.so has RUNPATH '$ORIGIN:' with an empty entry 2 of 2, which") == 0);
  CHECK(stray[0].fix.find("remove the stray ':'") == 0);

  auto relative = findings_for(std::string("/opt/lib:lib/plugins"), std::nullopt);
  REQUIRE(relative.size() == 1);
  CHECK(relative[0].message.find("has RPATH '/opt/lib:lib/plugins' with the relative entry 2 of 2 'lib/plugins'") != std::string::npos);
  CHECK(relative[0].fix.find("use $ORIGIN/lib/plugins") == 0);

  for (const char* relative_token : {"$LIB/x", "$PLATFORM", "$ORIGIN_X", "$$ORIGIN/lib", "${LIB}"}) {
    CAPTURE(relative_token);
    CHECK(findings_for(std::nullopt, std::string(relative_token)).size() == 1);  // lib/x86_64-linux-gnu/x: relative
  }
  CHECK(findings_for(std::nullopt, std::string("${ORIGIN}/../lib:$ORIGIN")).empty());
  CHECK(findings_for(std::nullopt, std::string("")).empty());  // an empty list is ignored altogether
  CHECK(findings_for(std::string("$ORIGIN/../lib:/usr/lib"), std::nullopt).empty());
  CHECK(findings_for(std::string("lib"), std::string("$ORIGIN")).empty());  // RPATH beside RUNPATH is dropped
  CHECK(findings_for(std::nullopt, std::string("$ORIGIN:"), true).empty());  // musl passes over empty entries
  CHECK(findings_for(std::nullopt, std::string("lib:"), true).size() == 1);  // but not relative ones
}
