// The fast ELF reader: reads the dynamic-linking view straight from a read-only memory map,
// through bounds-checked helpers, without copying the file. Any malformation is an error.
#pragma once

#include <string>

#include "analyzer/model.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan {

Expected<Binary> read_elf(ByteView file, const std::string& logical_path);

}  // namespace depscan
