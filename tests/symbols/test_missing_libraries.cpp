// library-not-found over hand-built graphs: one finding per requester and name across roots, and a
// warning where the failure is one root's view only (a grafted library that every program loading
// it finds through that program's RPATH; a plugin opened only on demand), and one info finding for a
// library its wheel's own Python code loads by path first.
#include <doctest/doctest.h>

#include "analyzer/check/shipped_libraries.h"
#include "symbols/graph_builder.h"

using namespace depscan;
using namespace depscan::test;

namespace {

auto missing = [](const CheckContext& c, const SymbolIndex&) { return check_missing_libraries(c); };

// auditwheel's layout: the module's DT_RPATH is inherited by its grafted libgfortran (object 1),
// which alone cannot find its libquadmath; root 0 is the module, root 1 (added by the caller) is
// libgfortran on its own, whose last edge is the failing search.
GraphBuilder grafted_scipy() {
  GraphBuilder g;
  size_t module = g.add("/sp/scipy/_fblas.so", elf());
  size_t gfortran = g.add("/sp/scipy.libs/libgfortran-1.so.5", elf("libgfortran-1.so.5"));
  size_t quadmath = g.add("/sp/scipy.libs/libquadmath-2.so.0", elf("libquadmath-2.so.0"));
  g.edge(module, "libgfortran-1.so.5", gfortran, How::Rpath, EdgeKind::Needed, 0);
  g.edge(gfortran, "libquadmath-2.so.0", quadmath, How::Rpath, EdgeKind::Needed, 0);
  g.root({module, gfortran, quadmath});
  g.edge(gfortran, "libquadmath-2.so.0", std::nullopt, How::NotFound, EdgeKind::Needed, 1);
  return g;
}

}  // namespace

TEST_CASE("library-not-found: the same missing library under several roots is one finding") {
  GraphBuilder g;
  size_t app1 = g.add("/opt/app1", elf(std::nullopt, true));
  size_t app2 = g.add("/opt/app2", elf(std::nullopt, true));
  size_t lib = g.add("/opt/lib/libshared.so", elf("libshared.so"));
  g.edge(app1, "libshared.so", lib, How::Runpath, EdgeKind::Needed, 0);
  g.edge(lib, "libgone.so.1", std::nullopt, How::NotFound, EdgeKind::Needed, 0);
  g.root({app1, lib});
  g.edge(app2, "libshared.so", lib, How::Runpath, EdgeKind::Needed, 1);
  g.edge(lib, "libgone.so.1", std::nullopt, How::NotFound, EdgeKind::Needed, 1);
  g.root({app2, lib});
  CheckRun run;
  auto found = run.run(g.graph, missing);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Error);
  CHECK(found[0].message == "libgone.so.1: cannot open shared object file: No such file or directory (needed by "
                            "/opt/lib/libshared.so)");
}

TEST_CASE("library-not-found: a library another root finds is a warning on its own root") {
  GraphBuilder g = grafted_scipy();
  g.root({1});
  CheckRun run;
  auto found = run.run(g.graph, missing);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Warning);
  CHECK(found[0].message.find("; it is found when /sp/scipy.libs/libgfortran-1.so.5 is loaded by /sp/scipy/_fblas.so") !=
        std::string::npos);
}

TEST_CASE("library-not-found: a grafted library another root finds needs no preload, though its wheel ships it") {
  // faiss-gpu-cu12's faiss_gpu_cu12.libs: the module's RPATH finds the grafted libraries, so the
  // note for libraries that Python code must load first does not apply.
  GraphBuilder g = grafted_scipy();
  g.graph.edges.back().tried.push_back(Attempt{"/usr/lib/libquadmath-2.so.0", "not found"});
  g.root({1});
  Distribution scipy;
  scipy.name = "scipy";
  scipy.version = "1.0";
  scipy.files = {"/sp/scipy.libs/libquadmath-2.so.0"};
  std::vector<Distribution> installed{scipy};
  ShippedLibraries shipped(&installed);
  CheckRun run;
  run.shipped = &shipped;
  auto found = run.run(g.graph, missing);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Warning);
  CHECK(found[0].message.find("it is found when /sp/scipy.libs/libgfortran-1.so.5 is loaded by") != std::string::npos);
  CHECK(found[0].message.find("where the loader does not look") == std::string::npos);

  g.graph.roots.erase(g.graph.roots.begin());  // no root loads it through the module: it must be loaded first
  g.graph.load_order.erase(g.graph.load_order.begin());
  g.graph.edges.erase(g.graph.edges.begin(), g.graph.edges.begin() + 2);
  g.graph.edges.back().root = 0;
  auto alone = run.run(g.graph, missing);
  REQUIRE(alone.size() == 1);
  CHECK(alone[0].message.find("scipy 1.0 installs it at /sp/scipy.libs/libquadmath-2.so.0, where the loader does not look") !=
        std::string::npos);
}

TEST_CASE("library-not-found: a root the scan opens only through an optional dlopen is a plugin: a warning") {
  const char* rows = R"({"schema": "depscan-matrix/libraries/1", "components": [], "cudnn_series": [],
                      "pip_packages": {"note": "", "source": "test", "rows": []}, "dlopen": [{"from": ["libhost.so.3"], "opens": ["plugin_mpi.so.3"], "optional": true,
                                      "source": "test"}]})";
  GraphBuilder g;
  size_t host = g.add("/opt/lib/libhost.so.3", elf("libhost.so.3"));
  size_t plugin = g.add("/opt/lib/plugin_mpi.so.3", elf("plugin_mpi.so.3"));
  g.edge(host, "plugin_mpi.so.3", plugin, How::Runpath, EdgeKind::Dlopen, 0);
  g.root({host, plugin});
  g.edge(plugin, "libmpi.so.40", std::nullopt, How::NotFound, EdgeKind::Needed, 0);
  g.edge(plugin, "libmpi.so.40", std::nullopt, How::NotFound, EdgeKind::Needed, 1);
  g.root({plugin});
  CheckRun run;
  auto loaded = run.matrix.load_document(rows, "test");
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error()));
  auto found = run.run(g.graph, missing);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Warning);
  CHECK(found[0].message.find("only when") != std::string::npos);
  CHECK(found[0].message.find("(optional)") != std::string::npos);
}

TEST_CASE("library-not-found: a program that cannot start stays an error, however many others find the library") {
  GraphBuilder g;
  size_t app1 = g.add("/opt/app1", elf(std::nullopt, true));
  size_t app2 = g.add("/opt/app2", elf(std::nullopt, true));
  size_t lib = g.add("/opt/lib/libshared.so", elf("libshared.so"));
  size_t gone = g.add("/opt/app1/lib/libgone.so.1", elf("libgone.so.1"));
  g.edge(app1, "libshared.so", lib, How::Runpath, EdgeKind::Needed, 0);
  g.edge(lib, "libgone.so.1", gone, How::Rpath, EdgeKind::Needed, 0);  // through app1's RPATH
  g.root({app1, lib, gone});
  g.edge(app2, "libshared.so", lib, How::Runpath, EdgeKind::Needed, 1);
  g.edge(lib, "libgone.so.1", std::nullopt, How::NotFound, EdgeKind::Needed, 1);
  g.root({app2, lib});
  CheckRun run;
  auto found = run.run(g.graph, missing);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Error);
  CHECK(found[0].message.find("it is found when") == std::string::npos);
}

TEST_CASE("library-not-found: a library its wheel's own Python code loads by path first is one info finding") {
  // RAPIDS: librmm-cu12's librmm/load.py loads lib64/librmm.so before rmm imports its modules.
  GraphBuilder g;
  size_t buffer = g.add("/sp/rmm/pylibrmm/device_buffer.abi3.so", elf());
  size_t stream = g.add("/sp/rmm/pylibrmm/cuda_stream.abi3.so", elf());
  size_t tool = g.add("/sp/bin/rmm_tool", elf(std::nullopt, true));
  for (size_t module : {buffer, stream, tool}) {
    size_t root = g.graph.roots.size();
    g.edge(module, "librmm.so", std::nullopt, How::NotFound, EdgeKind::Needed, root);
    g.graph.edges.back().tried.push_back(Attempt{"/usr/lib/librmm.so", "not found"});
    g.root({module});
  }
  Distribution librmm;
  librmm.name = "librmm-cu12";
  librmm.version = "26.10.0";
  librmm.site_packages = "/sp";
  librmm.files = {"/sp/librmm/lib64/librmm.so", "/sp/librmm/load.py"};
  std::vector<Distribution> installed{librmm};
  ShippedLibraries shipped(&installed);
  CheckRun run;
  auto matrix = load_embedded_matrix();
  REQUIRE(matrix.ok());
  run.matrix = *matrix;
  run.shipped = &shipped;
  auto found = run.run(g.graph, missing);
  REQUIRE(found.size() == 2);
  const Finding& program = found[0].severity == Severity::Info ? found[1] : found[0];
  const Finding& modules = found[0].severity == Severity::Info ? found[0] : found[1];
  CHECK(program.severity == Severity::Error);  // no Python code runs before a program starts
  CHECK(program.object == tool);
  CHECK(modules.severity == Severity::Info);
  CHECK(modules.message.find("librmm.so: not on the loader's search path of /sp/rmm/pylibrmm/") == 0);
  CHECK(modules.message.find(" and 1 other file; librmm-cu12 26.10.0 installs it at /sp/librmm/lib64/librmm.so and "
                             "loads it by that path first: librmm/load.py's load_library()") != std::string::npos);

  installed[0].name = "librmm-cu99";  // a distribution the matrix does not name: the note for Python code to load it first
  ShippedLibraries other(&installed);
  run.shipped = &other;
  auto unknown = run.run(g.graph, missing);
  REQUIRE(unknown.size() == 3);
  for (const Finding& f : unknown)
    CHECK(f.severity == (f.object == tool ? Severity::Error : Severity::Warning));
}

TEST_CASE("another CUDA major's copy: only of a name the majors share, the wheel's major from its name or its nvidia/cuNN path") {
  auto matrix = load_embedded_matrix();
  REQUIRE(matrix.ok());
  Distribution cu12, cu13;
  cu12.name = "nvidia-curand-cu12";  // CUDA 12's wheels end in -cu12
  cu13.name = "nvidia-curand";       // CUDA 13's install under nvidia/cu13/lib
  ShippedLibraries::Shipped curand12{&cu12, "/sp/nvidia/curand/lib/libcurand.so.10"};
  ShippedLibraries::Shipped curand13{&cu13, "/sp/nvidia/cu13/lib/libcurand.so.10"};
  CHECK(copy_for_other_major(*matrix, "libcurand.so.10", curand12, {13}) == 12);
  CHECK(copy_for_other_major(*matrix, "libcurand.so.10", curand13, {12}) == 13);
  CHECK_FALSE(copy_for_other_major(*matrix, "libcurand.so.10", curand12, {12}));
  CHECK_FALSE(copy_for_other_major(*matrix, "libcurand.so.10", curand12, {}));  // the process shows no major
  Distribution nvrtc12;
  nvrtc12.name = "nvidia-cuda-nvrtc-cu12";
  ShippedLibraries::Shipped nvrtc{&nvrtc12, "/sp/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"};
  // ONNX Runtime's CUDA 13 provider also names libnvrtc.so.12: that name wants CUDA 12's copy.
  CHECK_FALSE(copy_for_other_major(*matrix, "libnvrtc.so.12", nvrtc, {13}));
}
