#include "analyzer/model.h"

#include <algorithm>
#include <string>

namespace depscan {

bool Binary::bind_now() const {
  return has_dt_bind_now || (dt_flags & kDfBindNow) || (dt_flags_1 & kDf1Now);
}

bool Binary::symbolic() const {
  return has_dt_symbolic || (dt_flags & kDfSymbolic);
}

std::vector<std::string> Binary::symbols_needing(const VersionNeed& need) const {
  std::vector<std::string> out;
  for (const Symbol& s : symbols)
    if ((!s.defined || s.copy_relocated) && s.version_index == need.index && s.version == need.version)
      out.emplace_back(s.name);
  return out;
}

bool Binary::nodeflib() const { return dt_flags_1 & kDf1Nodeflib; }

bool Binary::static_tls() const { return dt_flags & kDfStaticTls; }

// Thread-pointer-relative relocation types of the machines glibc supports.
bool is_static_tls_relocation(uint16_t machine, uint32_t type) {
  constexpr uint16_t kI386 = 3, kArm = 40, kPpc64 = 21, kX8664 = 62, kAarch64 = 183, kRiscv = 243;
  switch (machine) {
    case kX8664: return type == 18 || type == 23;  // R_X86_64_TPOFF64, R_X86_64_TPOFF32
    case kI386: return type == 14 || type == 37;   // R_386_TLS_TPOFF, R_386_TLS_TPOFF32
    case kAarch64: return type == 1030;            // R_AARCH64_TLS_TPREL
    case kArm: return type == 19;                  // R_ARM_TLS_TPOFF32
    case kPpc64: return type == 73;                // R_PPC64_TPREL64
    case kRiscv: return type == 10 || type == 11;  // R_RISCV_TLS_TPREL32, R_RISCV_TLS_TPREL64
    default: return false;
  }
}

namespace {

// The PLT slot, copy and TLS descriptor relocation types of the machines glibc supports (0: the
// machine has no TLS descriptors).
struct SymbolRelocationTypes {
  uint16_t machine;
  uint32_t jump_slot, copy, tls_descriptor;
};
constexpr SymbolRelocationTypes kSymbolRelocationTypes[] = {
    {62, 7, 5, 36},           // x86-64: R_X86_64_JUMP_SLOT, R_X86_64_COPY, R_X86_64_TLSDESC
    {3, 7, 5, 41},            // i386: R_386_JMP_SLOT, R_386_COPY, R_386_TLS_DESC
    {183, 1026, 1024, 1031},  // aarch64: R_AARCH64_JUMP_SLOT, R_AARCH64_COPY, R_AARCH64_TLSDESC
    {40, 22, 20, 13},         // arm: R_ARM_JUMP_SLOT, R_ARM_COPY, R_ARM_TLS_DESC
    {21, 21, 19, 0},          // ppc64: R_PPC64_JMP_SLOT, R_PPC64_COPY
    {22, 11, 9, 0},           // s390: R_390_JMP_SLOT, R_390_COPY
    {243, 5, 4, 12},          // riscv: R_RISCV_JUMP_SLOT, R_RISCV_COPY, R_RISCV_TLSDESC
};

const SymbolRelocationTypes* symbol_relocation_types(uint16_t machine) {
  for (const SymbolRelocationTypes& types : kSymbolRelocationTypes)
    if (types.machine == machine) return &types;
  return nullptr;
}

}  // namespace

bool is_jump_slot_relocation(uint16_t machine, uint32_t type) {
  const SymbolRelocationTypes* types = symbol_relocation_types(machine);
  return types && types->jump_slot == type;
}

bool is_copy_relocation(uint16_t machine, uint32_t type) {
  const SymbolRelocationTypes* types = symbol_relocation_types(machine);
  return types && types->copy == type;
}

bool is_tls_descriptor_relocation(uint16_t machine, uint32_t type) {
  const SymbolRelocationTypes* types = symbol_relocation_types(machine);
  return types && types->tls_descriptor != 0 && types->tls_descriptor == type;
}

bool is_x86_machine(uint16_t machine) {
  constexpr uint16_t kI386 = 3, kX8664 = 62;
  return machine == kX8664 || machine == kI386;
}

std::vector<std::string> x86_isa_level_names(uint32_t bits) {
  static const char* const names[] = {"x86-64-baseline", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  std::vector<std::string> out;
  for (uint32_t bit = 0; bit < 32; ++bit) {
    if (!(bits & (uint32_t{1} << bit))) continue;
    out.push_back(bit < 4 ? std::string(names[bit]) : "unknown ISA bit " + std::to_string(bit));
  }
  return out;
}

void set_tls_block(Binary& binary, uint64_t memsz, uint64_t align, uint64_t vaddr) {
  binary.tls_size = memsz;
  binary.tls_align = align;
  binary.tls_first_byte = align ? vaddr & (align - 1) : 0;  // as ld.so computes it
}

bool Binary::is_executable() const {
  constexpr uint16_t kEtExec = 2, kEtDyn = 3;
  return file_type == kEtExec || (file_type == kEtDyn && !interpreter.empty());
}

bool Binary::is_program_only() const {
  constexpr uint16_t kEtExec = 2;
  return is_executable() && (file_type == kEtExec || (dt_flags_1 & kDf1Pie) || !soname);
}

bool Binary::needs_executable_stack() const {
  constexpr uint32_t kPfX = 1;
  if (stack_flags) return *stack_flags & kPfX;
  if (format != Format::Elf) return false;
  constexpr uint16_t kSparc = 2, kI386 = 3, kM68k = 4, kMips = 8, kParisc = 15, kPpc = 20, kS390 = 22, kArm = 40,
                     kSh = 42, kSparcv9 = 43, kX8664 = 62, kOr1k = 92, kMicroblaze = 189, kAlpha = 0x9026;
  for (uint16_t m : {kSparc, kI386, kM68k, kMips, kParisc, kPpc, kS390, kArm, kSh, kSparcv9, kX8664, kOr1k, kMicroblaze, kAlpha})
    if (machine == m) return true;
  return false;
}

uint64_t merge_power_of_two(uint64_t so_far, uint64_t value) {
  uint64_t power = value ? value & (~value + 1) : uint64_t{1} << 63;  // lowest set bit
  return so_far ? std::min(so_far, power) : power;
}

uint64_t Binary::largest_page_size(bool glibc_before_2_35) const {
  constexpr uint64_t kSmallest = 4096, kLargest = 65536;
  if (!load_congruence) return kLargest;
  uint64_t bound = std::min(load_congruence, glibc_before_2_35 ? load_alignment : load_congruence);
  if (bound < kSmallest) return 0;
  return std::min(bound, kLargest);
}

AttemptList::AttemptList(std::initializer_list<Attempt> attempts)
    : list_(std::make_shared<std::vector<Attempt>>(attempts)) {}

AttemptList::AttemptList(std::vector<Attempt> attempts)
    : list_(std::make_shared<std::vector<Attempt>>(std::move(attempts))) {}

std::vector<Attempt>& AttemptList::edit() {
  if (!list_) list_ = std::make_shared<std::vector<Attempt>>();
  else if (list_.use_count() > 1) list_ = std::make_shared<std::vector<Attempt>>(*list_);
  return *list_;
}

bool AttemptList::operator==(const AttemptList& other) const {
  return std::equal(begin(), end(), other.begin(), other.end());
}

const char* to_string(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::Needed: return "needed";
    case EdgeKind::Preload: return "preload";
    case EdgeKind::Dlopen: return "dlopen";
    case EdgeKind::Delay: return "delay";
  }
  return "?";
}

const char* to_string(How how) {
  switch (how) {
    case How::Rpath: return "rpath";
    case How::LdLibraryPath: return "ld_library_path";
    case How::Runpath: return "runpath";
    case How::LdSoCache: return "ld_so_cache";
    case How::DefaultPath: return "default_path";
    case How::DirectPath: return "direct_path";
    case How::AlreadyLoaded: return "already_loaded";
    case How::Preload: return "preload";
    case How::SearchOrder: return "search_order";
    case How::NotFound: return "not_found";
  }
  return "?";
}

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "?";
}

const char* to_string(Format format) {
  switch (format) {
    case Format::Elf: return "elf";
    case Format::Pe: return "pe";
    case Format::Unknown: return "unknown";
  }
  return "?";
}

std::vector<std::vector<size_t>> edges_by_root(const Graph& graph) {
  std::vector<size_t> counts(std::max(graph.roots.size(), graph.load_order.size()));
  for (const Edge& e : graph.edges) {
    if (e.root >= counts.size()) counts.resize(e.root + 1);
    ++counts[e.root];
  }
  std::vector<std::vector<size_t>> out(counts.size());
  for (size_t root = 0; root < out.size(); ++root) out[root].reserve(counts[root]);
  for (size_t i = 0; i < graph.edges.size(); ++i) out[graph.edges[i].root].push_back(i);
  return out;
}

std::pair<uint64_t, uint64_t> file_key(const Graph& graph, size_t index) {
  const Object& o = graph.objects[index];
  return o.inode ? std::pair(o.device, o.inode) : std::pair(~uint64_t{0}, uint64_t{index});
}

const std::string& file_path(const Object& object) { return object.realpath.empty() ? object.path : object.realpath; }

std::string soname_or_file_name(const Object& object) {
  if (object.binary && object.binary->soname) return *object.binary->soname;
  const std::string& path = file_path(object);
  return path.substr(path.rfind('/') + 1);
}

}  // namespace depscan
