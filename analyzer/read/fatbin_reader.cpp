#include "analyzer/read/fatbin_reader.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "analyzer/input/mapped_file.h"

namespace depscan {
namespace {

constexpr uint32_t kShtNobits = 8;
constexpr uint16_t kEmCuda = 190;
constexpr uint64_t kContainerHeaderSize = 16;
constexpr uint64_t kEntryHeaderMin = 64;

// Entry flag bits (fatbin.md 3.1).
constexpr uint64_t kFlagDebug = 0x2;
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;
constexpr uint64_t kFlagCompressedOld = 0x1000;
constexpr uint64_t kFlagArchSpecific = 0x100000;
constexpr uint64_t kFlagFamilySpecific = 0x200000;

struct SectionHeader {
  std::string_view name;
  uint32_t type = 0;
  uint64_t addr = 0, offset = 0, size = 0;
};

// ---------------------------------------------------------------- the host ELF section table

struct ElfLayout {
  bool is64 = true;
  uint64_t shoff = 0;
  uint64_t shnum = 0;
  uint64_t shentsize = 0;
  uint64_t shstrndx = 0;
};

std::optional<ElfLayout> elf_layout(ByteView file) {
  auto magic = file.read<uint32_t>(0);
  auto ident_class = file.read<uint8_t>(4), ident_data = file.read<uint8_t>(5);
  if (!magic || *magic != 0x464c457f || !ident_class || !ident_data || *ident_data != 1) return std::nullopt;
  ElfLayout elf;
  elf.is64 = *ident_class == 2;
  if (!elf.is64 && *ident_class != 1) return std::nullopt;
  std::optional<uint64_t> shoff = file.read<uint64_t>(0x28);
  if (!elf.is64) {
    auto shoff32 = file.read<uint32_t>(0x20);
    shoff = shoff32 ? std::optional<uint64_t>(*shoff32) : std::nullopt;
  }
  uint64_t base = elf.is64 ? 0x3a : 0x2e;
  auto entsize = file.read<uint16_t>(base), num = file.read<uint16_t>(base + 2), strndx = file.read<uint16_t>(base + 4);
  if (!shoff || !entsize || !num || !strndx) return std::nullopt;
  elf.shoff = *shoff;
  elf.shentsize = *entsize;
  elf.shnum = *num;
  elf.shstrndx = *strndx;
  return elf;
}

std::optional<SectionHeader> raw_section(ByteView file, const ElfLayout& elf, uint64_t index, uint32_t* name_offset,
                                         uint32_t* link) {
  auto offset_in_table = checked_mul(index, elf.shentsize);
  auto at = offset_in_table ? checked_add(elf.shoff, *offset_in_table) : std::nullopt;
  if (!at || elf.shentsize < (elf.is64 ? 64u : 40u) || !file.contains(*at, elf.shentsize)) return std::nullopt;
  SectionHeader s;
  *name_offset = file.read<uint32_t>(*at).value_or(0);
  s.type = file.read<uint32_t>(*at + 4).value_or(0);
  if (elf.is64) {
    s.addr = file.read<uint64_t>(*at + 16).value_or(0);
    s.offset = file.read<uint64_t>(*at + 24).value_or(0);
    s.size = file.read<uint64_t>(*at + 32).value_or(0);
    *link = file.read<uint32_t>(*at + 40).value_or(0);
  } else {
    s.addr = file.read<uint32_t>(*at + 12).value_or(0);
    s.offset = file.read<uint32_t>(*at + 16).value_or(0);
    s.size = file.read<uint32_t>(*at + 20).value_or(0);
    *link = file.read<uint32_t>(*at + 24).value_or(0);
  }
  return s;
}

// Names in order of their offsets, each NUL searched for past the last one found: one pass over the
// string table, however many sections share one long (or unterminated) name.
void name_sections(ByteView names, const std::vector<uint32_t>& name_offsets, std::vector<SectionHeader>& sections) {
  std::vector<size_t> by_offset(sections.size());
  for (size_t i = 0; i < by_offset.size(); ++i) by_offset[i] = i;
  std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) { return name_offsets[a] < name_offsets[b]; });
  std::string_view text = names.as_chars();
  size_t nul = 0;
  bool found = false;
  for (size_t i : by_offset) {
    size_t offset = name_offsets[i];
    if (!found || offset > nul) {
      nul = text.find('\0', offset);
      if (nul == std::string_view::npos) break;  // no terminator from here to the end: no more names
      found = true;
    }
    sections[i].name = text.substr(offset, nul - offset);
  }
}

// The section table with names, or nullopt when the file has none that can be read (stripped
// with e_shoff = 0, truncated, or nonsense): then the caller scans the whole file.
std::optional<std::vector<SectionHeader>> section_table(ByteView file, const ElfLayout& layout) {
  ElfLayout elf = layout;
  if (elf.shoff == 0) return std::nullopt;
  uint32_t name0 = 0, link0 = 0;
  auto first = raw_section(file, elf, 0, &name0, &link0);
  if (!first) return std::nullopt;
  if (elf.shnum == 0) elf.shnum = first->size;      // extended numbering: count in section 0
  if (elf.shstrndx == 0xffff) elf.shstrndx = link0;  // SHN_XINDEX
  auto table_size = checked_mul(elf.shnum, elf.shentsize);
  if (elf.shnum == 0 || !table_size || !file.contains(elf.shoff, *table_size)) return std::nullopt;
  std::vector<uint32_t> name_offsets(elf.shnum);
  std::vector<SectionHeader> sections(elf.shnum);
  for (uint64_t i = 0; i < elf.shnum; ++i) {
    uint32_t link = 0;
    auto s = raw_section(file, elf, i, &name_offsets[i], &link);
    if (!s) return std::nullopt;
    sections[i] = *s;
  }
  if (elf.shstrndx >= elf.shnum) return std::nullopt;
  const SectionHeader& strtab = sections[elf.shstrndx];
  ByteView names = file.sub(strtab.offset, strtab.size).value_or(ByteView());
  name_sections(names, name_offsets, sections);
  return sections;
}

// ---------------------------------------------------------------- containers and entries

constexpr size_t kMaxFatbinSections = 64;  // nvcc writes one .nv_fatbin, and one __nv_relfatbin

class FatbinWalker {
 public:
  explicit FatbinWalker(ByteView file) : file_(file) {}

  // Walks every container in [start, end) of a fatbin section.
  void walk_section(const SectionHeader& section) {
    if (!file_.contains(section.offset, section.size)) {
      error("{}: section at {:#x} size {:#x} extends past the end of the file", section.name, section.offset,
            section.size);
      return;
    }
    if (!first_walk_of(section)) return;
    uint64_t p = section.offset, end = section.offset + section.size;
    while (p + kContainerHeaderSize <= end) {
      if (file_.read<uint32_t>(p) != kFatbinMagic) {
        if (file_.read<uint64_t>(p) == 0) {  // alignment padding between containers
          p += 8;
          continue;
        }
        error("{}: no fatbin container at {:#x} (bad magic)", section.name, p);
        return;
      }
      auto container_end = parse_container(p, end, std::string(section.name), true);
      if (!container_end) return;  // error recorded; go on with the next section
      p = *container_end;
    }
    for (uint64_t rest = p; rest < end; ++rest)
      if (file_.read<uint8_t>(rest) != 0) {
        error("{}: truncated fatbin container at {:#x}", section.name, p);
        return;
      }
  }

  // No section table: every magic that starts a well-formed container, anywhere in the file.
  void scan_file() {
    code_.found_by_scan = true;
    scan_region(0, file_.size(), "scan");
  }

  // Every well-formed container in [start, start + size) (bounds already checked).
  void scan_region(uint64_t start, uint64_t size, const std::string& label) {
    const uint8_t needle[4] = {0x50, 0xed, 0x55, 0xba};
    uint64_t pos = start, end = start + size;
    while (pos + kContainerHeaderSize <= end) {
      const void* hit = ::memmem(file_.data() + pos, end - pos, needle, sizeof needle);
      if (!hit) break;
      pos = static_cast<const uint8_t*>(hit) - file_.data();
      size_t images_before = code_.images.size();
      auto container_end = parse_container(pos, end, label, false);
      bool valid = container_end && code_.images.size() > images_before;
      pos = valid ? *container_end : pos + 1;
    }
  }

  CudaCode take() { return std::move(code_); }
  CudaCode& code() { return code_; }

 private:
  template <class... Args>
  void error(fmt::format_string<Args...> format, Args&&... args) {
    code_.errors.push_back(fmt::format(format, std::forward<Args>(args)...));
  }

  // A hostile section table names the same bytes many times, or thousands of fatbin sections.
  bool first_walk_of(const SectionHeader& section) {
    if (walked_.size() == kMaxFatbinSections) {
      if (!said_too_many_) error("{}: more than {} fatbin sections; the rest are not read", section.name, kMaxFatbinSections);
      said_too_many_ = true;
      return false;
    }
    for (const auto& [start, end] : walked_)
      if (section.offset < end && start < section.offset + section.size) {
        if (!said_overlap_) error("{}: section at {:#x} overlaps a fatbin section already read", section.name, section.offset);
        said_overlap_ = true;
        return false;
      }
    walked_.emplace_back(section.offset, section.offset + section.size);
    return true;
  }

  // Parses the container at p (within [p, limit)); returns where it ends, or nullopt when its
  // header is not a container's (recorded as an error when report_errors). A container whose
  // entries go wrong keeps the entries before the bad one.
  std::optional<uint64_t> parse_container(uint64_t p, uint64_t limit, const std::string& section,
                                          bool report_errors) {
    auto version = file_.read<uint16_t>(p + 4);
    auto header_size = file_.read<uint16_t>(p + 6);
    auto fat_size = file_.read<uint64_t>(p + 8);
    if (!version || !header_size || !fat_size) return std::nullopt;
    auto end = checked_add(p + *header_size, *fat_size);  // p + 16 <= limit: no wrap before
    if (*version != 1 || *header_size < kContainerHeaderSize || !end || *end > limit) {
      if (report_errors)
        error("{}: bad fatbin container header at {:#x} (version {}, header size {}, size {:#x})", section, p,
              *version, *header_size, *fat_size);
      return std::nullopt;
    }
    uint32_t index = static_cast<uint32_t>(code_.containers.size());
    size_t images_before = code_.images.size();
    uint64_t q = p + *header_size;
    std::optional<uint64_t> bad_entry;
    while (q + kEntryHeaderMin <= *end) {
      auto next = parse_entry(q, *end, section, index);
      if (!next) {
        bad_entry = q;
        break;
      }
      q = *next;
    }
    if (!report_errors && code_.images.size() == images_before) return std::nullopt;
    if (bad_entry) error("{}: bad fatbin entry header at {:#x} in the container at {:#x}", section, *bad_entry, p);
    code_.containers.push_back({section, p, false});
    return *end;
  }

  // Reads the entry header at q; returns the next entry's offset, or nullopt if malformed.
  std::optional<uint64_t> parse_entry(uint64_t q, uint64_t container_end, const std::string& section,
                                      uint32_t container) {
    auto kind = file_.read<uint16_t>(q);
    auto header_size = file_.read<uint32_t>(q + 0x04);
    auto padded_size = file_.read<uint64_t>(q + 0x08);
    auto minor = file_.read<uint16_t>(q + 0x18), major = file_.read<uint16_t>(q + 0x1a);
    auto arch = file_.read<uint32_t>(q + 0x1c);
    auto flags = file_.read<uint64_t>(q + 0x28);
    if (!kind || !header_size || !padded_size || !minor || !major || !arch || !flags) return std::nullopt;
    auto next = checked_add(q + *header_size, *padded_size);  // q < 2^63 and header_size < 2^32
    if (*header_size < kEntryHeaderMin || !next || *next > container_end) return std::nullopt;
    CudaImage image;
    image.section = section;
    image.container = container;
    image.raw_kind = *kind;
    image.kind = *kind == 1 ? CudaImageKind::Ptx : *kind == 2 ? CudaImageKind::Sass : CudaImageKind::Other;
    image.arch = *arch;
    image.variant = (*flags & kFlagArchSpecific) ? 'a' : (*flags & kFlagFamilySpecific) ? 'f' : 0;
    image.version_major = *major;
    image.version_minor = *minor;
    image.compression = (*flags & kFlagZstd)             ? CudaCompression::Zstd
                        : (*flags & kFlagLz4)            ? CudaCompression::Lz4
                        : (*flags & kFlagCompressedOld) ? CudaCompression::Other
                                                         : CudaCompression::None;
    image.debug = (*flags & kFlagDebug) != 0;
    image.flags = *flags;
    code_.images.push_back(std::move(image));
    payloads_.push_back(file_.sub(q + *header_size, *padded_size).value_or(ByteView()));
    return *next;
  }

 public:
  // Payload of images()[i] as stored (compressed or not).
  ByteView payload(size_t i) const { return i < payloads_.size() ? payloads_[i] : ByteView(); }

 private:
  ByteView file_;
  CudaCode code_;
  std::vector<ByteView> payloads_;
  std::vector<std::pair<uint64_t, uint64_t>> walked_;  // fatbin sections read, as file ranges
  bool said_too_many_ = false, said_overlap_ = false;
};

// ---------------------------------------------------------------- the nvcc device-link container

// Number of kernels (.text.<name> sections) in an uncompressed cubin; nullopt if unreadable.
std::optional<uint64_t> cubin_kernel_count(ByteView cubin) {
  auto layout = elf_layout(cubin);
  auto machine = cubin.read<uint16_t>(0x12);
  if (!layout || !machine || *machine != kEmCuda) return std::nullopt;
  auto sections = section_table(cubin, *layout);
  if (!sections) return std::nullopt;
  return std::count_if(sections->begin(), sections->end(),
                       [](const SectionHeader& s) { return s.name.starts_with(".text."); });
}

// Virtual addresses the version-2 (linked) wrappers in .nvFatBinSegment point at.
std::vector<uint64_t> linked_wrapper_targets(ByteView file, const std::vector<SectionHeader>& sections) {
  std::vector<uint64_t> targets;
  for (const SectionHeader& s : sections) {
    if (s.name != ".nvFatBinSegment" || s.type == kShtNobits) continue;
    ByteView segment = file.sub(s.offset, s.size).value_or(ByteView());
    for (uint64_t o = 0; o + 24 <= segment.size(); o += 8) {
      if (segment.read<uint32_t>(o) == kFatbinWrapperMagic && segment.read<uint32_t>(o + 4) == 2u)
        targets.push_back(segment.read<uint64_t>(o + 8).value_or(0));
    }
  }
  return targets;
}

// What the container's plainly stored cubins say about its kernels.
struct KernelEvidence {
  bool all_plain_and_empty = false;  // every image is an uncompressed cubin without kernels
  bool some_kernel = false;          // an uncompressed cubin has a kernel
};

KernelEvidence kernel_evidence(const FatbinWalker& walker, const CudaCode& code, const std::vector<size_t>& images) {
  KernelEvidence evidence;
  bool all_empty = true;
  for (size_t i : images) {
    const CudaImage& image = code.images[i];
    auto kernels = image.kind == CudaImageKind::Sass && image.compression == CudaCompression::None
                       ? cubin_kernel_count(walker.payload(i))
                       : std::nullopt;
    if (kernels && *kernels > 0) evidence.some_kernel = true;
    if (!kernels || *kernels > 0) all_empty = false;
  }
  evidence.all_plain_and_empty = !images.empty() && all_empty;
  return evidence;
}

// nvcc 13 puts a kernel-less device-link container beside the real modules (fatbin.md 1): the
// container a version-2 wrapper points at, or failing that the first one, when others share its
// section. It holds no PTX; when its cubins are stored plainly they must have no kernels.
void mark_device_link(FatbinWalker& walker, const std::vector<SectionHeader>* sections, ByteView file) {
  CudaCode& code = walker.code();
  const SectionHeader* fatbin = nullptr;
  if (sections)
    for (const SectionHeader& s : *sections)
      if (s.name == ".nv_fatbin") fatbin = &s;
  std::unordered_set<uint64_t> wrapped_offsets;  // into .nv_fatbin
  std::vector<uint64_t> targets = sections ? linked_wrapper_targets(file, *sections) : std::vector<uint64_t>{};
  for (uint64_t addr : targets)
    if (fatbin && addr >= fatbin->addr) wrapped_offsets.insert(addr - fatbin->addr + fatbin->offset);
  std::string section = sections ? ".nv_fatbin" : "scan";
  std::vector<uint32_t> in_section;
  for (uint32_t c = 0; c < code.containers.size(); ++c)
    if (code.containers[c].section == section) in_section.push_back(c);
  if (in_section.size() < 2) return;
  std::vector<std::vector<size_t>> images_of(code.containers.size());
  std::vector<bool> has_ptx(code.containers.size(), false);
  for (size_t i = 0; i < code.images.size(); ++i) {
    images_of[code.images[i].container].push_back(i);
    if (code.images[i].kind == CudaImageKind::Ptx) has_ptx[code.images[i].container] = true;
  }
  for (uint32_t c : in_section) {
    if (has_ptx[c]) continue;
    bool wrapped = fatbin && wrapped_offsets.count(code.containers[c].offset) > 0;
    bool first_without_wrappers = targets.empty() && c == in_section.front();
    if (!wrapped && !first_without_wrappers) continue;
    KernelEvidence evidence = kernel_evidence(walker, code, images_of[c]);
    if ((wrapped && !evidence.some_kernel) || (first_without_wrappers && evidence.all_plain_and_empty))
      code.containers[c].device_link = true;
  }
}

}  // namespace

CudaCode read_fatbin(ByteView file, bool scan_read_only_data) {
  auto layout = elf_layout(file);
  FatbinWalker walker(file);
  if (!layout) {  // a raw .fatbin file (nvcc -fatbin) is scanned; anything else has no device code
    if (file.read<uint32_t>(0) != kFatbinMagic) return {};
    walker.scan_file();
    return walker.take();
  }
  auto sections = section_table(file, *layout);
  if (sections) {
    bool fatbin_sections = false;
    for (const SectionHeader& s : *sections)
      if ((s.name == ".nv_fatbin" || s.name == "__nv_relfatbin") && s.type != kShtNobits) {
        walker.walk_section(s);
        fatbin_sections = true;
      }
    for (const SectionHeader& s : *sections)  // modules for the driver API (cuModuleLoadData)
      if (!fatbin_sections && scan_read_only_data && s.name == ".rodata" && s.type != kShtNobits &&
          file.contains(s.offset, s.size))
        walker.scan_region(s.offset, s.size, ".rodata");
  } else {
    walker.scan_file();
  }
  mark_device_link(walker, sections ? &*sections : nullptr, file);
  return walker.take();
}

Expected<std::shared_ptr<const CudaCode>> read_cuda_code(const FileSystem& fs, std::string_view logical,
                                                         bool scan_read_only_data) {
  auto host = fs.host_path(logical);
  if (!host) return Error{host.error()};
  auto file = MappedFile::open(*host);
  if (!file) return Error{file.error()};
  CudaCode code = read_fatbin((*file)->bytes(), scan_read_only_data);
  if (code.empty()) return std::shared_ptr<const CudaCode>();
  return std::make_shared<const CudaCode>(std::move(code));
}

namespace {

// Objects that may load device code through the driver API (libcupti keeps its modules in
// .rodata): NVIDIA's own libraries and anything linked against the driver or the runtime.
bool may_load_modules(const Object& object) {
  std::string_view name = object.realpath.empty() ? object.path : object.realpath;
  name = name.substr(name.rfind('/') + 1);
  if (name.starts_with("libcu") || name.starts_with("libnv") || name.starts_with("libnccl")) return true;
  return std::any_of(object.binary->needed.begin(), object.binary->needed.end(), [](const std::string& needed) {
    return needed.starts_with("libcuda.so") || needed.starts_with("libcudart.so");
  });
}

}  // namespace

void attach_cuda_code(Graph& graph, const FileSystem& fs) {
  for (Object& object : graph.objects) {
    if (!object.binary || object.binary->format != Format::Elf || object.binary->cuda_code) continue;
    auto code = read_cuda_code(fs, object.path, may_load_modules(object));
    if (!code || !*code) continue;
    auto copy = std::make_shared<Binary>(*object.binary);
    copy->cuda_code = std::move(*code);
    object.binary = std::move(copy);
  }
}

}  // namespace depscan
