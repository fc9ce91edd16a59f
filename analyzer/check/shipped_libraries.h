// The shared libraries the installed distributions of an audit ship, by file name: what another
// wheel of the same install can provide, even where the loader does not look for it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analyzer/input/distribution.h"

namespace depscan {

class ShippedLibraries {
 public:
  struct Shipped {
    const Distribution* distribution;
    std::string path;  // logical path of the file
  };

  explicit ShippedLibraries(const std::vector<Distribution>* distributions);

  // The first distribution's file named `name` (libcublas.so.12), or null.
  const Shipped* find(const std::string& name) const;

 private:
  std::map<std::string, Shipped, std::less<>> by_name_;
};

}  // namespace depscan
