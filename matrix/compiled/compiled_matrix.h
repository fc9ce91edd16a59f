// matrix/data/*.json as matrix/compiler encoded it at build time (matrix/codec.h); defined in
// the generated compiled_matrix.cpp.
#pragma once

#include <string_view>

namespace depscan {

std::string_view compiled_matrix();

}  // namespace depscan
