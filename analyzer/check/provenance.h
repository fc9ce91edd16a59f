// Where a symbol comes from and who uses it, per root: every definition in load order (and
// which one a lookup picks), every reference and the definition it binds to.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/check/symbol_index.h"

namespace depscan {

struct SymbolSite {
  size_t object = 0;                // index into Graph::objects
  const Symbol* symbol = nullptr;
  bool wins = false;                // definitions: the one an unversioned lookup binds to
  std::optional<Binding> bound;     // references: the definition it binds to, if any
};

struct SymbolProvenance {
  size_t root = 0;                     // index into Graph::roots
  std::vector<SymbolSite> definitions; // in load order
  std::vector<SymbolSite> uses;        // in load order; a program's copy relocation is a use too
};

// One entry per root in which `name` is defined or referenced.
std::vector<SymbolProvenance> symbol_provenance(const SymbolIndex& symbols, std::string_view name);

}  // namespace depscan
