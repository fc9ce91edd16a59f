// depscan --verify against the fake CUDA driver and fake cuDNN 8/9 (fixtures/fakecuda), the
// real cuDNN 9.19 in /usr/local/cuda and the toolkit's real stub libcuda.so.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "loader/child_process.h"
#include "loader/cudnn_api.h"
#include "loader/probe_events.h"
#include "loader/verify_internal.h"
#include "installed_cudnn.h"
#include "support.h"
#include "toolchains.h"

namespace fs = std::filesystem;
using depscan::test::run_command;
using depscan::test::shell_quote;
using nlohmann::json;

namespace {

std::string fake(const std::string& sub) { return depscan::test::fixtures_dir() + "/fakecuda/" + sub; }
std::string fake_path9() { return fake("driver") + ":" + fake("cudnn9"); }
std::string fake_path8() { return fake("driver") + ":" + fake("cudnn8"); }

struct Verify {
  int exit_code = -1;
  json doc;
  json runtime;
  std::string output;

  const json* step(const std::string& name) const {
    for (const json& s : runtime["steps"])
      if (s["step"] == name) return &s;
    return nullptr;
  }
  std::string status(const std::string& name) const { auto* s = step(name); return s ? (*s)["status"].get<std::string>() : "absent"; }
  std::string message(const std::string& name) const { auto* s = step(name); return s ? (*s)["message"].get<std::string>() : ""; }
  std::string verdict(const std::string& subject) const {
    for (const json& v : runtime["verdicts"])
      if (v["subject"] == subject) return v["verdict"];
    return "absent";
  }
  bool has_finding(const std::string& code) const { return finding(code) != nullptr; }
  std::string finding_fix(const std::string& code) const { auto* f = finding(code); return f ? (*f)["fix"].get<std::string>() : ""; }
  const json* finding(const std::string& code) const {
    for (const json& f : doc["findings"])
      if (f["code"] == code) return &f;
    return nullptr;
  }
};

// Runs depscan --verify --format json with a clean LD_LIBRARY_PATH and the given environment.
Verify verify(const std::string& env, const std::string& args) {
  std::string cmd = "env -u LD_LIBRARY_PATH -u LD_PRELOAD " + env + " " + shell_quote(depscan::test::depscan_bin()) +
                    " --verify --format json --verify-step-timeout 5 --verify-timeout 60 " + args + " 2>/dev/null";
  auto r = run_command(cmd);
  Verify v;
  v.exit_code = r.exit_code;
  v.output = r.output;
  v.doc = json::parse(r.output, nullptr, false);
  if (!v.doc.is_discarded() && v.doc.contains("runtime")) v.runtime = v.doc["runtime"];
  INFO(cmd);
  INFO(r.output);
  REQUIRE(v.runtime.is_object());
  return v;
}

// The text report's last line.
std::string closing_line(const std::string& args) {
  auto r = run_command("env -u LD_LIBRARY_PATH -u LD_PRELOAD " + shell_quote(depscan::test::depscan_bin()) +
                       " --verify --no-color " + args + " 2>/dev/null");
  std::string out = r.output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.substr(out.rfind('\n') + 1);
}

Verify verify_fake9(const std::string& env, const std::string& extra = "") {
  return verify(env, "--ld-library-path " + shell_quote(fake_path9()) + " " + extra + " " + shell_quote(fake("apps/app9")));
}
Verify verify_fake8(const std::string& env) {
  return verify(env, "--ld-library-path " + shell_quote(fake_path8()) + " " + shell_quote(fake("apps/app8")));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// --verify of app9 with the fake driver in FAKECUDA_MODE=mode; returns the parent's peak RSS in KiB.
long verify_fake9_peak_kib(const std::string& mode, Verify& out) {
  depscan::test::TempDir tmp("verify-rss");
  std::string rss_file = tmp.str() + "/rss";
  out = verify_fake9("FAKECUDA_MODE=" + mode + " /usr/bin/time -o " + shell_quote(rss_file) + " -f %M");
  return std::atol(read_file(rss_file).c_str());
}

std::string canonical(const std::string& p) { return fs::canonical(p).string(); }

}  // namespace

TEST_CASE("fake driver and cuDNN 9: every step runs and every prediction is confirmed") {
  depscan::test::TempDir tmp("verify-ok");
  std::string log = tmp.str() + "/fake.log";
  Verify v = verify_fake9("FAKECUDA_LOG=" + shell_quote(log));
  INFO(v.output);
  CHECK(v.exit_code != 3);
  CHECK(v.runtime["status"] == "passed");
  for (const char* step : {"cudnn.load", "cudnn.version", "cudnn.sublibraries", "driver.load", "driver.init",
                           "driver.devices", "kernel.device0", "cudnn.convolution.device0"})
    CHECK_MESSAGE(v.status(step) == "ok", step);
  CHECK(v.step("cudnn.load")->at("data")["path"] == fake("cudnn9") + "/libcudnn.so.9");
  CHECK(v.step("cudnn.version")->at("data")["version"] == 91900);
  CHECK(v.step("kernel.device0")->at("data")["mismatches"] == 0);
  CHECK(v.step("kernel.device0")->at("data")["elements"] == 65536);
  CHECK(v.step("cudnn.convolution.device0")->at("data")["mismatches"] == 0);
  CHECK(v.verdict("cuDNN library") == "confirmed");
  CHECK(v.verdict("cuDNN version") == "confirmed");
  CHECK(v.verdict("driver library") == "confirmed");
  CHECK(v.verdict("driver version for the runtime") == "confirmed");
  CHECK(v.verdict("objects loaded by the probe") == "confirmed");
  std::string last = closing_line("--ld-library-path " + shell_quote(fake_path9()) + " " + shell_quote(fake("apps/app9")));
  bool gpu_ran = last.starts_with("runtime verification passed: ") && last.find("GPU steps did not run") == std::string::npos;
  CHECK_MESSAGE(gpu_ran, last);
  for (const char* sub : {"graph", "ops", "cnn", "adv", "engines_precompiled", "engines_runtime_compiled", "heuristic"})
    CHECK_MESSAGE(v.verdict(std::string("cuDNN sub-library libcudnn_") + sub + ".so.9") == "confirmed", sub);
  // The launch protocol really ran: the fake driver saw the grid, the block and n, and every
  // allocation and the module were released before the context was.
  std::string trace = read_file(log);
  CHECK(trace.find("launch grid=256 block=256 n=65536") != std::string::npos);
  CHECK(trace.find("release live=0 module=0") != std::string::npos);
  // Only the probe child ever loads CUDA or cuDNN.
  std::istringstream lines(trace);
  int loads = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("loaded ", 0) == 0) {
      ++loads;
      CHECK_MESSAGE(line.find(" __probe ") != std::string::npos, line);
    }
  CHECK(loads == 1 + 7 + 1);
}

// The shim's directory is on --ld-library-path as well as in its RUNPATH ($ORIGIN): under
// AddressSanitizer the probe's dlopen calls come from the sanitizer's interceptor, so glibc applies
// the interceptor's RUNPATH instead of the fake shim's.
TEST_CASE("cuDNN's shim given as the input is the cuDNN verified, loaded by its path") {
  std::string shim = fake("cudnn9") + "/libcudnn.so.9";
  Verify v = verify("", "--ld-library-path " + shell_quote(fake("driver") + ":" + fake("cudnn9")) + " " + shell_quote(shim));
  INFO(v.output);
  CHECK(v.runtime["status"] == "passed");
  CHECK(v.runtime["prediction"]["cudnn_names"] == json::array({shim}));
  CHECK(v.step("cudnn.load")->at("data")["name"] == shim);
  CHECK(v.status("cudnn.sublibraries") == "ok");
  CHECK(v.verdict("cuDNN library") == "confirmed");
  CHECK(v.runtime["prediction"]["cudnn"]["how"] == "direct_path");
  CHECK(v.verdict("cuDNN version") == "confirmed");
  CHECK(v.verdict("cuDNN sub-library libcudnn_graph.so.9") == "confirmed");

  // by a file name other than its SONAME (the install copied, the shim as libcudnn.so.9.19.0): the
  // major comes from the SONAME, the release from the file name
  depscan::test::TempDir tmp("verify-shim-name");
  for (const auto& entry : fs::directory_iterator(fake("cudnn9")))
    if (entry.path().filename() != "libcudnn.so.9") fs::copy_file(entry.path(), tmp.path() / entry.path().filename());
  fs::copy_file(shim, tmp.path() / "libcudnn.so.9.19.0");
  Verify named = verify("", "--ld-library-path " + shell_quote(fake("driver") + ":" + tmp.str()) + " " +
                                shell_quote(tmp.str() + "/libcudnn.so.9.19.0"));
  INFO(named.output);
  CHECK(named.runtime["status"] == "passed");
  CHECK(named.verdict("cuDNN version") == "confirmed");
  CHECK(named.runtime["prediction"]["cudnn_version"] == "9.19.0");
  CHECK(named.verdict("cuDNN sub-library libcudnn_graph.so.9") == "confirmed");
}

TEST_CASE("a cuDNN name whose major no int holds is no prediction, not a crash") {
  Verify v = verify("", "--ld-library-path " + shell_quote(fake("driver")) + " " + shell_quote(fake("apps/app_huge_major")));
  INFO(v.output);
  CHECK(v.exit_code != 134);
  CHECK(v.runtime["prediction"]["cudnn_names"].empty());
  CHECK(v.verdict("cuDNN library") == "not checked");
}

TEST_CASE("fake cuDNN 8: the 8.x version checks and status numbering") {
  Verify v = verify_fake8("");
  INFO(v.output);
  CHECK(v.exit_code != 3);
  CHECK(v.status("cudnn.sublibraries") == "ok");
  CHECK(v.step("cudnn.sublibraries")->at("data")["checks"].size() == 6);
  CHECK(v.step("cudnn.version")->at("data")["version_text"] == "8.9.7");
  CHECK(v.step("cudnn.version")->at("data")["max_device"].is_null());
  CHECK(v.status("cudnn.convolution.device0") == "ok");
  CHECK(v.verdict("cuDNN sub-library libcudnn_cnn_infer.so.8") == "confirmed");
  Verify bad = verify_fake8("FAKECUDNN_MODE=sublib-mismatch");
  CHECK(bad.exit_code == 3);
  CHECK(bad.status("cudnn.sublibraries") == "failed");
  CHECK(bad.message("cudnn.sublibraries").find("cudnnOpsInferVersionCheck() = CUDNN_STATUS_VERSION_MISMATCH (14)") != std::string::npos);
}

TEST_CASE("fake driver behaviours end in the right step status, finding and exit code") {
  struct Case { const char* env; const char* step; const char* status; const char* text; const char* finding; bool fails; };
  const Case cases[] = {
      {"FAKECUDA_MODE=no-device", "driver.init", "not run", "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected", "verify-gpu-not-run", false},
      {"FAKECUDA_MODE=zero-devices", "driver.devices", "not run", "cuDeviceGetCount() = 0", "verify-gpu-not-run", false},
      {"FAKECUDA_MODE=stub", "driver.init", "not run", "CUDA_ERROR_STUB_LIBRARY (34): CUDA driver is a stub library", "verify-gpu-not-run", false},
      {"FAKECUDA_MODE=old-driver", "driver.init", "ok", "CUDA 12.2", "verify-contradiction", true},
      {"FAKECUDA_MODE=launch-failure", "kernel.device0", "failed", "CUDA_ERROR_LAUNCH_FAILED (719): unspecified launch failure", "verify-step-failed", true},
      {"FAKECUDA_MODE=wrong-results", "kernel.device0", "failed", "wrong results: 1 of 65536 elements differ", "verify-step-failed", true},
      {"FAKECUDA_MODE=crash", "kernel.device0", "failed", "crashed with SIGSEGV (signal 11) in step kernel.device0 while loading or calling libcuda.so.1", "verify-crash", true},
      {"FAKECUDA_MODE=hang", "kernel.device0", "failed", "timed out in step kernel.device0", "verify-timeout", true},
      {"FAKECUDNN_MODE=sublib-mismatch", "cudnn.sublibraries", "failed", "cudnnOpsVersionCheck() = CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH (1002)", "verify-step-failed", true},
      {"FAKECUDNN_MODE=conv-wrong", "cudnn.convolution.device0", "failed", "wrong results: 1 of 108 elements differ", "verify-step-failed", true},
      {"FAKECUDNN_MODE=arch-mismatch", "cudnn.convolution.device0", "failed", "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH (3007)", "verify-step-failed", true},
      // cuDNN 9's own reason, first line only
      {"FAKECUDNN_MODE=exec-no-image", "cudnn.convolution.device0", "failed", "(5000): CUDNN_STATUS_UNKNOWN (fake); cudnnGetLastErrorString: CUDNN_STATUS_EXECUTION_FAILED; Reason: cudaLaunchKernel: no kernel image is available for execution on the device", "verify-step-failed", true},
      {"FAKECUDNN_MODE=conv-nan", "cudnn.convolution.device0", "failed", "wrong results: 1 of 108 elements differ from the CPU reference (first: y[0] = nan", "verify-step-failed", true},
      {"CUDA_DISABLE_PTX_JIT=1", "kernel.device0", "not run", "CUDA_ERROR_JIT_COMPILATION_DISABLED (223)", "verify-gpu-not-run", false},
      {"FAKECUDA_MODE=jit-missing", "kernel.device0", "not run", "CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221)", "verify-gpu-not-run", false},
      {"FAKECUDA_MODE=jit-missing-lazy", "kernel.device0", "not run", "cuModuleGetFunction returned CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221)", "verify-gpu-not-run", false},
      {"FAKECUDA_SM=20", "kernel.device0", "failed", "CUDA_ERROR_NO_BINARY_FOR_GPU (209): fake driver error; the JIT's log: ptxas fatal   : SM version specified by .target is higher", "verify-step-failed", true},
  };
  for (const Case& c : cases) {
    Verify v = verify_fake9(c.env);
    INFO(c.env);
    INFO(v.output);
    CHECK(v.status(c.step) == c.status);
    CHECK_MESSAGE(v.message(c.step).find(c.text) != std::string::npos, v.message(c.step));
    CHECK(v.has_finding(c.finding));
    if (c.fails) CHECK(v.exit_code == 3);
    else CHECK(v.exit_code != 3);
    CHECK((v.runtime["status"] == "failed") == c.fails);
  }
}

TEST_CASE("after an error that outlives its step, the GPU steps it rules out are not run, not blamed on cuDNN") {
  struct Case {
    const char* env;
    const char* left;   // the step and the error it left
    const char* scope;  // cuda.h's words for it
    const char* kernel0; const char* cudnn0; const char* kernel1; const char* cudnn1;
  };
  const Case cases[] = {
      {"FAKECUDA_MODE=launch-failure", "kernel.device0 left CUDA_ERROR_LAUNCH_FAILED (719)", "terminated and relaunched",
       "failed", "not run", "not run", "not run"},
      {"FAKECUDA_MODE=device-assert", "kernel.device0 left CUDA_ERROR_ASSERT (710)", "device 0's context cannot be used anymore",
       "failed", "not run", "ok", "ok"},
      // no context to ask: the retain's own error is one that rules out the process
      {"FAKECUDA_MODE=retain-launch-failure", "cuDevicePrimaryCtxRetain in kernel.device0 returned CUDA_ERROR_LAUNCH_FAILED (719)",
       "terminated and relaunched", "failed", "not run", "not run", "not run"},
      {"FAKECUDA_MODE=retain-assert", "cuDevicePrimaryCtxRetain in kernel.device0 returned CUDA_ERROR_ASSERT (710)",
       "device 0's context cannot be used anymore", "failed", "not run", "ok", "ok"},
      // the kernel steps run before cuDNN's: device 1's ran before the fault
      {"FAKECUDNN_MODE=conv-illegal-address", "cudnn.convolution.device0 left CUDA_ERROR_ILLEGAL_ADDRESS (700)",
       "terminated and relaunched", "ok", "failed", "ok", "not run"},
  };
  for (const Case& c : cases) {
    Verify v = verify_fake9(std::string(c.env) + " FAKECUDA_DEVICES=2");
    INFO(c.env);
    INFO(v.output);
    CHECK(v.status("kernel.device0") == c.kernel0);
    CHECK(v.status("cudnn.convolution.device0") == c.cudnn0);
    CHECK(v.status("kernel.device1") == c.kernel1);
    CHECK(v.status("cudnn.convolution.device1") == c.cudnn1);
    for (const char* step : {"kernel.device0", "cudnn.convolution.device0", "kernel.device1", "cudnn.convolution.device1"}) {
      if (v.status(step) != "not run") continue;
      CAPTURE(step);
      std::string why = v.message(step);
      CHECK_MESSAGE(why.find(c.left) != std::string::npos, why);
      CHECK_MESSAGE(why.find(c.scope) != std::string::npos, why);
      const json& data = v.step(step)->at("data");
      CHECK(data["after_sticky_error"] == true);
      CHECK(data["device"] == (std::string(step).back() == '1' ? 1 : 0));
    }
    CHECK_FALSE(v.has_finding("verify-gpu-not-run"));  // no advice about the PTX JIT for a skipped kernel
    CHECK(v.exit_code == 3);
  }
  // the kernel's own fault is the GPU's: the fix says where to look; a fault in cuDNN's step is cuDNN's call
  Verify kernel = verify_fake9("FAKECUDA_MODE=launch-failure");
  CHECK(kernel.step("kernel.device0")->at("data")["sticky_error"] == 719);
  CHECK(kernel.finding_fix("verify-step-failed").find("Xid errors") != std::string::npos);
  Verify retain = verify_fake9("FAKECUDA_MODE=retain-launch-failure");
  CHECK(retain.step("kernel.device0")->at("data")["sticky_error_call"] == "cuDevicePrimaryCtxRetain");
  CHECK(retain.finding_fix("verify-step-failed").starts_with(
      "the driver could not make a context on this GPU (cuDevicePrimaryCtxRetain), so the GPU or the driver is at fault"));
  Verify cudnn = verify_fake9("FAKECUDNN_MODE=conv-illegal-address");
  CHECK(cudnn.step("cudnn.convolution.device0")->at("data")["sticky_error"] == 700);
  // the heuristic offered two algorithms: after the first faulted, the second was not tried
  CHECK(cudnn.step("cudnn.convolution.device0")->at("data")["algorithms_failed"].size() == 1);
  CHECK(cudnn.message("cudnn.convolution.device0").find("(not tried after it: 1 of the 2 algorithms offered)") != std::string::npos);
  CHECK(cudnn.message("cudnn.convolution.device0").ends_with(
      "; then cuCtxSynchronize returned CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered"));
  CHECK(cudnn.finding_fix("verify-step-failed").find("calls into") != std::string::npos);
  // a failure that leaves nothing behind leaves the cuDNN step to run
  Verify wrong = verify_fake9("FAKECUDA_MODE=wrong-results");
  INFO(wrong.output);
  CHECK(wrong.status("kernel.device0") == "failed");
  CHECK_FALSE(wrong.step("kernel.device0")->at("data").contains("sticky_error"));
  CHECK(wrong.status("cudnn.convolution.device0") == "ok");
}

TEST_CASE("an algorithm the heuristic offers that fails to run is passed over for the next, as frameworks do") {
  Verify v = verify_fake9("FAKECUDNN_MODE=first-algo-fails");
  INFO(v.output);
  CHECK(v.status("cudnn.convolution.device0") == "ok");
  CHECK(v.message("cudnn.convolution.device0").find("(algorithm 1)") != std::string::npos);
  const json& data = v.step("cudnn.convolution.device0")->at("data");
  REQUIRE(data["algorithms_failed"].size() == 1);
  CHECK(data["algorithms_failed"][0]["algorithm"] == 0);
  CHECK(data["algorithms_failed"][0]["error"].get<std::string>().find("CUDNN_STATUS_EXECUTION_FAILED (5000)") != std::string::npos);
  CHECK_FALSE(data.contains("status"));  // the step ran: no failed call is left in its record
  CHECK(v.exit_code == 0);
}

TEST_CASE("the probe does not outlive depscan: killing depscan during a hung step ends the probe too") {
  // The probe runs in a process group of its own, so a Ctrl-C or a CI job's timeout reaches depscan only.
  std::string depscan = "env -u LD_LIBRARY_PATH -u LD_PRELOAD FAKECUDA_MODE=hang " + shell_quote(depscan::test::depscan_bin()) +
                        " --verify --verify-step-timeout 60 --verify-timeout 120 --ld-library-path " +
                        shell_quote(fake_path9()) + " " + shell_quote(fake("apps/app9"));
  std::string script =
      depscan + " >/dev/null 2>&1 & parent=$!; child=; "
      "for i in $(seq 200); do child=$(cat /proc/$parent/task/$parent/children 2>/dev/null | cut -d' ' -f1); "
      "[ -n \"$child\" ] && break; sleep 0.05; done; "
      "[ -n \"$child\" ] || { echo no-probe; kill -KILL $parent; exit 0; }; "
      "sleep 1; kill -KILL $parent; wait $parent 2>/dev/null; "
      "for i in $(seq 100); do state=$(sed 's/.*) //' /proc/$child/stat 2>/dev/null | cut -c1); "
      "[ -z \"$state\" ] || [ \"$state\" = Z ] && { echo gone; exit 0; }; sleep 0.05; done; "
      "echo alive; kill -KILL $child";
  auto result = run_command("sh -c " + shell_quote(script));
  INFO(result.output);
  CHECK(result.output.find("gone") != std::string::npos);
}

TEST_CASE("the probe's kernel runs on Kepler and Maxwell GPUs and on drivers from before CUDA 11") {
  for (const char* sm : {"35", "50"}) {  // GPUs CUDA 11 and 12 applications still run on
    Verify v = verify_fake9(std::string("FAKECUDA_SM=") + sm);
    INFO(v.output);
    CHECK(v.status("kernel.device0") == "ok");
    CHECK(v.step("kernel.device0")->at("data")["ptx"] == ".version 6.0 .target sm_30");
  }
  // R440 exports cuDevicePrimaryCtxRelease without _v2
  Verify cuda10 = verify("", "--ld-library-path " + shell_quote(fake("driver-cuda10") + ":" + fake("cudnn9")) + " " +
                                 shell_quote(fake("apps/app9")));
  INFO(cuda10.output);
  CHECK(cuda10.status("driver.load") == "ok");
  CHECK(cuda10.status("kernel.device0") == "ok");
  CHECK(cuda10.runtime["status"] == "passed");
  CHECK(cuda10.runtime["child"]["signal"].is_null());
}

TEST_CASE("a driver that lacks an entry point fails its load step, and no later step calls through it") {
  Verify v = verify("", "--ld-library-path " + shell_quote(fake("driver-partial") + ":" + fake("cudnn9")) + " " +
                            shell_quote(fake("apps/app9")));
  INFO(v.output);
  CHECK(v.status("driver.load") == "failed");
  CHECK(v.message("driver.load").find("does not export cuLaunchKernel") != std::string::npos);
  CHECK(v.status("driver.init") == "not run");
  CHECK(v.message("driver.init").find("does not export cuLaunchKernel") != std::string::npos);
  CHECK(v.runtime["child"]["signal"].is_null());
  CHECK_FALSE(v.has_finding("verify-crash"));
  CHECK(v.exit_code == 3);
}

TEST_CASE("cuDNN 7: one library, and its convolution runs without the FMA math mode it does not have") {
  Verify v = verify("", "--ld-library-path " + shell_quote(fake("driver") + ":" + fake("cudnn7")) + " " +
                            shell_quote(fake("apps/app7")));
  INFO(v.output);
  CHECK(v.step("cudnn.version")->at("data")["version"] == 7605);
  CHECK(v.status("cudnn.convolution.device0") == "ok");
  CHECK(v.step("cudnn.convolution.device0")->at("data")["mismatches"] == 0);
}

TEST_CASE("a 256 MiB line and a malformed event on the event descriptor change nothing") {
  // The fake driver's cuInit writes them to descriptor 3, as a library loaded into the probe
  // could: the parent drops the long line without keeping it, ignores the event whose members
  // have other types, and reads the probe's own events after them.
  Verify quiet, noisy;
  long quiet_kib = verify_fake9_peak_kib("ok", quiet);
  long noisy_kib = verify_fake9_peak_kib("noisy-events", noisy);
  INFO(noisy.output);
  CHECK(noisy.runtime["status"] == "passed");
  for (const char* step : {"driver.init", "driver.devices", "kernel.device0", "cudnn.convolution.device0"})
    CHECK_MESSAGE(noisy.status(step) == "ok", step);
  CHECK(noisy.status("noise") == "absent");
  CHECK(noisy.exit_code != 3);
  REQUIRE(quiet_kib > 0);
  // The same run without the noise sets the baseline (sanitizer builds use several times more).
  CHECK_MESSAGE(noisy_kib < quiet_kib + 64 * 1024,
                "peak RSS " << noisy_kib << " KiB against " << quiet_kib << " KiB: the long line was kept");
}

TEST_CASE("a library that floods the event descriptor with well-formed events is reported, and they are not kept") {
  Verify quiet, flood;
  long quiet_kib = verify_fake9_peak_kib("ok", quiet);
  long flood_kib = verify_fake9_peak_kib("event-flood", flood);
  INFO(flood.output);
  CHECK(flood.exit_code == 3);
  CHECK(flood.runtime["child"]["lines_ignored"].get<long>() >= 400000 - 1024);
  bool reported = false;
  for (const json& f : flood.doc["findings"])
    reported = reported || (f["code"] == "verify-failed" &&
                            f["message"].get<std::string>().find("more than 1024 events") != std::string::npos);
  CHECK(reported);
  CHECK_FALSE(flood.has_finding("verify-crash"));  // the flood's last start event is not a step of the probe
  CHECK(flood.status("flood") == "absent");
  CHECK(quiet.runtime["child"]["lines_ignored"] == 0);
  REQUIRE(quiet_kib > 0);
  CHECK_MESSAGE(flood_kib < quiet_kib + 32 * 1024,
                "peak RSS " << flood_kib << " KiB against " << quiet_kib << " KiB: the flood was kept");
}

TEST_CASE("a crash while cuDNN is being loaded names the step and the file the loader was opening") {
  Verify v = verify_fake9("FAKECUDNN_MODE=crash-on-load");
  INFO(v.output);
  CHECK(v.exit_code == 3);
  CHECK(v.status("cudnn.load") == "failed");
  CHECK(v.message("cudnn.load").find("crashed with SIGSEGV (signal 11) in step cudnn.load while loading or calling libcudnn.so.9") != std::string::npos);
  CHECK(v.has_finding("verify-crash"));
  CHECK(v.runtime["child"]["signal"] == 11);
}

TEST_CASE("a cuDNN 9 without libcudnn_graph aborts in cudnnGetVersion, after the driver and the kernel are on record") {
  // the real 9.19 shim prints "Invalid handle. Cannot load symbol cudnnGetVersion" and aborts
  Verify v = verify_fake9("FAKECUDNN_MODE=missing-graph");
  INFO(v.output);
  CHECK(v.exit_code == 3);
  for (const char* step : {"driver.load", "driver.init", "driver.devices", "kernel.device0", "cudnn.load"})
    CHECK_MESSAGE(v.status(step) == "ok", step);
  CHECK(v.status("cudnn.version") == "failed");
  CHECK(v.message("cudnn.version").find("crashed with SIGABRT (signal 6) in step cudnn.version") != std::string::npos);
  CHECK(v.message("cudnn.version").find("(last stderr line: Invalid handle. Cannot load symbol cudnnGetVersion)") !=
        std::string::npos);
  CHECK(v.finding_fix("verify-crash").find("could not load one of its sub-libraries") != std::string::npos);
  CHECK(v.finding_fix("verify-crash").find("libcudnn_graph.so.9") != std::string::npos);

  // a missing libcudnn_cnn: its version check says so and the process goes on
  Verify cnn = verify_fake9("FAKECUDNN_MODE=missing-cnn");
  INFO(cnn.output);
  CHECK(cnn.status("cudnn.version") == "ok");
  CHECK(cnn.status("cudnn.sublibraries") == "failed");
  CHECK(cnn.message("cudnn.sublibraries").find("cudnnCnnVersionCheck() = CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE (3009)") !=
        std::string::npos);
  CHECK_FALSE(cnn.has_finding("verify-crash"));
}

TEST_CASE("a GPU the driver cannot describe is named as the reason the GPU steps did not run") {
  Verify v = verify_fake9("FAKECUDA_MODE=name-fails");
  INFO(v.output);
  CHECK(v.status("driver.devices") == "failed");
  CHECK(v.message("driver.devices").find("device 0: cuDeviceGetName returned CUDA_ERROR_UNKNOWN (999)") != std::string::npos);
  CHECK(v.status("kernel") == "not run");
  CHECK(v.message("kernel") == "not run: device 0: cuDeviceGetName failed");
  CHECK(v.message("cudnn.convolution") == "not run: device 0: cuDeviceGetName failed");
}

TEST_CASE("the overall timeout stops a probe whose steps each stay under the step limit") {
  auto r = run_command("env -u LD_LIBRARY_PATH FAKECUDA_MODE=hang " + shell_quote(depscan::test::depscan_bin()) +
                       " --verify --format json --verify-step-timeout 30 --verify-timeout 2 --ld-library-path " +
                       shell_quote(fake_path9()) + " " + shell_quote(fake("apps/app9")) + " 2>/dev/null");
  json doc = json::parse(r.output, nullptr, false);
  REQUIRE(!doc.is_discarded());
  CHECK(r.exit_code == 3);
  CHECK(doc["runtime"]["child"]["timeout"] == "overall");
  CHECK(doc["runtime"]["child"]["signal"] == 9);
}

TEST_CASE("a depscan started with SIGCHLD ignored still reads the probe's exit status") {
  // An ignored SIGCHLD is inherited across exec; with it the kernel reaps the probe on its own.
  Verify v = verify_fake9("--ignore-signal=CHLD");
  INFO(v.output);
  CHECK(v.runtime["status"] == "passed");
  CHECK(v.runtime["child"]["exit_code"] == 0);
  CHECK(v.exit_code != 3);
}

TEST_CASE("a helper process started by a library the probe loaded does not hold up the probe's end") {
  // libspawner.so's constructor starts `sleep 10` before the probe's main, so the helper holds
  // the event pipe and stderr past the 5 s step limit; the fake driver, loaded later, logs
  // whether a process it started would inherit the event descriptor.
  depscan::test::TempDir tmp("verify-spawner");
  std::string log = tmp.str() + "/fake.log";
  // An AddressSanitizer build of the probe refuses a preload ahead of its runtime unless told not to.
  Verify v = verify_fake9("FAKECUDA_LOG=" + shell_quote(log) + " ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"",
                          "--preload " + shell_quote(depscan::test::fixtures_dir() + "/fakecuda/libspawner.so"));
  INFO(v.output);
  CHECK(v.runtime["status"] == "passed");
  CHECK(v.runtime["child"]["timeout"].is_null());
  CHECK(v.runtime["child"]["exit_code"] == 0);
  CHECK(v.runtime["child"]["ms"].get<double>() < 4000);
  CHECK(v.status("cudnn.convolution.device0") == "ok");
  CHECK(read_file(log).find("descriptor 3: close-on-exec") != std::string::npos);
}

TEST_CASE("a driver older than the runtime and a GPU without kernel images contradict the prediction") {
  Verify old = verify_fake9("FAKECUDA_MODE=old-driver");
  CHECK(old.verdict("driver version for the runtime") == "contradicted");
  Verify arch = verify_fake9("FAKECUDNN_MODE=arch-mismatch");
  CHECK(arch.verdict("kernel image for sm_86") == "contradicted");
  // an execution failure whose reason, from cudnnGetLastErrorString, is a missing kernel image
  Verify no_image = verify_fake9("FAKECUDNN_MODE=exec-no-image");
  CHECK(no_image.verdict("kernel image for sm_86") == "contradicted");
  CHECK(no_image.message("cudnn.convolution.device0").find("second line") == std::string::npos);
}

TEST_CASE("sub-libraries loaded from another place than predicted are a contradiction") {
  Verify v = verify_fake9("FAKECUDNN_MODE=sublib-elsewhere FAKECUDNN_SUBLIB_DIR=" + shell_quote(fake("elsewhere9")));
  INFO(v.output);
  CHECK(v.exit_code == 3);
  CHECK(v.verdict("cuDNN sub-library libcudnn_ops.so.9") == "contradicted");
  CHECK(v.verdict("cuDNN library") == "confirmed");
  CHECK(v.has_finding("verify-contradiction"));
}

TEST_CASE("cudnnCreate failing with each documented status is reported with cuDNN's own name") {
  const std::pair<int, const char*> statuses9[] = {{1001, "CUDNN_STATUS_NOT_INITIALIZED"}, {2000, "CUDNN_STATUS_BAD_PARAM"},
      {3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"}, {4000, "CUDNN_STATUS_INTERNAL_ERROR"},
      {4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"}, {1005, "CUDNN_STATUS_LICENSE_ERROR"}};
  for (auto [status, name] : statuses9) {
    Verify v = verify_fake9("FAKECUDNN_CREATE_STATUS=" + std::to_string(status));
    std::string expected = "cudnnCreate returned " + std::string(name) + " (" + std::to_string(status) + ")";
    INFO(expected);
    CHECK(v.exit_code == 3);
    CHECK(v.message("cudnn.convolution.device0").find(expected) != std::string::npos);
  }
  const std::pair<int, const char*> statuses8[] = {{1, "CUDNN_STATUS_NOT_INITIALIZED"}, {2, "CUDNN_STATUS_ALLOC_FAILED"},
      {3, "CUDNN_STATUS_BAD_PARAM"}, {4, "CUDNN_STATUS_INTERNAL_ERROR"}, {6, "CUDNN_STATUS_ARCH_MISMATCH"},
      {10, "CUDNN_STATUS_LICENSE_ERROR"}};
  for (auto [status, name] : statuses8) {
    Verify v = verify_fake8("FAKECUDNN_CREATE_STATUS=" + std::to_string(status));
    std::string expected = "cudnnCreate returned " + std::string(name) + " (" + std::to_string(status) + ")";
    INFO(expected);
    CHECK(v.exit_code == 3);
    CHECK(v.message("cudnn.convolution.device0").find(expected) != std::string::npos);
  }
}

TEST_CASE("an application's DT_RPATH is carried to the probe, which loads the predicted file") {
  Verify v = verify("", "--ld-library-path " + shell_quote(fake("driver")) + " " + shell_quote(fake("apps/app9_rpath")));
  INFO(v.output);
  CHECK(v.runtime["prediction"]["cudnn"]["how"] == "rpath");
  CHECK(v.runtime["environment"][0].get<std::string>().rfind("LD_LIBRARY_PATH=" + canonical(fake("cudnn9")), 0) == 0);
  CHECK(v.verdict("cuDNN library") == "confirmed");
  CHECK(v.exit_code != 3);
}

TEST_CASE("--verify refuses --root: a live run cannot happen inside another file system") {
  auto r = run_command(shell_quote(depscan::test::depscan_bin()) + " --verify --root / /bin/true 2>&1");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("cannot apply to --root") != std::string::npos);
}

TEST_CASE("a --verify limit past 1e6 seconds or not a number is refused, not an immediate timeout") {
  // 1e10 s is past what a steady_clock deadline holds; NaN passes CLI11's range checks.
  auto run = [](const std::string& options, const std::string& stderr_to) {
    return run_command("env -u LD_LIBRARY_PATH -u LD_PRELOAD " + shell_quote(depscan::test::depscan_bin()) +
                       " --verify --format json " + options + " --ld-library-path " + shell_quote(fake_path9()) + " " +
                       shell_quote(fake("apps/app9")) + " 2>" + stderr_to);
  };
  for (const char* option : {"--verify-timeout 1e10", "--verify-step-timeout 1e10", "--verify-timeout nan"}) {
    auto r = run(option, "&1");
    INFO(option);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("not a number of seconds above 0 and at most 1000000") != std::string::npos);
  }
  auto longest = run("--verify-timeout 1e6 --verify-step-timeout 1e6", "/dev/null");
  INFO(longest.output);
  json doc = json::parse(longest.output, nullptr, false);
  REQUIRE(!doc.is_discarded());
  CHECK(doc["runtime"]["status"] == "passed");
}

TEST_CASE("run_child takes limits past what a steady_clock deadline holds as a century") {
  depscan::ChildLimits limits;
  limits.step_timeout = limits.total_timeout = limits.kill_grace = std::chrono::milliseconds::max();
  depscan::ChildRun run = depscan::run_child("/bin/true", {"true"}, {}, limits);
  CHECK(run.spawn_error.empty());
  CHECK(run.timeout.empty());
  CHECK(run.exited);
  CHECK(run.exit_code == 0);
}

TEST_CASE("real cuDNN 9.19 on this machine: host steps run, GPU steps do not, nothing crashes") {
  if (!depscan::test::present_or_skip(fs::exists("/usr/local/cuda/lib64/libcudnn.so.9"), "/usr/local/cuda/lib64/libcudnn.so.9")) return;
  if (fs::exists("/proc/driver/nvidia/version")) {
    MESSAGE("skipped: this machine has an NVIDIA driver");
    return;
  }
  Verify v = verify("", "");
  INFO(v.output);
  CHECK(v.exit_code != 3);
  CHECK(v.runtime["status"] == "passed");
  CHECK(v.status("cudnn.load") == "ok");
  CHECK(v.step("cudnn.load")->at("data")["path"].get<std::string>().find("libcudnn.so.9") != std::string::npos);
  CHECK(canonical(v.step("cudnn.load")->at("data")["path"]) == canonical("/usr/local/cuda/lib64/libcudnn.so.9"));
  auto header = depscan::test::installed_cudnn();
  REQUIRE(header.version >= 90000);
  CHECK(v.step("cudnn.version")->at("data")["version"] == header.version);
  CHECK(v.step("cudnn.version")->at("data")["max_device"] == header.max_device);
  // the CUDA it was built with: 13.1 for the cu13 9.19 build (matrix/data/cudnn.json); its major is
  // the one its sub-libraries open (libnvrtc.so.13)
  CHECK(v.step("cudnn.version")->at("data")["cudart"].get<int>() / 1000 == 13);
  CHECK(v.status("cudnn.sublibraries") == "ok");
  CHECK(v.verdict("cuDNN library") == "confirmed");
  CHECK(v.verdict("cuDNN version") == "confirmed");
  for (const char* sub : {"graph", "ops", "cnn", "adv"})
    CHECK_MESSAGE(v.verdict(std::string("cuDNN sub-library libcudnn_") + sub + ".so.9") == "confirmed", sub);
  CHECK(v.verdict("objects loaded by the probe") == "confirmed");
  CHECK(v.status("driver.load") == "not run");
  CHECK(v.message("driver.load").find("no NVIDIA driver") != std::string::npos);

  // the shim itself as the input: its version predicted from the headers beside it
  Verify shim = verify("", "/usr/local/cuda/lib64/libcudnn.so.9");
  INFO(shim.output);
  CHECK(shim.runtime["status"] == "passed");
  CHECK(shim.verdict("cuDNN library") == "confirmed");
  CHECK(shim.verdict("cuDNN version") == "confirmed");
  CHECK(shim.runtime["prediction"]["cudnn_version"] == header.dotted);
  CHECK(shim.verdict("CUDA runtime of cuDNN") == "confirmed");  // its sub-libraries open CUDA 13's libraries
  for (const json& row : shim.runtime["verdicts"])
    if (row["subject"] == "cuDNN version")
      CHECK(row["predicted"].get<std::string>().starts_with(header.dotted + " (CUDNN_MAJOR/MINOR/PATCHLEVEL in "));
  CHECK(v.status("kernel") == "not run");
  CHECK(v.status("cudnn.convolution") == "not run");
  CHECK(v.has_finding("verify-gpu-not-run"));
  CHECK(v.verdict("driver version for the runtime") == "not checked");
  std::string last = closing_line("");
  CHECK_MESSAGE(last.find("not checked; the GPU steps did not run here, so loading is proven, running on a GPU is not") !=
                    std::string::npos, last);
}

TEST_CASE("the toolkit's real stub libcuda.so on LD_LIBRARY_PATH is recognised") {
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!depscan::test::present_or_skip(fs::exists(stub), stub)) return;
  depscan::test::TempDir tmp("verify-stub");
  fs::create_symlink(stub, tmp.path() / "libcuda.so.1");
  Verify v = verify("", "--ld-library-path " + shell_quote(tmp.str()));
  INFO(v.output);
  CHECK(v.status("driver.load") == "ok");
  CHECK(v.step("driver.load")->at("data")["stub"] == true);
  CHECK(v.status("driver.init") == "not run");
  CHECK(v.step("driver.init")->at("data")["cuInit"] == 34);
  CHECK(v.message("driver.init").find("no NVIDIA driver") != std::string::npos);
  CHECK(v.message("driver.init").find("CUDA_ERROR_STUB_LIBRARY (34") != std::string::npos);
  CHECK(v.has_finding("stub-driver"));
  CHECK(v.verdict("driver library") == "confirmed");
  CHECK(v.exit_code != 3);
  // with no file, the static half is the CUDA stack audit, as without --verify: its error stands
  bool static_error = false;
  for (const json& f : v.doc["findings"])
    static_error = static_error || (f["code"] == "stub-driver" && f["severity"] == "error");
  CHECK(static_error);
  CHECK(v.doc.contains("cuda_stack"));
  CHECK(v.exit_code == 1);
}

TEST_CASE("the event protocol round-trips, and a line that is not an event is ignored") {
  depscan::StepEvent e;
  e.is_start = false;
  e.step = "driver.init";
  e.library = "libcuda.so.1";
  e.status = depscan::StepStatus::NotRun;
  e.message = "no NVIDIA driver: \"quoted\"\n";
  e.data = {{"cuInit", 34}};
  e.loaded = {"/x/libcuda.so.1"};
  auto back = depscan::decode_event(depscan::encode_event(e));
  REQUIRE(back);
  CHECK(back->step == e.step);
  CHECK(back->status == e.status);
  CHECK(back->message == e.message);
  CHECK(back->data["cuInit"] == 34);
  CHECK(back->loaded == e.loaded);
  CHECK(!depscan::decode_event("garbage"));
  CHECK(!depscan::decode_event(R"({"event":"end","step":"x","status":"exploded"})"));
}

TEST_CASE("a child's event with members of other types is read without throwing") {
  // Found by the fuzzer: json::value() throws when the member exists with another type, and
  // the libraries the child loads can write anything to any descriptor.
  auto odd = depscan::decode_event(R"({"event":"end","step":"x","library":5,"status":"ok","message":["m"]})");
  REQUIRE(odd);
  CHECK(odd->library.empty());
  CHECK(odd->message.empty());
  CHECK(!depscan::decode_event(R"({"event":"end","step":"x","status":7})"));
  auto numbered = depscan::decode_event(R"({"event":1,"step":"x","status":"ok"})");  // not "start": an end
  REQUIRE(numbered);
  CHECK_FALSE(numbered->is_start);

  depscan::StepRecord s;
  s.data = {{"stub", "yes"}, {"path", 3}, {"status", "6"}, {"name", "libcuda.so.1"}, {"sm", "sm_90"}};
  CHECK_FALSE(depscan::data_flag(&s, "stub"));
  CHECK(depscan::data_string(&s, "path").empty());
  CHECK_FALSE(depscan::data_number(&s, "status"));
  CHECK(depscan::data_string(&s, "name") == "libcuda.so.1");
  s.data = {{"stub", true}, {"status", 6}};
  CHECK(depscan::data_flag(&s, "stub"));
  CHECK(depscan::data_number(&s, "status") == 6);
  CHECK_FALSE(depscan::data_flag(nullptr, "stub"));
}

TEST_CASE("cuDNN version encodings and status names differ between 8.x and 9.x") {
  CHECK(depscan::cudnn::version_text(91900) == "9.19.0");
  CHECK(depscan::cudnn::version_text(8902) == "8.9.2");
  CHECK(depscan::cudnn::major_of(91900) == 9);
  CHECK(depscan::cudnn::major_of(7605) == 7);
  CHECK(depscan::cudnn::status_name(9, 1001) == "CUDNN_STATUS_NOT_INITIALIZED");
  CHECK(depscan::cudnn::status_name(8, 1) == "CUDNN_STATUS_NOT_INITIALIZED");
  CHECK(depscan::cudnn::status_name(8, 14) == "CUDNN_STATUS_VERSION_MISMATCH");
  CHECK(depscan::cudnn::status_name(9, 14) == "");
}
