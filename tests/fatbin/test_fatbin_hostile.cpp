// Hostile fatbin inputs: truncated containers, huge sizes, wrapping offsets, broken section
// tables. Each must give a one-line error (or nothing), never a crash, and the walk goes on.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <random>

#include "fatbin_support.h"
#include "toolchains.h"

using namespace depscan;
using namespace depscan::test;

namespace {

using Bytes = std::vector<uint8_t>;

template <class T>
void put(Bytes& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<uint8_t>(uint64_t(value) >> (8 * i)));
}

template <class T>
void poke(Bytes& out, size_t at, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out[at + i] = static_cast<uint8_t>(uint64_t(value) >> (8 * i));
}

struct EntrySpec {
  uint16_t kind = 2;
  uint32_t header_size = 64;
  uint64_t padded_size = 8;
  uint32_t arch = 80;
  uint64_t flags = 0x11;
};

Bytes entry(const EntrySpec& e) {
  Bytes out;
  put<uint16_t>(out, e.kind);
  put<uint16_t>(out, 0x0101);
  put<uint32_t>(out, e.header_size);
  put<uint64_t>(out, e.padded_size);
  put<uint32_t>(out, 0);      // compressed size
  put<uint32_t>(out, 0);      // option pair offset
  put<uint16_t>(out, 8);      // minor
  put<uint16_t>(out, 1);      // major
  put<uint32_t>(out, e.arch);
  put<uint64_t>(out, 0);      // name
  put<uint64_t>(out, e.flags);
  put<uint64_t>(out, 0);
  put<uint64_t>(out, 0);
  if (e.header_size >= 64 && e.header_size < 4096) out.resize(out.size() + (e.header_size - 64), 0);
  if (e.padded_size < 4096) out.resize(out.size() + e.padded_size, 0);
  return out;
}

Bytes container(const std::vector<Bytes>& entries, std::optional<uint64_t> size = std::nullopt) {
  Bytes body;
  for (const Bytes& e : entries) body.insert(body.end(), e.begin(), e.end());
  Bytes out;
  put<uint32_t>(out, kFatbinMagic);
  put<uint16_t>(out, 1);
  put<uint16_t>(out, 16);
  put<uint64_t>(out, size.value_or(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

struct SectionSpec {
  std::string name;
  Bytes data;
};

// A minimal little-endian ELF64 file with the given sections (plus the null section and
// .shstrtab), section headers at the end.
Bytes elf_with(const std::vector<SectionSpec>& sections) {
  Bytes out(64, 0);
  out[0] = 0x7f, out[1] = 'E', out[2] = 'L', out[3] = 'F', out[4] = 2, out[5] = 1, out[6] = 1;
  poke<uint16_t>(out, 0x10, 3);
  poke<uint16_t>(out, 0x12, 62);
  struct Placed {
    uint32_t name;
    uint64_t offset, size;
  };
  std::vector<Placed> placed;
  std::string names(1, '\0');
  for (const SectionSpec& s : sections) {
    placed.push_back({static_cast<uint32_t>(names.size()), out.size(), s.data.size()});
    names += s.name + '\0';
    out.insert(out.end(), s.data.begin(), s.data.end());
    out.resize((out.size() + 7) & ~size_t{7}, 0);
  }
  uint32_t strtab_name = static_cast<uint32_t>(names.size());
  names += std::string(".shstrtab") + '\0';
  uint64_t strtab_offset = out.size();
  out.insert(out.end(), names.begin(), names.end());
  out.resize((out.size() + 7) & ~size_t{7}, 0);
  uint64_t shoff = out.size();
  auto header = [&](uint32_t name, uint32_t type, uint64_t offset, uint64_t size) {
    put<uint32_t>(out, name);
    put<uint32_t>(out, type);
    put<uint64_t>(out, 2);  // SHF_ALLOC
    put<uint64_t>(out, offset);
    put<uint64_t>(out, offset);
    put<uint64_t>(out, size);
    put<uint32_t>(out, 0);
    put<uint32_t>(out, 0);
    put<uint64_t>(out, 8);
    put<uint64_t>(out, 0);
  };
  out.resize(out.size() + 64, 0);  // null section
  for (const Placed& p : placed) header(p.name, 1, p.offset, p.size);
  header(strtab_name, 3, strtab_offset, names.size());
  poke<uint64_t>(out, 0x28, shoff);
  poke<uint16_t>(out, 0x3a, 64);
  poke<uint16_t>(out, 0x3c, static_cast<uint16_t>(sections.size() + 2));
  poke<uint16_t>(out, 0x3e, static_cast<uint16_t>(sections.size() + 1));
  return out;
}

CudaCode read(const Bytes& bytes) { return read_fatbin(ByteView(bytes.data(), bytes.size())); }

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("a well-formed synthetic fatbin is read") {
  CudaCode code = read(elf_with({{".nv_fatbin", container({entry({}), entry({.kind = 1, .arch = 90})})}}));
  CHECK(code.errors.empty());
  REQUIRE(code.images.size() == 2);
  CHECK(code.sass_targets() == std::vector<std::string>{"sm_80"});
  CHECK(code.ptx_targets() == std::vector<std::string>{"compute_90"});
}

TEST_CASE("zero padding between containers is skipped") {
  Bytes data = container({entry({})});
  data.resize(data.size() + 16, 0);
  Bytes second = container({entry({.arch = 90})});
  data.insert(data.end(), second.begin(), second.end());
  CudaCode code = read(elf_with({{".nv_fatbin", data}}));
  CHECK(code.errors.empty());
  CHECK(code.containers.size() == 2);
  CHECK(code.images.size() == 2);
}

TEST_CASE("malformed containers give one error each and the next section is still read") {
  Bytes good = container({entry({.arch = 86})});
  struct Case {
    const char* what;
    Bytes data;
  };
  std::vector<Case> cases = {
      {"container larger than its section", container({entry({})}, 4096)},
      {"container size that wraps", container({entry({})}, 0xfffffffffffffff8ull)},
      {"entry header size that wraps", container({entry({.header_size = 0xffffffffu})})},
      {"entry payload size that wraps", container({entry({.padded_size = 0xfffffffffffffff0ull})})},
      {"entry header below 64 bytes", container({entry({.header_size = 16})})},
      {"truncated container header", Bytes{0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0}},
      {"junk instead of a container", Bytes(32, 0xab)},
      {"bad container version", [] {
         Bytes b = container({entry({})});
         b[4] = 7;
         return b;
       }()},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CudaCode code = read(elf_with({{".nv_fatbin", c.data}, {"__nv_relfatbin", good}}));
    CHECK(code.errors.size() == 1);
    for (const std::string& e : code.errors) CHECK(e.find('\n') == std::string::npos);
    CHECK(code.sass_targets() == std::vector<std::string>{"sm_86"});
  }
}

TEST_CASE("unknown entry kinds are kept as opaque images") {
  CudaCode code = read(elf_with({{".nv_fatbin", container({entry({.kind = 0x40, .arch = 75})})}}));
  CHECK(code.errors.empty());
  REQUIRE(code.images.size() == 1);
  CHECK(code.images[0].kind == CudaImageKind::Other);
  CHECK(code.sass_targets().empty());
}

TEST_CASE("broken section tables fall back to scanning, without crashing") {
  Bytes base = elf_with({{".nv_fatbin", container({entry({})})}});
  SUBCASE("e_shoff past the end") {
    Bytes b = base;
    poke<uint64_t>(b, 0x28, 0xfffffffffffffff0ull);
    CudaCode code = read(b);
    CHECK(code.found_by_scan);
    CHECK(code.images.size() == 1);
  }
  SUBCASE("huge e_shnum") {
    Bytes b = base;
    poke<uint16_t>(b, 0x3c, 0xffff);
    CHECK(read(b).found_by_scan);
  }
  SUBCASE("e_shstrndx out of range") {
    Bytes b = base;
    poke<uint16_t>(b, 0x3e, 0x7fff);
    CHECK(read(b).found_by_scan);
  }
  SUBCASE("e_shentsize too small") {
    Bytes b = base;
    poke<uint16_t>(b, 0x3a, 4);
    CHECK(read(b).found_by_scan);
  }
  SUBCASE("section offset past the end of the file") {
    Bytes b = base;
    uint64_t shoff = b[0x28] | (uint64_t(b[0x29]) << 8) | (uint64_t(b[0x2a]) << 16);
    poke<uint64_t>(b, shoff + 64 + 24, 0x7ffffffffffffff0ull);  // section 1 sh_offset
    CudaCode code = read(b);
    CHECK(code.images.empty());
    CHECK(code.errors.size() == 1);
  }
  SUBCASE("magic in the last bytes of a file without sections") {
    Bytes b(100, 0);
    b[0] = 0x7f, b[1] = 'E', b[2] = 'L', b[3] = 'F', b[4] = 2, b[5] = 1;
    b.insert(b.end(), {0x50, 0xed, 0x55, 0xba});
    CudaCode code = read(b);
    CHECK(code.found_by_scan);
    CHECK(code.images.empty());
  }
  SUBCASE("not ELF at all") {
    CHECK(read(Bytes{1, 2, 3}).empty());
    CHECK(read(Bytes{}).empty());
  }
}

TEST_CASE("a section table that names the same fatbin bytes again, or thousands of fatbin sections, is read once") {
  Bytes twice = elf_with({{".nv_fatbin", container({entry({})})}, {".nv_fatbin", container({entry({})})}});
  uint64_t shoff = twice[0x28] | (uint64_t(twice[0x29]) << 8) | (uint64_t(twice[0x2a]) << 16);
  uint64_t first_offset = twice[shoff + 64 + 24] | (uint64_t(twice[shoff + 64 + 25]) << 8);
  poke<uint64_t>(twice, shoff + 128 + 24, first_offset);  // section 2 is section 1's bytes
  CudaCode code = read(twice);
  CHECK(code.images.size() == 1);
  REQUIRE(code.errors.size() == 1);
  CHECK(code.errors[0].find("overlaps a fatbin section already read") != std::string::npos);

  std::vector<SectionSpec> many(100, SectionSpec{".nv_fatbin", container({entry({})})});
  CudaCode capped = read(elf_with(many));
  CHECK(capped.images.size() == 64);
  REQUIRE(capped.errors.size() == 1);
  CHECK(capped.errors[0].find("more than 64 fatbin sections") != std::string::npos);
}

TEST_CASE("mutated and truncated copies of a real fixture never crash the reader") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  Bytes original = read_file(fatbin_fixture("libsm80_ptx90.so"));
  REQUIRE(original.size() > 4096);
  CudaCode clean = read(original);
  REQUIRE(!clean.containers.empty());
  uint64_t start = clean.containers.front().offset;
  std::mt19937_64 random(20261122);
  size_t total_images = 0;
  for (int round = 0; round < 2000; ++round) {
    Bytes copy = original;
    int flips = 1 + static_cast<int>(random() % 8);
    for (int i = 0; i < flips; ++i) {
      uint64_t at = start + random() % 4096;  // the fatbin section
      copy[at] = static_cast<uint8_t>(random());
    }
    if (round % 10 == 0) copy[0x28 + random() % 24] = static_cast<uint8_t>(random());  // section table fields
    total_images += read(copy).images.size();
  }
  CHECK(total_images > 0);
  for (size_t length = 0; length < original.size(); length += 4093) {
    Bytes prefix(original.begin(), original.begin() + static_cast<long>(length));
    CudaCode code = read(prefix);
    CHECK(code.images.size() <= clean.images.size());
  }
}
