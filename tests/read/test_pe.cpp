// The PE reader against the mingw fixtures (fixtures/pe): imports in order, delay-load imports,
// exports including ordinal-only ones and a forwarder listed once.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "analyzer/read/pe_reader.h"
#include "support.h"

using namespace depscan;

namespace {

std::vector<std::string> arch_dirs() {
  std::vector<std::string> dirs;
  for (const char* arch : {"pe64", "pe32"}) {
    std::string dir = test::fixtures_dir() + "/pe/" + arch;
    if (std::filesystem::exists(dir + "/mydll.dll")) dirs.push_back(dir);
  }
  return dirs;
}

Binary read_ok(const std::string& path) {
  auto b = read_pe(path, path);
  REQUIRE_MESSAGE(b, path << ": " << (b ? "" : b.error()));
  return *b;
}

const Symbol* find(const Binary& b, const std::string& name, bool defined) {
  for (const Symbol& s : b.symbols)
    if (s.name == name && s.defined == defined) return &s;
  return nullptr;
}

size_t count_named(const Binary& b, const std::string& name) {
  return std::count_if(b.symbols.begin(), b.symbols.end(), [&](const Symbol& s) { return s.name == name; });
}

}  // namespace

TEST_CASE("the PE fixtures exist, 64-bit and 32-bit (scripts/install-deps.sh installs both mingw-w64 compilers)") {
  auto dirs = arch_dirs();
  REQUIRE(dirs.size() == 2);
  CHECK(dirs.front().ends_with("pe64"));
  CHECK(dirs.back().ends_with("pe32"));
}

TEST_CASE("DLL exports: named, ordinal-only and one forwarder") {
  for (const std::string& dir : arch_dirs()) {
    CAPTURE(dir);
    Binary dll = read_ok(dir + "/mydll.dll");
    CHECK(dll.format == Format::Pe);
    CHECK(dll.bits == (dir.ends_with("pe64") ? 64 : 32));
    CHECK(dll.machine == (dir.ends_with("pe64") ? 0x8664 : 0x14c));
    CHECK((dll.file_type & 0x2000));  // IMAGE_FILE_DLL
    const Symbol* add = find(dll, "add", true);
    REQUIRE(add);
    CHECK(add->version_file.empty());
    CHECK(find(dll, "mul", true));
    CHECK(find(dll, "#5", true));  // `secret @5 NONAME`: no name, only its ordinal
    CHECK_FALSE(find(dll, "secret", true));
    const Symbol* forwarder = find(dll, "GetTick", true);
    REQUIRE(forwarder);
    CHECK(forwarder->version_file == "KERNEL32.GetTickCount");
    CHECK(count_named(dll, "GetTick") == 1);
    CHECK(count_named(dll, "KERNEL32.GetTickCount") == 0);
    size_t exports = std::count_if(dll.symbols.begin(), dll.symbols.end(), [](const Symbol& s) { return s.defined; });
    CHECK(exports == 4);
    CHECK(std::find(dll.needed.begin(), dll.needed.end(), "KERNEL32.dll") != dll.needed.end());
  }
}

TEST_CASE("executable imports, in order, with their functions") {
  for (const std::string& dir : arch_dirs()) {
    CAPTURE(dir);
    Binary exe = read_ok(dir + "/app.exe");
    REQUIRE_FALSE(exe.needed.empty());
    CHECK(std::count(exe.needed.begin(), exe.needed.end(), "mydll.dll") == 1);
    CHECK(exe.delay_needed.empty());
    const Symbol* add = find(exe, "add", false);
    REQUIRE(add);
    CHECK(add->version_file == "mydll.dll");
    CHECK(find(exe, "mul", false));
    // the order objdump prints the import directory in
    std::string objdump = dir.ends_with("pe64") ? "x86_64-w64-mingw32-objdump" : "i686-w64-mingw32-objdump";
    auto dump = test::run_command(objdump + " -p " + test::shell_quote(dir + "/app.exe") +
                                  " | sed -n 's/^\\s*DLL Name: //p'");
    REQUIRE(dump.exit_code == 0);
    std::string expected;
    for (const std::string& name : exe.needed) expected += name + "\n";
    CHECK(dump.output == expected);
  }
}

TEST_CASE("delay-load imports: read from DataDirectory[13], absent when ld left it zero") {
  for (const std::string& dir : arch_dirs()) {
    CAPTURE(dir);
    Binary patched = read_ok(dir + "/app_delay_dd.exe");
    CHECK(patched.delay_needed == std::vector<std::string>{"mydll.dll"});
    CHECK(std::count(patched.needed.begin(), patched.needed.end(), "mydll.dll") == 0);
    const Symbol* add = find(patched, "add", false);
    REQUIRE(add);
    CHECK(add->version_file == "mydll.dll");
    CHECK(find(patched, "mul", false));
    Binary unpatched = read_ok(dir + "/app_delay.exe");  // GNU ld 2.40 output as linked
    CHECK(unpatched.delay_needed.empty());
  }
}

TEST_CASE("hostile PE inputs are errors, not crashes") {
  auto dirs = arch_dirs();
  REQUIRE_FALSE(dirs.empty());
  std::ifstream in(dirs.front() + "/mydll.dll", std::ios::binary);
  std::string full((std::istreambuf_iterator<char>(in)), {});
  test::TempDir tmp("hostile-pe");
  auto write = [&](const std::string& bytes) {
    std::string path = tmp.str() + "/x.dll";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
  };
  CHECK_FALSE(read_pe(write(""), "empty.dll"));
  CHECK_FALSE(read_pe(write("MZ"), "mz.dll"));
  CHECK_FALSE(read_pe(write(full.substr(0, 0x80)), "cut.dll"));
  Binary whole = read_ok(dirs.front() + "/mydll.dll");
  uint64_t raw_end = 0;  // what follows the last section's raw data (the COFF symbol table) is not loaded
  for (const Section& s : whole.sections) raw_end = std::max(raw_end, s.offset + s.size);
  for (size_t k = 1; k < 32; ++k) {
    size_t cut = full.size() * k / 32;
    auto r = read_pe(write(full.substr(0, cut)), "cut.dll");
    CHECK_MESSAGE(r.ok() == (cut >= raw_end), "cut at " << cut << " of " << full.size() << ", sections end at "
                                                        << raw_end << ": " << (r ? "read" : r.error()));
  }
  std::string bad_lfanew = full;
  bad_lfanew[0x3c] = '\xff', bad_lfanew[0x3d] = '\xff', bad_lfanew[0x3e] = '\xff', bad_lfanew[0x3f] = '\x7f';
  CHECK_FALSE(read_pe(write(bad_lfanew), "lfanew.dll"));
}

TEST_CASE("depscan on a 32-bit PE program: the DLL beside it found, the missing ones with a Windows fix") {
  std::string dir = test::fixtures_dir() + "/pe/pe32";
  auto run = test::run_command(test::depscan_bin() + " --format json " + test::shell_quote(dir + "/app.exe"));
  CHECK(run.exit_code == 1);
  auto report = nlohmann::json::parse(run.output);
  bool found_mydll = false;
  for (const auto& e : report["edges"])
    if (e["name"] == "mydll.dll") found_mydll = e["to"].is_number();
  CHECK(found_mydll);
  size_t missing = 0;
  for (const auto& f : report["findings"]) {
    if (f["code"] != "library-not-found") continue;
    ++missing;
    std::string fix = f["fix"];
    CHECK_MESSAGE(fix.find("application directory") != std::string::npos, fix);
    CHECK_MESSAGE(fix.find("LD_LIBRARY_PATH") == std::string::npos, fix);
  }
  CHECK(missing >= 2);  // KERNEL32.dll and msvcrt.dll: no Windows directory on this machine
}
