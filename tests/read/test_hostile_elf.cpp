// Hostile ELF inputs, generated from a real fixture library: each must give an Error (or a valid
// model where the damaged file is still valid), never a crash, and finish fast.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "analyzer/input/file_source.h"
#include "analyzer/read/elf_reader.h"
#include "read/compare.h"
#include "analyzer/read/lief_elf_reader.h"
#include "read/byte_edit.h"
#include "support.h"

using namespace depscan;

namespace {

using test::Bytes;
using test::get;
using test::put;

Bytes load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open " << path);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

Bytes fixture_library() { return load(test::fixtures_dir() + "/read/libuser.so.1"); }

// The input as a scan reads it: written to a file, read with pread (FileSource).
Expected<Binary> read_from_file(const Bytes& b) {
  static const test::TempDir dir("hostile-file");
  std::string path = dir.str() + "/hostile.so";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(b.data()), b.size());
  auto file = FileSource::open(path);
  REQUIRE_MESSAGE(file, path << ": " << (file ? "" : file.error()));
  return read_elf(**file, "hostile.so");
}

// Every input is read from memory and from a file: both must give the same model or the same error.
Expected<Binary> read(const Bytes& b) {
  auto from_memory = read_elf(ByteView(b.data(), b.size()), "hostile.so");
  auto from_file = read_from_file(b);
  if (from_memory && from_file) CHECK(test::model_difference(*from_memory, *from_file) == "");
  else if (!from_memory && !from_file) CHECK(from_memory.error() == from_file.error());
  else CHECK_MESSAGE(false, "only one read fails: " << (from_memory ? from_file.error() : from_memory.error()));
  return from_memory;
}

std::string error_of(const Bytes& b) {
  auto r = read(b);
  return r ? std::string() : r.error();
}

// The layout of the (x86-64, little-endian) fixture, found by walking its own headers.
struct Layout {
  uint64_t dynamic = 0;  // file offset of PT_DYNAMIC
  size_t dynamic_count = 0;
  const Bytes& b;

  explicit Layout(const Bytes& bytes) : b(bytes) {
    uint64_t phoff = get<uint64_t>(b, 32);
    for (uint16_t i = 0; i < get<uint16_t>(b, 56); ++i) {
      uint64_t p = phoff + 56u * i;
      if (get<uint32_t>(b, p) == 2) dynamic = get<uint64_t>(b, p + 8), dynamic_count = get<uint64_t>(b, p + 32) / 16;
    }
    REQUIRE(dynamic != 0);
  }
  // File offset of the first dynamic entry with this tag.
  uint64_t entry(uint64_t tag) const {
    for (size_t i = 0; i < dynamic_count; ++i)
      if (get<uint64_t>(b, dynamic + 16 * i) == tag) return dynamic + 16 * i;
    FAIL("no dynamic tag " << tag);
    return 0;
  }
  uint64_t value(uint64_t tag) const { return get<uint64_t>(b, entry(tag) + 8); }
  uint64_t file_offset(uint64_t vaddr) const {
    uint64_t phoff = get<uint64_t>(b, 32);
    for (uint16_t i = 0; i < get<uint16_t>(b, 56); ++i) {
      uint64_t p = phoff + 56u * i, va = get<uint64_t>(b, p + 16), size = get<uint64_t>(b, p + 32);
      if (get<uint32_t>(b, p) == 1 && vaddr >= va && vaddr < va + size) return get<uint64_t>(b, p + 8) + vaddr - va;
    }
    FAIL("address not mapped");
    return 0;
  }
};

constexpr uint64_t kDtNeeded = 1, kDtStrtab = 5, kDtSymtab = 6, kDtStrsz = 10, kDtDebug = 21,
                   kDtVerneed = 0x6ffffffe, kDtVerneednum = 0x6fffffff;

}  // namespace

TEST_CASE("the unmodified fixture reads") { CHECK(error_of(fixture_library()) == ""); }

TEST_CASE("empty, tiny and magic-only inputs") {
  CHECK(error_of(Bytes{}) == "file too small for an ELF header");
  CHECK(error_of(Bytes{0x7f, 'E', 'L', 'F'}) == "file too small for an ELF header");
  Bytes magic16 = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK(error_of(magic16) == "file truncated inside the ELF header");
  magic16[4] = 7;
  CHECK(error_of(magic16) == "unknown ELF class 7");
  magic16[4] = 2, magic16[5] = 0;
  CHECK(error_of(magic16) == "unknown ELF data encoding 0");
}

TEST_CASE("truncated at every 1/64 of the file and byte by byte near the headers") {
  Bytes full = fixture_library();
  uint64_t shoff = get<uint64_t>(full, 40);
  std::vector<size_t> cuts;
  for (size_t k = 0; k < 64; ++k) cuts.push_back(full.size() * k / 64);
  for (size_t n = 0; n < 1024; ++n) cuts.push_back(n);                        // ELF and program headers
  for (size_t n = shoff - 64; n < full.size(); ++n) cuts.push_back(n);          // section headers
  Layout layout(full);
  for (size_t n = layout.dynamic; n < layout.dynamic + 16 * layout.dynamic_count; ++n) cuts.push_back(n);
  size_t errors = 0;
  for (size_t n : cuts) {
    Bytes cut(full.begin(), full.begin() + n);
    auto r = read(cut);
    CHECK_MESSAGE(!r, "truncated to " << n << " of " << full.size() << " bytes but read without error");
    errors += !r;
  }
  MESSAGE(cuts.size() << " truncations, " << errors << " errors");
}

TEST_CASE("huge counts and offsets in the ELF header") {
  Bytes b = fixture_library();
  SUBCASE("e_phnum = 0xffff") {
    put<uint16_t>(b, 56, 0xffff);
    CHECK(error_of(b).find("program header table (65535 entries) extends past end of file") != std::string::npos);
  }
  SUBCASE("e_shnum = 0xffff") {
    put<uint16_t>(b, 60, 0xffff);
    CHECK(error_of(b).find("section header table (65535 entries) extends past end of file") != std::string::npos);
  }
  SUBCASE("e_phoff near UINT64_MAX") {
    put<uint64_t>(b, 32, UINT64_MAX - 8);
    CHECK(error_of(b) == "e_phoff past end of file");
  }
  SUBCASE("e_shoff near UINT64_MAX") {
    put<uint64_t>(b, 40, UINT64_MAX - 8);
    CHECK(error_of(b) == "e_shoff past end of file");
  }
  SUBCASE("e_phoff so that the table wraps") {
    put<uint64_t>(b, 32, b.size() - 8);
    CHECK(error_of(b).find("program header table") != std::string::npos);
  }
  SUBCASE("e_shstrndx out of range") {
    put<uint16_t>(b, 62, 0xfff0);
    CHECK(error_of(b).find("e_shstrndx 65520 out of range") != std::string::npos);
  }
  SUBCASE("e_phentsize too small") {
    put<uint16_t>(b, 54, 8);
    CHECK(error_of(b) == "e_phentsize 8 too small");
  }
  SUBCASE("a segment past the end of the file") {
    put<uint64_t>(b, get<uint64_t>(b, 32) + 32, UINT64_MAX - 4);  // p_filesz of the first segment
    CHECK(error_of(b).find("segment 0") != std::string::npos);
  }
}

TEST_CASE("dynamic section pointing outside") {
  Bytes b = fixture_library();
  Layout layout(b);
  SUBCASE("DT_STRTAB outside every PT_LOAD") {
    put<uint64_t>(b, layout.entry(kDtStrtab) + 8, 0xdead00000ull);
    CHECK(error_of(b) == "DT_STRTAB not inside any PT_LOAD segment");
  }
  SUBCASE("DT_STRSZ past the segment") {
    put<uint64_t>(b, layout.entry(kDtStrsz) + 8, UINT64_MAX);
    CHECK(error_of(b) == "DT_STRSZ extends past the segment holding DT_STRTAB");
  }
  SUBCASE("a DT_NEEDED string without terminator inside DT_STRSZ") {
    put<uint64_t>(b, layout.entry(kDtStrsz) + 8, layout.value(kDtNeeded) + 3);
    CHECK(error_of(b).find("DT_NEEDED string at offset") != std::string::npos);
    CHECK(error_of(b).find("has no terminator") != std::string::npos);
  }
  SUBCASE("a DT_NEEDED offset past the string table") {
    put<uint64_t>(b, layout.entry(kDtNeeded) + 8, 0x7fffffff);
    CHECK(error_of(b).find("past the end of the string table") != std::string::npos);
  }
  SUBCASE("the last string of the table loses its terminator") {
    uint64_t end = layout.file_offset(layout.value(kDtStrtab)) + layout.value(kDtStrsz) - 1;
    b[end] = 'A';
    // that string is the fixture's DT_RPATH, which the reader keeps: refused, naming it
    CHECK(error_of(b).find("DT_RPATH string at offset") != std::string::npos);
    CHECK(error_of(b).find("has no terminator") != std::string::npos);
  }
  SUBCASE("DT_SYMTAB outside every PT_LOAD") {
    put<uint64_t>(b, layout.entry(kDtSymtab) + 8, 0xdead00000ull);
    CHECK(error_of(b).find("dynamic symbol table") != std::string::npos);
  }
  SUBCASE("no DT_STRTAB at all") {
    put<uint64_t>(b, layout.entry(kDtStrtab), kDtDebug);
    CHECK(error_of(b) == "dynamic section names strings but has no DT_STRTAB");
  }
}

TEST_CASE("the PLT's relocations from hostile headers") {
  // libhost.so calls its own fixture_marker through its PLT: one R_X86_64_JUMP_SLOT.
  Bytes b = load(test::fixtures_dir() + "/resolve/loadedfirst/host/libhost.so");
  Layout layout(b);
  constexpr uint64_t kDtPltrelsz = 2, kDtPltrel = 20, kDtJmprel = 23;
  auto marker_called = [&]() {
    auto r = read(b);
    REQUIRE(r);
    auto marker = std::ranges::find_if(r->symbols, [](const Symbol& s) { return s.name == "fixture_marker"; });
    REQUIRE(marker != r->symbols.end());
    return marker->plt_called;
  };
  REQUIRE(marker_called());
  SUBCASE("DT_PLTRELSZ claims the whole address space") {
    put<uint64_t>(b, layout.entry(kDtPltrelsz) + 8, UINT64_MAX);
    CHECK(error_of(b) == "DT_JMPREL (768614336404564650 entries) not inside any PT_LOAD segment");
  }
  SUBCASE("DT_JMPREL outside every PT_LOAD") {
    put<uint64_t>(b, layout.entry(kDtJmprel) + 8, 0xdead00000ull);
    CHECK(error_of(b) == "DT_JMPREL (1 entries) not inside any PT_LOAD segment");
  }
  SUBCASE("no DT_PLTREL, or one naming neither RELA nor REL: the entries' kind is unknown, nothing is marked") {
    for (uint64_t tag_or_kind : {kDtDebug, uint64_t{99}}) {
      Bytes copy = b;
      if (tag_or_kind == kDtDebug) put<uint64_t>(copy, layout.entry(kDtPltrel), kDtDebug);
      else put<uint64_t>(copy, layout.entry(kDtPltrel) + 8, tag_or_kind);
      std::swap(copy, b);
      CHECK_FALSE(marker_called());
      std::swap(copy, b);
    }
  }
  SUBCASE("a machine whose relocation types are not known (LoongArch): neither a PLT call nor bound at load") {
    put<uint16_t>(b, 18, 258);  // e_machine
    auto r = read(b);
    REQUIRE(r);
    auto marker = std::ranges::find_if(r->symbols, [](const Symbol& s) { return s.name == "fixture_marker"; });
    REQUIRE(marker != r->symbols.end());
    CHECK_FALSE(marker->plt_called);
    CHECK_FALSE(marker->bound_at_load);
  }
}

TEST_CASE("initial-exec TLS relocations and PT_TLS from hostile headers") {
  // A library flagged DF_STATIC_TLS, whose DT_RELA table the reader walks for thread-pointer relocations.
  Bytes b = load(test::fixtures_dir() + "/statictls/over/libcudnn.so.9");
  Layout layout(b);
  constexpr uint64_t kDtRela = 7, kDtRelasz = 8;
  REQUIRE(error_of(b) == "");
  SUBCASE("DT_RELASZ claims the whole address space: the count is capped, then checked") {
    put<uint64_t>(b, layout.entry(kDtRelasz) + 8, UINT64_MAX);
    CHECK(error_of(b) == "DT_RELA (768614336404564650 entries) not inside any PT_LOAD segment");
  }
  SUBCASE("DT_RELA outside every PT_LOAD") {
    put<uint64_t>(b, layout.entry(kDtRela) + 8, 0xdead00000ull);
    CHECK(error_of(b).find("DT_RELA (") == 0);
    CHECK(error_of(b).find("not inside any PT_LOAD segment") != std::string::npos);
  }
  SUBCASE("an empty DT_RELA: no relocation named") {
    put<uint64_t>(b, layout.entry(kDtRelasz) + 8, 0);
    auto r = read(b);
    REQUIRE(r);
    CHECK(r->static_tls_symbols.empty());
  }
  SUBCASE("a relocation naming a symbol past the table is kept as read, for the check to skip") {
    uint64_t table = layout.file_offset(layout.value(kDtRela));
    bool patched = false;
    for (uint64_t at = table; at < table + layout.value(kDtRelasz); at += 24)
      if ((get<uint64_t>(b, at + 8) & 0xffffffff) == 18)  // R_X86_64_TPOFF64
        put<uint64_t>(b, at + 8, (uint64_t{0xffffff} << 32) | 18), patched = true;
    REQUIRE(patched);
    auto r = read(b);
    REQUIRE(r);
    CHECK(r->static_tls_symbols == std::vector<uint32_t>{0xffffff});
  }
  SUBCASE("a PT_TLS of 2^63 bytes aligned to 2^62 is read as it is") {
    uint64_t phoff = get<uint64_t>(b, 32);
    for (uint16_t i = 0; i < get<uint16_t>(b, 56); ++i)
      if (uint64_t p = phoff + 56u * i; get<uint32_t>(b, p) == 7)
        put<uint64_t>(b, p + 40, uint64_t{1} << 63), put<uint64_t>(b, p + 48, uint64_t{1} << 62);
    auto r = read(b);
    REQUIRE(r);
    CHECK(r->tls_size == uint64_t{1} << 63);
    CHECK(r->tls_align == uint64_t{1} << 62);
  }
}

TEST_CASE("version need chains that loop, stop early or claim too much") {
  Bytes b = fixture_library();
  Layout layout(b);
  uint64_t verneed = layout.file_offset(layout.value(kDtVerneed));
  REQUIRE(layout.value(kDtVerneednum) == 2);
  SUBCASE("huge DT_VERNEEDNUM") {
    put<uint64_t>(b, layout.entry(kDtVerneednum) + 8, 0xffffffffull);
    CHECK(error_of(b).find("DT_VERNEEDNUM 4294967295 exceeds") != std::string::npos);
  }
  SUBCASE("DT_VERNEEDNUM larger than the chain (a reader trusting it would loop on the last entry)") {
    put<uint64_t>(b, layout.entry(kDtVerneednum) + 8, 5);
    CHECK(error_of(b) == "verneed chain ends after 2 of 5 DT_VERNEEDNUM entries");
  }
  SUBCASE("vn_next pointing back (a loop in 32-bit address arithmetic)") {
    put<uint32_t>(b, verneed + 12, 0xfffffff0u);
    CHECK(error_of(b) == "verneed entry 1 lies outside its segment");
  }
  SUBCASE("no DT_VERNEEDNUM and a chain stepping one byte at a time") {
    put<uint64_t>(b, layout.entry(kDtVerneednum), kDtDebug);
    put<uint32_t>(b, verneed + 12, 1);
    auto r = read(b);
    REQUIRE_FALSE(r);
    CHECK(r.error() == "vn_file string offset 0x10000005 past the end of the string table");
  }
  SUBCASE("vna_next 0 before vn_cnt entries") {
    uint64_t aux = verneed + get<uint32_t>(b, verneed + 8);
    REQUIRE(get<uint16_t>(b, verneed + 2) == 2);
    put<uint32_t>(b, aux + 12, 0);
    CHECK(error_of(b) == "vernaux chain ends after 1 of 2 entries");
  }
  SUBCASE("vn_aux past the segment") {
    put<uint32_t>(b, verneed + 8, 0x7ffffff0u);
    CHECK(error_of(b) == "vernaux entry 0 lies outside its segment");
  }
}

TEST_CASE("random bytes after the ELF magic never crash") {
  std::mt19937_64 rng(12345);
  size_t accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    Bytes b(64 + rng() % 8192);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    std::memcpy(b.data(), "\x7f" "ELF", 4);
    if (i % 2) b[4] = 1 + (i / 2) % 2, b[5] = 1 + (i / 4) % 2;  // a valid class and byte order
    accepted += read(b).ok();
  }
  MESSAGE("random inputs accepted as (empty) valid ELF: " << accepted);
}

TEST_CASE("random mutations of a real library never crash") {
  Bytes original = fixture_library();
  std::mt19937_64 rng(777);
  size_t errors = 0;
  for (int i = 0; i < 3000; ++i) {
    Bytes b = original;
    int flips = 1 + rng() % 8;
    for (int f = 0; f < flips; ++f) {
      size_t at = rng() % 8192 < 6000 ? rng() % 0x1800 : rng() % b.size();  // mostly the dynamic-linking view
      if (rng() % 4 == 0 && at + 8 <= b.size()) put<uint64_t>(b, at, rng());
      else b[at] = static_cast<uint8_t>(rng());
    }
    errors += !read(b).ok();
  }
  MESSAGE("mutations rejected: " << errors << " of 3000");
}

TEST_CASE("the LIEF reader turns hostile files into errors, without hanging on a FIFO") {
  test::TempDir dir("hostile-lief");
  Bytes full = fixture_library();
  auto write = [&](const std::string& name, const Bytes& b) {
    std::string path = dir.str() + "/" + name;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
    return path;
  };
  CHECK_FALSE(read_elf_with_lief(write("empty", {}), "empty"));
  for (size_t k = 1; k < 16; ++k) {
    Bytes cut(full.begin(), full.begin() + full.size() * k / 16);
    auto r = read_elf_with_lief(write("cut", cut), "cut");
    CHECK_MESSAGE(!r, "LIEF accepted a file cut to " << cut.size() << " bytes");
  }
  Bytes garbage(4096, 0x41);
  std::memcpy(garbage.data(), "\x7f" "ELF", 4);
  CHECK_FALSE(read_elf_with_lief(write("garbage", garbage), "garbage"));
  std::string fifo = dir.str() + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto r = read_elf_with_lief(fifo, "fifo");
  REQUIRE_FALSE(r);
  CHECK(r.error() == "not a regular file");
  CHECK_FALSE(read_elf_with_lief(dir.str() + "/missing", "missing"));
}
