// x86 objects that name the ISA levels they need (fixtures/isalevel). The loader of this machine is
// the truth for whatever this CPU lacks: bit 4, which no CPU has, always; x86-64-v2..v4 when the
// machine running the tests lacks them. --cpu-level then stands for an older CPU.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ldso/finding_set.h"
#include "support.h"

namespace depscan::test {
namespace {

std::string dir() { return fixtures_dir() + "/isalevel"; }

const std::vector<std::string> kLibraryDirs = {"baseline", "v2", "v3", "v4", "future", "dep", "mislabeled"};
const std::string kRefused = ": CPU ISA level is lower than required";

std::set<std::string> isa_findings(const std::string& args) { return finding_set(args, "cpu-isa-level", 2); }

// The file the loader named when it refused one, as "error <last two path components>".
std::set<std::string> loader_refused(const std::string& command) {
  auto run = run_command("cd " + shell_quote(dir()) + " && " + command + " 2>&1");
  size_t at = run.output.find(kRefused);
  if (at == std::string::npos) {
    CHECK_MESSAGE(run.exit_code == 0, run.output);
    return {};
  }
  CHECK(run.exit_code != 0);
  size_t line = run.output.rfind('\n', at);  // after qemu's warnings, if any
  std::string path = run.output.substr(line == std::string::npos ? 0 : line + 1, at - (line == std::string::npos ? 0 : line + 1));
  size_t slash = path.rfind('/', path.rfind('/') - 1);
  return {"error " + (slash == std::string::npos ? path : path.substr(slash + 1))};
}

std::string in_dir(const std::string& name) { return shell_quote(dir() + "/" + name); }

std::string edge_target(const std::string& args, const std::string& name, const std::string& prefix = "") {
  auto r = run_command(prefix + " " + depscan_bin() + " --format json " + args + " 2>/dev/null");
  auto report = nlohmann::json::parse(r.output, nullptr, false);
  REQUIRE(!report.is_discarded());
  for (const auto& e : report["edges"])
    if (e["name"] == name && !e["to"].is_null()) return report["objects"][e["to"].get<size_t>()]["path"];
  return "";
}

// The highest glibc-hwcaps level the loader finds on a CPU qemu-user emulates ("x86-64" if none).
std::string emulated_level(const std::string& cpu) {
  auto r = run_command("qemu-x86_64 -cpu " + cpu + " /lib64/ld-linux-x86-64.so.2 --help 2>/dev/null");
  for (const char* level : {"x86-64-v4", "x86-64-v3", "x86-64-v2"})
    if (r.output.find(std::string(level) + " (supported") != std::string::npos) return level;
  return "x86-64";
}

}  // namespace

TEST_CASE("CPU ISA level: this machine's loader and depscan agree on every dlopen'd library") {
  for (const std::string& library_dir : kLibraryDirs) {
    INFO(library_dir);
    auto truth = loader_refused("LD_LIBRARY_PATH=" + library_dir + " ./app");
    CHECK(isa_findings("--ld-library-path " + in_dir(library_dir) + " " + in_dir("app")) == truth);
  }
  // Bit 4 is refused on every CPU, the plain builds nowhere.
  CHECK(loader_refused("LD_LIBRARY_PATH=future ./app") == std::set<std::string>{"error future/libcudnn.so.9"});
  CHECK(loader_refused("LD_LIBRARY_PATH=dep ./app") == std::set<std::string>{"error dep/libhelper.so.1"});
  CHECK(loader_refused("LD_LIBRARY_PATH=baseline ./app").empty());
}

TEST_CASE("CPU ISA level: a program, or a library it needs at start-up, that the CPU cannot run stops it") {
  auto future = run_command("cd " + shell_quote(dir()) + " && ./app_future 2>&1");
  CHECK(future.exit_code == 127);
  CHECK(future.output.find("./app_future" + kRefused) == 0);
  CHECK(isa_findings(in_dir("app_future")) == std::set<std::string>{"error isalevel/app_future"});
  CHECK(loader_refused("./app_startup") == std::set<std::string>{"error isalevel/libstartup.so.1"});
  CHECK(isa_findings(in_dir("app_startup")) == std::set<std::string>{"error isalevel/libstartup.so.1"});
  auto r = run_command(depscan_bin() + " --no-color " + in_dir("app_future"));
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("needs unknown ISA bit 4, which this machine's CPU lacks") != std::string::npos);
  CHECK(r.output.find("\"CPU ISA level is lower than required\": the program does not start") != std::string::npos);
}

TEST_CASE("CPU ISA level: --cpu-level stands for an older CPU") {
  auto with = [](const std::string& level, const std::string& library_dir) {
    return isa_findings("--cpu-level " + level + " --ld-library-path " + in_dir(library_dir) + " " + in_dir("app"));
  };
  CHECK(with("x86-64-v2", "v2").empty());
  CHECK(with("x86-64-v2", "v3") == std::set<std::string>{"error v3/libcudnn.so.9"});
  CHECK(with("x86-64-v3", "v4") == std::set<std::string>{"error v4/libcudnn.so.9"});
  CHECK(with("x86-64-v4", "v4").empty());
  CHECK(with("x86-64", "v2") == std::set<std::string>{"error v2/libcudnn.so.9"});
  CHECK(with("x86-64-v4", "future") == std::set<std::string>{"error future/libcudnn.so.9"});
  CHECK(isa_findings("--cpu-level x86-64-v2 " + in_dir("i386/libcudnn.so.9")) ==
        std::set<std::string>{"error i386/libcudnn.so.9"});  // 32-bit processes: the same levels
  // Without x86-64-v2, ld.so does not look in glibc-hwcaps/x86-64-v2 and takes the unmarked copy.
  CHECK(with("x86-64", "mislabeled").empty());
  CHECK(with("x86-64-v2", "mislabeled") == std::set<std::string>{"error x86-64-v2/libcudnn.so.9"});

  auto r = run_command(depscan_bin() + " --no-color --cpu-level x86-64-v2 --ld-library-path " + in_dir("v3") + " " +
                       in_dir("app"));
  CHECK(r.output.find("needs x86-64-v3, which the target CPU (--cpu-level) lacks (it supports up to x86-64-v2)") !=
        std::string::npos);
  CHECK(r.output.find("rebuild it for the CPU (-march=x86-64-v2, no -Wl,-z,x86-64-v3)") != std::string::npos);
  CHECK(run_command(depscan_bin() + " --cpu-level x86-64-v5 " + in_dir("app") + " 2>&1").exit_code == 2);
}

TEST_CASE("CPU ISA level: on older CPUs emulated by qemu-user, the real loader and --cpu-level agree") {
  REQUIRE_MESSAGE(run_command("command -v qemu-x86_64").exit_code == 0, "qemu-user is missing: run scripts/install-deps.sh");
  std::set<std::string> levels;
  for (const std::string cpu : {"qemu64", "Nehalem", "Haswell"}) {
    std::string level = emulated_level(cpu), qemu = "qemu-x86_64 -cpu " + cpu;
    levels.insert(level);
    for (const std::string& library_dir : kLibraryDirs) {
      INFO(cpu << " (" << level << ") with " << library_dir);
      auto truth = loader_refused(qemu + " -E LD_LIBRARY_PATH=" + library_dir + " /lib64/ld-linux-x86-64.so.2 ./app");
      CHECK(isa_findings("--cpu-level " + level + " --ld-library-path " + in_dir(library_dir) + " " + in_dir("app")) == truth);
    }
    auto listed = run_command(qemu + " /lib64/ld-linux-x86-64.so.2 --list " + in_dir("hwcaps/app_hw") + " 2>/dev/null");
    std::string hw = edge_target("--cpu-level " + level + " " + in_dir("hwcaps/app_hw"), "libhw.so.1");
    INFO(listed.output);
    CHECK(listed.output.find(hw + " (") != std::string::npos);
  }
  CHECK(levels.count("x86-64"));  // qemu64 has no x86-64-v2
  CHECK(levels.count("x86-64-v2"));
}

TEST_CASE("CPU ISA level: run on an AVX2 CPU without BMI2 (qemu-user), depscan counts x86-64-v2 as ld.so does") {
  // glibc's x86-64-v3 needs BMI1 and BMI2 too (2.37, and the 2.33-2.36 release branches). With
  // -bmi1 qemu 7.2 faults on glibc's own AVX2 string functions, so only BMI2 is taken away.
  REQUIRE_MESSAGE(run_command("command -v qemu-x86_64").exit_code == 0, "qemu-user is missing: run scripts/install-deps.sh");
  const std::string qemu = "qemu-x86_64 -cpu Haswell,-bmi2";
  REQUIRE(emulated_level("Haswell,-bmi2") == "x86-64-v2");
  for (const std::string& library_dir : kLibraryDirs) {
    INFO(library_dir);
    auto truth = loader_refused(qemu + " -E LD_LIBRARY_PATH=" + library_dir + " /lib64/ld-linux-x86-64.so.2 ./app");
    CHECK(finding_set("--ld-library-path " + in_dir(library_dir) + " " + in_dir("app") + " 2>/dev/null", "cpu-isa-level",
                      2, qemu) == truth);
  }
  CHECK(loader_refused(qemu + " -E LD_LIBRARY_PATH=v3 /lib64/ld-linux-x86-64.so.2 ./app") ==
        std::set<std::string>{"error v3/libcudnn.so.9"});
  auto listed = run_command(qemu + " /lib64/ld-linux-x86-64.so.2 --list " + in_dir("hwcaps/app_hw") + " 2>/dev/null");
  std::string hw = edge_target(in_dir("hwcaps/app_hw"), "libhw.so.1", qemu);
  CHECK(hw == dir() + "/hwcaps/lib/libhw.so.1");
  CHECK(listed.output.find(hw + " (") != std::string::npos);
}

TEST_CASE("CPU ISA level: --cpu-level picks the glibc-hwcaps subdirectory as ld.so's mask does") {
  std::string hw = in_dir("hwcaps/app_hw"), v3 = dir() + "/hwcaps/lib/glibc-hwcaps/x86-64-v3/libhw.so.1";
  std::string plain = dir() + "/hwcaps/lib/libhw.so.1";
  auto loader_takes = [&](const std::string& mask) {
    auto r = run_command("/lib64/ld-linux-x86-64.so.2 --glibc-hwcaps-mask " + mask + " --list " + hw);
    return r.output.find(v3) != std::string::npos ? v3 : r.output.find(plain) != std::string::npos ? plain : "";
  };
  CHECK(edge_target("--cpu-level x86-64-v2 " + hw, "libhw.so.1") == loader_takes("x86-64-v2"));
  CHECK(edge_target("--cpu-level x86-64-v2 " + hw, "libhw.so.1") == plain);
  if (loader_takes("x86-64-v3") == v3)  // this CPU has x86-64-v3
    CHECK(edge_target("--cpu-level x86-64-v3 " + hw, "libhw.so.1") == v3);
  CHECK(isa_findings("--cpu-level x86-64-v3 " + hw).empty());
  auto why = run_command(depscan_bin() + " why --cpu-level x86-64-v2 " + hw + " libhw.so.1");
  CHECK(why.output.find("\ncpu: --cpu-level; glibc-hwcaps levels: x86-64-v2\n") != std::string::npos);
  CHECK(why.output.find("=> found " + plain + " ") != std::string::npos);
  // A directory scan reads the v3 build as an input of its own: a CPU without v3 never loads it.
  CHECK(isa_findings("--cpu-level x86-64-v2 " + in_dir("hwcaps")).empty());
}

TEST_CASE("CPU ISA level: GLIBC_TUNABLES' glibc.cpu.hwcaps masks the glibc-hwcaps search, not the ISA check") {
  // ld.so computes the level it checks (isa_1) before the tunables mask features, and chooses the
  // glibc-hwcaps subdirectories from the masked ones. Needs a CPU with x86-64-v3.
  if (run_command("/lib64/ld-linux-x86-64.so.2 --help").output.find("x86-64-v3 (supported") == std::string::npos) return;
  std::string tunables = "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2";
  CHECK(loader_refused(tunables + " LD_LIBRARY_PATH=v3 ./app").empty());
  CHECK(finding_set("--ld-library-path " + in_dir("v3") + " " + in_dir("app"), "cpu-isa-level", 2, tunables).empty());
  std::string hw = in_dir("hwcaps/app_hw"), plain = dir() + "/hwcaps/lib/libhw.so.1";
  CHECK(run_command(tunables + " /lib64/ld-linux-x86-64.so.2 --list " + hw).output.find(plain + " (") != std::string::npos);
  CHECK(run_command(tunables + " " + depscan_bin() + " why " + hw + " libhw.so.1").output.find("=> found " + plain + " ") !=
        std::string::npos);
}

TEST_CASE("CPU ISA level: glibc before 2.33 loads the object, which dies on its first unknown instruction") {
  std::string root = shell_quote(dir() + "/root");
  CHECK(isa_findings("--root " + root + " --ld-library-path /t/future /t/app") ==
        std::set<std::string>{"error future/libcudnn.so.9"});
  auto r = run_command(depscan_bin() + " --no-color --root " + root + " --ld-library-path /t/future /t/app");
  CHECK(r.output.find("glibc 2.32 loads it without looking, and the process dies with SIGILL") != std::string::npos);
  CHECK(isa_findings("--root " + root + " --ld-library-path /t/baseline /t/app").empty());
  // app_own runs under a loader of its own that says 2.33: that loader checks the marker.
  r = run_command(depscan_bin() + " --no-color --root " + root + " --ld-library-path /t/future /t/app_own");
  CHECK_MESSAGE(r.output.find("future/libcudnn.so.9: its GNU property note says it needs unknown ISA bit 4") !=
                std::string::npos, r.output);
  CHECK(r.output.find("ld.so refuses it with \"CPU ISA level is lower than required\"") != std::string::npos);
  CHECK(r.output.find("SIGILL") == std::string::npos);
}

}  // namespace depscan::test
