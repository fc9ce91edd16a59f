// depscan symbol NAME FILE...: where a symbol is defined in the resolved graph (each definition
// with its version, and which one wins by load order) and who uses it.
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/json_text.h"
#include "analyzer/check/provenance.h"
#include "analyzer/scan/scan.h"
#include "cli/commands.h"
#include "cli/unreadable_inputs.h"
#include "report/report.h"

namespace depscan::cli {
namespace {

struct SymbolArgs {
  std::string name;
  ScanOptions scan;
  std::string format = "text";
};

std::string spelled(const Symbol& s) {
  if (s.defined) {
    if (s.version_index < 2 || s.version_index == 0xffff || s.version.empty()) return std::string(s.name);
    return fmt::format("{}{}{}", s.name, s.hidden ? "@" : "@@", s.version);
  }
  return s.version.empty() ? std::string(s.name) : fmt::format("{}@{}", s.name, s.version);
}

const char* binding_name(SymbolBinding b) {
  switch (b) {
    case SymbolBinding::Weak: return "weak";
    case SymbolBinding::Unique: return "unique";
    case SymbolBinding::Local: return "local";
    default: return "global";
  }
}

const char* type_name(SymbolType t) {
  switch (t) {
    case SymbolType::Func: return "function";
    case SymbolType::Object: return "object";
    case SymbolType::Tls: return "tls";
    case SymbolType::GnuIfunc: return "ifunc";
    case SymbolType::Common: return "common";
    default: return "notype";
  }
}

std::string render_text(const Graph& g, const std::string& name, const std::vector<SymbolProvenance>& all) {
  std::string out;
  for (const SymbolProvenance& p : all) {
    out += fmt::format("{} in {}\n", name, g.objects[g.roots[p.root]].path);
    out += p.definitions.empty() ? "  defined by: nothing loaded\n" : "  defined by (load order):\n";
    for (const SymbolSite& d : p.definitions)
      out += fmt::format("    {} {}  {} ({} {}){}\n", d.wins ? "*" : " ", g.objects[d.object].path,
                         spelled(*d.symbol), binding_name(d.symbol->binding), type_name(d.symbol->type),
                         d.wins ? "  <- wins" : "  (shadowed)") +
           (d.symbol->copy_relocated ? "      the program's copy (copy relocation), filled at start-up from the definition its use below binds to\n" : "");
    out += p.uses.empty() ? "  used by: nothing loaded\n" : "  used by:\n";
    for (const SymbolSite& u : p.uses) {
      std::string from = u.symbol->version_file.empty() ? "" : fmt::format(" from {}", u.symbol->version_file);
      std::string to = u.bound ? "-> " + g.objects[u.bound->object].path
                               : (u.symbol->binding == SymbolBinding::Weak ? "-> unresolved (weak, stays null)"
                                                                          : "-> UNRESOLVED");
      std::string kind = u.symbol->copy_relocated ? " (copy relocation)" : u.symbol->defined ? " (its own definition)" : "";
      out += fmt::format("      {}  {}{}{} {}\n", g.objects[u.object].path, spelled(*u.symbol), kind, from, to);
    }
  }
  return out;
}

// The inputs that could not be analysed, in the report's words.
nlohmann::json input_errors(const ScanReport& report) {
  nlohmann::json errors = nlohmann::json::array();
  for (const Finding& f : report.result.findings)
    if (f.code == "input-error" && f.severity == Severity::Error) errors.push_back(f.message);
  return errors;
}

std::string render_json(const Graph& g, const std::string& name, const std::vector<SymbolProvenance>& all,
                        const nlohmann::json& errors) {
  using nlohmann::json;
  json roots = json::array();
  for (const SymbolProvenance& p : all) {
    json defs = json::array(), uses = json::array();
    for (const SymbolSite& d : p.definitions)
      defs.push_back({{"object", d.object}, {"path", g.objects[d.object].path},
                      {"version", d.symbol->version.empty() ? json(nullptr) : json(d.symbol->version)},
                      {"default", !d.symbol->hidden}, {"binding", binding_name(d.symbol->binding)},
                      {"type", type_name(d.symbol->type)}, {"wins", d.wins}});
    for (const SymbolSite& u : p.uses)
      uses.push_back({{"object", u.object}, {"path", g.objects[u.object].path},
                      {"version", u.symbol->version.empty() ? json(nullptr) : json(u.symbol->version)},
                      {"version_file", u.symbol->version_file.empty() ? json(nullptr) : json(u.symbol->version_file)},
                      {"weak", u.symbol->binding == SymbolBinding::Weak}, {"copy_relocation", u.symbol->copy_relocated},
                      {"own_definition", u.symbol->defined && !u.symbol->copy_relocated},
                      {"binds_to", u.bound ? json(u.bound->object) : json(nullptr)}});
    roots.push_back({{"root", g.objects[g.roots[p.root]].path}, {"definitions", defs}, {"uses", uses}});
  }
  return json_text(json{{"schema", "depscan-symbol/1"}, {"symbol", name}, {"roots", roots}, {"errors", errors}});
}

int run(const SymbolArgs& args) {
  ScanReport report = run_scan(args.scan);
  bool unreadable = report_unreadable_inputs(report);
  if (unreadable && args.format != "json") return kExitUsage;  // JSON names the errors for the pipeline
  const Graph& graph = report.result.graph;
  SymbolIndex symbols(graph);
  std::vector<SymbolProvenance> all = symbol_provenance(symbols, args.name);
  std::string out = args.format == "json" ? render_json(graph, args.name, all, input_errors(report))
                                          : render_text(graph, args.name, all);
  if (all.empty() && args.format != "json") out = fmt::format("{}: not defined or used by any loaded object\n", args.name);
  if (args.format != "json") out = terminal_safe(out, false);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (unreadable) return kExitUsage;
  return all.empty() ? kExitFindings : kExitClean;
}

}  // namespace

void add_symbol_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SymbolArgs>();
  CLI::App* cmd = app.add_subcommand(
      "symbol", "where a symbol is defined in the loaded graph, which definition wins, and who uses it "
                "(exit 1 if nothing loaded defines or uses it)");
  cmd->add_option("name", args->name, "symbol name, e.g. cudnnCreate")->required();
  cmd->add_option("inputs", args->scan.inputs, "ELF files whose graphs to search")->required();
  cmd->add_option("--root", args->scan.root, "analyse a container root file system as if it were /")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--ld-library-path", args->scan.ld_library_path, "LD_LIBRARY_PATH of the target process");
  cmd->add_option("--preload", args->scan.preload, "LD_PRELOAD of the target process");
  cmd->add_flag("--no-etc-preload", args->scan.no_etc_preload, "ignore /etc/ld.so.preload");
  cmd->add_option("--matrix", args->scan.matrix_path,
                  "replace the embedded CUDA/cuDNN data (and the libraries it says programs open with dlopen)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--format", args->format, "output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([args, &exit_code] {
    exit_code = run(*args);
  });
}

}  // namespace depscan::cli
