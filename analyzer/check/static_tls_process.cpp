#include "analyzer/check/static_tls_process.h"

#include <algorithm>

namespace depscan {
namespace {

constexpr uint64_t kLargestModelledBlock = uint64_t{1} << 40;  // past it, a hostile header: never fits

TlsBlockSpec block_of(const Binary& b) { return {b.tls_size, b.tls_align, b.tls_first_byte}; }

bool modelled(const Binary& b) { return b.tls_size <= kLargestModelledBlock && b.tls_align <= kLargestModelledBlock; }

}  // namespace

const Binary* elf_binary(const Graph& g, size_t object) {
  const auto& b = g.objects[object].binary;
  return b && b->format == Format::Elf ? b.get() : nullptr;
}

const std::vector<std::string_view>& TlsNames::of(size_t object, const Binary& b) {
  auto [it, added] = names_.try_emplace(object);
  if (added)
    for (const Symbol& s : b.symbols)
      if (s.defined && s.type == SymbolType::Tls && s.binding != SymbolBinding::Local) it->second.push_back(s.name);
  return it->second;
}

void StaticTlsProcess::start(const std::vector<size_t>& startup) {
  for (size_t o : startup) {
    if (loaded(o)) continue;
    loaded_[file(o)] = true;
    scope_.push_back(o);
    if (const Binary* b = elf_binary(g_, o); b && b->tls_size && modelled(*b)) block_.add_startup_block(block_of(*b));
  }
  static_ = loaded_;  // start-up blocks are all static
  block_.finish_startup();
}

std::optional<StaticTlsProcess::Failure> StaticTlsProcess::open(const std::vector<size_t>& searchlist) {
  std::vector<size_t> local = scope_, group;  // lookups: the global scope, then the searchlist
  for (size_t o : searchlist) {
    local.push_back(o);
    if (!loaded(o)) group.push_back(o), loaded_[file(o)] = true;
  }
  for (auto it = group.rbegin(); it != group.rend(); ++it)  // relocated dependencies first
    for (const Demand& d : demands(*it, local))
      if (auto failure = place(d)) return failure;
  return std::nullopt;
}

std::vector<Demand> StaticTlsProcess::demands(size_t object, const std::vector<size_t>& scope) {
  const Binary* b = elf_binary(g_, object);
  std::vector<Demand> out;
  if (!b || !b->static_tls()) return out;
  for (uint32_t index : b->static_tls_symbols) {
    // Without its symbol table (--no-symbols) a named variable is taken to be the object's own.
    if (index == 0 || (!b->symbols_read && b->tls_size)) {
      out.push_back({object, std::nullopt, ""});
      continue;
    }
    if (index > b->symbols.size()) continue;
    const Symbol& s = b->symbols[index - 1];
    if (s.defined && (s.binding == SymbolBinding::Local || s.visibility >= 2)) {  // hidden or protected
      out.push_back({object, std::nullopt, std::string(s.name)});
      continue;
    }
    if (auto provider = definer(s.name, scope))
      out.push_back({*provider, *provider == object ? std::nullopt : std::optional<size_t>(object), std::string(s.name)});
  }
  return out;
}

// The first object of the scope that defines thread-local `name`, as the symbol lookup finds it.
std::optional<size_t> StaticTlsProcess::definer(std::string_view name, const std::vector<size_t>& scope) {
  for (size_t o : scope) {
    const Binary* b = elf_binary(g_, o);
    if (!b || b->tls_size == 0) continue;  // only an object with a TLS block defines TLS symbols
    const auto& names = names_->of(o, *b);
    if (std::find(names.begin(), names.end(), name) != names.end()) return o;
  }
  return std::nullopt;
}

std::optional<StaticTlsProcess::Failure> StaticTlsProcess::place(const Demand& d) {
  if (static_[file(d.object)]) return std::nullopt;
  const Binary* b = elf_binary(g_, d.object);
  if (!b || b->tls_size == 0) return std::nullopt;
  static_[file(d.object)] = true;
  if (no_surplus_) return Failure{d, StaticTlsBlock::Outcome::TooLarge, 0};
  uint64_t left = block_.bytes_left();
  auto outcome = modelled(*b) ? block_.allocate(block_of(*b)) : StaticTlsBlock::Outcome::TooLarge;
  if (outcome == StaticTlsBlock::Outcome::Placed) return std::nullopt;
  return Failure{d, outcome, left};
}

}  // namespace depscan
