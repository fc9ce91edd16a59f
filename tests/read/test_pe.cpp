// The PE reader against the mingw fixtures (fixtures/pe): imports in order, delay-load imports,
// exports including ordinal-only ones and a forwarder listed once.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "analyzer/check/windows_dlls.h"
#include "analyzer/read/pe_reader.h"
#include "analyzer/resolve/pe_search.h"
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

namespace {

uint32_t u32_at(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, 4);
  return v;
}

void put_u32(std::string& bytes, size_t at, uint32_t v) { std::memcpy(bytes.data() + at, &v, 4); }

}  // namespace

TEST_CASE("hostile PE resources and section tables are refused before LIEF recurses or copies without bound") {
  auto dirs = arch_dirs();
  REQUIRE_FALSE(dirs.empty());
  std::ifstream in(dirs.front() + "/mydll.dll", std::ios::binary);
  const std::string full((std::istreambuf_iterator<char>(in)), {});
  test::TempDir tmp("hostile-pe-tree");
  auto read_written = [&](const std::string& bytes) {
    std::string path = tmp.str() + "/x.dll";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return read_pe(path, "x.dll");
  };
  size_t coff = u32_at(full, 0x3c) + 4;
  uint16_t magic = static_cast<uint8_t>(full[coff + 20]) | static_cast<uint8_t>(full[coff + 21]) << 8;
  size_t resource_directory = coff + 20 + (magic == 0x20b ? 112 : 96) + 2 * 8;
  size_t first_section = coff + 20 + (static_cast<uint8_t>(full[coff + 16]) | static_cast<uint8_t>(full[coff + 17]) << 8);
  uint32_t rva = u32_at(full, first_section + 12), raw = u32_at(full, first_section + 20);

  std::string loop = full;  // a resource directory whose one entry is itself: LIEF 0.9 recursed until SIGSEGV
  put_u32(loop, resource_directory, rva);
  put_u32(loop, resource_directory + 4, 24);
  for (size_t i = 0; i < 24; ++i) loop[raw + i] = 0;
  loop[raw + 14] = 1;                       // one ID entry
  put_u32(loop, raw + 20, 0x80000000u);     // a subdirectory at offset 0: the root again
  auto looped = read_written(loop);
  REQUIRE_FALSE(looped);
  CHECK(looped.error().find("resource directory nested more than 16 levels deep") != std::string::npos);

  std::string many = full;  // LIEF copies each section's raw data; the table is read as far as the loader reads it
  many[coff + 2] = '\xc8', many[coff + 3] = 0;
  auto refused = read_written(many);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("more than 96 sections") != std::string::npos);
  CHECK(read_written(full));
}

namespace {

// `depscan --format json ARGS` (ARGS quoted by the caller).
nlohmann::json scan_json_args(const std::string& args, int expected_exit) {
  auto run = test::run_command(test::depscan_bin() + " --format json " + args);
  CHECK_MESSAGE(run.exit_code == expected_exit, args << ": " << run.output);
  return nlohmann::json::parse(run.output);
}

nlohmann::json scan_json(const std::string& path, int expected_exit) {
  return scan_json_args(test::shell_quote(path), expected_exit);
}

std::vector<nlohmann::json> findings_with(const nlohmann::json& report, const std::string& code) {
  std::vector<nlohmann::json> out;
  for (const auto& f : report["findings"])
    if (f["code"] == code) out.push_back(f);
  return out;
}

}  // namespace

TEST_CASE("a 32-bit PE program on Linux: its DLL found beside it, the Windows system DLLs named, not errors") {
  auto report = scan_json(test::fixtures_dir() + "/pe/pe32/app.exe", 0);
  std::set<std::string> system_provided;
  bool found_mydll = false;
  for (const auto& e : report["edges"]) {
    if (e["name"] == "mydll.dll") found_mydll = e["to"].is_number();
    if (e.value("system_provided", false)) {
      system_provided.insert(e["name"].get<std::string>());
      CHECK(e["to"].is_null());
      CHECK(e["how_detail"] == "Windows system DLL, not in the scan");
    }
  }
  CHECK(found_mydll);
  CHECK(system_provided == std::set<std::string>{"KERNEL32.dll", "msvcrt.dll"});
  CHECK(findings_with(report, "library-not-found").empty());
  auto unchecked = findings_with(report, "windows-system-dll");
  REQUIRE(unchecked.size() == 1);
  CHECK(unchecked[0]["severity"] == "info");
  CHECK(unchecked[0]["message"].get<std::string>().starts_with("KERNEL32.dll, msvcrt.dll: Windows system DLLs"));
  // No glibc loader runs a Windows program.
  CHECK(report["root_loaders"] == nlohmann::json::parse(R"([{"glibc": null, "musl": false, "own_loader": null}])"));
}

TEST_CASE("a PE program without its DLL, or without the Visual C++ runtime: errors with Windows fixes") {
  for (const std::string arch : {"pe64", "pe32"}) {
    CAPTURE(arch);
    test::TempDir tmp("pe-alone");
    std::filesystem::copy_file(test::fixtures_dir() + "/pe/" + arch + "/app.exe", tmp.str() + "/app.exe");
    auto alone = scan_json(tmp.str() + "/app.exe", 1);
    auto missing = findings_with(alone, "library-not-found");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0]["message"].get<std::string>().starts_with("mydll.dll: not found in the DLL search order"));
    std::string fix = missing[0]["fix"];
    CHECK_MESSAGE(fix.starts_with("put mydll.dll in the application directory"), fix);
    CHECK_MESSAGE(fix.find("LD_LIBRARY_PATH") == std::string::npos, fix);

    auto vcrt = scan_json(test::fixtures_dir() + "/pe/" + arch + "/app_vcrt.exe", 1);
    auto runtime = findings_with(vcrt, "library-not-found");
    REQUIRE(runtime.size() == 1);
    CHECK(runtime[0]["message"].get<std::string>().starts_with("vcruntime140.dll: "));
    CHECK(runtime[0]["fix"].get<std::string>().find("Visual C++ 2015-2022 Redistributable") != std::string::npos);
  }
}

TEST_CASE("a CUDA driver-API program: nvcuda.dll is the driver's, unchecked without a Windows tree, an error in one") {
  for (const std::string arch : {"pe64", "pe32"}) {
    CAPTURE(arch);
    auto bare = scan_json(test::fixtures_dir() + "/pe/" + arch + "/app_cuda.exe", 0);
    bool driver_edge = false;
    for (const auto& e : bare["edges"])
      if (e["name"] == "nvcuda.dll")
        driver_edge = e.value("system_provided", false) && e["how_detail"] == "NVIDIA driver DLL, not in the scan";
    CHECK(driver_edge);
    auto unchecked = findings_with(bare, "windows-driver-dll");
    REQUIRE(unchecked.size() == 1);
    CHECK(unchecked[0]["message"].get<std::string>().starts_with("nvcuda.dll: installed by the NVIDIA display driver"));
    CHECK(findings_with(bare, "windows-system-dll").size() == 1);  // KERNEL32.dll, msvcrt.dll, not nvcuda.dll

    test::TempDir tree("pe-windows-tree");
    std::filesystem::create_directories(tree.path() / "Windows/System32");
    std::filesystem::create_directories(tree.path() / "app");
    std::filesystem::copy_file(test::fixtures_dir() + "/pe/" + arch + "/app_cuda.exe", tree.path() / "app/app_cuda.exe");
    auto in_tree = scan_json_args("--root " + test::shell_quote(tree.str()) + " /app/app_cuda.exe", 1);
    std::map<std::string, std::string> fixes;
    for (const auto& f : findings_with(in_tree, "library-not-found")) {
      std::string message = f["message"];
      fixes[message.substr(0, message.find(':'))] = f["fix"];
    }
    REQUIRE(fixes.size() == 3);
    CHECK(fixes["nvcuda.dll"].starts_with("nvcuda.dll comes with the NVIDIA display driver: install the driver"));
    CHECK(fixes["KERNEL32.dll"].starts_with("KERNEL32.dll is part of Windows, and the scanned Windows directory lacks it"));
    CHECK(findings_with(in_tree, "windows-driver-dll").empty());
    CHECK(findings_with(in_tree, "no-ld-so-cache").empty());  // a Windows tree has no /etc/ld.so.cache to miss
  }
}

TEST_CASE("the Windows DLL data: system and redistributable names, lower case, disjoint, with sources") {
  const auto& dlls = load_windows_dlls();
  REQUIRE_MESSAGE(dlls, (dlls ? "" : dlls.error()));
  CHECK(std::find(dlls->system.begin(), dlls->system.end(), "kernel32.dll") != dlls->system.end());
  CHECK(std::find(dlls->system.begin(), dlls->system.end(), "nvcuda.dll") == dlls->system.end());  // the driver's, not Windows'
  CHECK(dlls->is_driver_dll("NVCUDA.DLL"));
  CHECK_FALSE(dlls->is_driver_dll("kernel32.dll"));
  CHECK_FALSE(dlls->driver.source.empty());
  CHECK_FALSE(dlls->system_source.empty());
  const WindowsRedistributable* vcrt = dlls->redistributable_of("VCRUNTIME140.dll");
  REQUIRE(vcrt);
  CHECK_FALSE(vcrt->source.empty());
  CHECK_FALSE(dlls->redistributable_of("kernel32.dll"));
  for (const std::string& name : dlls->system) {
    CHECK(name == pe_name_key(name));
    CHECK_FALSE(dlls->redistributable_of(name));
  }
}
