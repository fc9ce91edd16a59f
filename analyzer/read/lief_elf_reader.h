// The LIEF-based ELF reader: a full parse of one file. It is the reference the fast reader is
// tested against and serves the deep single-file view (`depscan inspect`). It fills the same
// model as read_elf; LIEF's types never leave it.
#pragma once

#include <string>

#include "analyzer/model.h"
#include "analyzer/util/expected.h"

namespace depscan {

Expected<Binary> read_elf_with_lief(const std::string& host_path, const std::string& logical_path);

}  // namespace depscan
