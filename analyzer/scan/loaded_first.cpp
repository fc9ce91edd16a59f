#include "analyzer/scan/loaded_first.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "analyzer/check/cuda_stack.h"
#include "analyzer/check/shipped_libraries.h"
#include "analyzer/input/python_env.h"

namespace depscan {
namespace {

// Where one module's package looks for the libraries it loads first.
struct Lookup {
  const Distribution& module;                   // cupy-cuda12x 13.6.0
  std::vector<std::string_view> site_packages;  // sys_path_of the module: pathfinder looks in every one
  std::optional<int> module_major;              // cupy-cuda12x: 12
  const std::vector<Distribution>& distributions;
  const FileOwners& owners;
  const FileSystem& fs;
  std::vector<PassedOver>* passed_over = nullptr;  // copies not taken, for depscan why
};

// Where a library may come from. CuPy 13 asks importlib.metadata for cutensor-cu<its CUDA major>,
// which finds the first on sys.path (`asked`), and takes its copy only if its release meets the
// minimum. A module whose name shows no major is not held to a {cuda_major} name.
struct Sources {
  std::vector<std::string_view> dirs;
  const Distribution* asked = nullptr;
};

Sources sources_of(const LoadedFirstLibrary& library, const Lookup& lookup) {
  auto asked = asked_distribution(library, lookup.module, lookup.distributions);
  if (!asked) return {lookup.site_packages};
  if (!asked->taken) return {{}, asked->first};
  return {{asked->first->site_packages}, asked->first};
}

// Why a copy of the library was not taken: another distribution's, too old a release, or one that
// importlib.metadata does not find because another of the same name comes first.
std::string passed_over_because(const Distribution* owner, const LoadedFirstLibrary& library, const Sources& sources,
                                const Lookup& lookup) {
  std::string from = owner ? owner->name + " " + owner->version : "no installed distribution";
  if (owner && sources.asked && owner != sources.asked && normalize_dist_name(owner->name) == normalize_dist_name(sources.asked->name))
    return fmt::format("({}): importlib.metadata finds {} {} in {} first", from, sources.asked->name,
                       sources.asked->version, sources.asked->site_packages);
  return fmt::format("({}): taken only from {}", from, describe_wanted_distribution(library, lookup.module_major));
}

void note_passed_over(const LoadedFirstLibrary& library, const Sources& sources, const Lookup& lookup) {
  if (!lookup.passed_over || !wanted_distribution_name(library, lookup.module_major)) return;
  for (std::string_view dir : lookup.site_packages)
    for (const std::string& candidate : library.paths) {
      std::string path = fmt::format("{}/{}", dir, candidate);
      if (!lookup.fs.is_regular(path)) continue;
      std::string why = passed_over_because(lookup.owners.of_path(path), library, sources, lookup);
      lookup.passed_over->push_back({std::move(path), std::move(why)});
    }
}

std::vector<LoadedBeforeRoot> loaded_before(const LoadedFirst& row, const Lookup& lookup) {
  std::vector<LoadedBeforeRoot> out;
  for (const LoadedFirstLibrary& library : row.libraries) {
    Sources sources = sources_of(library, lookup);
    bool taken = false;
    for (const std::string& candidate : library.paths) {
      auto path_in = [&](std::string_view dir) { return fmt::format("{}/{}", dir, candidate); };
      auto dir = std::ranges::find_if(sources.dirs, [&](std::string_view d) { return lookup.fs.is_regular(path_in(d)); });
      if (dir == sources.dirs.end()) continue;
      out.push_back({path_in(*dir), row.by, library.global});
      taken = true;
      break;
    }
    if (!taken) note_passed_over(library, sources, lookup);
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
    Lookup lookup{*d, sys_path_of(*d, distributions), cuda_major_of_distribution(d->name),
                  distributions, owners, fs, passed_over};
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

// The site-packages directories whose distributions answer for the file. Without `python_env`: the
// file's own, then the rest of its environment's interpreter's. With it: that interpreter's, in
// sys.path order, after the file's own when that is not among them (`outside`).
struct FileInterpreter {
  std::vector<std::string> directories;
  std::vector<std::string> interpreter;  // interpreter_site_packages, to tell a venv's base apart
  bool outside = false;                  // the file's own directory is not among python_env's
};

FileInterpreter interpreter_of_file(const std::string& own, const std::string& python_env, const FileSystem& fs) {
  auto own_real = fs.canonical(own);
  auto same_directory = [&](const std::string& dir) {
    auto real = fs.canonical(dir);
    return dir == own || (real && own_real && *real == *own_real);
  };
  std::string environment = python_env.empty() ? std::string(python_environment_of(own)) : python_env;
  FileInterpreter out;
  if (environment != own) out.interpreter = interpreter_site_packages(fs, environment);
  out.outside = !python_env.empty() && std::ranges::none_of(out.interpreter, same_directory);
  if (python_env.empty() || out.outside) out.directories.push_back(own);
  for (const std::string& dir : out.interpreter)
    if (!python_env.empty() || !same_directory(dir)) out.directories.push_back(dir);
  return out;
}

}  // namespace

FileLoadedFirst libraries_loaded_first_for_file(const std::string& path, const Matrix& matrix, const FileSystem& fs,
                                                const std::string& python_env) {
  FileLoadedFirst out;
  out.site_packages = site_packages_holding(path, fs);
  const std::string& own = out.site_packages;
  if (own.empty()) return out;
  FileInterpreter interpreter = interpreter_of_file(own, python_env, fs);
  out.outside_python_env = interpreter.outside;
  std::vector<Distribution> distributions;
  std::vector<Finding> unread;  // a scan reports these; the question here is one file's
  for (const std::string& dir : interpreter.directories)
    for (Distribution& d : read_distributions(fs, dir, unread)) {
      if (!python_env.empty()) d.venv_prefix = importing_venv(interpreter.interpreter, dir);
      distributions.push_back(std::move(d));
    }
  FileOwners owners(distributions);
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
