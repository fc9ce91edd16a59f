#include "analyzer/check/symbol_index.h"

#include <algorithm>

#include "analyzer/util/parallel.h"

namespace depscan {
namespace {

constexpr uint16_t kNoVersym = 0xffff;

uint64_t pair_key(size_t root, size_t object) { return (uint64_t(root) << 32) ^ uint64_t(object); }

// dl-lookup.c's ALLOWED_STT and the bindings do_lookup_x accepts (local symbols are ignored).
bool is_bindable_definition(const Symbol& s) {
  if (!s.defined) return false;
  switch (s.binding) {
    case SymbolBinding::Global: case SymbolBinding::Weak: case SymbolBinding::Unique: break;
    default: return false;
  }
  switch (s.type) {
    case SymbolType::NoType: case SymbolType::Object: case SymbolType::Func:
    case SymbolType::Common: case SymbolType::Tls: case SymbolType::GnuIfunc: return true;
    default: return false;
  }
}

}  // namespace

// Definitions sorted by name (stable, so symbol-table order within a name); the map points at
// each name's run. Built once per object.
struct SymbolIndex::Table {
  std::vector<const Symbol*> definitions;
  std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> runs;  // first, count

  explicit Table(const Binary& binary) {
    for (const Symbol& s : binary.symbols)
      if (is_bindable_definition(s)) definitions.push_back(&s);
    std::stable_sort(definitions.begin(), definitions.end(),
                     [](const Symbol* a, const Symbol* b) { return a->name < b->name; });
    runs.reserve(definitions.size());
    for (uint32_t i = 0; i < definitions.size();) {
      uint32_t j = i + 1;
      while (j < definitions.size() && definitions[j]->name == definitions[i]->name) ++j;
      runs.emplace(definitions[i]->name, std::pair{i, j - i});
      i = j;
    }
  }
};

bool is_bindable(const Object& object) {
  return object.binary && object.binary->format == Format::Elf;
}

// Objects the root loads at start-up: reachable from the root through NEEDED and preload edges.
std::vector<bool> started_with(const Graph& graph, size_t root) {
  std::vector<bool> global(graph.objects.size(), false);
  std::vector<std::vector<size_t>> next(graph.objects.size());
  for (const Edge& e : graph.edges)
    if (e.root == root && e.to && e.from < graph.objects.size() && *e.to < graph.objects.size() &&
        (e.kind == EdgeKind::Needed || e.kind == EdgeKind::Preload))
      next[e.from].push_back(*e.to);
  std::vector<size_t> queue{graph.roots[root]};
  global[graph.roots[root]] = true;
  for (size_t i = 0; i < queue.size(); ++i)
    for (size_t n : next[queue[i]]) {
      if (global[n]) continue;
      global[n] = true;
      queue.push_back(n);
    }
  return global;
}

SymbolIndex::SymbolIndex(const Graph& graph) : graph_(graph) {
  std::vector<bool> in_scope(graph.objects.size(), false);
  for (size_t root = 0; root < graph.load_order.size(); ++root) {
    std::vector<bool>& global = global_.emplace_back(
        root < graph.roots.size() && graph.roots[root] < graph.objects.size() ? started_with(graph, root)
                                                                             : std::vector<bool>(graph.objects.size(), true));
    std::vector<size_t>& scope = scopes_.emplace_back();
    std::vector<size_t>& members = members_.emplace_back();
    std::vector<size_t> dlopened;
    auto& names = names_.emplace_back();
    for (size_t o : graph.load_order[root]) {
      if (o >= graph.objects.size() || !is_bindable(graph.objects[o])) continue;
      (global[o] ? scope : dlopened).push_back(o);
      in_scope[o] = true;
      if (const auto& soname = graph.objects[o].binary->soname) names.emplace(*soname, o);
    }
    members = scope;
    members.insert(members.end(), dlopened.begin(), dlopened.end());
  }
  for (const Edge& e : graph.edges) {
    if (!e.to || e.root >= names_.size() || !in_scope[*e.to]) continue;
    names_[e.root].emplace(e.name, *e.to);
    if (e.kind == EdgeKind::Needed) needed_[pair_key(e.root, e.from)].push_back(*e.to);
  }
  tables_.resize(graph.objects.size());
  parallel_for_index(graph.objects.size(), [&](size_t o) {
    if (in_scope[o]) tables_[o] = std::make_unique<Table>(*graph.objects[o].binary);
  });
  for (size_t o = 0; o < tables_.size(); ++o)
    if (tables_[o])
      for (const auto& run : tables_[o]->runs) definers_[run.first].push_back(static_cast<uint32_t>(o));
}

SymbolIndex::~SymbolIndex() = default;

bool SymbolIndex::is_dlopened(size_t root, size_t object) const {
  return root < global_.size() && object < global_[root].size() && !global_[root][object];
}

const std::vector<size_t>& SymbolIndex::scope_for(size_t root, size_t object) const {
  return is_dlopened(root, object) ? members_[root] : scopes_[root];
}

std::span<const Symbol* const> SymbolIndex::definitions(size_t object, std::string_view name) const {
  if (object >= tables_.size() || !tables_[object]) return {};
  const Table& t = *tables_[object];
  auto it = t.runs.find(name);
  if (it == t.runs.end()) return {};
  return std::span<const Symbol* const>(t.definitions.data() + it->second.first, it->second.second);
}

// check_match's version rules. A versioned reference (foo@V) takes a definition of version V,
// an unversioned or base-version definition that is not hidden, or anything from an object
// without symbol versioning. An unversioned reference takes a definition of index 0-2 (local,
// base, or the oldest named version), or else the only non-hidden versioned one.
const Symbol* SymbolIndex::match(size_t object, const Symbol& reference) const {
  const Symbol* only_versioned = nullptr;
  int versioned = 0;
  for (const Symbol* def : definitions(object, reference.name)) {
    bool unversioned_object = def->version_index == kNoVersym;
    if (!reference.version.empty()) {
      if (unversioned_object || def->version == reference.version) return def;
      if (def->version_index <= 1 && !def->hidden) return def;
      continue;
    }
    if (unversioned_object || def->version_index < 3) return def;
    if (!def->hidden && versioned++ == 0) only_versioned = def;
  }
  return versioned == 1 ? only_versioned : nullptr;
}

// The scope is walked in order as ld.so does, but only the objects that define the name at all
// are asked (one hash lookup per reference instead of one per object of the scope).
std::optional<Binding> SymbolIndex::bind(std::span<const size_t> scope, const Symbol& reference) const {
  auto it = definers_.find(reference.name);
  if (it == definers_.end()) return std::nullopt;
  const std::vector<uint32_t>& definers = it->second;
  for (size_t o : scope)
    if (std::find(definers.begin(), definers.end(), o) != definers.end())
      if (const Symbol* def = match(o, reference)) return Binding{o, def};
  return std::nullopt;
}

std::optional<size_t> SymbolIndex::loaded(size_t root, std::string_view name) const {
  if (root >= names_.size()) return std::nullopt;
  auto it = names_[root].find(name);
  if (it == names_[root].end()) return std::nullopt;
  return it->second;
}

std::span<const size_t> SymbolIndex::direct_needed(size_t root, size_t object) const {
  auto it = needed_.find(pair_key(root, object));
  if (it == needed_.end()) return {};
  return it->second;
}

}  // namespace depscan
