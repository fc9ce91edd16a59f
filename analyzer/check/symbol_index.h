// Symbol binding as glibc's ld.so does it (elf/dl-lookup.c, check_match): one hash table from a
// name to the dynamic definitions of every object in any scope, built once and shared by every
// symbol check, and the binding of one reference against a root's lookup scope (its load order).
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/model.h"

namespace depscan {

struct Binding {
  size_t object = 0;              // index into Graph::objects
  const Symbol* symbol = nullptr; // the definition the reference binds to
};

class SymbolIndex {
 public:
  explicit SymbolIndex(const Graph& graph);
  ~SymbolIndex();
  SymbolIndex(const SymbolIndex&) = delete;
  SymbolIndex& operator=(const SymbolIndex&) = delete;

  const Graph& graph() const { return graph_; }

  // Every bindable definition of one name (defined; global, weak or unique; of a bindable
  // type), grouped by object in object order, each object's in symbol-table order: a range of
  // the index's definition arrays.
  struct Definers {
    uint32_t first = 0, count = 0;
  };

  // An undefined symbol of an object with the definitions of its name, found once per run:
  // the checks bind each reference once per root that loads the object.
  struct Reference {
    const Symbol* symbol = nullptr;
    Definers definers;                    // empty: nothing loaded defines the name
  };

  // The definitions of `name` in `object` that ld.so may bind to, in symbol-table order.
  std::span<const Symbol* const> definitions(size_t object, std::string_view name) const;

  // The definition in `object` that `reference` binds to, or null: the version rules of
  // check_match (see symbol_index.cpp).
  const Symbol* match(size_t object, const Symbol& reference) const;

  // The first object of `scope` that defines `reference`: the binding ld.so makes.
  std::optional<Binding> bind(std::span<const size_t> scope, const Symbol& reference) const;
  std::optional<Binding> bind(std::span<const size_t> scope, const Reference& reference) const;
  // The binding of `object`'s reference in root `root` (its scope_for): the same answer as bind(),
  // found from the few objects that define the name. Not thread-safe.
  std::optional<Binding> bind_in(size_t root, size_t object, const Reference& reference) const;

  // The undefined and copy-relocated symbols of `object` (named, not local), in symbol-table order.
  std::span<const Reference> references(size_t object) const;

  // The global, default-visibility, default-version definitions of `object` that its own
  // relocations name (a call through its PLT, a pointer bound at load) and that another object of
  // some scope defines too: the loader binds those references through the scope, like any other
  // (not in a DF_SYMBOLIC object, which looks in itself first).
  std::span<const Reference> own_references(size_t object) const;

  // The global lookup scope of root `root`: its readable ELF objects loaded at start-up (the
  // program, preloads, the NEEDED closure), in load order.
  const std::vector<size_t>& scope(size_t root) const { return scopes_[root]; }

  // Every readable ELF object of the root in load order, those opened by dlopen included.
  const std::vector<size_t>& members(size_t root) const { return members_[root]; }

  // The scope `object`'s references are looked up in: the global scope, and for an object
  // loaded only by dlopen also the search lists of the dlopens that load it.
  const std::vector<size_t>& scope_for(size_t root, size_t object) const;

  bool is_dlopened(size_t root, size_t object) const;
  // True for an object loaded only by dlopen when every dlopen that loads it stops at a missing
  // library of its search list: the object's references are never bound.
  bool dlopen_fails(size_t root, size_t object) const;

  // The loaded object of root `root` known by `name` (its soname or a name it was loaded by),
  // as dl-version.c's find_needed finds it; nullopt if none is loaded.
  std::optional<size_t> loaded(size_t root, std::string_view name) const;

  // The indices of root `root`'s edges in the graph, in order.
  std::span<const size_t> edges_of(size_t root) const;

  // Objects reached by `object`'s resolved NEEDED edges in root `root`, in NEEDED order.
  // Not thread-safe (the table is built on first use).
  std::span<const size_t> direct_needed(size_t root, size_t object) const;

 private:
  void find_canonical_objects();
  void add_dlopen_scopes(size_t root);
  std::optional<uint32_t> dlopen_scope_index(size_t root, size_t object) const;
  void index_definitions(const std::vector<bool>& in_scope);
  // Each object's place in `scope` (kNotInScope if absent), for the last scope asked about: the
  // checks bind scope by scope. Not thread-safe (bind_in is not).
  const std::vector<uint32_t>& positions_in(const std::vector<size_t>& scope) const;
  static constexpr uint32_t kNotInScope = UINT32_MAX;
  Definers definers_of(std::string_view name) const;
  static bool is_own_reference(const Symbol& s);
  bool defined_by_several(Definers definers) const;  // by more than one (canonical) object
  bool passed_over(size_t object, std::span<const size_t> scope, const Symbol& reference) const;
  std::span<const Symbol* const> run_of(Definers definers, size_t object) const;
  static const Symbol* match_in(std::span<const Symbol* const> definitions, const Symbol& reference);

  const Graph& graph_;
  // Objects that are one file opened by several paths share its symbol table: the definitions and
  // references are indexed once, under the first such object (TensorFlow's libtensorflow_cc.so.2,
  // 451,000 definitions, is reached by 22 paths in one environment).
  std::vector<uint32_t> canonical_;                          // object -> first object of its binary
  std::vector<std::vector<size_t>> root_edges_;               // edges_by_root(graph_)
  std::unordered_map<std::string_view, Definers> definers_;  // name -> its definitions
  std::vector<uint32_t> definition_objects_;                 // definition_objects_[i] (canonical) defines
  std::vector<const Symbol*> definition_symbols_;            //   definition_symbols_[i]
  std::vector<std::vector<Reference>> references_;           // per canonical object in any scope
  std::vector<std::vector<Reference>> own_references_;       //   likewise
  std::vector<std::vector<size_t>> scopes_;       // per root: global scope
  std::vector<std::vector<size_t>> members_;      // per root: global scope, then dlopen-only objects
  std::vector<std::vector<bool>> global_;         // per root, per object: in the global scope
  struct DlopenScopes {
    std::vector<std::vector<size_t>> scopes;             // the global scope, then the search lists of some dlopens
    std::vector<bool> fails;                             // per scope: every one of those dlopens stops at a missing library
    std::vector<std::pair<size_t, uint32_t>> loaded_by;  // dlopen-only object -> its scope, by object
  };
  std::vector<DlopenScopes> dlopen_scopes_;  // per root
  std::vector<std::vector<std::pair<std::string_view, size_t>>> names_;  // per root, sorted by name
  mutable std::unordered_map<uint64_t, std::vector<size_t>> needed_;     // (root, object) -> NEEDED
  mutable bool needed_built_ = false;
  std::vector<bool> in_scope_;  // per object: in some root's scope
  mutable std::vector<uint32_t> position_;             // positions_in: canonical object -> place in positioned_
  mutable const std::vector<size_t>* positioned_ = nullptr;
  mutable std::vector<std::pair<uint32_t, uint32_t>> candidates_;  // bind's scratch
  mutable size_t asked_root_ = SIZE_MAX, asked_object_ = SIZE_MAX;  // bind_in's last object, and its scope_for
  mutable const std::vector<size_t>* asked_scope_ = nullptr;
};

// True if the object takes part in ELF symbol binding (it was read and is an ELF file).
bool is_bindable(const Object& object);

}  // namespace depscan
