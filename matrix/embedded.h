// The files of matrix/data/, compiled into the binary (see cmake/embed_files.cmake).
#pragma once

#include <string_view>

namespace depscan {

// Contents of matrix/data/<name>, or an empty view if there is no such file.
std::string_view embedded_file(std::string_view name);

}  // namespace depscan
