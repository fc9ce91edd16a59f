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

}  // namespace

TEST_CASE("a module numba imports only for its TBB threading layer: its errors are warnings") {
  GraphBuilder g;
  size_t tbbpool = g.add("/sp/numba/np/ufunc/tbbpool.cpython-311-x86_64-linux-gnu.so", elf());
  size_t workqueue = g.add("/sp/numba/np/ufunc/workqueue.cpython-311-x86_64-linux-gnu.so", elf());
  g.root({tbbpool});
  g.root({workqueue});
  CheckRun run;
  auto matrix = load_embedded_matrix();
  REQUIRE(matrix.ok());
  run.matrix = *matrix;
  std::vector<Finding> findings{error_about(tbbpool, "libtbb.so.12: cannot open shared object file"),
                                error_about(workqueue, "libfoo.so.1: cannot open shared object file")};
  std::vector<Distribution> installed{numba()};
  CheckContext ctx{g.graph, run.matrix, run.target, *run.fs};
  apply_optional_modules(findings, ctx, installed);
  CHECK(findings[0].severity == Severity::Warning);
  CHECK(findings[0].message.find("; numba 0.68.1 imports this module only for its TBB threading layer") != std::string::npos);
  CHECK(findings[0].message.ends_with("(optional)"));
  CHECK(findings[0].fix.starts_with("pip install tbb"));
  CHECK(findings[1].severity == Severity::Error);  // workqueue is numba's last resort: not optional
  CHECK(findings[1].fix == "install it");

  installed[0].name = "numba-cuda";  // another distribution's file of that name is not numba's module
  findings[0].severity = Severity::Error;
  findings[0].message = "x";
  apply_optional_modules(findings, ctx, installed);
  CHECK(findings[0].severity == Severity::Error);
}

TEST_CASE("CuPy's cuTENSOR module without cuTENSOR: a warning naming the fallback, for the CUDA 12 and 13 builds") {
  for (const char* major : {"12", "13"}) {
    CAPTURE(major);
    GraphBuilder g;
    size_t module = g.add("/sp/cupy_backends/cuda/libs/cutensor.cpython-311-x86_64-linux-gnu.so", elf());
    size_t cusparse = g.add("/sp/cupy_backends/cuda/libs/cusparse.cpython-311-x86_64-linux-gnu.so", elf());
    g.root({module});
    g.root({cusparse});
    CheckRun run;
    auto matrix = load_embedded_matrix();
    REQUIRE(matrix.ok());
    run.matrix = *matrix;
    std::vector<Finding> findings{error_about(module, "libcutensor.so.2: cannot open shared object file"),
                                  error_about(cusparse, "libcusparse.so.12: cannot open shared object file")};
    Distribution cupy;
    cupy.name = std::string("cupy-cuda") + major + "x";
    cupy.version = "14.2.0";
    cupy.site_packages = "/sp";
    cupy.files = {"/sp/cupy_backends/cuda/libs/cutensor.cpython-311-x86_64-linux-gnu.so",
                  "/sp/cupy_backends/cuda/libs/cusparse.cpython-311-x86_64-linux-gnu.so"};
    std::vector<Distribution> installed{cupy};
    CheckContext ctx{g.graph, run.matrix, run.target, *run.fs};
    apply_optional_modules(findings, ctx, installed);
    CHECK(findings[0].severity == Severity::Warning);
    CHECK(findings[0].message.find("imports this module only for cuTENSOR") != std::string::npos);
    CHECK(findings[0].fix.starts_with(std::string("pip install \"cutensor-cu") + major + ">=2.3,<3\""));
    CHECK(findings[1].severity == Severity::Error);  // cuSPARSE is imported unguarded
  }
}
