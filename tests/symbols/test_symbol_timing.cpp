// The symbol checks' own time over the CUDA library set (tens of thousands of symbols): the
// index is built once per object. A benchmark, not a test: the suite skips it; bench/stages.sh runs
// it with --no-skip and prints the figures.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "analyzer/check/symbol_index.h"
#include "analyzer/scan/scan.h"
#include "matrix/matrix.h"

using namespace depscan;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

size_t symbol_count(const Graph& g) {
  size_t n = 0;
  for (const Object& o : g.objects)
    if (o.binary) n += o.binary->symbols.size();
  return n;
}

}  // namespace

TEST_CASE("timing: the symbol checks over the CUDA libraries" * doctest::skip()) {
  ScanOptions options;
  std::error_code ec;
  const char* dir = std::getenv("DEPSCAN_CUDA_LIBS");
  for (const auto& e : fs::directory_iterator(dir ? dir : "/usr/local/cuda/lib64", ec)) {
    std::string name = e.path().filename().string();
    if (!e.is_symlink() && e.is_regular_file() && name.find(".so") != std::string::npos) options.inputs.push_back(e.path().string());
  }
  if (options.inputs.empty()) return;  // no CUDA toolkit here
  auto start = std::chrono::steady_clock::now();
  ScanReport report = run_scan(options);
  double whole = seconds_since(start);
  const Graph& graph = report.result.graph;

  Matrix matrix;
  auto fs = make_real_fs();
  CheckContext ctx{graph, matrix, options.target, *fs};
  start = std::chrono::steady_clock::now();
  SymbolIndex symbols(graph);
  double index = seconds_since(start);
  start = std::chrono::steady_clock::now();
  auto versions = check_symbol_versions(ctx, symbols);
  auto undefined = check_undefined_symbols(ctx, symbols);
  auto interposed = check_interposition(ctx, symbols);
  auto floors = check_target_floors(ctx);
  double checks = seconds_since(start);

  MESSAGE(options.inputs.size() << " CUDA libraries, " << graph.objects.size() << " objects, "
          << symbol_count(graph) << " dynamic symbols: whole scan " << whole << " s; symbol index "
          << index << " s; version, undefined, interposition and floor checks " << checks << " s");
  CHECK(symbol_count(graph) > 10000);
}
