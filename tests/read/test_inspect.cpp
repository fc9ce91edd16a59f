// `depscan inspect`: the deep view of one file, in text and JSON, and its errors.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "support.h"

using namespace depscan;

namespace {

test::CommandResult inspect(const std::string& args) {
  return test::run_command(test::shell_quote(test::depscan_bin()) + " inspect " + args + " 2>&1");
}

std::string fixture(const std::string& name) { return test::shell_quote(test::fixtures_dir() + "/" + name); }

}  // namespace

TEST_CASE("inspect --format json: the model LIEF reads for an ELF library") {
  auto r = inspect(fixture("read/libuser.so.1") + " --format json --symbols");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  auto j = nlohmann::json::parse(r.output);
  CHECK(j["format"] == "elf");
  CHECK(j["bits"] == 64);
  CHECK(j["soname"] == "libuser.so.1");
  CHECK(j["needed"] == nlohmann::json::array({"libbase.so.1", "libc.so.6"}));
  CHECK(j["rpath"] == "$ORIGIN/../lib:/opt/x");
  CHECK(j["runpath"].is_null());
  CHECK(j["bind_now"] == true);
  CHECK(j["nodeflib"] == true);
  CHECK(j["version_needs"].size() == 3);
  CHECK(j["symbol_counts"]["total"] == j["symbols"].size());
  CHECK(j["sections"].size() > 20);
  bool hidden_foo = false;
  for (const auto& s : j["symbols"])
    hidden_foo |= s["name"] == "foo" && s["version"] == "BASE_1.0" && s["version_file"] == "libbase.so.1";
  CHECK(hidden_foo);
}

TEST_CASE("inspect text: version definitions with parents, and a PE DLL") {
  auto r = inspect(fixture("read/libbase.so.1"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("ELF 64-bit LSB, x86-64") != std::string::npos);
  CHECK(r.output.find("soname: libbase.so.1") != std::string::npos);
  CHECK(r.output.find("3 BASE_2.0 parents: BASE_1.0") != std::string::npos);
  auto pie = inspect(fixture("read/app"));  // the compiler's default: a position-independent executable
  REQUIRE_MESSAGE(pie.exit_code == 0, pie.output);
  CHECK(pie.output.find("DT_FLAGS_1=0x8000000 [PIE]") != std::string::npos);
  auto pe = inspect(fixture("pe/pe64/app_delay_dd.exe"));
  REQUIRE_MESSAGE(pe.exit_code == 0, pe.output);
  CHECK(pe.output.find("PE32+ AMD64") != std::string::npos);
  CHECK(pe.output.find("delay-load: mydll.dll") != std::string::npos);
}

TEST_CASE("inspect: the stack a file asks for and the page sizes its segments fit") {
  auto rwe = inspect(fixture("execstack/rwe/libcudnn.so.9"));
  REQUIRE_MESSAGE(rwe.exit_code == 0, rwe.output);
  CHECK(rwe.output.find("stack: PT_GNU_STACK RWE: executable") != std::string::npos);
  auto none = inspect(fixture("execstack/nostack/libcudnn.so.9"));
  CHECK(none.output.find("stack: no PT_GNU_STACK: executable presumed") != std::string::npos);
  auto plain = inspect(fixture("execstack/plain/libcudnn.so.9") + " --format json");
  auto j = nlohmann::json::parse(plain.output);
  CHECK(j["stack_flags"] == 6);
  CHECK(j["needs_executable_stack"] == false);
  auto aligned = inspect(fixture("pagesize/lib64k_align4k.so"));
  CHECK(aligned.output.find("pages: PT_LOAD segments fit pages up to 64 KiB (glibc 2.35 and later), 4 KiB before") !=
        std::string::npos);
  auto small = inspect(fixture("pagesize/lib16k.so") + " --format json");
  CHECK(nlohmann::json::parse(small.output)["largest_page_size"] == 16384);
}

namespace {

// PT_TLS's memory size and alignment as readelf reads them, of a file given as fixture() quotes it.
std::pair<unsigned long, unsigned long> readelf_tls(const std::string& quoted_path) {
  auto readelf = test::run_command("readelf -lW " + quoted_path + " | awk '$1 == \"TLS\" { print $6, $8 }'");
  unsigned long mem_size = 0, align = 0;
  REQUIRE_MESSAGE(std::sscanf(readelf.output.c_str(), "%lx %lx", &mem_size, &align) == 2, readelf.output);
  return {mem_size, align};
}

}  // namespace

TEST_CASE("inspect: the TLS block, and what initial-exec relocations name") {
  // The PT_TLS sizes compared with readelf's; the names are the fixture sources'.
  std::string over = fixture("statictls/over/libcudnn.so.9");
  auto [mem_size, align] = readelf_tls(over);
  auto own = inspect(over);
  REQUIRE_MESSAGE(own.exit_code == 0, own.output);
  CHECK(own.output.find("[STATIC_TLS]") != std::string::npos);
  CHECK(own.output.find("tls: " + std::to_string(mem_size) + " bytes aligned to " + std::to_string(align) +
                        "; initial-exec accesses (DF_STATIC_TLS) to libcudnn_block") != std::string::npos);
  auto other = inspect(fixture("statictls/extern/libcudnn.so.9") + " --format json");
  auto j = nlohmann::json::parse(other.output);
  CHECK(j["tls"].is_null());
  CHECK(j["static_tls"] == true);
  CHECK(j["static_tls_targets"] == nlohmann::json::array({"provided"}));
  auto dynamic = inspect(fixture("statictls/dynamic/libcudnn.so.9") + " --format json");
  auto d = nlohmann::json::parse(dynamic.output);
  CHECK(d["tls"]["size"] == readelf_tls(fixture("statictls/dynamic/libcudnn.so.9")).first);
  CHECK(d["static_tls"] == false);
}

TEST_CASE("inspect: the x86 ISA levels a file's GNU property note asks for") {
  CHECK(inspect(fixture("isalevel/v3/libcudnn.so.9")).output.find("\nisa needed: x86-64-v3\n") != std::string::npos);
  CHECK(inspect(fixture("isalevel/baseline/libcudnn.so.9")).output.find("isa needed") == std::string::npos);
  auto j = nlohmann::json::parse(inspect(fixture("isalevel/app_future") + " --format json").output);
  CHECK(j["x86_isa_needed"] == nlohmann::json::array({"x86-64-baseline", "unknown ISA bit 4"}));
}

TEST_CASE("inspect errors: one line, exit code 2") {
  test::TempDir dir("inspect");
  auto missing = inspect(test::shell_quote(dir.str() + "/nope.so"));
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("depscan: error: ") == 0);
  auto not_elf = inspect("/etc/hostname");
  CHECK(not_elf.exit_code == 2);
  CHECK(not_elf.output.find("not an ELF or PE file") != std::string::npos);
  std::string fifo = dir.str() + "/fifo";
  REQUIRE(test::run_command("mkfifo " + test::shell_quote(fifo)).exit_code == 0);
  auto r = inspect(test::shell_quote(fifo));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("FIFO") != std::string::npos);
  // a pipeline that asked for JSON gets JSON naming the error, the line on stderr aside
  auto json_missing = test::run_command(test::shell_quote(test::depscan_bin()) + " inspect --format json " +
                                        test::shell_quote(dir.str() + "/nope.so") + " 2>/dev/null");
  CHECK(json_missing.exit_code == 2);
  auto doc = nlohmann::json::parse(json_missing.output);
  CHECK(doc["path"] == dir.str() + "/nope.so");
  CHECK(doc["error"] == "No such file or directory");
}

TEST_CASE("inspect refuses a file larger than LIEF reads in full, without reading it") {
  test::TempDir dir("inspect-huge");
  std::string huge = dir.str() + "/libhuge.so";  // sparse: an ELF header, then 5 GiB of holes
  REQUIRE(test::run_command("head -c 64 /usr/lib/x86_64-linux-gnu/libz.so.1 > " + test::shell_quote(huge) +
                            " && truncate -s 5G " + test::shell_quote(huge)).exit_code == 0);
  auto r = inspect(test::shell_quote(huge));
  CHECK(r.exit_code == 2);
  CHECK(r.output == "depscan: error: " + huge + ": 5.0 GiB, larger than the 4 GiB LIEF reads in full (depscan FILE reads "
                    "its dependencies without LIEF)\n");
}

TEST_CASE("inspect reads a library with more dynamic entries than LIEF 0.9 reads") {
  test::TempDir dir("inspect-many");
  std::string lib = dir.str() + "/libmany.so", source = dir.str() + "/many.c";
  std::ofstream(source) << "int many(void) { return 1; }\n";
  std::string add;
  for (int i = 0; i < 1100; ++i) add += " --add-needed libn" + std::to_string(i) + ".so";
  REQUIRE(test::run_command("gcc -shared -fPIC -o " + test::shell_quote(lib) + " " + test::shell_quote(source) +
                            " && patchelf" + add + " " + test::shell_quote(lib)).exit_code == 0);
  auto r = test::run_command(test::shell_quote(test::depscan_bin()) + " inspect --format json " + test::shell_quote(lib));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  auto j = nlohmann::json::parse(r.output);
  std::set<std::string> needed;
  for (const auto& n : j["needed"]) needed.insert(n.get<std::string>());
  CHECK(needed.size() == j["needed"].size());
  CHECK(needed.count("libn0.so") == 1);
  CHECK(needed.count("libn1099.so") == 1);
  CHECK(needed.size() >= 1100);
}
