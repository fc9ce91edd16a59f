#include "analyzer/resolve/ld_so_conf.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "analyzer/util/strings.h"

namespace depscan {
namespace {

constexpr size_t kMaxFiles = 4096;  // bounds a pathological include fan-out

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

bool starts_with_word(std::string_view line, std::string_view word, bool ignore_case) {
  if (line.size() <= word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    char a = line[i], b = word[i];
    if (ignore_case ? std::tolower(static_cast<unsigned char>(a)) != b : a != b) return false;
  }
  return line[word.size()] == ' ' || line[word.size()] == '\t';
}

// add_dir_1: drop a "=TYPE" suffix, trailing blanks and trailing slashes.
std::string directory_of_line(std::string line) {
  size_t eq = line.find('=');
  if (eq != std::string::npos) line.resize(eq);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  while (!line.empty() && line.back() == '/') line.pop_back();
  return line;
}

struct PendingFile {
  std::string path;
  bool loaded = false;
  std::string identity;  // canonical path once loaded
  std::vector<std::string> lines;
  size_t next = 0;
};

PendingFile frame_for(const std::string& path) {
  PendingFile frame;
  frame.path = path;
  return frame;
}

}  // namespace

std::vector<std::string> glob_paths(const FileSystem& fs, const std::string& pattern) {
  std::vector<std::string> current = {pattern.empty() || pattern[0] != '/' ? "" : "/"};
  size_t i = 0;
  while (i < pattern.size()) {
    size_t j = pattern.find('/', i);
    if (j == std::string::npos) j = pattern.size();
    std::string part = pattern.substr(i, j - i);
    i = j + 1;
    if (part.empty()) continue;
    std::vector<std::string> next;
    for (const std::string& base : current) {
      if (!has_glob_chars(part)) {
        next.push_back(join_path(base, part));
        continue;
      }
      std::vector<std::string> names = fs.list(base.empty() ? "." : base);
      std::sort(names.begin(), names.end());
      for (const std::string& name : names)
        if (::fnmatch(part.c_str(), name.c_str(), FNM_PERIOD) == 0) next.push_back(join_path(base, name));
    }
    current = std::move(next);
    if (current.empty()) break;
  }
  std::vector<std::string> out;
  for (const std::string& p : current)
    if (!p.empty() && fs.stat(p)) out.push_back(p);
  std::sort(out.begin(), out.end());
  return out;
}

LdSoConf read_ld_so_conf(const FileSystem& fs, const std::string& path) {
  LdSoConf conf;
  std::set<std::string> dirs_seen;
  std::vector<PendingFile> stack;  // frames; a frame's file is read when it reaches the top
  auto identity = [&](const std::string& file) {
    auto canon = fs.canonical(file);
    return canon ? *canon : file;
  };
  // Reads the top frame; false if it is skipped (loop, unreadable, too many files).
  auto load_top = [&]() {
    PendingFile& top = stack.back();
    top.loaded = true;
    top.identity = identity(top.path);
    for (size_t k = 0; k + 1 < stack.size(); ++k)
      if (stack[k].loaded && stack[k].identity == top.identity) {
        conf.warnings.push_back(fmt::format("{}: include loop, not read again", top.path));
        return false;
      }
    if (conf.files_read.size() >= kMaxFiles) {
      conf.warnings.push_back(fmt::format("{}: too many configuration files, not read", top.path));
      return false;
    }
    auto text = fs.read_text(top.path);
    if (!text) {
      if (text.error() != "No such file or directory")
        conf.warnings.push_back(fmt::format("{}: cannot be read: {}", top.path, text.error()));
      return false;
    }
    conf.files_read.push_back(top.path);
    for (std::string_view line : lines_of(*text)) top.lines.emplace_back(line);
    return true;
  };
  stack.push_back(frame_for(path));
  while (!stack.empty()) {
    if (!stack.back().loaded && !load_top()) {
      stack.pop_back();
      continue;
    }
    PendingFile& top = stack.back();
    if (top.next >= top.lines.size()) {
      stack.pop_back();
      continue;
    }
    size_t lineno = top.next + 1;
    std::string line = top.lines[top.next++];
    std::string file = top.path;
    line = line.substr(0, line.find('#'));
    size_t start = 0;
    while (start < line.size() && std::isspace(static_cast<unsigned char>(line[start]))) ++start;
    line = line.substr(start);
    if (line.empty()) continue;
    if (starts_with_word(line, "include", false)) {
      std::vector<std::string> matches;
      for (std::string pattern : split_nonempty(std::string_view(line).substr(8), " \t")) {
        if (pattern[0] != '/' && file.find('/') != std::string::npos)
          pattern = dirname_of(file) + "/" + pattern;
        for (std::string& m : glob_paths(fs, pattern)) matches.push_back(std::move(m));
      }
      // Included files are read in order before the rest of this file: pushed reversed.
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) stack.push_back(frame_for(*it));
    } else if (starts_with_word(line, "hwcap", true)) {
      conf.warnings.push_back(fmt::format("{}:{}: hwcap directive ignored", file, lineno));
    } else {
      std::string dir = directory_of_line(line);
      if (!dir.empty() && dirs_seen.insert(dir).second) conf.dirs.push_back(dir);
    }
  }
  return conf;
}

}  // namespace depscan
