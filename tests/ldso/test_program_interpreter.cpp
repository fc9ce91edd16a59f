// The kernel opens a program's PT_INTERP before ld.so runs. Each fixture program of
// fixtures/interp is started (posix_spawn reports execve's errno) and scanned: depscan must say
// program-interpreter (an error) exactly for the programs the kernel refuses.
#include <doctest/doctest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache_writer.h"
#include "support.h"

namespace depscan::test {
namespace {

using nlohmann::json;

std::string interp_dir() { return fixtures_dir() + "/interp"; }

struct Case {
  std::string name, expect;
};

std::vector<Case> load_cases() {
  std::ifstream in(interp_dir() + "/cases");
  REQUIRE_MESSAGE(in.good(), "fixture not built: " << interp_dir());
  std::vector<Case> cases;
  for (Case c; in >> c.name >> c.expect;) cases.push_back(c);
  return cases;
}

// 0 when the kernel ran the program (and it exited 0), else execve's errno (-1: it ran and failed).
int start(const std::string& program, const std::string& cwd) {
  std::string old = std::filesystem::current_path().string();
  std::filesystem::current_path(cwd);
  pid_t pid = 0;
  char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
  char* envp[] = {nullptr};
  int error = posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, envp);
  std::filesystem::current_path(old);
  if (error != 0) return error;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

struct Verdict {
  int exit_code = -1;
  std::vector<json> findings;  // program-interpreter and program-interpreter-relative
  std::string output;
};

Verdict scan(const std::string& args) {
  auto r = run_command(depscan_bin() + " --format json " + args + " 2>&1");
  Verdict v{r.exit_code, {}, r.output};
  json report = json::parse(r.output, nullptr, false);
  REQUIRE_MESSAGE(!report.is_discarded(), r.output);
  for (const json& f : report["findings"])
    if (f["code"].get<std::string>().rfind("program-interpreter", 0) == 0) v.findings.push_back(f);
  return v;
}

}  // namespace

TEST_CASE("program interpreter: depscan names exactly the programs the kernel refuses") {
  auto cases = load_cases();
  REQUIRE(cases.size() >= 14);
  TempDir elsewhere("interp-cwd");
  for (const Case& c : cases) {
    INFO("fixture: " << c.name);
    std::string dir = interp_dir() + "/" + c.name, app = dir + "/app";
    int outcome = start(app, elsewhere.str());
    Verdict v = scan(shell_quote(app));
    INFO("depscan: " << v.output);
    if (c.expect == "starts") {
      CHECK(outcome == 0);
      CHECK(v.findings.empty());
      CHECK(v.exit_code == 0);
    } else if (c.expect == "refused") {
      CHECK_MESSAGE(outcome > 0, "the kernel started it: " << outcome);
      REQUIRE(v.findings.size() == 1);
      CHECK(v.findings[0]["code"] == "program-interpreter");
      CHECK(v.findings[0]["severity"] == "error");
      CHECK(v.exit_code == 1);
    } else {
      REQUIRE(c.expect == "relative");
      CHECK(outcome == ENOENT);
      CHECK(start(app, dir) == 0);
      REQUIRE(v.findings.size() == 1);
      CHECK(v.findings[0]["code"] == "program-interpreter-relative");
      CHECK(v.findings[0]["severity"] == "warning");
    }
  }
}

TEST_CASE("program interpreter: the message names the cause the kernel meets") {
  auto message_of = [](const std::string& name) {
    Verdict v = scan(shell_quote(interp_dir() + "/" + name + "/app"));
    REQUIRE(v.findings.size() == 1);
    return v.findings[0]["message"].get<std::string>();
  };
  CHECK(message_of("missing").find("cannot be opened (No such file or directory)") != std::string::npos);
  CHECK(message_of("symlink_loop").find("Too many levels of symbolic links") != std::string::npos);
  CHECK(message_of("no_execute_bit").find("has no execute permission") != std::string::npos);
  CHECK(message_of("elfclass32").find("is ELFCLASS32, the program ELFCLASS64") != std::string::npos);
  CHECK(message_of("other_machine").find("e_machine 183") != std::string::npos);
  CHECK(message_of("relocatable").find("not a loadable ELF file (e_type 1)") != std::string::npos);
  Verdict musl = scan(shell_quote(interp_dir() + "/missing/app"));
  CHECK(musl.findings[0]["fix"].get<std::string>().find("musl") != std::string::npos);
}

TEST_CASE("program interpreter: a library's PT_INTERP only matters when it is run") {
  std::string dir = interp_dir() + "/library";
  CHECK(start(dir + "/app", dir) == 0);  // it loads as a library
  CHECK(start(dir + "/libinterp.so.1", dir) == ENOENT);  // and cannot be run
  Verdict lib = scan(shell_quote(dir + "/libinterp.so.1"));
  REQUIRE(lib.findings.size() == 1);
  CHECK(lib.findings[0]["severity"] == "warning");
  CHECK(lib.exit_code == 0);
  Verdict app = scan(shell_quote(dir + "/app"));
  CHECK(app.findings.empty());
  CHECK(app.exit_code == 0);
}

TEST_CASE("program interpreter: under --root, the root's loader is the one the kernel opens") {
  TempDir root("interp-root");
  std::filesystem::create_directories(root.path() / "bin");
  std::filesystem::copy_file(interp_dir() + "/system_loader/app", root.path() / "bin/app");
  Verdict without = scan("--root " + shell_quote(root.str()) + " /bin/app");
  REQUIRE(without.findings.size() == 1);
  CHECK(without.findings[0]["message"].get<std::string>().find("/lib64/ld-linux-x86-64.so.2 cannot be opened") !=
        std::string::npos);
  // The host has the loader; the root does not, and absolute symlinks resolve inside the root.
  std::filesystem::create_directories(root.path() / "lib64");
  std::filesystem::create_symlink("/lib/ld.so", root.path() / "lib64/ld-linux-x86-64.so.2");
  std::filesystem::create_directories(root.path() / "lib");
  std::filesystem::copy_file("/lib64/ld-linux-x86-64.so.2", root.path() / "lib/ld.so");
  Verdict with = scan("--root " + shell_quote(root.str()) + " /bin/app");
  CHECK(with.findings.empty());
}

TEST_CASE("loader missing: a library for a machine the system has no loader for, as a process of this machine finds") {
  std::string machines = interp_dir() + "/machines", root = machines + "/root", libs = root + "/libs";
  auto load = [&](const std::string& lib) { return run_command(shell_quote(machines + "/dlopen") + " " + shell_quote(libs + "/" + lib)); };
  CHECK(load("libx86.so").exit_code == 0);
  CHECK(load("libaarch64.so").exit_code == 1);
  auto i386 = load("libi386.so");
  CHECK(i386.exit_code == 1);
  CHECK_MESSAGE(i386.output.find("wrong ELF class: ELFCLASS32") != std::string::npos, i386.output);

  // the first library each finding names -> its message
  auto loader_missing = [](const std::string& root_dir, int expected_exit) {
    auto r = run_command(depscan_bin() + " --format json --root " + shell_quote(root_dir) + " /libs 2>&1");
    CHECK(r.exit_code == expected_exit);
    json report = json::parse(r.output, nullptr, false);
    REQUIRE_MESSAGE(!report.is_discarded(), r.output);
    std::map<std::string, std::string> out;
    for (const json& f : report["findings"])
      if (f["code"] == "loader-missing") {
        CHECK(f["severity"] == "error");
        out[report["objects"][f["object"].get<size_t>()]["path"]] = f["message"];
      }
    return out;
  };
  auto missing = loader_missing(root, 1);
  CHECK(missing.size() == 3);  // not libx86.so, whose loader is there, nor the static programs, which need none
  CHECK(missing["/libs/libaarch64.so"].starts_with(
      "a library is built for aarch64, and the analysed system has no aarch64 loader (/lib/ld-linux-aarch64.so.1): "
      "no process there can load it"));
  CHECK(missing["/libs/libi386.so"].starts_with("a library is built for i386, and the analysed system has no i386 "
                                                "loader (/lib/ld-linux.so.2)"));
  CHECK(missing["/libs/libppc64le.so"].starts_with("a library is built for ppc64le, and the analysed system has no "
                                                   "ppc64le loader (/lib64/ld64.so.2)"));

  TempDir with_i386("interp-machines");  // the same system with an i386 loader (its presence counts): i386's is gone
  std::filesystem::copy(root, with_i386.str(), std::filesystem::copy_options::recursive);
  std::filesystem::create_directories(with_i386.path() / "lib");
  std::filesystem::copy_file(root + "/lib64/ld-linux-x86-64.so.2", with_i386.path() / "lib/ld-linux.so.2");
  missing = loader_missing(with_i386.str(), 1);
  CHECK(missing.size() == 2);
  CHECK(missing.count("/libs/libaarch64.so"));
  CHECK(missing.count("/libs/libppc64le.so"));
}

TEST_CASE("a ppc64le root: its loader, its multiarch directories and its ld.so.cache entries") {
  namespace fs = std::filesystem;
  std::string ppc = interp_dir() + "/machines/ppc";
  TempDir root("interp-ppc64le");
  for (const char* dir : {"lib64", "lib/powerpc64le-linux-gnu", "opt/ppc", "libs", "etc"})
    fs::create_directories(root.path() / dir);
  // the loader: a ppc64 file without a soname (libdep.so's would make it "already loaded" as the loader)
  fs::copy_file(interp_dir() + "/machines/root/libs/libppc64le.so", root.path() / "lib64/ld64.so.2");
  fs::copy_file(ppc + "/libdep.so", root.path() / "lib/powerpc64le-linux-gnu/libdep.so");
  fs::copy_file(ppc + "/libdep.so", root.path() / "opt/ppc/libdep.so");
  fs::copy_file(ppc + "/libuser.so", root.path() / "libs/libuser.so");
  // libdep.so's edge from /libs/libuser.so: its path and how it was found
  auto dep_edge = [&] {
    auto r = run_command(depscan_bin() + " --format json --root " + shell_quote(root.str()) + " /libs/libuser.so 2>&1");
    json report = json::parse(r.output, nullptr, false);
    REQUIRE_MESSAGE(!report.is_discarded(), r.output);
    for (const json& f : report["findings"]) CHECK_MESSAGE(f["code"] != "loader-missing", f["message"]);
    for (const json& e : report["edges"])
      if (e["name"] == "libdep.so" && !e["to"].is_null())
        return report["objects"][e["to"].get<size_t>()]["path"].get<std::string>() + " " + e["how"].get<std::string>();
    return std::string("not found");
  };
  CHECK(dep_edge() == "/lib/powerpc64le-linux-gnu/libdep.so default_path");
  auto write_cache = [&](int32_t flags, bool little_endian) {
    std::ofstream(root.path() / "etc/ld.so.cache", std::ios::binary)
        << test::new_format_cache({{flags, "libdep.so", "/opt/ppc/libdep.so"}}, little_endian);
  };
  write_cache(0x503, true);  // FLAG_POWERPC_LIB64 | FLAG_ELF_LIBC6: what ppc64le's ldconfig writes
  CHECK(dep_edge() == "/opt/ppc/libdep.so ld_so_cache");
  write_cache(0x303, true);  // an x86-64 entry: not for this process
  CHECK(dep_edge() == "/lib/powerpc64le-linux-gnu/libdep.so default_path");
  write_cache(0x503, false);  // a big-endian (ppc64) cache: a little-endian loader refuses the file
  CHECK(dep_edge() == "/lib/powerpc64le-linux-gnu/libdep.so default_path");
}

}  // namespace depscan::test
