#include "matrix/matrix.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <initializer_list>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/util/strings.h"
#include "matrix/embedded.h"

namespace depscan {

// ------------------------------------------------------------------ Version

std::optional<Version> Version::parse(std::string_view text) {
  Version v;
  size_t i = 0;
  while (true) {
    size_t j = text.find('.', i);
    if (j == std::string_view::npos) j = text.size();
    int value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + j, value);
    if (j == i || ec != std::errc() || ptr != text.data() + j || value < 0) return std::nullopt;
    v.parts.push_back(value);
    if (j == text.size()) break;
    i = j + 1;
  }
  v.spelled = std::string(text);
  return v;
}

std::optional<Version> Version::parse_release(std::string_view pep440) {
  if (size_t bang = pep440.find('!'); bang != std::string_view::npos) pep440.remove_prefix(bang + 1);
  size_t end = pep440.find_first_not_of("0123456789.");
  std::string_view release = pep440.substr(0, end);
  while (release.ends_with('.')) release.remove_suffix(1);
  return parse(release);
}

std::string Version::str() const {
  if (!spelled.empty()) return spelled;
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "." : "") + std::to_string(parts[i]);
  return out;
}

bool Version::starts_with(const Version& prefix) const {
  if (prefix.parts.size() > parts.size()) return false;
  return std::equal(prefix.parts.begin(), prefix.parts.end(), parts.begin());
}

std::strong_ordering Version::operator<=>(const Version& other) const {
  size_t n = std::max(parts.size(), other.parts.size());
  for (size_t i = 0; i < n; ++i) {
    int a = i < parts.size() ? parts[i] : 0;
    int b = i < other.parts.size() ? other.parts[i] : 0;
    if (a != b) return a <=> b;
  }
  return std::strong_ordering::equal;
}

const char* to_string(RowStatus status) {
  return status == RowStatus::Secondary ? "secondary" : "primary";
}

std::vector<int> CudnnRelease::cuda_majors() const {
  std::set<int> majors;
  for (const CudnnBuild& b : builds)
    for (int m = b.cuda_min.major(); m <= b.cuda_max.major(); ++m) majors.insert(m);
  return {majors.begin(), majors.end()};
}

bool glob_match(std::string_view pattern, std::string_view text) {
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == text;
  std::string_view head = pattern.substr(0, star);
  if (!text.starts_with(head)) return false;
  std::string_view rest = pattern.substr(star + 1);
  for (size_t i = head.size(); i <= text.size(); ++i)
    if (glob_match(rest, text.substr(i))) return true;
  return false;
}

// ------------------------------------------------------------------ loading and validation

namespace {

using nlohmann::json;

// Validation failures travel as this exception inside this file only; load_document turns
// them into an Error.
struct MatrixError {
  std::string message;
};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw MatrixError{where + ": " + what};
}

// One JSON object with a fixed set of keys; reading a key checks its type.
class Fields {
 public:
  Fields(const json& object, std::string where, std::initializer_list<const char*> allowed)
      : object_(object), where_(std::move(where)) {
    if (!object.is_object()) fail(where_, "expected an object");
    for (auto it = object.begin(); it != object.end(); ++it)
      if (std::find_if(allowed.begin(), allowed.end(), [&](const char* k) { return it.key() == k; }) ==
          allowed.end())
        fail(where_, fmt::format("unknown key '{}'", it.key()));
  }

  const std::string& where() const { return where_; }
  bool has(const char* key) const { return object_.contains(key) && !object_.at(key).is_null(); }

  std::string text(const char* key) const {
    if (!has(key)) fail(where_, fmt::format("missing '{}'", key));
    return text_value(object_.at(key), key);
  }
  std::string optional_text(const char* key) const { return has(key) ? text(key) : std::string(); }
  std::string source() const {
    std::string s = has("source") ? text("source") : std::string();
    if (s.empty()) fail(where_, "missing 'source' (every row needs one)");
    return s;
  }
  Version version(const char* key) const { return parse_version(text(key), key); }
  std::optional<Version> optional_version(const char* key) const {
    if (!has(key)) return std::nullopt;
    return version(key);
  }
  int integer(const char* key) const {
    if (!has(key) || !object_.at(key).is_number_integer()) fail(where_, fmt::format("'{}' must be an integer", key));
    return object_.at(key).get<int>();
  }
  std::optional<int> optional_integer(const char* key) const {
    if (!has(key)) return std::nullopt;
    return integer(key);
  }
  bool flag(const char* key) const {
    if (!has(key)) return false;
    if (!object_.at(key).is_boolean()) fail(where_, fmt::format("'{}' must be true or false", key));
    return object_.at(key).get<bool>();
  }
  RowStatus status() const {
    std::string s = optional_text("status");
    if (s.empty() || s == "primary") return RowStatus::Primary;
    if (s == "secondary") return RowStatus::Secondary;
    fail(where_, fmt::format("status '{}' is not 'primary' or 'secondary' (unconfirmed rows do not belong in the matrix)", s));
  }
  const json& array(const char* key) const {
    if (!has(key) || !object_.at(key).is_array()) fail(where_, fmt::format("'{}' must be an array", key));
    return object_.at(key);
  }
  std::vector<std::string> texts(const char* key) const {
    std::vector<std::string> out;
    for (const json& item : array(key)) out.push_back(text_value(item, key));
    return out;
  }
  std::vector<int> integers(const char* key) const {
    std::vector<int> out;
    for (const json& item : array(key)) {
      if (!item.is_number_integer()) fail(where_, fmt::format("'{}' must hold integers", key));
      out.push_back(item.get<int>());
    }
    return out;
  }

 private:
  std::string text_value(const json& value, const char* key) const {
    if (!value.is_string()) fail(where_, fmt::format("'{}' must be a string", key));
    return value.get<std::string>();
  }
  Version parse_version(const std::string& text, const char* key) const {
    auto v = Version::parse(text);
    if (!v) fail(where_, fmt::format("'{}' is not a version: \"{}\"", key, text));
    return *v;
  }

  const json& object_;
  std::string where_;
};

std::string row_where(const std::string& origin, const char* array, size_t i) {
  return fmt::format("{}: {}[{}]", origin, array, i);
}

template <typename Row, typename ParseRow>
std::vector<Row> parse_rows(const Fields& section, const char* key, ParseRow parse_row) {
  std::vector<Row> rows;
  const json& items = section.array(key);
  for (size_t i = 0; i < items.size(); ++i) rows.push_back(parse_row(items[i], row_where(section.where(), key, i)));
  return rows;
}

// ---- toolkits

DriverRow parse_driver(const json& j, const std::string& where) {
  Fields f(j, where, {"toolkit", "release", "linux", "windows", "note", "status", "source"});
  return DriverRow{f.version("toolkit"), f.text("release"), f.optional_version("linux"),
                   f.optional_version("windows"), f.optional_text("note"), f.status(), f.source()};
}

MinorCompatRow parse_minor_compat(const json& j, const std::string& where) {
  Fields f(j, where, {"major", "branch", "linux", "windows", "upper_branch", "source"});
  return MinorCompatRow{f.integer("major"), f.integer("branch"), f.optional_integer("upper_branch"),
                        f.optional_version("linux"), f.optional_version("windows"), f.source()};
}

ArchitectureRow parse_architectures(const json& j, const std::string& where) {
  Fields f(j, where, {"toolkit", "sm", "note", "source"});
  ArchitectureRow row{f.version("toolkit"), f.texts("sm"), f.optional_text("note"), f.source()};
  for (const std::string& sm : row.sm) {
    std::string_view digits = sm;
    if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.remove_suffix(1);
    if (!Version::parse(digits) || digits.find('.') != std::string_view::npos)
      fail(where, fmt::format("'{}' is not an sm number", sm));
  }
  return row;
}

// The minimum driver never decreases as the toolkit rises, per platform.
void check_drivers_rise(const std::vector<DriverRow>& rows, const std::string& where) {
  for (size_t i = 1; i < rows.size(); ++i) {
    if (!(rows[i - 1].toolkit < rows[i].toolkit))
      fail(where, fmt::format("drivers[{}]: toolkit {} is not above the previous row's {} (rows must rise)", i,
                              rows[i].toolkit.str(), rows[i - 1].toolkit.str()));
    for (auto platform : {&DriverRow::linux_driver, &DriverRow::windows_driver}) {
      const char* name = platform == &DriverRow::linux_driver ? "linux" : "windows";
      const std::optional<Version>& now = rows[i].*platform;
      if (!now) continue;
      for (size_t k = 0; k < i; ++k) {
        const std::optional<Version>& before = rows[k].*platform;
        if (before && *now < *before)
          fail(where, fmt::format("drivers[{}]: the {} minimum driver {} for CUDA {} is below {} required by the "
                                  "older CUDA {} (the minimum driver must not decrease as the toolkit rises)",
                                  i, name, now->str(), rows[i].toolkit.str(), before->str(), rows[k].toolkit.str()));
      }
    }
  }
}

// ---- cudnn

CudnnBuild parse_cudnn_build(const json& j, const std::string& where) {
  Fields f(j, where, {"cuda_min", "cuda_max", "linux", "windows", "sm_min", "sm_max", "note"});
  CudnnBuild b{f.version("cuda_min"), f.version("cuda_max"), f.optional_version("linux"),
               f.optional_version("windows"), f.optional_version("sm_min"), f.optional_version("sm_max"),
               f.optional_text("note")};
  if (b.cuda_max < b.cuda_min) fail(where, "cuda_max is below cuda_min");
  return b;
}

CudnnRelease parse_cudnn_release(const json& j, const std::string& where) {
  Fields f(j, where, {"versions", "builds", "sm_min", "sm_max", "note", "status", "source"});
  CudnnRelease r;
  for (const std::string& text : f.texts("versions")) {
    auto v = Version::parse(text);
    if (!v) fail(where, fmt::format("'versions' holds \"{}\", not a version", text));
    r.versions.push_back(*v);
  }
  if (r.versions.empty()) fail(where, "'versions' is empty");
  r.builds = parse_rows<CudnnBuild>(f, "builds", parse_cudnn_build);
  r.sm_min = f.optional_version("sm_min");
  r.sm_max = f.optional_version("sm_max");
  r.note = f.optional_text("note");
  r.status = f.status();
  r.source = f.source();
  return r;
}

// ---- frameworks, gpus

FrameworkRow parse_framework(const json& j, const std::string& where) {
  Fields f(j, where, {"framework", "version", "variant", "cuda", "cudnn", "python", "note", "status", "source"});
  return FrameworkRow{f.text("framework"), f.text("version"),        f.optional_text("variant"),
                      f.text("cuda"),      f.text("cudnn"),          f.optional_text("python"),
                      f.optional_text("note"), f.status(),           f.source()};
}

GpuRow parse_gpu(const json& j, const std::string& where) {
  Fields f(j, where, {"names", "cc", "status", "source"});
  GpuRow row{f.texts("names"), f.version("cc"), f.status(), f.source()};
  if (row.names.empty()) fail(where, "'names' is empty");
  if (row.cc.parts.size() != 2) fail(where, "'cc' must be major.minor");
  return row;
}

// ---- libraries

ComponentSoname parse_soname(const json& j, const std::string& where) {
  Fields f(j, where, {"name", "cuda_majors", "pip_version"});
  return ComponentSoname{f.text("name"), f.integers("cuda_majors"), f.optional_text("pip_version")};
}

ComponentRow parse_component(const json& j, const std::string& where) {
  Fields f(j, where, {"component", "prefix", "windows_prefix", "sonames", "product", "source"});
  ComponentRow row{f.text("component"), f.text("prefix"), f.optional_text("windows_prefix"),
                   parse_rows<ComponentSoname>(f, "sonames", parse_soname), f.optional_text("product"), f.source()};
  for (const ComponentSoname& s : row.sonames)
    if (!is_dotted_extension_of(s.name, row.prefix))
      fail(where, fmt::format("SONAME {} does not start with the prefix {}", s.name, row.prefix));
  return row;
}

CudnnSeries parse_cudnn_series(const json& j, const std::string& where) {
  Fields f(j, where, {"major", "shim", "sublibraries", "optional_sublibraries", "windows", "header",
                      "version_factor", "source"});
  return CudnnSeries{f.integer("major"), f.text("shim"), f.texts("sublibraries"),
                     f.has("optional_sublibraries") ? f.texts("optional_sublibraries") : std::vector<std::string>{},
                     f.has("windows") ? f.texts("windows") : std::vector<std::string>{},
                     f.text("header"), f.integer("version_factor"), f.source()};
}

DlopenRow parse_dlopen(const json& j, const std::string& where) {
  Fields f(j, where, {"from", "opens", "probe", "optional", "unless_needed", "also_strings", "note", "source"});
  DlopenRow row{f.texts("from"), f.texts("opens"), f.optional_text("probe"), f.flag("optional"),
                f.optional_text("unless_needed"), f.flag("also_strings"), f.optional_text("note"), f.source()};
  static const std::set<std::string> probes = {"", "cudnn_version_suffixes", "cudnn_named_sublibraries",
                                                "library_name_strings", "tsl_cuda_stubs"};
  if (!probes.contains(row.probe)) fail(where, fmt::format("unknown probe '{}'", row.probe));
  if (row.from.empty()) fail(where, "'from' is empty");
  return row;
}

PipPackage parse_pip_package(const json& j, const std::string& where) {
  Fields f(j, where, {"component", "cuda_major", "package"});
  return PipPackage{f.text("component"), f.integer("cuda_major"), f.text("package")};
}

void check_release_bounds(const std::string& since, const std::string& before, const std::string& where) {
  for (const std::string* bound : {&since, &before})
    if (!bound->empty() && !Version::parse(*bound)) fail(where, fmt::format("'{}' is not a version", *bound));
}

// A path or glob under site-packages: relative, and no ".." component to leave it by.
void check_under_site_packages(const std::string& path, const char* field, const std::string& where) {
  bool parent = path == ".." || path.starts_with("../") || path.ends_with("/..") || path.find("/../") != std::string::npos;
  if (path.empty() || path.front() == '/' || parent)
    fail(where, fmt::format("'{}' holds paths under site-packages, not \"{}\"", field, path));
}

// Rows name distributions as PEP 503 normalises them, the form lookups use.
// `spelled` is the name as the row writes it, when `name` was filled in from it.
void check_normalised_name(const std::string& name, const std::string& where, const std::string& spelled = "") {
  bool normalised = !name.empty() && name.front() != '-' && name.back() != '-' && name.find("--") == std::string::npos &&
                    std::ranges::all_of(name, [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
  if (!normalised)
    fail(where, fmt::format("distribution '{}' is not normalised (PEP 503: lower case, '-')", spelled.empty() ? name : spelled));
}

PythonVariants parse_python_variants(const json& j, const std::string& where) {
  Fields f(j, where, {"distribution", "since", "before", "cuda_file", "cpu_file", "others", "rule", "override_variable",
                      "source"});
  PythonVariants row{f.text("distribution"), f.optional_text("since"), f.optional_text("before"), f.text("cuda_file"),
                     f.text("cpu_file"), f.texts("others"), f.text("rule"), f.text("override_variable"), f.source()};
  check_normalised_name(row.distribution, where);
  if (row.rule != "same_major_nearest" && row.rule != "exact") fail(where, fmt::format("unknown rule '{}'", row.rule));
  if (std::count(row.cuda_file.begin(), row.cuda_file.end(), '{') != 1 || row.cuda_file.find("{version}") == std::string::npos)
    fail(where, "'cuda_file' needs one {version}");
  check_release_bounds(row.since, row.before, where);
  return row;
}

OptionalModule parse_optional_module(const json& j, const std::string& where) {
  Fields f(j, where, {"distribution", "file", "why", "fix", "source"});
  OptionalModule row{f.text("distribution"), f.text("file"), f.text("why"), f.text("fix"), f.source()};
  check_normalised_name(row.distribution, where);
  return row;
}

PythonPreload parse_python_preload(const json& j, const std::string& where) {
  Fields f(j, where, {"distribution", "file", "by", "source"});
  PythonPreload row{f.text("distribution"), f.text("file"), f.text("by"), f.source()};
  check_normalised_name(row.distribution, where);
  return row;
}

LoadedFirstLibrary parse_loaded_first_library(const json& j, const std::string& where) {
  Fields f(j, where, {"paths", "global", "distribution", "min_version"});
  LoadedFirstLibrary library{f.texts("paths"), f.flag("global"), f.optional_text("distribution"),
                             f.optional_text("min_version")};
  if (library.paths.empty()) fail(where, "'paths' is empty");
  if (!library.distribution.empty())
    check_normalised_name(cuda_major_filled(library.distribution, 12), where, library.distribution);
  if (!library.min_version.empty()) {
    if (library.distribution.empty()) fail(where, "'min_version' needs the 'distribution' whose release it bounds");
    auto minimum = Version::parse(library.min_version);
    if (!minimum || minimum->parts.size() > 3 || !cupy_release_numbers(library.min_version))  // CuPy reads three numbers
      fail(where, fmt::format("'min_version' '{}' is not a version of up to three numbers", library.min_version));
  }
  for (const std::string& path : library.paths) check_under_site_packages(path, "paths", where);
  return library;
}

LoadedFirst parse_loaded_first(const json& j, const std::string& where) {
  Fields f(j, where, {"distributions", "since", "before", "modules", "libraries", "by", "source"});
  LoadedFirst row{f.texts("distributions"), f.optional_text("since"), f.optional_text("before"), f.texts("modules"),
                  parse_rows<LoadedFirstLibrary>(f, "libraries", parse_loaded_first_library), f.text("by"), f.source()};
  if (row.distributions.empty() || row.modules.empty()) fail(where, "'distributions' and 'modules' must not be empty");
  for (const std::string& name : row.distributions) check_normalised_name(name, where);
  for (const std::string& glob : row.modules) check_under_site_packages(glob, "modules", where);
  check_release_bounds(row.since, row.before, where);
  return row;
}

}  // namespace

std::string cuda_major_filled(std::string_view pattern, int cuda_major) {
  std::string out(pattern);
  const std::string_view field = "{cuda_major}";
  for (size_t at = out.find(field); at != std::string::npos; at = out.find(field, at))
    out.replace(at, field.size(), std::to_string(cuda_major));
  return out;
}

namespace {

PreloadCall parse_preload_call(const json& j, const std::string& where) {
  Fields f(j, where, {"distributions", "since", "before", "call", "when", "paths", "source"});
  PreloadCall row{f.texts("distributions"), f.optional_text("since"), f.optional_text("before"), f.text("call"),
                  f.text("when"), f.texts("paths"), f.source()};
  if (row.distributions.empty() || row.paths.empty()) fail(where, "'distributions' and 'paths' must not be empty");
  if (row.call.empty() || row.when.empty()) fail(where, "'call' and 'when' must not be empty");
  for (const std::string& name : row.distributions) check_normalised_name(name, where);
  for (const std::string& glob : row.paths) check_under_site_packages(glob, "paths", where);
  check_release_bounds(row.since, row.before, where);
  return row;
}

// Whether two release ranges (since <= release < before, "" an open end) share a release.
bool releases_overlap(const std::string& since_a, const std::string& before_a, const std::string& since_b,
                      const std::string& before_b) {
  auto ends_by = [](const std::string& before, const std::string& since) {
    return !before.empty() && !since.empty() && *Version::parse(before) <= *Version::parse(since);
  };
  return !ends_by(before_a, since_b) && !ends_by(before_b, since_a);
}

// Rows of one distribution must describe releases apart: one row per release.
void check_variant_ranges(const std::vector<PythonVariants>& rows, const std::string& where) {
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t k = i + 1; k < rows.size(); ++k)
      if (rows[i].distribution == rows[k].distribution &&
          releases_overlap(rows[i].since, rows[i].before, rows[k].since, rows[k].before))
        fail(where, fmt::format("python_variants[{}] and [{}]: {} releases overlap", i, k, rows[i].distribution));
}

// A file of a release is described by one row of a table (a module for loaded_first): the first
// row found would hide another.
template <class Row>
void check_release_overlap(const std::vector<Row>& rows, std::vector<std::string> Row::*globs, const char* table,
                           const char* file, const std::string& where) {
  auto share = [](const std::vector<std::string>& a, const std::vector<std::string>& b, auto same) {
    return std::ranges::any_of(a, [&](const std::string& x) {
      return std::ranges::any_of(b, [&](const std::string& y) { return same(x, y); });
    });
  };
  auto equal = [](const std::string& x, const std::string& y) { return x == y; };
  auto match = [](const std::string& x, const std::string& y) { return glob_match(x, y) || glob_match(y, x); };
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t k = i + 1; k < rows.size(); ++k)
      if (share(rows[i].distributions, rows[k].distributions, equal) && share(rows[i].*globs, rows[k].*globs, match) &&
          releases_overlap(rows[i].since, rows[i].before, rows[k].since, rows[k].before))
        fail(where, fmt::format("{}[{}] and [{}] describe the same {} of the same releases", table, i, k, file));
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

struct MatrixLoader {
  static void toolkits(Matrix& m, const json& j, const std::string& where) {
    Fields f(j, where, {"schema", "note", "drivers", "minor_compatibility", "full_driver_needed_for", "architectures"});
    m.drivers_ = parse_rows<DriverRow>(f, "drivers", parse_driver);
    check_drivers_rise(m.drivers_, where);
    m.minor_compat_ = parse_rows<MinorCompatRow>(f, "minor_compatibility", parse_minor_compat);
    m.full_driver_ = parse_rows<FullDriverFeature>(f, "full_driver_needed_for", [](const json& row, const std::string& w) {
      Fields g(row, w, {"feature", "source"});
      return FullDriverFeature{g.text("feature"), g.source()};
    });
    m.architectures_ = parse_rows<ArchitectureRow>(f, "architectures", parse_architectures);
    for (size_t i = 1; i < m.architectures_.size(); ++i)
      if (!(m.architectures_[i - 1].toolkit < m.architectures_[i].toolkit))
        fail(where, fmt::format("architectures[{}]: toolkits must rise", i));
  }
  static void cudnn(Matrix& m, const json& j, const std::string& where) {
    Fields f(j, where, {"schema", "note", "compatibility_source", "releases"});
    m.cudnn_compat_source_ = f.text("compatibility_source");
    m.cudnn_ = parse_rows<CudnnRelease>(f, "releases", parse_cudnn_release);
  }
  static void frameworks(Matrix& m, const json& j, const std::string& where) {
    Fields f(j, where, {"schema", "note", "frameworks"});
    m.frameworks_ = parse_rows<FrameworkRow>(f, "frameworks", parse_framework);
  }
  static void gpus(Matrix& m, const json& j, const std::string& where) {
    Fields f(j, where, {"schema", "note", "gpus"});
    m.gpus_ = parse_rows<GpuRow>(f, "gpus", parse_gpu);
  }
  static void libraries(Matrix& m, const json& j, const std::string& where) {
    Fields f(j, where, {"schema", "note", "components", "cudnn_series", "dlopen", "pip_packages", "python_variants",
                        "optional_modules", "python_preloads", "loaded_first", "preload_calls"});
    m.components_ = parse_rows<ComponentRow>(f, "components", parse_component);
    m.cudnn_series_ = parse_rows<CudnnSeries>(f, "cudnn_series", parse_cudnn_series);
    m.dlopen_ = parse_rows<DlopenRow>(f, "dlopen", parse_dlopen);
    if (f.has("python_variants")) {
      m.python_variants_ = parse_rows<PythonVariants>(f, "python_variants", parse_python_variants);
      check_variant_ranges(m.python_variants_, where);
    }
    if (f.has("optional_modules"))
      m.optional_modules_ = parse_rows<OptionalModule>(f, "optional_modules", parse_optional_module);
    if (f.has("python_preloads"))
      m.python_preloads_ = parse_rows<PythonPreload>(f, "python_preloads", parse_python_preload);
    if (f.has("loaded_first")) {
      m.loaded_first_ = parse_rows<LoadedFirst>(f, "loaded_first", parse_loaded_first);
      check_release_overlap(m.loaded_first_, &LoadedFirst::modules, "loaded_first", "module", where);
    }
    if (f.has("preload_calls")) {
      m.preload_calls_ = parse_rows<PreloadCall>(f, "preload_calls", parse_preload_call);
      check_release_overlap(m.preload_calls_, &PreloadCall::paths, "preload_calls", "file", where);
    }
    if (f.has("pip_packages")) pip_packages(m, j["pip_packages"], where + ": pip_packages");
  }
  static void pip_packages(Matrix& m, const json& j, const std::string& where) {
    Fields f(j, where, {"note", "source", "rows"});
    m.pip_source_ = f.source();
    m.pip_packages_ = parse_rows<PipPackage>(f, "rows", parse_pip_package);
    for (const PipPackage& p : m.pip_packages_)
      if (p.component != "cudnn" && std::none_of(m.components_.begin(), m.components_.end(),
                                                  [&](const ComponentRow& c) { return c.component == p.component; }))
        fail(where, fmt::format("{}: unknown component '{}'", p.package, p.component));
  }

  using SectionLoader = void (*)(Matrix&, const json&, const std::string&);
  struct Section {
    const char* name;
    SectionLoader load;
  };
  static constexpr Section kSections[] = {{"toolkits", toolkits}, {"cudnn", cudnn}, {"frameworks", frameworks},
                                          {"gpus", gpus}, {"libraries", libraries}};

  static void document(Matrix& m, const json& doc, const std::string& origin) {
    if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string())
      fail(origin, "not a depscan matrix file (no \"schema\")");
    std::string schema = doc["schema"].get<std::string>();
    if (schema == "depscan-matrix/1") {
      for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (it.key() == "schema" || it.key() == "note") continue;
        const Section* s = find(it.key());
        if (!s) fail(origin, fmt::format("unknown section '{}'", it.key()));
        s->load(m, it.value(), origin + ": " + it.key());
      }
      return;
    }
    for (const Section& s : kSections)
      if (schema == fmt::format("depscan-matrix/{}/1", s.name)) return s.load(m, doc, origin);
    fail(origin, fmt::format("unknown schema '{}'", schema));
  }

  static const Section* find(std::string_view name) {
    for (const Section& s : kSections)
      if (name == s.name) return &s;
    return nullptr;
  }
};

Expected<bool> Matrix::load_document(std::string_view json_text, const std::string& origin) {
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Error{origin + ": not valid JSON"};
  Matrix candidate = *this;
  try {
    MatrixLoader::document(candidate, doc, origin);
  } catch (const MatrixError& e) {
    return Error{e.message};
  } catch (const json::exception& e) {
    return Error{origin + ": " + e.what()};
  }
  *this = std::move(candidate);
  return true;
}

Expected<Matrix> parse_embedded_matrix_json(MatrixUse use) {
  Matrix m;
  for (const char* name : {"toolkits.json", "cudnn.json", "frameworks.json", "gpus.json", "libraries.json"}) {
    if (use == MatrixUse::Scan && std::string_view(name) == "frameworks.json") continue;
    std::string_view text = embedded_file(name);
    if (text.empty()) return Error{fmt::format("embedded matrix file {} is missing", name)};
    auto loaded = m.load_document(text, fmt::format("matrix/data/{}", name));
    if (!loaded) return Error{loaded.error()};
  }
  return m;
}

// ------------------------------------------------------------------ questions

const DriverRow* Matrix::driver_row(const Version& toolkit) const {
  const DriverRow* first = nullptr;  // of the minor: 10.2 has only 10.2.89, 11.0 starts at 11.0.1
  const DriverRow* found = nullptr;
  for (const DriverRow& row : drivers_) {
    if (row.toolkit.major() != toolkit.major() || row.toolkit.minor() != toolkit.minor()) continue;
    if (!first || row.toolkit < first->toolkit) first = &row;
    if (!(toolkit < row.toolkit) && (!found || found->toolkit < row.toolkit)) found = &row;
  }
  return found ? found : first;
}

const MinorCompatRow* Matrix::minor_compat(int major) const {
  for (const MinorCompatRow& row : minor_compat_)
    if (row.major == major) return &row;
  return nullptr;
}

const DriverRow* Matrix::newest_toolkit_for_driver(const Version& driver, Platform platform) const {
  const DriverRow* found = nullptr;
  for (const DriverRow& row : drivers_) {
    const std::optional<Version>& floor = platform == Platform::Linux ? row.linux_driver : row.windows_driver;
    if (floor && !(driver < *floor)) found = &row;
  }
  return found;
}

const ArchitectureRow* Matrix::architectures_for(const Version& toolkit) const {
  const ArchitectureRow* found = nullptr;
  for (const ArchitectureRow& row : architectures_)
    if (!(Version{{toolkit.major(), toolkit.minor()}} < row.toolkit)) found = &row;
  return found;
}

std::vector<const CudnnRelease*> Matrix::cudnn_releases_matching(const Version& prefix) const {
  std::vector<const CudnnRelease*> out;
  for (const CudnnRelease& r : cudnn_)
    if (std::any_of(r.versions.begin(), r.versions.end(),
                    [&](const Version& v) { return v.starts_with(prefix) || prefix.starts_with(v); }))
      out.push_back(&r);
  return out;
}

std::optional<Version> Matrix::newest_cudnn_release() const {
  std::optional<Version> newest;
  for (const CudnnRelease& r : cudnn_)
    for (const Version& v : r.versions)
      if (!newest || *newest < v) newest = v;
  return newest;
}

const DriverRow* Matrix::newest_toolkit() const {
  const DriverRow* newest = nullptr;
  for (const DriverRow& row : drivers_)
    if (!newest || newest->toolkit < row.toolkit) newest = &row;
  return newest;
}

std::string Matrix::framework_name(std::string_view given) {
  static const std::map<std::string, std::string, std::less<>> aliases = {
      {"torch", "pytorch"}, {"tf", "tensorflow"}, {"tensorflow-gpu", "tensorflow"},
      {"tensorflow-cpu", "tensorflow"}, {"jaxlib", "jax"}, {"onnxruntime-gpu", "onnxruntime"}};
  std::string name = lower(given);
  if (auto it = aliases.find(name); it != aliases.end()) return it->second;
  if (name.starts_with("cupy-cuda")) return "cupy";  // cupy-cuda12x, cupy-cuda11x
  return name;
}

std::vector<const FrameworkRow*> Matrix::frameworks_matching(std::string_view framework,
                                                             std::string_view version) const {
  std::vector<const FrameworkRow*> out;
  auto wanted = Version::parse(version);
  std::string name = framework_name(framework);
  for (const FrameworkRow& row : frameworks_) {
    if (lower(row.framework) != name) continue;
    auto have = Version::parse(row.version);
    bool matches = version.empty() || row.version == version ||
                   (wanted && have && (have->starts_with(*wanted) || wanted->starts_with(*have)));
    if (matches) out.push_back(&row);
  }
  return out;
}

const FrameworkRow* Matrix::framework_build(std::string_view distribution, std::string_view version,
                                            std::optional<std::pair<int, int>> cuda) const {
  std::string_view release = version.substr(0, version.find('+'));  // the table lists releases
  auto parsed = Version::parse(release);
  if (!parsed) return nullptr;
  for (const std::string& wanted : {std::string(release), fmt::format("{}.{}", parsed->major(), parsed->minor())})
    for (const FrameworkRow* row : frameworks_matching(distribution, wanted)) {
      auto row_cuda = Version::parse(row->cuda);
      if (!row_cuda || !Version::parse(row->cudnn)) continue;
      if (!cuda || (row_cuda->major() == cuda->first && row_cuda->minor() == cuda->second)) return row;
    }
  return nullptr;
}

namespace {

std::vector<std::string> name_tokens(std::string_view text) {
  std::vector<std::string> tokens(1);
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '#') tokens.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    else if (!tokens.back().empty()) tokens.emplace_back();
  }
  if (tokens.back().empty()) tokens.pop_back();
  return tokens;
}

bool token_matches(std::string_view pattern, std::string_view token) {
  if (pattern.size() != token.size()) return false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    bool digit = std::isdigit(static_cast<unsigned char>(token[i]));
    if (pattern[i] == '#' ? !digit : pattern[i] != token[i]) return false;
  }
  return true;
}

bool tokens_appear(const std::vector<std::string>& pattern, const std::vector<std::string>& input) {
  for (size_t start = 0; start + pattern.size() <= input.size(); ++start)
    if (std::equal(pattern.begin(), pattern.end(), input.begin() + static_cast<std::ptrdiff_t>(start), token_matches))
      return true;
  return false;
}

// "sm_90", "compute_90a", "90" -> 9.0; "9.0" -> 9.0.
std::optional<Version> capability_from_text(std::string_view text) {
  for (std::string_view prefix : {"sm_", "compute_"})
    if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
  if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) text.remove_suffix(1);
  auto v = Version::parse(text);
  if (!v) return std::nullopt;
  if (v->parts.size() == 2 && v->minor() < 10) return v;
  if (v->parts.size() == 1 && v->major() >= 10 && v->major() < 1000) return Version{{v->major() / 10, v->major() % 10}};
  return std::nullopt;
}

}  // namespace

std::optional<GpuMatch> Matrix::gpu(std::string_view text) const {
  if (auto cc = capability_from_text(text)) {
    for (const GpuRow& row : gpus_)
      if (row.cc == *cc) return GpuMatch{&row, row.names.front(), *cc};
    return GpuMatch{nullptr, std::string(text), *cc};
  }
  std::vector<std::string> input = name_tokens(text);
  std::optional<GpuMatch> best;
  size_t best_length = 0;
  for (const GpuRow& row : gpus_)
    for (const std::string& name : row.names) {
      std::vector<std::string> pattern = name_tokens(name);
      size_t length = name.size();
      if (tokens_appear(pattern, input) && length > best_length) {
        best_length = length;
        best = GpuMatch{&row, name, row.cc};
      }
    }
  return best;
}

const ComponentRow* Matrix::component_of(std::string_view soname) const {
  const ComponentRow* best = nullptr;
  for (const ComponentRow& row : components_) {
    if (is_name_or_dotted_extension_of(soname, row.prefix) && (!best || row.prefix.size() > best->prefix.size())) best = &row;
  }
  return best;
}

const ComponentRow* Matrix::windows_component_of(std::string_view dll) const {
  constexpr std::string_view kSuffix = ".dll";
  if (dll.size() <= kSuffix.size() || !equals_ignoring_case(dll.substr(dll.size() - kSuffix.size()), kSuffix)) return nullptr;
  std::string_view stem = dll.substr(0, dll.size() - kSuffix.size());
  for (const ComponentRow& row : components_) {
    const std::string& prefix = row.windows_prefix;
    if (prefix.empty() || stem.size() < prefix.size() || !equals_ignoring_case(stem.substr(0, prefix.size()), prefix)) continue;
    std::string_view rest = stem.substr(prefix.size());
    if (std::all_of(rest.begin(), rest.end(), [](char c) { return (c >= '0' && c <= '9') || c == '_'; })) return &row;
  }
  return nullptr;
}

const ComponentSoname* Matrix::soname_of(std::string_view soname) const {
  if (const ComponentRow* row = component_of(soname))
    for (const ComponentSoname& s : row->sonames)
      if (is_name_or_dotted_extension_of(soname, s.name)) return &s;
  return nullptr;
}

std::vector<int> Matrix::cuda_majors_of(std::string_view soname) const {
  const ComponentSoname* entry = soname_of(soname);
  return entry ? entry->cuda_majors : std::vector<int>{};
}

const CudnnSeries* Matrix::cudnn_series_of(std::string_view soname) const {
  for (const CudnnSeries& s : cudnn_series_) {
    auto is = [&](const std::string& name) { return is_name_or_dotted_extension_of(soname, name); };
    if (is(s.shim) || std::any_of(s.sublibraries.begin(), s.sublibraries.end(), is) ||
        std::any_of(s.optional_sublibraries.begin(), s.optional_sublibraries.end(), is))
      return &s;
  }
  return nullptr;
}

const CudnnSeries* Matrix::windows_cudnn_series_of(std::string_view dll) const {
  for (const CudnnSeries& s : cudnn_series_)
    if (std::any_of(s.windows.begin(), s.windows.end(), [&](const std::string& w) { return equals_ignoring_case(w, dll); }))
      return &s;
  return nullptr;
}

const CudnnSeries* Matrix::cudnn_series_for(int major) const {
  for (const CudnnSeries& s : cudnn_series_)
    if (s.major == major) return &s;
  return nullptr;
}

std::vector<const PipPackage*> Matrix::pip_packages_of(std::string_view component,
                                                      const std::vector<int>& cuda_majors) const {
  std::vector<const PipPackage*> out;
  for (const PipPackage& p : pip_packages_)
    if (p.component == component &&
        (cuda_majors.empty() || std::find(cuda_majors.begin(), cuda_majors.end(), p.cuda_major) != cuda_majors.end()))
      out.push_back(&p);
  std::sort(out.begin(), out.end(), [](const PipPackage* a, const PipPackage* b) { return a->cuda_major < b->cuda_major; });
  return out;
}

std::optional<std::string> wanted_distribution_name(const LoadedFirstLibrary& library, std::optional<int> module_major) {
  bool templated = library.distribution.find("{cuda_major}") != std::string::npos;
  if (library.distribution.empty() || (templated && !module_major)) return std::nullopt;
  return templated ? cuda_major_filled(library.distribution, *module_major) : library.distribution;
}

std::string describe_wanted_distribution(const LoadedFirstLibrary& library, std::optional<int> module_major) {
  auto name = wanted_distribution_name(library, module_major);
  if (!name) return "";
  auto minimum = Version::parse(library.min_version);
  if (!minimum) return *name;
  return fmt::format("{} {}.x, at least {}", *name, minimum->major(), library.min_version);
}

std::optional<std::array<int, 3>> cupy_release_numbers(std::string_view text) {
  constexpr int kLargest = 1'000'000'000;  // Python's int() has no limit; larger numbers compare alike
  std::array<int, 3> out{};
  size_t at = 0;
  for (int& number : out) {
    size_t end = at;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == at) return std::nullopt;
    for (size_t i = at; i < end; ++i) number = static_cast<int>(std::min<int64_t>(kLargest, int64_t{number} * 10 + (text[i] - '0')));
    if (end >= text.size()) return out;
    at = end + 1;  // past the one non-digit split at
  }
  return out;
}

bool meets_min_version(std::string_view installed, std::string_view min_version) {
  if (min_version.empty()) return true;
  auto actual = cupy_release_numbers(installed);
  auto minimum = cupy_release_numbers(min_version);
  if (!actual || !minimum || (*actual)[0] != (*minimum)[0]) return false;
  return (*actual)[1] > (*minimum)[1] || ((*actual)[1] == (*minimum)[1] && (*actual)[2] >= (*minimum)[2]);
}

namespace {

// since <= release < before, "" being an open end; an unreadable release is in no bounded range.
bool in_releases(const std::optional<Version>& release, const std::string& since, const std::string& before) {
  if (since.empty() && before.empty()) return true;
  if (!release) return false;
  return (since.empty() || !(*release < *Version::parse(since))) && (before.empty() || *release < *Version::parse(before));
}

}  // namespace

const PythonVariants* Matrix::python_variants_for(std::string_view distribution, std::string_view version) const {
  auto release = Version::parse_release(version);
  if (!release) return nullptr;
  for (const PythonVariants& row : python_variants_)
    if (row.distribution == distribution && in_releases(release, row.since, row.before)) return &row;
  return nullptr;
}

namespace {

// The row of a distribution whose file glob matches a file relative to site-packages, or null.
template <class Row>
const Row* row_for_file(const std::vector<Row>& rows, std::string_view distribution, std::string_view relative) {
  for (const Row& row : rows)
    if (row.distribution == distribution && glob_match(row.file, relative)) return &row;
  return nullptr;
}

}  // namespace

const OptionalModule* Matrix::optional_module(std::string_view distribution, std::string_view relative) const {
  return row_for_file(optional_modules_, distribution, relative);
}

const PythonPreload* Matrix::python_preload(std::string_view distribution, std::string_view relative) const {
  return row_for_file(python_preloads_, distribution, relative);
}

namespace {

// The first row of one of `distributions` for that release whose `globs` match the file.
template <class Row>
const Row* row_for_release(const std::vector<Row>& rows, std::vector<std::string> Row::*globs,
                           std::string_view distribution, std::string_view version, std::string_view relative) {
  auto release = Version::parse_release(version);
  for (const Row& row : rows) {
    if (std::ranges::find(row.distributions, distribution) == row.distributions.end()) continue;
    if (!in_releases(release, row.since, row.before)) continue;
    if (std::ranges::any_of(row.*globs, [&](const std::string& glob) { return glob_match(glob, relative); })) return &row;
  }
  return nullptr;
}

}  // namespace

const LoadedFirst* Matrix::loaded_first(std::string_view distribution, std::string_view version,
                                        std::string_view relative) const {
  return row_for_release(loaded_first_, &LoadedFirst::modules, distribution, version, relative);
}

const PreloadCall* Matrix::preload_call(std::string_view distribution, std::string_view version,
                                        std::string_view relative) const {
  return row_for_release(preload_calls_, &PreloadCall::paths, distribution, version, relative);
}


std::vector<const DlopenRow*> Matrix::dlopen_rows_for(std::string_view soname) const {
  std::vector<const DlopenRow*> out;
  for (const DlopenRow& row : dlopen_)
    if (std::any_of(row.from.begin(), row.from.end(), [&](const std::string& p) { return glob_match(p, soname); }))
      out.push_back(&row);
  return out;
}

bool Matrix::dlopen_is_optional(std::string_view opener, std::string_view name) const {
  for (const DlopenRow* row : dlopen_rows_for(opener))
    for (const std::string& opens : row->opens)
      if (opens_names(opens, name)) return row->optional;
  return false;
}

namespace {

// `name` spelled as `pattern` with each {major}, {minor} or {cuda_major} standing for a number:
// libnvJitLink.so.{cuda_major} names libnvJitLink.so.13.
bool matches_numbered(std::string_view pattern, std::string_view name) {
  while (!pattern.empty()) {
    size_t open = pattern.find('{');
    if (open == std::string_view::npos) return pattern == name;
    if (!name.starts_with(pattern.substr(0, open))) return false;
    name.remove_prefix(open);
    pattern.remove_prefix(open);
    size_t close = pattern.find('}');
    std::string_view field = pattern.substr(0, close == std::string_view::npos ? pattern.size() : close + 1);
    if (field != "{major}" && field != "{minor}" && field != "{cuda_major}") return false;
    size_t digits = 0;
    while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') ++digits;
    if (digits == 0) return false;
    name.remove_prefix(digits);
    pattern.remove_prefix(field.size());
  }
  return name.empty();
}

}  // namespace

bool Matrix::opens_names(std::string_view pattern, std::string_view name) const {
  constexpr std::string_view kSoname = "{soname:";
  if (!pattern.starts_with(kSoname) || !pattern.ends_with('}')) return matches_numbered(pattern, name);
  const ComponentRow* c = component_of(name);
  return c && c->component == pattern.substr(kSoname.size(), pattern.size() - kSoname.size() - 1);
}

}  // namespace depscan
