// The plain value types every stage shares. No reader's types (LIEF or other) appear here:
// readers fill these structs, the resolver builds a Graph of them, checks add Findings.
// Format-neutral: an ELF NEEDED and a PE import are both a `needed` name; PE delay imports
// are `delay_needed`.
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace depscan {

enum class Format { Elf, Pe, Unknown };

// ---------------------------------------------------------------- one binary file

struct VersionNeed {           // one DT_VERNEED aux entry: "file needs version"
  std::string file;            // vn_file, e.g. "libc.so.6"
  std::string version;         // vna_name, e.g. "GLIBC_2.34"
  uint16_t index = 0;          // vna_other: the versym index symbols refer to
  bool weak = false;           // VER_FLG_WEAK
  bool operator==(const VersionNeed&) const = default;
};

struct VersionDef {            // one DT_VERDEF entry
  std::string name;            // first verdaux name
  uint16_t index = 0;          // vd_ndx
  bool base = false;           // VER_FLG_BASE: the entry naming the file itself
  std::vector<std::string> parents;  // further verdaux names
  bool operator==(const VersionDef&) const = default;
};

enum class SymbolBinding : uint8_t { Local = 0, Global = 1, Weak = 2, Unique = 10, Other = 255 };
enum class SymbolType : uint8_t { NoType = 0, Object = 1, Func = 2, Section = 3, File = 4,
                                  Common = 5, Tls = 6, GnuIfunc = 10, Other = 255 };

// The strings a Binary's symbols point into: a copy of the dynamic string table, and any string a
// reader had to build. Copies of the Binary share it, so the views live as long as any copy.
// A library has tens of thousands of symbols; one string each was a third of a scan's allocations.
class StringArena {
 public:
  // Copies `s` into the arena; the view lives as long as the arena.
  std::string_view keep(std::string_view s) { return strings_.emplace_back(s); }

 private:
  std::deque<std::string> strings_;  // a deque never moves its elements
};

// A symbol's string: a view into its binary's StringArena (or a string literal). It cannot be
// made from a std::string, whose buffer would go before the view: keep() the string first.
struct SymbolText : std::string_view {
  SymbolText() = default;
  SymbolText(std::string_view text) : std::string_view(text) {}
  SymbolText(const char* text) : std::string_view(text) {}
  SymbolText(const std::string&) = delete;
  SymbolText(std::string&&) = delete;
};

inline constexpr uint16_t kNoVersym = 0xffff;  // Symbol::version_index in an object without DT_VERSYM

struct Symbol {                // one dynamic symbol (entry 0, the null symbol, is not stored); 64 bytes, in this order
  SymbolText name;             // the views point into Binary::symbol_strings
  SymbolText version;          // version name from verdef (defined) or verneed (undefined, or copy-relocated); empty if none
  SymbolText version_file;     // versioned by a DT_VERNEED entry (undefined, or copy-relocated): the vn_file that should provide it
  uint32_t size = 0;           // st_size (at most UINT32_MAX): the bytes a copy relocation copies
  uint16_t version_index = 0;  // raw versym & 0x7fff (0 local, 1 global, >=2 named); 0xffff if no versym
  bool defined = false;        // st_shndx != SHN_UNDEF
  bool no_value = false;       // st_value 0: the loaders bind no reference to it, unless TLS (or SHN_ABS for glibc)
  bool absolute = false;       // st_shndx == SHN_ABS
  SymbolBinding binding = SymbolBinding::Global;
  SymbolType type = SymbolType::NoType;
  uint8_t visibility = 0;      // st_other & 3
  bool hidden = false;         // versym bit 0x8000: not the default version (foo@V, not foo@@V)
  bool bound_at_load = false;  // named by a relocation the loader applies before the program runs (GLOB_DAT, R_X86_64_64, TLSDESC)
  bool copy_relocated = false; // named by a copy relocation (R_X86_64_COPY): the program's own copy of a variable that
                               //   another object defines, filled from it at load; never bound to the program itself
  bool plt_called = false;     // named by a PLT relocation (DT_JMPREL): a call the loader binds at first use; for a
                               //   defined symbol, the object's own call of it, bound through the scope like any other
  // Defined with value 0, neither absolute nor thread-local: glibc's check_match skips it.
  bool valueless_definition() const { return defined && no_value && !absolute && type != SymbolType::Tls; }
  // A definition its own object's relocations name (a PLT call, a pointer bound at load), which the
  // loader binds through the lookup scope like any reference; a protected one binds inside the object.
  bool own_reference() const {
    constexpr uint8_t kProtected = 3;
    return defined && !copy_relocated && (plt_called || bound_at_load) && visibility != kProtected;
  }
  bool operator==(const Symbol&) const = default;
};

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  bool operator==(const Section&) const = default;
};

// ---------------------------------------------------------------- CUDA device code (fatbin)

enum class CudaImageKind { Ptx, Sass, Other };
enum class CudaCompression { None, Lz4, Zstd, Other };

// One fatbin entry, from its header only (the payload is never decompressed).
struct CudaImage {
  std::string section;         // ".nv_fatbin", "__nv_relfatbin", ".rodata" (driver-API modules), or
                               // "scan" (found without a section table)
  uint32_t container = 0;      // index of its container in the file, counted across sections
  CudaImageKind kind = CudaImageKind::Other;
  uint16_t raw_kind = 0;       // 1 PTX, 2 ELF cubin, anything else opaque
  uint32_t arch = 0;           // SM number: 75, 90, 100, 121 ...
  char variant = 0;            // 'a' (arch-specific), 'f' (family-specific) or 0
  uint16_t version_major = 0;  // PTX: PTX ISA version; SASS: cubin format version
  uint16_t version_minor = 0;
  CudaCompression compression = CudaCompression::None;
  bool debug = false;          // -G image
  uint64_t flags = 0;          // raw entry flags
  bool operator==(const CudaImage&) const = default;
};

struct CudaContainer {
  std::string section;
  uint64_t offset = 0;         // file offset of the container header
  bool device_link = false;    // nvcc's kernel-less "dlink" container (not a kernel module)
  bool operator==(const CudaContainer&) const = default;
};

// All the device code embedded in one file. Empty images and errors: no device code.
struct CudaCode {
  std::vector<CudaImage> images;
  std::vector<CudaContainer> containers;  // indexed by CudaImage::container
  bool found_by_scan = false;             // no section table: containers found by magic
  std::vector<std::string> errors;        // malformed containers, one line each
  bool empty() const { return images.empty() && errors.empty(); }
  std::vector<std::string> sass_targets() const;   // sorted, unique: "sm_80", "sm_90a"
  std::vector<std::string> ptx_targets() const;    // "compute_90"
  std::vector<std::string> ptx_isas() const;       // "9.0"
  bool ptx_only_relocatable() const;      // PTX exists, but only in __nv_relfatbin (-rdc)
  bool operator==(const CudaCode&) const = default;
};

std::string cuda_target_name(const CudaImage& image);  // sm_90a / compute_120f
std::string cuda_code_summary(const CudaCode& code);   // "SASS sm_80 sm_90, PTX compute_90 (ISA 9.0)"

// A library a filter names (ld.so maps it, with the filter as requester, just before the filter, so
// its definitions come first): DT_FILTER's must load, DT_AUXILIARY's is left out when not found.
struct FilteeName {
  std::string name;
  bool auxiliary = false;
  size_t needed_before = 0;  // DT_NEEDED entries ahead of it in the dynamic section, which ld.so follows

  bool operator==(const FilteeName&) const = default;
};

struct Binary {
  std::string path;            // logical path as opened (inside the analysed root)
  Format format = Format::Unknown;
  int bits = 0;                // 32 or 64
  bool little_endian = true;
  uint16_t machine = 0;        // e_machine, or the PE machine field
  uint16_t file_type = 0;      // e_type (ET_EXEC=2, ET_DYN=3), or PE characteristics
  uint8_t os_abi = 0;
  std::string interpreter;     // PT_INTERP, empty if none
  std::optional<uint32_t> stack_flags;  // p_flags of PT_GNU_STACK (PF_X = 1), absent if none
  // Over every PT_LOAD, the largest power of two that divides p_vaddr - p_offset (congruence) and
  // p_align (alignment); 0 when there is no PT_LOAD. They bound the kernel page sizes it loads with.
  uint64_t load_congruence = 0, load_alignment = 0;
  // The thread-local storage block of the last PT_TLS with a p_memsz, as ld.so takes it: size
  // (p_memsz; 0: none), alignment (p_align) and p_vaddr modulo that alignment.
  uint64_t tls_size = 0, tls_align = 0, tls_first_byte = 0;
  // DF_STATIC_TLS objects only: the dynamic symbols that initial-exec TLS relocations name, by
  // index (0: the object's own block); sorted, unique.
  std::vector<uint32_t> static_tls_symbols;
  // x86 only: GNU_PROPERTY_X86_ISA_1_NEEDED as ld.so reads it from the GNU property note (kIsaBit*
  // bits; 0: no marker). glibc 2.33 and later refuse to load an object whose bits the CPU lacks.
  uint32_t x86_isa_needed = 0;
  std::optional<std::string> soname;
  std::vector<std::string> needed;        // DT_NEEDED / PE imports, in order
  std::vector<std::string> delay_needed;  // PE delay-load imports
  std::vector<FilteeName> filtees;        // DT_FILTER / DT_AUXILIARY, in order: loaded before the object
  std::optional<std::string> rpath;       // raw DT_RPATH string, absent if no entry
  std::optional<std::string> runpath;     // raw DT_RUNPATH string
  uint64_t dt_flags = 0;                  // DT_FLAGS
  uint64_t dt_flags_1 = 0;                // DT_FLAGS_1
  bool has_dt_bind_now = false;           // DT_BIND_NOW tag present
  bool has_dt_symbolic = false;           // DT_SYMBOLIC tag present
  bool has_dynamic = false;               // PT_DYNAMIC present
  std::vector<VersionNeed> version_needs;
  std::vector<VersionDef> version_defs;
  std::vector<Symbol> symbols;            // dynamic symbols (ELF) / imports+exports (PE)
  std::shared_ptr<StringArena> symbol_strings = std::make_shared<StringArena>();  // what `symbols` point into
  bool symbols_read = true;               // false: the scan skipped the symbol table (--no-symbols)
  std::vector<Section> sections;
  uint64_t file_size = 0;
  std::shared_ptr<const CudaCode> cuda_code;  // fatbin listing (run_scan's fatbin stage); null: none

  bool bind_now() const;       // DF_BIND_NOW, DF_1_NOW or DT_BIND_NOW
  bool symbolic() const;       // DF_SYMBOLIC or DT_SYMBOLIC: its own definitions come first in its lookup scope
  bool nodeflib() const;       // DF_1_NODEFLIB
  bool static_tls() const;     // DF_STATIC_TLS: initial-exec TLS accesses, which need static TLS
  bool is_executable() const;  // ET_EXEC, or ET_DYN with an interpreter (PIE)
  // An executable that is not also a library: libc.so.6, libcap and Qt's libraries carry
  // PT_INTERP to run as programs, but have a SONAME and no DF_1_PIE.
  bool is_program_only() const;
  // The names of the symbols versioned by `need`: the undefined ones and the program's copies
  // (copy relocations), in symbol-table order.
  std::vector<std::string> symbols_needing(const VersionNeed& need) const;
  // PF_X in PT_GNU_STACK, or no PT_GNU_STACK on a machine whose glibc then presumes an executable
  // stack (x86, 32-bit ARM and PowerPC, s390, ...: DEFAULT_STACK_PROT_PERMS in sysdeps/*/stackinfo.h).
  bool needs_executable_stack() const;
  // The largest page size (4 KiB to 64 KiB) ld.so maps it with; 0 when none. glibc 2.35 and later
  // check the congruence only, older releases also that p_align is a multiple of the page size.
  uint64_t largest_page_size(bool glibc_before_2_35) const;
};

// A relocation type that gives a thread-local variable a fixed offset from the thread pointer
// (initial-exec: R_X86_64_TPOFF64 and its kin on the machines glibc supports).
bool is_static_tls_relocation(uint16_t machine, uint32_t type);
// A TLS descriptor (R_X86_64_TLSDESC and its kin, -mtls-dialect=gnu2), which sits in DT_JMPREL beside
// the PLT's relocations; glibc 2.33 and later resolve it at load.
bool is_tls_descriptor_relocation(uint16_t machine, uint32_t type);
// The PLT's relocation (R_X86_64_JUMP_SLOT and its kin), which lazy binding resolves at the first call.
bool is_jump_slot_relocation(uint16_t machine, uint32_t type);
// The copy relocation (R_X86_64_COPY and its kin): a program's copy of a library's variable.
bool is_copy_relocation(uint16_t machine, uint32_t type);

// x86-64 ISA levels as GNU_PROPERTY_X86_ISA_1_NEEDED and glibc's cpu_features->isa_1 count them.
inline constexpr uint32_t kIsaBaseline = 1, kIsaV2 = 2, kIsaV3 = 4, kIsaV4 = 8;

// The machines whose objects carry the x86 ISA marker ld.so checks: x86-64 and i386.
bool is_x86_machine(uint16_t machine);

// "x86-64-baseline", "x86-64-v2" ... "x86-64-v4", or "unknown ISA bit N" for bits glibc does not name.
std::vector<std::string> x86_isa_level_names(uint32_t bits);

// Records a PT_TLS segment as ld.so does (_dl_map_object_from_fd).
void set_tls_block(Binary& binary, uint64_t memsz, uint64_t align, uint64_t vaddr);

// The largest power of two that divides both `so_far` (0: nothing yet) and `value` (0 divides by all).
uint64_t merge_power_of_two(uint64_t so_far, uint64_t value);

// ELF constants the rest of the code names (kept here so no stage includes <elf.h> for them).
inline constexpr uint64_t kDfOrigin = 0x1, kDfSymbolic = 0x2, kDfBindNow = 0x8, kDfStaticTls = 0x10;
inline constexpr uint64_t kDf1Now = 0x1, kDf1Origin = 0x80, kDf1Nodeflib = 0x800, kDf1Pie = 0x08000000;

// ---------------------------------------------------------------- the graph

enum class EdgeKind { Needed, Preload, Dlopen, Delay };

// A Needed edge that names a filtee: DT_FILTER's (fatal when missing) or DT_AUXILIARY's (ignored).
enum class Filtee : uint8_t { None, Filter, Auxiliary };

enum class How {
  Rpath, LdLibraryPath, Runpath, LdSoCache, DefaultPath, DirectPath, AlreadyLoaded,
  Preload, SearchOrder /* PE DLL search order */, NotFound
};

struct Attempt {               // one candidate the search looked at, in order
  std::string path;
  std::string outcome;         // "not found", "wrong ELF class: ELFCLASS32", "taken", ...
  bool operator==(const Attempt&) const = default;
};

// The candidates one search looked at, in order. Every root of a scan asks for libc.so.6 through
// the same search lists: the edges one search answered share its list instead of a copy each.
// A list is never changed while shared: push_back() and edit() copy a shared list first.
class AttemptList {
 public:
  using const_iterator = std::vector<Attempt>::const_iterator;
  AttemptList() = default;
  AttemptList(std::initializer_list<Attempt> attempts);
  explicit AttemptList(std::vector<Attempt> attempts);

  const_iterator begin() const { return list_ ? list_->begin() : const_iterator(); }
  const_iterator end() const { return list_ ? list_->end() : const_iterator(); }
  size_t size() const { return list_ ? list_->size() : 0; }
  bool empty() const { return size() == 0; }
  const Attempt& front() const { return list_->front(); }
  const Attempt& back() const { return list_->back(); }
  const Attempt& operator[](size_t i) const { return (*list_)[i]; }
  void push_back(Attempt attempt) { edit().push_back(std::move(attempt)); }
  std::vector<Attempt>& edit();  // this edge's own copy, to change
  std::vector<Attempt> to_vector() const { return list_ ? *list_ : std::vector<Attempt>(); }
  bool operator==(const AttemptList& other) const;

 private:
  std::shared_ptr<std::vector<Attempt>> list_;
};

struct Edge {
  size_t from = 0;             // index into Graph::objects
  std::string name;            // NEEDED / import / dlopen name as written
  std::optional<size_t> to;    // resolved object, or nullopt
  EdgeKind kind = EdgeKind::Needed;
  How how = How::NotFound;
  std::string how_detail;      // e.g. "rpath of libfoo.so.1", "LD_LIBRARY_PATH"
  AttemptList tried;           // every path tried, in order
  bool inferred = false;       // dlopen edge guessed from strings, not known from the matrix
  std::string source;          // dlopen edges: why the edge exists (matrix row, string found)
  size_t root = 0;             // index into Graph::roots: the scan this edge belongs to
  bool system_provided = false;  // PE, not found: an API set, or a Windows system DLL the scan has no Windows directory for
  bool loaded_first = false;     // loaded by the root's Python package before the root (matrix loaded_first)
  Filtee filtee = Filtee::None;  // a Needed edge to a filtee of `from`
  bool filter_cycle = false;     // `to` is cleared: the filtee filters `from` in turn, and ld.so crashes

  bool ignored_when_missing() const { return filtee == Filtee::Auxiliary && !filter_cycle; }  // ld.so goes on without it
};

struct Object {
  std::string path;            // logical path it was opened by ($ORIGIN comes from here)
  std::string realpath;        // logical path with symlinks resolved
  std::shared_ptr<const Binary> binary;  // null if it could not be read
  std::string read_error;      // why binary is null
  uint64_t device = 0, inode = 0;
  std::string owner;           // distribution / package owning the file, if known
};

struct GlibcRelease {
  int major = 0;
  int minor = 0;
  auto operator<=>(const GlibcRelease&) const = default;
};

// The loader a root runs under, as the resolver followed it.
struct RootLoader {
  std::string own;                      // the program's own loader (its PT_INTERP), when not the system's default
  std::optional<GlibcRelease> release;  // that loader's glibc release, when known
  bool musl = false;                    // musl's loader, whose rules are not glibc's
};

struct Graph {
  std::vector<Object> objects;
  std::vector<Edge> edges;
  std::vector<size_t> roots;                   // objects scanned as roots, in order
  std::vector<std::vector<size_t>> load_order; // per root: breadth-first load order = lookup scope
  std::vector<RootLoader> root_loaders;        // per root
};

// Per root, the indices of its edges in graph order: a check that looks at one root's edges
// at a time must not walk every root's (a directory audit has thousands of roots).
std::vector<std::vector<size_t>> edges_by_root(const Graph& graph);

// The path of the file itself: the real path, or the path it was opened by when that is unknown.
// One file opened by two paths (scipy.libs/x and scipy/linalg/../../scipy.libs/x) is two objects.
const std::string& file_path(const Object& object);

// One key per file for the object at `index` (device and inode), or per object when the file is
// unknown: for checks that report a file once, however many paths reach it.
std::pair<uint64_t, uint64_t> file_key(const Graph& graph, size_t index);

// The name the matrix knows an object by: its SONAME, or the file name of its real path.
std::string soname_or_file_name(const Object& object);

// ---------------------------------------------------------------- findings and results

enum class Severity { Info = 0, Warning = 1, Error = 2 };

struct Finding {
  std::string code;            // stable id: library-not-found, undefined-symbol, ...
  Severity severity = Severity::Error;
  std::optional<size_t> object;  // index into Graph::objects
  std::string message;         // one line a user understands
  std::string fix;             // what to do about it, may be empty
  std::string path;            // file the finding is about, when there is no object
};

struct ScanResult {
  Graph graph;
  std::vector<Finding> findings;
};

const char* to_string(EdgeKind kind);
const char* to_string(How how);
const char* to_string(Severity severity);
const char* to_string(Format format);

}  // namespace depscan

template <>
struct fmt::formatter<depscan::SymbolText> : fmt::formatter<std::string_view> {};
