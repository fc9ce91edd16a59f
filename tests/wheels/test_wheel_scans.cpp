// depscan on wheels, installs, hostile archives and image archives built at test time
// (fixtures/wheels/build.sh). Every run gets its own TMPDIR, which must be empty afterwards:
// the private extraction directory is gone and nothing else was written there.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "support.h"
#include "toolchains.h"

using namespace depscan::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) { return fixtures_dir() + "/wheels/" + name; }

struct Scan {
  int exit_code = -1;
  json report;
  bool tmp_left_empty = false;
};

// `env`: more NAME=value settings for depscan's own environment.
Scan scan(const std::string& args, const std::string& label, const std::string& env = "") {
  TempDir tmp("wheels-tmpdir-" + label);  // never the name of an input directory
  auto result = run_command("env TMPDIR=" + shell_quote(tmp.str()) + " " + env + " " + shell_quote(depscan_bin()) +
                            " --format json " + args + " 2>/dev/null");
  Scan out;
  out.exit_code = result.exit_code;
  out.report = json::parse(result.output, nullptr, false);
  out.tmp_left_empty = fs::is_empty(tmp.path());
  return out;
}

std::string wheels(std::initializer_list<const char*> names) {
  std::string args;
  for (const char* n : names) args += " " + shell_quote(fixture(n));
  return args;
}

// The wheels (wheels() arguments) unzipped into directory `site`, for Python and the real loader to open.
bool unzip_wheels(const std::string& site, const std::string& wheel_args) {
  return run_command("python3 -c 'import sys, zipfile\nfor w in sys.argv[2:]: zipfile.ZipFile(w).extractall(sys.argv[1])' " +
                     shell_quote(site) + wheel_args).exit_code == 0;
}

const char* kTorch = "torch-2.3.0-cp311-cp311-manylinux_2_17_x86_64.whl";
const char* kCudnn = "nvidia_cudnn_cu12-9.0.0.312-py3-none-manylinux1_x86_64.whl";
const char* kCudart = "nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl";

std::optional<size_t> object_at(const json& report, const std::string& path) {
  const json& objects = report["objects"];
  for (size_t i = 0; i < objects.size(); ++i)
    if (objects[i]["path"] == path) return i;
  return std::nullopt;
}

const json* edge(const json& report, size_t from, const std::string& name) {
  for (const json& e : report["edges"])
    if (e["from"] == from && e["name"] == name) return &e;
  return nullptr;
}

// The object `name`, needed by object `from`, resolved to; the test stops if it was not found.
const json& resolved(const json& report, size_t from, const std::string& name) {
  const json* e = edge(report, from, name);
  REQUIRE_MESSAGE(e, "no edge " << name);
  REQUIRE_MESSAGE(!(*e)["to"].is_null(), name << " not found");
  return report["objects"][(*e)["to"].get<size_t>()];
}

std::vector<json> findings(const json& report, const std::string& code) {
  std::vector<json> out;
  for (const json& f : report["findings"])
    if (f["code"] == code) out.push_back(f);
  return out;
}

// The library-not-found finding for `soname`, or null.
std::optional<json> not_found(const json& report, const std::string& soname) {
  for (const json& f : findings(report, "library-not-found"))
    if (f["message"].get<std::string>().starts_with(soname + ":")) return f;
  return std::nullopt;
}

bool any_message_has(const std::vector<json>& list, const std::string& text) {
  for (const json& f : list)
    if (f["message"].get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

// depscan's scan of `site` as a Python environment on this machine's system, against the real
// loader: `lib` has a dlopen edge for each name, and `open_command(name)`, which has `lib` open the
// name itself and prints 1 or 0, loads it exactly when the edge resolves.
void check_loader_agrees(const std::string& site, const std::string& lib, const std::vector<std::string>& names,
                         const std::function<std::string(const std::string&)>& open_command) {
  Scan here = scan("--python-env " + shell_quote(site) + " --no-etc-preload", "loader-agrees");
  REQUIRE(here.report.is_object());
  auto opener = object_at(here.report, lib);
  REQUIRE(opener);
  for (const std::string& name : names) {
    CAPTURE(name);
    const json* e = edge(here.report, *opener, name);
    REQUIRE(e);
    CHECK(run_command(open_command(name)).output == ((*e)["to"].is_null() ? "0\n" : "1\n"));
  }
}

}  // namespace

TEST_CASE("torch-like wheel with the nvidia wheels: one install, resolved across wheels, attributed") {
  Scan s = scan(wheels({kTorch, kCudnn, kCudart}), "install");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  auto torch = object_at(s.report, "site-packages/torch/lib/libtorch_cuda.so");
  REQUIRE(torch);
  CHECK(s.report["objects"][*torch]["owner"] == "torch");
  const json* cudnn = edge(s.report, *torch, "libcudnn.so.9");
  REQUIRE(cudnn);
  REQUIRE(!(*cudnn)["to"].is_null());
  const json& cudnn_object = s.report["objects"][(*cudnn)["to"].get<size_t>()];
  CHECK(cudnn_object["path"] == "site-packages/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9");  // as opened, like ld.so
  CHECK(cudnn_object["realpath"] == "site-packages/nvidia/cudnn/lib/libcudnn.so.9");
  CHECK(cudnn_object["owner"] == "nvidia-cudnn-cu12");
  CHECK((*cudnn)["how"] == "runpath");
  CHECK(resolved(s.report, *torch, "libcudart.so.12")["owner"] == "nvidia-cuda-runtime-cu12");
  CHECK(resolved(s.report, *torch, "libc.so.6")["owner"] == "system");
  CHECK(any_message_has(findings(s.report, "system-libraries"), "libc.so.6"));

  auto pins = findings(s.report, "wheel-pin-mismatch");
  REQUIRE(pins.size() == 1);  // cuDNN 9.0.0.312 against ==9.1.0.70; the runtime pin is met
  CHECK(any_message_has(pins, "nvidia-cudnn-cu12==9.1.0.70"));
  CHECK(any_message_has(pins, "9.0.0.312"));
  CHECK(findings(s.report, "library-not-found").empty());
  CHECK(any_message_has(findings(s.report, "wheel-installed"), kTorch));
}

TEST_CASE("a CUDA runtime installed from a wheel is the CUDA release of the wheel's version (wheels install no headers)") {
  Scan s = scan("--driver 520.61.05 " + wheels({kTorch, kCudnn, kCudart}), "cudart-version");
  REQUIRE(s.report.is_object());
  bool named = false;  // nvidia-cuda-runtime-cu12 12.1.105: CUDA 12.1, not only "CUDA 12"
  for (const json& f : findings(s.report, "cuda-driver-too-old"))
    named = named || f["message"].get<std::string>().find("older than CUDA 12.1 needs (>= 525.60.13, the minor-version-"
                                                          "compatibility floor of CUDA 12), required by libcudart.so.12 "
                                                          "(site-packages/nvidia/cuda_runtime/lib/libcudart.so.12)") !=
                                 std::string::npos;
  CHECK(named);
}

TEST_CASE("the real loader agrees with the install layout depscan models") {
  TempDir site("wheels-site");
  REQUIRE(unzip_wheels(site.str(), wheels({kTorch, kCudnn, kCudart})));
  std::string torch_lib = site.str() + "/torch/lib/libtorch_cuda.so";
  auto listed = run_command("/lib64/ld-linux-x86-64.so.2 --list " + shell_quote(torch_lib));
  std::string arrow = "libcudnn.so.9 => ";
  size_t at = listed.output.find(arrow);
  REQUIRE_MESSAGE(at != std::string::npos, listed.output);
  at += arrow.size();
  std::string loader_path = listed.output.substr(at, listed.output.find(" (", at) - at);
  CHECK(loader_path == site.str() + "/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9");  // the layout the install scan shows

  Scan direct = scan(shell_quote(torch_lib), "loader-layout");  // the unpacked files, as the loader saw them
  REQUIRE(direct.report.is_object());
  auto torch = object_at(direct.report, torch_lib);
  REQUIRE(torch);
  CHECK(resolved(direct.report, *torch, "libcudnn.so.9")["path"] == loader_path);
}

TEST_CASE("without the cuDNN wheel, libcudnn.so.9 falls back to the system, after the wheel directories") {
  TempDir root("wheels-fallback-root");  // a system with cuDNN 9 in a default directory
  fs::create_directories(root.path() / "usr/lib");
  fs::copy_file(fixture("libcudnn.so.9"), root.path() / "usr/lib/libcudnn.so.9");
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({kTorch, kCudart}), "fallback");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  auto torch = object_at(s.report, "site-packages/torch/lib/libtorch_cuda.so");
  REQUIRE(torch);
  const json* cudnn = edge(s.report, *torch, "libcudnn.so.9");
  REQUIRE(cudnn);
  REQUIRE(!(*cudnn)["tried"].empty());
  CHECK((*cudnn)["tried"][0] == "site-packages/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9");
  REQUIRE(!(*cudnn)["to"].is_null());
  const json& taken = s.report["objects"][(*cudnn)["to"].get<size_t>()];
  CHECK(taken["path"] == "/usr/lib/libcudnn.so.9");
  CHECK(taken["owner"] == "system");
  CHECK((*cudnn)["how"] != "runpath");
}

TEST_CASE("without the cuDNN wheel and no system cuDNN (an empty --root), libcudnn.so.9 is not found") {
  TempDir root("wheels-empty-root");
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({kTorch, kCudart}), "no-cudnn");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  CHECK(s.exit_code == 1);
  auto torch = object_at(s.report, "site-packages/torch/lib/libtorch_cuda.so");
  REQUIRE(torch);
  const json* cudnn = edge(s.report, *torch, "libcudnn.so.9");
  REQUIRE(cudnn);
  CHECK((*cudnn)["to"].is_null());
  REQUIRE(!(*cudnn)["tried"].empty());
  CHECK((*cudnn)["tried"][0] == "site-packages/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9");
  CHECK(any_message_has(findings(s.report, "library-not-found"), "libcudnn.so.9"));
}

TEST_CASE("a library another installed wheel ships off the search path: a warning that names it, not an install hint") {
  const char* kCupyLike = "cupylike-14.0-cp311-cp311-manylinux2014_x86_64.whl";
  const std::string ext = "site-packages/cupylike/runtime.cpython-311-x86_64-linux-gnu.so";
  const std::string shipped = "site-packages/nvidia/cuda_runtime/lib/libcudart.so.12";
  TempDir root("wheels-preload-root");  // no system libcudart.so.12 on any machine
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({kCupyLike, kCudart}), "shipped");
  REQUIRE(s.report.is_object());
  json cudart;
  for (const json& f : findings(s.report, "library-not-found"))
    if (f["message"].get<std::string>().starts_with("libcudart.so.12:")) cudart = f;
  REQUIRE(cudart.is_object());
  CHECK(cudart["severity"] == "warning");
  std::string message = cudart["message"];
  CHECK(message.find("(needed by " + ext + ")") != std::string::npos);
  CHECK(message.find("nvidia-cuda-runtime-cu12 12.1.105 installs it at " + shipped + ", where the loader does not look") !=
        std::string::npos);
  std::string fix = cudart["fix"];
  CHECK(fix.starts_with("load " + shipped + " before importing " + ext));
  CHECK(fix.find("pip install") == std::string::npos);  // it is installed already
  CHECK(fix.find("tried: <install prefix>/") == std::string::npos);
  for (const json& f : findings(s.report, "wheel-policy-violation"))  // an installed wheel ships it: no policy question
    CHECK(f["message"].get<std::string>().find("libcudart.so.12") == std::string::npos);

  SUBCASE("without the wheel that ships it, the missing library stays an error with an install hint") {
    Scan alone = scan("--root " + shell_quote(root.str()) + wheels({kCupyLike}), "not-shipped");
    bool error_with_hint = false;
    for (const json& f : findings(alone.report, "library-not-found"))
      if (f["message"].get<std::string>().starts_with("libcudart.so.12:"))
        error_with_hint = f["severity"] == "error" && f["fix"].get<std::string>().find("pip install nvidia-cuda-runtime-cu12") != std::string::npos;
    CHECK(error_with_hint);
  }
}

TEST_CASE("a CUDA 13 module's libcurand.so.10 off the search path: the CUDA 12 wheel's copy is not the one to load") {
  TempDir root("wheels-other-major-root");
  const std::string module = "site-packages/cu13rand/_rand.cpython-311-x86_64-linux-gnu.so";
  auto curand_finding = [&](const std::string& wheel_args, const std::string& label) {
    Scan s = scan("--root " + shell_quote(root.str()) + wheel_args, label);
    REQUIRE(s.report.is_object());
    std::optional<json> out;
    for (const json& f : findings(s.report, "library-not-found"))
      if (f["message"].get<std::string>().starts_with("libcurand.so.10:")) out = f;
    REQUIRE(out);
    CHECK((*out)["message"].get<std::string>().find("(needed by " + module + ")") != std::string::npos);
    return *out;
  };
  json cu12 = curand_finding(wheels({"cu13rand-1.0-cp311-cp311-manylinux_2_27_x86_64.whl",
                                     "nvidia_curand_cu12-10.3.10.19-py3-none-manylinux_2_27_x86_64.whl"}), "cu12-curand");
  CHECK(cu12["severity"] == "error");  // an install hint, not "load the cu12 copy first"
  CHECK(cu12["message"].get<std::string>().ends_with(
      "; nvidia-curand-cu12 10.3.10.19 installs a libcurand.so.10 at site-packages/nvidia/curand/lib/libcurand.so.10, "
      "but for CUDA 12, and the process's other CUDA libraries are CUDA 13"));
  CHECK(cu12["fix"].get<std::string>().starts_with("libcurand.so.10 is CUDA's curand library: pip install nvidia-curand (CUDA 13)"));

  SUBCASE("with the CUDA 13 wheel installed too, whatever the order: its copy is the one named") {
    json both = curand_finding(wheels({"nvidia_curand_cu12-10.3.10.19-py3-none-manylinux_2_27_x86_64.whl",
                                       "cu13rand-1.0-cp311-cp311-manylinux_2_27_x86_64.whl",
                                       "nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl"}), "both-curand");
    CHECK(both["severity"] == "warning");
    CHECK(both["message"].get<std::string>().find("nvidia-curand 10.4.0.35 installs it at site-packages/nvidia/cu13/lib/libcurand.so.10") !=
          std::string::npos);
    CHECK(both["fix"].get<std::string>().starts_with("load site-packages/nvidia/cu13/lib/libcurand.so.10 before importing"));
  }
}

TEST_CASE("CuPy 13.6 for CUDA 13: the name cupy-cuda13x gives the major its cuRAND module's libcurand.so.10 does not") {
  TempDir root("wheels-cupy13x-root");
  const char* cupy = "cupy_cuda13x-13.6.0-cp311-cp311-manylinux2014_x86_64.whl";
  auto curand_finding = [&](std::initializer_list<const char*> wheel_files, const std::string& label) {
    Scan s = scan("--root " + shell_quote(root.str()) + wheels(wheel_files), label);
    REQUIRE(s.report.is_object());
    std::optional<json> out = not_found(s.report, "libcurand.so.10");
    REQUIRE(out);
    return *out;
  };
  json cu12 = curand_finding({cupy, "nvidia_curand_cu12-10.3.10.19-py3-none-manylinux_2_27_x86_64.whl"}, "cupy13x-cu12");
  CHECK(cu12["severity"] == "error");
  CHECK(cu12["message"].get<std::string>().find("but for CUDA 12, and the process's other CUDA libraries are CUDA 13") !=
        std::string::npos);
  CHECK(cu12["fix"].get<std::string>().starts_with("libcurand.so.10 is CUDA's curand library: pip install nvidia-curand (CUDA 13)"));

  json cu13 = curand_finding({cupy, "nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl"}, "cupy13x-cu13");
  CHECK(cu13["severity"] == "error");  // CuPy 13 loads nothing before its cuRAND module
  CHECK(cu13["message"].get<std::string>().find("cupy-cuda13x 13.6.0 loads no library before this module") != std::string::npos);

  Scan no_nccl = scan("--root " + shell_quote(root.str()) + wheels({cupy}), "cupy13x-no-nccl");
  REQUIRE(no_nccl.report.is_object());
  auto nccl = not_found(no_nccl.report, "libnccl.so.2");
  REQUIRE(nccl);
  CHECK((*nccl)["severity"] == "warning");  // an optional module (matrix optional_modules)
  CHECK_MESSAGE((*nccl)["fix"].get<std::string>().starts_with("pip install \"nvidia-nccl-cu13>=2.27.7,<3\""), (*nccl)["fix"]);
}

TEST_CASE("ONNX Runtime's provider: the fix for a CUDA wheel's library off the search path is onnxruntime.preload_dlls()") {
  TempDir root("wheels-ort-preload-root");
  const char* ort = "onnxruntime_gpu-1.31.1-cp311-cp311-manylinux_2_27_x86_64.whl";
  Scan s = scan("--root " + shell_quote(root.str()) +
                    wheels({ort, "nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl",
                            "nvidia_cuda_runtime-13.0.96-py3-none-manylinux_2_27_x86_64.whl",
                            "nvidia_cudnn_cu13-9.11.0.98-py3-none-manylinux_2_27_x86_64.whl"}),
                "ort-preload");
  REQUIRE(s.report.is_object());
  std::map<std::string, json> by_name;
  for (const json& f : findings(s.report, "library-not-found"))
    by_name[f["message"].get<std::string>().substr(0, f["message"].get<std::string>().find(':'))] = f;
  for (const json& f : findings(s.report, "dlopen-library-not-found")) {
    std::string message = f["message"];  // "<opener> opens libcudnn.so.9 with dlopen at run time ..."
    size_t name = message.find(" opens ") + 7;
    by_name[message.substr(name, message.find(' ', name) - name)] = f;
  }
  // NEEDED entries, and the provider's dlopen of libcudnn.so.9 (a name its code builds)
  for (const std::string name : {"libcurand.so.10", "libcudart.so.13", "libcudnn.so.9"}) {  // the empty root has no libc either
    CAPTURE(name);
    REQUIRE(by_name.count(name));
    const json& f = by_name[name];
    CHECK(f["severity"] == "warning");  // the application can load it first
    CHECK(f["message"].get<std::string>().ends_with("as onnxruntime.preload_dlls() does when the application calls it"));
    if (name != "libcudnn.so.9")  // a library ONNX Runtime opens when a session starts, not a module Python imports
      CHECK(f["message"].get<std::string>().find(": loading libonnxruntime_providers_cuda.so works only when") != std::string::npos);
    std::string dir = name == "libcudnn.so.9" ? "site-packages/nvidia/cudnn/lib/" : "site-packages/nvidia/cu13/lib/";
    CHECK(f["fix"].get<std::string>().starts_with(
        "call onnxruntime.preload_dlls() after import onnxruntime and before the first InferenceSession: "
        "onnxruntime-gpu 1.31.1 then loads " + dir + name + " by its path; or load "));
  }

  SUBCASE("preload_dlls() looks only in ONNX Runtime's own site-packages: a wheel in another gets no such call") {
    TempDir split("wheels-ort-split-root");
    std::string platlib = split.str() + "/venv/lib64/python3.11/site-packages", purelib = split.str() + "/venv/lib/python3.11/site-packages";
    fs::create_directories(platlib);
    fs::create_directories(purelib);
    REQUIRE(unzip_wheels(platlib, wheels({ort})));
    REQUIRE(unzip_wheels(purelib, wheels({"nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl"})));
    Scan apart = scan("--root " + shell_quote(split.str()) + " --python-env /venv --no-etc-preload", "ort-split");
    REQUIRE(apart.report.is_object());
    std::optional<json> curand;
    for (const json& f : findings(apart.report, "library-not-found"))
      if (f["message"].get<std::string>().starts_with("libcurand.so.10:")) curand = f;
    REQUIRE(curand);
    CHECK((*curand)["fix"].get<std::string>().starts_with("load /venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcurand.so.10 before"));
    CHECK((*curand)["message"].get<std::string>().find("preload_dlls") == std::string::npos);
  }

  SUBCASE("the same library needed by a module of another package gets no such call") {
    Scan other = scan("--root " + shell_quote(root.str()) +
                          wheels({"cu13rand-1.0-cp311-cp311-manylinux_2_27_x86_64.whl",
                                  "nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl"}),
                      "other-preload");
    bool plain_fix = false;
    for (const json& f : findings(other.report, "library-not-found"))
      if (f["message"].get<std::string>().starts_with("libcurand.so.10:"))
        plain_fix = f["fix"].get<std::string>().starts_with("load site-packages/nvidia/cu13/lib/libcurand.so.10 before importing");
    CHECK(plain_fix);
  }
}

TEST_CASE("the real loader: the extension fails alone and loads once the shipped copy was loaded by its path") {
  TempDir site("wheels-preload-site");
  REQUIRE(unzip_wheels(site.str(), wheels({"cupylike-14.0-cp311-cp311-manylinux2014_x86_64.whl", kCudart})));
  std::string ext = site.str() + "/cupylike/runtime.cpython-311-x86_64-linux-gnu.so";
  std::string shipped = site.str() + "/nvidia/cuda_runtime/lib/libcudart.so.12";
  auto load = [](const std::vector<std::string>& paths) {
    std::string args;
    for (const std::string& p : paths) args += " " + shell_quote(p);
    return run_command("python3 -c 'import ctypes, sys\nfor p in sys.argv[1:]: ctypes.CDLL(p)'" + args + " 2>&1");
  };
  auto alone = load({ext});
  CHECK(alone.exit_code != 0);
  CHECK(alone.output.find("libcudart.so.12: cannot open shared object file") != std::string::npos);
  CHECK(load({shipped, ext}).exit_code == 0);
}

namespace {

const char* kCupy12 = "cupy_cuda12x-14.2.0-cp311-cp311-manylinux2014_x86_64.whl";
const char* kCusparse12 = "nvidia_cusparse_cu12-12.5.10.65-py3-none-manylinux2014_x86_64.whl";
const char* kNvjitlink12 = "nvidia_nvjitlink_cu12-12.9.86-py3-none-manylinux2010_x86_64.whl";
const std::string kCusparseModule = "cupy_backends/cuda/libs/cusparse.cpython-311-x86_64-linux-gnu.so";

// The edges of the root that `object` is, from that object, of one kind, in the order they were made.
std::vector<json> root_edges_from(const json& report, size_t object, const std::string& kind) {
  std::vector<json> out;
  for (const json& e : report["edges"])
    if (e["from"] == object && report["roots"][e["root"].get<size_t>()] == object && e["kind"] == kind) out.push_back(e);
  return out;
}

std::vector<std::string> names_of(const std::vector<json>& edges) {
  std::vector<std::string> out;
  for (const json& e : edges) out.push_back(e["name"]);
  return out;
}

// The real path of the file the root edge of `object` named `name` reached; empty if none did.
std::string reached_realpath(const json& report, size_t object, const std::string& name) {
  for (const json& e : root_edges_from(report, object, "needed"))
    if (e["name"] == name && !e["to"].is_null())
      return fs::canonical(report["objects"][e["to"].get<size_t>()]["path"].get<std::string>());
  return "";
}

struct FirstLoad {
  std::string path;
  bool global;
};

// What the real loader does in Python: loads `first` in order with ctypes (RTLD_GLOBAL or the
// default RTLD_LOCAL), then `module`; prints the loader's error, or the files mapped as `soname`.
std::string mapped_after(const std::vector<FirstLoad>& first, const std::string& module, const std::string& soname) {
  std::string args = shell_quote(soname) + " " + shell_quote(module);
  for (const FirstLoad& f : first) args += " " + std::string(f.global ? "g" : "l") + " " + shell_quote(f.path);
  return run_command("python3 -c 'import ctypes, os, sys\nfirst = sys.argv[3:]\n"
                     "for mode, p in zip(first[::2], first[1::2]): ctypes.CDLL(p, os.RTLD_NOW | os.RTLD_GLOBAL if mode == \"g\" else 0)\n"
                     "try:\n  ctypes.CDLL(sys.argv[2])\nexcept OSError as e:\n  print(e); sys.exit(0)\n"
                     "print(sorted({l.split()[-1] for l in open(\"/proc/self/maps\") if l.rstrip().endswith(\"/\" + sys.argv[1])}))' " +
                     args + " 2>&1").output;
}

}  // namespace

TEST_CASE("CuPy's cuda-pathfinder loads the NVIDIA wheels' nvJitLink and cuSPARSE before the module: its NEEDED binds to them") {
  TempDir root("wheels-pathfinder-root");  // no system cuSPARSE: the module's own search finds none
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({kCupy12, kCusparse12, kNvjitlink12}), "pathfinder");
  REQUIRE(s.report.is_object());
  auto module = object_at(s.report, "site-packages/" + kCusparseModule);
  REQUIRE(module);
  std::vector<json> first = root_edges_from(s.report, *module, "preload");
  CHECK(names_of(first) == std::vector<std::string>{"site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12",
                                                    "site-packages/nvidia/cusparse/lib/libcusparse.so.12"});
  for (const json& e : first) CHECK(e["how_detail"] == "loaded first by CuPy's cuda.pathfinder (direct path)");
  std::vector<json> needed = root_edges_from(s.report, *module, "needed");
  REQUIRE(names_of(needed).front() == "libcusparse.so.12");
  CHECK(needed.front()["how"] == "already_loaded");
  CHECK(s.report["objects"][needed.front()["to"].get<size_t>()]["path"] == "site-packages/nvidia/cusparse/lib/libcusparse.so.12");
  auto cusparse = object_at(s.report, "site-packages/nvidia/cusparse/lib/libcusparse.so.12");
  REQUIRE(cusparse);
  bool jitlink_bound = false;  // cuSPARSE has no RUNPATH: in the module's process, the nvJitLink loaded before it
  for (const json& e : s.report["edges"])
    if (e["from"] == *cusparse && e["root"] == needed.front()["root"] && e["name"] == "libnvJitLink.so.12")
      jitlink_bound = e["how"] == "already_loaded";
  CHECK(jitlink_bound);
  for (const json& f : findings(s.report, "library-not-found"))  // the empty root has no C library, nothing else is missing
    if (f["message"].get<std::string>().find("(needed by site-packages/cupy_backends") != std::string::npos)
      CHECK(f["message"].get<std::string>().starts_with("libc.so.6:"));

  SUBCASE("without the cuSPARSE wheel: pathfinder has loaded nvJitLink, and the module's libcusparse.so.12 is missing") {
    Scan alone = scan("--root " + shell_quote(root.str()) + wheels({kCupy12, kNvjitlink12}), "pathfinder-missing");
    REQUIRE(alone.report.is_object());
    auto m = object_at(alone.report, "site-packages/" + kCusparseModule);
    REQUIRE(m);
    CHECK(names_of(root_edges_from(alone.report, *m, "preload")) ==
          std::vector<std::string>{"site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12"});
    bool missing = false;
    for (const json& f : findings(alone.report, "library-not-found"))
      missing |= f["message"].get<std::string>().starts_with("libcusparse.so.12: cannot open shared object file");
    CHECK(missing);
    CHECK(alone.exit_code == 1);
  }
}

namespace {

// CuPy's wheel unzipped into one site-packages, the NVIDIA wheels it uses into another.
bool install_cupy_apart(const std::string& cupy_site, const std::string& nvidia_site) {
  fs::create_directories(cupy_site);
  fs::create_directories(nvidia_site);
  return unzip_wheels(cupy_site, wheels({kCupy12})) && unzip_wheels(nvidia_site, wheels({kCusparse12, kNvjitlink12}));
}

}  // namespace

TEST_CASE("pathfinder looks in every site-packages: CuPy under lib64/, the NVIDIA wheels under lib/") {
  TempDir venv("wheels-pathfinder-split");
  std::string platlib = venv.str() + "/lib64/python3.11/site-packages", purelib = venv.str() + "/lib/python3.11/site-packages";
  REQUIRE(install_cupy_apart(platlib, purelib));
  Scan s = scan("--python-env " + shell_quote(venv.str()) + " --no-etc-preload", "pathfinder-split");
  REQUIRE(s.report.is_object());
  auto module = object_at(s.report, platlib + "/" + kCusparseModule);
  REQUIRE(module);
  CHECK(names_of(root_edges_from(s.report, *module, "preload")) ==
        std::vector<std::string>{purelib + "/nvidia/nvjitlink/lib/libnvJitLink.so.12", purelib + "/nvidia/cusparse/lib/libcusparse.so.12"});
  std::vector<json> needed = root_edges_from(s.report, *module, "needed");
  REQUIRE_FALSE(needed.empty());
  CHECK(needed.front()["how"] == "already_loaded");
}

TEST_CASE("pathfinder looks only in its own environment: NVIDIA wheels of another venv in the same scan are not loaded") {
  TempDir envs("wheels-pathfinder-envs");
  std::string cupy_site = envs.str() + "/a/lib/python3.11/site-packages", nvidia_site = envs.str() + "/b/lib/python3.11/site-packages";
  REQUIRE(install_cupy_apart(cupy_site, nvidia_site));
  Scan s = scan(shell_quote(cupy_site) + " " + shell_quote(nvidia_site) + " --no-etc-preload", "pathfinder-envs");
  REQUIRE(s.report.is_object());
  auto module = object_at(s.report, cupy_site + "/" + kCusparseModule);
  REQUIRE(module);
  CHECK(root_edges_from(s.report, *module, "preload").empty());
  std::vector<json> needed = root_edges_from(s.report, *module, "needed");
  REQUIRE(names_of(needed).front() == "libcusparse.so.12");
  CHECK(needed.front()["how"] != "already_loaded");  // the module's own search: the system's copy, if any
  if (!needed.front()["to"].is_null())
    CHECK_FALSE(s.report["objects"][needed.front()["to"].get<size_t>()]["path"].get<std::string>().starts_with(nvidia_site));
}

TEST_CASE("the real loader: after pathfinder's loads, CuPy's module maps the cuSPARSE depscan binds it to") {
  TempDir site("wheels-pathfinder-site");
  REQUIRE(unzip_wheels(site.str(), wheels({kCupy12, kCusparse12, kNvjitlink12})));
  Scan s = scan("--python-env " + shell_quote(site.str()) + " --no-etc-preload", "pathfinder-loader");
  REQUIRE(s.report.is_object());
  std::string module_path = site.str() + "/" + kCusparseModule;
  auto module = object_at(s.report, module_path);
  REQUIRE(module);
  std::string expected = reached_realpath(s.report, *module, "libcusparse.so.12");
  REQUIRE_FALSE(expected.empty());
  std::vector<FirstLoad> first;  // as pathfinder loads them: RTLD_GLOBAL
  for (const std::string& path : names_of(root_edges_from(s.report, *module, "preload"))) first.push_back({path, true});
  CHECK(mapped_after(first, module_path, "libcusparse.so.12") == "['" + expected + "']\n");

  SUBCASE("depscan why answers as the scan: the module's libcusparse.so.12 is the copy pathfinder loaded") {
    auto why = run_command(depscan_bin() + " why " + shell_quote(module_path) + " libcusparse.so.12 2>&1");
    std::string wheel_copy = site.str() + "/nvidia/cusparse/lib/libcusparse.so.12";
    CHECK_MESSAGE(why.exit_code == 0, why.output);
    CHECK(why.output.find("loaded before the module by its Python package: loaded first by CuPy's cuda.pathfinder") !=
          std::string::npos);
    CHECK(why.output.find("=> found " + wheel_copy) != std::string::npos);
    CHECK(why.output.find("as libcusparse.so.12: found " + wheel_copy + " (real path " + wheel_copy + ") [already loaded]") !=
          std::string::npos);
  }
}

namespace {

const char* kCupy13 = "cupy_cuda12x-13.6.0-cp311-cp311-manylinux2014_x86_64.whl";
const char* kCupy14For13 = "cupy_cuda13x-14.2.0-cp311-cp311-manylinux2014_x86_64.whl";
const char* kCublas12 = "nvidia_cublas_cu12-12.9.3.13-py3-none-manylinux2014_x86_64.whl";
const std::string kCublasModule = "cupy_backends/cuda/libs/cublas.cpython-311-x86_64-linux-gnu.so";
const std::string kCutensorModule = "cupy_backends/cuda/libs/cutensor.cpython-311-x86_64-linux-gnu.so";

// What the root that `object` is had loaded first, in order: "preload" edges (RTLD_GLOBAL) and "dlopen" ones (RTLD_LOCAL).
std::vector<json> loaded_first_edges(const json& report, size_t object) {
  std::vector<json> out;
  for (const json& e : report["edges"])
    if (e["from"] == object && report["roots"][e["root"].get<size_t>()] == object && e.value("loaded_first", false))
      out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("CuPy 13 loads only the cuTENSOR and NCCL wheels first: its cuBLAS module cannot find the cuBLAS wheel's library") {
  TempDir root("wheels-cupy13-root");  // no system cuBLAS or cuTENSOR
  Scan s = scan("--root " + shell_quote(root.str()) +
                    wheels({kCupy13, kCublas12, "cutensor_cu12-2.8.1-py3-none-manylinux2014_x86_64.whl"}),
                "cupy13");
  REQUIRE(s.report.is_object());
  auto cublas = not_found(s.report, "libcublas.so.12");
  REQUIRE(cublas);
  CHECK((*cublas)["severity"] == "error");  // not a guess that some Python code loads it: CuPy 13 does not
  std::string message = (*cublas)["message"];
  CHECK(message.find("(needed by site-packages/" + kCublasModule + ")") != std::string::npos);
  CHECK(message.find("nvidia-cublas-cu12 12.9.3.13 installs it at site-packages/nvidia/cublas/lib/libcublas.so.12, where the "
                     "loader does not look, and cupy-cuda12x 13.6.0 loads no library before this module (CuPy before 14.0 "
                     "has no cuda.pathfinder") != std::string::npos);
  CHECK((*cublas)["fix"].get<std::string>().starts_with("load site-packages/nvidia/cublas/lib/libcublas.so.12 before importing"));
  CHECK(s.exit_code == 1);

  auto cutensor_module = object_at(s.report, "site-packages/" + kCutensorModule);  // import cupy preloads the wheel's copy
  REQUIRE(cutensor_module);
  std::vector<json> first = loaded_first_edges(s.report, *cutensor_module);
  CHECK(names_of(first) == std::vector<std::string>{"site-packages/cutensor/lib/libcutensor.so.2"});
  for (const json& e : first) {
    CHECK(e["how_detail"] == "loaded first by import cupy (cupy/_environment.py's _preload_library) (direct path)");
    CHECK(e["kind"] == "dlopen");  // ctypes.CDLL's RTLD_LOCAL: not in the module's scope but for its NEEDED
  }
  CHECK(resolved(s.report, *cutensor_module, "libcutensor.so.2")["path"] == "site-packages/cutensor/lib/libcutensor.so.2");
  CHECK_FALSE(not_found(s.report, "libcutensor.so.2"));

  SUBCASE("with the cuTENSOR wheels of CUDA 11 and 12 installed over each other, CuPy 13 finds cutensor-cu12's file") {
    Scan both = scan("--root " + shell_quote(root.str()) +
                         wheels({kCupy13, "cutensor_cu11-2.8.1-py3-none-manylinux2014_x86_64.whl",
                                 "cutensor_cu12-2.8.1-py3-none-manylinux2014_x86_64.whl"}),
                     "cupy13-cutensor11-12");
    REQUIRE(both.report.is_object());
    auto module = object_at(both.report, "site-packages/" + kCutensorModule);
    REQUIRE(module);
    CHECK(names_of(loaded_first_edges(both.report, *module)) == std::vector<std::string>{"site-packages/cutensor/lib/libcutensor.so.2"});
    CHECK_FALSE(not_found(both.report, "libcutensor.so.2"));
  }

  SUBCASE("CuPy 13 for CUDA 12 does not preload cutensor-cu13's copy: the module's import fails, and the message says why") {
    Scan wrong = scan("--root " + shell_quote(root.str()) +
                          wheels({kCupy13, "cutensor_cu13-2.8.1-py3-none-manylinux2014_x86_64.whl"}),
                      "cupy13-cutensor13");
    REQUIRE(wrong.report.is_object());
    auto module = object_at(wrong.report, "site-packages/" + kCutensorModule);
    REQUIRE(module);
    CHECK(loaded_first_edges(wrong.report, *module).empty());
    auto cutensor = not_found(wrong.report, "libcutensor.so.2");
    REQUIRE(cutensor);
    CHECK((*cutensor)["message"].get<std::string>().find(
              "cutensor-cu13 2.8.1 installs a libcutensor.so.2 at site-packages/cutensor/lib/libcutensor.so.2, but for "
              "CUDA 13, and the process's other CUDA libraries are CUDA 12") != std::string::npos);

    TempDir site("wheels-cupy13-cutensor13-site");
    REQUIRE(unzip_wheels(site.str(), wheels({kCupy13, "cutensor_cu13-2.8.1-py3-none-manylinux2014_x86_64.whl"})));
    auto why = run_command(depscan_bin() + " why " + shell_quote(site.str() + "/" + kCutensorModule) + " libcutensor.so.2 2>&1");
    CHECK_MESSAGE(why.output.find("not loaded before the module by its Python package: " + site.str() +
                                  "/cutensor/lib/libcutensor.so.2 (cutensor-cu13 2.8.1): taken only from cutensor-cu12 2.x, "
                                  "at least 2.0.0") != std::string::npos,
                  why.output);
  }

  SUBCASE("CuPy 14's pathfinder loads libcutensor.so.2 but not libcutensorMg.so.2: the optional module's import fails") {
    Scan s14 = scan("--root " + shell_quote(root.str()) +
                        wheels({kCupy14For13, "cutensor_cu13-2.8.1-py3-none-manylinux2014_x86_64.whl"}),
                    "cupy14-cutensor");
    REQUIRE(s14.report.is_object());
    auto mg = not_found(s14.report, "libcutensorMg.so.2");
    REQUIRE(mg);
    CHECK((*mg)["severity"] == "warning");
    std::string text = (*mg)["message"];
    CHECK(text.find("cutensor-cu13 2.8.1 installs it at site-packages/cutensor/lib/libcutensorMg.so.2, where the loader does not "
                    "look, and cupy-cuda13x 14.2.0 loads only libcutensor.so.2 before this module (loaded first by CuPy's "
                    "cuda.pathfinder): the import fails") != std::string::npos);
    CHECK(text.ends_with("only importing cupyx.cutensor fails (optional)"));
    auto no_loader = findings(s14.report, "loader-missing");  // the empty root's, named by the module first
    REQUIRE_FALSE(no_loader.empty());
    for (const json& f : no_loader) CHECK(f["severity"] == "error");  // not lowered with the optional module
  }
}

TEST_CASE("CuPy 13 preloads the NCCL wheel only from its min_pypi_version: nvidia-nccl-cu11 2.14.3 is passed over, 2.21.5 taken") {
  const char* cupy11 = "cupy_cuda11x-13.6.0-cp311-cp311-manylinux2014_x86_64.whl";
  const std::string module = "cupy_backends/cuda/libs/nccl.cpython-311-x86_64-linux-gnu.so";
  TempDir root("wheels-cupy13-nccl-root");  // no system NCCL
  Scan recent = scan("--root " + shell_quote(root.str()) +
                         wheels({cupy11, "nvidia_nccl_cu11-2.21.5-py3-none-manylinux1_x86_64.whl"}),
                     "cupy13-nccl-recent");
  REQUIRE(recent.report.is_object());
  auto taken = object_at(recent.report, "site-packages/" + module);
  REQUIRE(taken);
  CHECK(names_of(loaded_first_edges(recent.report, *taken)) == std::vector<std::string>{"site-packages/nvidia/nccl/lib/libnccl.so.2"});
  CHECK_FALSE(not_found(recent.report, "libnccl.so.2"));

  Scan old = scan("--root " + shell_quote(root.str()) + wheels({cupy11, "nvidia_nccl_cu11-2.14.3-py3-none-manylinux1_x86_64.whl"}),
                  "cupy13-nccl-old");
  REQUIRE(old.report.is_object());
  auto passed = object_at(old.report, "site-packages/" + module);
  REQUIRE(passed);
  CHECK(loaded_first_edges(old.report, *passed).empty());
  auto nccl = not_found(old.report, "libnccl.so.2");
  REQUIRE(nccl);
  CHECK_MESSAGE((*nccl)["message"].get<std::string>().find(
                    "nvidia-nccl-cu11 2.14.3 installs it at site-packages/nvidia/nccl/lib/libnccl.so.2, where the loader "
                    "does not look, and cupy-cuda11x 13.6.0 loads no library before this module (loaded first by "
                    "cupy.cuda.nccl (cupy/_environment.py's _preload_library), which takes it only from nvidia-nccl-cu11 "
                    "2.x, at least 2.16.5)") != std::string::npos,
                (*nccl)["message"]);
  // CuPy's NCCL module is optional (matrix optional_modules): its fix leads with the upgrade
  CHECK_MESSAGE((*nccl)["fix"].get<std::string>().starts_with("pip install \"nvidia-nccl-cu11>=2.16.5,<3\""), (*nccl)["fix"]);

  // The files loaded before the module in a scan of the Python environment `env` inside `root_dir`.
  auto loaded_first_in = [&](const std::string& root_dir, const std::string& env, const std::string& module_path,
                             const std::string& label) {
    Scan in_root = scan("--root " + shell_quote(root_dir) + " --python-env " + env + " --no-etc-preload", label);
    REQUIRE(in_root.report.is_object());
    auto object = object_at(in_root.report, module_path);
    REQUIRE(object);
    return names_of(loaded_first_edges(in_root.report, *object));
  };

  // Whether depscan why says the module's package passed over NCCL 2.21.5 in `hidden_site` because
  // importlib.metadata finds 2.14.3 in `first_site` first.
  auto why_says_hidden = [&](const std::string& root_dir, const std::string& module_path, const std::string& hidden_site,
                             const std::string& first_site) {
    auto why = run_command(depscan_bin() + " why --root " + shell_quote(root_dir) + " " + module_path + " libnccl.so.2 2>&1");
    bool says = why.output.find("not loaded before the module by its Python package: " + hidden_site +
                                "/nvidia/nccl/lib/libnccl.so.2 (nvidia-nccl-cu11 2.21.5): importlib.metadata finds "
                                "nvidia-nccl-cu11 2.14.3 in " + first_site + " first") != std::string::npos;
    if (!says) MESSAGE(why.output);
    return says;
  };

  SUBCASE("depscan why names the copy CuPy passed over and what it takes instead") {
    TempDir site("wheels-cupy13-nccl-site");
    REQUIRE(unzip_wheels(site.str(), wheels({cupy11, "nvidia_nccl_cu11-2.14.3-py3-none-manylinux1_x86_64.whl"})));
    auto why = run_command(depscan_bin() + " why " + shell_quote(site.str() + "/" + module) + " libnccl.so.2 2>&1");
    CHECK_MESSAGE(why.output.find("not loaded before the module by its Python package: " + site.str() +
                                  "/nvidia/nccl/lib/libnccl.so.2 (nvidia-nccl-cu11 2.14.3): taken only from nvidia-nccl-cu11 "
                                  "2.x, at least 2.16.5") != std::string::npos,
                  why.output);
    CHECK_MESSAGE(why.output.find("loaded before the module by its Python package: loaded first") == std::string::npos,
                  why.output);
  }

  SUBCASE("importlib.metadata finds the first distribution on sys.path: an old one under lib64/ hides a recent one under lib/") {
    TempDir split("wheels-cupy13-nccl-root");  // a venv in an otherwise empty root: no system NCCL
    std::string platlib = "/venv/lib64/python3.11/site-packages", purelib = "/venv/lib/python3.11/site-packages";
    REQUIRE(unzip_wheels(split.str() + platlib, wheels({"nvidia_nccl_cu11-2.14.3-py3-none-manylinux1_x86_64.whl"})));
    REQUIRE(unzip_wheels(split.str() + purelib, wheels({cupy11, "nvidia_nccl_cu11-2.21.5-py3-none-manylinux1_x86_64.whl"})));
    Scan hidden = scan("--root " + shell_quote(split.str()) + " --python-env /venv --no-etc-preload", "cupy13-nccl-hidden");
    REQUIRE(hidden.report.is_object());
    auto hidden_module = object_at(hidden.report, purelib + "/" + module);
    REQUIRE(hidden_module);
    CHECK(loaded_first_edges(hidden.report, *hidden_module).empty());
    auto hidden_nccl = not_found(hidden.report, "libnccl.so.2");
    REQUIRE(hidden_nccl);
    CHECK_MESSAGE((*hidden_nccl)["message"].get<std::string>().find(
                      "(cupy/_environment.py's _preload_library), which takes it only from nvidia-nccl-cu11 2.x, at least 2.16.5") !=
                      std::string::npos,
                  (*hidden_nccl)["message"]);
    CHECK(why_says_hidden(split.str(), purelib + "/" + module, purelib, platlib));
  }

  SUBCASE("--python-env /usr is Debian's python3: it reads the NCCL that pip installed into /usr/local") {
    TempDir debian("wheels-cupy13-nccl-debian");
    std::string system = "/usr/lib/python3/dist-packages", local = "/usr/local/lib/python3.11/dist-packages";
    REQUIRE(unzip_wheels(debian.str() + system, wheels({cupy11})));
    REQUIRE(unzip_wheels(debian.str() + local, wheels({"nvidia_nccl_cu11-2.21.5-py3-none-manylinux1_x86_64.whl"})));
    CHECK(loaded_first_in(debian.str(), "/usr", system + "/" + module, "cupy13-nccl-debian") ==
          std::vector<std::string>{local + "/nvidia/nccl/lib/libnccl.so.2"});
  }

  SUBCASE("a venv made with --system-site-packages: CuPy in the venv takes the system's NCCL, unless the venv has one") {
    TempDir venv_root("wheels-cupy13-nccl-venv-system");
    std::string venv = "/venv/lib/python3.11/site-packages", local = "/usr/local/lib/python3.11/dist-packages";
    REQUIRE(unzip_wheels(venv_root.str() + venv, wheels({cupy11})));
    REQUIRE(unzip_wheels(venv_root.str() + local, wheels({"nvidia_nccl_cu11-2.21.5-py3-none-manylinux1_x86_64.whl"})));
    fs::create_directories(venv_root.str() + "/usr/lib/python3/dist-packages");
    auto scan_venv = [&](const std::string& cfg, const std::string& label) {
      std::ofstream(venv_root.str() + "/venv/pyvenv.cfg") << cfg;
      return loaded_first_in(venv_root.str(), "/venv", venv + "/" + module, label);
    };
    CHECK(scan_venv("home = /usr/bin\ninclude-system-site-packages = true\n", "cupy13-venv-system") ==
          std::vector<std::string>{local + "/nvidia/nccl/lib/libnccl.so.2"});
    CHECK(scan_venv("home = /usr/bin\ninclude-system-site-packages = false\n", "cupy13-venv-alone").empty());

    REQUIRE(unzip_wheels(venv_root.str() + venv, wheels({"nvidia_nccl_cu11-2.14.3-py3-none-manylinux1_x86_64.whl"})));
    CHECK(scan_venv("home = /usr/bin\ninclude-system-site-packages = true\n", "cupy13-venv-hides").empty());
    CHECK(why_says_hidden(venv_root.str(), venv + "/" + module, local, venv));
  }

  SUBCASE("a venv made with --system-site-packages: the system's CuPy, imported there, takes the venv's NCCL") {
    TempDir venv_root("wheels-cupy13-nccl-venv-base");
    std::string venv = "/venv/lib/python3.11/site-packages", local = "/usr/local/lib/python3.11/dist-packages";
    REQUIRE(unzip_wheels(venv_root.str() + local, wheels({cupy11})));
    REQUIRE(unzip_wheels(venv_root.str() + venv, wheels({"nvidia_nccl_cu11-2.21.5-py3-none-manylinux1_x86_64.whl"})));
    fs::create_directories(venv_root.str() + "/usr/lib/python3/dist-packages");
    std::ofstream(venv_root.str() + "/venv/pyvenv.cfg") << "home = /usr/bin\ninclude-system-site-packages = true\n";
    CHECK(loaded_first_in(venv_root.str(), "/venv", local + "/" + module, "cupy13-base-in-venv") ==
          std::vector<std::string>{venv + "/nvidia/nccl/lib/libnccl.so.2"});
    CHECK(loaded_first_in(venv_root.str(), "/usr", local + "/" + module, "cupy13-base-alone").empty());
    auto why = run_command(depscan_bin() + " why --root " + shell_quote(venv_root.str()) + " " + local + "/" + module +
                           " libnccl.so.2 2>&1");  // the base's interpreter, as README says
    CHECK_MESSAGE(why.output.find("NOT FOUND") != std::string::npos, why.output);
    CHECK_MESSAGE(why.output.find(venv) == std::string::npos, why.output);

    auto why_in = [&](const std::string& env, const std::string& file) {
      return run_command(depscan_bin() + " why --root " + shell_quote(venv_root.str()) + " --python-env " + env + " " +
                         file + " libnccl.so.2 2>&1");
    };
    auto in_venv = why_in("/venv", local + "/" + module);  // as the scan of the venv answers
    CHECK(in_venv.exit_code == 0);
    CHECK_MESSAGE(in_venv.output.find("  => found " + venv + "/nvidia/nccl/lib/libnccl.so.2 (real path " + venv +
                                      "/nvidia/nccl/lib/libnccl.so.2) [loaded first by cupy.cuda.nccl") != std::string::npos,
                  in_venv.output);
    auto in_base = why_in("/usr", local + "/" + module);
    CHECK_MESSAGE(in_base.exit_code == 1, in_base.output);
    CHECK_MESSAGE(in_base.output.find(venv) == std::string::npos, in_base.output);

    std::string other = "/opt/other/lib/python3.11/site-packages";  // on neither interpreter's sys.path
    REQUIRE(unzip_wheels(venv_root.str() + other, wheels({cupy11})));
    auto outside = why_in("/venv", other + "/" + module);
    CHECK_MESSAGE(outside.output.starts_with("depscan: warning: " + other + "/" + module + " is in " + other +
                                             ", which is not on the sys.path of /venv's interpreter"),
                  outside.output);
    CHECK_MESSAGE(outside.output.find("  => found " + venv + "/nvidia/nccl/lib/libnccl.so.2") != std::string::npos,
                  outside.output);

    auto no_env = why_in("/opt", local + "/" + module);
    CHECK(no_env.exit_code == 2);
    CHECK(no_env.output == "depscan: error: /opt: no lib/pythonX.Y/site-packages found (not a venv or conda prefix)\n");
    auto a_file = why_in("/venv/pyvenv.cfg", local + "/" + module);
    CHECK(a_file.exit_code == 2);
    CHECK(a_file.output == "depscan: error: /venv/pyvenv.cfg: not a directory\n");
  }
}

TEST_CASE("the real loader: CuPy 13's modules after CuPy's preloads, and CuPy 14's cuTENSOR module after pathfinder's") {
  std::set<bool> outcomes;
  for (const char* cupy : {kCupy13, kCupy14For13}) {
    CAPTURE(cupy);
    TempDir site("wheels-cupy-preloads");
    REQUIRE(unzip_wheels(site.str(), wheels({cupy, kCublas12, "cutensor_cu12-2.8.1-py3-none-manylinux2014_x86_64.whl"})));
    Scan s = scan("--python-env " + shell_quote(site.str()) + " --no-etc-preload", "cupy-preloads-loader");
    REQUIRE(s.report.is_object());
    for (const std::string& relative : {kCublasModule, kCutensorModule}) {
      std::string module_path = site.str() + "/" + relative;
      auto module = object_at(s.report, module_path);
      if (!module) continue;  // CuPy 14's wheel here has no cuBLAS module
      CAPTURE(relative);
      std::vector<FirstLoad> first;  // CuPy 13: ctypes.CDLL's RTLD_LOCAL; pathfinder: RTLD_GLOBAL
      for (const json& e : loaded_first_edges(s.report, *module)) first.push_back({e["name"], e["kind"] == "preload"});
      std::string mapped = mapped_after(first, module_path, "libcutensor.so.2");
      bool loads = mapped.starts_with("[");
      bool depscan_finds_all = true;
      for (const json& e : root_edges_from(s.report, *module, "needed")) depscan_finds_all &= !e["to"].is_null();
      CHECK_MESSAGE(loads == depscan_finds_all, mapped);
      outcomes.insert(loads);
    }
  }
  CHECK(outcomes == std::set<bool>{false, true});  // CuPy 13's cuTENSOR module loads; its cuBLAS module does not
}

namespace {

const char* kTorch215 = "torch-2.15.0+cu130-cp311-cp311-manylinux_2_28_x86_64.whl";
const char* kVision = "torchvision-0.29.2-cp311-cp311-manylinux_2_28_x86_64.whl";
const char* kCudart13 = "nvidia_cuda_runtime-13.0.96-py3-none-manylinux_2_27_x86_64.whl";

}  // namespace

TEST_CASE("torchvision after import torch: its NEEDED names bind to torch's libraries, torch._C's symbols stay out of its scope") {
  Scan s = scan(wheels({kTorch215, kVision, kCudart13}), "torch-first");
  REQUIRE(s.report.is_object());
  auto vision = object_at(s.report, "site-packages/torchvision/_C.so");
  REQUIRE(vision);
  CHECK(names_of(root_edges_from(s.report, *vision, "preload")) ==
        std::vector<std::string>{"site-packages/torch/lib/libtorch_global_deps.so"});  // RTLD_GLOBAL
  CHECK(names_of(root_edges_from(s.report, *vision, "dlopen")) ==
        std::vector<std::string>{"site-packages/torch/lib/libtorch_python.so"});       // torch._C: RTLD_LOCAL
  std::map<std::string, std::string> bound;
  for (const json& e : root_edges_from(s.report, *vision, "needed"))
    bound[e["name"]] = e["how"].get<std::string>() + " " +
                       (e["to"].is_null() ? "not found" : s.report["objects"][e["to"].get<size_t>()]["path"].get<std::string>());
  CHECK(bound["libc10.so"] == "already_loaded site-packages/torch/lib/libc10.so");
  CHECK(bound["libcudart.so.13"] == "already_loaded site-packages/torch/lib/../../nvidia/cu13/lib/libcudart.so.13");
  for (const json& f : findings(s.report, "library-not-found"))
    CHECK(f["message"].get<std::string>().find("(needed by site-packages/torchvision") == std::string::npos);
  auto undefined = findings(s.report, "undefined-symbol");
  REQUIRE(undefined.size() == 1);  // libtorch_python.so defines it, in torch._C's own scope
  CHECK(undefined[0]["message"].get<std::string>().starts_with(
      "symbol lookup error: site-packages/torchvision/image.so: undefined symbol: torch_python_only"));
}

TEST_CASE("a torch._C library that cannot be loaded (RTLD_LOCAL) is one error: importing the module fails, no dlopen is reported") {
  TempDir site("wheels-torch-broken");
  REQUIRE(unzip_wheels(site.str(), wheels({kTorch215, kVision, kCudart13})));
  std::string python_lib = site.str() + "/torch/lib/libtorch_python.so";
  fs::resize_file(python_lib, 40);
  Scan s = scan("--python-env " + shell_quote(site.str()) + " --no-etc-preload", "torch-broken");
  REQUIRE(s.report.is_object());
  size_t cannot_load = 0;
  for (const json& f : findings(s.report, "library-not-found"))
    if (f["message"].get<std::string>().starts_with(python_lib + ": cannot be loaded (")) {
      CHECK(f["severity"] == "error");
      CHECK(f["message"].get<std::string>().find(", so importing " + site.str() + "/torchvision/") != std::string::npos);
      ++cannot_load;
    }
  CHECK(cannot_load >= 1);
  for (const json& f : findings(s.report, "dlopen-library-not-found"))
    CHECK(f["message"].get<std::string>().find("libtorch_python.so") == std::string::npos);
  auto vision = object_at(s.report, site.str() + "/torchvision/_C.so");
  REQUIRE(vision);
  std::vector<json> local = root_edges_from(s.report, *vision, "dlopen");
  REQUIRE(local.size() == 1);
  CHECK(local[0]["loaded_first"] == true);
  CHECK(local[0]["to"].is_null());
}

TEST_CASE("the real loader: after torch's loads, torchvision's _C.so maps torch's libraries and image.so fails on torch._C's symbol") {
  TempDir site("wheels-torch-site");
  REQUIRE(unzip_wheels(site.str(), wheels({kTorch215, kVision, kCudart13})));
  Scan s = scan("--python-env " + shell_quote(site.str()) + " --no-etc-preload", "torch-first-loader");
  REQUIRE(s.report.is_object());
  auto vision = object_at(s.report, site.str() + "/torchvision/_C.so");
  REQUIRE(vision);
  std::string expected = reached_realpath(s.report, *vision, "libcudart.so.13");
  REQUIRE_FALSE(expected.empty());
  // import torch's loads: libtorch_global_deps.so RTLD_GLOBAL, then libtorch_python.so RTLD_LOCAL.
  auto after_torch = [&](const std::string& module) {
    return mapped_after({{site.str() + "/torch/lib/libtorch_global_deps.so", true}, {site.str() + "/torch/lib/libtorch_python.so", false}},
                        site.str() + module, "libcudart.so.13");
  };
  CHECK(after_torch("/torchvision/_C.so") == "['" + expected + "']\n");
  CHECK(after_torch("/torchvision/image.so").find("undefined symbol: torch_python_only") != std::string::npos);
}

TEST_CASE("a library opened with dlopen that another installed wheel ships off the search path: named, with the preload") {
  TempDir root("wheels-dlopen-root");
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({"dlopener-1.0-cp311-cp311-manylinux2014_x86_64.whl", kCudart}),
                "dlopen-shipped");
  REQUIRE(s.report.is_object());
  json cudart;
  for (const json& f : findings(s.report, "dlopen-library-not-found"))
    if (f["message"].get<std::string>().find("opens libcudart.so.12 with dlopen") != std::string::npos) cudart = f;
  REQUIRE(cudart.is_object());
  CHECK(cudart["severity"] == "warning");
  CHECK(cudart["message"].get<std::string>().find(
            "; nvidia-cuda-runtime-cu12 12.1.105 installs it at site-packages/nvidia/cuda_runtime/lib/libcudart.so.12, "
            "where the loader does not look: the dlopen works only when Python code has loaded that file first") !=
        std::string::npos);
  CHECK(cudart["fix"].get<std::string>().starts_with(
      "load site-packages/nvidia/cuda_runtime/lib/libcudart.so.12 before libdlopener.so opens it"));

  SUBCASE("the real loader: dlopen by name finds the copy loaded by its path, and nothing without it") {
    TempDir site("wheels-dlopen-site");
    REQUIRE(unzip_wheels(site.str(), wheels({"dlopener-1.0-cp311-cp311-manylinux2014_x86_64.whl", kCudart})));
    auto opened = [&](bool preload) {
      std::string code = "import ctypes, sys\n"
                         "if sys.argv[2] == \"1\": ctypes.CDLL(sys.argv[1] + \"/nvidia/cuda_runtime/lib/libcudart.so.12\")\n"
                         "print(ctypes.CDLL(sys.argv[1] + \"/dlopener/libdlopener.so\").open_cudart())";
      return run_command("python3 -c '" + code + "' " + shell_quote(site.str()) + (preload ? " 1" : " 0")).output;
    };
    CHECK(opened(false) == "0\n");
    CHECK(opened(true) == "1\n");
  }
}

TEST_CASE("TensorFlow 2.20 names no CUDA library in its strings: the framework table's build gives the dlopen names") {
  const char* kTensorflow = "tensorflow-2.20.0-cp311-cp311-manylinux_2_17_x86_64.whl";
  TempDir root("wheels-tf-root");
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({kTensorflow, kCudart}), "tf");
  REQUIRE(s.report.is_object());
  auto framework = object_at(s.report, "site-packages/tensorflow/libtensorflow_framework.so.2");
  REQUIRE(framework);
  const json* cudart = edge(s.report, *framework, "libcudart.so.12");
  REQUIRE(cudart);
  CHECK((*cudart)["kind"] == "dlopen");
  CHECK((*cudart)["inferred"] == false);
  CHECK((*cudart)["source"].get<std::string>().starts_with("matrix: tensorflow 2.20.0 was built with CUDA 12.5 and cuDNN 9.3"));
  REQUIRE(!(*cudart)["to"].is_null());  // through its RUNPATH, as the loader does
  CHECK(s.report["objects"][(*cudart)["to"].get<size_t>()]["path"] ==
        "site-packages/tensorflow/../nvidia/cuda_runtime/lib/libcudart.so.12");
  for (const char* name : {"libcublas.so.12", "libcublasLt.so.12", "libcufft.so.11", "libcusolver.so.11",
                           "libcusparse.so.12", "libcupti.so.12", "libcudnn.so.9", "libnccl.so.2"}) {
    CAPTURE(name);
    const json* e = edge(s.report, *framework, name);
    REQUIRE(e);
    CHECK((*e)["to"].is_null());
  }
  bool cudnn_error = false;
  for (const json& f : findings(s.report, "dlopen-library-not-found"))
    if (f["message"].get<std::string>().find("opens libcudnn.so.9 with dlopen") != std::string::npos)
      cudnn_error = f["severity"] == "error";
  CHECK(cudnn_error);

  SUBCASE("the real loader agrees, name by name, with depscan on this machine's system") {
    TempDir site("wheels-tf-site");
    REQUIRE(unzip_wheels(site.str(), wheels({kTensorflow, kCudart})));
    std::string lib = site.str() + "/tensorflow/libtensorflow_framework.so.2";
    check_loader_agrees(site.str(), lib, {"libcudart.so.12", "libcufft.so.11", "libcudnn.so.9", "libcupti.so.12"},
                        [&](const std::string& soname) {  // tf_load("cudart", "12")
                          size_t so = soname.find(".so.");
                          return "python3 -c 'import ctypes, sys\nprint(ctypes.CDLL(sys.argv[1]).tf_load(sys.argv[2].encode(), "
                                 "sys.argv[3].encode()))' " + shell_quote(lib) + " " + soname.substr(3, so - 3) + " " +
                                 soname.substr(so + 4);
                        });
  }

  SUBCASE("the file alone, with no distribution to give its version, gets no such edges") {
    Scan alone = scan("--root " + shell_quote(root.str()) + " " +
                      shell_quote(fixture("libtensorflow_framework.so.2")), "tf-alone");
    REQUIRE(alone.report.is_object());
    for (const json& e : alone.report["edges"]) CHECK(e["name"] != "libcudart.so.12");
  }
}

TEST_CASE("JAX's CUDA plugins open the libraries of the XLA stubs they carry, for the CUDA major of their directory") {
  const char* kPjrt = "jax_cuda13_pjrt-0.7.0-py3-none-manylinux_2_27_x86_64.whl";
  const char* kPlugin = "jax_cuda13_plugin-0.7.0-cp311-cp311-manylinux_2_27_x86_64.whl";
  const char* kCudart13 = "nvidia_cuda_runtime-13.0.96-py3-none-manylinux_2_27_x86_64.whl";
  TempDir root("wheels-jax-root");
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({kPjrt, kPlugin, kCudart13}), "jax");
  REQUIRE(s.report.is_object());
  auto plugin = object_at(s.report, "site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so");
  auto versions = object_at(s.report, "site-packages/jax_cuda13_plugin/_versions.so");
  REQUIRE(plugin);
  REQUIRE(versions);
  const json* cudart = edge(s.report, *plugin, "libcudart.so.13");
  REQUIRE(cudart);
  CHECK((*cudart)["kind"] == "dlopen");
  CHECK((*cudart)["inferred"] == false);
  CHECK((*cudart)["source"].get<std::string>().starts_with(
      "matrix: xla_cuda_plugin.so carries XLA's stub tsl/cuda/cudart_stub.cc, which opens libcudart.so.13 on first use "
      "(CUDA 13, from its directory xla_cuda13)"));
  REQUIRE(!(*cudart)["to"].is_null());  // through its RPATH, into the CUDA 13 wheel's nvidia/cu13/lib
  CHECK(s.report["objects"][(*cudart)["to"].get<size_t>()]["path"] ==
        "site-packages/jax_plugins/xla_cuda13/../../nvidia/cu13/lib/libcudart.so.13");
  for (const char* name : {"libcublas.so.13", "libcublasLt.so.13", "libcufft.so.12", "libcupti.so.13", "libcudnn.so.9",
                           "libnccl.so.2", "libnvJitLink.so.13", "libnvrtc.so.13"}) {
    CAPTURE(name);
    const json* e = edge(s.report, *plugin, name);
    REQUIRE(e);
    CHECK((*e)["to"].is_null());
  }
  for (const char* name : {"libcusolver.so.12", "libcusparse.so.12", "libnvidia-ml.so.1"})
    CHECK_MESSAGE(!edge(s.report, *plugin, name), name);  // no stub for them, or the driver's NVML
  CHECK(edge(s.report, *versions, "libcusolver.so.12"));
  CHECK(edge(s.report, *versions, "libcusparse.so.12"));
  CHECK(!edge(s.report, *versions, "libnccl.so.2"));
  std::set<std::string> errors, others;
  for (const json& f : findings(s.report, "dlopen-library-not-found")) {
    std::string m = f["message"];
    std::string opened = m.substr(m.find(" opens ") + 7, m.find(" with dlopen") - m.find(" opens ") - 7);
    (f["severity"] == "error" ? errors : others).insert(opened);
  }
  for (const char* name : {"libcublas.so.13", "libcufft.so.12", "libcupti.so.13", "libcudnn.so.9", "libcusolver.so.12",
                           "libcusparse.so.12"})
    CHECK_MESSAGE(errors.count(name), name);
  for (const char* name : {"libnccl.so.2", "libnvJitLink.so.13", "libnvrtc.so.13", "libcuda.so.1", "libcudart.so.13"})
    CHECK_MESSAGE(errors.count(name) + others.count(name) == 0, name);  // optional, the driver, or found

  SUBCASE("the real loader agrees, name by name, with depscan on this machine's system") {
    TempDir site("wheels-jax-site");
    REQUIRE(unzip_wheels(site.str(), wheels({kPjrt, kCudart13})));
    std::string lib = site.str() + "/jax_plugins/xla_cuda13/xla_cuda_plugin.so";
    check_loader_agrees(site.str(), lib, {"libcudart.so.13", "libcublas.so.13", "libcudnn.so.9", "libnccl.so.2"},
                        [&](const std::string& soname) {
                          return "python3 -c 'import ctypes, sys\nf = ctypes.CDLL(sys.argv[1]).jax_open\n"
                                 "f.restype = ctypes.c_void_p\nprint(1 if f(sys.argv[2].encode()) else 0)' " +
                                 shell_quote(lib) + " " + soname;
                        });
  }

  SUBCASE("a directory named after no CUDA major gives no such edges") {
    Scan alone = scan("--root " + shell_quote(root.str()) + " " + shell_quote(fixture("jax/xla_cuda_plugin.so")), "jax-alone");
    REQUIRE(alone.report.is_object());
    for (const json& e : alone.report["edges"]) CHECK(e["kind"] != "dlopen");
  }
}

TEST_CASE("cudnn-version-mismatch: a cuDNN older than the one torch, TensorFlow or JAX was built with, in their own words") {
  const char* kTorch291 = "torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl";  // torch.version.cuda 12.8: cuDNN 9.10.2
  auto built_with = [](const json& report) {
    std::vector<json> out;
    for (const json& f : findings(report, "cudnn-version-mismatch"))
      if (f["message"].get<std::string>().find(" was built with cuDNN ") != std::string::npos ||
          f["message"].get<std::string>().find(" or newer (source: ") != std::string::npos)
        out.push_back(f);
    return out;
  };
  Scan old = scan(wheels({kTorch291, kCudnn, kCudart}), "torch-old-cudnn");
  REQUIRE(old.report.is_object());
  auto found = built_with(old.report);
  REQUIRE(found.size() == 1);
  CHECK(found[0]["severity"] == "error");
  CHECK(any_message_has(found, "torch 2.9.1 (torch.version.cuda 12.8: cu128 (stable)) was built with cuDNN 9.10.2.21"));
  // the wheel's own version, not the system's cuDNN headers (/usr/local/cuda/include says 9.19 here)
  CHECK(any_message_has(found, "loads cuDNN 9.0.0.312 from site-packages/nvidia/cudnn/lib/libcudnn.so.9 "
                               "(the version of nvidia-cudnn-cu12, which installed it)"));
  CHECK(any_message_has(found, "\"cuDNN version incompatibility: PyTorch was compiled against (9, 10, 2) but found "
                               "runtime version (9, 0, 0)\""));
  CHECK(found[0]["fix"].get<std::string>().find("pip install 'nvidia-cudnn-cu12>=9.10.2.21'") != std::string::npos);
  // The wheel ships only the shim: where the system has cuDNN 9 (CUDA 13.0's 9.19 here), the shim's
  // dlopen finds the system's sub-libraries, of another release than the wheel's 9.0.
  bool system_sublibrary = false;
  for (const json& o : old.report["objects"]) {
    std::string path = o["path"];
    system_sublibrary |= path.starts_with("/") && path.find("libcudnn_graph.so.9") != std::string::npos;
  }
  if (present_or_skip(system_sublibrary, "cuDNN 9 in this machine's ld.so.cache (/usr/local/cuda)"))
    CHECK(any_message_has(findings(old.report, "cudnn-version-mismatch"), "libraries of different releases are loaded "
                                                                          "together: 9.0.0 from libcudnn.so.9"));

  Scan fits = scan(wheels({kTorch291, "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl", kCudart}),
                   "torch-cudnn");
  REQUIRE(fits.report.is_object());
  CHECK(built_with(fits.report).empty());
  Scan no_version_py = scan(wheels({kTorch, kCudnn, kCudart}), "torch-2.3");  // no torch/version.py: no row applies
  REQUIRE(no_version_py.report.is_object());
  CHECK(built_with(no_version_py.report).empty());

  CHECK(findings(fits.report, "matrix-no-data").empty());

  // a torch release the framework table has no row for: the comparison is not made, and that is said
  Scan future = scan(wheels({"torch-2.99.0-cp311-cp311-manylinux_2_28_x86_64.whl", kCudnn, kCudart}), "torch-future");
  REQUIRE(future.report.is_object());
  CHECK(built_with(future.report).empty());
  CHECK(any_message_has(findings(future.report, "matrix-no-data"),
                        "torch 2.99.0 (torch.version.cuda 12.8) has no row in depscan's framework table: the cuDNN it "
                        "was built with was not compared with the cuDNN 9.0.0.312 this process loads from "
                        "site-packages/nvidia/cudnn/lib/libcudnn.so.9"));

  // JAX: XLA refuses an older cuDNN minor in the same words; the PJRT plugin's floor is the CUDA
  // plugin's Requires-Dist, an old jaxlib's build is in its local version
  const char* kPjrt = "jax_cuda13_pjrt-0.7.0-py3-none-manylinux_2_27_x86_64.whl";
  const char* kPlugin = "jax_cuda13_plugin-0.7.0-cp311-cp311-manylinux_2_27_x86_64.whl";
  Scan jax = scan(wheels({kPjrt, kPlugin, "nvidia_cudnn_cu13-9.11.0.98-py3-none-manylinux_2_27_x86_64.whl"}), "jax-old-cudnn");
  REQUIRE(jax.report.is_object());
  auto jax_found = built_with(jax.report);
  REQUIRE(jax_found.size() == 1);
  CHECK(any_message_has(jax_found, "jax-cuda13-pjrt 0.7.0 (with jax-cuda13-plugin 0.7.0) requires cuDNN 9.12.0.46 or "
                                   "newer (source: jax-cuda13-plugin's Requires-Dist: nvidia-cudnn-cu13<10.0,>=9.12.0.46)"));
  CHECK(any_message_has(jax_found, "loads cuDNN 9.11.0.98 from site-packages/nvidia/cudnn/lib/libcudnn.so.9"));
  CHECK(any_message_has(jax_found, "XLA logs \"Loaded runtime CuDNN library: 9.11.0 but source was compiled with: "
                                   "<JAX's cuDNN, 9.12 or newer>."));
  CHECK(jax_found[0]["fix"].get<std::string>().find("pip install 'nvidia-cudnn-cu13>=9.12.0.46'") != std::string::npos);
  Scan jaxlib = scan(wheels({"jaxlib-0.4.30+cuda12.cudnn91-cp311-cp311-manylinux2014_x86_64.whl", kCudnn}), "jaxlib-old");
  REQUIRE(jaxlib.report.is_object());
  CHECK(any_message_has(built_with(jaxlib.report), "jaxlib 0.4.30+cuda12.cudnn91 was built with cuDNN 9.1 (source: the "
                                                   "local version label of jaxlib 0.4.30+cuda12.cudnn91)"));
  Scan jaxlib_fits = scan(wheels({"jaxlib-0.4.30+cuda12.cudnn91-cp311-cp311-manylinux2014_x86_64.whl",
                                  "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl"}), "jaxlib-fits");
  REQUIRE(jaxlib_fits.report.is_object());
  CHECK(built_with(jaxlib_fits.report).empty());

  TempDir site("wheels-tf-cudnn");
  REQUIRE(unzip_wheels(site.str(), wheels({"tensorflow-2.20.0-cp311-cp311-manylinux_2_17_x86_64.whl", kCudnn, kCudart})));
  Scan tf = scan("--python-env " + shell_quote(site.str()) + " --ld-library-path " +
                 shell_quote(site.str() + "/nvidia/cudnn/lib"), "tf-old-cudnn");
  REQUIRE(tf.report.is_object());
  auto tf_found = built_with(tf.report);
  REQUIRE(tf_found.size() == 1);
  CHECK(any_message_has(tf_found, "tensorflow 2.20.0 (linux tested build: CUDA 12.5) was built with cuDNN 9.3"));
  CHECK(any_message_has(tf_found, "\"Loaded runtime CuDNN library: 9.0.0 but source was compiled with: 9.3.0.  CuDNN "
                                  "library needs to have matching major version and equal or higher minor version\""));

  // a site-packages directory inside a --root, at a path the host does not have
  TempDir rootfs("wheels-torch-root");
  const std::string inside = "/opt/depscan-venv/lib/python3.11/site-packages";
  REQUIRE(unzip_wheels(rootfs.str() + inside, wheels({kTorch291, kCudnn, kCudart})));
  Scan rooted = scan("--root " + shell_quote(rootfs.str()) + " " + inside, "torch-rooted");
  REQUIRE(rooted.report.is_object());
  CHECK(any_message_has(built_with(rooted.report), "torch 2.9.1 (torch.version.cuda 12.8: cu128 (stable)) was built "
                                                   "with cuDNN 9.10.2.21"));
  CHECK(findings(rooted.report, "matrix-no-data").empty());
}

TEST_CASE("a manylinux_2_17 wheel needing GLIBC_2.34 and a system library names both") {
  Scan s = scan(wheels({"newglibc-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"}), "policy");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  auto violations = findings(s.report, "wheel-policy-violation");
  REQUIRE(!violations.empty());
  CHECK(violations[0]["severity"] == "error");
  CHECK(any_message_has(violations, "pthread_create@GLIBC_2.34"));
  CHECK(any_message_has(violations, "site-packages/newglibc/libnew_glibc.so"));
  CHECK(any_message_has(violations, "libarchive.so.13"));
  CHECK(any_message_has(violations, "manylinux_2_17"));

  SUBCASE("reached first through another wheel's ../ detour, the library is still named by its own path") {
    Scan both = scan(wheels({"detour-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "newglibc-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"}),
                     "policy-detour");
    REQUIRE(both.report.is_object());
    REQUIRE(object_at(both.report, "site-packages/detour/../newglibc/libnew_glibc.so"));  // the detour's object comes first
    auto named = findings(both.report, "wheel-policy-violation");
    CHECK(any_message_has(named, "site-packages/newglibc/libnew_glibc.so: needs pthread_create@GLIBC_2.34"));
    CHECK_FALSE(any_message_has(named, "/../"));
  }
}

TEST_CASE("aarch64 and ppc64le wheels: checked against their architecture's symbol versions; manylinux1 has neither") {
  for (const char* wheel : {"armcxx-1.0-cp311-cp311-manylinux2014_aarch64.whl", "ppccxx-1.0-cp311-cp311-manylinux2014_ppc64le.whl"}) {
    CAPTURE(wheel);
    Scan s = scan(wheels({wheel}), "policy-arch");
    REQUIRE(s.report.is_object());
    auto violations = findings(s.report, "wheel-policy-violation");
    REQUIRE(violations.size() == 1);
    std::string message = violations[0]["message"];
    CHECK_MESSAGE(message.find("@GLIBCXX_3.4.21 from libstdc++.so.6, newer than manylinux_2_17 allows") != std::string::npos,
                  message);
    CHECK_MESSAGE(message.ends_with("it meets manylinux_2_24 at best)"), message);  // not manylinux_2_5, x86 only
  }
}

TEST_CASE("a library from outside the install breaks the policy whether or not the scanning machine has it") {
  TempDir root("wheels-policy-root");  // no libarchive.so.13 here
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({"newglibc-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"}),
                "policy-absent");
  REQUIRE(s.report.is_object());
  std::optional<json> named;
  for (const json& f : findings(s.report, "wheel-policy-violation"))
    if (f["message"].get<std::string>().find("needs libarchive.so.13 from outside the install (no installed wheel ships it), "
                                             "which manylinux_2_17 does not allow") != std::string::npos)
      named = f;
  REQUIRE(named);
  CHECK((*named)["severity"] == "error");
  // no policy allows a library from outside: none to retag the wheel for
  CHECK((*named)["message"].get<std::string>().ends_with("; it meets no manylinux policy)"));
  CHECK((*named)["fix"] == "build in a manylinux_2_17 image and bundle the libraries it names (auditwheel repair)");
}

TEST_CASE("a wheel whose RECORD is empty still owns what pip installs from it, as pip's own RECORD says") {
  Scan full = scan(wheels({"newglibc-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"}), "record-full");
  Scan empty = scan(wheels({"emptyrecord-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"}), "record-empty");
  REQUIRE(empty.report.is_object());
  CHECK(any_message_has(findings(empty.report, "wheel-installed"), "emptyrecord 1.0 installs 1 ELF/PE files"));
  CHECK(findings(empty.report, "wheel-policy-violation").size() == findings(full.report, "wheel-policy-violation").size());
  CHECK(any_message_has(findings(empty.report, "wheel-policy-violation"), "site-packages/emptyrecord/libnew_glibc.so"));
  CHECK(empty.exit_code == full.exit_code);
}

TEST_CASE("an auxiliary filtee no one ships breaks no policy and is no missing library: ld.so goes on without it") {
  Scan s = scan(wheels({"auxfilter-1.0-py3-none-manylinux2014_x86_64.whl"}), "auxfilter");
  REQUIRE(s.report.is_object());
  CHECK(s.exit_code == 0);
  CHECK(findings(s.report, "wheel-policy-violation").empty());
  CHECK(findings(s.report, "library-not-found").empty());
  bool edge = false;
  for (const json& e : s.report["edges"]) edge |= e["name"] == "visibility=hidden" && e["filtee"] == "auxiliary" && e["to"].is_null();
  CHECK(edge);
}

TEST_CASE("a CUDA library a wheel leaves out is a policy warning, found on the machine or not; another wheel's is none") {
  auto cudnn_violation = [](const Scan& s) {
    json found;
    for (const json& f : findings(s.report, "wheel-policy-violation"))
      if (f["message"].get<std::string>().find("libcudnn.so.9") != std::string::npos) found = f;
    return found;
  };
  for (bool cudnn_here : {false, true}) {
    CAPTURE(cudnn_here);
    TempDir root("wheels-cuda-policy-root");
    fs::create_directories(root.path() / "usr/lib");
    if (cudnn_here) fs::copy_file(fixture("libcudnn.so.9"), root.path() / "usr/lib/libcudnn.so.9");
    Scan s = scan("--root " + shell_quote(root.str()) + wheels({kTorch, kCudart}), "cuda-policy");
    REQUIRE(s.report.is_object());
    json v = cudnn_violation(s);
    REQUIRE(v.is_object());
    CHECK(v["severity"] == "warning");
    std::string message = v["message"];
    CHECK(message.find(cudnn_here ? "takes libcudnn.so.9 from the system (/usr/lib/libcudnn.so.9)"
                                  : "needs libcudnn.so.9 from outside the install") != std::string::npos);
    CHECK(message.find("CUDA wheels leave CUDA's libraries out on purpose, and apart from them it meets manylinux_") !=
          std::string::npos);
    // The process needs libcudart.so.12: the hint names the CUDA 12 build of cuDNN only.
    CHECK(v["fix"].get<std::string>().find("pip install nvidia-cudnn-cu12==9.* (CUDA 12), or") != std::string::npos);
    for (const json& f : findings(s.report, "wheel-policy-violation"))  // libcudart.so.12 comes from its wheel
      CHECK(f["message"].get<std::string>().find("libcudart.so.12") == std::string::npos);
  }
  Scan all = scan(wheels({kTorch, kCudnn, kCudart}), "cuda-policy-all");
  CHECK_FALSE(cudnn_violation(all).is_object());
}

TEST_CASE("a CUDA wheel that also breaks every policy on its own: the CUDA library stays a warning, the other an error") {
  TempDir root("wheels-cuda-nopolicy-root");
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({"cudaarchive-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"}),
                "cuda-nopolicy");
  REQUIRE(s.report.is_object());
  const std::string module = "site-packages/cudaarchive/libcuda_archive_ext.so: needs ";
  json cudnn, archive;
  for (const json& f : findings(s.report, "wheel-policy-violation")) {
    std::string message = f["message"];
    if (message.find(module + "libcudnn.so.9 from outside the install") != std::string::npos) cudnn = f;
    if (message.find(module + "libarchive.so.13 from outside the install") != std::string::npos) archive = f;
  }
  REQUIRE(cudnn.is_object());
  CHECK(cudnn["severity"] == "warning");
  CHECK_MESSAGE(cudnn["message"].get<std::string>().ends_with(
                    "CUDA wheels leave CUDA's libraries out on purpose, and apart from them it meets no manylinux policy)"),
                cudnn["message"]);
  CHECK(cudnn["fix"].get<std::string>().starts_with("make sure the target has it: name the NVIDIA wheel that ships it"));
  REQUIRE(archive.is_object());
  CHECK(archive["severity"] == "error");
  CHECK(archive["message"].get<std::string>().ends_with("; it meets no manylinux policy)"));
  CHECK(archive["fix"] == "build in a manylinux_2_17 image and bundle the libraries it names (auditwheel repair)");
}

TEST_CASE("an optional plugin's policy violation and missing library are warnings: cuFile's RDMA support") {
  TempDir root("wheels-plugin-root");
  Scan s = scan("--root " + shell_quote(root.str()) + wheels({"nvidia_cufile_cu12-1.13.1.3-py3-none-manylinux2014_x86_64.whl"}),
                "plugin-policy");
  REQUIRE(s.report.is_object());
  const std::string rdma = "site-packages/nvidia/cufile/lib/libcufile_rdma.so.1";
  json violation, missing;
  for (const json& f : findings(s.report, "wheel-policy-violation"))
    if (f["message"].get<std::string>().starts_with(rdma + ": needs libmlx5.so.1 from outside the install")) violation = f;
  for (const json& f : findings(s.report, "library-not-found"))
    if (f["message"].get<std::string>().starts_with("libmlx5.so.1:")) missing = f;
  REQUIRE(violation.is_object());
  CHECK(violation["severity"] == "warning");
  CHECK(violation["message"].get<std::string>().find("it is a plugin opened with dlopen only when its feature is used") !=
        std::string::npos);
  REQUIRE(missing.is_object());
  CHECK(missing["severity"] == "warning");
  CHECK(missing["message"].get<std::string>().find("is a plugin that site-packages/nvidia/cufile/lib/libcufile.so.0 opens") !=
        std::string::npos);
}

TEST_CASE("needing the NVIDIA driver (libcuda.so.1) breaks no policy, whether or not the scanning machine has one") {
  const char* wheel = "drivercall-1.0-cp311-cp311-manylinux_2_17_x86_64.whl";
  for (bool driver_here : {false, true}) {
    CAPTURE(driver_here);
    TempDir root("wheels-driver-root");  // this machine's own driver, if any, stays out of the scan
    fs::create_directories(root.path() / "drv");
    if (driver_here) fs::copy_file(fixture("driver/libcuda.so.1"), root.path() / "drv/libcuda.so.1");
    Scan s = scan("--root " + shell_quote(root.str()) + " --ld-library-path /drv" + wheels({wheel}), "policy-driver");
    REQUIRE(s.report.is_object());
    auto lib = object_at(s.report, "site-packages/drivercall/libdriverlink.so");
    REQUIRE(lib);
    const json* cuda = edge(s.report, *lib, "libcuda.so.1");
    REQUIRE(cuda);
    CHECK((*cuda)["to"].is_null() != driver_here);
    CHECK(findings(s.report, "wheel-policy-violation").empty());
    CHECK(any_message_has(findings(s.report, "wheel-policy"), "claims manylinux_2_17_x86_64 and meets it"));
  }
}

namespace {

const char* kBitsandbytes = "bitsandbytes-0.50.2-py3-none-manylinux_2_24_x86_64.whl";

std::string torch_wheel(const std::string& version) { return "torch-" + version + "-cp311-cp311-manylinux_2_28_x86_64.whl"; }

// The library-not-found findings about one of bitsandbytes' builds.
std::vector<json> missing_in_build(const json& report, const std::string& build) {
  std::vector<json> out;
  for (const json& f : findings(report, "library-not-found"))
    if (f["message"].get<std::string>().find("(needed by site-packages/bitsandbytes/" + build + ")") != std::string::npos)
      out.push_back(f);
  return out;
}

}  // namespace

TEST_CASE("bitsandbytes loads the build for torch.version.cuda: the builds it does not load only warn") {
  struct Case {
    const char* torch;
    const char* loaded;
    const char* why;
  };
  for (Case c : {Case{"2.9.1+cu128", "libbitsandbytes_cuda128.so", "it matches torch.version.cuda"},
                 Case{"2.9.1+cu127", "libbitsandbytes_cuda126.so", "no 12.7 build: the nearest of major 12"},
                 Case{"2.9.1+cpu", "libbitsandbytes_cpu.so", "torch has no CUDA"}}) {
    CAPTURE(c.torch);
    std::string torch = torch_wheel(c.torch);
    Scan s = scan(wheels({kBitsandbytes, torch.c_str()}), "bnb");
    REQUIRE(s.report.is_object());
    auto info = findings(s.report, "python-variant");
    REQUIRE(info.size() == 1);
    CHECK(info[0]["message"].get<std::string>().starts_with(std::string("bitsandbytes 0.50.2 loads ") + c.loaded +
                                                            " of its builds (CUDA 11.8, 12.6, 12.8) for torch " + c.torch));
    CHECK(any_message_has(info, c.why));
    auto cuda118 = missing_in_build(s.report, "libbitsandbytes_cuda118.so");
    auto rocm64 = missing_in_build(s.report, "libbitsandbytes_rocm64.so");
    REQUIRE(cuda118.size() == 1);
    REQUIRE(rocm64.size() == 1);
    CHECK(cuda118[0]["severity"] == "warning");
    CHECK(rocm64[0]["severity"] == "warning");
    CHECK(any_message_has(cuda118, std::string(c.torch).ends_with("cpu")
                                       ? "so this build is loaded only with a CUDA build of torch"
                                       : "so this build is loaded only with a torch built for CUDA 11.8 or when BNB_CUDA_VERSION=118 asks for it"));
    CHECK(any_message_has(rocm64, "so this build is loaded only with a ROCm or XPU build of torch"));
    CHECK(findings(s.report, "python-variant-missing").empty());
  }
}

TEST_CASE("bitsandbytes with no build of torch's CUDA major: python-variant-missing, and every build's errors warn") {
  Scan s = scan(wheels({kBitsandbytes, torch_wheel("2.9.0+cu130").c_str()}), "bnb-missing");
  REQUIRE(s.report.is_object());
  CHECK(s.exit_code == 1);
  auto missing = findings(s.report, "python-variant-missing");
  REQUIRE(missing.size() == 1);
  CHECK(missing[0]["severity"] == "error");
  CHECK(any_message_has(missing, "ships CUDA builds for 11.8, 12.6, 12.8 and none of CUDA 13"));
  CHECK(any_message_has(missing, "its import cannot load libbitsandbytes_cuda130.so (it is not shipped)"));
  for (const char* build : {"libbitsandbytes_cuda118.so", "libbitsandbytes_rocm64.so"}) {
    CAPTURE(build);
    auto errors = missing_in_build(s.report, build);
    CHECK_FALSE(errors.empty());  // the build's libraries are missing here, so it has findings to demote
    for (const json& f : errors) CHECK(f["severity"] == "warning");
  }
}

TEST_CASE("bitsandbytes 0.49 loads only the build of torch's exact CUDA version") {
  Scan s = scan(wheels({"bitsandbytes-0.49.2-py3-none-manylinux_2_24_x86_64.whl", torch_wheel("2.9.1+cu127").c_str()}),
                "bnb-exact");
  REQUIRE(s.report.is_object());
  auto missing = findings(s.report, "python-variant-missing");
  REQUIRE(missing.size() == 1);
  CHECK(any_message_has(missing, "ships CUDA builds for 11.8, 12.6, 12.8 and no 12.7 build"));
  CHECK(findings(s.report, "python-variant").empty());
  Scan exact = scan(wheels({"bitsandbytes-0.49.2-py3-none-manylinux_2_24_x86_64.whl", torch_wheel("2.9.1+cu128").c_str()}),
                    "bnb-exact-ok");
  REQUIRE(exact.report.is_object());
  CHECK(any_message_has(findings(exact.report, "python-variant"), "loads libbitsandbytes_cuda128.so"));
}

TEST_CASE("bitsandbytes without torch, or with a torch.version.cuda it cannot read: every build is checked as if loaded") {
  std::string garbled = torch_wheel("2.9.1+garbled");  // cuda = '99999999999999999999.1'
  for (auto [args, why] : {std::pair{wheels({kBitsandbytes}), "torch is not installed"},
                           {wheels({kBitsandbytes, garbled.c_str()}), "torch 2.9.1+garbled has no readable torch.version.cuda"}}) {
    CAPTURE(why);
    Scan s = scan(args, "bnb-unknown");
    REQUIRE(s.report.is_object());
    CHECK(any_message_has(findings(s.report, "python-variant"), why));
    auto cuda118 = missing_in_build(s.report, "libbitsandbytes_cuda118.so");
    REQUIRE(cuda118.size() == 1);
    CHECK(cuda118[0]["severity"] == "error");
  }
}

TEST_CASE("a hostile torch/version.py (FIFO, symlink loop) is not read, and the scan goes on") {
  for (const char* kind : {"fifo", "loop"}) {
    CAPTURE(kind);
    TempDir site("wheels-bnb-hostile");
    REQUIRE(unzip_wheels(site.str(), wheels({kBitsandbytes, torch_wheel("2.9.1+cu128").c_str()})));
    std::string version = site.str() + "/torch/version.py";
    fs::remove(version);
    if (std::string(kind) == "fifo") REQUIRE(run_command("mkfifo " + shell_quote(version)).exit_code == 0);
    else fs::create_symlink("version.py", version);
    Scan s = scan("--python-env " + shell_quote(site.str()), "bnb-hostile");  // a FIFO read would hang here
    REQUIRE(s.report.is_object());
    CHECK(any_message_has(findings(s.report, "python-variant"), "has no readable torch.version.cuda (" + version + ")"));
  }
}

TEST_CASE("the real loader: the builds depscan finds incomplete fail to load, the others load") {
  TempDir site("wheels-bnb-site");
  REQUIRE(unzip_wheels(site.str(), wheels({kBitsandbytes})));
  Scan s = scan("--python-env " + shell_quote(site.str()), "bnb-loader");
  REQUIRE(s.report.is_object());
  for (const char* build : {"libbitsandbytes_cpu.so", "libbitsandbytes_cuda118.so", "libbitsandbytes_cuda126.so",
                            "libbitsandbytes_cuda128.so", "libbitsandbytes_rocm64.so"}) {
    CAPTURE(build);
    std::string path = site.str() + "/bitsandbytes/" + build;
    bool depscan_complete = true;
    for (const json& f : findings(s.report, "library-not-found"))
      if (f["message"].get<std::string>().find("(needed by " + path + ")") != std::string::npos) depscan_complete = false;
    auto loaded = run_command("python3 -c 'import ctypes, sys\ntry:\n  ctypes.CDLL(sys.argv[1]); print(1)\nexcept OSError:\n"
                              "  print(0)' " + shell_quote(path));
    CHECK(loaded.output == (depscan_complete ? "1\n" : "0\n"));
  }
}

TEST_CASE("a compliant wheel meets its policy") {
  Scan s = scan(wheels({kCudart}), "policy-ok");
  REQUIRE(s.report.is_object());
  CHECK(findings(s.report, "wheel-policy-violation").empty());
  CHECK(any_message_has(findings(s.report, "wheel-policy"), "meets it"));
}

TEST_CASE("a musllinux wheel loads under musl's loader and meets its policy; without musl the fix says why") {
  const char* kMusl = "muslext-1.0-cp311-cp311-musllinux_1_2_x86_64.whl";
  const std::string musl_loader = "/lib/ld-musl-x86_64.so.1";
  if (!fs::exists(fixture(kMusl)) || !fs::exists(musl_loader)) {
    MESSAGE("musl-tools not installed: skipped");
    return;
  }
  // musl's own listing: Alpine's soname of the C library is the loader itself
  auto truth = run_command(musl_loader + " --list " + shell_quote(fixture("musl/libhelper-5e1f.so")) + " 2>&1");
  CHECK_MESSAGE(truth.output.find("libc.musl-x86_64.so.1 => " + musl_loader) != std::string::npos, truth.output);

  Scan s = scan(wheels({kMusl}), "musl");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  CHECK(s.exit_code == 0);
  CHECK(findings(s.report, "library-not-found").empty());
  auto ext = object_at(s.report, "site-packages/muslext/_ext.cpython-311-x86_64-linux-musl.so");
  REQUIRE(ext);
  CHECK(resolved(s.report, *ext, "libc.musl-x86_64.so.1")["path"] == musl_loader);
  const json* helper = edge(s.report, *ext, "libhelper-5e1f.so");
  REQUIRE(helper);
  CHECK(!(*helper)["to"].is_null());
  CHECK(any_message_has(findings(s.report, "program-loader"),
                        "_ext.cpython-311-x86_64-linux-musl.so: is linked against musl's C library "
                        "(libc.musl-x86_64.so.1) and loads only in a process of musl's loader " + musl_loader));
  CHECK(findings(s.report, "wheel-policy-violation").empty());
  CHECK(any_message_has(findings(s.report, "wheel-policy"), "claims musllinux_1_2_x86_64 and meets it"));
  CHECK(findings(s.report, "loader-missing").empty());

  TempDir root("wheels-musl-root");  // no musl here
  Scan bare = scan("--root " + shell_quote(root.str()) + wheels({kMusl}), "musl-bare");
  REQUIRE(bare.report.is_object());
  CHECK(bare.exit_code == 1);
  auto missing = findings(bare.report, "library-not-found");
  REQUIRE(!missing.empty());
  for (const json& f : missing) {
    CHECK(f["message"].get<std::string>().starts_with("libc.musl-x86_64.so.1: "));
    CHECK(f["fix"].get<std::string>().starts_with("libc.musl-x86_64.so.1 is musl's C library: "));
  }
  CHECK(findings(bare.report, "wheel-policy-violation").empty());  // the policy allows musl's C library
  auto no_loader = findings(bare.report, "loader-missing");
  REQUIRE(no_loader.size() == 1);  // one for both files, and none for glibc's loader: they do not need it
  CHECK(no_loader[0]["message"].get<std::string>().starts_with(
      "2 libraries are linked against musl's C library (libc.musl-x86_64.so.1), and the analysed system has no musl "
      "loader (/lib/ld-musl-x86_64.so.1): no process there can load them"));
}

TEST_CASE("zip-slip wheel: escaping names and links refused, duplicates reported, nothing written outside") {
  Scan s = scan(wheels({"zipslip-1.0-py3-none-any.whl"}), "zipslip");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  auto unsafe = findings(s.report, "archive-unsafe-member");
  CHECK(unsafe.size() >= 4);
  CHECK(any_message_has(unsafe, "depscan-zipslip-stray.so"));
  CHECK(any_message_has(unsafe, "absolute member name '/tmp/depscan-zipslip-absolute.so'"));
  CHECK(any_message_has(unsafe, "zipslip/../../escape.so"));
  CHECK(any_message_has(unsafe, "'/etc/passwd'"));
  CHECK(findings(s.report, "archive-duplicate-member").size() == 1);
  CHECK_FALSE(fs::exists("/tmp/depscan-zipslip-stray.so"));
  CHECK_FALSE(fs::exists("/tmp/depscan-zipslip-absolute.so"));
  CHECK(object_at(s.report, "site-packages/zipslip/ok.so"));  // the safe member is still analysed
}

TEST_CASE("a member name twice in a wheel: a copy that is a library is never hidden") {
  const std::string wheel = fixture("twocopies-1.0-py3-none-any.whl");
  Scan s = scan(shell_quote(wheel), "twocopies");
  REQUIRE(s.report.is_object());
  auto duplicates = findings(s.report, "archive-duplicate-member");
  CHECK(duplicates.size() == 2);
  CHECK(any_message_has(duplicates, "the last copy that is a library is analysed"));
  CHECK(object_at(s.report, "site-packages/twocopies/late.so"));      // text, then the library: pip installs the library
  CHECK(object_at(s.report, "site-packages/twocopies/replaced.so"));  // the library, then text: which is installed depends on the installer
  CHECK(s.tmp_left_empty);

  // pip itself, installing the same wheel: the copy it writes is the one its zip directory lists last
  TempDir target("twocopies-pip");
  auto pip = run_command("python3 -m pip install --quiet --no-deps --no-index --no-compile --target " +
                         shell_quote(target.str()) + " " + shell_quote(wheel) + " 2>&1");
  INFO(pip.output);
  REQUIRE(pip.exit_code == 0);
  auto first_bytes = [&](const std::string& rel) {
    std::ifstream in(target.path() / rel, std::ios::binary);
    std::string head(4, '\0');
    in.read(head.data(), 4);
    return head;
  };
  CHECK(first_bytes("twocopies/late.so") == "\x7f" "ELF");
  CHECK(first_bytes("twocopies/replaced.so") == "not ");
}

TEST_CASE("a library twice in a wheel cut off inside the second copy: no copy is left listed as a root") {
  Scan s = scan(shell_quote(fixture("dupcut-1.0-py3-none-any.whl")), "dupcut");
  REQUIRE(s.report.is_object());
  CHECK(any_message_has(findings(s.report, "archive-corrupt"), "Truncated ZIP file data"));
  CHECK_FALSE(object_at(s.report, "site-packages/dupcut/x.so"));  // the failed copy replaced the first, and was removed
  CHECK(s.tmp_left_empty);
}

TEST_CASE("zip bomb: refused from its compression ratio") {
  Scan s = scan(wheels({"bomb-1.0-py3-none-any.whl"}), "bomb");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  CHECK(any_message_has(findings(s.report, "archive-too-large"), "zip bomb"));
}

TEST_CASE("truncated and corrupt wheels are findings and the rest of the scan goes on") {
  Scan s = scan(wheels({"truncated-1.0-py3-none-any.whl", "garbage-1.0-py3-none-any.whl", kCudart}), "corrupt");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  auto corrupt = findings(s.report, "archive-corrupt");
  CHECK(any_message_has(corrupt, "truncated-1.0-py3-none-any.whl"));
  CHECK(any_message_has(corrupt, "garbage-1.0-py3-none-any.whl"));
  CHECK(object_at(s.report, "site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"));
}

TEST_CASE("docker-save image: layers applied with whiteouts, links kept inside") {
  // compressed as `docker save | gzip` writes it; the amd64 image of a multi-platform archive
  for (const char* image : {"image.tar", "oci-image.tar", "image.tar.gz", "image.tar.xz", "oci-multi.tar"}) {
    CAPTURE(image);
    Scan s = scan(shell_quote(fixture(image)), "image");
    REQUIRE(s.report.is_object());
    CHECK(s.tmp_left_empty);
    auto app = object_at(s.report, "/usr/bin/app");
    REQUIRE(app);
    const json* foo = edge(s.report, *app, "libfoo.so.1");
    REQUIRE(foo);
    CHECK((*foo)["to"].is_null());  // removed by the second layer's whiteout
    CHECK(object_at(s.report, "/usr/lib/libkeep.so.1"));
    CHECK_FALSE(object_at(s.report, "/usr/lib/libfoo.so.1"));
    auto unsafe = findings(s.report, "archive-unsafe-member");
    CHECK(any_message_has(unsafe, "depscan-stray-dotdot"));
    CHECK(any_message_has(unsafe, "etc-link/depscan-stray-through-link"));
    CHECK(any_message_has(unsafe, "hardlink-out"));
    CHECK(any_message_has(unsafe, "hardlink-up"));
    CHECK(any_message_has(findings(s.report, "archive-unsafe-link"), "up-link"));
    // whiteouts of '.' and '..' are refused, and remove nothing
    CHECK(any_message_has(unsafe, "whiteout 'usr/.wh..' names no file of its directory: ignored"));
    CHECK(any_message_has(unsafe, "whiteout '.wh...' names no file of its directory: ignored"));
    // the loader keeps its execute permission (tar mode 0755): the kernel can start the program
    for (const json& f : findings(s.report, "program-interpreter"))
      CHECK(f["message"].get<std::string>().find("execute permission") == std::string::npos);
    for (const char* stray : {"/tmp/depscan-stray-dotdot", "/tmp/depscan-stray-up", "/etc/depscan-stray-through-link"})
      CHECK_FALSE(fs::exists(stray));
  }
}

// The edge by which an image's /usr/bin/app needs libfoo.so.1, and the file it resolved to.
struct AppLibfoo {
  std::string how, path;
  json tried;
};

AppLibfoo app_libfoo(const Scan& s) {
  auto app = object_at(s.report, "/usr/bin/app");
  REQUIRE(app);
  const json* e = edge(s.report, *app, "libfoo.so.1");
  REQUIRE(e);
  std::string path = (*e)["to"].is_null() ? "not found" : s.report["objects"][(*e)["to"].get<size_t>()]["path"].get<std::string>();
  return {(*e)["how"].get<std::string>(), path, (*e)["tried"]};
}

TEST_CASE("an image's LD_LIBRARY_PATH is its config's ENV, not the shell's; --ld-library-path still decides") {
  for (const char* image : {"env-image.tar", "env-oci-image.tar"}) {
    CAPTURE(image);
    // the shell's LD_LIBRARY_PATH names the other copy: a container does not inherit it
    Scan s = scan(shell_quote(fixture(image)), "env-image", "LD_LIBRARY_PATH=/srv/lib");
    REQUIRE(s.report.is_object());
    CHECK(app_libfoo(s).path == "/opt/app/lib/libfoo.so.1");
    CHECK(app_libfoo(s).how == "ld_library_path");
    CHECK(any_message_has(findings(s.report, "image-unpacked"),
                          "its config sets LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64:/opt/app/lib"));
    Scan chosen = scan("--ld-library-path /srv/lib " + shell_quote(fixture(image)), "env-image-option");
    CHECK(app_libfoo(chosen).path == "/srv/lib/libfoo.so.1");
  }
  // a name twice in the image archive: the last copy is read, as docker load does
  Scan twice = scan(shell_quote(fixture("dup-manifest-image.tar")), "dup-manifest");
  CHECK(any_message_has(findings(twice.report, "archive-duplicate-member"), "'manifest.json' appears more than once: the last copy is used"));
  CHECK(findings(twice.report, "image-invalid").empty());
  CHECK(app_libfoo(twice).path == "/opt/app/lib/libfoo.so.1");
  // an empty LD_LIBRARY_PATH entry is the container's working directory (WORKDIR), not this shell's
  Scan workdir = scan(shell_quote(fixture("workdir-image.tar")), "workdir-image");
  CHECK(app_libfoo(workdir).path == "/srv/lib/libfoo.so.1");
  CHECK(app_libfoo(workdir).how == "ld_library_path");
  // the image's LD_PRELOAD is loaded first, and the app's NEEDED reuses it
  Scan preload = scan(shell_quote(fixture("preload-image.tar")), "preload-image", "LD_PRELOAD=");
  CHECK(app_libfoo(preload).path == "/srv/lib/libfoo.so.1");
  CHECK(any_message_has(findings(preload.report, "image-unpacked"), "its config sets LD_PRELOAD=/srv/lib/libfoo.so.1"));
  // an image whose config sets nothing: the shell's LD_LIBRARY_PATH does not apply either
  Scan plain = scan(shell_quote(fixture("image.tar")), "plain-image", "LD_LIBRARY_PATH=/srv/shell-only");
  CHECK(any_message_has(findings(plain.report, "image-unpacked"), "its config sets no LD_LIBRARY_PATH or LD_PRELOAD"));
  json tried = app_libfoo(plain).tried;
  REQUIRE(!tried.empty());
  for (const json& path : tried) CHECK_FALSE(path.get<std::string>().starts_with("/srv/shell-only"));
}

TEST_CASE("why --root IMAGE: the image is unpacked and searched with its config's LD_LIBRARY_PATH") {
  auto why = [](const std::string& options, const char* image) {
    return run_command("LD_LIBRARY_PATH=/srv/lib " + depscan_bin() + " why " + options + " --root " +
                       shell_quote(fixture(image)) + " /usr/bin/app libfoo.so.1 2>&1");
  };
  auto from_config = why("", "env-image.tar");
  CHECK(from_config.exit_code == 0);
  CHECK_MESSAGE(from_config.output.find("its config sets LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64:"
                                        "/opt/app/lib") != std::string::npos, from_config.output);
  CHECK(from_config.output.find("3. /opt/app/lib/libfoo.so.1: taken") != std::string::npos);
  CHECK(from_config.output.find("=> found /opt/app/lib/libfoo.so.1") != std::string::npos);
  auto overridden = why("--ld-library-path /srv/lib", "env-image.tar");
  CHECK(overridden.output.find("=> found /srv/lib/libfoo.so.1") != std::string::npos);
  // the empty entry of LD_LIBRARY_PATH=/opt/none: is the image's WORKDIR, /srv/lib
  CHECK(why("", "workdir-image.tar").output.find("2. /srv/lib/libfoo.so.1: taken") != std::string::npos);
  auto not_an_image = run_command(depscan_bin() + " why --root " + shell_quote(fixture("app")) + " /usr/bin/app libfoo.so.1 2>&1");
  CHECK(not_an_image.exit_code == 2);
  CHECK(not_an_image.output.find("--root takes a directory or a container image archive, and this is neither") !=
        std::string::npos);
  CHECK(run_command(depscan_bin() + " why --root /dev/null /usr/bin/app libfoo.so.1 2>&1").exit_code == 2);
  // --platform picks the image of a multi-platform archive, as for a scan
  auto arm = run_command(depscan_bin() + " why --platform linux/arm64 --root " + shell_quote(fixture("oci-multi.tar")) +
                         " /usr/lib/libarm64-marker.so.1 libc.so.6 2>/dev/null");
  CHECK_MESSAGE(arm.output.starts_with("image "), arm.output);
  auto amd = run_command(depscan_bin() + " why --root " + shell_quote(fixture("oci-multi.tar")) +
                         " /usr/lib/libarm64-marker.so.1 libc.so.6 2>&1");
  CHECK(amd.exit_code == 2);  // the amd64 image has no such file
  CHECK_MESSAGE(amd.output.find("depscan: error: /usr/lib/libarm64-marker.so.1:") != std::string::npos, amd.output);
  auto unused = run_command(depscan_bin() + " why --platform linux/arm64 " + shell_quote(fixture("app")) + " libfoo.so.1 2>&1");
  CHECK(unused.output.find("--platform chooses the image of an image archive given to --root") != std::string::npos);
  // an image unpacked with errors gives no clean answer, even where the library is found
  auto damaged = run_command(depscan_bin() + " why --root " + shell_quote(fixture("image.tar")) + " /usr/bin/app libkeep.so.1 2>&1");
  CHECK_MESSAGE(damaged.exit_code == 1, damaged.output);
  CHECK(damaged.output.find("the image was unpacked with errors (above)") != std::string::npos);
}

TEST_CASE("an image's NVIDIA_REQUIRE_CUDA against --driver: the container toolkit's start-time check") {
  auto requirements = [](const std::string& options, const char* image) {
    return findings(scan(options + " " + shell_quote(fixture(image)), "require").report, "container-requirement");
  };
  // the one finding, of `severity`: its message and fix
  auto one = [&](const std::string& options, const char* image, const char* severity) {
    auto found = requirements(options, image);
    REQUIRE(found.size() == 1);
    CHECK(found[0]["severity"] == severity);
    return found[0]["message"].get<std::string>() + "\nfix: " + found[0]["fix"].get<std::string>();
  };
  auto has = [](const std::string& text, const char* part) { return text.find(part) != std::string::npos; };
  CHECK(has(one("", "require-image.tar", "info"), "NVIDIA_REQUIRE_CUDA=\"cuda>=12.4 brand=tesla,driver>=470,driver<471"));
  CHECK(requirements("--driver 550.54.14", "require-image.tar").empty());
  // CUDA 12.3: no alternative holds
  std::string refused = one("--driver 545.23.06", "require-image.tar", "error");
  CHECK(has(refused, "on driver 545.23.06 (CUDA 12.3) docker run --gpus (the NVIDIA Container Toolkit's hook; CDI mode does not check) refuses to start"));
  CHECK(has(refused, "unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container"));
  CHECK(has(refused, "NVIDIA_DISABLE_REQUIRE=true"));
  // branch 535 (CUDA 12.2) is allowed for Tesla and GeForce GPUs: the GPU's brand decides
  CHECK(has(one("--driver 535.104.05", "require-image.tar", "warning"), "depends on the GPU's brand or architecture: NVIDIA_REQUIRE_CUDA="));
  CHECK(requirements("--driver 470.57.02", "require-disabled-image.tar").empty());
  // a legacy image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA) requires cuda>=major.minor
  std::string legacy = one("--driver 440.33", "legacy-cuda-image.tar", "error");
  CHECK(has(legacy, "CUDA_VERSION=\"cuda>=11.0\""));
  CHECK(has(legacy, "unsatisfied condition: cuda>=11.0"));
}

TEST_CASE("an image's NVIDIA_DRIVER_CAPABILITIES: the driver libraries docker run --gpus leaves out of its containers") {
  // the video program needs libcuda.so.1, libnvcuvid.so.1 and libnvidia-ml.so.1; libcudart.so.12
  // opens libcuda.so.1 with dlopen; the image holds none of the driver's libraries
  auto left_out = [](const char* image) {
    std::map<std::string, std::string> out;  // library -> severity
    for (const json& f : findings(scan(shell_quote(fixture(image)), "caps").report, "container-driver-capabilities")) {
      std::string message = f["message"].get<std::string>();
      size_t at = message.find("does not mount ");
      std::string library = at == std::string::npos ? "(refused)" : message.substr(at + 15, message.find(' ', at + 15) - at - 15);
      out[library] = f["severity"].get<std::string>();
    }
    return out;
  };
  using Left = std::map<std::string, std::string>;
  CHECK(left_out("caps-default-image.tar") == Left{{"libnvcuvid.so.1", "error"}});  // unset: compute and utility
  CHECK(left_out("caps-legacy-image.tar").empty());  // unset, CUDA_VERSION without NVIDIA_REQUIRE_CUDA: every capability
  CHECK(left_out("caps-all-image.tar").empty());
  CHECK(left_out("caps-graphics-image.tar") ==
        Left{{"libcuda.so.1", "error"}, {"libnvcuvid.so.1", "error"}, {"libnvidia-ml.so.1", "error"}});
  CHECK(left_out("caps-typo-image.tar") == Left{{"(refused)", "error"}});

  Scan graphics = scan(shell_quote(fixture("caps-graphics-image.tar")), "caps-graphics");
  CHECK(graphics.exit_code == 1);
  CHECK(any_message_has(findings(graphics.report, "container-driver-capabilities"),
                        "libcuda.so.1 into a container of this image: it is one of the driver's compute libraries (CUDA and "
                        "OpenCL), and NVIDIA_DRIVER_CAPABILITIES=\"graphics, display\" selects display,graphics; without it "
                        "CUDA calls fail (\"CUDA driver version is insufficient for CUDA runtime version\") (needed by "
                        "/usr/bin/video_app, /usr/lib/libcudart.so.12 (dlopen))"));
  // library-not-found says where a driver library comes from instead of "install it"
  bool driver_fix = false;
  for (const json& f : findings(graphics.report, "library-not-found"))
    driver_fix |= f["fix"].get<std::string>().starts_with(
        "libnvcuvid.so.1 comes with the NVIDIA driver (its video libraries: NVDEC, NVENC and optical flow), not with a "
        "program or pip");
  CHECK(driver_fix);
}

TEST_CASE("a multi-platform image: --platform picks the image of the index; attestations are passed over") {
  Scan arm = scan("--platform linux/arm64 " + shell_quote(fixture("oci-multi.tar")), "image-arm64");
  REQUIRE(arm.report.is_object());
  CHECK(arm.tmp_left_empty);
  CHECK(object_at(arm.report, "/usr/lib/libarm64-marker.so.1"));
  CHECK_FALSE(object_at(arm.report, "/usr/lib/libkeep.so.1"));
  CHECK(findings(arm.report, "archive-corrupt").empty());  // the attestation's layer was not read as a tar

  Scan s390 = scan("--platform linux/s390x " + shell_quote(fixture("oci-multi.tar")), "image-s390x");
  CHECK(s390.exit_code == 2);
  CHECK(any_message_has(findings(s390.report, "image-invalid"),
                        "the image index has no image for linux/s390x (it has linux/arm64/v8, linux/amd64)"));

  // as Docker 25+ saves it: index.json chooses, manifest.json (the amd64 image) does not override it
  Scan docker_arm = scan("--platform linux/arm64 " + shell_quote(fixture("docker-multi.tar")), "docker-arm64");
  CHECK(object_at(docker_arm.report, "/usr/lib/libarm64-marker.so.1"));
  Scan docker_default = scan(shell_quote(fixture("docker-multi.tar")), "docker-default");
  CHECK(object_at(docker_default.report, "/usr/lib/libkeep.so.1"));
  Scan not_saved = scan("--platform linux/ppc64le " + shell_quote(fixture("docker-multi.tar")), "docker-ppc64le");
  CHECK(not_saved.exit_code == 2);  // named by the index, its blobs not in the archive: not offered
  CHECK(any_message_has(findings(not_saved.report, "image-invalid"), "no image for linux/ppc64le (it has linux/arm64/v8, linux/amd64)"));
  // one image for another machine, a malformed attestation beside it: taken unless --platform asks otherwise;
  // arm64, arm64/v8 and aarch64 name one platform
  Scan alone = scan(shell_quote(fixture("arm-only.tar")), "arm-only");
  CHECK(object_at(alone.report, "/usr/lib/libarm64-marker.so.1"));
  CHECK(findings(alone.report, "image-invalid").empty());
  CHECK(object_at(scan("--platform linux/arm64/v8 " + shell_quote(fixture("arm-only.tar")), "arm-v8").report,
                  "/usr/lib/libarm64-marker.so.1"));
  CHECK(object_at(scan("--platform linux/aarch64 " + shell_quote(fixture("oci-multi.tar")), "aarch64").report,
                  "/usr/lib/libarm64-marker.so.1"));
  CHECK(scan("--platform linux/amd64 " + shell_quote(fixture("arm-only.tar")), "arm-only-amd64").exit_code == 2);

  CommandResult bad = run_command(shell_quote(depscan_bin()) + " --platform amd64 " + shell_quote(fixture("oci-multi.tar")) + " 2>&1");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--platform: not an os/arch[/variant] platform: 'amd64'") != std::string::npos);
}

TEST_CASE("several images in one archive: the first is audited with a warning, --image picks another") {
  // as Docker 25+ saves `docker save fixture other:1.0` (index.json and manifest.json), and as older Docker does
  for (const char* archive : {"two-images.tar", "two-images-docker.tar"}) {
    CAPTURE(archive);
    Scan first = scan(shell_quote(fixture(archive)), "two-first");
    REQUIRE(first.report.is_object());
    CHECK(object_at(first.report, "/usr/lib/libkeep.so.1"));
    CHECK_FALSE(object_at(first.report, "/usr/lib/libother-marker.so.1"));
    auto several = findings(first.report, "image-several");
    REQUIRE(several.size() == 1);
    CHECK(several[0]["severity"] == "warning");
    CHECK(any_message_has(several, "the archive holds 2 images ("));
    CHECK(any_message_has(several, "other:1.0); only the first it lists, "));

    // Docker's short and full names are one image
    for (const char* name : {"other:1.0", "docker.io/library/other:1.0", "library/other:1.0"}) {
      CAPTURE(name);
      Scan other = scan("--image " + shell_quote(name) + " " + shell_quote(fixture(archive)), "two-other");
      CHECK(object_at(other.report, "/usr/lib/libother-marker.so.1"));
      CHECK_FALSE(object_at(other.report, "/usr/lib/libkeep.so.1"));
      CHECK(findings(other.report, "image-several").empty());
    }
    CHECK(object_at(scan("--image fixture " + shell_quote(fixture(archive)), "two-latest").report, "/usr/lib/libkeep.so.1"));

    Scan absent = scan("--image other:2.0 " + shell_quote(fixture(archive)), "two-absent");
    CHECK(absent.exit_code == 2);
    CHECK(any_message_has(findings(absent.report, "image-invalid"), "the archive has no image named other:2.0 (it has "));
  }
  // one image: nothing to say
  CHECK(findings(scan(shell_quote(fixture("image.tar")), "one-image").report, "image-several").empty());
}

TEST_CASE("--image and --platform with no image archive to choose from: a warning says they were ignored") {
  Scan s = scan("--image other:1.0 --platform linux/arm64 " + wheels({"datalib-1.0-cp311-cp311-manylinux2014_x86_64.whl"}),
                "image-unused");
  REQUIRE(s.report.is_object());
  auto unused = findings(s.report, "image-option-unused");
  REQUIRE(unused.size() == 1);
  CHECK(unused[0]["severity"] == "warning");
  CHECK(any_message_has(unused, "--image other:1.0 and --platform linux/arm64: no input is a container image archive"));
  bool wheel_audited = false;  // the scan went on all the same
  for (const json& o : s.report["objects"])
    wheel_audited = wheel_audited || o["path"].get<std::string>().ends_with("site-packages/datalib/libdatalib.so");
  CHECK(wheel_audited);
  for (const char* option : {"--image other:1.0 ", "--platform linux/amd64 "}) {
    CAPTURE(option);
    Scan used = scan(option + shell_quote(fixture("two-images.tar")), "image-used");
    REQUIRE(used.report.is_object());
    CHECK(findings(used.report, "image-option-unused").empty());
    CHECK(findings(used.report, "image-unpacked").size() == 1);
  }
}

TEST_CASE("a Windows wheel: its extension module and the DLL beside it are audited, the DLL found in the module's directory") {
  std::string win_wheel = "winext-1.0-cp311-cp311-win_amd64.whl";
  if (!present_or_skip(fs::exists(fixture(win_wheel)), "mingw-w64 (the win_amd64 wheel fixture)")) return;
  Scan s = scan(wheels({win_wheel.c_str()}), "win-wheel");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  auto module = object_at(s.report, "site-packages/winext/winext.pyd");
  REQUIRE(module);
  CHECK(s.report["objects"][*module]["owner"] == "winext");
  CHECK(resolved(s.report, *module, "winhelper.dll")["path"] == "site-packages/winext/winhelper.dll");
  CHECK(any_message_has(findings(s.report, "wheel-installed"), "winext 1.0 installs 2 ELF/PE files into site-packages"));
}

TEST_CASE("a library a wheel installs through <name>.data/platlib belongs to that wheel, not to the system") {
  Scan s = scan(wheels({"datalib-1.0-cp311-cp311-manylinux2014_x86_64.whl"}), "data-dir");
  REQUIRE(s.report.is_object());
  CHECK(s.tmp_left_empty);
  bool found = false;
  for (const json& o : s.report["objects"])
    if (o["path"].get<std::string>().ends_with("site-packages/datalib/libdatalib.so")) {
      found = true;
      CHECK(o["owner"] == "datalib");
    }
  CHECK(found);
  for (const json& f : findings(s.report, "system-libraries")) CHECK(f["message"].get<std::string>().find("libdatalib") == std::string::npos);
}

TEST_CASE("a directory audit: every binary a root, non-binaries counted, findings summarised") {
  TempDir dir("wheels-audit-input");
  for (const char* f : {"libtorch_cuda.so", "libcudnn.so.9", "app", "make_archives_copy.txt"}) {
    std::string from = fs::exists(fixture(f)) ? fixture(f) : fixture("torch-2.3.0-cp311-cp311-manylinux_2_17_x86_64.whl");
    fs::copy_file(from, dir.path() / f);
  }
  fs::create_symlink("libcudnn.so.9", dir.path() / "libcudnn.so");
  Scan s = scan(shell_quote(dir.str()), "dir");
  REQUIRE(s.report.is_object());
  CHECK(s.report["roots"].size() == 3);
  CHECK(any_message_has(findings(s.report, "directory-audited"), "3 ELF/PE files audited, 1 other files skipped"));
  auto text = run_command(shell_quote(depscan_bin()) + " " + shell_quote(dir.str()) + " 2>/dev/null");
  CHECK(text.output.find("Findings by code") != std::string::npos);
}

TEST_CASE("--python-env and a site-packages directory: RECORD attribution and pins on an installed env") {
  TempDir venv("wheels-venv");
  std::string site = venv.str() + "/lib/python3.11/site-packages";
  REQUIRE(unzip_wheels(site, wheels({kTorch, kCudnn, kCudart})));
  fs::create_directory_symlink("lib", venv.path() / "lib64");  // as python3 -m venv makes it
  fs::create_directories(site + "/pip/_vendor/distlib");  // pip's Windows launcher template
  fs::copy_file(fixtures_dir() + "/pe/pe64/app.exe", site + "/pip/_vendor/distlib/t64.exe");
  for (std::string args : {"--python-env " + shell_quote(venv.str()), shell_quote(site)}) {
    CAPTURE(args);
    Scan s = scan(args, "venv");
    REQUIRE(s.report.is_object());
    CHECK(s.tmp_left_empty);
    for (const json& root : s.report["roots"]) {  // site-packages once, not again through lib64; no .exe
      std::string path = s.report["objects"][root.get<size_t>()]["path"];
      CHECK(path.find("/lib64/") == std::string::npos);
      CHECK_FALSE(path.ends_with(".exe"));
    }
    CHECK(any_message_has(findings(s.report, "directory-audited"), "1 of them Windows PE files a Linux Python environment never loads"));
    auto torch = object_at(s.report, site + "/torch/lib/libtorch_cuda.so");
    REQUIRE(torch);
    CHECK(s.report["objects"][*torch]["owner"] == "torch");
    CHECK(resolved(s.report, *torch, "libcudnn.so.9")["owner"] == "nvidia-cudnn-cu12");
    CHECK(findings(s.report, "wheel-pin-mismatch").size() == 1);
  }
}

TEST_CASE("--root with no inputs audits the whole root file system") {
  TempDir root("wheels-rootfs");
  fs::create_directories(root.path() / "usr/bin");
  fs::create_directories(root.path() / "usr/lib");
  fs::copy_file(fixture("app"), root.path() / "usr/bin/app");
  fs::copy_file(fixture("libfoo.so.1"), root.path() / "usr/lib/libfoo.so.1");
  Scan s = scan("--root " + shell_quote(root.str()), "rootfs");
  REQUIRE(s.report.is_object());
  CHECK(s.report["roots"].size() == 2);
  auto app = object_at(s.report, "/usr/bin/app");
  REQUIRE(app);
  CHECK(resolved(s.report, *app, "libfoo.so.1")["realpath"] == "/usr/lib/libfoo.so.1");
  CHECK(any_message_has(findings(s.report, "directory-audited"), "2 ELF/PE files audited"));
}

TEST_CASE("depscan stopped by SIGINT or SIGTERM while unpacking an image leaves no temporary directory behind") {
  depscan::test::TempDir tmp("signal-cleanup");
  std::string image = tmp.str() + "/many.tar", private_tmp = tmp.str() + "/tmp";
  REQUIRE(run_command("python3 " + shell_quote(depscan::test::source_dir() + "/fixtures/wheels/many_files_image.py") + " " + shell_quote(image) +
                      " 40000 && mkdir " + shell_quote(private_tmp)).exit_code == 0);
  for (const char* sig : {"INT", "TERM"}) {
    CAPTURE(sig);
    // wait for the unpacking to start, stop depscan, and list what it left (job control on: a
    // background job of a shell without it ignores SIGINT)
    std::string script = "set -m; export TMPDIR=" + shell_quote(private_tmp) + "; " +
                         shell_quote(depscan::test::depscan_bin()) + " " + shell_quote(image) +
                         " >/dev/null 2>&1 & pid=$!; for i in $(seq 500); do ls \"$TMPDIR\" | grep -q depscan-image && "
                         "break; sleep 0.01; done; sleep 0.2; kill -" + sig + " $pid; wait $pid; echo \"rc=$?\"; "
                         "ls -A \"$TMPDIR\"";
    auto r = run_command("bash -c " + shell_quote(script));
    CHECK(r.output == (std::string(sig) == "INT" ? "rc=130\n" : "rc=143\n"));
  }
}

