#include "analyzer/input/python_env.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "analyzer/input/wheel.h"
#include "analyzer/util/strings.h"

namespace depscan {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

constexpr size_t kMaxMetadataBytes = 16 << 20;

// python3 -m venv links lib64 to lib: one site-packages seen twice. The first name found is kept.
void add_directory_once(const FileSystem& fs, const std::string& dir, std::vector<std::string>& found,
                        std::vector<std::string>& real_dirs) {
  if (!fs.is_directory(dir)) return;
  auto real = fs.canonical(dir);
  std::string key = real ? *real : dir;
  if (std::find(real_dirs.begin(), real_dirs.end(), key) != real_dirs.end()) return;
  real_dirs.push_back(key);
  found.push_back(dir);
}

// site-packages (and dist-packages) directories under a prefix, e.g. lib/python3.12/site-packages.
std::vector<std::string> find_site_packages(const FileSystem& fs, const std::string& prefix) {
  std::vector<std::string> found, real_dirs;
  if (looks_like_site_packages(fs, prefix)) add_directory_once(fs, prefix, found, real_dirs);
  for (const char* lib : {"lib", "lib64"}) {
    std::string lib_dir = join_path(prefix, lib);
    auto names = fs.list(lib_dir);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      if (name.rfind("python", 0) != 0) continue;
      for (const char* leaf : {"site-packages", "dist-packages"})
        add_directory_once(fs, join_path(join_path(lib_dir, name), leaf), found, real_dirs);
    }
  }
  add_directory_once(fs, join_path(join_path(prefix, "Lib"), "site-packages"), found, real_dirs);
  return found;
}

}  // namespace

namespace {

// PREFIX/LIB/PYTHON/site-packages (or dist-packages), read from the path's text.
struct SitePackagesPath {
  std::string_view prefix;  // /usr/local, a venv
  std::string_view lib;     // lib or lib64
  std::string_view python;  // python3.11, or Debian's python3
  std::string_view leaf;    // site-packages or dist-packages
};

std::optional<SitePackagesPath> split_site_packages(std::string_view site_packages) {
  std::string_view dir = site_packages;
  while (dir.size() > 1 && dir.ends_with('/')) dir.remove_suffix(1);
  size_t leaf = dir.rfind('/');
  if (leaf == std::string_view::npos) return std::nullopt;
  std::string_view name = dir.substr(leaf + 1), parent = dir.substr(0, leaf);
  if (name != "site-packages" && name != "dist-packages") return std::nullopt;
  size_t python = parent.rfind('/');
  if (python == std::string_view::npos || !parent.substr(python + 1).starts_with("python")) return std::nullopt;
  std::string_view lib = parent.substr(0, python);
  size_t lib_at = lib.rfind('/');
  std::string_view lib_name = lib_at == std::string_view::npos ? lib : lib.substr(lib_at + 1);
  if (lib_name != "lib" && lib_name != "lib64") return std::nullopt;
  std::string_view prefix = lib_at == std::string_view::npos ? std::string_view() : lib.substr(0, lib_at);
  return SitePackagesPath{prefix, lib_name, parent.substr(python + 1), name};
}

// site.getsitepackages(): each prefix in turn (/usr/local before /usr), its platlibdir lib64 before
// lib (Fedora, RHEL, SUSE; Debian's platlibdir is lib, and a venv's lib64 there is a link to lib),
// and Debian's python3/dist-packages before python3.X/dist-packages.
int sys_path_rank(std::string_view site_packages) {
  auto parts = split_site_packages(site_packages);
  if (!parts) return 0;
  return (parts->prefix == "/usr/local" ? 0 : 4) + (parts->lib == "lib64" ? 0 : 2) + (parts->python == "python3" ? 0 : 1);
}

}  // namespace

std::string_view python_environment_of(std::string_view site_packages) {
  if (auto parts = split_site_packages(site_packages))
    return parts->prefix == "/usr/local" ? std::string_view("/usr") : parts->prefix;
  std::string_view dir = site_packages;  // Windows: PREFIX/Lib/site-packages
  while (dir.size() > 1 && dir.ends_with('/')) dir.remove_suffix(1);
  if (!dir.ends_with("/Lib/site-packages") && !dir.ends_with("/Lib/dist-packages")) return site_packages;
  return dir.substr(0, dir.rfind("/Lib/"));
}

void sort_as_sys_path(std::vector<std::string_view>& site_packages) {
  std::ranges::stable_sort(site_packages, {}, sys_path_rank);
}

namespace {

// python3.11 and python3.11, or Debian's version-less python3 and any python3.X; never python2.7.
bool same_interpreter_version(std::string_view a, std::string_view b) {
  if (a == b) return true;
  if (a == "python3") return b.starts_with("python3.");
  return b == "python3" && a.starts_with("python3.");
}

}  // namespace

bool on_one_sys_path(std::string_view a, std::string_view b) {
  if (python_environment_of(a) != python_environment_of(b)) return false;
  auto pa = split_site_packages(a), pb = split_site_packages(b);
  if (!pa || !pb) return true;
  if (pa->prefix != pb->prefix && pa->leaf != pb->leaf) return false;  // /usr/local's site-packages: its own Python's
  return same_interpreter_version(pa->python, pb->python);
}

namespace {

// The site-packages of the interpreter under `prefix` alone, without a venv's base environment.
std::vector<std::string> own_site_packages(const FileSystem& fs, const std::string& prefix) {
  std::vector<std::string> found = find_site_packages(fs, prefix);
  if (prefix == "/usr") {
    std::vector<std::string> system = found;
    for (std::string& local : find_site_packages(fs, "/usr/local")) {
      bool read_by_system = std::ranges::any_of(system, [&](const std::string& dir) { return on_one_sys_path(dir, local); });
      if (read_by_system) found.push_back(std::move(local));
    }
  }
  std::ranges::stable_sort(found, {}, [](const std::string& dir) { return sys_path_rank(dir); });
  return found;
}

std::string_view python_of(std::string_view site_packages) {
  auto parts = split_site_packages(site_packages);
  return parts ? parts->python : std::string_view();
}

constexpr size_t kMaxPyvenvCfgBytes = 64 << 10;

// What site.py and getpath read from a venv's pyvenv.cfg.
struct PyvenvCfg {
  bool include_system_site_packages = true;  // unless set otherwise; the last setting counts
  std::string home;                          // the first one: the base interpreter's directory
  std::string python;                        // python3.11, from `version` (venv) or `version_info` (uv)
};

std::optional<PyvenvCfg> read_pyvenv_cfg(const FileSystem& fs, std::string_view environment) {
  auto cfg = fs.read_text(join_path(environment, "pyvenv.cfg"), kMaxPyvenvCfgBytes);
  if (!cfg) return std::nullopt;
  PyvenvCfg out;
  for (std::string_view line : lines_of(*cfg)) {
    size_t equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    std::string key = ascii_lower(trim_spaces(line.substr(0, equals)));
    std::string_view value = trim_spaces(line.substr(equals + 1));
    if (key == "include-system-site-packages") out.include_system_site_packages = ascii_lower(value) == "true";
    else if (key == "home" && out.home.empty()) out.home = value;
    else if ((key == "version" || key == "version_info") && out.python.empty()) {
      size_t major_end = value.find('.'), minor_end = major_end == std::string_view::npos ? major_end : value.find('.', major_end + 1);
      if (major_end != std::string_view::npos) out.python = "python" + std::string(value.substr(0, minor_end));
    }
  }
  return out;
}

// A venv's base prefix when its interpreter also reads the base's site-packages, as site.py's venv()
// reads pyvenv.cfg. getpath looks upward from `home` for lib/pythonX.Y/os.py; its parent (/usr for
// /usr/bin) is where python -m venv, virtualenv, uv and conda put it.
std::optional<std::string> system_site_prefix(const FileSystem& fs, std::string_view environment,
                                              const std::optional<PyvenvCfg>& cfg) {
  if (!cfg || !cfg->include_system_site_packages || cfg->home.empty() || cfg->home.front() != '/') return std::nullopt;
  std::string prefix = dirname_of(normalize_path(cfg->home));
  auto real = [&](std::string_view path) {
    auto canonical = fs.canonical(path);
    return canonical ? *canonical : normalize_path(path);
  };
  if (real(prefix) == real(environment)) return std::nullopt;  // the venv itself, by any path
  return prefix;
}

// A venv's interpreter reads lib/pythonX.Y of its own version only: another version's directory
// there (left by an older interpreter) is not on its sys.path.
void keep_own_version(const std::optional<PyvenvCfg>& cfg, std::vector<std::string>& site_packages) {
  if (!cfg || cfg->python.empty()) return;
  auto other_version = [&](const std::string& dir) {
    std::string_view python = python_of(dir);  // python3.13t: the free-threaded build's ABI flag aside
    while (!python.empty() && !std::isdigit(static_cast<unsigned char>(python.back()))) python.remove_suffix(1);
    return python.starts_with("python3.") && python != cfg->python;
  };
  if (std::ranges::all_of(site_packages, other_version)) return;  // a version the cfg does not name: keep them
  std::erase_if(site_packages, other_version);
}

}  // namespace

std::vector<std::string> interpreter_site_packages(const FileSystem& fs, const std::string& prefix) {
  std::vector<std::string> found = own_site_packages(fs, prefix);
  auto cfg = read_pyvenv_cfg(fs, prefix);
  keep_own_version(cfg, found);
  auto base = system_site_prefix(fs, prefix, cfg);
  if (!base) return found;
  std::vector<std::string> venv = found;
  for (std::string& dir : own_site_packages(fs, *base)) {
    bool same_python = std::ranges::any_of(venv, [&](const std::string& own) {
      return same_interpreter_version(python_of(own), python_of(dir));
    });
    if (same_python && std::ranges::find(found, dir) == found.end()) found.push_back(std::move(dir));
  }
  return found;
}

const char* why_not_python_environment(const FileSystem& fs, const std::string& prefix) {
  return fs.is_directory(prefix) ? "no lib/pythonX.Y/site-packages found (not a venv or conda prefix)"
         : fs.stat(prefix)       ? "not a directory"
                                 : "no such directory";
}

std::string importing_venv(const std::vector<std::string>& dirs, std::string_view dir) {
  if (dirs.empty()) return "";
  std::string_view interpreter = python_environment_of(dirs.front());
  return python_environment_of(dir) == interpreter ? "" : std::string(interpreter);
}

namespace {

// Whether a site-packages directory is the base prefix's (or, for /usr, /usr/local's).
bool under_base(std::string_view site_packages, std::string_view base) {
  auto parts = split_site_packages(site_packages);
  return parts && (parts->prefix == base || (base == "/usr" && parts->prefix == "/usr/local"));
}

// Whether the module's interpreter has the directory on its sys.path: its own environment's, and
// a venv's base environment's, for a module of the venv or one of the base imported by the venv.
bool on_sys_path_of(const Distribution& module, std::string_view site_packages) {
  if (on_one_sys_path(site_packages, module.site_packages)) return true;
  if (!same_interpreter_version(python_of(site_packages), python_of(module.site_packages))) return false;
  return (!module.system_site_prefix.empty() && under_base(site_packages, module.system_site_prefix)) ||
         (!module.venv_prefix.empty() && python_environment_of(site_packages) == module.venv_prefix);
}

}  // namespace

std::vector<std::string_view> sys_path_of(const Distribution& module, const std::vector<Distribution>& distributions) {
  std::vector<std::string_view> out{module.site_packages};
  for (const Distribution& d : distributions)
    if (on_sys_path_of(module, d.site_packages) && std::ranges::find(out, d.site_packages) == out.end())
      out.push_back(d.site_packages);
  std::string_view interpreter = module.venv_prefix.empty() ? python_environment_of(module.site_packages)
                                                             : std::string_view(module.venv_prefix);
  auto rank = [&](std::string_view dir) {  // a venv's own directories before its base's
    return (python_environment_of(dir) == interpreter ? 0 : 8) + sys_path_rank(dir);
  };
  std::ranges::stable_sort(out, {}, rank);
  return out;
}

const Distribution* first_on_sys_path(const std::vector<Distribution>& distributions, std::string_view normalized_name,
                                      const Distribution& module) {
  for (std::string_view dir : sys_path_of(module, distributions))
    for (const Distribution& d : distributions)
      if (d.site_packages == dir && normalize_dist_name(d.name) == normalized_name) return &d;
  return nullptr;
}

bool looks_like_site_packages(const FileSystem& fs, const std::string& dir) {
  for (const std::string& name : fs.list(dir))
    if (ends_with(name, ".dist-info") && fs.is_regular(join_path(join_path(dir, name), "METADATA"))) return true;
  return false;
}

std::vector<Distribution> read_distributions(const FileSystem& fs, const std::string& site_packages,
                                             std::vector<Finding>& findings) {
  std::vector<Distribution> dists;
  std::string_view environment = python_environment_of(site_packages);
  std::string system_site;
  if (environment != site_packages) system_site = system_site_prefix(fs, environment, read_pyvenv_cfg(fs, environment)).value_or("");
  auto names = fs.list(site_packages);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (!ends_with(name, ".dist-info")) continue;
    std::string dir = join_path(site_packages, name);
    auto metadata = fs.read_text(join_path(dir, "METADATA"), kMaxMetadataBytes);
    if (!metadata) {
      findings.push_back({"dist-info-unreadable", Severity::Warning, std::nullopt,
                          fmt::format("{}: METADATA: {}", dir, metadata.error()), "", dir});
      continue;
    }
    Metadata meta = parse_metadata(*metadata);
    Distribution dist;
    dist.name = meta.name;
    dist.version = meta.version;
    dist.requires_dist = std::move(meta.requires_dist);
    dist.dist_info = dir;
    dist.site_packages = site_packages;
    dist.system_site_prefix = system_site;
    if (auto wheel = fs.read_text(join_path(dir, "WHEEL"), kMaxMetadataBytes)) dist.tags = parse_wheel_tags(*wheel);
    if (auto record = fs.read_text(join_path(dir, "RECORD"), kMaxMetadataBytes))
      for (const std::string& path : parse_record_paths(*record))
        dist.files.push_back(normalize_path(path.front() == '/' ? path : join_path(site_packages, path)));
    dists.push_back(std::move(dist));
  }
  return dists;
}

}  // namespace depscan
