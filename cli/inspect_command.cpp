// depscan inspect FILE: the deep single-file view from a full LIEF parse - header, interpreter,
// soname, needed, rpath/runpath, flags, version needs and definitions, symbol counts, sections.
// --symbols lists every dynamic symbol; --format json prints the same as one JSON object.
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/json_text.h"
#include "analyzer/read/deep_read.h"
#include "cli/commands.h"
#include "cli/safe_print.h"

namespace depscan::cli {
namespace {

struct InspectArgs {
  std::string file;
  std::string format = "text";
  std::optional<std::string> root;
  bool symbols = false;
};

std::string machine_name(const Binary& b) {
  if (b.format == Format::Pe) {
    switch (b.machine) {
      case 0x8664: return "AMD64";
      case 0x14c: return "I386";
      case 0xaa64: return "ARM64";
      default: return fmt::format("{:#x}", b.machine);
    }
  }
  switch (b.machine) {
    case 3: return "i386";
    case 20: return "PowerPC";
    case 21: return "PowerPC64";
    case 40: return "ARM";
    case 62: return "x86-64";
    case 183: return "AArch64";
    case 243: return "RISC-V";
    default: return fmt::format("e_machine {}", b.machine);
  }
}

std::string elf_type_name(uint16_t type) {
  switch (type) {
    case 1: return "REL (relocatable)";
    case 2: return "EXEC (executable)";
    case 3: return "DYN (shared object or PIE)";
    case 4: return "CORE";
    default: return fmt::format("e_type {}", type);
  }
}

std::string flag_names(const Binary& b) {
  std::vector<std::string> names;
  if (b.dt_flags & kDfOrigin) names.push_back("ORIGIN");
  if (b.dt_flags & kDfBindNow) names.push_back("BIND_NOW");
  if (b.dt_flags & kDfStaticTls) names.push_back("STATIC_TLS");
  if (b.dt_flags_1 & kDf1Now) names.push_back("NOW");
  if (b.dt_flags_1 & kDf1Origin) names.push_back("ORIGIN_1");
  if (b.dt_flags_1 & kDf1Nodeflib) names.push_back("NODEFLIB");
  if (b.dt_flags_1 & kDf1Pie) names.push_back("PIE");
  if (b.has_dt_bind_now) names.push_back("DT_BIND_NOW");
  return fmt::format("DT_FLAGS={:#x} DT_FLAGS_1={:#x} [{}]", b.dt_flags, b.dt_flags_1, fmt::join(names, " "));
}

std::string section_type_name(const Binary& b, uint32_t type) {
  if (b.format != Format::Elf) return "-";
  switch (type) {
    case 0: return "NULL";
    case 1: return "PROGBITS";
    case 2: return "SYMTAB";
    case 3: return "STRTAB";
    case 4: return "RELA";
    case 5: return "HASH";
    case 6: return "DYNAMIC";
    case 7: return "NOTE";
    case 8: return "NOBITS";
    case 9: return "REL";
    case 11: return "DYNSYM";
    case 14: return "INIT_ARRAY";
    case 15: return "FINI_ARRAY";
    case 0x6ffffff6: return "GNU_HASH";
    case 0x6ffffffd: return "VERDEF";
    case 0x6ffffffe: return "VERNEED";
    case 0x6fffffff: return "VERSYM";
    default: return fmt::format("{:#x}", type);
  }
}

struct SymbolCounts {
  size_t total = 0, defined = 0, undefined = 0, weak = 0, versioned = 0, hidden = 0;
};

SymbolCounts count_symbols(const Binary& b) {
  SymbolCounts c;
  for (const Symbol& s : b.symbols) {
    ++c.total;
    ++(s.defined ? c.defined : c.undefined);
    c.weak += s.binding == SymbolBinding::Weak;
    c.versioned += !s.version.empty();
    c.hidden += s.hidden;
  }
  return c;
}

std::string symbol_text(const Symbol& s) {
  std::string text(s.name);
  bool needed = !s.defined || s.copy_relocated;  // versioned by a DT_VERNEED entry
  if (!s.version.empty()) text += fmt::format("{}{}", needed || s.hidden ? "@" : "@@", s.version);
  if (needed && !s.version_file.empty()) text += fmt::format(" (from {})", s.version_file);
  if (!needed && !s.version_file.empty()) text += fmt::format(" -> {}", s.version_file);  // PE forwarder
  const char* kind = s.copy_relocated ? "COPY" : s.defined ? "DEF" : "UND";
  return fmt::format("{} {}{}", kind, s.binding == SymbolBinding::Weak ? "weak " : "", text);
}

std::string stack_text(const Binary& b) {
  std::string needs = b.needs_executable_stack() ? "executable" : "not executable";
  if (!b.stack_flags) return fmt::format("no PT_GNU_STACK: {} presumed", needs);
  return fmt::format("PT_GNU_STACK {}{}{}: {}", *b.stack_flags & 4 ? "R" : "", *b.stack_flags & 2 ? "W" : "",
                     *b.stack_flags & 1 ? "E" : "", needs);
}

std::string pages_text(const Binary& b) {
  auto size = [](uint64_t bytes) { return bytes ? fmt::format("{} KiB", bytes / 1024) : std::string("none"); };
  uint64_t now = b.largest_page_size(false), before = b.largest_page_size(true);
  if (now == before) return fmt::format("PT_LOAD segments fit pages up to {}", size(now));
  return fmt::format("PT_LOAD segments fit pages up to {} (glibc 2.35 and later), {} before", size(now), size(before));
}

// What an initial-exec TLS relocation names: the object's own block, or a variable by name.
std::string static_tls_target(const Binary& b, uint32_t index) {
  if (index == 0) return "its own block";
  if (index > b.symbols.size()) return fmt::format("dynamic symbol {}", index);
  return std::string(b.symbols[index - 1].name);
}

std::vector<std::string> static_tls_targets(const Binary& b) {
  std::vector<std::string> out;
  for (uint32_t index : b.static_tls_symbols) out.push_back(static_tls_target(b, index));
  return out;
}

std::string tls_text(const Binary& b) {
  std::string block = b.tls_size ? fmt::format("{} bytes aligned to {}", b.tls_size, b.tls_align) : "no PT_TLS";
  if (!b.static_tls()) return block;
  auto targets = static_tls_targets(b);
  return fmt::format("{}; initial-exec accesses (DF_STATIC_TLS) to {}", block,
                     targets.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(targets, ", ")));
}

void print_text(const Binary& b, bool with_symbols) {
  if (b.format == Format::Pe)
    print_safe("{}: PE{} {}, characteristics {:#x}\n", b.path, b.bits == 64 ? "32+" : "32", machine_name(b), b.file_type);
  else
    print_safe("{}: ELF {}-bit {}, {}, {}, OS/ABI {}\n", b.path, b.bits, b.little_endian ? "LSB" : "MSB",
               machine_name(b), elf_type_name(b.file_type), b.os_abi);
  print_safe("size: {} bytes\n", b.file_size);
  if (!b.interpreter.empty()) print_safe("interpreter: {}\n", b.interpreter);
  if (b.soname) print_safe("soname: {}\n", *b.soname);
  for (const std::string& n : b.needed) print_safe("needed: {}\n", n);
  for (const std::string& n : b.delay_needed) print_safe("delay-load: {}\n", n);
  if (b.rpath) print_safe("rpath: {}\n", *b.rpath);
  if (b.runpath) print_safe("runpath: {}\n", *b.runpath);
  if (b.format == Format::Elf)
    print_safe("flags: {}\nstack: {}\npages: {}\ntls: {}\n", flag_names(b), stack_text(b), pages_text(b), tls_text(b));
  if (b.x86_isa_needed) print_safe("isa needed: {}\n", fmt::join(x86_isa_level_names(b.x86_isa_needed), ", "));
  if (!b.version_needs.empty()) print_safe("version needs:\n");
  for (const VersionNeed& n : b.version_needs)
    print_safe("  {} {} (index {}){}\n", n.file, n.version, n.index, n.weak ? " weak" : "");
  if (!b.version_defs.empty()) print_safe("version definitions:\n");
  for (const VersionDef& d : b.version_defs)
    print_safe("  {} {}{}{}\n", d.index, d.name, d.base ? " (file)" : "",
               d.parents.empty() ? "" : fmt::format(" parents: {}", fmt::join(d.parents, ", ")));
  SymbolCounts c = count_symbols(b);
  print_safe("symbols: {} ({} defined, {} undefined, {} weak, {} versioned, {} hidden)\n", c.total, c.defined,
             c.undefined, c.weak, c.versioned, c.hidden);
  if (with_symbols)
    for (const Symbol& s : b.symbols) print_safe("  {}\n", symbol_text(s));
  print_safe("sections: {}\n", b.sections.size());
  for (const Section& s : b.sections)
    print_safe("  {:<24} {:<11} flags {:#x} addr {:#x} offset {:#x} size {:#x}\n", s.name,
               section_type_name(b, s.type), s.flags, s.addr, s.offset, s.size);
}

nlohmann::json to_json(const Binary& b, bool with_symbols) {
  using nlohmann::json;
  json needs = json::array(), defs = json::array(), sections = json::array(), symbols = json::array();
  for (const VersionNeed& n : b.version_needs)
    needs.push_back({{"file", n.file}, {"version", n.version}, {"index", n.index}, {"weak", n.weak}});
  for (const VersionDef& d : b.version_defs)
    defs.push_back({{"name", d.name}, {"index", d.index}, {"base", d.base}, {"parents", d.parents}});
  for (const Section& s : b.sections)
    sections.push_back({{"name", s.name}, {"type", s.type}, {"flags", s.flags}, {"addr", s.addr},
                        {"offset", s.offset}, {"size", s.size}});
  SymbolCounts c = count_symbols(b);
  json out = {{"path", b.path}, {"format", to_string(b.format)}, {"bits", b.bits},
              {"little_endian", b.little_endian}, {"machine", b.machine}, {"machine_name", machine_name(b)},
              {"file_type", b.file_type}, {"os_abi", b.os_abi}, {"file_size", b.file_size},
              {"interpreter", b.interpreter.empty() ? json(nullptr) : json(b.interpreter)},
              {"soname", b.soname ? json(*b.soname) : json(nullptr)}, {"needed", b.needed},
              {"delay_needed", b.delay_needed}, {"rpath", b.rpath ? json(*b.rpath) : json(nullptr)},
              {"runpath", b.runpath ? json(*b.runpath) : json(nullptr)}, {"dt_flags", b.dt_flags},
              {"dt_flags_1", b.dt_flags_1}, {"bind_now", b.bind_now()}, {"nodeflib", b.nodeflib()},
              {"stack_flags", b.stack_flags ? json(*b.stack_flags) : json(nullptr)},
              {"needs_executable_stack", b.needs_executable_stack()},
              {"largest_page_size", b.largest_page_size(false)},
              {"tls", b.tls_size ? json{{"size", b.tls_size}, {"align", b.tls_align}, {"first_byte", b.tls_first_byte}}
                                 : json(nullptr)},
              {"static_tls", b.static_tls()}, {"static_tls_targets", static_tls_targets(b)},
              {"x86_isa_needed", x86_isa_level_names(b.x86_isa_needed)},
              {"version_needs", needs}, {"version_defs", defs},
              {"symbol_counts", {{"total", c.total}, {"defined", c.defined}, {"undefined", c.undefined},
                                 {"weak", c.weak}, {"versioned", c.versioned}, {"hidden", c.hidden}}},
              {"sections", sections}};
  if (with_symbols) {
    for (const Symbol& s : b.symbols)
      symbols.push_back({{"name", s.name}, {"defined", s.defined}, {"binding", static_cast<int>(s.binding)},
                         {"type", static_cast<int>(s.type)}, {"version", s.version}, {"version_file", s.version_file},
                         {"hidden", s.hidden}, {"size", s.size}, {"bound_at_load", s.bound_at_load},
                         {"plt_called", s.plt_called}, {"copy_relocation", s.copy_relocated}});
    out["symbols"] = symbols;
  }
  return out;
}

int run(const InspectArgs& args) {
  std::unique_ptr<FileSystem> fs = args.root ? make_rooted_fs(absolute_path(*args.root)) : make_real_fs();
  std::string logical = args.root ? normalize_path(args.file) : absolute_path(args.file);
  auto binary = read_binary_deep(*fs, logical);
  if (!binary) {
    print_safe(stderr, "depscan: error: {}: {}\n", args.file, binary.error());
    if (args.format == "json") fmt::print("{}", json_text(nlohmann::json{{"path", args.file}, {"error", binary.error()}}));
    return kExitUsage;
  }
  if (args.format == "json") fmt::print("{}", json_text(to_json(*binary, args.symbols)));  // JSON escapes its own strings
  else print_text(*binary, args.symbols);
  return kExitClean;
}

}  // namespace

void add_inspect_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "deep view of one ELF or PE file (full LIEF parse)");
  cmd->add_option("file", args->file, "the ELF or PE file")->required();
  cmd->add_option("--format", args->format, "output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--root", args->root, "read FILE inside this root file system")
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--symbols", args->symbols, "list every dynamic symbol (ELF) or import/export (PE)");
  cmd->callback([args, &exit_code] {
    exit_code = run(*args);
  });
}

}  // namespace depscan::cli
