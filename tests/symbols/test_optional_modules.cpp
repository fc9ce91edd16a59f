// Extension modules a distribution imports only inside try/except ImportError (matrix
// optional_modules): numba's TBB and OpenMP threading layers fall back to its own workqueue, CuPy
// goes on without cuTENSOR.
#include <doctest/doctest.h>

#include "analyzer/check/optional_modules.h"
#include "symbols/graph_builder.h"

using namespace depscan;
using namespace depscan::test;

namespace {

Distribution numba() {
  Distribution d;
  d.name = "numba";
  d.version = "0.68.1";
  d.site_packages = "/sp";
  d.files = {"/sp/numba/np/ufunc/tbbpool.cpython-311-x86_64-linux-gnu.so",
             "/sp/numba/np/ufunc/workqueue.cpython-311-x86_64-linux-gnu.so"};
  return d;
}

Finding error_about(size_t object, const std::string& message) {
  Finding f;
  f.code = "library-not-found";
  f.severity = Severity::Error;
  f.object = object;
  f.message = message;
  f.fix = "install it";
  return f;
}

// Two library roots of a distribution, `optional` and `other` (site-packages /sp), each with a
// library-not-found error, after apply_optional_modules.
std::vector<Finding> applied(const Distribution& installed, const std::string& optional, const std::string& optional_missing,
                             const std::string& other) {
  GraphBuilder g;
  size_t first = g.add("/sp/" + optional, elf());
  size_t second = g.add("/sp/" + other, elf());
  g.root({first});
  g.root({second});
  CheckRun run;
  auto matrix = load_embedded_matrix();
  REQUIRE(matrix.ok());
  run.matrix = *matrix;
  std::vector<Finding> findings{error_about(first, optional_missing + ": cannot open shared object file"),
                                error_about(second, "libfoo.so.1: cannot open shared object file")};
  CheckContext ctx{g.graph, run.matrix, run.target, *run.fs};
  apply_optional_modules(findings, ctx, {installed});
  return findings;
}

}  // namespace

TEST_CASE("a module numba imports only for its TBB threading layer: its errors are warnings") {
  const std::string tbbpool = "numba/np/ufunc/tbbpool.cpython-311-x86_64-linux-gnu.so";
  const std::string workqueue = "numba/np/ufunc/workqueue.cpython-311-x86_64-linux-gnu.so";
  auto findings = applied(numba(), tbbpool, "libtbb.so.12", workqueue);
  CHECK(findings[0].severity == Severity::Warning);
  CHECK(findings[0].message.find("; numba 0.68.1 imports this module only for its TBB threading layer") != std::string::npos);
  CHECK(findings[0].message.ends_with("(optional)"));
  CHECK(findings[0].fix.starts_with("pip install tbb"));
  CHECK(findings[1].severity == Severity::Error);  // workqueue is numba's last resort: not optional
  CHECK(findings[1].fix == "install it");

  Distribution other = numba();
  other.name = "numba-cuda";  // another distribution's file of that name is not numba's module
  CHECK(applied(other, tbbpool, "libtbb.so.12", workqueue)[0].severity == Severity::Error);
}

TEST_CASE("CuPy's cuTENSOR module without cuTENSOR: a warning naming the fallback, for the CUDA 12 and 13 builds") {
  const std::string cutensor = "cupy_backends/cuda/libs/cutensor.cpython-311-x86_64-linux-gnu.so";
  const std::string cusparse = "cupy_backends/cuda/libs/cusparse.cpython-311-x86_64-linux-gnu.so";
  for (const char* major : {"12", "13"}) {
    CAPTURE(major);
    Distribution cupy;
    cupy.name = std::string("cupy-cuda") + major + "x";
    cupy.version = "14.2.0";
    cupy.site_packages = "/sp";
    cupy.files = {"/sp/" + cutensor, "/sp/" + cusparse};
    auto findings = applied(cupy, cutensor, "libcutensor.so.2", cusparse);
    CHECK(findings[0].severity == Severity::Warning);
    CHECK(findings[0].message.find("imports this module only for cuTENSOR") != std::string::npos);
    CHECK(findings[0].fix.starts_with(std::string("pip install \"cutensor-cu") + major + ">=2.3,<3\""));
    CHECK(findings[1].severity == Severity::Error);  // cuSPARSE is imported unguarded
  }
}
