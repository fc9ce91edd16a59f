// A missing CUDA library's fix says where it comes from: the driver for libcuda.so.1, the PyPI
// project of the right CUDA major or the toolkit for the rest (matrix/data/libraries.json).
#include <doctest/doctest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "analyzer/check/cuda_install_hint.h"
#include "embedded_matrix.h"
#include "support.h"

using namespace depscan;
using namespace depscan::test;
using nlohmann::json;

namespace {

std::string hint(const char* name) {
  auto h = cuda_install_hint(embedded_matrix(), name);
  REQUIRE_MESSAGE(h, name << " has no hint");
  return *h;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("libcuda.so.1 comes from the driver, never from pip or the stubs") {
  std::string h = hint("libcuda.so.1");
  CHECK(contains(h, "NVIDIA driver"));
  CHECK(contains(h, "--gpus all"));
  CHECK(contains(h, "stub"));
  CHECK_FALSE(contains(h, "pip install"));
}

TEST_CASE("toolkit libraries name the PyPI project of their CUDA major") {
  CHECK(contains(hint("libcudart.so.12"), "pip install nvidia-cuda-runtime-cu12 (CUDA 12), or install the CUDA 12 toolkit"));
  CHECK(contains(hint("libcudart.so.13"), "pip install nvidia-cuda-runtime (CUDA 13)"));  // no -cu13 suffix
  CHECK(contains(hint("libcufft.so.11"), "nvidia-cufft-cu12 (CUDA 12)"));  // cuFFT 11 ships with CUDA 12
  CHECK(contains(hint("libcublasLt.so.13"), "pip install nvidia-cublas (CUDA 13)"));
  CHECK(contains(hint("libnvrtc.so.11.2"), "nvidia-cuda-nvrtc-cu11 (CUDA 11)"));
  std::string curand = hint("libcurand.so.10");  // one SONAME from CUDA 10 to 13
  CHECK(contains(curand, "nvidia-curand-cu11 (CUDA 11) or nvidia-curand-cu12 (CUDA 12) or nvidia-curand (CUDA 13)"));
  std::string cuda10 = hint("libcudart.so.10.1");  // before the PyPI projects
  CHECK_FALSE(contains(cuda10, "pip install"));
  CHECK(contains(cuda10, "install the CUDA 10 toolkit"));
}

TEST_CASE("cuDNN libraries name the cuDNN series and the CUDA majors it was built for") {
  std::string nine = hint("libcudnn_ops.so.9");
  CHECK(contains(nine, "part of cuDNN 9"));
  CHECK(contains(nine, "nvidia-cudnn-cu12==9.* (CUDA 12) or nvidia-cudnn-cu13==9.* (CUDA 13)"));
  std::string eight = hint("libcudnn.so.8");
  CHECK(contains(eight, "nvidia-cudnn-cu11==8.* (CUDA 11) or nvidia-cudnn-cu12==8.* (CUDA 12)"));
  CHECK_FALSE(contains(eight, "cu13"));  // no cuDNN 8 was built for CUDA 13
}

TEST_CASE("the CUDA majors of the rest of the process narrow the choices when they agree with the name") {
  auto narrowed = [](const char* name, std::vector<int> majors) {
    auto h = cuda_install_hint(embedded_matrix(), name, "the binary", majors);
    REQUIRE(h);
    return *h;
  };
  std::string cudnn13 = narrowed("libcudnn_ops.so.9", {13});
  CHECK(contains(cudnn13, "pip install nvidia-cudnn-cu13==9.* (CUDA 13), or install cuDNN 9 for CUDA 13"));
  CHECK_FALSE(contains(cudnn13, "cu12"));
  CHECK(contains(narrowed("libcurand.so.10", {12}), "pip install nvidia-curand-cu12 (CUDA 12), or install the CUDA 12 toolkit"));
  // majors that do not fit the name (a CUDA 13 process missing libcudart.so.12) leave the name's own
  CHECK(contains(narrowed("libcudart.so.12", {13}), "pip install nvidia-cuda-runtime-cu12 (CUDA 12)"));
  std::string mixed = narrowed("libcudnn.so.9", {12, 13});
  CHECK(contains(mixed, "nvidia-cudnn-cu12==9.* (CUDA 12) or nvidia-cudnn-cu13==9.* (CUDA 13)"));
  CHECK(contains(mixed, "for the application's CUDA major"));
}

TEST_CASE("NCCL and cuTENSOR are NVIDIA downloads of their own, not parts of the CUDA toolkit") {
  std::string nccl = hint("libnccl.so.2");
  CHECK(contains(nccl, "libnccl.so.2 is part of NCCL: pip install nvidia-nccl-cu11 (CUDA 11) or nvidia-nccl-cu12 (CUDA 12) "
                       "or nvidia-nccl-cu13 (CUDA 13), or install NCCL from NVIDIA"));
  CHECK_FALSE(contains(nccl, "toolkit"));
  auto cutensor = cuda_install_hint(embedded_matrix(), "libcutensorMg.so.2", "the binary", {13});
  REQUIRE(cutensor);
  CHECK(contains(*cutensor, "libcutensorMg.so.2 is part of cuTENSOR: pip install cutensor-cu13 (CUDA 13), or install "
                            "cuTENSOR from NVIDIA"));
  CHECK(embedded_matrix().component_of("libcutensor.so.2")->component == "cutensor");
  CHECK(embedded_matrix().component_of("libcutensorMp.so.2")->component == "cutensorMp");
}

TEST_CASE("TensorRT: the pip packages of the TensorRT major the SONAME names, for the process's CUDA major") {
  auto ten = cuda_install_hint(embedded_matrix(), "libnvinfer.so.10", "the provider", {12});
  REQUIRE(ten);
  CHECK(contains(*ten, "libnvinfer.so.10 is part of TensorRT 10: pip install tensorrt-cu12-libs==10.* (CUDA 12), or "
                       "install TensorRT 10 from NVIDIA"));
  std::string eleven = hint("libnvinfer_plugin.so.11");  // no TensorRT 11 for CUDA 11
  CHECK(contains(eleven, "part of TensorRT 11: pip install tensorrt-cu12-libs==11.* (CUDA 12) or "
                         "tensorrt-cu13-libs==11.* (CUDA 13), or install TensorRT 11 from NVIDIA"));
  auto lean = cuda_install_hint(embedded_matrix(), "libnvinfer_lean.so.10", "the binary", {11});
  REQUIRE(lean);
  CHECK(contains(*lean, "pip install tensorrt-lean-cu11-libs==10.* (CUDA 11)"));
  CHECK(embedded_matrix().component_of("libnvinfer_plugin.so.10")->component == "nvinfer_plugin");
  CHECK(embedded_matrix().component_of("libnvinfer.so.10")->component == "nvinfer");
  const ComponentSoname* versioned = embedded_matrix().soname_of("libnvonnxparser.so.10.16.1");
  REQUIRE(versioned != nullptr);
  CHECK(versioned->pip_version == "10.*");
  CHECK(embedded_matrix().soname_of("libnvinfer.so.9") == nullptr);
  // A SONAME no listed package ships: no unpinned pip install that would bring TensorRT 10 or 11.
  std::string eight = hint("libnvinfer.so.8");
  CHECK(contains(eight, "libnvinfer.so.8 is part of TensorRT: install a TensorRT release that ships libnvinfer.so.8 "
                        "from NVIDIA"));
  CHECK_FALSE(contains(eight, "pip install"));
  // Not a CUDA library of one major: it does not decide the CUDA major of the process.
  CHECK(embedded_matrix().cuda_majors_of("libnvinfer.so.11") == std::vector<int>{12, 13});
}

TEST_CASE("cuda_majors_by_root: one-major names only, per root") {
  Graph g;
  g.roots = {0, 1, 2};
  auto edge = [](const char* name, size_t root) {
    Edge e;
    e.name = name;
    e.root = root;
    return e;
  };
  auto guessed = [&](const char* name, size_t root) {  // a name found in read-only data
    Edge e = edge(name, root);
    e.kind = EdgeKind::Dlopen;
    e.inferred = true;
    return e;
  };
  g.edges = {edge("libcudart.so.12", 0), edge("libcurand.so.10", 0), edge("libcublas.so.12", 0),
             edge("libcudart.so.13", 1), edge("libc.so.6", 1),
             guessed("libcudart.so.12", 1),  // ONNX Runtime's CUDA 13 provider names it too: not its major
             guessed("libcudart.so.12", 2), guessed("libcublas.so.12", 2)};  // TensorFlow: its strings are all it shows
  auto majors = cuda_majors_by_root(g, embedded_matrix());
  REQUIRE(majors.size() == 3);
  CHECK(majors[0] == std::vector<int>{12});
  CHECK(majors[1] == std::vector<int>{13});
  CHECK(majors[2] == std::vector<int>{12});
}

TEST_CASE("cuda_majors_by_root: the CUDA major in the name of the root's distribution counts too") {
  Graph g;
  g.objects.resize(4);
  g.objects[0].owner = "tensorrt-cu12-bindings";
  g.objects[1].owner = "cupy-cuda13x";  // CuPy's spelling
  g.objects[2].owner = "nvidia-cudnn-cu13";
  g.objects[3].owner = "tensorrt_cu11_bindings";  // METADATA's Name as the wheel spells it
  g.roots = {0, 1, 2, 3};
  Edge needs;
  needs.name = "libcudart.so.12";
  needs.root = 2;
  g.edges = {needs};
  auto majors = cuda_majors_by_root(g, embedded_matrix());
  REQUIRE(majors.size() == 4);
  CHECK(majors[0] == std::vector<int>{12});
  CHECK(majors[1] == std::vector<int>{13});
  CHECK(majors[2] == std::vector<int>{12, 13});
  CHECK(majors[3] == std::vector<int>{11});
  auto hint = cuda_install_hint(embedded_matrix(), "libnvinfer.so.10", "tensorrt.so", majors[0]);
  REQUIRE(hint);
  CHECK(contains(*hint, "pip install tensorrt-cu12-libs==10.* (CUDA 12), or install TensorRT 10"));
}

TEST_CASE("other libraries get no CUDA hint") {
  CHECK_FALSE(cuda_install_hint(embedded_matrix(), "libssl.so.3"));
  CHECK_FALSE(cuda_install_hint(embedded_matrix(), "libcudaxyz.so.1"));
}

TEST_CASE("every CUDA 11-13 component SONAME has a PyPI project for each of its majors") {
  for (const ComponentRow& c : embedded_matrix().components()) {
    if (c.component == "driver") continue;
    for (const ComponentSoname& s : c.sonames)
      for (int major : s.cuda_majors) {
        if (major < 11 || (c.component == "nvjitlink" && major < 12)) continue;
        INFO(s.name << " for CUDA " << major);
        CHECK(embedded_matrix().pip_packages_of(c.component, {major}).size() == 1);
      }
  }
  CHECK_FALSE(embedded_matrix().pip_source().empty());
}

TEST_CASE("library-not-found and dlopen-library-not-found carry the hint") {
  std::string root = fixtures_dir() + "/cuda/sysroot";
  auto run = run_command(depscan_bin() + " --format json --root " + shell_quote(root) + " /opt/bin/app_uninstalled");
  CHECK(run.exit_code == 1);
  json report = json::parse(run.output);
  std::map<std::string, std::string> fixes;  // first word of the message -> fix
  for (const json& f : report["findings"])
    if (f["code"] == "library-not-found") {
      std::string message = f["message"];
      fixes[message.substr(0, message.find(':'))] = f["fix"];
    }
  REQUIRE(fixes.size() == 3);
  CHECK(contains(fixes["libcuda.so.1"], "comes with the NVIDIA driver"));
  CHECK(contains(fixes["libcudart.so.12"], "pip install nvidia-cuda-runtime-cu12 (CUDA 12)"));
  // the process needs libcudart.so.12: cuDNN for CUDA 12 only
  CHECK(contains(fixes["libcudnn.so.9"], "pip install nvidia-cudnn-cu12==9.* (CUDA 12), or install cuDNN 9 for CUDA 12"));
  CHECK_FALSE(contains(fixes["libcudnn.so.9"], "cu13"));
  CHECK(contains(fixes["libcudnn.so.9"], "tried: /opt/cuda13/libcudnn.so.9"));

  auto tf = run_command(depscan_bin() + " --format json --root " + shell_quote(root) + " /opt/bin/tf_app");
  json tf_report = json::parse(tf.output);
  bool seen = false;
  for (const json& f : tf_report["findings"])
    if (f["code"] == "dlopen-library-not-found" && contains(f["message"], " opens libcufft.so.11 ")) {
      seen = true;
      CHECK(contains(f["fix"], "pip install nvidia-cufft-cu12 (CUDA 12)"));
      CHECK(contains(f["fix"], "libtensorflow_framework.so.2's RUNPATH"));
    }
  CHECK(seen);
}
