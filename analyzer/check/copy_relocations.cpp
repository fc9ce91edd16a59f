// Copy relocations (R_X86_64_COPY): a program keeps its own copy of a library's variable, sized
// as the library's header declared it when the program was linked. At start-up ld.so copies
// min(program's size, library's size) bytes from the library's definition; a library whose
// variable grew ("Symbol `x' has different size in shared object, consider re-linking") then
// works on a copy too small for it. A missing definition is an undefined-symbol error.
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/check/symbol_index.h"

namespace depscan {
namespace {

Finding copy_finding(const Graph& graph, size_t program, size_t library, Severity severity, std::string message) {
  const Object& p = graph.objects[program];
  Finding f;
  f.code = "copy-relocation-size";  // a warning, or an info when glibc fills the copy with less than it holds
  f.severity = severity;
  f.object = program;
  f.path = p.path;
  f.message = std::move(message);
  f.fix = fmt::format("rebuild {} against the {} it runs with, or run it with the release it was built against",
                      basename_of(p.path), basename_of(graph.objects[library].path));
  return f;
}

// glibc copies min(program's size, library's size) and warns when the library's is larger.
std::string glibc_message(const Object& p, const Object& library, const Symbol& copy, const Symbol& source) {
  std::string versioned = copy.version.empty() ? "" : "@" + std::string(copy.version);
  if (source.size > copy.size)
    return fmt::format("{}: Symbol `{}' has different size in shared object, consider re-linking: the program's "
                       "copy of {}{} holds {} bytes, {} defines it with {}; the loader copies {} and {}'s code works "
                       "on the program's smaller copy",
                       p.path, copy.name, copy.name, versioned, copy.size, library.path, source.size, copy.size,
                       basename_of(library.path));
  return fmt::format("{}: the program's copy of {}{} holds {} bytes, {} defines it with {}: the loader copies {} and "
                     "the program's last {} bytes stay zero (ld.so is silent unless LD_WARN is set)",
                     p.path, copy.name, versioned, copy.size, library.path, source.size, source.size,
                     copy.size - source.size);
}

// musl copies the program's st_size, whatever the library's, and never warns.
std::string musl_message(const Object& p, const Object& library, const Symbol& copy, const Symbol& source) {
  return fmt::format("{}: the program's copy of {} holds {} bytes, {} defines it with {}: musl's loader copies the "
                     "program's {} bytes without a word, {}",
                     p.path, copy.name, copy.size, library.path, source.size, copy.size,
                     source.size > copy.size
                         ? fmt::format("and {}'s code works on the program's smaller copy", basename_of(library.path))
                         : fmt::format("the last {} of them from whatever follows the variable in {}",
                                       copy.size - source.size, basename_of(library.path)));
}

Finding size_finding(const Graph& graph, size_t program, const Symbol& copy, const Binding& source, bool musl) {
  const Object &p = graph.objects[program], &library = graph.objects[source.object];
  if (musl) return copy_finding(graph, program, source.object, Severity::Warning, musl_message(p, library, copy, *source.symbol));
  Severity severity = source.symbol->size > copy.size ? Severity::Warning : Severity::Info;
  return copy_finding(graph, program, source.object, severity, glibc_message(p, library, copy, *source.symbol));
}

}  // namespace

std::vector<Finding> check_copy_relocation_sizes(const CheckContext& ctx, const SymbolIndex& symbols) {
  std::vector<Finding> out;
  std::set<std::pair<size_t, std::string_view>> said;  // (program, name): once per program
  for (size_t root = 0; root < ctx.graph.load_order.size() && root < ctx.graph.roots.size(); ++root) {
    size_t program = ctx.graph.roots[root];
    const Object& object = ctx.graph.objects[program];
    if (!is_bindable(object) || !object.binary->is_executable()) continue;
    for (const SymbolIndex::Reference& reference : symbols.references(program)) {
      const Symbol& copy = *reference.symbol;
      if (!copy.copy_relocated) continue;
      auto source = symbols.bind_in(root, program, reference);
      if (!source || source->symbol->size == copy.size || !said.emplace(program, copy.name).second) continue;
      bool musl = root < ctx.graph.root_loaders.size() && ctx.graph.root_loaders[root].musl;
      out.push_back(size_finding(ctx.graph, program, copy, *source, musl));
    }
  }
  return out;
}

}  // namespace depscan
