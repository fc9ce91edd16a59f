#include "analyzer/check/symbol_index.h"

#include <algorithm>
#include <map>
#include <span>

#include "analyzer/util/parallel.h"

namespace depscan {
namespace {

// Below this many symbols a second thread costs more than it saves (none without symbol tables).
constexpr size_t kSymbolsWorthAThread = 8192;

struct SearchList {
  std::vector<size_t> objects;
  bool fails = false;
};

uint64_t pair_key(size_t root, size_t object) { return (uint64_t(root) << 32) ^ uint64_t(object); }

// dl-lookup.c's ALLOWED_STT and the bindings do_lookup_x accepts (local symbols are ignored); a
// symbol of value 0 is no definition to check_match unless it is absolute or thread-local.
bool is_bindable_definition(const Symbol& s) {
  if (!s.defined || s.valueless_definition()) return false;
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

// Edges as (from, to) pairs, grouped by from in the order they were made: an object's children.
template <class To>
class Children {
 public:
  void add(size_t from, To to) { pairs_.emplace_back(from, to); }
  void reserve(size_t n) { pairs_.reserve(n); }
  void group() {
    std::stable_sort(pairs_.begin(), pairs_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  std::span<const std::pair<size_t, To>> of(size_t from) const {
    auto first = std::lower_bound(pairs_.begin(), pairs_.end(), from, [](const auto& e, size_t o) { return e.first < o; });
    auto last = std::find_if(first, pairs_.end(), [from](const auto& e) { return e.first != from; });
    return {first, last};
  }

 private:
  std::vector<std::pair<size_t, To>> pairs_;
};

struct Need {
  std::optional<size_t> to;
  bool filtee = false;  // goes before the object that names it
};

// One dlopen's search list as _dl_map_object_deps builds it: breadth first, each object's NEEDED
// appended, its filtees put just before it (one further down moved up) and worked on next.
void build_search_list(size_t target, const Children<Need>& needed, std::vector<size_t>& listed_by,
                       std::vector<size_t>& done_by, SearchList& list) {
  std::vector<size_t>& objects = list.objects;
  listed_by[target] = target;
  for (size_t k = 0; k < objects.size();) {
    size_t current = objects[k];
    done_by[current] = target;
    size_t insert_at = k;
    for (const auto& [from, need] : needed.of(current)) {
      if (!need.to) {
        list.fails = true;
        continue;
      }
      size_t to = *need.to;
      if (!need.filtee) {
        if (listed_by[to] != target) listed_by[to] = target, objects.push_back(to);
        continue;
      }
      if (to == current) continue;
      if (listed_by[to] == target) {
        auto at = std::find(objects.begin(), objects.end(), to);
        if (at - objects.begin() < static_cast<ptrdiff_t>(insert_at) || done_by[to] == target) continue;
        objects.erase(at);
      }
      listed_by[to] = target;
      objects.insert(objects.begin() + static_cast<ptrdiff_t>(insert_at++), to);
    }
    while (k < objects.size() && done_by[objects[k]] == target) ++k;
  }
}

}  // namespace

bool is_bindable(const Object& object) {
  return object.binary && object.binary->format == Format::Elf;
}

// Objects the root loads at start-up: reachable from the root through NEEDED and preload edges.
std::vector<bool> started_with(const Graph& graph, size_t root, std::span<const size_t> root_edges) {
  std::vector<bool> global(graph.objects.size(), false);
  Children<size_t> next;
  next.reserve(root_edges.size());
  for (size_t i : root_edges)
    if (const Edge& e = graph.edges[i]; e.to && e.from < graph.objects.size() && *e.to < graph.objects.size() &&
        (e.kind == EdgeKind::Needed || e.kind == EdgeKind::Preload))
      next.add(e.from, *e.to);
  next.group();
  std::vector<size_t> queue{graph.roots[root]};
  global[graph.roots[root]] = true;
  for (size_t i = 0; i < queue.size(); ++i)
    for (const auto& [from, to] : next.of(queue[i])) {
      if (global[to]) continue;
      global[to] = true;
      queue.push_back(to);
    }
  return global;
}

// Each dlopen of the root that opens a library outside the global scope, in the order of the
// root's edges: that library and its NEEDED closure (its l_searchlist), objects already loaded
// included, and whether a library of it is not found (the dlopen fails).
std::vector<SearchList> dlopen_search_lists(const Graph& graph, std::span<const size_t> root_edges,
                                            const std::vector<bool>& global) {
  Children<Need> needed;
  std::vector<size_t> opened;
  for (size_t i : root_edges) {
    const Edge& e = graph.edges[i];
    if (e.kind == EdgeKind::Needed && !(e.ignored_when_missing() && !e.to))
      needed.add(e.from, Need{e.to, e.filtee != Filtee::None});
    else if (e.kind == EdgeKind::Dlopen && e.to && !global[*e.to] && std::ranges::find(opened, *e.to) == opened.end())
      opened.push_back(*e.to);
  }
  needed.group();
  std::vector<SearchList> lists;
  std::vector<size_t> listed_by(graph.objects.size(), SIZE_MAX), done_by(graph.objects.size(), SIZE_MAX);
  for (size_t target : opened)
    build_search_list(target, needed, listed_by, done_by, lists.emplace_back(SearchList{{target}, false}));
  return lists;
}

SymbolIndex::SymbolIndex(const Graph& graph) : graph_(graph), root_edges_(edges_by_root(graph)) {
  find_canonical_objects();
  std::vector<bool>& in_scope = in_scope_;
  in_scope.assign(graph.objects.size(), false);
  if (root_edges_.size() < graph.load_order.size()) root_edges_.resize(graph.load_order.size());
  for (size_t root = 0; root < graph.load_order.size(); ++root) {
    std::vector<bool>& global = global_.emplace_back(
        root < graph.roots.size() && graph.roots[root] < graph.objects.size() ? started_with(graph, root, root_edges_[root])
                                                                             : std::vector<bool>(graph.objects.size(), true));
    std::vector<size_t>& scope = scopes_.emplace_back();
    std::vector<size_t>& members = members_.emplace_back();
    std::vector<size_t> dlopened;
    auto& names = names_.emplace_back();
    for (size_t o : graph.load_order[root]) {
      if (o >= graph.objects.size() || !is_bindable(graph.objects[o])) continue;
      (global[o] ? scope : dlopened).push_back(o);
      in_scope[o] = true;
      if (const auto& soname = graph.objects[o].binary->soname) names.emplace_back(*soname, o);
    }
    members = scope;
    members.insert(members.end(), dlopened.begin(), dlopened.end());
    add_dlopen_scopes(root);
  }
  std::vector<size_t> soname_listed_in(graph.objects.size(), SIZE_MAX);  // the last root listing the object's soname
  for (size_t root = 0; root < names_.size(); ++root) {
    auto& names = names_[root];
    for (const auto& [soname, o] : names) soname_listed_in[o] = root;
    for (size_t i : root_edges_[root]) {
      const Edge& e = graph.edges[i];
      if (!e.to || !in_scope[*e.to]) continue;
      // Most edges name their target by its soname, a pair listed already: sorting fewer is faster.
      if (soname_listed_in[*e.to] == root && *graph.objects[*e.to].binary->soname == e.name) continue;
      names.emplace_back(e.name, *e.to);
    }
    // By name; of one name, the first added (sonames first, then edges in order).
    std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    names.erase(std::unique(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
                names.end());
  }
  std::vector<bool> indexed(graph.objects.size(), false);  // the canonical objects of those in a scope
  for (size_t o = 0; o < graph.objects.size(); ++o)
    if (in_scope[o]) indexed[canonical_[o]] = true;
  index_definitions(indexed);
  references_.resize(graph.objects.size());
  own_references_.resize(graph.objects.size());
  size_t symbols = 0;
  for (size_t o = 0; o < graph.objects.size(); ++o)
    if (indexed[o]) symbols += graph.objects[o].binary->symbols.size();
  parallel_for_index(graph.objects.size(), [&](size_t o) {  // read-only lookups from here on
    if (!indexed[o]) return;
    bool symbolic = graph.objects[o].binary->symbolic();  // its own definitions come first for its references
    for (const Symbol& s : graph.objects[o].binary->symbols) {
      if (s.name.empty() || s.binding == SymbolBinding::Local) continue;
      if (!s.defined || s.copy_relocated) references_[o].push_back(Reference{&s, definers_of(s.name)});
      else if (!symbolic && is_own_reference(s))
        if (Definers d = definers_of(s.name); defined_by_several(d)) own_references_[o].push_back(Reference{&s, d});
    }
  }, symbols < kSymbolsWorthAThread ? 1 : 0);
}

// _dl_new_object gives each object a dlopen loads the global scope, then the search list of the
// library that dlopen opened (the top of its l_loader chain), and each later dlopen that reaches
// the object adds its own search list after that (dl-open.c's update_scopes). Which dlopen comes
// first is not known without running the program, so an object several dlopens reach binds in
// all their search lists, in the order of the root's edges. A dlopen that stops at a missing
// library unloads what it loaded: its list counts only for objects no other dlopen reaches.
void SymbolIndex::add_dlopen_scopes(size_t root) {
  DlopenScopes& out = dlopen_scopes_.emplace_back();
  if (members_[root].size() == scopes_[root].size()) return;  // nothing loaded only by dlopen
  const std::vector<bool>& global = global_[root];
  std::vector<SearchList> lists = dlopen_search_lists(graph_, root_edges_[root], global);
  std::vector<std::vector<uint32_t>> reached_by(graph_.objects.size());  // the dlopens that load each object
  for (bool failing : {false, true})
    for (uint32_t k = 0; k < lists.size(); ++k)
      if (lists[k].fails == failing)
        for (size_t o : lists[k].objects)
          if (!global[o] && (reached_by[o].empty() || lists[reached_by[o].back()].fails == failing)) reached_by[o].push_back(k);
  std::map<std::vector<uint32_t>, uint32_t> scope_of_dlopens;
  for (size_t o : members_[root]) {
    if (reached_by[o].empty()) continue;
    auto [it, added] = scope_of_dlopens.try_emplace(reached_by[o], static_cast<uint32_t>(out.scopes.size()));
    if (added) {
      std::vector<size_t>& scope = out.scopes.emplace_back(scopes_[root]);
      for (uint32_t k : reached_by[o])
        for (size_t in_list : lists[k].objects)
          if (!global[in_list] && is_bindable(graph_.objects[in_list])) scope.push_back(in_list);
      out.fails.push_back(lists[reached_by[o].front()].fails);  // a failing list only if all of them fail
    }
    out.loaded_by.emplace_back(o, it->second);
  }
  std::sort(out.loaded_by.begin(), out.loaded_by.end());
}

std::optional<uint32_t> SymbolIndex::dlopen_scope_index(size_t root, size_t object) const {
  if (!is_dlopened(root, object)) return std::nullopt;
  const auto& loaded_by = dlopen_scopes_[root].loaded_by;
  auto it = std::lower_bound(loaded_by.begin(), loaded_by.end(), std::make_pair(object, uint32_t{0}));
  if (it == loaded_by.end() || it->first != object) return std::nullopt;
  return it->second;
}

bool SymbolIndex::dlopen_fails(size_t root, size_t object) const {
  auto k = dlopen_scope_index(root, object);
  return k && dlopen_scopes_[root].fails[*k];
}

bool SymbolIndex::is_own_reference(const Symbol& s) {
  return s.own_reference() && s.binding == SymbolBinding::Global && !s.hidden && !s.valueless_definition();
}

bool SymbolIndex::defined_by_several(Definers definers) const {
  return definers.count > 1 &&
         definition_objects_[definers.first] != definition_objects_[definers.first + definers.count - 1];
}

void SymbolIndex::find_canonical_objects() {
  std::unordered_map<const Binary*, uint32_t> first_of;
  canonical_.resize(graph_.objects.size());
  for (size_t o = 0; o < graph_.objects.size(); ++o) {
    const Binary* binary = graph_.objects[o].binary.get();
    canonical_[o] = binary ? first_of.try_emplace(binary, static_cast<uint32_t>(o)).first->second : static_cast<uint32_t>(o);
  }
}

// Two passes with one hash lookup per definition: count each name's definitions, then lay them
// out name by name (objects in order) in two flat arrays.
void SymbolIndex::index_definitions(const std::vector<bool>& in_scope) {
  struct Found {
    uint32_t slot, object;
    const Symbol* symbol;
  };
  std::vector<Found> found;  // in object order
  std::vector<Definers*> slots;
  size_t symbols = 0;
  for (size_t o = 0; o < graph_.objects.size(); ++o)
    if (in_scope[o]) symbols += graph_.objects[o].binary->symbols.size();
  found.reserve(symbols);
  definers_.reserve(symbols);
  for (size_t o = 0; o < graph_.objects.size(); ++o) {
    if (!in_scope[o]) continue;
    for (const Symbol& s : graph_.objects[o].binary->symbols) {
      if (!is_bindable_definition(s)) continue;
      auto [it, inserted] = definers_.try_emplace(s.name);
      if (inserted) {
        it->second.first = static_cast<uint32_t>(slots.size());  // the slot number until laid out
        slots.push_back(&it->second);
      }
      ++it->second.count;
      found.push_back(Found{it->second.first, static_cast<uint32_t>(o), &s});
    }
  }
  std::vector<uint32_t> next(slots.size());
  for (uint32_t slot = 0, offset = 0; slot < slots.size(); offset += slots[slot]->count, ++slot) next[slot] = offset;
  definition_objects_.resize(found.size());
  definition_symbols_.resize(found.size());
  for (const Found& f : found) {
    uint32_t at = next[f.slot]++;
    definition_objects_[at] = f.object;
    definition_symbols_[at] = f.symbol;
  }
  for (size_t slot = 0; slot < slots.size(); ++slot) slots[slot]->first = next[slot] - slots[slot]->count;  // next: past the end
}

SymbolIndex::Definers SymbolIndex::definers_of(std::string_view name) const {
  auto it = definers_.find(name);
  return it == definers_.end() ? Definers{} : it->second;
}

std::span<const Symbol* const> SymbolIndex::run_of(Definers definers, size_t object) const {
  if (object >= canonical_.size()) return {};
  uint32_t canonical = canonical_[object];
  auto begin = definition_objects_.begin() + definers.first, end = begin + definers.count;
  auto first = std::find(begin, end, canonical);
  auto last = std::find_if(first, end, [&](uint32_t o) { return o != canonical; });
  return std::span<const Symbol* const>(definition_symbols_.data() + (first - definition_objects_.begin()),
                                        static_cast<size_t>(last - first));
}

std::span<const size_t> SymbolIndex::edges_of(size_t root) const {
  if (root >= root_edges_.size()) return {};
  return root_edges_[root];
}

std::span<const SymbolIndex::Reference> SymbolIndex::references(size_t object) const {
  if (object >= references_.size() || !in_scope_[object]) return {};
  return references_[canonical_[object]];
}

std::span<const SymbolIndex::Reference> SymbolIndex::own_references(size_t object) const {
  if (object >= own_references_.size() || !in_scope_[object]) return {};
  return own_references_[canonical_[object]];
}

SymbolIndex::~SymbolIndex() = default;

bool SymbolIndex::is_dlopened(size_t root, size_t object) const {
  return root < global_.size() && object < global_[root].size() && !global_[root][object];
}

const std::vector<size_t>& SymbolIndex::scope_for(size_t root, size_t object) const {
  if (!is_dlopened(root, object)) return scopes_[root];
  auto k = dlopen_scope_index(root, object);
  return k ? dlopen_scopes_[root].scopes[*k] : members_[root];
}

std::span<const Symbol* const> SymbolIndex::definitions(size_t object, std::string_view name) const {
  return run_of(definers_of(name), object);
}

// check_match's version rules. A versioned reference (foo@V) takes a definition of version V,
// an unversioned or base-version definition that is not hidden, or anything from an object
// without symbol versioning. An unversioned reference takes a definition of index 0-2 (local,
// base, or the oldest named version), or else the only non-hidden versioned one.
const Symbol* SymbolIndex::match(size_t object, const Symbol& reference) const {
  return match_in(definitions(object, reference.name), reference);
}

const Symbol* SymbolIndex::match_in(std::span<const Symbol* const> definitions, const Symbol& reference) {
  const Symbol* only_versioned = nullptr;
  int versioned = 0;
  for (const Symbol* def : definitions) {
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
  return bind(scope, Reference{&reference, definers_of(reference.name)});
}

// A copy relocation's lookup passes over the program (dl-lookup.c: ELF_RTYPE_CLASS_COPY skips the
// main map, lt_executable), whose .dynsym lists the copy itself as a definition. The program is
// the first object of the scope; libc.so.6, which has PT_INTERP too, is not passed over.
bool SymbolIndex::passed_over(size_t object, std::span<const size_t> scope, const Symbol& reference) const {
  return reference.copy_relocated && !scope.empty() && canonical_[object] == canonical_[scope.front()];
}

std::optional<Binding> SymbolIndex::bind(std::span<const size_t> scope, const Reference& reference) const {
  if (reference.definers.count == 0) return std::nullopt;
  for (size_t o : scope)
    if (auto run = run_of(reference.definers, o); !run.empty() && !passed_over(o, scope, *reference.symbol))
      if (const Symbol* def = match_in(run, *reference.symbol)) return Binding{o, def};
  return std::nullopt;
}

// The same answer from the other side: of the objects that define the name (a few), those in the
// scope, by their place in it, the first whose definitions match.
std::optional<Binding> SymbolIndex::bind_in(size_t root, size_t object, const Reference& reference) const {
  if (reference.definers.count == 0) return std::nullopt;
  if (root != asked_root_ || object != asked_object_)  // the checks bind an object's references one after another
    asked_root_ = root, asked_object_ = object, asked_scope_ = &scope_for(root, object);
  const std::vector<size_t>& scope = *asked_scope_;
  const std::vector<uint32_t>& position = positions_in(scope);
  std::vector<std::pair<uint32_t, uint32_t>>& candidates = candidates_;  // (place, first definition)
  candidates.clear();
  uint32_t end = reference.definers.first + reference.definers.count;
  for (uint32_t i = reference.definers.first; i < end; ++i) {
    uint32_t o = definition_objects_[i];
    if (i > reference.definers.first && definition_objects_[i - 1] == o) continue;  // one run per object
    if (position[o] != kNotInScope && !passed_over(o, scope, *reference.symbol)) candidates.emplace_back(position[o], i);
  }
  std::sort(candidates.begin(), candidates.end());
  for (auto [place, first] : candidates) {
    uint32_t last = first;
    while (last < end && definition_objects_[last] == definition_objects_[first]) ++last;
    std::span<const Symbol* const> run(definition_symbols_.data() + first, last - first);
    if (const Symbol* def = match_in(run, *reference.symbol)) return Binding{scope[place], def};
  }
  return std::nullopt;
}

// `scope` is one of the index's own scope vectors, which never change: its address names it.
const std::vector<uint32_t>& SymbolIndex::positions_in(const std::vector<size_t>& scope) const {
  if (position_.size() != graph_.objects.size()) position_.assign(graph_.objects.size(), kNotInScope);
  if (&scope == positioned_) return position_;
  if (positioned_)
    for (size_t o : *positioned_) position_[canonical_[o]] = kNotInScope;
  for (size_t place = scope.size(); place-- > 0;) position_[canonical_[scope[place]]] = static_cast<uint32_t>(place);  // first place wins
  positioned_ = &scope;
  return position_;
}

std::optional<size_t> SymbolIndex::loaded(size_t root, std::string_view name) const {
  if (root >= names_.size()) return std::nullopt;
  const auto& names = names_[root];
  auto it = std::lower_bound(names.begin(), names.end(), name, [](const auto& entry, std::string_view n) { return entry.first < n; });
  if (it == names.end() || it->first != name) return std::nullopt;
  return it->second;
}

// Built on first use: only the interposition check and undefined-symbol messages ask.
std::span<const size_t> SymbolIndex::direct_needed(size_t root, size_t object) const {
  if (!needed_built_) {
    needed_built_ = true;
    for (const Edge& e : graph_.edges)
      if (e.to && e.kind == EdgeKind::Needed && e.root < names_.size() && in_scope_[*e.to])
        needed_[pair_key(e.root, e.from)].push_back(*e.to);
  }
  auto it = needed_.find(pair_key(root, object));
  if (it == needed_.end()) return {};
  return it->second;
}

}  // namespace depscan
