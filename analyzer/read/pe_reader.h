// PE reader built on LIEF (with raw reads for the directories LIEF 0.9 lacks).
#pragma once

#include <string>

#include "analyzer/model.h"
#include "analyzer/util/expected.h"

namespace depscan {

Expected<Binary> read_pe(const std::string& host_path, const std::string& logical_path);

}  // namespace depscan
