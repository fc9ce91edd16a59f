#include "analyzer/read/rodata_strings.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "analyzer/input/mapped_file.h"
#include "analyzer/util/strings.h"

namespace depscan {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '+' || c == '.';
}

// "lib<name>.so" then zero or more ".<digits>" or ".%d" parts, and nothing else.
bool is_library_name(std::string_view s) {
  if (s.size() < 7 || !s.starts_with("lib")) return false;
  size_t so = s.find(".so");
  while (so != std::string_view::npos && so + 3 < s.size() && s[so + 3] != '.') so = s.find(".so", so + 1);
  if (so == std::string_view::npos || so <= 3) return false;
  if (!std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(so), is_name_char)) return false;
  std::string_view rest = s.substr(so + 3);
  while (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2) return false;
    rest.remove_prefix(1);
    if (rest.starts_with("%d")) {
      rest.remove_prefix(2);
      continue;
    }
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 0) return false;
    rest.remove_prefix(digits);
  }
  return true;
}

// The first ".so" at or after `from`. Read-only data is mostly '.'-rich text and tables, where
// memmem and find() stop at every '.'; this compares 16 positions at a time against all three bytes.
size_t find_dot_so(std::string_view text, size_t from) {
  const char* data = text.data();
  size_t size = text.size();
  size_t i = from;
#ifdef __SSE2__
  const __m128i dot = _mm_set1_epi8('.'), s = _mm_set1_epi8('s'), o = _mm_set1_epi8('o');
  for (; i + 18 <= size; i += 16) {
    __m128i at0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    __m128i at1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i + 1));
    __m128i at2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i + 2));
    __m128i match = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(at0, dot), _mm_cmpeq_epi8(at1, s)),
                                  _mm_cmpeq_epi8(at2, o));
    if (int mask = _mm_movemask_epi8(match)) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  for (; i + 3 <= size; ++i)
    if (data[i] == '.' && data[i + 1] == 's' && data[i + 2] == 'o') return i;
  return std::string_view::npos;
}

}  // namespace

std::vector<std::string> library_names_in(ByteView bytes) {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  std::string_view text = bytes.as_chars();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t hit = find_dot_so(text, pos);
    if (hit == std::string_view::npos) break;
    size_t start = hit;
    while (start > 0 && text[start - 1] != '\0' && hit - start < 256) --start;
    size_t end = text.find('\0', hit);
    if (end == std::string_view::npos) break;  // not NUL-terminated: not a C string
    pos = end + 1;
    if (start > 0 && text[start - 1] != '\0') continue;  // longer than any library name
    std::string_view candidate = text.substr(start, end - start);
    if (is_library_name(candidate) && seen.insert(candidate).second) out.emplace_back(candidate);
  }
  return out;
}

namespace {

constexpr size_t kLongestDllName = 255;

bool is_dll_name_char(char c) { return is_name_char(c) && c != '+'; }

// The name characters before the NUL-terminated ".dll" at `dot`, as `strings` would cut them:
// MSVC packs a literal right after binary data ("...\xb5nvcuda.dll" in cudart64_13.dll), so what
// precedes the name need not be a NUL. "" when there is none, or it is too long for a file name.
std::string_view narrow_dll_name(std::string_view text, size_t dot) {
  size_t end = dot + 4;
  if (end >= text.size() || text[end] != '\0') return {};
  size_t start = dot;
  while (start > 0 && dot - start <= kLongestDllName && is_dll_name_char(text[start - 1])) --start;
  if (start == dot || dot - start > kLongestDllName) return {};
  return text.substr(start, end - start);
}

// Whether text[at] (a name character followed by a NUL) ends an 8-bit string rather than
// being a UTF-16 character: the two bytes before it are name characters too.
bool ends_narrow_string(std::string_view text, size_t at) {
  return at >= 2 && is_dll_name_char(text[at - 1]) && is_dll_name_char(text[at - 2]);
}

// The same for a UTF-16LE string of ASCII name characters (what LoadLibraryW is passed).
std::string wide_dll_name(std::string_view text, size_t dot) {
  size_t end = dot + 8;
  if (end + 1 >= text.size() || text[end] != '\0' || text[end + 1] != '\0') return {};
  for (size_t i = dot + 1; i < end; i += 2)
    if (text[i] != '\0') return {};
  size_t start = dot;
  while (start >= 2 && dot - start <= 2 * kLongestDllName && text[start - 1] == '\0' &&
         is_dll_name_char(text[start - 2]) && !ends_narrow_string(text, start - 2))
    start -= 2;
  if (start == dot || dot - start > 2 * kLongestDllName) return {};
  std::string name;
  for (size_t i = start; i < end; i += 2) name.push_back(text[i]);
  return name;
}

bool is_dll_extension_at(std::string_view text, size_t dot, size_t stride) {
  if (dot + 3 * stride >= text.size()) return false;
  return equals_ignoring_case(std::string{text[dot + stride], text[dot + 2 * stride], text[dot + 3 * stride]}, "dll");
}

}  // namespace

std::vector<std::string> dll_names_in(ByteView bytes) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;  // lower case: Windows names ignore it
  std::string_view text = bytes.as_chars();
  auto keep = [&](std::string name) {
    if (!name.empty() && seen.insert(ascii_lower(name)).second) out.push_back(std::move(name));
  };
  for (size_t dot = text.find('.'); dot != std::string_view::npos; dot = text.find('.', dot + 1)) {
    if (is_dll_extension_at(text, dot, 1)) keep(std::string(narrow_dll_name(text, dot)));
    else if (is_dll_extension_at(text, dot, 2)) keep(wide_dll_name(text, dot));
  }
  return out;
}

std::vector<std::string> tsl_cuda_stubs_in(ByteView bytes) {
  constexpr std::string_view kDir = "tsl/cuda/", kSuffix = "_stub.cc";
  std::vector<std::string> out;
  std::string_view text = bytes.as_chars();
  for (size_t pos = 0; pos < text.size();) {
    const void* hit = ::memmem(text.data() + pos, text.size() - pos, kDir.data(), kDir.size());
    if (!hit) break;
    size_t key_at = static_cast<size_t>(static_cast<const char*>(hit) - text.data()) + kDir.size();
    size_t end = text.find('\0', key_at);
    if (end == std::string_view::npos) break;
    pos = end + 1;
    std::string_view file = text.substr(key_at, end - key_at);
    if (!file.ends_with(kSuffix)) continue;
    std::string_view key = file.substr(0, file.size() - kSuffix.size());
    bool word = !key.empty() && key.size() <= 32 && std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    });
    if (word && std::find(out.begin(), out.end(), key) == out.end()) out.emplace_back(key);
  }
  return out;
}

namespace {

const Section* rodata_of(const Binary& binary) {
  std::string_view name = rodata_section_name(binary);
  if (name.empty()) return nullptr;
  auto section = std::find_if(binary.sections.begin(), binary.sections.end(),
                              [&](const Section& s) { return s.name == name; });
  bool elf_nobits = binary.format == Format::Elf && section != binary.sections.end() && section->type == 8;  // SHT_NOBITS
  if (section == binary.sections.end() || elf_nobits) return nullptr;
  return &*section;
}

}  // namespace

std::string_view rodata_section_name(const Binary& binary) {
  switch (binary.format) {
    case Format::Elf: return ".rodata";
    case Format::Pe: return ".rdata";
    default: return "";
  }
}

uint64_t rodata_size(const Binary& binary) {
  const Section* section = rodata_of(binary);
  return section ? section->size : 0;
}

namespace {

// Calls scan(.rodata bytes (at most kMaxRodataScan of them), read_ahead) with the file mapped;
// `none` when the binary has no .rodata in the file.
template <typename Result, typename Scan>
Expected<Result> with_rodata(const FileSystem& fs, const Binary& binary, Result none, Scan scan) {
  const Section* section = rodata_of(binary);
  if (!section) return none;
  auto host = fs.host_path(binary.path);
  if (!host) return Error{host.error()};
  auto file = MappedFile::open(*host);
  if (!file) return Error{file.error()};
  ByteView bytes = (*file)->bytes();
  if (section->offset >= bytes.size()) return none;
  uint64_t length = std::min<uint64_t>({section->size, kMaxRodataScan, bytes.size() - section->offset});
  auto rodata = bytes.sub(section->offset, length);
  if (!rodata) return none;
  const MappedFile& mapped = **file;
  ReadAhead read_ahead = [&](size_t offset, size_t count) { mapped.read_ahead(section->offset + offset, count); };
  return scan(*rodata, read_ahead);
}

constexpr size_t kSearchChunk = size_t{1} << 20;

}  // namespace

std::optional<std::string> first_string_with_prefix(ByteView bytes, std::string_view prefix,
                                                    const ReadAhead& read_ahead) {
  std::string_view text = bytes.as_chars();
  if (prefix.empty()) return std::nullopt;
  size_t asked = 0;  // bytes already asked for
  for (size_t pos = 0; pos < text.size();) {
    if (read_ahead && asked < text.size() && asked < pos + 2 * kSearchChunk) {
      size_t until = std::min(text.size(), pos + 3 * kSearchChunk);
      read_ahead(asked, until - asked);
      asked = until;
    }
    // Hits start before chunk_end; the window reaches past it by what a hit there needs.
    size_t chunk_end = std::min(text.size(), pos + kSearchChunk);
    size_t window = std::min(text.size(), chunk_end + prefix.size() - 1) - pos;
    const void* hit = ::memmem(text.data() + pos, window, prefix.data(), prefix.size());
    if (!hit) {
      pos = chunk_end;
      continue;
    }
    size_t at = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    size_t end = text.find('\0', at);
    if (end == std::string_view::npos) return std::nullopt;
    if (at == 0 || text[at - 1] == '\0') return std::string(text.substr(at, end - at));
    pos = at + 1;
  }
  return std::nullopt;
}

Expected<std::vector<std::string>> rodata_library_names(const FileSystem& fs, const Binary& binary) {
  bool pe = binary.format == Format::Pe;
  return with_rodata(fs, binary, std::vector<std::string>{}, [pe](ByteView rodata, const ReadAhead& read_ahead) {
    read_ahead(0, rodata.size());
    return pe ? dll_names_in(rodata) : library_names_in(rodata);
  });
}

Expected<std::vector<std::string>> rodata_tsl_cuda_stubs(const FileSystem& fs, const Binary& binary) {
  return with_rodata(fs, binary, std::vector<std::string>{}, [](ByteView rodata, const ReadAhead& read_ahead) {
    read_ahead(0, rodata.size());
    return tsl_cuda_stubs_in(rodata);
  });
}

Expected<std::optional<std::string>> rodata_string_with_prefix(const FileSystem& fs, const Binary& binary,
                                                               std::string_view prefix) {
  return with_rodata(fs, binary, std::optional<std::string>{}, [&](ByteView rodata, const ReadAhead& read_ahead) {
    return first_string_with_prefix(rodata, prefix, read_ahead);
  });
}

}  // namespace depscan
