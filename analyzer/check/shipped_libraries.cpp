#include "analyzer/check/shipped_libraries.h"

#include <fmt/format.h>

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

const ShippedLibraries::Shipped* shipped_library(const CheckContext& ctx, const std::string& name) {
  return ctx.shipped ? ctx.shipped->find(name) : nullptr;
}

const PythonPreload* python_preload_of(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped) {
  const Distribution& d = *shipped.distribution;
  return ctx.matrix.python_preload(normalize_dist_name(d.name), relative_to_site_packages(d, shipped.path));
}

// PyTorch (torch/__init__.py, for cuDNN's dlopen of libnvrtc: pytorch/pytorch#145580), JAX
// (jax_plugins/xla_cuda12/__init__.py) and CuPy (through cuda-pathfinder) load such a file by its
// path first; the loader then finds it by its soname.
std::string shipped_note(const ShippedLibraries::Shipped& shipped, std::string_view what) {
  return fmt::format("; {} {} installs it at {}, where the loader does not look: {} works only when Python code has "
                     "loaded that file first, as PyTorch (torch/__init__.py), JAX (jax_plugins) and CuPy "
                     "(cuda-pathfinder) do for the NVIDIA wheels' libraries",
                     shipped.distribution->name, shipped.distribution->version, shipped.path, what);
}

std::string shipped_fix(const ShippedLibraries::Shipped& shipped, std::string_view before, const Object& requester) {
  return fmt::format("load {} before {} (ctypes.CDLL), or add {} to {}'s RUNPATH or to LD_LIBRARY_PATH", shipped.path,
                     before, dirname_of(shipped.path), basename_of(requester.path));
}

}  // namespace depscan
