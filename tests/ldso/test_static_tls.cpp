// A library loaded by dlopen whose initial-exec TLS does not fit the static TLS block's surplus
// fails with "cannot allocate memory in static TLS block" (fixtures/statictls). Each program runs
// with each library directory on this machine, and the file dlopen names is the one depscan must
// report. The same files were run inside a Debian 13 root (glibc 2.41, which puts the 32-byte rseq
// area into static TLS): the 30 outcomes there are this machine's (glibc 2.36) plus edge/ failing
// for every program; depscan agreed on all 30 with `--root` at that root. The last case replays them
// under a root whose loader says 2.41.
#include <doctest/doctest.h>

#include <gnu/libc-version.h>

#include <fstream>
#include <iterator>
#include <set>
#include <vector>

#include "ldso/finding_set.h"
#include "support.h"
#include "toolchains.h"

namespace depscan::test {
namespace {

std::string dir() { return fixtures_dir() + "/statictls"; }

const std::vector<std::string> kLibraryDirs = {"small", "fits",    "edge",     "over",  "big",
                                               "aligned", "dynamic", "pair", "shadowed", "extern"};
const std::vector<std::string> kPrograms = {"app", "app_startup", "app_interposer"};
const std::string kNoRoom = ": cannot allocate memory in static TLS block";

std::set<std::string> tls_findings(const std::string& args) { return finding_set(args, "static-tls", 2); }

// The file whose static TLS the loader could not give, as dlerror() names it ("over/libcudnn.so.9").
// `command` runs in the fixture directory: "app", or "GLIBC_TUNABLES=... ./app".
std::set<std::string> loader_refused(const std::string& command, const std::string& library_dir) {
  std::string run_it = command.find('/') == std::string::npos ? "./" + command : command;
  auto run = run_command("cd " + shell_quote(dir()) + " && export LD_LIBRARY_PATH=" + library_dir + " && " + run_it + " 2>&1");
  size_t at = run.output.find(kNoRoom);
  if (at == std::string::npos) {
    CHECK_MESSAGE(run.exit_code == 0, run.output);
    return {};
  }
  CHECK(run.exit_code != 0);
  return {"error " + run.output.substr(0, at)};
}

// What Debian 13's loader refused (glibc 2.41).
std::set<std::string> refused_by_glibc_2_41(const std::string& program, const std::string& library_dir) {
  if (library_dir == "small" || library_dir == "fits" || library_dir == "dynamic") return {};
  if (library_dir == "shadowed" && program == "app_interposer") return {};
  return {"error " + library_dir + (library_dir == "extern" ? "/libprovider.so.1" : "/libcudnn.so.9")};
}

bool host_is_glibc_2_36() { return std::string(gnu_get_libc_version()) == "2.36"; }
constexpr const char* kGlibc236 = "glibc 2.36 (Debian 12), whose static TLS limits the fixtures' sizes straddle";

}  // namespace

TEST_CASE("static TLS: this machine's loader and depscan agree on every program and library") {
  size_t refusals = 0;
  for (const std::string& library_dir : kLibraryDirs)
    for (const std::string& program : kPrograms) {
      INFO(program << " with " << library_dir);
      auto truth = loader_refused(program, library_dir);
      refusals += truth.size();
      std::string libs = dir() + "/" + library_dir;
      CHECK(tls_findings("--ld-library-path " + shell_quote(libs) + " " + shell_quote(dir() + "/" + program)) == truth);
    }
  if (present_or_skip(host_is_glibc_2_36(), kGlibc236)) CHECK(refusals == 18);  // the fixture's sizes are chosen around 2.36's limit
}

TEST_CASE("static TLS: the start-up layout moves where the surplus ends, to the byte") {
  if (!present_or_skip(host_is_glibc_2_36(), kGlibc236)) return;  // the sizes straddle this release's limits
  // app: 1712 bytes left, so edge/ (1712) fits and over/ (1713) does not; app_startup's own 3020
  // bytes at start-up leave 1696, so edge/ fails there.
  CHECK(loader_refused("app", "edge").empty());
  CHECK(loader_refused("app", "over") == std::set<std::string>{"error over/libcudnn.so.9"});
  CHECK(loader_refused("app_startup", "edge") == std::set<std::string>{"error edge/libcudnn.so.9"});
  auto r = run_command(depscan_bin() + " --no-color --ld-library-path " + shell_quote(dir() + "/over") + " " +
                       shell_quote(dir() + "/app"));
  CHECK(r.output.find("only 1712 bytes of the static TLS block's surplus are left") != std::string::npos);
}

TEST_CASE("static TLS: without symbol tables, a named variable is taken to be the library's own") {
  auto with = [](const std::string& library_dir, const std::string& program) {
    return tls_findings("--no-symbols --ld-library-path " + shell_quote(dir() + "/" + library_dir) + " " +
                        shell_quote(dir() + "/" + program));
  };
  CHECK(with("over", "app") == std::set<std::string>{"error over/libcudnn.so.9"});  // names libcudnn_block
  CHECK(with("pair", "app") == std::set<std::string>{"error pair/libcudnn.so.9"});
  CHECK(with("edge", "app").empty());
}

TEST_CASE("static TLS: GLIBC_TUNABLES=glibc.rtld.optional_static_tls moves the limit for the loader and depscan alike") {
  // The surplus becomes 1152 + N bytes: 2900 leaves 4080 bytes here, too few for big/ (4096).
  for (const std::string tunables : {"glibc.rtld.optional_static_tls=2900", "glibc.rtld.optional_static_tls=4096",
                                     "glibc.rtld.optional_static_tls=0", "glibc.rtld.nns=1"})
    for (const std::string& library_dir : kLibraryDirs) {
      INFO(tunables << " with " << library_dir);
      auto truth = loader_refused("GLIBC_TUNABLES=" + tunables + " ./app", library_dir);
      std::string libs = dir() + "/" + library_dir;
      CHECK(tls_findings("--glibc-tunables " + tunables + " --ld-library-path " + shell_quote(libs) + " " +
                         shell_quote(dir() + "/app")) == truth);
    }
  if (!present_or_skip(host_is_glibc_2_36(), kGlibc236)) return;
  CHECK(loader_refused("GLIBC_TUNABLES=glibc.rtld.optional_static_tls=2900 ./app", "big").size() == 1);
  CHECK(loader_refused("GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 ./app", "big").empty());
}

TEST_CASE("static TLS: under a root with glibc 2.41, depscan gives the outcomes of Debian 13's loader") {
  std::string root = dir() + "/root";
  for (const std::string& library_dir : kLibraryDirs)
    for (const std::string& program : kPrograms) {
      INFO(program << " with " << library_dir);
      auto findings = tls_findings("--root " + shell_quote(root) + " --ld-library-path /t/" + library_dir + " /t/" + program);
      CHECK(findings == refused_by_glibc_2_41(program, library_dir));
    }
}

TEST_CASE("static TLS: a program under its own loader gets that loader's surplus, not the system's") {
  // rootown/: the system's loader says 2.41 (rseq in static TLS); app_own runs under a copy of this
  // machine's loader (2.36) that searches its own directory, so it fares as app does here.
  if (!present_or_skip(host_is_glibc_2_36(), kGlibc236)) return;
  std::string root = "--root " + shell_quote(dir() + "/rootown") + " --ld-library-path /t/";
  for (const std::string& library_dir : kLibraryDirs) {
    INFO(library_dir);
    CHECK(tls_findings(root + library_dir + " /t/app") == refused_by_glibc_2_41("app", library_dir));
    CHECK(tls_findings(root + library_dir + " /t/app_own") == loader_refused("app", library_dir));
  }
  auto r = run_command(depscan_bin() + " --no-color " + root + "over /t/app_own");
  CHECK_MESSAGE(r.output.find("only 1712 bytes of the static TLS block's surplus are left") != std::string::npos, r.output);
}

TEST_CASE("static TLS: extension modules that fit alone and not in one process are a warning on the last") {
  // dlopen_each opens its arguments in order, as Python imports modules.
  std::string a = "mods/a.cpython-311-x86_64-linux-gnu.so", b = "mods/b.cpython-311-x86_64-linux-gnu.so";
  auto both = run_command("cd " + shell_quote(dir()) + " && ./dlopen_each ./" + a + " ./" + b + " 2>&1");
  CHECK(both.exit_code != 0);
  CHECK(both.output.find("./" + b + kNoRoom) == 0);
  auto shared = run_command("cd " + shell_quote(dir()) + " && ./dlopen_each ./shared/c.cpython-311-x86_64-linux-gnu.so "
                            "./shared/d.cpython-311-x86_64-linux-gnu.so 2>&1");
  CHECK_MESSAGE(shared.exit_code == 0, shared.output);  // one file, whichever path: its block is placed once

  CHECK(tls_findings(shell_quote(dir() + "/mods")) == std::set<std::string>{"warning " + b});
  CHECK(tls_findings(shell_quote(dir() + "/shared")).empty());
  CHECK(tls_findings(shell_quote(dir() + "/" + a)).empty());
  auto r = run_command(depscan_bin() + " --no-color " + shell_quote(dir() + "/mods"));
  CHECK(r.output.find("into a process that imported " + dir() + "/" + a + " (1008 bytes) first") != std::string::npos);
  if (present_or_skip(host_is_glibc_2_36(), kGlibc236)) CHECK(r.output.find("only 704 bytes") != std::string::npos);
}

TEST_CASE("static TLS: hostile PT_TLS sizes and alignments end in a finding, not a crash or a wrapped sum") {
  // big/libcudnn.so.9 copied with its PT_TLS rewritten; the program dlopens it from that directory.
  std::ifstream in(dir() + "/big/libcudnn.so.9", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  REQUIRE(bytes.size() > 64);
  auto field = [&](uint64_t at) -> uint64_t& { return *reinterpret_cast<uint64_t*>(bytes.data() + at); };
  uint64_t phoff = field(32), tls = 0;
  uint16_t count = *reinterpret_cast<uint16_t*>(bytes.data() + 56);
  for (uint16_t i = 0; i < count; ++i)
    if (*reinterpret_cast<uint32_t*>(bytes.data() + phoff + 56u * i) == 7) tls = phoff + 56u * i;
  REQUIRE(tls != 0);
  const std::vector<std::pair<uint64_t, uint64_t>> hostile = {
      {UINT64_MAX, 16}, {uint64_t{1} << 63, uint64_t{1} << 62}, {UINT64_MAX - 15, 0}, {1024, uint64_t{1} << 40}};
  for (auto [size, align] : hostile) {
    INFO("p_memsz " << size << ", p_align " << align);
    test::TempDir libs("statictls-hostile");
    field(tls + 40) = size;
    field(tls + 48) = align;
    std::ofstream(libs.str() + "/libcudnn.so.9", std::ios::binary).write(bytes.data(), bytes.size());
    auto r = run_command(depscan_bin() + " --no-color --ld-library-path " + shell_quote(libs.str()) + " " +
                         shell_quote(dir() + "/app"));
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("error[static-tls]: " + libs.str() + "/libcudnn.so.9: its " + std::to_string(size) +
                        " bytes") != std::string::npos);
  }
}

TEST_CASE("static TLS: a library scanned on its own is a warning, a Python extension that cannot fit an error") {
  std::string ext = "ext.cpython-311-x86_64-linux-gnu.so";
  CHECK(tls_findings(shell_quote(dir() + "/" + ext)) == std::set<std::string>{"error statictls/" + ext});
  CHECK(tls_findings(shell_quote(dir() + "/big/libcudnn.so.9")) == std::set<std::string>{"warning big/libcudnn.so.9"});
  // 1713 bytes fail after the C library's TLS alone, but a host program's own TLS can leave room.
  auto over = run_command(depscan_bin() + " --no-color " + shell_quote(dir() + "/over/libcudnn.so.9"));
  CHECK(over.output.find("warning[static-tls]") != std::string::npos);
  CHECK(over.output.find("fits only if the program's own TLS leaves room") != std::string::npos);
  CHECK(tls_findings(shell_quote(dir() + "/edge/libcudnn.so.9")).empty());
  CHECK(tls_findings(shell_quote(dir() + "/dynamic/libcudnn.so.9")).empty());
  CHECK(tls_findings(shell_quote(dir() + "/pair/libcudnn.so.9")) == std::set<std::string>{"warning pair/libcudnn.so.9"});
}

}  // namespace depscan::test
