// One process as ld.so builds its static TLS: the objects loaded at start-up, then each dlopen in
// turn, each initial-exec relocation bound by name through the scope and its block drawn from the
// surplus (elf/dl-reloc.c, CHECK_STATIC_TLS and _dl_try_allocate_static_tls).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/check/static_tls_block.h"
#include "analyzer/model.h"

namespace depscan {

// The object's ELF binary, or null (unreadable, or PE).
const Binary* elf_binary(const Graph& g, size_t object);

// Why an object's block must be static: its own initial-exec accesses, or another object's.
struct Demand {
  size_t object;               // whose block
  std::optional<size_t> from;  // the object whose relocations ask for it, when another one
  std::string symbol;          // the variable, when named
};

// The thread-local symbols each object defines, found once per scan.
class TlsNames {
 public:
  const std::vector<std::string_view>& of(size_t object, const Binary& b);

 private:
  std::map<size_t, std::vector<std::string_view>> names_;
};

class StaticTlsProcess {
 public:
  // `file_of`: one index per file, the same for every object (path) of that file: ld.so loads a
  // file once, by device and inode.
  StaticTlsProcess(const Graph& g, StaticTlsBlock block, TlsNames& names, const std::vector<size_t>& file_of)
      : g_(g), block_(std::move(block)), loaded_(g.objects.size()), names_(&names), file_of_(&file_of) {}

  void start(const std::vector<size_t>& startup);
  void widen(uint64_t bytes) { block_.widen(bytes); }
  // musl's loader: no surplus at all, so every block not loaded at start-up fails (ldso/dynlink.c,
  // "initial-exec TLS resolves to dynamic definition").
  void without_surplus() { no_surplus_ = true; }

  struct Failure {
    Demand demand;
    StaticTlsBlock::Outcome outcome;
    uint64_t left;  // bytes left before it
  };
  // Loads `searchlist` (what a dlopen'd object needs, in load order): the first block of a new
  // object that does not fit.
  std::optional<Failure> open(const std::vector<size_t>& searchlist);
  bool loaded(size_t object) const { return loaded_[file(object)]; }
  uint64_t bytes_left() const { return block_.bytes_left(); }

 private:
  std::vector<Demand> demands(size_t object, const std::vector<size_t>& scope);
  std::optional<size_t> definer(std::string_view name, const std::vector<size_t>& scope);
  size_t file(size_t object) const { return (*file_of_)[object]; }
  std::optional<Failure> place(const Demand& d);

  const Graph& g_;
  StaticTlsBlock block_;
  std::vector<bool> loaded_, static_;  // by file
  bool no_surplus_ = false;
  std::vector<size_t> scope_;          // the global scope: the start-up objects
  TlsNames* names_;
  const std::vector<size_t>* file_of_;
};

}  // namespace depscan
