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

// Where one module's package looks for the libraries it loads first.
struct Lookup {
  std::vector<std::string_view> site_packages;  // search_order
  std::optional<int> module_major;              // cupy-cuda12x: 12
  const std::vector<Distribution>& distributions;
  const FileOwners& owners;
  const FileSystem& fs;
  std::vector<PassedOver>* passed_over = nullptr;  // copies not taken, for depscan why
};

// The site-packages a library may come from. CuPy 13 finds cutensor/lib/libcutensor.so.2 through
// importlib.metadata's cutensor-cu<its CUDA major>: the first on sys.path, and only if its release
// meets the minimum. A module whose name shows no major is not held to a {cuda_major} name.
std::vector<std::string_view> directories_for(const LoadedFirstLibrary& library, const Lookup& lookup) {
  bool templated = library.distribution.find("{cuda_major}") != std::string::npos;
  if (library.distribution.empty() || (templated && !lookup.module_major)) return lookup.site_packages;
  std::string wanted = templated ? cuda_major_filled(library.distribution, *lookup.module_major) : library.distribution;
  for (std::string_view dir : lookup.site_packages)
    for (const Distribution& d : lookup.distributions)
      if (d.site_packages == dir && normalize_dist_name(d.name) == wanted) {
        if (!meets_min_version(d.version, library.min_version)) return {};
        return {dir};
      }
  return {};
}

// The copies of a library the package did not take, and what it takes instead.
void note_passed_over(const LoadedFirstLibrary& library, const Lookup& lookup) {
  std::string wanted = wanted_distribution(library, lookup.module_major);
  if (!lookup.passed_over || wanted.empty()) return;
  for (std::string_view dir : lookup.site_packages)
    for (const std::string& candidate : library.paths) {
      std::string path = fmt::format("{}/{}", dir, candidate);
      if (!lookup.fs.is_regular(path)) continue;
      const Distribution* owner = lookup.owners.of_path(path);
      std::string from = owner ? owner->name + " " + owner->version : "no installed distribution";
      lookup.passed_over->push_back({path, fmt::format("({}): taken only from {}", from, wanted)});
    }
}

std::vector<LoadedBeforeRoot> loaded_before(const LoadedFirst& row, const Lookup& lookup) {
  std::vector<LoadedBeforeRoot> out;
  for (const LoadedFirstLibrary& library : row.libraries) {
    std::vector<std::string_view> dirs = directories_for(library, lookup);
    bool taken = false;
    for (const std::string& candidate : library.paths) {
      auto path_in = [&](std::string_view dir) { return fmt::format("{}/{}", dir, candidate); };
      auto dir = std::ranges::find_if(dirs, [&](std::string_view d) { return lookup.fs.is_regular(path_in(d)); });
      if (dir == dirs.end()) continue;
      out.push_back({path_in(*dir), row.by, library.global});
      taken = true;
      break;
    }
    if (!taken) note_passed_over(library, lookup);
  }
  return out;
}

std::vector<std::vector<LoadedBeforeRoot>> loaded_first_of_roots(const std::vector<std::string>& roots,
                                                                 const std::vector<Distribution>& distributions,
                                                                 const Matrix& matrix, const FileOwners& owners,
                                                                 const FileSystem& fs,
                                                                 std::vector<PassedOver>* passed_over) {
  std::vector<std::vector<LoadedBeforeRoot>> out(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    const Distribution* d = owners.of_path(roots[i]);
    if (!d) continue;
    const LoadedFirst* row =
        matrix.loaded_first(normalize_dist_name(d->name), d->version, relative_to_site_packages(*d, roots[i]));
    if (!row) continue;
    Lookup lookup{search_order(d->site_packages, distributions), cuda_major_of_distribution(d->name), distributions,
                  owners, fs, passed_over};
    out[i] = loaded_before(*row, lookup);
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

FileLoadedFirst libraries_loaded_first_for_file(const std::string& path, const Matrix& matrix, const FileSystem& fs) {
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
  FileLoadedFirst out;
  out.loaded = loaded_first_of_roots({path}, distributions, matrix, owners, fs, &out.passed_over).front();
  return out;
}

std::vector<std::vector<LoadedBeforeRoot>> libraries_loaded_first(const std::vector<std::string>& roots,
                                                                   const std::vector<Distribution>& distributions,
                                                                   const Matrix& matrix, const FileOwners& owners,
                                                                   const FileSystem& fs) {
  return loaded_first_of_roots(roots, distributions, matrix, owners, fs, nullptr);
}

}  // namespace depscan
