#include "analyzer/input/file_owners.h"

namespace depscan {

FileOwners::FileOwners(const std::vector<Distribution>& distributions) {
  for (const Distribution& d : distributions)
    for (const std::string& file : d.files) by_path_.try_emplace(file, &d);
}

const Distribution* FileOwners::of(const Object& object) const {
  if (by_path_.empty()) return nullptr;
  for (std::string_view path : {std::string_view(object.path), std::string_view(object.realpath)})
    if (auto it = by_path_.find(path); it != by_path_.end()) return it->second;
  return nullptr;
}

}  // namespace depscan
