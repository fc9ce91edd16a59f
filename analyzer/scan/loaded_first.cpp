#include "analyzer/scan/loaded_first.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "analyzer/check/cuda_stack.h"
#include "analyzer/input/python_env.h"

namespace depscan {
namespace {

// The site-packages directories of the module's environment, its own first: pathfinder looks in
// every one on sys.path, and torch may sit in another (a distribution's pip puts platlib under
// lib64/). Another environment of the same scan is another interpreter's.
std::vector<std::string_view> search_order(const std::string& own, const std::vector<Distribution>& distributions) {
  std::vector<std::string_view> out{own};
  std::string_view environment = python_environment_of(own);
  for (const Distribution& d : distributions)
    if (python_environment_of(d.site_packages) == environment && std::ranges::find(out, d.site_packages) == out.end())
      out.push_back(d.site_packages);
  return out;
}

// The site-packages a library may come from. CuPy 13 finds cutensor/lib/libcutensor.so.2 through
// importlib.metadata's cutensor-cu<its CUDA major>, the first on sys.path; a module whose name shows
// no major is not held to a {cuda_major} name.
std::vector<std::string_view> directories_for(const LoadedFirstLibrary& library,
                                              const std::vector<std::string_view>& site_packages,
                                              std::optional<int> module_major,
                                              const std::vector<Distribution>& distributions) {
  bool templated = library.distribution.find("{cuda_major}") != std::string::npos;
  if (library.distribution.empty() || (templated && !module_major)) return site_packages;
  std::string wanted = templated ? cuda_major_filled(library.distribution, *module_major) : library.distribution;
  for (std::string_view dir : site_packages)
    for (const Distribution& d : distributions)
      if (d.site_packages == dir && normalize_dist_name(d.name) == wanted) return {dir};
  return {};
}

std::vector<LoadedBeforeRoot> loaded_before(const LoadedFirst& row, const std::vector<std::string_view>& site_packages,
                                            std::optional<int> module_major,
                                            const std::vector<Distribution>& distributions, const FileSystem& fs) {
  std::vector<LoadedBeforeRoot> out;
  for (const LoadedFirstLibrary& library : row.libraries) {
    std::vector<std::string_view> dirs = directories_for(library, site_packages, module_major, distributions);
    for (const std::string& candidate : library.paths) {
      auto path_in = [&](std::string_view dir) { return fmt::format("{}/{}", dir, candidate); };
      auto dir = std::ranges::find_if(dirs, [&](std::string_view d) { return fs.is_regular(path_in(d)); });
      if (dir == dirs.end()) continue;
      out.push_back({path_in(*dir), row.by, library.global});
      break;
    }
  }
  return out;
}

// The nearest directory above `path` that holds installed distributions, or "".
std::string site_packages_holding(const std::string& path, const FileSystem& fs) {
  std::string dir = path;
  for (size_t slash = dir.rfind('/'); slash != std::string::npos && slash > 0; slash = dir.rfind('/')) {
    dir.resize(slash);
    if (looks_like_site_packages(fs, dir)) return dir;
  }
  return "";
}

}  // namespace

std::vector<LoadedBeforeRoot> libraries_loaded_first_for_file(const std::string& path, const Matrix& matrix,
                                                              const FileSystem& fs) {
  std::string own = site_packages_holding(path, fs);
  if (own.empty()) return {};
  std::vector<std::string> directories{own};
  auto own_real = fs.canonical(own);
  auto same_directory = [&](const std::string& dir) {
    auto real = fs.canonical(dir);
    return dir == own || (real && own_real && *real == *own_real);
  };
  if (std::string environment(python_environment_of(own)); environment != own)
    for (std::string& dir : find_site_packages(fs, environment))
      if (!same_directory(dir)) directories.push_back(std::move(dir));
  std::vector<Distribution> distributions;
  std::vector<Finding> unread;  // a scan reports these; the question here is one file's
  for (const std::string& dir : directories)
    for (Distribution& d : read_distributions(fs, dir, unread)) distributions.push_back(std::move(d));
  FileOwners owners(distributions);
  return libraries_loaded_first({path}, distributions, matrix, owners, fs).front();
}

std::vector<std::vector<LoadedBeforeRoot>> libraries_loaded_first(const std::vector<std::string>& roots,
                                                                   const std::vector<Distribution>& distributions,
                                                                   const Matrix& matrix, const FileOwners& owners,
                                                                   const FileSystem& fs) {
  std::vector<std::vector<LoadedBeforeRoot>> out(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    const Distribution* d = owners.of_path(roots[i]);
    if (!d) continue;
    if (const LoadedFirst* row =
            matrix.loaded_first(normalize_dist_name(d->name), d->version, relative_to_site_packages(*d, roots[i])))
      out[i] = loaded_before(*row, search_order(d->site_packages, distributions),
                             cuda_major_of_distribution(d->name), distributions, fs);
  }
  return out;
}

}  // namespace depscan
