// The CUDA stack checks on the fixtures of fixtures/cuda (a small root file system, so the host's
// own CUDA install cannot change the results) and on the real CUDA 13 + cuDNN 9.19 install.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "analyzer/check/cuda_stack.h"
#include "analyzer/read/rodata_strings.h"
#include "installed_cudnn.h"
#include "support.h"
#include "toolchains.h"

using namespace depscan;
using namespace depscan::test;
using nlohmann::json;

namespace {

std::string sysroot() { return fixtures_dir() + "/cuda/sysroot"; }

json scan(const std::string& args) {
  auto r = run_command(depscan_bin() + " " + args + " --format json");
  INFO(args);
  REQUIRE_FALSE(r.output.empty());
  return json::parse(r.output);
}

json scan_app(const std::string& app, const std::string& extra = "") {
  return scan("--root " + shell_quote(sysroot()) + " /opt/bin/" + app + " " + extra);
}

// Findings of one code (warnings and errors only, unless severity says otherwise).
std::vector<json> findings(const json& report, const std::string& code) {
  std::vector<json> out;
  for (const json& f : report["findings"])
    if (f["code"] == code) out.push_back(f);
  return out;
}

// Codes of every warning or error, except the sysroot's own "no ld.so.cache" note.
std::set<std::string> problem_codes(const json& report) {
  std::set<std::string> out;
  for (const json& f : report["findings"])
    if (f["severity"] != "info" && f["code"] != "no-ld-so-cache") out.insert(f["code"].get<std::string>());
  return out;
}

std::string object_path(const json& report, const json& index) {
  return index.is_null() ? "" : report["objects"][index.get<size_t>()]["path"].get<std::string>();
}

// dlopen edges as "opener-basename -> name => target path ('' = not found)".
std::vector<json> dlopen_edges(const json& report) {
  std::vector<json> out;
  for (const json& e : report["edges"])
    if (e["kind"] == "dlopen") out.push_back(e);
  return out;
}

const json* edge_named(const std::vector<json>& edges, const json& report, const std::string& from_suffix,
                       const std::string& name) {
  for (const json& e : edges)
    if (e["name"] == name && object_path(report, e["from"]).ends_with(from_suffix)) return &e;
  return nullptr;
}

bool mentions(const std::vector<json>& found, const std::string& text) {
  for (const json& f : found)
    if (f["message"].get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

const std::vector<std::string> kCudnn9Sublibraries = {
    "libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
    "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9"};

}  // namespace

TEST_CASE("library names are read from .rodata only as whole strings") {
  std::string text = std::string("libcudnn.so.9\0libnvrtc.so.%d\0see libfoo.so.1 here\0libz.so\0notlib.so.1\0", 71) +
                     "libcuda.so.1";  // last one not NUL-terminated: not a C string
  auto names = library_names_in(ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  CHECK(names == std::vector<std::string>{"libcudnn.so.9", "libnvrtc.so.%d", "libz.so"});
}

ByteView bytes_of(const std::string& text) { return ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()); }

std::string utf16(const std::string& ascii) {
  std::string out;
  for (char c : ascii) out += std::string{c, '\0'};
  return out;
}

TEST_CASE("DLL names are read from .rdata in 8-bit and UTF-16 strings, after whatever data precedes them") {
  // cudart64_13.dll keeps "nvcuda.dll" right after a GUID's last byte, 0xb5; the UTF-16 name
  // follows an 8-bit string's NUL, so its first character is preceded by ('L', NUL)
  std::string text = std::string("\x32\xb5nvcuda.dll\0KERNEL32.DLL\0", 26) + utf16("cublas64_13.dll") +
                     std::string(2, '\0') + std::string("a.dllx\0see cusparse64_12.dll\0NVCUDA.DLL\0", 40) +
                     "cufft64_12.dll";  // last: no NUL
  CHECK(dll_names_in(bytes_of(text)) ==
        std::vector<std::string>{"nvcuda.dll", "KERNEL32.DLL", "cublas64_13.dll", "cusparse64_12.dll"});  // NVCUDA.DLL: seen
  // a name character before the name joins it: that name is missed, not mistaken for another
  CHECK(dll_names_in(bytes_of(std::string("\x01" "Anvcuda.dll\0", 13))) == std::vector<std::string>{"Anvcuda.dll"});
  std::string unterminated_wide = utf16("cufft64_12.dll") + "x";
  CHECK(dll_names_in(bytes_of(unterminated_wide)).empty());
  std::string too_long = std::string(300, 'a') + std::string(".dll\0", 5);
  CHECK(dll_names_in(bytes_of(too_long)).empty());
  CHECK(dll_names_in(bytes_of(std::string(".dll\0", 5))).empty());
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("a PE file that imports LoadLibrary opens the CUDA DLLs its .rdata names; other names and other files do not") {
  namespace fs = std::filesystem;
  const std::string pe = fixtures_dir() + "/pe/pe64";
  if (!present_or_skip(fs::exists(pe + "/app_loadlib.exe"), "mingw-w64 (the LoadLibrary fixture)")) return;
  // the control: names_only.dll names cublas64_13.dll as well, and imports no LoadLibrary
  auto named = dll_names_in(bytes_of(file_bytes(pe + "/names_only.dll")));
  REQUIRE(std::find(named.begin(), named.end(), "cublas64_13.dll") != named.end());
  TempDir root("loadlib");
  fs::create_directories(root.path() / "app");
  fs::copy_file(pe + "/app_loadlib.exe", root.path() / "app/app_loadlib.exe");
  fs::copy_file(pe + "/mydll.dll", root.path() / "app/cublas64_13.dll");  // any x86-64 DLL
  fs::copy_file(pe + "/names_only.dll", root.path() / "app/names_only.dll");
  json r = scan("--root " + shell_quote(root.path().string()) + " /app/app_loadlib.exe /app/names_only.dll");
  auto edges = dlopen_edges(r);
  CHECK(edges.size() == 4);  // nvcuda.dll, cuBLAS (named twice, in two cases), cufft64_12.dll, cudnn64_9.dll; not mscoree.dll
  const json* blas = edge_named(edges, r, "/app_loadlib.exe", "CUBLAS64_13.DLL");
  REQUIRE(blas);
  CHECK((*blas)["inferred"] == true);
  CHECK(object_path(r, (*blas)["to"]) == "/app/cublas64_13.dll");  // found ignoring case
  CHECK((*blas)["how_detail"] == "application directory");
  CHECK((*blas)["source"] == "string \"CUBLAS64_13.DLL\" in .rdata of app_loadlib.exe");
  const json* driver = edge_named(edges, r, "/app_loadlib.exe", "nvcuda.dll");
  REQUIRE(driver);
  CHECK((*driver)["system_provided"] == true);
  CHECK((*driver)["how_detail"] == "NVIDIA driver DLL, not in the scan");
  CHECK(edge_named(edges, r, "/app_loadlib.exe", "cufft64_12.dll"));  // a UTF-16 name
  CHECK(edge_named(edges, r, "/app_loadlib.exe", "cudnn64_9.dll"));   // the matrix's cuDNN 9 Windows names
  CHECK_FALSE(edge_named(edges, r, "/names_only.dll", "cublas64_13.dll"));
  // the missing DLLs warn with what Windows says; the driver DLL is the driver's info line, not a warning
  auto missing = findings(r, "dlopen-library-not-found");
  REQUIRE(missing.size() == 2);
  CHECK(missing[0]["severity"] == "warning");
  CHECK(mentions(missing, "opens cufft64_12.dll with LoadLibrary at run time"));
  CHECK(mentions(missing, "error 126 (ERROR_MOD_NOT_FOUND)"));
  CHECK(missing[0]["fix"].get<std::string>().find("in the application directory (the program's .exe directory; this scan "
                                                  "took that of app_loadlib.exe)") != std::string::npos);
  CHECK(findings(r, "windows-driver-dll").size() == 1);
  auto text = run_command("NO_COLOR=1 " + depscan_bin() + " --root " + shell_quote(root.path().string()) + " /app/app_loadlib.exe");
  CHECK(text.output.find("── nvcuda.dll [NVIDIA driver DLL, not in the scan] (LoadLibrary, inferred)\n") != std::string::npos);
  // with the target's System32 in the root, the driver DLL is looked for there: missing, the fix is the driver
  fs::create_directories(root.path() / "Windows/System32");
  json without_driver = scan("--root " + shell_quote(root.path().string()) + " /app/app_loadlib.exe");
  bool driver_fix = false;
  for (const json& f : findings(without_driver, "dlopen-library-not-found"))
    if (f["message"].get<std::string>().find("opens nvcuda.dll") != std::string::npos)
      driver_fix = f["fix"].get<std::string>().starts_with("nvcuda.dll comes with the NVIDIA display driver");
  CHECK(driver_fix);
  fs::copy_file(pe + "/mydll.dll", root.path() / "Windows/System32/nvcuda.dll");
  json with_windows = scan("--root " + shell_quote(root.path().string()) + " /app/app_loadlib.exe");
  auto edges_with_windows = dlopen_edges(with_windows);
  const json* found = edge_named(edges_with_windows, with_windows, "/app_loadlib.exe", "nvcuda.dll");
  REQUIRE(found);
  CHECK(object_path(with_windows, (*found)["to"]) == "/Windows/System32/nvcuda.dll");
  CHECK((*found)["how_detail"] == "system directory");
}

TEST_CASE("names in .rodata become dlopen edges only from code that imports dlopen") {
  json r = scan_app("app_plugins");
  auto edges = dlopen_edges(r);
  const json* from_host = edge_named(edges, r, "/libplugin_host.so", "libcudnn.so.9");
  REQUIRE(from_host);
  CHECK((*from_host)["inferred"] == true);
  CHECK(object_path(r, (*from_host)["to"]) == "/opt/cudnn9/lib/libcudnn.so.9");
  CHECK(edge_named(edges, r, "/libplugin_names.so", "libcudnn.so.9") == nullptr);
}

TEST_CASE("driver versions from /proc, file names and the stub's traits") {
  CHECK(parse_nvidia_version_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023")
            ->str() == "535.104.05");
  CHECK(parse_nvidia_version_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build")
            ->str() == "575.57.08");
  CHECK_FALSE(parse_nvidia_version_text("no version here"));
  CHECK_FALSE(parse_nvidia_version_text("x86_64 1.2.3.4 535"));
  CHECK(parse_nvidia_version_text("550.54.14")->str() == "550.54.14");
  CHECK_FALSE(parse_nvidia_version_text("first line\n550.54.14"));
  CHECK(version_from_file_name("libcuda.so.565.77", 2)->str() == "565.77");
  CHECK(version_from_file_name("libcudart.so.12.4.127")->str() == "12.4.127");
  CHECK_FALSE(version_from_file_name("libcudart.so"));
  auto fs = make_rooted_fs(fixtures_dir() + "/cuda/proc-root");
  auto driver = driver_version_from_system(*fs);
  REQUIRE(driver);
  CHECK(driver->version.str() == "535.104.05");
  CHECK(driver->source == "/proc/driver/nvidia/version");
}

// cuda_runtime_api.h in a small root whose define sits `at` bytes in (comment lines before it).
std::optional<SourcedVersion> cudart_version_with_define_at(size_t at, const std::string& value, int major) {
  TempDir root("cudart-header");
  std::filesystem::create_directories(root.path() / "opt/cuda/include");
  std::string text;
  while (text.size() + 80 < at) text += "/* " + std::string(76, '-') + "*/\n";
  text += std::string(at - text.size(), ' ') + "#define CUDART_VERSION " + value + "\n";
  while (text.size() < 100'000) text += "extern int cudaSomething(void);\n";
  std::ofstream(root.path() / "opt/cuda/include/cuda_runtime_api.h") << text;
  auto fs = make_rooted_fs(root.str());
  HeaderVersions headers(*fs);
  return headers.cudart("/opt/cuda/lib64", major);
}

TEST_CASE("CUDART_VERSION is found anywhere in the first 64 KiB of cuda_runtime_api.h, even across 16 KiB") {
  auto near = cudart_version_with_define_at(6'142, "12040", 12);
  REQUIRE(near);
  CHECK(near->version.str() == "12.4");
  CHECK(near->source == "CUDART_VERSION in /opt/cuda/include/cuda_runtime_api.h");
  auto later = cudart_version_with_define_at(40'000, "12060", 12);
  REQUIRE(later);
  CHECK(later->version.str() == "12.6");
  // "#define CUDART_VERSION 120" ends the first 16 KiB: the whole line is read before it counts
  size_t cut = (16 << 10) - std::string("#define CUDART_VERSION 120").size();
  auto across = cudart_version_with_define_at(cut, "12080", 12);
  REQUIRE(across);
  CHECK(across->version.str() == "12.8");
  CHECK_FALSE(cudart_version_with_define_at(70'000, "12040", 12));  // past 64 KiB: not read
  CHECK_FALSE(cudart_version_with_define_at(100, "13000", 12));     // another major
}

TEST_CASE("the CUDA major a cuDNN distribution or RUNPATH names") {
  CHECK(cu_major_in("nvidia-cudnn-cu12", "", "")->first == 12);
  CHECK(cu_major_in("nvidia-cudnn-cu12", "", "")->second == "cu12");
  CHECK(cu_major_in("cudnn-cu13", "", "")->first == 13);
  CHECK_FALSE(cu_major_in("nvidia-cudnn", "", ""));
  CHECK_FALSE(cu_major_in("nvidia-cudnn-cu1", "", ""));
  auto runpath = cu_major_in("$ORIGIN:/opt/x/cu1/lib:/opt/nvidia/cu13/lib64:/opt/nvidia/cu12/lib", "/", "/lib");
  REQUIRE(runpath);
  CHECK(runpath->first == 13);  // "/cu13/lib64" starts with "/cu13/lib"
  CHECK(runpath->second == "/cu13/lib");
  CHECK_FALSE(cu_major_in("$ORIGIN/cu12", "/", "/lib"));
  CHECK_FALSE(cu_major_in("cu12/lib", "/", "/lib"));
}

TEST_CASE("the CUDA major a Python distribution's name says it was built for") {
  CHECK(cuda_major_of_distribution("nvidia-cudnn-cu12") == 12);
  CHECK(cuda_major_of_distribution("tensorrt_cu13_bindings") == 13);
  CHECK(cuda_major_of_distribution("cupy-cuda13x") == 13);
  CHECK(cuda_major_of_distribution("cupy-cuda11x") == 11);
  CHECK(cuda_major_of_distribution("jax-cuda12-plugin") == 12);
  CHECK_FALSE(cuda_major_of_distribution("cuda-python"));
  CHECK_FALSE(cuda_major_of_distribution("pycuda"));
  CHECK_FALSE(cuda_major_of_distribution("nvidia-cuda-runtime"));     // CUDA 13's wheels carry no suffix
  CHECK_FALSE(cuda_major_of_distribution("cupy-cuda1x"));
  CHECK_FALSE(cuda_major_of_distribution("libcudnn9-cuda-12"));       // a Debian package: "12" is a part of its own
  CHECK(cuda_major_of_distribution("spconv-cu124") == 12);  // major and minor
  CHECK(cuda_major_of_distribution("mxnet-cu112") == 11);
  CHECK(cuda_major_of_distribution("nvidia-dali-cuda120") == 12);
  CHECK(cuda_major_of_distribution("CuPy-CUDA12x") == 12);  // METADATA's Name, not normalised
  CHECK(cuda_major_of_distribution("nvidia_cudnn_cu13") == 13);
  CHECK_FALSE(cuda_major_of_distribution("x-cu1200"));
  CHECK_FALSE(cuda_major_of_distribution("x-cu12a"));
  CHECK_FALSE(cuda_major_of_distribution("x-cu"));
  CHECK_FALSE(cuda_major_of_distribution(""));
}

TEST_CASE("a consistent CUDA 13 + cuDNN 9.19 stack: no CUDA finding, all seven sub-libraries opened") {
  json r = scan_app("app9");
  CHECK(problem_codes(r).empty());
  auto edges = dlopen_edges(r);
  for (const std::string& sub : kCudnn9Sublibraries) {
    bool resolved = false;
    for (const json& e : edges)
      if (e["name"] == sub && !e["to"].is_null() && e["inferred"] == false) resolved = true;
    CHECK_MESSAGE(resolved, sub);
  }
  // the shim probes name.9.19.0, name.9.19, name (version from ../include/cudnn_version.h)
  const json* graph = edge_named(edges, r, "/libcudnn.so.9", "libcudnn_graph.so.9");
  REQUIRE(graph);
  CHECK((*graph)["source"].get<std::string>().find("libcudnn_graph.so.9.19.0") != std::string::npos);
  // cuDNN opens cuBLASLt and NVRTC of its CUDA major through its own RUNPATH
  const json* lt = edge_named(edges, r, "/libcudnn_adv.so.9", "libcublasLt.so.13");
  REQUIRE(lt);
  CHECK(object_path(r, (*lt)["to"]) == "/opt/cuda13/libcublasLt.so.13");
  // NVRTC's builtins: the matrix row, with the exact major.minor from the name in NVRTC's .rodata
  const json* builtins = edge_named(edges, r, "/libnvrtc.so.13", "libnvrtc-builtins.so.13.0");
  REQUIRE(builtins);
  CHECK((*builtins)["inferred"] == false);
  CHECK((*builtins)["source"].get<std::string>().find("major.minor as the name appears in its .rodata") != std::string::npos);
  CHECK_FALSE((*builtins)["to"].is_null());
  // no driver in the root: libcuda.so.1 is opened but not found, and that is not a finding
  CHECK(edge_named(edges, r, "/libcudart.so.13", "libcuda.so.1") != nullptr);
  CHECK(findings(r, "dlopen-library-not-found").empty());
}

TEST_CASE("the real CUDA 13 + cuDNN 9.19 install is consistent") {
  if (!present_or_skip(std::filesystem::exists("/usr/local/cuda/lib64/libcudnn.so.9"), "/usr/local/cuda/lib64/libcudnn.so.9")) return;
  json r = scan("/usr/local/cuda/lib64/libcudnn.so.9");
  CHECK(problem_codes(r).empty());
  auto edges = dlopen_edges(r);
  std::set<std::string> resolved;
  for (const json& e : edges)
    if (!e["to"].is_null() && e["inferred"] == false) resolved.insert(e["name"].get<std::string>());
  for (const std::string& sub : kCudnn9Sublibraries) CHECK_MESSAGE(resolved.contains(sub), sub);
  CHECK(resolved.contains("libcublasLt.so.13"));
  CHECK(resolved.contains("libnvrtc.so.13"));
}

TEST_CASE("cudnn-version-mismatch: two reachable copies of one cuDNN file are named with their versions") {
  json r = scan("--root " + shell_quote(sysroot()) + " /opt/bin/app9 /opt/bin/app9_cu12cudnn");
  std::vector<json> copies;
  for (const json& f : findings(r, "cudnn-version-mismatch"))
    if (f["message"].get<std::string>().starts_with("two copies of")) copies.push_back(f);
  REQUIRE(copies.size() == 8);  // the shim and its seven sub-libraries
  CHECK(copies[0]["severity"] == "warning");
  CHECK(mentions(copies, "two copies of libcudnn.so.9 are reachable: /opt/cudnn9-cu12/lib/libcudnn.so.9 (9.19.0) and "
                         "/opt/cudnn9/lib/libcudnn.so.9 (9.19.0)"));
}

TEST_CASE("cudnn-version-mismatch: sub-libraries of two releases, and a cuDNN 8 application on cuDNN 9") {
  json mixed = scan_app("app9_mixed", "--ld-library-path /opt/mixed9/b");
  auto found = findings(mixed, "cudnn-version-mismatch");
  REQUIRE_FALSE(found.empty());
  CHECK(found[0]["severity"] == "error");
  CHECK(mentions(found, "9.1.0 from libcudnn_graph.so.9 (/opt/mixed9/b/libcudnn_graph.so.9.1.0)"));
  CHECK(mentions(found, "9.19.0 from libcudnn.so.9 (/opt/mixed9/a/libcudnn.so.9.19.0)"));
  CHECK(mentions(found, "come from two places"));
  for (const json& f : found) CHECK_FALSE(f["fix"].get<std::string>().empty());

  json on9 = scan_app("app8_on9");
  auto wrong_major = findings(on9, "cudnn-version-mismatch");
  REQUIRE(wrong_major.size() == 1);
  CHECK(mentions(wrong_major, "needs cuDNN 8 (libcudnn.so.8)"));
  CHECK(mentions(wrong_major, "/opt/cudnn9/lib/libcudnn.so.9"));
  CHECK(wrong_major[0]["fix"].get<std::string>().find("install cuDNN 8") != std::string::npos);
}

TEST_CASE("cuDNN 9.28's extra sub-libraries are opened when its shim and graph name them") {
  auto target_of = [](const json& report, const std::string& name) -> std::optional<std::string> {
    for (const json& e : dlopen_edges(report))
      if (e["name"] == name) return object_path(report, e["to"]);
    return std::nullopt;
  };
  json newer = scan_app("app9_newer");
  CHECK(target_of(newer, "libcudnn_ext.so.9") == "/opt/cudnn9-newer/lib/libcudnn_ext.so.9");
  CHECK(target_of(newer, "libcudnn_engines_tensor_ir.so.9") == "/opt/cudnn9-newer/lib/libcudnn_engines_tensor_ir.so.9");
  std::vector<json> edges = dlopen_edges(newer);
  const json* nvrtc = edge_named(edges, newer, "/libcudnn_engines_tensor_ir.so.9", "libnvrtc.so.13");
  REQUIRE(nvrtc);
  CHECK(object_path(newer, (*nvrtc)["to"]) == "/opt/cuda13/libnvrtc.so.13");
  // nvJitLink, which the root does not have, is opened by the CUDA major and does not count
  CHECK(edge_named(edges, newer, "/libcudnn_engines_tensor_ir.so.9", "libnvJitLink.so.13"));
  CHECK(problem_codes(newer).empty());
  // 9.19 names neither: no edge, so no "not found" either
  json older = scan_app("app9");
  CHECK_FALSE(target_of(older, "libcudnn_ext.so.9"));
  CHECK_FALSE(target_of(older, "libcudnn_engines_tensor_ir.so.9"));

  // named but not shipped: the loader goes on to the default directories and finds another release
  json noir = scan_app("app9_noir");
  CHECK(target_of(noir, "libcudnn_engines_tensor_ir.so.9") == "/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9");
  auto found = findings(noir, "cudnn-version-mismatch");
  REQUIRE_FALSE(found.empty());
  CHECK(found[0]["severity"] == "error");
  CHECK(mentions(found, "cuDNN 9 libraries of different releases are loaded together: 9.28.1 from libcudnn.so.9"));
  CHECK(mentions(found, "9.30.0 from libcudnn_engines_tensor_ir.so.9 "
                        "(/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9.30.0)"));
}

TEST_CASE("cudnn-cuda-mismatch: cuDNN built for CUDA 12 in a CUDA 13 process") {
  json r = scan_app("app9_cu12cudnn");
  auto found = findings(r, "cudnn-cuda-mismatch");
  REQUIRE(found.size() == 1);
  CHECK(found[0]["severity"] == "error");
  CHECK(mentions(found, "was built for CUDA 12"));
  CHECK(mentions(found, "this process uses CUDA 13"));
  CHECK(found[0]["fix"].get<std::string>().find("nvidia-cudnn-cu13") != std::string::npos);
  CHECK(problem_codes(scan_app("app9")).count("cudnn-cuda-mismatch") == 0);
  // the same release built for CUDA 12 (nvidia-cudnn-cu12 9.19.0.56: CUDA 12.9) with a CUDA 12.8 runtime
  json cu12 = scan_app("app9_cu12_cuda12_8");
  CHECK(findings(cu12, "cudnn-cuda-mismatch").empty());
  CHECK(findings(cu12, "matrix-no-data").empty());
}

TEST_CASE("cudnn-cuda-mismatch: a runtime newer than every build of its major is untested, one older is not built for") {
  auto found = findings(scan_app("app9_cuda13_9"), "cudnn-cuda-mismatch");
  REQUIRE(found.size() == 1);
  CHECK(found[0]["severity"] == "info");
  CHECK(mentions(found, "cuDNN 9.19.0's support matrix lists its CUDA 13 build for CUDA 13.0-13.1, and libcudart.so.13 "
                        "is 13.9.20, newer: NVIDIA has not tested the pair"));
  // cuFFT 12.0 (CUDA 13's) comes first in that process: the CUDA version is NVRTC's 13.0, not cuFFT's
  CHECK(findings(scan_app("app9_cufft"), "cudnn-cuda-mismatch").empty());

  // the same cuDNN 9.19 (built for CUDA 13) and CUDA 13.1 runtime, with data that says otherwise
  TempDir dir("cudnn-builds");
  auto with_builds = [&](const std::string& name, const std::string& builds) {
    std::string path = dir.str() + "/" + name;
    std::ofstream(path) << R"({"schema": "depscan-matrix/cudnn/1", "compatibility_source": "test", "releases": [{"versions": ["9.19.0"], "builds": [)" +
                               builds + R"(], "sm_min": "7.5", "sm_max": "12.1", "source": "test data"}]})";
    return scan_app("app9", "--matrix " + shell_quote(path));
  };
  auto older = findings(with_builds("older.json", R"({"cuda_min": "13.2", "cuda_max": "13.5", "linux": "580.65.06"})"),
                        "cudnn-cuda-mismatch");
  REQUIRE(older.size() == 1);
  CHECK(older[0]["severity"] == "warning");
  CHECK(mentions(older, "cuDNN 9.19.0 has no build for CUDA 13.1 (libcudart.so.13 is 13.1.80); its builds are for CUDA "
                        "13.2-13.5 (source: test data)"));
  json gap = with_builds("gap.json", R"({"cuda_min": "12.0", "cuda_max": "12.9", "linux": "525.60.13"})");
  CHECK(findings(gap, "cudnn-cuda-mismatch").empty());
  CHECK(mentions(findings(gap, "matrix-no-data"), "cuDNN 9.19.0 was built for CUDA 13 (it opens libnvrtc.so.13), and "
                                                  "depscan's support-matrix row for it lists builds for CUDA 12.0-12.9 "
                                                  "only: whether it supports CUDA 13.1"));
}

TEST_CASE("cuda-driver-too-old: below the minor-version floor is an error, below the full driver a warning") {
  json old = scan_app("app13", "--driver 470.82.01");
  auto too_old = findings(old, "cuda-driver-too-old");
  REQUIRE(too_old.size() == 1);
  CHECK(too_old[0]["severity"] == "error");
  CHECK(mentions(too_old, ">= 580.65.06"));
  CHECK(mentions(too_old, "CUDA driver version is insufficient for CUDA runtime version"));

  json compat = scan_app("app13", "--driver 580.65.06");  // 13.1 runtime, 13.0 driver
  auto minor = findings(compat, "cuda-driver-too-old");
  REQUIRE(minor.size() == 1);
  CHECK(minor[0]["severity"] == "warning");
  CHECK(mentions(minor, "minor-version compatibility"));
  CHECK(mentions(minor, "590.44.01"));

  CHECK(findings(scan_app("app13", "--driver 590.48.01"), "cuda-driver-too-old").empty());

  // the driver's version from its file name (libcuda.so.1 -> libcuda.so.470.82.01)
  json named = scan_app("app13", "--ld-library-path /opt/driver");
  auto by_name = findings(named, "cuda-driver-too-old");
  REQUIRE(by_name.size() == 1);
  CHECK(mentions(by_name, "file name libcuda.so.470.82.01"));
  CHECK(findings(named, "stub-driver").empty());

  // the driver's version from /proc/driver/nvidia/version of the analysed root
  json proc = scan("--root " + shell_quote(fixtures_dir() + "/cuda/proc-root") + " /opt/bin/app13");
  auto by_proc = findings(proc, "cuda-driver-too-old");
  REQUIRE(by_proc.size() == 1);
  CHECK(mentions(by_proc, "535.104.05 (/proc/driver/nvidia/version)"));
}

TEST_CASE("driver-library-mismatch: the libcuda a process loads against the kernel module's release") {
  // the kernel module of drivers-root (proc-root with user-space drivers) is 535.104.05
  auto with_driver = [](const std::string& dir) {
    return scan("--root " + shell_quote(fixtures_dir() + "/cuda/drivers-root") + " --ld-library-path " + dir + " /opt/bin/app13");
  };
  json older = with_driver("/opt/driver");
  auto old_found = findings(older, "driver-library-mismatch");
  REQUIRE(old_found.size() == 1);
  CHECK(old_found[0]["severity"] == "error");
  CHECK(mentions(old_found, "libcuda.so.1 (/opt/driver/libcuda.so.470.82.01) is NVIDIA driver 470.82.01, but the kernel "
                            "module is 535.104.05 (/proc/driver/nvidia/version): cuInit fails with "
                            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803"));
  CHECK(old_found[0]["fix"].get<std::string>().find("take /opt/driver off the library search path") != std::string::npos);
  // the other checks are about the kernel's driver, which runs once that libcuda is off the path
  CHECK(mentions(findings(older, "cuda-driver-too-old"), "535.104.05 (/proc/driver/nvidia/version)"));

  auto newer = findings(with_driver("/opt/driver-new"), "driver-library-mismatch");
  REQUIRE(newer.size() == 1);
  CHECK(newer[0]["severity"] == "error");
  CHECK(mentions(newer, "Driver/library version mismatch"));

  auto compat = findings(with_driver("/opt/cuda13/compat"), "driver-library-mismatch");
  REQUIRE(compat.size() == 1);
  CHECK(compat[0]["severity"] == "info");
  CHECK(mentions(compat, "is NVIDIA driver 580.65.06, newer than the kernel module's 535.104.05 "
                         "(/proc/driver/nvidia/version): CUDA forward compatibility (cuda-compat)"));

  CHECK(findings(scan("--root " + shell_quote(fixtures_dir() + "/cuda/drivers-root") + " /opt/bin/app13"),
                 "driver-library-mismatch").empty());  // no libcuda in the graph
  CHECK(findings(with_driver("/opt/driver --driver 470.82.01"), "driver-library-mismatch").empty());  // --driver states it
}

TEST_CASE("cuda-driver-too-old: CUDA 10.2 and 11.0 runtimes are held to their own driver-table rows") {
  // 10.2's only row is 10.2.89: the runtime, known as 10.2, is checked against it
  json old = scan_app("app10_2", "--driver 418.39");
  auto too_old = findings(old, "cuda-driver-too-old");
  REQUIRE(too_old.size() == 1);
  CHECK(too_old[0]["severity"] == "error");
  CHECK(mentions(too_old, "older than CUDA 10.2 needs (>= 440.33)"));
  CHECK(findings(old, "matrix-no-data").empty());
  CHECK(findings(scan_app("app10_2", "--driver 440.33"), "cuda-driver-too-old").empty());

  // CUDA 11.0's own driver (450.51.06) is older than CUDA 11's minor-version-compatibility floor
  // (450.80.02) and runs it: the floor of 11.0 is its first row's driver, 11.0.1 RC's
  json own = scan_app("app11_0", "--driver 450.51.06");
  CHECK(findings(own, "cuda-driver-too-old").empty());
  CHECK(findings(own, "matrix-no-data").empty());
  auto older = findings(scan_app("app11_0", "--driver 440.33"), "cuda-driver-too-old");
  REQUIRE(older.size() == 1);
  CHECK(older[0]["severity"] == "error");
  CHECK(mentions(older, "older than CUDA 11.0 needs (>= 450.36.06), required by"));
}

TEST_CASE("matrix-no-data: a cuDNN or CUDA release the data has no row for is named, with the check not made") {
  auto notices = [](const json& report) { return findings(report, "matrix-no-data"); };
  auto matrix = load_embedded_matrix();
  REQUIRE(matrix);
  std::string cudnn_ends = matrix->newest_cudnn_release()->str();  // the fixtures are newer: 9.30, CUDA 14.0
  REQUIRE(Version{{9, 30}} > *matrix->newest_cudnn_release());
  std::string cuda_ends = matrix->newest_toolkit()->toolkit.str();
  json future = scan_app("app9_future");
  auto cudnn = notices(future);
  REQUIRE(cudnn.size() == 1);
  CHECK(cudnn[0]["severity"] == "info");
  CHECK(mentions(cudnn, "the cuDNN in /opt/cudnn9-future/lib is 9.30.0 (CUDNN_MAJOR/MINOR/PATCHLEVEL in "
                        "/opt/cudnn9-future/include/cudnn_version.h), newer than depscan's cuDNN support-matrix data, "
                        "which ends at " + cudnn_ends));
  CHECK(mentions(cudnn, "which CUDA versions its builds support was not checked"));
  CHECK(problem_codes(future).empty());

  auto gap = notices(scan_app("app9_gap"));  // 9.6.1, no release: between the 9.6.0 and 9.7.0 rows
  REQUIRE(gap.size() == 1);
  CHECK(mentions(gap, "the cuDNN in /opt/cudnn9-gap/lib is 9.6.1 (file name libcudnn_graph.so.9.6.1), one of the "
                      "releases depscan's cuDNN support-matrix data has no row for"));

  auto cuda14 = notices(scan_app("app14", "--driver 600.10.01"));
  REQUIRE(cuda14.size() == 1);
  CHECK(mentions(cuda14, "libcudart.so.14 (/opt/cuda14/libcudart.so.14.0.50) is CUDA 14.0, which depscan's driver table "
                         "has no row for (it ends at CUDA " + cuda_ends + ")"));
  CHECK(mentions(cuda14, "the driver it needs was not checked"));
  CHECK(notices(scan_app("app14")).empty());  // no driver known: no driver check to miss

  json minor = scan_app("app13_9", "--driver 580.65.06");
  CHECK(mentions(notices(minor), "is CUDA 13.9, which depscan's driver table has no row for"));
  CHECK(mentions(notices(minor), "only CUDA 13's minor-version-compatibility floor (>= 580.65.06) was checked"));
  CHECK(findings(minor, "cuda-driver-too-old").empty());
  CHECK(findings(scan_app("app13_9", "--driver 470.82.01"), "cuda-driver-too-old").size() == 1);  // the floor still holds

  CHECK(notices(scan_app("app9")).empty());
  CHECK(notices(scan_app("app13", "--driver 590.48.01")).empty());
}

TEST_CASE("stub-driver: libcuda.so.1 found in the toolkit's stubs directory") {
  json r = scan_app("app_stub");
  auto found = findings(r, "stub-driver");
  REQUIRE(found.size() == 1);
  CHECK(found[0]["severity"] == "error");
  CHECK(mentions(found, "/opt/stubs/libcuda.so"));
  CHECK(mentions(found, "CUDA driver is a stub library"));
  CHECK(found[0]["fix"].get<std::string>().find("remove /opt/stubs") != std::string::npos);
}

TEST_CASE("stub-driver: the stub copied out of stubs/ is known by its traits (no NEEDED, a tiny .text)") {
  json r = scan_app("app13", "--ld-library-path /opt/copied-stub");
  auto found = findings(r, "stub-driver");
  REQUIRE(found.size() == 1);
  CHECK(mentions(found, "/opt/copied-stub/libcuda.so.1"));
  CHECK(findings(scan_app("app13", "--ld-library-path /opt/driver"), "stub-driver").empty());
}

TEST_CASE("dlopen-library-not-found: TensorFlow-like loading by name, and cuDNN 8 needing libnvrtc.so") {
  json bare = scan_app("tf_app");
  auto missing = findings(bare, "dlopen-library-not-found");
  CHECK(missing.size() == 5);  // cudart, cublas, cublasLt, cufft, cudnn (libcuda.so.1: no driver, not a finding)
  CHECK(mentions(missing, "opens libcudnn.so.8 with dlopen"));
  for (const json& f : missing) CHECK(f["severity"] == "error");

  json with_libs = scan_app("tf_app", "--ld-library-path /opt/cuda12:/opt/cudnn8/lib");
  auto edges = dlopen_edges(with_libs);
  const json* cudart = edge_named(edges, with_libs, "/libtensorflow_framework.so.2", "libcudart.so.12");
  REQUIRE(cudart);
  CHECK((*cudart)["inferred"] == true);
  CHECK(object_path(with_libs, (*cudart)["to"]) == "/opt/cuda12/libcudart.so.12");
  auto still_missing = findings(with_libs, "dlopen-library-not-found");
  CHECK(mentions(still_missing, "opens libcufft.so.11"));
  CHECK(mentions(still_missing, "libcudnn_cnn_infer.so.8 opens libnvrtc.so with dlopen"));  // E2
  // no DT_NEEDED on any CUDA library at all
  for (const json& e : with_libs["edges"]) {
    std::string from = object_path(with_libs, e["from"]);
    if (e["kind"] == "needed" && (from.ends_with("tf_app") || from.ends_with("libtensorflow_framework.so.2")))
      CHECK(e["name"].get<std::string>().find("cu") == std::string::npos);
  }
}

TEST_CASE("a bare library name beside a versioned one the object NEEDs is a fallback, not a dlopen of its own") {
  json r = scan("--root " + shell_quote(sysroot()) + " /opt/cuda12/libfallback.so");
  auto edges = dlopen_edges(r);
  CHECK(edge_named(edges, r, "/libfallback.so", "libnvrtc.so") == nullptr);
  CHECK(findings(r, "dlopen-library-not-found").empty());
  // without the NEEDED entry the bare name is opened on its own (cuDNN 8's libnvrtc.so)
  json cudnn8 = scan_app("tf_app", "--ld-library-path /opt/cuda12:/opt/cudnn8/lib");
  CHECK(mentions(findings(cudnn8, "dlopen-library-not-found"), "libcudnn_cnn_infer.so.8 opens libnvrtc.so with dlopen"));
}

TEST_CASE("cuda-major-mismatch: CUDA 12 runtime with CUDA 13 cuBLAS") {
  json r = scan_app("app_mixed_majors");
  auto found = findings(r, "cuda-major-mismatch");
  REQUIRE(found.size() == 1);
  CHECK(mentions(found, "libcudart.so.12 (/opt/cuda12/libcudart.so.12) is CUDA 12"));
  CHECK(mentions(found, "libcublas.so.13 (/opt/cuda13/libcublas.so.13) is CUDA 13"));
  CHECK_FALSE(found[0]["fix"].get<std::string>().empty());
}

TEST_CASE("an ONNX Runtime module opens its provider bridge and its providers; a provider's missing library only warns") {
  const std::string module = "/opt/ort/onnxruntime_pybind11_state.cpython-311-x86_64-linux-gnu.so";
  json r = scan("--root " + shell_quote(sysroot()) + " " + module);
  auto edges = dlopen_edges(r);
  for (const char* provider : {"shared", "cuda", "tensorrt"}) {
    std::string name = std::string("libonnxruntime_providers_") + provider + ".so";
    const json* e = edge_named(edges, r, "onnxruntime_pybind11_state.cpython-311-x86_64-linux-gnu.so", name);
    REQUIRE_MESSAGE(e, name);
    CHECK(object_path(r, (*e)["to"]) == "/opt/ort/" + name);
    CHECK((*e)["inferred"] == false);
  }
  // TensorRT is not installed: the TensorRT provider cannot load, and the module works without it.
  auto missing = findings(r, "library-not-found");
  REQUIRE(missing.size() == 1);
  CHECK(missing[0]["severity"] == "warning");
  CHECK(mentions(missing, "libnvinfer.so.10"));
  CHECK(mentions(missing, "which it does without (optional)"));
  // The CUDA provider names the CUDA 12 runtime too, and has the CUDA 13 one: not a finding.
  CHECK(edge_named(edges, r, "/libonnxruntime_providers_cuda.so", "libcudart.so.12") != nullptr);
  // It opens cuDNN by a name its code builds (the matrix's row), and this root has none: the CUDA
  // provider, not the module, fails.
  const json* cudnn = edge_named(edges, r, "/libonnxruntime_providers_cuda.so", "libcudnn.so.9");
  REQUIRE(cudnn);
  CHECK((*cudnn)["inferred"] == false);
  auto unopened = findings(r, "dlopen-library-not-found");
  REQUIRE(unopened.size() == 1);
  CHECK(unopened[0]["severity"] == "warning");
  CHECK(mentions(unopened, "/opt/ort/libonnxruntime_providers_cuda.so opens libcudnn.so.9 with dlopen"));
  CHECK(mentions(unopened, "which it does without (optional)"));
  CHECK(problem_codes(r) == std::set<std::string>{"library-not-found", "dlopen-library-not-found"});
  // A provider that links cuDNN 8 (ONNX Runtime 1.18) opens no cuDNN 9: its NEEDED libcudnn.so.8 finds cuDNN.
  json linked = scan("--root " + shell_quote(sysroot()) + " /opt/ort-linked/libonnxruntime_providers_cuda.so");
  CHECK(edge_named(dlopen_edges(linked), linked, "/libonnxruntime_providers_cuda.so", "libcudnn.so.9") == nullptr);
  CHECK(findings(linked, "library-not-found").empty());
  CHECK_FALSE(mentions(findings(linked, "dlopen-library-not-found"), "libcudnn.so.9"));

  // Scanned on its own, the provider cannot load: that stays an error.
  json provider = scan("--root " + shell_quote(sysroot()) + " /opt/ort/libonnxruntime_providers_tensorrt.so");
  auto own = findings(provider, "library-not-found");
  REQUIRE(own.size() == 1);
  CHECK(own[0]["severity"] == "error");
}

TEST_CASE("--no-dlopen leaves the run-time edges out") {
  json r = scan_app("app9", "--no-dlopen");
  CHECK(dlopen_edges(r).empty());
}

TEST_CASE("depscan with no file audits the CUDA stack the system would load") {
  std::string root = shell_quote(fixtures_dir() + "/cuda/proc-root");
  json r = scan("--root " + root + " --ld-library-path /opt/cuda13");
  REQUIRE(r.contains("cuda_stack"));
  const json& stack = r["cuda_stack"];
  CHECK(stack["program"] == "/usr/bin/true");
  CHECK(stack["driver_version"] == "535.104.05");
  CHECK(stack["driver_version_source"] == "/proc/driver/nvidia/version");
  bool cudart = false, driver_missing = false;
  for (const json& o : stack["opened"]) {
    if (o["name"] == "libcudart.so.13") {
      cudart = o["found"] == true && o["path"] == "/opt/cuda13/libcudart.so.13.1.80" && o["how"] == "LD_LIBRARY_PATH";
      CHECK(o["version"].get<std::string>().starts_with("13.1.80"));
    }
    if (o["name"] == "libcuda.so.1") driver_missing = o["found"] == false;
  }
  CHECK(cudart);
  CHECK(driver_missing);
  CHECK(stack["consistent"] == false);  // a 535 driver cannot run CUDA 13
  CHECK(findings(r, "cuda-driver-too-old").size() == 1);

  auto text = run_command(depscan_bin() + " --root " + root + " --ld-library-path /opt/cuda13 --driver 590.48.01");
  CHECK(text.output.find("CUDA stack") != std::string::npos);
  CHECK(text.output.find("/usr/bin/true (stands for a program that loads the CUDA libraries by name)\n") !=
        std::string::npos);
  CHECK(text.output.find("libcudart.so.13") != std::string::npos);
  CHECK(text.output.find("driver version: 590.48.01 (--driver)") != std::string::npos);
  CHECK(text.output.find("verdict: consistent: no conflict with the runtime found; driver 590.48.01 (--driver) is "
                         "new enough; libcuda.so.1 itself is not in the analysed system") != std::string::npos);
  CHECK(stack["driver_found"] == false);
}

namespace {

// proc-root without the programs named: the directory audit's roots (the CUDA libraries) remain.
void copy_proc_root_without(const TempDir& root, const std::vector<std::string>& programs) {
  std::filesystem::copy(fixtures_dir() + "/cuda/proc-root", root.path(),
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  for (const std::string& program : programs) REQUIRE(std::filesystem::remove(root.path() / program));
}

}  // namespace

TEST_CASE("a distroless root (no shell, no coreutils) is audited through its dynamic loader") {
  TempDir root("cuda-distroless");
  copy_proc_root_without(root, {"usr/bin/true"});
  json r = scan("--root " + shell_quote(root.str()) + " --ld-library-path /opt/cuda13");
  REQUIRE(r.contains("cuda_stack"));
  CHECK(r["cuda_stack"]["program"] == "/lib64/ld-linux-x86-64.so.2");
  bool cudart = false;
  for (const json& o : r["cuda_stack"]["opened"])
    if (o["name"] == "libcudart.so.13") cudart = o["path"] == "/opt/cuda13/libcudart.so.13.1.80";
  CHECK(cudart);
}

TEST_CASE("a --root audit counts the cuDNN sub-libraries the audit program reaches, not those of other roots") {
  json r = scan("--root " + shell_quote(sysroot()));  // cuDNN lives off the default search path there
  REQUIRE(r.contains("cuda_stack"));
  size_t cudnn_objects = 0;
  for (const json& o : r["objects"])
    if (o["path"].get<std::string>().find("libcudnn_") != std::string::npos) ++cudnn_objects;
  CHECK(cudnn_objects > 0);
  CHECK(r["cuda_stack"]["cudnn_sublibraries"] == 0);
  auto text = run_command(depscan_bin() + " --root " + shell_quote(sysroot()));
  CHECK(text.output.find("cuDNN sub-libraries reached") == std::string::npos);
}

TEST_CASE("a root with no program to stand for an application: the summary says so and judges no audited file") {
  TempDir root("cuda-no-program");
  copy_proc_root_without(root, {"usr/bin/true", "lib64/ld-linux-x86-64.so.2"});
  json r = scan("--root " + shell_quote(root.str()) + " --ld-library-path /opt/cuda13");
  REQUIRE(r.contains("cuda_stack"));
  CHECK(r["cuda_stack"]["program"].is_null());
  CHECK(r["cuda_stack"]["opened"].empty());
  CHECK(r["cuda_stack"]["verdict"] == "nothing to judge: no program to model the loader with");
  auto text = run_command(depscan_bin() + " --root " + shell_quote(root.str()) + " --ld-library-path /opt/cuda13");
  std::string summary = text.output.substr(std::min(text.output.find("\nCUDA stack"), text.output.size()));
  CHECK_MESSAGE(summary.find("no program in the analysed system to model the loader with") != std::string::npos, summary);
  CHECK_MESSAGE(summary.find("libcuda.so.1") == std::string::npos, summary);
  CHECK(text.output.find("stands for a program") == std::string::npos);
}

TEST_CASE("a driver the analysed system has installed, with libcuda.so.1 off the search path, is not consistent") {
  // proc-root with a driver new enough for CUDA 13 in /proc and /sys, and no libcuda.so.1 anywhere.
  TempDir root("cuda-driver-off-path");
  std::filesystem::copy(fixtures_dir() + "/cuda/proc-root", root.path(),
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  std::ofstream(root.path() / "proc/driver/nvidia/version")
      << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  590.48.01  Mon Dec  1 00:00:00 UTC 2025\n";
  std::ofstream(root.path() / "sys/module/nvidia/version") << "590.48.01\n";
  auto text = run_command(depscan_bin() + " --root " + shell_quote(root.str()) + " --ld-library-path /opt/cuda13");
  CHECK_MESSAGE(text.output.find("verdict: driver 590.48.01 is installed (/proc/driver/nvidia/version) but libcuda.so.1 "
                                 "is not on the search path") != std::string::npos, text.output);
}

TEST_CASE("depscan with no file on this machine finds the real cuDNN 9.19 and calls it consistent") {
  if (!present_or_skip(std::filesystem::exists("/usr/local/cuda/lib64/libcudnn.so.9"), "/usr/local/cuda/lib64/libcudnn.so.9")) return;
  json r = scan("--ld-library-path /usr/local/cuda/lib64");
  REQUIRE(r.contains("cuda_stack"));
  bool cudnn = false;
  for (const json& o : r["cuda_stack"]["opened"])
    if (o["name"] == "libcudnn.so.9" && o["found"] == true)
      cudnn = o["version"].get<std::string>().starts_with(installed_cudnn().dotted);
  CHECK(cudnn);
  size_t sublibraries = 0;  // libcudnn_*.so.9 beside the shim, as the directory lists them
  for (const auto& entry : std::filesystem::directory_iterator("/usr/local/cuda/lib64")) {
    std::string name = entry.path().filename().string();
    sublibraries += name.starts_with("libcudnn_") && name.ends_with(".so.9");
  }
  REQUIRE(sublibraries > 0);
  CHECK(r["cuda_stack"]["cudnn_sublibraries"] == sublibraries);
  CHECK(r["cuda_stack"]["consistent"] == true);
  // Whether this machine has a driver decides the verdict's second half; no machine here has one.
  std::string verdict = r["cuda_stack"]["verdict"];
  if (r["cuda_stack"]["driver_found"] == true) {
    CHECK(verdict == "consistent: the driver, runtime and cuDNN found fit together");
  } else {
    CHECK(verdict.starts_with("consistent: the runtime and cuDNN found fit together; no NVIDIA driver (libcuda.so.1) "
                              "was found, so nothing runs on a GPU here"));
  }
}
