#include "analyzer/input/wheel.h"
#include "analyzer/input/fs.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "analyzer/util/strings.h"

namespace depscan {
namespace {

// The few non-ELF files a check reads: torch.version.cuda picks bitsandbytes' build (python_variants).
bool read_by_checks(const std::string& member) { return member == "torch/version.py"; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Headers end at the first empty line (the rest is the long description).
template <class F>
void for_each_header(std::string_view text, F&& f) {
  for (std::string_view line : lines_of(text)) {
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || line[0] == ' ' || line[0] == '\t') continue;
    f(trim_spaces(line.substr(0, colon)), trim_spaces(line.substr(colon + 1)));
  }
}

bool write_text(SafeTree& tree, const std::string& rel, const std::string& text) {
  auto fd = tree.create_file(rel);
  if (!fd) return false;
  bool ok = ::write(*fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(*fd);
  return ok;
}

std::string first_component(const std::string& name) { return name.substr(0, name.find('/')); }

}  // namespace

std::string normalize_dist_name(std::string_view name) {
  std::string out;
  bool in_run = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_run && !out.empty()) out += '-';
      in_run = true;
      continue;
    }
    in_run = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::optional<WheelFileName> parse_wheel_file_name(std::string_view file_name) {
  if (!ends_with(file_name, ".whl")) return std::nullopt;
  file_name.remove_suffix(4);
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= file_name.size()) {
    size_t j = file_name.find('-', i);
    if (j == std::string_view::npos) j = file_name.size();
    parts.emplace_back(file_name.substr(i, j - i));
    i = j + 1;
  }
  if (parts.size() != 5 && parts.size() != 6) return std::nullopt;
  WheelFileName out;
  out.distribution = parts[0];
  out.version = parts[1];
  size_t k = 2;
  if (parts.size() == 6) out.build = parts[k++];
  out.python = parts[k++];
  out.abi = parts[k++];
  out.platform = parts[k];
  return out;
}

std::optional<std::string> python_dir_for_tag(std::string_view python_tag) {
  for (size_t start = 0; start < python_tag.size();) {
    size_t end = python_tag.find('.', start);
    if (end == std::string_view::npos) end = python_tag.size();
    std::string_view tag = python_tag.substr(start, end - start);
    if (tag.size() >= 4 && tag.substr(0, 3) == "cp3")
      return fmt::format("python3.{}", tag.substr(3));
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> install_location(const std::string& member, const std::string& data_dir,
                                            const std::string& dist_name, const InstallLayout& layout) {
  if (data_dir.empty() || member.rfind(data_dir + "/", 0) != 0) return layout.site_packages + "/" + member;
  std::string rest = member.substr(data_dir.size() + 1);
  size_t slash = rest.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string scheme = rest.substr(0, slash), path = rest.substr(slash + 1);
  if (scheme == "purelib" || scheme == "platlib") return layout.site_packages + "/" + path;
  if (scheme == "scripts") return "bin/" + path;
  if (scheme == "data") return path;
  if (scheme == "headers") return fmt::format("include/site/{}/{}/{}", layout.python, dist_name, path);
  return std::nullopt;
}

Requirement parse_requirement(std::string_view line) {
  Requirement req;
  req.raw = std::string(trim_spaces(line));
  std::string_view text = line;
  size_t semi = text.find(';');
  if (semi != std::string_view::npos) {
    req.marker = std::string(trim_spaces(text.substr(semi + 1)));
    text = text.substr(0, semi);
  }
  text = trim_spaces(text);
  size_t name_end = 0;
  while (name_end < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[name_end])) || text[name_end] == '-' ||
          text[name_end] == '_' || text[name_end] == '.'))
    ++name_end;
  req.name = normalize_dist_name(text.substr(0, name_end));
  std::string_view rest = trim_spaces(text.substr(name_end));
  if (!rest.empty() && rest.front() == '[') {  // extras
    size_t close = rest.find(']');
    rest = close == std::string_view::npos ? std::string_view() : trim_spaces(rest.substr(close + 1));
  }
  if (!rest.empty() && rest.front() == '(' && rest.back() == ')') rest = trim_spaces(rest.substr(1, rest.size() - 2));
  std::string spec;
  for (char c : rest)
    if (!std::isspace(static_cast<unsigned char>(c))) spec += c;
  req.specifier = spec;
  return req;
}

Metadata parse_metadata(std::string_view text) {
  Metadata meta;
  for_each_header(text, [&](std::string_view key, std::string_view value) {
    if (key == "Name") meta.name = std::string(value);
    else if (key == "Version") meta.version = std::string(value);
    else if (key == "Requires-Dist") meta.requires_dist.push_back(parse_requirement(value));
  });
  return meta;
}

std::vector<std::string> parse_wheel_tags(std::string_view wheel_text) {
  std::vector<std::string> tags;
  for_each_header(wheel_text, [&](std::string_view key, std::string_view value) {
    if (key == "Tag") tags.emplace_back(value);
  });
  return tags;
}

namespace {

// A RECORD line's first CSV field (the path) and what follows its comma (hash, size).
std::pair<std::string, std::string_view> split_record_line(std::string_view line) {
  if (line.empty() || line.front() != '"') {
    size_t comma = line.find(',');
    return {std::string(line.substr(0, comma)), comma == std::string_view::npos ? "" : line.substr(comma + 1)};
  }
  std::string path;  // CSV quoting: "" inside quotes is one quote
  size_t i = 1;
  for (; i < line.size(); ++i) {
    if (line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      path += '"';
      ++i;
    } else if (line[i] == '"') {
      break;
    } else {
      path += line[i];
    }
  }
  size_t comma = line.find(',', i);
  return {path, comma == std::string_view::npos ? "" : line.substr(comma + 1)};
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// `location` (relative to the install prefix) relative to site-packages, as pip writes RECORD.
std::string relative_to_site_packages(const std::string& location, const InstallLayout& layout) {
  if (location.rfind(layout.site_packages + "/", 0) == 0) return location.substr(layout.site_packages.size() + 1);
  std::string up;
  for (size_t i = 0, depth = std::count(layout.site_packages.begin(), layout.site_packages.end(), '/') + 1; i < depth; ++i)
    up += "../";
  return up + location;
}

}  // namespace

std::vector<std::string> parse_record_paths(std::string_view record_text) {
  std::vector<std::string> paths;
  for (std::string_view line : lines_of(record_text)) {
    if (line.empty()) continue;
    std::string path = split_record_line(line).first;
    if (!path.empty()) paths.push_back(std::move(path));
  }
  return paths;
}

std::string installed_record(std::string_view record_text, const std::string& dist_name, const InstallLayout& layout) {
  std::string out;
  for (std::string_view line : lines_of(record_text)) {
    if (line.empty()) continue;
    auto [path, rest] = split_record_line(line);
    std::string top = first_component(path);
    auto location = ends_with(top, ".data") ? install_location(path, top, dist_name, layout) : std::nullopt;
    out += (location ? csv_field(relative_to_site_packages(*location, layout)) : csv_field(path)) + "," +
           std::string(rest) + "\n";
  }
  return out;
}

// pip's RECORD lists every file it installed, whatever the wheel's RECORD left out (an empty one
// included): the files a RECORD does not name are added, as pip writes them, without a hash.
void complete_record(SafeTree& prefix, const std::pair<std::string, std::string>& record,
                     const std::vector<std::string>& installed, const InstallLayout& layout) {
  auto [location, text] = record;
  std::vector<std::string> listed = parse_record_paths(text);
  std::set<std::string> named(listed.begin(), listed.end());
  size_t before = text.size();
  for (const std::string& file : installed)
    if (std::string rel = relative_to_site_packages(file, layout); named.insert(rel).second) text += csv_field(rel) + ",,\n";
  if (text.size() != before) write_text(prefix, location, text);
}

WheelInstall install_wheel(const std::string& host_path, const std::string& display, SafeTree& prefix,
                           const InstallLayout& layout, const ArchiveLimits& limits) {
  WheelInstall out;
  auto reader = ArchiveReader::open(host_path, display, limits);
  if (!reader) {
    out.findings.push_back({"archive-corrupt", Severity::Error, std::nullopt,
                            fmt::format("{} (not a readable zip archive)", reader.error()), "", display});
    return out;
  }
  out.readable = true;
  auto name = parse_wheel_file_name(basename_of(display));
  std::string dist_name = name ? name->distribution : "";
  bool has_metadata = false;
  std::set<std::string> binary_locations;
  std::vector<std::string> installed;                               // every file's location, as pip installs it
  std::optional<std::pair<std::string, std::string>> record;        // RECORD's location and installed text
  while (auto member = (*reader)->next()) {
    std::string top = first_component(member->name);
    bool in_dist_info = ends_with(top, ".dist-info") && member->name.find('/') != std::string::npos;
    std::string data_dir = ends_with(top, ".data") ? top : "";
    if (member->kind == MemberKind::Symlink) {
      if (!link_stays_inside(member->name, member->link_target))
        (*reader)->findings().push_back({"archive-unsafe-member", Severity::Error, std::nullopt,
                                         fmt::format("{}: symbolic link '{}' -> '{}' points outside the wheel: not followed",
                                                     display, member->name, member->link_target), "", display});
      continue;
    }
    if (member->kind != MemberKind::File) continue;
    auto location = install_location(member->name, data_dir, dist_name, layout);
    if (!location) continue;
    installed.push_back(*location);
    std::string leaf = basename_of(member->name);
    bool metadata_file = in_dist_info && member->name.find('/') == top.size() &&
                         (leaf == "METADATA" || leaf == "WHEEL" || leaf == "RECORD");
    if (metadata_file) {
      auto text = (*reader)->read_all();
      if (!text && !(*reader)->failed()) {  // undecodable, or past the small-read cap: there, and said so
        has_metadata |= leaf == "METADATA";
        out.findings.push_back({(*reader)->member_corrupt() ? "archive-corrupt" : "archive-too-large", Severity::Error,
                                std::nullopt, fmt::format("{}: '{}': {}", display, member->name, text.error()), "", display});
      }
      if (text && leaf == "RECORD") record.emplace(*location, *text = installed_record(*text, dist_name, layout));
      if (text && write_text(prefix, *location, *text)) has_metadata |= leaf == "METADATA";
      continue;
    }
    bool for_checks = read_by_checks(member->name);
    // A later copy that is not a library is not written, so a library copy of a name is never hidden.
    auto written = (*reader)->extract(prefix, *location, /*binaries_only=*/!for_checks);
    if (written && *written && !for_checks && binary_locations.insert(*location).second)
      out.binary_files.push_back(*location);
    if (!written && binary_locations.erase(*location)) std::erase(out.binary_files, *location);  // the earlier copy is gone too
    if (!written && !(*reader)->failed())
      out.findings.push_back({(*reader)->member_corrupt() ? "archive-corrupt" : "archive-unsafe-member", Severity::Error, std::nullopt,
                              fmt::format("{}: '{}': {}", display, member->name, written.error()), "", display});
  }
  if (record) complete_record(prefix, *record, installed, layout);
  for (Finding& f : (*reader)->findings()) out.findings.push_back(std::move(f));
  if ((*reader)->failed() && (*reader)->members() == 0) out.readable = false;  // not a zip after all: as one that does not open
  if (!has_metadata && !(*reader)->failed())
    out.findings.push_back({"wheel-invalid", Severity::Error, std::nullopt,
                            fmt::format("{}: no <name>.dist-info/METADATA: not a wheel", display), "", display});
  return out;
}

}  // namespace depscan
