// The fast ELF reader: reads the dynamic-linking view (headers, dynamic section, string and
// version tables, dynamic symbols, section headers) through bounds-checked helpers, asking its
// ByteSource for those tables only: from a file, a few small reads (input/file_source.h); from
// memory, views without copies. Any malformation is an error.
#pragma once

#include <string>

#include "analyzer/model.h"
#include "analyzer/read/read_options.h"
#include "analyzer/util/byte_source.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan {

// Without `options.symbols` the dynamic symbol table is neither read nor checked.
Expected<Binary> read_elf(const ByteSource& file, const std::string& logical_path, ReadOptions options = {});
Expected<Binary> read_elf(ByteView file, const std::string& logical_path, ReadOptions options = {});

}  // namespace depscan
