// The deep single-file view (`depscan inspect`): a full parse with LIEF for ELF (the reference
// reader) and the PE reader for PE. Slower than read_binary; meant for one file a user asked about.
#pragma once

#include <string_view>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/util/expected.h"

namespace depscan {

// The error is one line naming the problem, without the path.
Expected<Binary> read_binary_deep(const FileSystem& fs, std::string_view logical);

}  // namespace depscan
