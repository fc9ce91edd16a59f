// bind_in (from the few objects that define a name, by their place in the scope) must give the
// answer of bind (ld.so's walk of the scope, object by object) for every reference of every root.
#include <doctest/doctest.h>

#include <filesystem>

#include "analyzer/check/symbol_index.h"
#include "analyzer/scan/scan.h"
#include "support.h"
#include "toolchains.h"

using namespace depscan;

namespace {

size_t compare_bindings(const std::string& dir) {
  ScanOptions options;
  options.inputs = {dir};
  ScanReport report = run_scan(options);
  const Graph& graph = report.result.graph;
  SymbolIndex symbols(graph);
  size_t compared = 0;
  for (size_t root = 0; root < graph.load_order.size(); ++root)
    for (size_t o : symbols.members(root))
      for (const SymbolIndex::Reference& reference : symbols.references(o)) {
        auto walked = symbols.bind(symbols.scope_for(root, o), reference);
        auto found = symbols.bind_in(root, o, reference);
        ++compared;
        REQUIRE(walked.has_value() == found.has_value());
        if (!walked) continue;
        CHECK(walked->object == found->object);
        CHECK(walked->symbol == found->symbol);
      }
  return compared;
}

}  // namespace

TEST_CASE("bind_in and the scope walk bind every reference alike") {
  CHECK(compare_bindings(test::fixtures_dir() + "/symbols") > 100);
  if (test::present_or_skip(std::filesystem::is_directory("/usr/local/cuda/lib64"), "/usr/local/cuda/lib64"))
    CHECK(compare_bindings("/usr/local/cuda/lib64") > 10000);
}
