// The ELF readers on fixtures whose content is known from their sources (fixtures/read): exact
// values, LIEF agreement, the symbol count without section headers, other classes and byte
// orders, and readelf as a third opinion on the symbol table.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "analyzer/input/mapped_file.h"
#include "analyzer/read/elf_reader.h"
#include "analyzer/read/lief_elf_reader.h"
#include "read/compare.h"
#include "support.h"

using namespace depscan;

namespace {

std::string fixture(const std::string& name) { return test::fixtures_dir() + "/read/" + name; }

Binary read_fast_ok(const std::string& path) {
  auto mapped = MappedFile::open(path);
  REQUIRE_MESSAGE(mapped, path << ": " << (mapped ? "" : mapped.error()));
  auto binary = read_elf((*mapped)->bytes(), path);
  REQUIRE_MESSAGE(binary, path << ": " << (binary ? "" : binary.error()));
  return *binary;
}

const Symbol* find_symbol(const Binary& b, const std::string& name, const std::string& version) {
  for (const Symbol& s : b.symbols)
    if (s.name == name && s.version == version) return &s;
  return nullptr;
}

void check_same_as_lief(const std::string& path) {
  Binary fast = read_fast_ok(path);
  auto lief = read_elf_with_lief(path, path);
  REQUIRE_MESSAGE(lief, path << ": " << (lief ? "" : lief.error()));
  CHECK_MESSAGE(test::model_difference(fast, *lief).empty(), path << ": " << test::model_difference(fast, *lief));
}

}  // namespace

TEST_CASE("libuser: needed, soname, rpath, flags and version needs as linked") {
  Binary b = read_fast_ok(fixture("libuser.so.1"));
  CHECK(b.bits == 64);
  CHECK(b.little_endian);
  CHECK(b.machine == 62);
  CHECK(b.file_type == 3);
  CHECK(b.interpreter.empty());
  CHECK(b.soname == "libuser.so.1");
  CHECK(b.needed == std::vector<std::string>{"libbase.so.1", "libc.so.6"});
  CHECK(b.rpath == "$ORIGIN/../lib:/opt/x");
  CHECK_FALSE(b.runpath);
  CHECK(b.bind_now());
  CHECK(b.nodeflib());
  CHECK((b.dt_flags_1 & kDf1Origin));
  CHECK(b.has_dynamic);
  std::vector<std::string> needs;
  for (const VersionNeed& n : b.version_needs) needs.push_back(n.file + ":" + n.version);
  std::sort(needs.begin(), needs.end());
  CHECK(needs == std::vector<std::string>{"libbase.so.1:BASE_1.0", "libbase.so.1:BASE_2.0", "libc.so.6:GLIBC_2.2.5"});

  const Symbol* old_foo = find_symbol(b, "foo", "BASE_1.0");
  const Symbol* new_foo = find_symbol(b, "foo", "BASE_2.0");
  REQUIRE(old_foo);
  REQUIRE(new_foo);
  CHECK_FALSE(old_foo->defined);
  CHECK(old_foo->version_file == "libbase.so.1");
  const Symbol* weak = find_symbol(b, "maybe_missing", "");
  REQUIRE(weak);
  CHECK(weak->binding == SymbolBinding::Weak);
  CHECK_FALSE(weak->defined);
  CHECK(weak->version_index <= 1);
  size_t exports = std::count_if(b.symbols.begin(), b.symbols.end(),
                                 [](const Symbol& s) { return s.defined && s.name.starts_with("user_export_"); });
  CHECK(exports == 90);
  auto elf_sections = std::count_if(b.sections.begin(), b.sections.end(), [](const Section& s) { return s.name == ".dynsym"; });
  CHECK(elf_sections == 1);
}

TEST_CASE("libbase: version definitions with parents; defined symbols named by their own version") {
  Binary b = read_fast_ok(fixture("libbase.so.1"));
  REQUIRE(b.version_defs.size() == 3);
  CHECK(b.version_defs[0].base);
  CHECK(b.version_defs[0].name == "libbase.so.1");
  CHECK(b.version_defs[1].name == "BASE_1.0");
  CHECK(b.version_defs[2].name == "BASE_2.0");
  CHECK(b.version_defs[2].parents == std::vector<std::string>{"BASE_1.0"});
  const Symbol* old_foo = find_symbol(b, "foo", "BASE_1.0");
  const Symbol* new_foo = find_symbol(b, "foo", "BASE_2.0");  // LIEF's own accessor says BASE_1.0 here
  REQUIRE(old_foo);
  REQUIRE(new_foo);
  CHECK(old_foo->defined);
  CHECK(old_foo->hidden);
  CHECK_FALSE(new_foo->hidden);
  const Symbol* tls = find_symbol(b, "base_tls", "BASE_1.0");
  REQUIRE(tls);
  CHECK(tls->type == SymbolType::Tls);
  const Symbol* ifunc = find_symbol(b, "base_ifunc", "BASE_2.0");
  REQUIRE(ifunc);
  CHECK(ifunc->type == SymbolType::GnuIfunc);
  const Symbol* prot = find_symbol(b, "base_protected", "BASE_2.0");
  REQUIRE(prot);
  CHECK(prot->visibility == 3);
  const Symbol* weak = find_symbol(b, "base_weak", "BASE_2.0");
  REQUIRE(weak);
  CHECK(weak->binding == SymbolBinding::Weak);
}

TEST_CASE("the executable: interpreter, RUNPATH, PIE") {
  Binary b = read_fast_ok(fixture("app"));
  CHECK(b.interpreter == "/lib64/ld-linux-x86-64.so.2");
  CHECK(b.runpath == "$ORIGIN");
  CHECK_FALSE(b.rpath);
  CHECK(b.is_executable());
  CHECK(b.needed == std::vector<std::string>{"libuser.so.1", "libc.so.6"});
}

TEST_CASE("every fixture reads the same with LIEF") {
  for (std::string name : {"libbase.so.1", "libuser.so.1", "libuser_sysv.so.1", "app"}) check_same_as_lief(fixture(name));
}

TEST_CASE("a TLS descriptor in DT_JMPREL (-mtls-dialect=gnu2) is bound at load, not a PLT call") {
  std::string lib = test::fixtures_dir() + "/symbols/own_tls_interposed/libtlsb.so";
  Binary b = read_fast_ok(lib);
  const Symbol* tls = find_symbol(b, "bundled_tls", "");
  REQUIRE(tls);
  CHECK(tls->type == SymbolType::Tls);
  CHECK(tls->bound_at_load);
  CHECK_FALSE(tls->plt_called);
  CHECK(tls->own_reference());
  check_same_as_lief(lib);
}

TEST_CASE("without section headers the symbol count comes from DT_GNU_HASH or DT_HASH") {
  for (std::string lib : {"libuser", "libuser_sysv"}) {
    Binary with = read_fast_ok(fixture(lib + ".so.1"));
    Binary without = read_fast_ok(fixture(lib + "_noshdr.so.1"));
    CHECK(without.sections.empty());
    CHECK_MESSAGE(test::model_difference(with, without, false).empty(), lib << ": " << test::model_difference(with, without, false));
    CHECK(without.symbols.size() == with.symbols.size());
  }
}

TEST_CASE("ELF32 and big-endian libraries") {
  struct Expect { const char* target; int bits; bool little; uint16_t machine; };
  for (Expect e : {Expect{"i386-linux-gnu", 32, true, 3}, Expect{"powerpc-linux-gnu", 32, false, 20},
                   Expect{"powerpc64-linux-gnu", 64, false, 21}, Expect{"aarch64-linux-gnu", 64, true, 183}}) {
    std::string path = fixture(std::string(e.target) + "/libtiny.so.1");
    if (!std::filesystem::exists(path)) {
      MESSAGE("no cross fixture for " << e.target);
      continue;
    }
    CAPTURE(path);
    Binary b = read_fast_ok(path);
    CHECK(b.bits == e.bits);
    CHECK(b.little_endian == e.little);
    CHECK(b.machine == e.machine);
    CHECK(b.soname == "libtiny.so.1");
    CHECK(b.needed == std::vector<std::string>{"libtinydep.so"});
    CHECK(b.rpath.value_or(b.runpath.value_or("")) == "/opt/tiny");
    CHECK(b.bind_now());
    REQUIRE(b.version_defs.size() == 3);
    CHECK(b.version_defs[2].name == "TINY_2");
    CHECK(b.version_defs[2].parents.empty());  // lld writes no parent verdaux (readelf -V: "Cnt: 1")
    REQUIRE(b.version_needs.size() == 1);
    CHECK(b.version_needs[0].file == "libtinydep.so");
    CHECK(b.version_needs[0].version == "DEP_1");
    CHECK(find_symbol(b, "tiny_b", "TINY_1"));
    CHECK(find_symbol(b, "tiny_b", "TINY_2"));
    const Symbol* dep = find_symbol(b, "tiny_dep", "DEP_1");
    REQUIRE(dep);
    CHECK_FALSE(dep->defined);
    CHECK(dep->version_file == "libtinydep.so");
    check_same_as_lief(path);
  }
}

TEST_CASE("readelf agrees on the dynamic symbol count and the versions of every fixture symbol") {
  for (std::string name : {"libbase.so.1", "libuser.so.1", "powerpc-linux-gnu/libtiny.so.1"}) {
    std::string path = fixture(name);
    if (!std::filesystem::exists(path)) continue;
    Binary b = read_fast_ok(path);
    auto listing = test::run_command("readelf --dyn-syms -W " + test::shell_quote(path));
    REQUIRE(listing.exit_code == 0);
    size_t seen = 0;
    for (const Symbol& s : b.symbols) {
      std::string shown(s.name);
      if (!s.version.empty() && s.version != s.name) shown += fmt::format("{}{}", s.defined && !s.hidden ? "@@" : "@", s.version);
      bool found = listing.output.find(" " + shown + "\n") != std::string::npos ||
                   listing.output.find(" " + shown + " (") != std::string::npos;
      CHECK_MESSAGE(found, name << ": readelf does not list " << shown);
      seen += found;
    }
    CHECK(listing.output.find("contains " + std::to_string(b.symbols.size() + 1) + " entries") != std::string::npos);
    CHECK(seen == b.symbols.size());
  }
}

TEST_CASE("a scan's read keeps of the section table only .text and .rodata, and the rest of the model") {
  std::string path = fixture("libuser.so.1");
  Binary all = read_fast_ok(path);
  auto mapped = MappedFile::open(path);
  REQUIRE(mapped);
  auto scan = read_elf((*mapped)->bytes(), path, ReadOptions{true, false});
  REQUIRE_MESSAGE(scan, (scan ? "" : scan.error()));
  std::vector<Section> kept;
  std::copy_if(all.sections.begin(), all.sections.end(), std::back_inserter(kept),
               [](const Section& s) { return s.name == ".text" || s.name == ".rodata"; });
  REQUIRE(kept.size() == 2);
  CHECK(all.sections.size() > 20);
  CHECK(scan->sections == kept);
  scan->sections = all.sections;
  CHECK(test::model_difference(*scan, all).empty());
}
