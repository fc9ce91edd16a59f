// The fast ELF reader: reads the dynamic-linking view straight from a read-only memory map,
// through bounds-checked helpers, without copying the file. Any malformation is an error.
#pragma once

#include <string>

#include "analyzer/model.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan {

// Without `with_symbols` the dynamic symbol table is neither read nor checked.
Expected<Binary> read_elf(ByteView file, const std::string& logical_path, bool with_symbols = true);

}  // namespace depscan
