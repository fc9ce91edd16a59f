#include "analyzer/scan/loaded_first.h"

#include <algorithm>

#include <fmt/format.h>

namespace depscan {
namespace {

// The install's site-packages directories, the module's own first: pathfinder looks in every one on
// sys.path, and torch may sit in another (a distribution's pip puts platlib under lib64/).
std::vector<std::string_view> search_order(const std::string& own, const std::vector<Distribution>& distributions) {
  std::vector<std::string_view> out{own};
  for (const Distribution& d : distributions)
    if (std::ranges::find(out, d.site_packages) == out.end()) out.push_back(d.site_packages);
  return out;
}

std::vector<LoadedBeforeRoot> loaded_before(const LoadedFirst& row, const std::vector<std::string_view>& site_packages,
                                            const FileSystem& fs) {
  std::vector<LoadedBeforeRoot> out;
  for (const LoadedFirstLibrary& library : row.libraries)
    for (const std::string& candidate : library.paths) {
      auto path_in = [&](std::string_view dir) { return fmt::format("{}/{}", dir, candidate); };
      auto dir = std::ranges::find_if(site_packages, [&](std::string_view d) { return fs.is_regular(path_in(d)); });
      if (dir == site_packages.end()) continue;
      out.push_back({path_in(*dir), row.by, library.global});
      break;
    }
  return out;
}

}  // namespace

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
      out[i] = loaded_before(*row, search_order(d->site_packages, distributions), fs);
  }
  return out;
}

}  // namespace depscan
