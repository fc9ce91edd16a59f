// The readers built on LIEF live in a module of their own (libdepscan-lief.so), opened with
// dlopen the first time a PE file or a deep read needs them: linked into depscan, LIEF's
// relocations and static initialisers cost every run about 3 ms before main, PE or not.
// analyzer/read/lief_module.cpp loads it; read_pe and read_elf_with_lief are the callers' API.
#pragma once

#include <string>

#include "analyzer/model.h"
#include "analyzer/util/expected.h"

namespace depscan {

Expected<Binary> parse_pe_with_lief(const std::string& host_path, const std::string& logical_path);
Expected<Binary> parse_elf_with_lief(const std::string& host_path, const std::string& logical_path);

struct LiefReaders {
  size_t abi = 0;  // kLiefReadersAbi of the module: a module from another build is refused
  Expected<Binary> (*read_pe)(const std::string& host_path, const std::string& logical_path) = nullptr;
  Expected<Binary> (*read_elf)(const std::string& host_path, const std::string& logical_path) = nullptr;
};

// A version bumped when LiefReaders changes, and the size of the model types that cross over.
constexpr size_t kLiefReadersAbi = (size_t{1} << 40) | (sizeof(Binary) << 20) | sizeof(Symbol);

}  // namespace depscan

// The module's one exported symbol.
extern "C" const depscan::LiefReaders* depscan_lief_readers();
