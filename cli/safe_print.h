// Output of the commands that print names from the analysed files (why, inspect): control
// characters a hostile file name or soname carries are shown escaped, as in the scan's text.
#pragma once

#include <cstdio>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "report/report.h"

namespace depscan::cli {

template <class... Args>
void print_safe(std::FILE* to, fmt::format_string<Args...> format, Args&&... args) {
  std::string text = terminal_safe(fmt::format(format, std::forward<Args>(args)...), false);
  std::fwrite(text.data(), 1, text.size(), to);
}

template <class... Args>
void print_safe(fmt::format_string<Args...> format, Args&&... args) {
  print_safe(stdout, format, std::forward<Args>(args)...);
}

}  // namespace depscan::cli
