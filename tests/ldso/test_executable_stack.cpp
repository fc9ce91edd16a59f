// glibc 2.41 and later refuse to dlopen a library that needs an executable stack when the stack
// is not executable already (fixtures/execstack). The same programs and libraries were run inside a
// Debian 13 root (glibc 2.41): the dlopen of rwe/, nostack/ and dep/ by `app` failed with "cannot
// enable executable stack as shared object requires", every other pair loaded. The tests compare
// depscan with the loader of this machine, and with those results under a root whose loader says 2.41.
#include <doctest/doctest.h>

#include <gnu/libc-version.h>

#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "ldso/finding_set.h"
#include "support.h"

namespace depscan::test {
namespace {

using nlohmann::json;

std::string dir() { return fixtures_dir() + "/execstack"; }

const std::vector<std::string> kLibraryDirs = {"plain", "rwe", "nostack", "dep"};
const std::vector<std::string> kPrograms = {"app", "app_execstack", "app_startup"};

// "severity dir/file" of each executable-stack finding.
std::set<std::string> stack_findings(const std::string& args) { return finding_set(args, "executable-stack", 2); }

// What glibc 2.41 refuses: the library that needs the executable stack, when `app` dlopens from dir.
std::set<std::string> refused(const std::string& severity, const std::string& program, const std::string& library_dir) {
  if (program != "app" || library_dir == "plain") return {};
  return {severity + " " + library_dir + (library_dir == "dep" ? "/libhelper.so.1" : "/libcudnn.so.9")};
}

bool host_refuses() {
  int major = 0, minor = 0;
  std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor);
  return major > 2 || (major == 2 && minor >= 41);
}

}  // namespace

TEST_CASE("executable stack: this machine's loader and depscan agree on every program and library") {
  for (const std::string& library_dir : kLibraryDirs)
    for (const std::string& program : kPrograms) {
      INFO(program << " with " << library_dir);
      std::string app = dir() + "/" + program, libs = dir() + "/" + library_dir;
      auto run = run_command("LD_LIBRARY_PATH=" + shell_quote(libs) + " " + shell_quote(app) + " 2>&1");
      auto findings = stack_findings("--ld-library-path " + shell_quote(libs) + " " + shell_quote(app));
      bool fails = !refused("x", program, library_dir).empty();
      if (host_refuses()) {
        CHECK((run.exit_code != 0) == fails);
        CHECK(findings == refused("error", program, library_dir));
      } else {
        CHECK_MESSAGE(run.exit_code == 0, run.output);  // glibc before 2.41 makes the stack executable
        CHECK(findings == refused("warning", program, library_dir));
      }
    }
}

TEST_CASE("executable stack: under a root with glibc 2.41, the dlopen that Debian 13 refused is an error") {
  std::string root = dir() + "/root";
  for (const std::string& library_dir : kLibraryDirs)
    for (const std::string& program : kPrograms) {
      INFO(program << " with " << library_dir);
      auto findings = stack_findings("--root " + shell_quote(root) + " --ld-library-path /t/" + library_dir + " /t/" + program);
      CHECK(findings == refused("error", program, library_dir));
    }
}

// What Debian 13's loader did with GLIBC_TUNABLES=glibc.rtld.execstack=0: app_execstack stops with
// "Fatal glibc error: executable stack is not allowed", app_startup on libstartup.so.1, and app's
// dlopens fail as without the tunable.
std::set<std::string> refused_with_execstack_0(const std::string& program, const std::string& library_dir) {
  if (program == "app_execstack") return {"error t/app_execstack"};
  if (program == "app_startup") return {"error t/libstartup.so.1"};
  return refused("error", program, library_dir);
}

TEST_CASE("executable stack: glibc.rtld.execstack=0 under glibc 2.41 refuses it at start-up too, as Debian 13 did") {
  std::string root = dir() + "/root";
  for (const std::string& library_dir : kLibraryDirs)
    for (const std::string& program : kPrograms) {
      INFO(program << " with " << library_dir);
      auto findings = stack_findings("--glibc-tunables glibc.rtld.execstack=0 --root " + shell_quote(root) +
                                     " --ld-library-path /t/" + library_dir + " /t/" + program);
      CHECK(findings == refused_with_execstack_0(program, library_dir));
    }
  auto r = run_command(depscan_bin() + " --no-color --glibc-tunables glibc.rtld.execstack=0 --root " + shell_quote(root) +
                       " /t/app_execstack");
  CHECK(r.output.find("\"Fatal glibc error: executable stack is not allowed\"") != std::string::npos);
}

TEST_CASE("executable stack: the tunable's values that a release does not know are ignored, as ld.so ignores them") {
  // glibc.rtld.execstack=2 (2.42 and later) makes the stack executable at start-up: nothing is refused.
  // 2.41 accepts only 0 and 1; before 2.41 the tunable does not exist (this machine's loader ignores it).
  std::string app = " --ld-library-path /t/rwe /t/app";
  CHECK(stack_findings("--glibc-tunables glibc.rtld.execstack=2 --root " + shell_quote(dir() + "/root242") + app).empty());
  CHECK(stack_findings("--glibc-tunables glibc.rtld.execstack=1 --root " + shell_quote(dir() + "/root242") + app) ==
        std::set<std::string>{"error rwe/libcudnn.so.9"});
  CHECK(stack_findings("--glibc-tunables glibc.rtld.execstack=2 --root " + shell_quote(dir() + "/root") + app) ==
        std::set<std::string>{"error rwe/libcudnn.so.9"});
  if (host_refuses()) return;
  for (const std::string& program : kPrograms) {
    INFO(program);
    std::string libs = dir() + "/rwe", path = dir() + "/" + program;
    auto run = run_command("GLIBC_TUNABLES=glibc.rtld.execstack=0 LD_LIBRARY_PATH=" + shell_quote(libs) + " " +
                           shell_quote(path) + " 2>&1");
    CHECK_MESSAGE(run.exit_code == 0, run.output);
    CHECK(stack_findings("--glibc-tunables glibc.rtld.execstack=0 --ld-library-path " + shell_quote(libs) + " " +
                         shell_quote(path)) == refused("warning", program, "rwe"));
  }
}

// root242 saved as a one-layer image (`docker save` layout) whose config sets `env`, a JSON list.
std::string image_of_root242(const TempDir& tmp, const std::string& name, const std::string& env) {
  std::string image = tmp.str() + "/" + name;
  std::string config = R"({"config": {"Env": )" + env + "}}";
  std::string manifest = R"([{"Config": "config.json", "Layers": ["layer.tar"]}])";
  auto made = run_command("mkdir -p " + shell_quote(image) + " && tar -C " + shell_quote(dir() + "/root242") + " -cf " +
                          shell_quote(image + "/layer.tar") + " . && printf %s " + shell_quote(config) + " >" +
                          shell_quote(image + "/config.json") + " && printf %s " + shell_quote(manifest) + " >" +
                          shell_quote(image + "/manifest.json") + " && tar -C " + shell_quote(image) + " -cf " +
                          shell_quote(image + ".tar") + " manifest.json config.json layer.tar 2>&1");
  REQUIRE_MESSAGE(made.exit_code == 0, made.output);
  return shell_quote(image + ".tar");
}

TEST_CASE("executable stack: an image's GLIBC_TUNABLES counts, over this shell's and under --glibc-tunables") {
  // glibc 2.42's loader refuses app's dlopen of rwe/libcudnn.so.9 unless glibc.rtld.execstack=2
  TempDir tmp("execstack-image");
  std::string plain = image_of_root242(tmp, "plain", R"(["LD_LIBRARY_PATH=/t/rwe"])");
  std::string forced = image_of_root242(tmp, "forced", R"(["LD_LIBRARY_PATH=/t/rwe", "GLIBC_TUNABLES=glibc.rtld.execstack=2"])");
  auto refuses_rwe = [](const std::string& args, const std::string& prefix = "") {
    return finding_set(args, "executable-stack", 2, prefix).count("error rwe/libcudnn.so.9") == 1;
  };
  CHECK(refuses_rwe(plain));
  CHECK_FALSE(refuses_rwe(forced));
  CHECK(finding_set(forced, "executable-stack", 2).empty());  // 2 makes every stack executable at start-up
  // the container starts with the image's setting, not with this shell's
  CHECK(refuses_rwe(plain, "GLIBC_TUNABLES=glibc.rtld.execstack=2"));
  CHECK_FALSE(refuses_rwe(forced, "GLIBC_TUNABLES=glibc.rtld.execstack=1"));
  // the option still decides
  CHECK(refuses_rwe("--glibc-tunables glibc.rtld.execstack=1 " + forced));
  CHECK_FALSE(refuses_rwe("--glibc-tunables glibc.rtld.execstack=2 " + plain));
}

TEST_CASE("executable stack: a program under its own loader is judged by that loader's glibc, not the system's") {
  // rootown/: the system's loader says 2.36; app_own241 and app_own242 run under loaders of their own.
  std::string root = "--root " + shell_quote(dir() + "/rootown") + " --ld-library-path /t/rwe ";
  CHECK(stack_findings(root + "/t/app") == std::set<std::string>{"warning rwe/libcudnn.so.9"});
  CHECK(stack_findings(root + "/t/app_own241") == std::set<std::string>{"error rwe/libcudnn.so.9"});
  CHECK(stack_findings(root + "/t/app_own242") == std::set<std::string>{"error rwe/libcudnn.so.9"});
  // glibc.rtld.execstack=2 counts for 2.42's loader only; 2.36 ignores it (and allows the dlopen).
  std::string force = "--glibc-tunables glibc.rtld.execstack=2 ";
  CHECK(stack_findings(force + root + "/t/app_own242").empty());
  CHECK(stack_findings(force + root + "/t/app_own241") == std::set<std::string>{"error rwe/libcudnn.so.9"});
  CHECK(stack_findings(force + root + "/t/app") == std::set<std::string>{"warning rwe/libcudnn.so.9"});
  auto r = run_command(depscan_bin() + " --no-color " + root + "/t/app_own241");
  CHECK_MESSAGE(r.output.find("; the program runs under its own loader /opt/glibc-2.41-build/lib/ld-linux-x86-64.so.2, "
                              "glibc 2.41\n") != std::string::npos, r.output);
  r = run_command(depscan_bin() + " --no-color " + root + "/t/app");
  CHECK_MESSAGE(r.output.find("; the analysed system has glibc 2.36, which still allows it and makes the whole stack "
                              "executable\n") != std::string::npos, r.output);
  // The JSON report says, per root, which loader's release the checks took.
  r = run_command(depscan_bin() + " --format json " + root + "/t/app /t/app_own241");
  json report = json::parse(r.output, nullptr, false);
  REQUIRE(!report.is_discarded());
  CHECK(report["root_loaders"] == json::parse(R"([{"glibc": "2.36", "musl": false, "own_loader": null},
      {"glibc": "2.41", "musl": false, "own_loader": "/opt/glibc-2.41-build/lib/ld-linux-x86-64.so.2"}])"));
}

TEST_CASE("executable stack: a library scanned on its own is a warning, a Python extension an error on 2.41") {
  std::string ext = "ext.cpython-311-x86_64-linux-gnu.so";
  std::string host_severity = host_refuses() ? "error" : "warning";
  CHECK(stack_findings(shell_quote(dir() + "/" + ext)) == std::set<std::string>{host_severity + " execstack/" + ext});
  CHECK(stack_findings("--root " + shell_quote(dir() + "/root") + " /t/" + ext) ==
        std::set<std::string>{"error t/" + ext});
  CHECK(stack_findings(shell_quote(dir() + "/rwe/libcudnn.so.9")) == std::set<std::string>{"warning rwe/libcudnn.so.9"});
  CHECK(stack_findings("--root " + shell_quote(dir() + "/root") + " /t/rwe/libcudnn.so.9") ==
        std::set<std::string>{"warning rwe/libcudnn.so.9"});
  CHECK(stack_findings(shell_quote(dir() + "/plain/libcudnn.so.9")).empty());
}

TEST_CASE("executable stack: a bundled library reached by two paths is one finding, the Python extension's") {
  // As in a wheel: the library root libs/libbundled.so.1 and pkg/../libs/libbundled.so.1, which the
  // extension module needs, are one file; the finding is the one that says Python opens it.
  std::string bundle = "/t/pkg/bundle.cpython-311-x86_64-linux-gnu.so";
  auto r = run_command(depscan_bin() + " --format json --root " + shell_quote(dir() + "/root") + " /t/libs/libbundled.so.1 " + bundle);
  json report = json::parse(r.output, nullptr, false);
  REQUIRE(!report.is_discarded());
  std::vector<json> found;
  for (const json& f : report["findings"])
    if (f["code"] == "executable-stack") found.push_back(f);
  REQUIRE(found.size() == 1);
  CHECK(found[0]["severity"] == "error");
  CHECK(found[0]["message"].get<std::string>().find("Python imports " + bundle) != std::string::npos);
}

}  // namespace depscan::test
