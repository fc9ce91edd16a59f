// The x86 ISA marker read as ld.so reads it (elf/dl-load.c, sysdeps/x86/dl-prop.h), from a library
// the linker marked x86-64-v3 (fixtures/isalevel/v3), its headers and note rewritten case by case.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "analyzer/read/elf_reader.h"
#include "analyzer/read/lief_elf_reader.h"
#include "read/byte_edit.h"
#include "support.h"

using namespace depscan;

namespace {

using test::Bytes;
using test::get;
using test::put;
constexpr uint32_t kPtNull = 0, kPtNote = 4, kPtGnuProperty = 0x6474e553;

struct Marked {
  Bytes bytes;
  uint64_t property_header = 0, note_header = 0;  // program headers: PT_GNU_PROPERTY, PT_NOTE aligned to 8
  uint64_t note = 0;                              // file offset of the property note

  Marked() {
    std::ifstream in(test::fixtures_dir() + "/isalevel/v3/libcudnn.so.9", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
    REQUIRE(bytes.size() > 64);
    uint64_t phoff = get<uint64_t>(bytes, 32);
    for (uint16_t i = 0; i < get<uint16_t>(bytes, 56); ++i) {
      uint64_t p = phoff + 56u * i;
      if (get<uint32_t>(bytes, p) == kPtGnuProperty) property_header = p;
      if (get<uint32_t>(bytes, p) == kPtNote && get<uint64_t>(bytes, p + 48) == 8) note_header = p;
    }
    REQUIRE(property_header != 0);
    REQUIRE(note_header != 0);
    note = get<uint64_t>(bytes, property_header + 8);
    REQUIRE(get<uint64_t>(bytes, note_header + 8) == note);
  }

  // The note: namesz, descsz, type, "GNU", then the one item: type, datasz, value, padding.
  uint64_t descsz() const { return note + 4; }
  uint64_t item_type() const { return note + 16; }
  uint64_t item_size() const { return note + 20; }
  uint64_t item_value() const { return note + 24; }

  uint32_t isa_needed() const {
    auto binary = read_elf(ByteView(bytes.data(), bytes.size()), "marked.so");
    REQUIRE_MESSAGE(binary, (binary ? "" : binary.error()));
    return binary->x86_isa_needed;
  }
};

}  // namespace

TEST_CASE("x86 ISA marker: read from PT_GNU_PROPERTY, else from a PT_NOTE aligned to the word") {
  Marked m;
  CHECK(m.isa_needed() == kIsaV3);
  put<uint32_t>(m.bytes, m.item_value(), kIsaBaseline | kIsaV2);
  CHECK(m.isa_needed() == (kIsaBaseline | kIsaV2));

  Marked only_note;
  put<uint32_t>(only_note.bytes, only_note.property_header, kPtNull);
  CHECK(only_note.isa_needed() == kIsaV3);

  Marked misaligned;
  put<uint64_t>(misaligned.bytes, misaligned.property_header + 48, 4);
  CHECK(misaligned.isa_needed() == kIsaV3);  // PT_GNU_PROPERTY skipped, PT_NOTE read
  put<uint64_t>(misaligned.bytes, misaligned.note_header + 48, 4);
  CHECK(misaligned.isa_needed() == 0);
}

TEST_CASE("x86 ISA marker: malformed properties are skipped as ld.so skips them") {
  for (bool with_property_header : {true, false}) {
    INFO("PT_GNU_PROPERTY kept: " << with_property_header);
    auto variant = [&] {
      Marked m;
      if (!with_property_header) put<uint32_t>(m.bytes, m.property_header, kPtNull);
      return m;
    };
    Marked wide = variant();
    put<uint32_t>(wide.bytes, wide.item_size(), 8);  // the ISA item must hold 4 bytes
    CHECK(wide.isa_needed() == 0);
    Marked odd = variant();
    put<uint32_t>(odd.bytes, odd.descsz(), 12);  // not a multiple of the word
    CHECK(odd.isa_needed() == 0);
    Marked other = variant();
    put<uint32_t>(other.bytes, other.item_type(), 0xc0000002);  // GNU_PROPERTY_X86_FEATURE_1_AND
    CHECK(other.isa_needed() == 0);
    Marked later = variant();
    put<uint32_t>(later.bytes, later.item_type(), 0xc0008003);  // past ISA_1_NEEDED: the scan stops
    CHECK(later.isa_needed() == 0);
  }
}

TEST_CASE("x86 ISA marker: a PT_NOTE with two property notes (older linkers) counts for nothing") {
  // The build-id note that follows becomes a second property note inside the PT_NOTE.
  Marked m;
  uint64_t next = m.note + 32;
  REQUIRE(get<uint32_t>(m.bytes, next + 8) == 3);  // NT_GNU_BUILD_ID
  put<uint32_t>(m.bytes, next + 8, 5);
  put<uint64_t>(m.bytes, m.note_header + 32, 32 + 12 + 4 + get<uint32_t>(m.bytes, next + 4));
  put<uint64_t>(m.bytes, m.note_header + 40, get<uint64_t>(m.bytes, m.note_header + 32));
  CHECK(m.isa_needed() == kIsaV3);  // PT_GNU_PROPERTY reads the first note only, and the PT_NOTE is skipped
  put<uint32_t>(m.bytes, m.property_header, kPtNull);
  CHECK(m.isa_needed() == 0);
}

TEST_CASE("x86 ISA marker: random damage to the note and its program headers never reads outside the file") {
  Marked m;
  std::mt19937 random(20261127);
  std::vector<uint64_t> targets;
  for (uint64_t at = m.note; at < m.note + 32; ++at) targets.push_back(at);
  for (uint64_t header : {m.property_header, m.note_header})
    for (uint64_t field : {8, 32, 40, 48}) targets.push_back(header + field);  // offset, sizes, alignment
  for (int round = 0; round < 3000; ++round) {
    Marked damaged;
    for (int edits = 0; edits < 3; ++edits) {
      uint64_t at = targets[random() % targets.size()];
      damaged.bytes[at] = static_cast<uint8_t>(random());
    }
    auto binary = read_elf(ByteView(damaged.bytes.data(), damaged.bytes.size()), "damaged.so");
    if (!binary) {
      CHECK(binary.error().find('\n') == std::string::npos);
      continue;
    }
    uint32_t isa = binary->x86_isa_needed;  // 0, or a word of the file's own bytes
    bool in_file = isa == 0;
    for (uint64_t at = 0; !in_file && at + 4 <= damaged.bytes.size(); at += 4) in_file = get<uint32_t>(damaged.bytes, at) == isa;
    CHECK_MESSAGE(in_file, "round " << round << ": " << isa);
  }
}

TEST_CASE("x86 ISA marker: LIEF's notes give the same bits as the fast reader") {
  for (const std::string name : {"v2", "v3", "v4", "future", "baseline", "i386"}) {
    INFO(name);
    std::string path = test::fixtures_dir() + "/isalevel/" + name + "/libcudnn.so.9";
    auto lief = read_elf_with_lief(path, path);
    REQUIRE(lief);
    std::ifstream in(path, std::ios::binary);
    Bytes bytes((std::istreambuf_iterator<char>(in)), {});
    auto fast = read_elf(ByteView(bytes.data(), bytes.size()), path);
    REQUIRE(fast);
    CHECK(fast->x86_isa_needed == lief->x86_isa_needed);
    CHECK((fast->x86_isa_needed != 0) == (name != "baseline"));
  }
  auto i386 = read_elf_with_lief(test::fixtures_dir() + "/isalevel/i386/libcudnn.so.9", "i386");
  REQUIRE(i386);
  CHECK(i386->bits == 32);
  CHECK(i386->x86_isa_needed == kIsaV3);
}
