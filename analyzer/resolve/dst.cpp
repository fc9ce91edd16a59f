#include "analyzer/resolve/dst.h"
#include "analyzer/util/strings.h"

#include <algorithm>
#include <unordered_set>

#include "analyzer/input/fs.h"

namespace depscan {
namespace {

bool is_identifier_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// glibc's is_dst: `input` starts just after '$'. Returns the token length (braces included)
// if it is exactly `ref`, else 0.
size_t dst_length(std::string_view input, std::string_view ref) {
  bool curly = !input.empty() && input[0] == '{';
  std::string_view rest = curly ? input.substr(1) : input;
  if (rest.substr(0, ref.size()) != ref) return 0;
  char next = rest.size() > ref.size() ? rest[ref.size()] : '\0';
  if (curly && next != '}') return 0;
  if (!curly && is_identifier_char(next)) return 0;
  return curly ? ref.size() + 2 : ref.size();
}

// is_trusted_path_normalize: the normalised path (with a trailing slash) must start with one
// of the system directories (each given with a trailing slash).
bool is_trusted(std::string_view path, const std::vector<std::string>& trusted) {
  if (path.empty() || path[0] != '/') return false;
  std::string normal = normalize_path(path);
  if (normal.back() != '/') normal += '/';
  for (const std::string& dir : trusted) {
    std::string prefix = dir.empty() || dir.back() == '/' ? dir : dir + "/";
    if (normal.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

}  // namespace

bool has_dst(std::string_view input) {
  for (size_t i = input.find('$'); i != std::string_view::npos; i = input.find('$', i + 1)) {
    std::string_view rest = input.substr(i + 1);
    if (dst_length(rest, "ORIGIN") || dst_length(rest, "PLATFORM") || dst_length(rest, "LIB"))
      return true;
  }
  return false;
}

std::optional<std::string> substitute_dst(std::string_view input, const DstContext& ctx) {
  std::string out;
  bool check_trusted = false;
  size_t i = 0;
  while (i < input.size()) {
    if (input[i] != '$') {
      out += input[i++];
      continue;
    }
    std::string_view rest = input.substr(i + 1);
    size_t len = 0;
    std::optional<std::string> replacement;
    if ((len = dst_length(rest, "ORIGIN")) != 0) {
      // Secure mode: $ORIGIN only as the whole first element or followed by '/'.
      bool first_and_alone = i == 0 && (len == rest.size() || rest[len] == '/');
      if (!(ctx.secure && !first_and_alone) && !ctx.origin.empty()) replacement = ctx.origin;
      check_trusted = ctx.secure && ctx.is_executable;
    } else if ((len = dst_length(rest, "PLATFORM")) != 0) {
      if (!ctx.platform.empty()) replacement = ctx.platform;
    } else if ((len = dst_length(rest, "LIB")) != 0) {
      if (!ctx.lib.empty()) replacement = ctx.lib;
    }
    if (replacement) {
      out += *replacement;
      i += 1 + len;
    } else if (len != 0) {
      return std::nullopt;  // a known DST without a usable value: the element is dropped
    } else {
      out += '$';
      ++i;
    }
  }
  if (check_trusted && !is_trusted(out, ctx.trusted_dirs)) return std::nullopt;
  return out;
}

std::vector<std::string> split_search_path(std::string_view list, std::string_view separators,
                                           const DstContext& ctx) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;  // past a few entries: a hostile list has a hundred thousand
  auto first_time = [&](const std::string& dir) {
    if (out.size() < 16) return std::find(out.begin(), out.end(), dir) == out.end();
    if (seen.empty()) seen.insert(out.begin(), out.end());
    return seen.insert(dir).second;
  };
  size_t i = 0;
  while (true) {
    size_t j = list.find_first_of(separators, i);
    std::string_view element = list.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
    std::optional<std::string> dir = std::string();
    if (!element.empty()) {
      dir = substitute_dst(element, ctx);
      if (dir && dir->empty()) dir.reset();
      while (dir && dir->size() > 1 && dir->back() == '/') dir->pop_back();
    }
    if (dir && first_time(*dir)) out.push_back(std::move(*dir));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

std::vector<std::string> split_preload_list(std::string_view list) { return split_nonempty(list, " :"); }

std::vector<std::string> parse_ld_so_preload(std::string_view text) {
  std::string cleaned(text);
  for (size_t hash = cleaned.find('#'); hash != std::string::npos; hash = cleaned.find('#', hash)) {
    size_t end = cleaned.find('\n', hash);
    if (end == std::string::npos) end = cleaned.size();
    for (size_t k = hash; k < end; ++k) cleaned[k] = ' ';
  }
  std::vector<std::string> out;
  size_t i = 0;
  while (i < cleaned.size()) {
    size_t j = cleaned.find_first_of(" \t\n:", i);
    if (j == std::string::npos) j = cleaned.size();
    if (j > i) out.push_back(cleaned.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

}  // namespace depscan
