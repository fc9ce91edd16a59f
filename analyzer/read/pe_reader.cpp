#include "analyzer/read/pe_reader.h"

namespace depscan {

Expected<Binary> read_pe(const std::string&, const std::string&) { return Error{"PE reader not built yet"}; }

}  // namespace depscan
