// Which installed distribution ships a file, by the logical paths its RECORD lists: built once
// per scan, for the graph's owners and for a framework library's version.
#pragma once

#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/input/distribution.h"
#include "analyzer/model.h"

namespace depscan {

class FileOwners {
 public:
  // Keeps views of the distributions' paths: `distributions` must outlive this and stay unchanged.
  explicit FileOwners(const std::vector<Distribution>& distributions);

  // The first distribution that lists the object's path, else its real path; null if none does.
  const Distribution* of(const Object& object) const;
  // The distribution whose RECORD lists this logical path, or null.
  const Distribution* of_path(std::string_view path) const;

 private:
  std::unordered_map<std::string_view, const Distribution*> by_path_;
};

}  // namespace depscan
