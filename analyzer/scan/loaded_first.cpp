#include "analyzer/scan/loaded_first.h"

namespace depscan {
namespace {

std::vector<LoadedBeforeRoot> loaded_before(const LoadedFirst& row, const std::string& site_packages,
                                            const FileSystem& fs) {
  std::vector<LoadedBeforeRoot> out;
  for (const std::vector<std::string>& candidates : row.libraries)
    for (const std::string& candidate : candidates)
      if (std::string path = site_packages + "/" + candidate; fs.is_regular(path)) {
        out.push_back({std::move(path), row.by});
        break;
      }
  return out;
}

}  // namespace

std::vector<std::vector<LoadedBeforeRoot>> libraries_loaded_first(const std::vector<std::string>& roots,
                                                                   const Matrix& matrix, const FileOwners& owners,
                                                                   const FileSystem& fs) {
  std::vector<std::vector<LoadedBeforeRoot>> out(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    const Distribution* d = owners.of_path(roots[i]);
    if (!d) continue;
    if (const LoadedFirst* row = matrix.loaded_first(normalize_dist_name(d->name), relative_to_site_packages(*d, roots[i])))
      out[i] = loaded_before(*row, d->site_packages, fs);
  }
  return out;
}

}  // namespace depscan
