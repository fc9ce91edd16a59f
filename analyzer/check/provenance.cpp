#include "analyzer/check/provenance.h"

namespace depscan {
namespace {

// The reference a lookup for this definition would carry: its version if it has a named one.
Symbol probe_for(const Symbol& definition) {
  Symbol probe;
  probe.name = definition.name;
  if (definition.version_index >= 2 && definition.version_index != 0xffff) probe.version = definition.version;
  return probe;
}

}  // namespace

std::vector<SymbolProvenance> symbol_provenance(const SymbolIndex& symbols, std::string_view name) {
  std::vector<SymbolProvenance> out;
  const Graph& graph = symbols.graph();
  for (size_t root = 0; root < graph.load_order.size(); ++root) {
    SymbolProvenance p{root, {}, {}};
    for (size_t o : symbols.members(root)) {
      const std::vector<size_t>& scope = symbols.scope_for(root, o);
      for (const Symbol* d : symbols.definitions(o, name)) {
        auto bound = symbols.bind(scope, probe_for(*d));
        p.definitions.push_back({o, d, bound && bound->symbol == d, std::nullopt});
      }
      for (const Symbol& s : graph.objects[o].binary->symbols)
        if (!s.defined && s.name == name) p.uses.push_back({o, &s, false, symbols.bind(scope, s)});
    }
    if (!p.definitions.empty() || !p.uses.empty()) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace depscan
