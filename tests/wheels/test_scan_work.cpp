// The report keeps what the scan worked from (ScanReport::scan_work), and the CLI never frees it;
// the directories a wheel was unpacked into must still be gone when run_scan returns.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "analyzer/scan/scan.h"
#include "support.h"

using namespace depscan;
using namespace depscan::test;
namespace fs = std::filesystem;

TEST_CASE("a wheel's unpacked directory is removed when run_scan returns, while the report keeps the scan's work") {
  TempDir tmp("scan-work-tmpdir");
  const char* old = std::getenv("TMPDIR");
  std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmp.str().c_str(), 1);
  ScanOptions options;
  options.inputs = {fixtures_dir() + "/wheels/nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl"};
  ScanReport report = run_scan(options);
  if (old) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");
  REQUIRE(report.scan_work);
  CHECK_FALSE(report.result.graph.objects.empty());
  CHECK(fs::is_empty(tmp.path()));
  std::weak_ptr<const void> work = report.scan_work;
  report = ScanReport();
  CHECK(work.expired());  // freed with the report when the caller frees it
}

TEST_CASE("the matrix is decoded while the files are read and resolved, and its error still comes first") {
  TempDir tmp("scan-matrix-order");
  std::string bad_matrix = tmp.str() + "/matrix.json";
  std::ofstream(bad_matrix) << "{ not json";
  ScanOptions options;
  options.matrix_path = bad_matrix;
  options.inputs = {tmp.str() + "/missing-program", "/bin/true"};
  ScanReport report = run_scan(options);
  const auto& findings = report.result.findings;
  REQUIRE(findings.size() >= 2);
  CHECK(findings[0].code == "matrix-error");
  CHECK(findings[0].message.find("matrix.json") != std::string::npos);
  CHECK(findings[1].path == tmp.str() + "/missing-program");
  CHECK(report.unreadable_inputs == std::vector<std::string>{tmp.str() + "/missing-program"});
  REQUIRE(report.result.graph.roots.size() == 1);  // the scan went on past both
  CHECK(report.result.graph.objects[report.result.graph.roots[0]].path == "/bin/true");
}
