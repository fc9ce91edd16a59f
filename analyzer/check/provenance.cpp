#include "analyzer/check/provenance.h"

namespace depscan {
namespace {

// An unversioned reference (what dlsym and unversioned programs use) to the symbol.
Symbol unversioned_probe(std::string_view name) {
  Symbol probe;
  probe.name = name;  // the caller's name outlives the probe
  return probe;
}

// A use the loader binds through the scope: an undefined symbol, a program's copy, or a
// definition the object's own relocations name.
bool is_use(const Symbol& s) { return !s.defined || s.copy_relocated || s.own_reference(); }

}  // namespace

std::vector<SymbolProvenance> symbol_provenance(const SymbolIndex& symbols, std::string_view name) {
  std::vector<SymbolProvenance> out;
  const Graph& graph = symbols.graph();
  for (size_t root = 0; root < graph.load_order.size(); ++root) {
    SymbolProvenance p{root, {}, {}};
    for (size_t o : symbols.members(root)) {
      const std::vector<size_t>& scope = symbols.scope_for(root, o);
      for (const Symbol* d : symbols.definitions(o, name)) {
        auto bound = symbols.bind(scope, unversioned_probe(name));
        p.definitions.push_back({o, d, bound && bound->symbol == d, std::nullopt});
      }
      bool symbolic = graph.objects[o].binary->symbolic();  // binds its own definitions to itself
      for (const Symbol& s : graph.objects[o].binary->symbols)
        if (s.name == name && is_use(s))
          p.uses.push_back({o, &s, false, symbolic && s.own_reference() ? Binding{o, &s} : symbols.bind(scope, s)});
    }
    if (!p.definitions.empty() || !p.uses.empty()) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace depscan
