#include "analyzer/check/nvidia_require_dsl.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "analyzer/util/strings.h"

namespace depscan {
namespace {

constexpr size_t kExprMax = 128;  // dsl.c EXPR_MAX

// strtoumax's reading of a run of digits: nullopt for none, or for a value it cannot hold
// (it returns UINTMAX_MAX, which dsl.c refuses).
std::optional<uint64_t> leading_number(std::string_view& text) {
  size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
  if (digits == 0) return std::nullopt;
  uint64_t n = 0;
  for (char c : text.substr(0, digits)) {
    if (n > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(c - '0')) / 10) return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n == std::numeric_limits<uint64_t>::max()) return std::nullopt;
  text.remove_prefix(digits);
  return n;
}

void skip(std::string_view& text, std::string_view characters) {
  text.remove_prefix(std::min(text.find_first_not_of(characters), text.size()));
}

}  // namespace

std::optional<Constraint> parse_constraint(std::string_view text) {
  size_t end = text.find_first_of("<>=!");
  if (end == std::string_view::npos || end == 0) return std::nullopt;
  std::string_view rest = text.substr(end);
  size_t run = std::min(rest.find_first_not_of("<>=!"), rest.size());
  std::string_view written_op = rest.substr(0, run), value = rest.substr(run);
  if (value.empty()) return std::nullopt;
  for (std::string_view op : {"=", "!=", "<", "<=", ">", ">="})
    if (op.starts_with(written_op)) return Constraint{ascii_lower(text.substr(0, end)), text.substr(0, end), op, value};
  return std::nullopt;
}

std::optional<bool> compare_dsl_versions(std::string_view have, std::string_view op, std::string_view want) {
  constexpr std::string_view kVersion = "0123456789.";
  if (have.find_first_not_of(kVersion) != std::string_view::npos || want.find_first_not_of(kVersion) != std::string_view::npos)
    return std::nullopt;
  bool less = op == "<" || op == "<=", greater = op == ">" || op == ">=";
  while (!have.empty() && !want.empty()) {
    auto n1 = leading_number(have), n2 = leading_number(want);
    if (!n1 || !n2) return std::nullopt;
    if (*n1 != *n2) {
      if (op == "=" || op == "!=") return op == "!=";
      return less ? *n1 < *n2 : *n1 > *n2;
    }
    skip(have, ".");
    skip(want, ".");
  }
  skip(have, ".0");
  skip(want, ".0");
  if (op == "!=") return !have.empty() || !want.empty();
  if (op == "=" || op == "<=" || op == ">=") {
    if (have.empty() && want.empty()) return true;
    if (op == "=") return false;
  }
  if (less) return have.empty() && !want.empty();
  if (greater) return !have.empty() && want.empty();
  return std::nullopt;
}

bool overflows_error_buffer(const Constraint& c) {
  return c.written.size() + 1 + c.op.size() + 1 + c.value.size() >= kExprMax;
}

}  // namespace depscan
