// The matrix: embedded data loads and answers; bad files are refused with a clear reason;
// `depscan matrix` answers with the data's source.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "matrix/matrix.h"
#include "support.h"

using namespace depscan;
using namespace depscan::test;

namespace {

Matrix embedded() {
  auto m = load_embedded_matrix();
  REQUIRE_MESSAGE(m, (m ? "" : m.error()));
  return *m;
}

Version v(const char* text) { return *Version::parse(text); }

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  std::string path = dir.str() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("versions parse, compare and keep their spelling") {
  CHECK(v("580.65.06").str() == "580.65.06");
  CHECK(v("12.4") == v("12.4.0"));
  CHECK(v("9.19.0") > v("9.1.0"));
  CHECK(v("9.1.0.70").starts_with(v("9.1")));
  CHECK_FALSE(v("9.10.2").starts_with(v("9.1")));
  CHECK_FALSE(Version::parse("12.x"));
  CHECK_FALSE(Version::parse(""));
  CHECK_FALSE(Version::parse("1..2"));
}

TEST_CASE("a Python version's release segment drops its epoch, pre-, post-, dev- and local parts") {
  CHECK(*Version::parse_release("14.2.0.post1") == v("14.2.0"));
  CHECK(*Version::parse_release("14.0.0rc1") == v("14.0.0"));
  CHECK(*Version::parse_release("14.1.0.dev0") == v("14.1.0"));
  CHECK(*Version::parse_release("1!2.9.1+cu128") == v("2.9.1"));
  CHECK(*Version::parse_release("0.29.2") == v("0.29.2"));
  CHECK_FALSE(Version::parse_release("post1"));
  CHECK_FALSE(Version::parse_release(""));
}

TEST_CASE("a minimum release holds as CuPy's _find_compatible_wheel checks it: the same major, and at least the minimum") {
  CHECK(meets_min_version("2.16.5", "2.16.5"));
  CHECK(meets_min_version("2.21.5", "2.16.5"));
  CHECK(meets_min_version("2.17.1", "2.16.5"));
  CHECK(meets_min_version("2.16.5.post1", "2.16.5"));
  CHECK_FALSE(meets_min_version("2.14.3", "2.16.5"));
  CHECK_FALSE(meets_min_version("2.16.4", "2.16.5"));
  CHECK_FALSE(meets_min_version("3.0.0", "2.16.5"));  // another major: another soname
  CHECK_FALSE(meets_min_version("unknown", "2.16.5"));
  CHECK(meets_min_version("unknown", ""));  // no minimum
  CHECK(meets_min_version("2.17", "2.16.5"));  // missing parts are 0
  CHECK_FALSE(meets_min_version("2", "2.16.5"));
  CHECK(meets_min_version("2", "2"));
  CHECK(meets_min_version("2.16.5.9", "2.16.5"));  // only three numbers count
  CHECK_FALSE(meets_min_version("2.17rc1", "2.16.5"));  // CuPy's _parse_version raises on it
  CHECK_FALSE(meets_min_version("2.17.", "2.16.5"));
  CHECK_FALSE(meets_min_version("1!2.17.0", "2.16.5"));  // the epoch is CuPy's major
  CHECK_FALSE(meets_min_version("", "2.16.5"));
  CHECK(meets_min_version("0000000002.17.0", "2.16.5"));  // leading zeros, as Python's int() reads them
  CHECK(meets_min_version("2.100000000000000000000.0", "2.16.5"));  // no length limit
  CHECK(cupy_release_numbers("2.16") == std::array<int, 3>{2, 16, 0});
}

TEST_CASE("the embedded matrix answers the release notes' questions") {
  Matrix m = embedded();
  const DriverRow* cuda124 = m.driver_row(v("12.4"));
  REQUIRE(cuda124);
  CHECK(cuda124->linux_driver->str() == "550.54.14");
  CHECK(cuda124->windows_driver->str() == "551.61");
  CHECK(m.driver_row(v("12.6.2"))->linux_driver->str() == "560.35.03");  // Update 1/2 row
  CHECK(m.driver_row(v("12.7")) == nullptr);                              // there is no 12.7
  // minors whose first row is not x.y.0: a runtime known by its major.minor takes that first row
  REQUIRE(m.driver_row(v("10.2")));
  CHECK(m.driver_row(v("10.2"))->linux_driver->str() == "440.33");
  CHECK(m.driver_row(v("10.0"))->toolkit.str() == "10.0.130");
  CHECK(m.driver_row(v("11.0"))->toolkit.str() == "11.0.1");
  CHECK(m.driver_row(v("11.0.3"))->toolkit.str() == "11.0.3");
  CHECK(m.driver_row(v("11.0.221"))->toolkit.str() == "11.0.3");
  CHECK(m.minor_compat(12)->linux_driver->str() == "525.60.13");
  CHECK(m.minor_compat(13)->linux_driver->str() == "580.65.06");
  CHECK(m.minor_compat(10) == nullptr);
  CHECK(m.newest_toolkit_for_driver(v("565.77"), Platform::Linux)->toolkit.str() == "12.6.3");
  const ArchitectureRow* arch13 = m.architectures_for(v("13.0"));
  REQUIRE(arch13);
  CHECK(std::find(arch13->sm.begin(), arch13->sm.end(), "70") == arch13->sm.end());  // Volta removed in 13.0
  CHECK(std::find(arch13->sm.begin(), arch13->sm.end(), "110") != arch13->sm.end());
  CHECK(m.architectures_for(v("12.4"))->toolkit.str() == "12.0");
  for (const DriverRow& row : m.drivers()) CHECK_FALSE(row.source.empty());
}

TEST_CASE("GPU names, sm numbers and capabilities") {
  Matrix m = embedded();
  CHECK(m.gpu("H100")->cc.str() == "9.0");
  CHECK(m.gpu("NVIDIA GeForce RTX 4090")->sm() == 89);
  CHECK(m.gpu("NVIDIA A100-SXM4-80GB")->sm() == 80);
  CHECK(m.gpu("GB200")->sm() == 100);  // the longer name wins over B200's
  // Ada workstation cards, whose numbers look like Turing's and Blackwell's GeForce names
  CHECK(m.gpu("NVIDIA RTX 5000 Ada Generation")->sm() == 89);
  CHECK(m.gpu("NVIDIA RTX 2000 Ada Generation")->sm() == 89);
  CHECK(m.gpu("NVIDIA RTX 6000 Ada Generation")->sm() == 89);
  CHECK(m.gpu("NVIDIA GeForce RTX 5090")->sm() == 120);
  CHECK(m.gpu("NVIDIA GeForce RTX 2080 Ti")->sm() == 75);
  CHECK(m.gpu("Quadro RTX 5000")->sm() == 75);
  CHECK(m.gpu("sm_120")->sm() == 120);
  CHECK(m.gpu("8.6")->sm() == 86);
  CHECK_FALSE(m.gpu("Voodoo 3"));
}

TEST_CASE("cuDNN, frameworks and library names") {
  Matrix m = embedded();
  auto cudnn91 = m.cudnn_releases_matching(v("9.1"));
  REQUIRE(cudnn91.size() == 1);
  CHECK(cudnn91[0]->cuda_majors() == std::vector<int>{11, 12});
  for (const char* with_cuda10 : {"8.1.1", "8.5.0"}) {
    auto release = m.cudnn_releases_matching(v(with_cuda10));
    REQUIRE(release.size() == 1);
    CHECK_MESSAGE((release[0]->cuda_majors() == std::vector<int>{10, 11}), with_cuda10);
  }
  auto cudnn951 = m.cudnn_releases_matching(v("9.5.1"));
  REQUIRE(cudnn951.size() == 1);
  bool covers_11_4 = false;  // the CUDA 11.x build without static linking
  for (const CudnnBuild& b : cudnn951[0]->builds) covers_11_4 |= b.cuda_min <= v("11.4") && v("11.4") <= b.cuda_max;
  CHECK(covers_11_4);
  auto tf215 = m.frameworks_matching("tensorflow", "2.15");
  REQUIRE(tf215.size() == 1);
  CHECK(tf215[0]->cudnn == "8.9");
  CHECK(tf215[0]->cuda == "12.2");
  CHECK(m.frameworks_matching("PyTorch", "2.4").size() == 3);
  CHECK(m.frameworks_matching("torch", "2.4").size() == 3);  // the PyPI name
  CHECK(m.component_of("libcublasLt.so.13")->component == "cublasLt");
  CHECK(m.component_of("libcublas.so.13")->component == "cublas");
  CHECK(m.cuda_majors_of("libcufft.so.11") == std::vector<int>{12});
  // Windows DLLs by windows_prefix, then digits and underscores only, case ignored
  const std::pair<const char*, const char*> windows_names[] = {
      {"cudart64_13.dll", "cudart"},       {"NVCUDA.DLL", "driver"},
      {"cublasLt64_13.dll", "cublasLt"},   {"nvrtc64_130_0.dll", "nvrtc"},
      {"nvrtc-builtins64_135.dll", "nvrtc-builtins"}, {"cupti64_13.dll", "cupti"},
      {"nvJitLink_130_0.dll", "nvjitlink"}};
  for (const auto& [dll, component] : windows_names) {
    const ComponentRow* row = m.windows_component_of(dll);
    REQUIRE_MESSAGE(row, dll);
    CHECK_MESSAGE(row->component == component, dll);
  }
  REQUIRE(m.windows_cudnn_series_of("CUDNN_OPS64_9.DLL"));
  CHECK(m.windows_cudnn_series_of("CUDNN_OPS64_9.DLL")->major == 9);
  REQUIRE(m.windows_cudnn_series_of("cudnn_cnn_infer64_8.dll"));
  CHECK(m.windows_cudnn_series_of("cudnn_cnn_infer64_8.dll")->major == 8);
  CHECK_FALSE(m.windows_cudnn_series_of("libcudnn_ops.so.9"));
  CHECK_FALSE(m.windows_component_of("nvcudart_hybrid64.dll"));  // starts with "nvcuda", is not the driver
  CHECK_FALSE(m.windows_component_of("cudart64_13.so"));
  CHECK_FALSE(m.windows_component_of("mscoree.dll"));
  CHECK_FALSE(m.windows_component_of(".dll"));
  CHECK(m.cudnn_series_of("libcudnn_cnn_infer.so.8")->major == 8);
  CHECK(m.cudnn_series_of("libcudnn_engines_precompiled.so.9")->sublibraries.size() == 7);
  bool shim_probes = false;
  for (const DlopenRow* row : m.dlopen_rows_for("libcudnn.so.9")) shim_probes |= row->probe == "cudnn_version_suffixes";
  CHECK(shim_probes);
  CHECK(glob_match("libcudart.so.*", "libcudart.so.12"));
  CHECK_FALSE(glob_match("libcudart.so.*", "libcudart.so"));
}

TEST_CASE("optional plugins: NVSHMEM's transports of both plugin ABIs and cuFile's RDMA support, not their openers' needs") {
  Matrix m = embedded();
  CHECK(m.dlopen_is_optional("libnvshmem_host.so.3", "nvshmem_transport_ucx.so.3"));  // nvshmem 3.3.20 (torch 2.9.1)
  CHECK(m.dlopen_is_optional("libnvshmem_host.so.3", "nvshmem_transport_ucx.so.7"));  // nvshmem 3.8.0
  CHECK(m.dlopen_is_optional("libcufile.so.0", "libcufile_rdma.so.1"));
  CHECK_FALSE(m.dlopen_is_optional("libcufile.so.0", "libcuda.so.1"));
  CHECK_FALSE(m.dlopen_is_optional("libcudnn_graph.so.9", "libnvrtc.so.12"));
}

TEST_CASE("optional names given as {soname:C}: JAX's plugin copes without nvJitLink and NCCL, not without cuBLAS") {
  Matrix m = embedded();
  CHECK(m.opens_names("{soname:nvjitlink}", "libnvJitLink.so.13"));
  CHECK_FALSE(m.opens_names("{soname:nvjitlink}", "libnvrtc.so.13"));
  CHECK(m.opens_names("libnccl.so.2", "libnccl.so.2"));
  CHECK(m.opens_names("libnvJitLink.so.{cuda_major}", "libnvJitLink.so.13"));
  CHECK(m.opens_names("libnvrtc-builtins.so.{major}.{minor}", "libnvrtc-builtins.so.13.0"));
  CHECK_FALSE(m.opens_names("libnvJitLink.so.{cuda_major}", "libnvJitLink.so"));
  CHECK_FALSE(m.opens_names("libnvJitLink.so.{cuda_major}", "libnvJitLink.so.13.1"));
  CHECK_FALSE(m.opens_names("libnvJitLink.so.{cuda}", "libnvJitLink.so.13"));
  CHECK(m.dlopen_is_optional("libcudnn_engines_tensor_ir.so.9", "libnvJitLink.so.13"));
  CHECK_FALSE(m.dlopen_is_optional("libcudnn_engines_tensor_ir.so.9", "libnvrtc.so.13"));
  CHECK(m.dlopen_is_optional("xla_cuda_plugin.so", "libnvJitLink.so.12"));
  CHECK(m.dlopen_is_optional("xla_cuda_plugin.so", "libnccl.so.2"));
  CHECK_FALSE(m.dlopen_is_optional("xla_cuda_plugin.so", "libcublas.so.13"));
  CHECK_FALSE(m.dlopen_is_optional("xla_cuda_plugin.so", "libcudnn.so.9"));
}

TEST_CASE("python variants: bitsandbytes' builds per CUDA version, and rows the check cannot apply are refused") {
  Matrix m = embedded();
  const PythonVariants* bnb = m.python_variants_for("bitsandbytes", "0.50.2");
  REQUIRE(bnb);
  CHECK(bnb->rule == "same_major_nearest");
  CHECK(bnb->cuda_file == "bitsandbytes/libbitsandbytes_cuda{version}.so");
  CHECK(bnb->override_variable == "BNB_CUDA_VERSION");
  const PythonVariants* exact = m.python_variants_for("bitsandbytes", "0.49.2");  // before the nearest-minor fallback
  REQUIRE(exact);
  CHECK(exact->rule == "exact");
  CHECK(m.python_variants_for("bitsandbytes", "0.50.0") == bnb);
  CHECK_FALSE(m.python_variants_for("bitsandbytes", "0.45.0"));  // falls back to the CPU build: not described
  CHECK_FALSE(m.python_variants_for("torch", "2.9.1"));

  TempDir dir("cuda-matrix-variants");
  auto row = [](const std::string& cuda_file, const std::string& rule) {
    return R"({"schema": "depscan-matrix/libraries/1", "components": [], "cudnn_series": [], "dlopen": [],
               "python_variants": [{"distribution": "x", "cuda_file": ")" + cuda_file + R"(", "cpu_file": "x/cpu.so",
               "others": [], "rule": ")" + rule + R"(", "override_variable": "X_CUDA", "source": "s"}]})";
  };
  auto good = load_matrix_file(write(dir, "good.json", row("x/lib_cuda{version}.so", "same_major_nearest")));
  REQUIRE_MESSAGE(good, (good ? "" : good.error()));
  CHECK(good->python_variants()[0].cpu_file == "x/cpu.so");
  auto bad_rule = load_matrix_file(write(dir, "rule.json", row("x/lib_cuda{version}.so", "newest")));
  REQUIRE_FALSE(bad_rule);
  CHECK(bad_rule.error().find("unknown rule 'newest'") != std::string::npos);
  auto no_version = load_matrix_file(write(dir, "file.json", row("x/lib_cuda.so", "same_major_nearest")));
  REQUIRE_FALSE(no_version);
  CHECK(no_version.error().find("needs one {version}") != std::string::npos);
  auto two = [](const std::string& first_before, const std::string& second_since) {
    auto one = [](const std::string& bounds) {
      return R"({"distribution": "x", )" + bounds + R"( "cuda_file": "x/c{version}.so", "cpu_file": "",
                 "others": [], "rule": "exact", "override_variable": "X", "source": "s"})";
    };
    return R"({"schema": "depscan-matrix/libraries/1", "components": [], "cudnn_series": [], "dlopen": [],
               "python_variants": [)" + one(R"("before": ")" + first_before + R"(",)") + ", " +
           one(R"("since": ")" + second_since + R"(",)") + "]}";
  };
  CHECK(load_matrix_file(write(dir, "apart.json", two("1.0", "1.0"))));
  auto overlap = load_matrix_file(write(dir, "overlap.json", two("1.1", "1.0")));
  REQUIRE_FALSE(overlap);
  CHECK(overlap.error().find("x releases overlap") != std::string::npos);
}

TEST_CASE("a dlopen row's unless_needed and also_strings are read, and values of the wrong type are refused") {
  TempDir dir("cuda-matrix-dlopen-fields");
  auto row = [&](const std::string& extra) {
    return load_matrix_file(write(dir, "dlopen.json",
        R"({"schema": "depscan-matrix/libraries/1", "components": [], "cudnn_series": [],
            "dlopen": [{"from": ["libx.so"], "opens": ["liby.so.1"], )" + extra + R"( "source": "s"}]})"));
  };
  auto good = row(R"("unless_needed": "liby.so*", "also_strings": true,)");
  REQUIRE_MESSAGE(good, (good ? "" : good.error()));
  REQUIRE(good->dlopen_rows_for("libx.so").size() == 1);
  CHECK(good->dlopen_rows_for("libx.so")[0]->unless_needed == "liby.so*");
  CHECK(good->dlopen_rows_for("libx.so")[0]->also_strings);
  auto plain = row("");
  REQUIRE(plain);
  CHECK(plain->dlopen_rows_for("libx.so")[0]->unless_needed.empty());
  CHECK_FALSE(plain->dlopen_rows_for("libx.so")[0]->also_strings);

  auto not_a_flag = row(R"("also_strings": "yes",)");
  REQUIRE_FALSE(not_a_flag);
  CHECK(not_a_flag.error().find("'also_strings' must be true or false") != std::string::npos);
  auto not_a_glob = row(R"("unless_needed": ["liby.so*"],)");
  REQUIRE_FALSE(not_a_glob);
  CHECK(not_a_glob.error().find("'unless_needed' must be a string") != std::string::npos);
  CHECK(not_a_glob.error().find("dlopen[0]") != std::string::npos);
}

TEST_CASE("loaded first: CuPy 14's pathfinder libraries and torch's for torchvision; bad rows are refused") {
  Matrix m = embedded();
  const std::string module = "cupy_backends/cuda/libs/cusparse.cpython-311-x86_64-linux-gnu.so";
  const LoadedFirst* cusparse = m.loaded_first("cupy-cuda12x", "14.2.0", module);
  REQUIRE(cusparse);
  CHECK(cusparse == m.loaded_first("cupy-cuda13x", "14.0.0", module));
  const LoadedFirst* before_pathfinder = m.loaded_first("cupy-cuda12x", "13.6.0", module);
  REQUIRE(before_pathfinder);  // CuPy 13 has no pathfinder: it loads nothing before this module
  CHECK(before_pathfinder->libraries.empty());
  CHECK(before_pathfinder == m.loaded_first("cupy-cuda11x", "13.6.0", module));
  CHECK_FALSE(m.loaded_first("cupy-cuda12x", "13.5.0", module));  // releases not read
  const LoadedFirst* cutensor13 = m.loaded_first("cupy-cuda12x", "13.6.0", "cupy_backends/cuda/libs/cutensor.cpython-311-x86_64-linux-gnu.so");
  REQUIRE(cutensor13);  // import cupy preloads the cuTENSOR wheel's library with ctypes.CDLL's RTLD_LOCAL
  REQUIRE(cutensor13->libraries.size() == 1);
  CHECK(cutensor13->libraries[0].paths == std::vector<std::string>{"cutensor/lib/libcutensor.so.2"});
  CHECK_FALSE(cutensor13->libraries[0].global);
  CHECK(cutensor13->libraries[0].distribution == "cutensor-cu{cuda_major}");  // the wheel of CuPy's own CUDA major
  CHECK(cuda_major_filled(cutensor13->libraries[0].distribution, 12) == "cutensor-cu12");
  CHECK(describe_wanted_distribution(cutensor13->libraries[0], 12) == "cutensor-cu12 2.x, at least 2.0.0");  // min_pypi_version
  CHECK(wanted_distribution_name(cutensor13->libraries[0], 12) == "cutensor-cu12");
  CHECK(describe_wanted_distribution(cutensor13->libraries[0], std::nullopt).empty());  // a module that shows no major
  CHECK_FALSE(wanted_distribution_name(cutensor13->libraries[0], std::nullopt));
  const LoadedFirst* nccl12 = m.loaded_first("cupy-cuda12x", "13.6.0", "cupy_backends/cuda/libs/nccl.cpython-311-x86_64-linux-gnu.so");
  const LoadedFirst* nccl13 = m.loaded_first("cupy-cuda13x", "13.6.0", "cupy_backends/cuda/libs/nccl.cpython-311-x86_64-linux-gnu.so");
  REQUIRE((nccl12 && nccl13));
  CHECK(nccl12->libraries.at(0).min_version == "2.16.5");
  CHECK(nccl13->libraries.at(0).min_version == "2.27.7");  // cupy-cuda13x's own _wheel.json
  CHECK_FALSE(m.loaded_first("cupy-cuda12x", "not a version", module));
  CHECK(cusparse == m.loaded_first("cupy-cuda12x", "14.2.0.post1", module));  // post-, pre- and local releases
  CHECK(cusparse == m.loaded_first("cupy-cuda12x", "14.0.0rc1", module));
  CHECK(cusparse == m.loaded_first("cupy-cuda12x", "14.1.0+local", module));
  CHECK(m.loaded_first("cupy-cuda12x", "13.6.0.post1", module) == before_pathfinder);
  REQUIRE(cusparse->libraries.size() == 2);  // its dependency first, as pathfinder loads them
  CHECK(cusparse->libraries[0].paths == std::vector<std::string>{"nvidia/cu13/lib/libnvJitLink.so.13", "nvidia/cu13/lib/libnvJitLink.so.12",
                                                                 "nvidia/nvjitlink/lib/libnvJitLink.so.13",
                                                                 "nvidia/nvjitlink/lib/libnvJitLink.so.12"});
  CHECK(cusparse->libraries[1].paths == std::vector<std::string>{"nvidia/cu13/lib/libcusparse.so.12", "nvidia/cusparse/lib/libcusparse.so.12"});
  CHECK(cusparse->libraries[1].global);  // ctypes.CDLL(path, RTLD_NOW | RTLD_GLOBAL)
  const LoadedFirst* solver = m.loaded_first("cupy-cuda12x", "14.2.0", "cupyx/_cusolver.cpython-311-x86_64-linux-gnu.so");
  REQUIRE(solver);
  CHECK(solver->libraries.size() == 5);
  CHECK(solver->libraries.back().paths.back() == "nvidia/cusolver/lib/libcusolver.so.11");
  REQUIRE(m.loaded_first("cupy-cuda13x", "14.2.0", "cupy/cuda/jitify.cpython-312-x86_64-linux-gnu.so"));
  CHECK_FALSE(m.loaded_first("cupy-cuda12x", "14.2.0", "cupy_backends/cuda/libs/nvrtc.cpython-311-x86_64-linux-gnu.so"));
  CHECK_FALSE(m.loaded_first("cupylike", "14.2.0", module));
  const LoadedFirst* vision = m.loaded_first("torchvision", "0.29.2", "torchvision/_C.so");
  REQUIRE(vision);
  REQUIRE(vision->libraries.size() == 2);
  CHECK(vision->libraries[0].paths == std::vector<std::string>{"torch/lib/libtorch_global_deps.so"});
  CHECK(vision->libraries[0].global);
  CHECK_FALSE(vision->libraries[1].global);  // torch._C is opened RTLD_LOCAL
  CHECK(vision->by == "loaded first by import torch");

  TempDir dir("cuda-matrix-loaded-first");
  auto row = [](const std::string& libraries, const std::string& bounds = "") {
    return R"({"schema": "depscan-matrix/libraries/1", "components": [], "cudnn_series": [], "dlopen": [],
               "loaded_first": [{"distributions": ["x"], )" + bounds + R"( "modules": ["x/*.so"], "libraries": )" + libraries +
           R"(, "by": "b", "source": "s"}]})";
  };
  auto good = load_matrix_file(write(dir, "good.json", row(R"([{"paths": ["a/lib.so", "b/lib.so"], "global": true}])")));
  REQUIRE_MESSAGE(good, (good ? "" : good.error()));
  REQUIRE(good->loaded_first("x", "1.0", "x/m.so"));
  CHECK(good->loaded_first("x", "1.0", "x/m.so")->libraries[0].paths[1] == "b/lib.so");
  auto nothing_first = load_matrix_file(write(dir, "nothing.json", row("[]")));  // the package is known to load none
  REQUIRE(nothing_first);
  CHECK(nothing_first->loaded_first("x", "1.0", "x/m.so")->libraries.empty());
  for (const char* bad : {R"([{"paths": ["/usr/lib/libx.so"]}])", R"([{"paths": ["../x/lib.so"]}])", R"([{"paths": [""]}])",
                          R"([{"paths": []}])", R"([["a/lib.so"]])"}) {
    CAPTURE(bad);
    auto refused = load_matrix_file(write(dir, "bad.json", row(bad)));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().find("libraries") != std::string::npos);
  }
  auto bad_distribution = load_matrix_file(write(dir, "dist.json", row(R"([{"paths": ["a/lib.so"], "distribution": "Cu_Tensor-cu{cuda_major}"}])")));
  REQUIRE_FALSE(bad_distribution);
  CHECK(bad_distribution.error().find("distribution 'Cu_Tensor-cu{cuda_major}' is not normalised") != std::string::npos);
  CHECK(load_matrix_file(write(dir, "dist.json", row(R"([{"paths": ["a/lib.so"], "distribution": "x-cu{cuda_major}"}])"))));
  auto minimum = load_matrix_file(write(dir, "min.json", row(R"([{"paths": ["a/lib.so"], "distribution": "x-lib", "min_version": "2.16.5"}])")));
  REQUIRE_MESSAGE(minimum, (minimum ? "" : minimum.error()));
  REQUIRE(minimum->loaded_first("x", "1.0", "x/m.so"));
  CHECK(describe_wanted_distribution(minimum->loaded_first("x", "1.0", "x/m.so")->libraries[0], std::nullopt) ==
        "x-lib 2.x, at least 2.16.5");
  auto four = load_matrix_file(write(dir, "min.json", row(R"([{"paths": ["a/lib.so"], "distribution": "x-lib", "min_version": "9.1.0.70"}])")));
  REQUIRE_FALSE(four);  // CuPy compares three numbers
  CHECK(four.error().find("'min_version' '9.1.0.70' is not a version of up to three numbers") != std::string::npos);
  auto unbounded = load_matrix_file(write(dir, "min.json", row(R"([{"paths": ["a/lib.so"], "min_version": "2.16.5"}])")));
  REQUIRE_FALSE(unbounded);
  CHECK(unbounded.error().find("'min_version' needs the 'distribution'") != std::string::npos);
  auto unreadable = load_matrix_file(write(dir, "min.json", row(R"([{"paths": ["a/lib.so"], "distribution": "x-lib", "min_version": "2.x"}])")));
  REQUIRE_FALSE(unreadable);
  CHECK(unreadable.error().find("'min_version' '2.x' is not a version") != std::string::npos);
  auto bad_bound = load_matrix_file(write(dir, "bound.json", row(R"([{"paths": ["a/lib.so"]}])", R"("since": "soon",)")));
  REQUIRE_FALSE(bad_bound);
  CHECK(bad_bound.error().find("'soon' is not a version") != std::string::npos);
  CHECK(load_matrix_file(write(dir, "dots.json", row(R"([{"paths": ["a/lib..so"]}])"))));  // ".." only as a component
}

TEST_CASE("preload calls: onnxruntime.preload_dlls() loads the CUDA wheels' libraries of its build's layout; bad rows are refused") {
  Matrix m = embedded();
  const PreloadCall* cu13 = m.preload_call("onnxruntime-gpu", "1.31.1", "nvidia/cu13/lib/libcurand.so.10");
  REQUIRE(cu13);
  CHECK(cu13->call == "onnxruntime.preload_dlls()");
  CHECK(cu13->when == "after import onnxruntime and before the first InferenceSession");
  CHECK(m.preload_call("onnxruntime-gpu", "1.28.0", "nvidia/cu13/lib/libcublasLt.so.13") == cu13);
  CHECK(m.preload_call("onnxruntime-gpu", "1.31.1", "nvidia/cudnn/lib/libcudnn.so.9") == cu13);
  CHECK(m.preload_call("onnxruntime-gpu", "1.31.1", "nvidia/cublas/lib/libcublas.so.12") == cu13);  // a CUDA 12 build's layout
  CHECK_FALSE(m.preload_call("onnxruntime-gpu", "1.31.1", "nvidia/cudnn/lib/libcudnn_graph.so.9"));  // cuDNN opens it itself
  const PreloadCall* older = m.preload_call("onnxruntime-gpu", "1.23.2", "nvidia/cublas/lib/libcublasLt.so.12");
  REQUIRE(older);
  CHECK(older != cu13);
  CHECK_FALSE(m.preload_call("onnxruntime-gpu", "1.27.0", "nvidia/cu13/lib/libcublas.so.13"));  // 1.27 looks in nvidia/cublas/lib
  CHECK_FALSE(m.preload_call("onnxruntime-gpu", "1.23.2", "nvidia/cublas/lib/libcublas.so.11"));  // a CUDA 11 build's: not loaded
  CHECK_FALSE(m.preload_call("onnxruntime-gpu", "1.31.1", "nvidia/cuda_runtime/lib/libcudart.so.13"));
  CHECK_FALSE(m.preload_call("onnxruntime-gpu", "1.20.2", "nvidia/cublas/lib/libcublas.so.12"));  // before preload_dlls()
  CHECK_FALSE(m.preload_call("onnxruntime", "1.31.1", "nvidia/cu13/lib/libcurand.so.10"));  // the CPU package

  TempDir dir("cuda-matrix-preload-calls");
  auto load = [&](const std::string& fields) {
    return load_matrix_file(write(dir, "calls.json",
        R"({"schema": "depscan-matrix/libraries/1", "components": [], "cudnn_series": [], "dlopen": [],
            "preload_calls": [{)" + fields + R"(, "when": "first", "source": "s"}]})"));
  };
  auto good = load(R"("distributions": ["x"], "since": "1.0", "call": "x.load", "paths": ["x/lib/libx.so.1"])");
  REQUIRE_MESSAGE(good, (good ? "" : good.error()));
  CHECK(good->preload_call("x", "1.2", "x/lib/libx.so.1"));
  CHECK_FALSE(good->preload_call("x", "0.9", "x/lib/libx.so.1"));
  struct Refused {
    std::string fields, reason;
  };
  for (const Refused& refused : std::vector<Refused>{
           {R"("distributions": ["x"], "call": "", "paths": ["a.so"])", "'call' and 'when' must not be empty"},
           {R"("distributions": ["x"], "call": "x.load", "paths": [])", "must not be empty"},
           {R"("distributions": ["x"], "call": "x.load", "paths": ["/usr/lib/a.so"])", "under site-packages"},
           {R"("distributions": ["X_y"], "call": "x.load", "paths": ["a.so"])", "not normalised"},
           {R"("distributions": ["x"], "since": "soon", "call": "x.load", "paths": ["a.so"])", "'soon' is not a version"},
       }) {
    CAPTURE(refused.fields);
    auto matrix = load(refused.fields);
    REQUIRE_FALSE(matrix);
    CHECK(matrix.error().find(refused.reason) != std::string::npos);
  }
  auto two = [&](const std::string& first_bounds, const std::string& second_bounds,
                 const std::string& second_path = "nvidia/cu13/lib/a.so") {
    auto one = [](const std::string& bounds, const std::string& path) {
      return R"({"distributions": ["x"], )" + bounds + R"( "call": "x.load", "when": "first", "paths": [")" + path +
             R"("], "source": "s"})";
    };
    return load_matrix_file(write(dir, "two.json",
        R"({"schema": "depscan-matrix/libraries/1", "components": [], "cudnn_series": [], "dlopen": [], "preload_calls": [)" +
            one(first_bounds, "nvidia/cu*/lib/a.so") + ", " + one(second_bounds, second_path) + "]}"));
  };
  CHECK(two(R"("before": "2",)", R"("since": "2",)"));
  CHECK(two(R"("before": "2",)", R"("since": "1.5",)", "nvidia/cu13/lib/b.so"));  // other files
  auto overlap = two(R"("before": "2",)", R"("since": "1.5",)");  // a glob of one names a file of the other
  REQUIRE_FALSE(overlap);
  CHECK(overlap.error().find("preload_calls[0] and [1] describe the same file of the same releases") != std::string::npos);
}

TEST_CASE("loaded_first rows name normalised distributions, modules under site-packages, one row per module and release") {
  TempDir dir("cuda-matrix-loaded-first-rows");
  auto rows = [](const std::string& first, const std::string& second) {
    auto one = [](const std::string& fields) {
      return R"({)" + fields + R"(, "libraries": [{"paths": ["a/lib.so"]}], "by": "b", "source": "s"})";
    };
    return R"({"schema": "depscan-matrix/libraries/1", "components": [], "cudnn_series": [], "dlopen": [],
               "loaded_first": [)" + one(first) + (second.empty() ? "" : ", " + one(second)) + "]}";
  };
  auto load = [&](const std::string& first, const std::string& second = "") {
    return load_matrix_file(write(dir, "rows.json", rows(first, second)));
  };
  const std::string x_module = R"("distributions": ["x"], "modules": ["x/*.so"])";
  CHECK(load(x_module));
  CHECK(load(x_module + R"(, "before": "2")", x_module + R"(, "since": "2")"));  // releases apart
  CHECK(load(x_module, R"("distributions": ["x"], "modules": ["y/other.so"])"));
  struct Refused {
    std::string first, second, reason;
  };
  for (const Refused& refused : std::vector<Refused>{
           {R"("distributions": ["CuPy_x"], "modules": ["x/*.so"])", "", "not normalised"},
           {R"("distributions": ["x"], "modules": ["/x/*.so"])", "", "under site-packages"},
           {R"("distributions": ["x"], "modules": ["x/../*.so"])", "", "under site-packages"},
           {R"("distributions": ["x"], "modules": [""])", "", "under site-packages"},
           {x_module, x_module + R"(, "since": "1")", "same module of the same releases"},
           {x_module, R"("distributions": ["x"], "modules": ["x/other.so"])", "same module of the same releases"},  // the glob hides it
       }) {
    CAPTURE(refused.first);
    auto matrix = load(refused.first, refused.second);
    REQUIRE_FALSE(matrix);
    CHECK(matrix.error().find(refused.reason) != std::string::npos);
  }
}

TEST_CASE("a matrix file replaces a section, and bad files are refused with the reason") {
  TempDir dir("cuda-matrix");
  const std::string good = R"({"schema": "depscan-matrix/gpus/1", "gpus": [
      {"names": ["Fancy 9000"], "cc": "9.9", "source": "test"}]})";
  auto replaced = load_matrix_file(write(dir, "good.json", good));
  REQUIRE_MESSAGE(replaced, (replaced ? "" : replaced.error()));
  CHECK(replaced->gpu("Fancy 9000")->sm() == 99);
  CHECK_FALSE(replaced->gpu("H100"));              // the section was replaced
  CHECK(replaced->driver_row(v("12.4")) != nullptr);  // other sections stay

  const std::string decreasing = R"({"schema": "depscan-matrix/1", "toolkits": {
      "drivers": [
        {"toolkit": "12.0.0", "release": "12.0 GA", "linux": "525.60.13", "windows": "527.41", "source": "a"},
        {"toolkit": "12.1.0", "release": "12.1 GA", "linux": "520.00.00", "windows": "531.14", "source": "b"}],
      "minor_compatibility": [], "full_driver_needed_for": [], "architectures": []}})";
  auto bad = load_matrix_file(write(dir, "decreasing.json", decreasing));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().find("decreasing.json") != std::string::npos);
  CHECK(bad.error().find("must not decrease") != std::string::npos);
  CHECK(bad.error().find("520.00.00") != std::string::npos);

  auto no_source = load_matrix_file(write(dir, "nosource.json",
      R"({"schema": "depscan-matrix/gpus/1", "gpus": [{"names": ["X"], "cc": "9.0"}]})"));
  REQUIRE_FALSE(no_source);
  CHECK(no_source.error().find("gpus[0]") != std::string::npos);
  CHECK(no_source.error().find("source") != std::string::npos);

  auto unknown_key = load_matrix_file(write(dir, "unknown.json",
      R"({"schema": "depscan-matrix/gpus/1", "gpus": [{"names": ["X"], "cc": "9.0", "source": "s", "cores": 5}]})"));
  REQUIRE_FALSE(unknown_key);
  CHECK(unknown_key.error().find("unknown key 'cores'") != std::string::npos);

  auto bad_version = load_matrix_file(write(dir, "badversion.json",
      R"({"schema": "depscan-matrix/gpus/1", "gpus": [{"names": ["X"], "cc": "nine", "source": "s"}]})"));
  REQUIRE_FALSE(bad_version);
  CHECK(bad_version.error().find("not a version") != std::string::npos);

  auto unconfirmed = load_matrix_file(write(dir, "unconfirmed.json",
      R"({"schema": "depscan-matrix/gpus/1", "gpus": [{"names": ["X"], "cc": "9.0", "source": "s", "status": "unconfirmed"}]})"));
  REQUIRE_FALSE(unconfirmed);
  CHECK(unconfirmed.error().find("status 'unconfirmed' is not 'primary' or 'secondary'") != std::string::npos);

  auto broken = load_matrix_file(write(dir, "broken.json", "{ not json"));
  REQUIRE_FALSE(broken);
  CHECK(broken.error().find("not valid JSON") != std::string::npos);
  auto missing = load_matrix_file(dir.str() + "/missing.json");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().find("missing.json: cannot open the matrix file") != std::string::npos);
}

TEST_CASE("depscan matrix answers with the source") {
  auto driver = run_command(depscan_bin() + " matrix driver 12.4");
  CHECK(driver.exit_code == 0);
  CHECK(driver.output.find("550.54.14") != std::string::npos);
  CHECK(driver.output.find("551.61") != std::string::npos);
  CHECK(driver.output.find("525.60.13") != std::string::npos);  // the minor-version floor
  CHECK(driver.output.find("source: https://docs.nvidia.com/cuda/") != std::string::npos);

  auto tf = run_command(depscan_bin() + " matrix framework tensorflow 2.15 --format json");
  CHECK(tf.exit_code == 0);
  auto j = nlohmann::json::parse(tf.output);
  REQUIRE(j["rows"].size() == 1);
  CHECK(j["rows"][0]["cudnn"] == "8.9");
  CHECK(j["rows"][0]["cuda"] == "12.2");
  CHECK(j["rows"][0]["source"].get<std::string>().find("tensorflow") != std::string::npos);

  auto torch = run_command(depscan_bin() + " matrix framework torch 2.5 --format json");  // the PyPI name
  CHECK(torch.exit_code == 0);
  CHECK(nlohmann::json::parse(torch.output)["framework"] == "pytorch");
  CHECK_FALSE(nlohmann::json::parse(torch.output)["rows"].empty());
  CHECK(run_command(depscan_bin() + " matrix framework cupy-cuda12x 13").output.starts_with("cupy 13"));
  auto old_jax = run_command(depscan_bin() + " matrix framework jax 0.4");  // the data holds the docs' current table
  CHECK(old_jax.exit_code != 0);
  CHECK(old_jax.output == "jax 0.4: no row for this release; the data's jax rows are for current "
                          "(depscan matrix framework jax lists them)\n");
  CHECK(run_command(depscan_bin() + " matrix framework caffe 1").output.starts_with("caffe 1: no rows in the data (known:"));

  auto cudnn = run_command(depscan_bin() + " matrix cudnn 9.1");
  CHECK(cudnn.output.find("CUDA 12.0-12.4 (driver >= 525.60.13 Linux, >= 527.41 Windows)") != std::string::npos);
  auto linux_only = run_command(depscan_bin() + " matrix cudnn 9.19");  // no Windows floor in the data
  CHECK(linux_only.output.find("CUDA 13.0-13.1 (driver >= 580.65.06 Linux)") != std::string::npos);
  CHECK(linux_only.output.find("n/a Windows") == std::string::npos);
  CHECK(cudnn.output.find("source:") != std::string::npos);
  // a build's GPU range narrows the release's; the bound it does not give is the release's
  auto per_build = run_command(depscan_bin() + " matrix cudnn 9.10.2");
  CHECK(per_build.output.find("CUDA 12.8-12.9 (driver >= 570.26 Linux, >= 570.65 Windows) SM 5.0 to 12.0") != std::string::npos);
  CHECK(per_build.output.find("CUDA 11.8 (driver >= 450.80.02 Linux, >= 452.39 Windows) SM 5.0 to 9.0") != std::string::npos);
  // the old support matrices give the oldest GPU only
  CHECK(run_command(depscan_bin() + " matrix cudnn 8.4.0").output.find("CUDA 10.2 SM 3.0 and later\n") != std::string::npos);
  auto per_build_json = nlohmann::json::parse(run_command(depscan_bin() + " matrix cudnn 9.10.2 --format json").output);
  REQUIRE(per_build_json["releases"].size() == 1);
  CHECK(per_build_json["releases"][0]["builds"][0]["sm_min"] == "5.0");
  CHECK(per_build_json["releases"][0]["builds"][0]["sm_max"] == "12.0");

  auto gpu = run_command(depscan_bin() + " matrix gpu H100 --format json");
  CHECK(nlohmann::json::parse(gpu.output)["sm"] == 90);

  auto toolkit = run_command(depscan_bin() + " matrix toolkit 13.0");
  CHECK(toolkit.output.find("sm_110") != std::string::npos);
  CHECK(toolkit.output.find("sm_70") == std::string::npos);

  CHECK(run_command(depscan_bin() + " matrix cudnn 1.0").exit_code == 1);           // not in the data
  CHECK(run_command(depscan_bin() + " matrix driver twelve 2>/dev/null").exit_code == 2);  // not a version

  TempDir dir("cuda-matrix-cli");
  std::string bad = write(dir, "bad.json", R"({"schema": "depscan-matrix/gpus/1", "gpus": [{"names": ["X"], "cc": "9.0"}]})");
  auto refused = run_command(depscan_bin() + " matrix gpu X --matrix " + shell_quote(bad) + " 2>&1");
  CHECK(refused.exit_code == 2);
  CHECK(refused.output.find("source") != std::string::npos);
}
