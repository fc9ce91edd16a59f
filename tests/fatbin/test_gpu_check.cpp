// --gpu verdicts (reference/fatbin.md part 2) through the whole scan, on the nvcc fixtures and
// the real cuDNN / cuBLAS libraries, and the GPU name / PTX / driver tables they rely on.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "analyzer/check/gpu_targets.h"
#include "analyzer/scan/scan.h"
#include "matrix/matrix.h"
#include "fatbin_support.h"
#include "toolchains.h"

using namespace depscan;
using namespace depscan::test;

namespace {

const std::set<std::string> kGpuCodes = {"no-kernel-image", "ptx-jit-only", "ptx-needs-newer-driver", "fatbin-error",
                                         "unknown-gpu"};

// The GPU-code findings about `path` when scanned for one GPU (and optionally a driver).
std::vector<Finding> gpu_findings(const std::string& path, const std::string& gpu,
                                  std::optional<std::string> driver = std::nullopt) {
  ScanOptions options;
  options.inputs = {std::filesystem::absolute(path).string()};
  options.target.gpus = {gpu};
  options.target.driver = driver;
  ScanReport report = run_scan(options);
  std::vector<Finding> out;
  for (const Finding& f : report.result.findings) {
    if (!kGpuCodes.count(f.code)) continue;
    if (f.object && report.result.graph.objects[*f.object].path != options.inputs[0]) continue;
    out.push_back(f);
  }
  return out;
}

// The single verdict code ("" when the code runs natively).
std::string verdict(const std::string& path, const std::string& gpu, std::optional<std::string> driver = std::nullopt) {
  auto findings = gpu_findings(path, gpu, driver);
  if (findings.empty()) return "";
  CHECK(findings.size() == 1);
  return findings.front().code;
}

std::string lib(const char* name) { return std::string(kCudaLib) + "/" + name; }


const Matrix& matrix() {
  static const Matrix m = load_embedded_matrix().value();
  return m;
}

std::optional<ComputeCapability> compute_capability_of(std::string_view gpu) {
  return depscan::compute_capability_of(matrix(), gpu);
}

std::optional<CudaVersion> cuda_version_of_driver(std::string_view driver) {
  return depscan::cuda_version_of_driver(matrix(), driver);
}

std::string minimum_driver_for(CudaVersion cuda) { return depscan::minimum_driver_for(matrix(), cuda); }

}  // namespace

TEST_CASE("GPU names, capabilities and sm_ numbers resolve to a compute capability") {
  CHECK(compute_capability_of("sm_90") == ComputeCapability{9, 0});
  CHECK(compute_capability_of("sm_90a") == ComputeCapability{9, 0});
  CHECK(compute_capability_of("compute_121") == ComputeCapability{12, 1});
  CHECK(compute_capability_of("8.6") == ComputeCapability{8, 6});
  CHECK(compute_capability_of("100") == ComputeCapability{10, 0});
  CHECK(compute_capability_of("H100") == ComputeCapability{9, 0});
  CHECK(compute_capability_of("NVIDIA H100 80GB HBM3") == ComputeCapability{9, 0});
  CHECK(compute_capability_of("NVIDIA A100-SXM4-80GB") == ComputeCapability{8, 0});
  CHECK(compute_capability_of("NVIDIA GeForce RTX 4090") == ComputeCapability{8, 9});
  CHECK(compute_capability_of("NVIDIA GeForce RTX 3060 Ti") == ComputeCapability{8, 6});
  CHECK(compute_capability_of("RTX 6000 Ada") == ComputeCapability{8, 9});
  CHECK(compute_capability_of("Tesla T4") == ComputeCapability{7, 5});
  CHECK(compute_capability_of("L40S") == ComputeCapability{8, 9});
  CHECK(compute_capability_of("GB200") == ComputeCapability{10, 0});
  CHECK(compute_capability_of("B300") == ComputeCapability{10, 3});
  CHECK(compute_capability_of("GeForce RTX 5090") == ComputeCapability{12, 0});
  CHECK(!compute_capability_of("potato"));
  CHECK(!compute_capability_of("sm_"));
  CHECK(!compute_capability_of(""));
}

TEST_CASE("PTX ISA and driver versions map to CUDA versions") {
  CHECK(cuda_version_for_ptx_isa(9, 1) == CudaVersion{13, 1});
  CHECK(cuda_version_for_ptx_isa(9, 0) == CudaVersion{13, 0});
  CHECK(cuda_version_for_ptx_isa(8, 6) == CudaVersion{12, 7});
  CHECK(!cuda_version_for_ptx_isa(1, 4));
  for (int minor = 0; minor <= 8; ++minor) CHECK(cuda_version_for_ptx_isa(7, minor) == CudaVersion{11, minor});
  for (int minor = 0; minor <= 5; ++minor) CHECK(cuda_version_for_ptx_isa(8, minor) == CudaVersion{12, minor});
  CHECK(cuda_version_of_driver("580.65.06") == CudaVersion{13, 0});
  CHECK(cuda_version_of_driver("580.65.05") == CudaVersion{12, 9});
  CHECK(cuda_version_of_driver("590.44.01") == CudaVersion{13, 1});
  CHECK(cuda_version_of_driver("550.54.14") == CudaVersion{12, 4});
  CHECK(cuda_version_of_driver("13.0") == CudaVersion{13, 0});
  CHECK(!cuda_version_of_driver("banana"));
  CHECK(minimum_driver_for({13, 1}) == "590.44.01");
  CHECK(minimum_driver_for({12, 7}) == "570.26");
}

TEST_CASE("SASS rules: same major, minor <= device; a exact; f like plain") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  std::string sm75 = fatbin_fixture("sm75_exe");
  CHECK(verdict(sm75, "7.5") == "");
  CHECK(verdict(sm75, "sm_80") == "no-kernel-image");   // other major: never
  CHECK(verdict(sm75, "7.0") == "no-kernel-image");     // older minor: never
  std::string b = fatbin_fixture("libsm80_ptx90.so");
  CHECK(verdict(b, "8.0") == "");
  CHECK(verdict(b, "8.6") == "");                       // sm_80 on 8.6
  CHECK(verdict(b, "9.0") == "");
  CHECK(verdict(b, "10.0") == "ptx-jit-only");          // compute_90 JITs for 10.0
  CHECK(verdict(b, "7.5") == "no-kernel-image");        // PTX never runs on an older device
  std::string a90 = fatbin_fixture("libsm90a.so");
  CHECK(verdict(a90, "H100") == "");
  CHECK(verdict(a90, "10.0") == "no-kernel-image");
  std::string af = fatbin_fixture("libsm100f_120a.so");
  CHECK(verdict(af, "10.0") == "");
  CHECK(verdict(af, "10.3") == "");                     // sm_100f on 10.3
  CHECK(verdict(af, "12.0") == "");                     // sm_120a exactly
  CHECK(verdict(af, "12.1") == "no-kernel-image");      // sm_120a and compute_120a: 12.0 only
  CHECK(verdict(af, "11.0") == "no-kernel-image");
}

TEST_CASE("PTX ISA against the driver the scan finds itself, when --driver is not given") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  TempDir root("gpu-driver-proc");
  std::filesystem::create_directories(root.path() / "proc/driver/nvidia");
  std::filesystem::create_directories(root.path() / "opt/lib");
  std::ofstream(root.path() / "proc/driver/nvidia/version")
      << "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  (test)\n";
  std::filesystem::copy_file(fatbin_fixture("libsm80_ptx90.so"), root.path() / "opt/lib/libsm80_ptx90.so");
  ScanOptions options;
  options.root = root.str();
  options.inputs = {"/opt/lib/libsm80_ptx90.so"};
  options.target.gpus = {"10.0"};
  std::vector<Finding> found;
  for (const Finding& f : run_scan(options).result.findings)
    if (kGpuCodes.count(f.code)) found.push_back(f);
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "ptx-needs-newer-driver");  // the CUDA 12.9 driver cannot JIT PTX ISA 9.0
  CHECK(found[0].message.find("driver 575.57.08 from /proc/driver/nvidia/version (CUDA 12.9) is too old") != std::string::npos);
}

TEST_CASE("a PTX ISA newer than the PTX table needs a CUDA newer than the table's newest") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  std::string b = fatbin_fixture("libsm80_ptx92.so");  // the PTX entry says ISA 9.2; the table ends at 9.1 (CUDA 13.1)
  CHECK(verdict(b, "10.0", "590.44.01") == "ptx-needs-newer-driver");  // a CUDA 13.1 driver
  CHECK(verdict(b, "10.0", "13.3") == "ptx-jit-only");                 // newer than the table: assumed able
  auto findings = gpu_findings(b, "10.0", "13.3");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].message.find("PTX ISA 9.2: newer than depscan's PTX table, needs a driver for a CUDA newer than 13.1") !=
        std::string::npos);
}

TEST_CASE("PTX ISA against the driver") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  std::string b = fatbin_fixture("libsm80_ptx90.so");
  CHECK(verdict(b, "10.0", "580.65.06") == "ptx-jit-only");           // CUDA 13.0 driver: ISA 9.0 fine
  CHECK(verdict(b, "10.0", "575.57.08") == "ptx-needs-newer-driver");  // CUDA 12.9 driver: 222
  CHECK(verdict(b, "9.0", "575.57.08") == "");                         // SASS needs no JIT
  auto findings = gpu_findings(b, "10.0", "570.26");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].severity == Severity::Warning);
  CHECK(findings[0].message.find("222") != std::string::npos);
  CHECK(findings[0].fix.find("580.65.06") != std::string::npos);
}

TEST_CASE("applications: each kernel module is judged; nvcc's dlink container is not one") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  std::string two = fatbin_fixture("two_modules_exe");  // kernel.cu for sm_80, other.cu for sm_90
  auto findings = gpu_findings(two, "9.0");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].code == "no-kernel-image");
  CHECK(findings[0].message.find("1 of its 2 kernel modules") != std::string::npos);
  CHECK(verdict(two, "8.0") == "no-kernel-image");      // the sm_90 module has nothing for 8.0
  // the dlink container (sm_80 + sm_90, no kernels) must not fail a single-module program
  CHECK(verdict(fatbin_fixture("libsm80_ptx90_zstd_all.so"), "10.0") == "ptx-jit-only");
  CHECK(verdict(fatbin_fixture("libsm80_ptx90_noshdr.so"), "10.0") == "ptx-jit-only");
}

TEST_CASE("-rdc: PTX only in __nv_relfatbin") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  std::string rdc = fatbin_fixture("rdc_sm86_exe");
  CHECK(verdict(rdc, "8.6") == "");
  CHECK(verdict(rdc, "8.9") == "");
  auto findings = gpu_findings(rdc, "9.0");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].code == "ptx-jit-only");
  CHECK(findings[0].message.find("JIT possible only via pre-link PTX") != std::string::npos);
  CHECK(verdict(rdc, "7.5") == "no-kernel-image");
}

TEST_CASE("vendor libraries are judged on the union of their containers") {
  std::string ops = lib("libcudnn_ops.so.9");
  if (!present_or_skip(std::filesystem::exists(ops), ops)) return;
  CHECK(verdict(ops, "11.0") == "no-kernel-image");  // Thor: no sm_110 and compute_121 > 11.0
  CHECK(verdict(ops, "7.0") == "no-kernel-image");
  CHECK(verdict(ops, "H100") == "");                 // sm_90a
  CHECK(verdict(ops, "8.6") == "");                  // sm_80
  CHECK(verdict(ops, "10.3") == "");                 // sm_100f
  CHECK(verdict(ops, "12.1") == "");                 // sm_121
  auto thor = gpu_findings(ops, "11.0");
  REQUIRE(thor.size() == 1);
  CHECK(thor[0].severity == Severity::Error);
  ReferenceListing ref = reference_listing(ops);  // an independent walk of the file's fatbins
  REQUIRE(ref.ok);
  CHECK(thor[0].message.find("union of its " + std::to_string(ref.containers) + " containers") != std::string::npos);
  CHECK(thor[0].message.find("209") != std::string::npos);
  std::string lt = lib("libcublasLt.so.13");
  if (!present_or_skip(std::filesystem::exists(lt), lt)) return;
  CHECK(verdict(lt, "8.9") == "");
  CHECK(verdict(lt, "11.0") == "ptx-jit-only");      // no sm_110; compute_75 JIT-compiles for 11.0
  CHECK(verdict(lt, "11.0", "575.57.08") == "ptx-needs-newer-driver");  // ISA 9.0 needs CUDA 13.0
}

TEST_CASE("depscan --gpu on the command line") {
  std::string ops = lib("libcudnn_ops.so.9");
  if (!present_or_skip(std::filesystem::exists(ops), ops)) return;
  ReferenceListing ref = reference_listing(ops);  // an independent walk of the file's fatbins
  REQUIRE(ref.ok);
  REQUIRE_FALSE(ref.sass.empty());
  auto thor = run_command(depscan_bin() + " --format json --gpu 11.0 " + shell_quote(ops));
  CHECK(thor.exit_code == 1);
  auto doc = nlohmann::json::parse(thor.output, nullptr, false);
  REQUIRE(!doc.is_discarded());
  bool found = false;
  for (const auto& f : doc["findings"]) found = found || f["code"] == "no-kernel-image";
  CHECK(found);
  bool listed = false;
  for (const auto& o : doc["objects"])
    if (o["path"] == ops) {
      REQUIRE(o.contains("cuda_code"));
      listed = true;
      CHECK(o["cuda_code"]["containers"] == ref.containers);
      CHECK(o["cuda_code"]["entries"] == ref.entries);
      std::set<std::string> isa;
      for (const auto& v : o["cuda_code"]["ptx_isa"]) isa.insert(v.get<std::string>());
      CHECK(isa == ref.ptx_isa);
    }
  CHECK(listed);
  auto h100 = run_command(depscan_bin() + " --gpu H100 --gpu 8.6 " + shell_quote(ops) + " 2>&1");
  CHECK(h100.output.find("no-kernel-image") == std::string::npos);
  auto verbose = run_command(depscan_bin() + " -v --gpu H100 " + shell_quote(ops) + " 2>&1");
  size_t gpu_at = verbose.output.find("{GPU: SASS ");
  REQUIRE(gpu_at != std::string::npos);
  gpu_at += std::string("{GPU: SASS ").size();  // the root's own line comes first
  std::istringstream sass_words(verbose.output.substr(gpu_at, verbose.output.find_first_of(",}", gpu_at) - gpu_at));
  std::set<std::string> sass{std::istream_iterator<std::string>(sass_words), std::istream_iterator<std::string>()};
  CHECK(sass == ref.sass);
  auto bad = run_command(depscan_bin() + " --gpu potato " + shell_quote(ops) + " 2>&1");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("unknown GPU: potato") != std::string::npos);
}

TEST_CASE("GPU code is read only when asked for: --gpu, --gpu-code or -v") {
  if (!present_or_skip(std::filesystem::exists(lib("libcudnn_ops.so.9")), lib("libcudnn_ops.so.9"))) return;
  std::string ops = shell_quote(lib("libcudnn_ops.so.9"));
  auto has_cuda_code = [&](const std::string& flags) {
    auto run = run_command(depscan_bin() + " --format json --no-dlopen " + flags + " " + ops);
    auto doc = nlohmann::json::parse(run.output, nullptr, false);
    REQUIRE_FALSE(doc.is_discarded());
    for (const auto& o : doc["objects"])
      if (o.contains("cuda_code")) return true;
    return false;
  };
  CHECK_FALSE(has_cuda_code(""));
  CHECK(has_cuda_code("--gpu-code"));
  CHECK(has_cuda_code("--gpu 9.0"));
  auto text_lists_code = [&](const std::string& flags) {  // the tree shows what was read, without -v too
    return run_command(depscan_bin() + " --no-dlopen " + flags + " " + ops).output.find("{GPU: ") != std::string::npos;
  };
  CHECK_FALSE(text_lists_code(""));
  CHECK(text_lists_code("--gpu-code"));
  CHECK(text_lists_code("--gpu 9.0"));
  CHECK(text_lists_code("-v"));
}
