// The shared libraries the installed distributions of an audit ship, by file name: what another
// wheel of the same install can provide, even where the loader does not look for it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/input/distribution.h"
#include "analyzer/model.h"
#include "matrix/matrix.h"

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

// The file named `name` that ctx.shipped lists, or null (no install, or no distribution ships it).
const ShippedLibraries::Shipped* shipped_library(const CheckContext& ctx, const std::string& name);

// The python_preloads row saying the shipping distribution's own Python code loads this file by its
// path before the modules that need it are imported (RAPIDS' load_library()), or null.
const PythonPreload* python_preload_of(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped);

// Appended to a library-not-found message: "; nvidia-cuda-nvrtc-cu12 12.8.93 installs it at P,
// where the loader does not look: <what> works only when ...". `what`: "the import", "the dlopen".
std::string shipped_note(const ShippedLibraries::Shipped& shipped, std::string_view what);

// "load P before <before> (ctypes.CDLL), or add its directory to <requester>'s RUNPATH or LD_LIBRARY_PATH".
std::string shipped_fix(const ShippedLibraries::Shipped& shipped, std::string_view before, const Object& requester);

}  // namespace depscan
