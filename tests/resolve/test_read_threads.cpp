// A scan's answer does not depend on how many threads read its inputs (--jobs).
#include <doctest/doctest.h>

#include "analyzer/scan/scan.h"
#include "report/report.h"
#include "support.h"

using namespace depscan;

namespace {

std::string json_of_scan(const std::string& dir, unsigned threads) {
  ScanOptions options;
  options.inputs = {dir};
  options.read_threads = threads;
  return render("json", run_scan(options), TextOptions{});
}

}  // namespace

TEST_CASE("one and two reading threads give the same report") {
  for (const char* area : {"ldso", "symbols", "resolve"}) {
    std::string dir = test::fixtures_dir() + "/" + area;
    CAPTURE(dir);
    std::string one = json_of_scan(dir, 1), two = json_of_scan(dir, 2);
    CHECK(one.find("\"objects\"") != std::string::npos);
    CHECK(one.size() > 1000);
    CHECK(one == two);
  }
}
