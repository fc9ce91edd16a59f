#include "analyzer/check/shipped_libraries.h"

#include "analyzer/input/fs.h"

namespace depscan {

ShippedLibraries::ShippedLibraries(const std::vector<Distribution>* distributions) {
  if (!distributions) return;
  for (const Distribution& d : *distributions)
    for (const std::string& file : d.files)
      if (file.find(".so") != std::string::npos) by_name_.try_emplace(basename_of(file), Shipped{&d, file});
}

const ShippedLibraries::Shipped* ShippedLibraries::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

}  // namespace depscan
