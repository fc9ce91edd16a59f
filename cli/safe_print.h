// Output of the commands that print names from the analysed files (why, inspect): each string
// argument is escaped onto one line (one_line), and the whole line is made terminal-safe.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "report/report.h"

namespace depscan::cli {

template <class T>
decltype(auto) one_line_arg(const T& arg) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>)
    return one_line(std::string_view(arg));
  else
    return (arg);
}

// The format string is checked against the arguments as given; string arguments are then
// formatted as their escaped copies.
template <class... Args>
void print_safe(std::FILE* to, fmt::format_string<Args...> format, Args&&... args) {
  std::string text =
      terminal_safe(fmt::vformat(fmt::string_view(format), fmt::make_format_args(one_line_arg(args)...)), false);
  std::fwrite(text.data(), 1, text.size(), to);
}

template <class... Args>
void print_safe(fmt::format_string<Args...> format, Args&&... args) {
  print_safe(stdout, format, std::forward<Args>(args)...);
}

}  // namespace depscan::cli
