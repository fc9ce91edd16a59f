#include "analyzer/input/file_owners.h"

namespace depscan {

FileOwners::FileOwners(const std::vector<Distribution>& distributions) {
  for (const Distribution& d : distributions)
    for (const std::string& file : d.files) by_path_.try_emplace(file, &d);
}

const Distribution* FileOwners::of(const Object& object) const {
  if (const Distribution* d = of_path(object.path)) return d;
  return of_path(object.realpath);
}

const Distribution* FileOwners::of_path(std::string_view path) const {
  if (by_path_.empty()) return nullptr;
  auto it = by_path_.find(path);
  return it != by_path_.end() ? it->second : nullptr;
}

}  // namespace depscan
