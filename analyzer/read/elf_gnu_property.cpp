// The x86 ISA level an object needs, read from its GNU property note as ld.so reads it (glibc 2.35
// and later: elf/dl-load.c _dl_process_pt_gnu_property, sysdeps/x86/dl-prop.h). ld.so walks the
// program headers backwards: a PT_GNU_PROPERTY is read item by item, a PT_NOTE only while nothing
// was read before it, and a PT_NOTE holding two property notes (older linkers) is ignored whole.
// A malformed note is skipped, never an error, as in ld.so. (2.33 and 2.34, which first checked the
// marker, differ only in reading past a GNU_PROPERTY_1_NEEDED item that is not 4 bytes long.)
#include <algorithm>

#include "analyzer/read/elf_gnu_property.h"

namespace depscan::elf {
namespace {

constexpr uint32_t kPtNote = 4, kPtGnuProperty = 0x6474e553;
constexpr uint32_t kNtGnuPropertyType0 = 5;
constexpr uint32_t kGnuProperty1Needed = 0xb0008000, kX86Feature1And = 0xc0000002, kX86Isa1Needed = 0xc0008002;
constexpr uint64_t kNoteHeader = 12;
// Property notes are a few dozen bytes; a hostile segment is read no further than this.
constexpr uint64_t kMaxNoteBytes = 64 * 1024;

enum class Property { Unknown, None, Valid };  // ld.so's l_property

struct PropertyState {
  Property property = Property::Unknown;
  uint32_t isa_needed = 0;
};

// _dl_check_gnu_property's answer for one item: skip the note, stop reading it, or go on.
enum class Step { SkipNote, Stop, Next };

struct Found {
  uint32_t isa_needed = 0;
  bool any = false;  // a FEATURE_1_AND, 1_NEEDED or ISA_1_NEEDED with a non-zero value
};

Step check_property(uint32_t type, uint32_t datasz, uint32_t value, Found& found) {
  if (type == kX86Feature1And || type == kX86Isa1Needed || type == kGnuProperty1Needed) {
    if (datasz != 4) return Step::SkipNote;
    if (value != 0) found.any = true;
    if (type != kX86Isa1Needed) return Step::Next;
    found.isa_needed = value;
    return Step::Stop;  // the last type looked for
  }
  return type > kX86Isa1Needed ? Step::Stop : Step::Next;  // types come in ascending order
}

uint64_t align_up(uint64_t value, uint64_t align) { return (value + align - 1) / align * align; }

class NoteSegment {
 public:
  NoteSegment(const Image& image, ByteView bytes, uint64_t align) : image_(image), bytes_(bytes), align_(align) {}

  // Calls visit(offset of the note) for each NT_GNU_PROPERTY_TYPE_0 "GNU" note until it returns false.
  template <class Visit>
  void each_property_note(Visit visit) const {
    for (uint64_t at = 0; at + kNoteHeader < bytes_.size();) {
      uint32_t namesz = u32(at), descsz = u32(at + 4), type = u32(at + 8);
      auto name = bytes_.sub(at + kNoteHeader, 4);
      bool gnu = namesz == 4 && type == kNtGnuPropertyType0 && name && std::equal(name->data(), name->data() + 4, "GNU");
      if (gnu && !visit(at)) return;
      at += align_up(align_up(kNoteHeader + namesz, align_) + descsz, align_);
    }
  }

  // Reads the properties of the note at `at` in order; `item(type, datasz, value)` returns false to stop.
  // False when the note is malformed (ld.so leaves it then).
  template <class Item>
  bool each_item(uint64_t at, Item item) const {
    uint64_t word = image_.word_size(), descsz = u32(at + 4);
    if (descsz < 8 || descsz % word != 0) return false;
    uint64_t ptr = at + kNoteHeader + 4, end = ptr + descsz;
    if (end > bytes_.size()) return false;  // past the segment: not read
    uint32_t last_type = 0;
    do {
      uint32_t type = u32(ptr), datasz = u32(ptr + 4);
      if (type < last_type) return false;
      ptr += 8;
      if (ptr + datasz > end) return false;
      last_type = type;
      if (!item(type, datasz, datasz == 4 ? u32(ptr) : 0)) return true;
      ptr += align_up(datasz, word);
    } while (ptr <= end && end - ptr >= 8);
    return true;
  }

 private:
  uint32_t u32(uint64_t at) const { return image_.u32(bytes_, at); }

  const Image& image_;
  ByteView bytes_;
  uint64_t align_;
};

// _dl_process_pt_gnu_property with x86's _dl_process_gnu_property: the first property note,
// each item recorded as it is read.
void read_pt_gnu_property(const NoteSegment& notes, PropertyState& state) {
  notes.each_property_note([&](uint64_t at) {
    notes.each_item(at, [&](uint32_t type, uint32_t datasz, uint32_t value) {
      Found found;
      Step step = check_property(type, datasz, value, found);
      if (found.isa_needed) state.isa_needed = found.isa_needed;
      if (found.any) state.property = Property::Valid;
      else if (state.property == Property::Unknown) state.property = Property::None;
      return step == Step::Next;
    });
    return false;  // only one NT_GNU_PROPERTY_TYPE_0
  });
}

// x86's _dl_process_property_note: recorded only after the whole segment was walked.
void read_pt_note(const NoteSegment& notes, PropertyState& state) {
  if (state.property != Property::Unknown) return;
  Found found;
  bool ignored = false;
  notes.each_property_note([&](uint64_t at) {
    if (state.property != Property::Unknown) return !(ignored = true);  // a second property note
    state.property = Property::None;
    bool well_formed = notes.each_item(at, [&](uint32_t type, uint32_t datasz, uint32_t value) {
      Step step = check_property(type, datasz, value, found);
      if (step == Step::SkipNote) ignored = true;
      return step == Step::Next;
    });
    if (!well_formed) ignored = true;
    return !ignored;
  });
  if (ignored) return;
  if (found.any) {
    state.property = Property::Valid;
    state.isa_needed = found.isa_needed;
  }
}

}  // namespace

std::optional<std::string> read_x86_isa_needed(const Image& image, Binary& binary) {
  if (!is_x86_machine(image.machine())) return std::nullopt;
  PropertyState state;
  const auto& segments = image.segments();
  for (auto s = segments.rbegin(); s != segments.rend(); ++s) {
    if (s->type != kPtNote && s->type != kPtGnuProperty) continue;
    if (s->align != image.word_size()) continue;  // ld.so skips notes with another alignment
    if (s->type == kPtNote && state.property != Property::Unknown) continue;
    auto bytes = image.bytes(s->offset, std::min({s->filesz, s->memsz, kMaxNoteBytes}));  // segments are checked
    if (!bytes) return bytes.error();
    NoteSegment notes(image, *bytes, s->align);
    if (s->type == kPtGnuProperty) read_pt_gnu_property(notes, state);
    else read_pt_note(notes, state);
  }
  binary.x86_isa_needed = state.isa_needed;
  return std::nullopt;
}

}  // namespace depscan::elf
