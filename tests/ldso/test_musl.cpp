// musl's loader (fixtures/musl): depscan's graph of each program against musl's own listing
// (ld-musl-x86_64.so.1 --list), in the rules where musl differs from glibc, and the parts of
// musl_loader.h that decide its search.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "analyzer/input/fs.h"
#include "analyzer/resolve/musl_loader.h"
#include "support.h"
#include "toolchains.h"

namespace depscan::test {
namespace {

using nlohmann::json;
using Pairs = std::set<std::pair<std::string, std::string>>;  // (name, path) or (name, "missing")

const std::string kMuslLoader = "/lib/ld-musl-x86_64.so.1";
const std::vector<std::string> kCases = {"ldlp_first", "runpath_inherited", "soname_ignored",
                                         "reserved",   "origin",            "wrong_class",
                                         "semicolon",  "second_libc"};

std::string dir() { return fixtures_dir() + "/musl"; }

bool have_musl() { return std::filesystem::exists(kMuslLoader) && std::filesystem::exists(dir() + "/origin/app"); }

std::string read_env(const std::string& case_dir) {
  std::ifstream in(case_dir + "/env");
  std::string line;
  std::getline(in, line);
  return line;
}

// A path as the listing prints it: relative ones ("./lib/libfo.so", from $ORIGIN of "./app") are
// relative to the directory the listing ran in.
std::string absolute_in(const std::string& base, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return std::filesystem::weakly_canonical(std::filesystem::path(base) / path).string();
}

// musl's listing: "\tNAME => PATH (0x...)" for each object it loads (and the first name of each
// part of the C library), "Error loading shared library NAME: ..." for each it cannot.
Pairs musl_listing(const std::string& output, const std::string& base) {
  Pairs out;
  std::istringstream lines(output);
  const std::string error = "Error loading shared library ";
  for (std::string line; std::getline(lines, line);) {
    size_t arrow = line.find(" => ");
    if (!line.empty() && line[0] == '\t' && arrow != std::string::npos) {
      std::string path = line.substr(arrow + 4, line.rfind(" (") - arrow - 4);
      out.emplace(line.substr(1, arrow - 1), absolute_in(base, path));
    } else if (line.starts_with(error)) {
      out.emplace(line.substr(error.size(), line.find(':') - error.size()), "missing");
    }
  }
  return out;
}

// The same from depscan's JSON report: NEEDED edges that load an object, reach musl's C library
// by a reserved name, or find nothing.
Pairs depscan_listing(const std::string& args) {
  auto run = run_command(depscan_bin() + " --format json " + args);
  json report = json::parse(run.output, nullptr, false);
  REQUIRE_MESSAGE(!report.is_discarded(), run.output);
  Pairs out;
  for (const json& e : report["edges"]) {
    if (e["kind"] != "needed") continue;
    if (e["to"].is_null()) out.emplace(e["name"], "missing");
    else if (e["how"] != "already_loaded" || e.value("how_detail", "") == "musl's C library itself")
      out.emplace(e["name"], report["objects"][e["to"].get<size_t>()]["path"]);
  }
  return out;
}

std::set<std::string> finding_codes_of(const std::string& command) {
  auto run = run_command(command);
  json report = json::parse(run.output, nullptr, false);
  REQUIRE_MESSAGE(!report.is_discarded(), run.output);
  std::set<std::string> codes;
  for (const json& f : report["findings"]) codes.insert(f["code"]);
  return codes;
}

}  // namespace

TEST_CASE("musl: every program's graph is musl's own listing") {
  if (!present_or_skip(have_musl(), "musl (musl-tools, and the musl fixtures built from it)")) return;
  for (const std::string& name : kCases) {
    INFO(name);
    std::string case_dir = dir() + "/" + name, llp = read_env(case_dir);
    auto truth = run_command("cd " + shell_quote(case_dir) + " && LD_LIBRARY_PATH=" + shell_quote(llp) + " " +
                             kMuslLoader + " --list ./app 2>&1");
    Pairs expected = musl_listing(truth.output, case_dir);
    CHECK(expected.size() >= 2);  // the C library and at least one library of the case
    Pairs got = depscan_listing("--ld-library-path " + shell_quote(llp) + " " + shell_quote(case_dir + "/app"));
    CHECK_MESSAGE(got == expected, truth.output);
  }
}

TEST_CASE("musl: the rules where it differs from glibc's") {
  if (!present_or_skip(have_musl(), "musl (musl-tools, and the musl fixtures built from it)")) return;
  auto listing = [](const std::string& name) {
    std::string case_dir = dir() + "/" + name;
    return depscan_listing("--ld-library-path " + shell_quote(read_env(case_dir)) + " " +
                           shell_quote(case_dir + "/app"));
  };
  std::string d = dir();
  CHECK(listing("ldlp_first").count({"libfa.so", d + "/ldlp_first/b/libfa.so"}));
  CHECK(listing("runpath_inherited").count({"liby.so", d + "/runpath_inherited/r/liby.so"}));
  CHECK(listing("soname_ignored").count({"libcommon.so.1", d + "/soname_ignored/lib/libcommon.so.1"}));
  CHECK(listing("reserved").count({"libm.so.6", kMuslLoader}));
  CHECK(listing("origin").count({"libdeep.so", "missing"}));
  CHECK(listing("wrong_class").count({"libfa.so", "missing"}));
  CHECK(listing("semicolon").count({"libsc.so", d + "/semicolon/semi;colon/libsc.so"}));
  auto second = run_command(depscan_bin() + " --format json " + shell_quote(d + "/second_libc/app"));
  CHECK(second.exit_code == 0);  // the program runs
  bool replaced = false;
  json second_report = json::parse(second.output, nullptr, false);
  REQUIRE(!second_report.is_discarded());
  for (const json& e : second_report["edges"])
    if (e["name"].get<std::string>().ends_with("/libc.so.6"))
      replaced = !e["to"].is_null() && second_report["objects"][e["to"].get<size_t>()]["path"] == kMuslLoader &&
                 e["how_detail"].get<std::string>().ends_with("defines __libc_start_main and stdin, so musl loads "
                                                              "itself instead of another C library");
  CHECK(replaced);
  auto r = run_command(depscan_bin() + " --no-color " + shell_quote(d + "/runpath_inherited/app"));
  CHECK(r.exit_code == 0);
  CHECK_MESSAGE(r.output.find("info[program-loader]: " + d + "/runpath_inherited/app: runs under musl's loader " +
                              kMuslLoader + ": the graph follows musl's search") != std::string::npos, r.output);
  auto why = run_command(depscan_bin() + " why " + shell_quote(d + "/runpath_inherited/app") + " liby.so");
  CHECK_MESSAGE(why.output.starts_with("musl's loader " + kMuslLoader + ": LD_LIBRARY_PATH, the RPATH or RUNPATH of "
                                       "each object up the chain that loaded it, then "),
                why.output);
  CHECK(why.output.find("glibc") == std::string::npos);
  CHECK(why.output.find("=> found " + d + "/runpath_inherited/r/liby.so ") != std::string::npos);
  CHECK(why.output.find("[runpath of app]") != std::string::npos);
}

TEST_CASE("musl: dlopen searches the main program's chain, not the caller's") {
  if (!present_or_skip(have_musl(), "musl (musl-tools, and the musl fixtures built from it)")) return;
  std::string case_dir = dir() + "/dlopen_chain";
  auto run = run_command(shell_quote(case_dir + "/app") + " 2>&1");
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.output.starts_with("Error loading shared library libcudnn.so.9: No such file or directory"),
                run.output);
  auto r = run_command(depscan_bin() + " --format json " + shell_quote(case_dir + "/app"));
  json report = json::parse(r.output);
  size_t dlopens = 0;
  for (const json& e : report["edges"])
    if (e["kind"] == "dlopen" && e["name"] == "libcudnn.so.9") {
      ++dlopens;
      CHECK(e["to"].is_null());
      CHECK(e["tried"][0] == case_dir + "/lib/libcudnn.so.9");  // the program's RUNPATH, not the caller's plugins/
    }
  CHECK(dlopens == 1);
  size_t not_found = 0;
  for (const json& f : report["findings"])
    if (f["code"] == "dlopen-library-not-found") {  // the RUNPATH that musl's dlopen reads is the program's
      ++not_found;
      CHECK_MESSAGE(f["fix"].get<std::string>().ends_with("then add its lib directory to LD_LIBRARY_PATH or app's "
                                                           "RUNPATH"), f["fix"]);
    }
  CHECK(not_found == 1);
}

TEST_CASE("musl: no symbol versions, every reference bound at load, no executable-stack refusal") {
  if (!present_or_skip(have_musl(), "musl (musl-tools, and the musl fixtures built from it)")) return;
  std::string checks = dir() + "/checks";
  auto truth = run_command("cd " + shell_quote(checks) + " && " + kMuslLoader + " --list ./app 2>&1");
  CHECK(truth.exit_code != 0);
  CHECK(truth.output.find("Error relocating " + checks + "/lib/libundef.so: missing_fn: symbol not found") !=
        std::string::npos);
  CHECK(truth.output.find("Error relocating " + checks + "/lib/libver.so") == std::string::npos);  // prov@VER_2: VER_1's
  auto r = run_command(depscan_bin() + " --format json " + shell_quote(checks + "/app"));
  json report = json::parse(r.output);
  std::set<std::string> codes;
  for (const json& f : report["findings"]) {
    codes.insert(f["code"].get<std::string>() + " " + f["severity"].get<std::string>());
    if (f["code"] == "undefined-symbol")
      CHECK(f["message"].get<std::string>().starts_with("Error relocating " + checks +
                                                        "/lib/libundef.so: missing_fn: symbol not found"));
  }
  CHECK(codes.count("undefined-symbol error"));
  CHECK(!codes.count("symbol-version-not-found error"));
  auto run = run_command("cd " + shell_quote(checks) + " && LD_LIBRARY_PATH=rwe ./app_stack 2>&1");
  CHECK_MESSAGE(run.exit_code == 0, run.output);
  CHECK(finding_codes_of(depscan_bin() + " --format json --ld-library-path " + shell_quote(checks + "/rwe") + " " +
                         shell_quote(checks + "/app_stack"))
            .count("executable-stack") == 0);
  // An ISA level no CPU has: glibc refuses the library, musl loads it and the process dies later.
  truth = run_command("cd " + shell_quote(checks) + " && " + kMuslLoader + " --list ./app_isa 2>&1");
  CHECK_MESSAGE(truth.exit_code == 0, truth.output);
  CHECK(truth.output.find("libfuture.so => " + checks + "/lib/libfuture.so") != std::string::npos);
  r = run_command(depscan_bin() + " --no-color " + shell_quote(checks + "/app_isa"));
  CHECK_MESSAGE(r.output.find("error[cpu-isa-level]: " + checks + "/lib/libfuture.so: ") != std::string::npos, r.output);
  CHECK(r.output.find(": musl's loader loads it without looking, and the process dies with SIGILL") != std::string::npos);
  // A symbol listed with value 0 is no definition to musl's find_sym either.
  truth = run_command("cd " + shell_quote(checks) + " && " + kMuslLoader + " --list ./app_zero 2>&1");
  CHECK_MESSAGE(truth.output.find("Error relocating ./app_zero: zero_fn: symbol not found") != std::string::npos,
                truth.output);
  r = run_command(depscan_bin() + " --no-color " + shell_quote(checks + "/app_zero"));
  CHECK_MESSAGE(r.output.find("error[undefined-symbol]: Error relocating " + checks + "/app_zero: zero_fn: symbol not found") !=
                    std::string::npos, r.output);
}

TEST_CASE("musl: initial-exec TLS of a library opened later fails, unless the block it reaches was there at start-up") {
  if (!present_or_skip(have_musl(), "musl (musl-tools, and the musl fixtures built from it)")) return;
  std::string checks = dir() + "/checks";
  auto static_tls = [](const std::string& llp, const std::string& input) {
    auto r = run_command(depscan_bin() + " --format json --ld-library-path " + shell_quote(llp) + " " + shell_quote(input));
    json report = json::parse(r.output, nullptr, false);
    REQUIRE_MESSAGE(!report.is_discarded(), r.output);
    std::vector<json> out;
    for (const json& f : report["findings"])
      if (f["code"] == "static-tls") out.push_back(f);
    return out;
  };
  std::string ietls = checks + "/ietls", library = ietls + "/libcudnn.so.9";
  auto run = run_command("cd " + shell_quote(checks) + " && LD_LIBRARY_PATH=" + shell_quote(ietls) + " ./app_stack 2>&1");
  CHECK(run.exit_code == 1);
  std::string said = "Error relocating " + library + ": counter: initial-exec TLS resolves to dynamic definition in " + library;
  CHECK_MESSAGE(run.output.find(said) != std::string::npos, run.output);
  auto found = static_tls(ietls, checks + "/app_stack");
  REQUIRE(found.size() == 1);  // glibc would take its 4 bytes from the surplus
  CHECK(found[0]["severity"] == "error");
  CHECK(found[0]["message"].get<std::string>().ends_with(said + "\""));
  found = static_tls("", library);  // a library scanned on its own: whoever opens it later fails
  REQUIRE(found.size() == 1);
  CHECK(found[0]["severity"] == "warning");

  std::string startup = checks + "/startup";  // the variable is libtlsdef.so's, which app_tlsdef loads at start-up
  run = run_command("cd " + shell_quote(checks) + " && LD_LIBRARY_PATH=" + shell_quote(startup) + " ./app_tlsdef 2>&1");
  CHECK_MESSAGE(run.exit_code == 0, run.output);
  CHECK(static_tls(startup, checks + "/app_tlsdef").empty());
}

TEST_CASE("musl: a musl root's path file replaces the default directories, for programs and libraries") {
  if (!present_or_skip(have_musl(), "musl (musl-tools, and the musl fixtures built from it)")) return;
  std::string root = dir() + "/root";
  auto truth = run_command("chroot " + shell_quote(root) + " " + kMuslLoader + " --list /app 2>&1");
  if (truth.output.find("Operation not permitted") != std::string::npos) {
    MESSAGE("chroot not permitted: skipped");
    return;
  }
  Pairs expected = musl_listing(truth.output, "/");
  CHECK(expected.count({"libusr.so", "missing"}));
  CHECK(depscan_listing("--root " + shell_quote(root) + " /app") == expected);
  Pairs library = depscan_listing("--root " + shell_quote(root) + " /opt/second/libp.so");
  CHECK(library == Pairs{{"libq.so", "/opt/first/libq.so"}, {"libc.so", kMuslLoader}});
  auto r = run_command(depscan_bin() + " --no-color --root " + shell_quote(root) + " /app");
  CHECK(r.output.find("program-loader") == std::string::npos);  // musl is this root's own loader
  r = run_command(depscan_bin() + " --format json --root " + shell_quote(root) + " /app /opt/second/libp.so");
  CHECK(json::parse(r.output)["root_loaders"] == json::parse(R"([{"glibc": null, "musl": true, "own_loader": null},
      {"glibc": null, "musl": true, "own_loader": null}])"));
}

TEST_CASE("musl: a hostile path file: a directory, bytes after a NUL, megabytes of noise") {
  if (!present_or_skip(have_musl(), "musl (musl-tools, and the musl fixtures built from it)")) return;
  std::mt19937 noise_source(7);
  std::string noise = "/opt/second\n";
  while (noise.size() < (3u << 20)) noise += static_cast<char>(1 + noise_source() % 255);  // no NUL
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"directory", ""}, {"nul", std::string("/nowhere\0\n/opt/second\n", 22)}, {"noise", noise}};
  for (const auto& [name, content] : variants) {
    INFO(name);
    TempDir tmp("musl-hostile");
    std::string root = tmp.str() + "/root", path_file = root + "/etc/ld-musl-x86_64.path";
    std::filesystem::copy(dir() + "/root", root, std::filesystem::copy_options::recursive);
    std::filesystem::remove(path_file);
    if (name == "directory") std::filesystem::create_directory(path_file);
    else std::ofstream(path_file, std::ios::binary) << content;
    auto truth = run_command("chroot " + shell_quote(root) + " " + kMuslLoader + " --list /app 2>&1");
    if (truth.output.find("Operation not permitted") != std::string::npos) {
      MESSAGE("skipped: chroot is not permitted here");
      return;
    }
    Pairs expected = musl_listing(truth.output, "/");
    CHECK(expected.count({"libusr.so", "missing"}));
    CHECK_MESSAGE(depscan_listing("--root " + shell_quote(root) + " /app") == expected, truth.output.substr(0, 500));
  }
}

TEST_CASE("musl: its search path, path lists and reserved names") {
  CHECK(musl_loader_arch("/lib/ld-musl-x86_64.so.1") == "x86_64");
  CHECK(musl_loader_arch("/lib/ld-musl-aarch64.so.1") == "aarch64");
  CHECK(!musl_loader_arch("/lib64/ld-linux-x86-64.so.2"));
  CHECK(!musl_loader_arch("/lib/ld-musl-.so.1"));
  CHECK(split_musl_path("/a::/b\n/c:") == std::vector<std::string>{"/a", "/b", "/c"});
  CHECK(split_musl_path("").empty());
  CHECK(split_musl_path("/a;b:/c") == std::vector<std::string>{"/a;b", "/c"});  // ';' separates for glibc only
  CHECK(expand_musl_origin("$ORIGIN/lib:${ORIGIN}/../x:/abs", "/o") == "/o/lib:/o/../x:/abs");
  CHECK(expand_musl_origin("$ORIGIN:$ORIGIN", "/$ORIGIN") == "/$ORIGIN:/$ORIGIN");  // never re-expanded
  CHECK(!expand_musl_origin("$ORIGIN/a:$LIB", "/o"));
  CHECK(!expand_musl_origin("/a/$PLATFORM", "/o"));
  for (const char* name : {"libc.so", "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                           "libutil.so.1", "libxnet.so", "libc.musl-x86_64.so.1"})
    CHECK_MESSAGE(is_musl_reserved_name(name), name);
  for (const char* name : {"libcrypt.so.1", "libmagic.so.1", "libdlfoo.so", "libcudart.so.12", "c.so"})
    CHECK_MESSAGE(!is_musl_reserved_name(name), name);
  for (const char* name : {"libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"})
    CHECK_MESSAGE(is_musl_libc_name(name), name);
  for (const char* name : {"libc.so.6", "libc.musl-x86_64.so", "libc.so.1", "libcudart.so.12"})
    CHECK_MESSAGE(!is_musl_libc_name(name), name);

  TempDir tmp("musl-path");
  std::filesystem::create_directories(tmp.str() + "/lib");
  std::filesystem::create_directories(tmp.str() + "/opt/musl/etc");
  auto rooted = make_rooted_fs(tmp.str());
  const FileSystem& fs = *rooted;
  auto none = musl_search_path(fs, "/lib/ld-musl-x86_64.so.1");
  CHECK(none.dirs == std::vector<std::string>{"/lib", "/usr/local/lib", "/usr/lib"});
  CHECK(none.path_file.empty());
  std::filesystem::create_directories(tmp.str() + "/etc");
  std::ofstream(tmp.str() + "/etc/ld-musl-x86_64.path") << "/x\n/y:/z\n";
  auto listed = musl_search_path(fs, "/lib/ld-musl-x86_64.so.1");
  CHECK(listed.dirs == std::vector<std::string>{"/x", "/y", "/z"});
  CHECK(listed.path_file == "/etc/ld-musl-x86_64.path");
  std::ofstream(tmp.str() + "/opt/musl/etc/ld-musl-x86_64.path") << "";
  auto empty = musl_search_path(fs, "/opt/musl/lib/ld-musl-x86_64.so.1");  // <prefix>/etc: no directory at all
  CHECK(empty.dirs.empty());
  CHECK(empty.path_file == "/opt/musl/etc/ld-musl-x86_64.path");
}

}  // namespace depscan::test
