#include "analyzer/check/shipped_libraries.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/check/cuda_stack.h"
#include "analyzer/input/fs.h"
#include "analyzer/input/python_env.h"

namespace depscan {

ShippedLibraries::ShippedLibraries(const std::vector<Distribution>* distributions, const FileOwners* owners)
    : distributions_(distributions), owners_(owners) {
  if (!distributions) return;
  for (const Distribution& d : *distributions)
    for (const std::string& file : d.files)
      if (file.find(".so") != std::string::npos) by_name_[basename_of(file)].push_back(Shipped{&d, file});
}

const ShippedLibraries::Shipped* ShippedLibraries::find(const std::string& name, const std::vector<int>& process_majors) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  auto same_major = std::ranges::find_if(it->second, [&](const Shipped& s) { return !shipped_for_other_major(s, process_majors); });
  return same_major != it->second.end() ? &*same_major : &it->second.front();
}

std::optional<AskedDistribution> asked_distribution(const LoadedFirstLibrary& library, const Distribution& module,
                                                    const std::vector<Distribution>& distributions) {
  auto wanted = wanted_distribution_name(library, cuda_major_of_distribution(module.name));
  if (!wanted) return std::nullopt;
  const Distribution* first = first_on_sys_path(distributions, *wanted, module);
  return AskedDistribution{first, first && meets_min_version(first->version, library.min_version)};
}

const ShippedLibraries::Shipped* shipped_library(const CheckContext& ctx, const std::string& name,
                                                 const std::vector<int>& process_majors) {
  return ctx.shipped ? ctx.shipped->find(name, process_majors) : nullptr;
}

const PythonPreload* python_preload_of(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped) {
  const Distribution& d = *shipped.distribution;
  return ctx.matrix.python_preload(normalize_dist_name(d.name), relative_to_site_packages(d, shipped.path));
}

std::optional<PackageLoadsFirst> package_loads_first(const CheckContext& ctx, size_t root) {
  if (!ctx.shipped || root >= ctx.graph.roots.size()) return std::nullopt;
  const Object& module = ctx.graph.objects[ctx.graph.roots[root]];
  const Distribution* d = ctx.shipped->owner_of(module);
  if (!d) return std::nullopt;
  const LoadedFirst* row =
      ctx.matrix.loaded_first(normalize_dist_name(d->name), d->version, relative_to_site_packages(*d, module.path));
  if (!row) return std::nullopt;
  return PackageLoadsFirst{d, row};
}

namespace {

// What the package asks importlib.metadata for, to load the shipped file, and what it finds.
struct Asked {
  const LoadedFirstLibrary* library;
  AskedDistribution answer;
};

std::optional<Asked> asked_for(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped,
                               const PackageLoadsFirst& package) {
  std::string relative(relative_to_site_packages(*shipped.distribution, shipped.path));
  for (const LoadedFirstLibrary& library : package.row->libraries) {
    if (std::ranges::find(library.paths, relative) == library.paths.end()) continue;
    const auto* distributions = ctx.shipped->distributions();
    auto answer = distributions ? asked_distribution(library, *package.distribution, *distributions) : std::nullopt;
    if (!answer) return std::nullopt;
    return Asked{&library, *answer};
  }
  return std::nullopt;
}

// ", which takes it only from nvidia-nccl-cu11 2.x, at least 2.16.5, and finds nvidia-nccl-cu11 2.14.3
// in P first": the shipping wheel is another distribution, too old a release, or hidden by one.
std::string taken_only_from(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped,
                            const PackageLoadsFirst& package) {
  auto asked = asked_for(ctx, shipped, package);
  if (!asked || asked->answer.taken) return "";
  std::string note = fmt::format(", which takes it only from {}",
                                 describe_wanted_distribution(*asked->library, cuda_major_of_distribution(package.distribution->name)));
  if (const Distribution* first = asked->answer.first; first && first != shipped.distribution)
    note += fmt::format(", and finds {} {} in {} first", first->name, first->version, first->site_packages);
  return note;
}

}  // namespace

std::string not_loaded_first_note(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped,
                                  const PackageLoadsFirst& package, size_t root, std::string_view what) {
  const Graph& graph = ctx.graph;
  std::vector<std::string> loaded;
  for (const Edge& e : graph.edges)
    if (e.root == root && e.loaded_first && e.to) loaded.push_back(basename_of(graph.objects[*e.to].path));
  std::string loads = loaded.empty() ? "loads no library"
                                     : fmt::format("loads only {}", fmt::join(loaded, ", "));
  return fmt::format("; {} {} installs it at {}, where the loader does not look, and {} {} {} before this module ({}{}): "
                     "{} fails unless Python code that ran earlier has loaded that file",
                     shipped.distribution->name, shipped.distribution->version, shipped.path,
                     package.distribution->name, package.distribution->version, loads, package.row->by,
                     taken_only_from(ctx, shipped, package), what);
}

// nvidia-curand-cu12's major from its name; CUDA 13's wheels have no suffix, but install under nvidia/cu13/lib.
std::optional<int> wheel_cuda_major(const ShippedLibraries::Shipped& shipped) {
  if (auto major = cuda_major_of_distribution(shipped.distribution->name)) return major;
  if (auto major = cu_major_in(shipped.path, "/", "/lib")) return major->first;
  return std::nullopt;
}

std::optional<int> shipped_for_other_major(const ShippedLibraries::Shipped& shipped, const std::vector<int>& process_majors) {
  auto major = wheel_cuda_major(shipped);
  if (!major || process_majors.empty() || std::ranges::find(process_majors, *major) != process_majors.end())
    return std::nullopt;
  return major;
}

std::optional<int> copy_for_other_major(const Matrix& matrix, const std::string& name,
                                        const ShippedLibraries::Shipped& shipped, const std::vector<int>& process_majors) {
  if (matrix.cuda_majors_of(name).size() == 1) return std::nullopt;  // libnvrtc.so.12 names its major itself
  return shipped_for_other_major(shipped, process_majors);
}

std::string other_major_note(const ShippedLibraries::Shipped& shipped, int shipped_major,
                             const std::vector<int>& process_majors) {
  return fmt::format("; {} {} installs a {} at {}, but for CUDA {}, and the process's other CUDA libraries are CUDA {}",
                     shipped.distribution->name, shipped.distribution->version, basename_of(shipped.path), shipped.path,
                     shipped_major, fmt::join(process_majors, "/"));
}

namespace {

struct CallThatLoads {
  const Distribution* caller;  // onnxruntime-gpu 1.23.2
  const PreloadCall* row;
};

// The requester's own package's call that loads the shipped file (onnxruntime.preload_dlls()). It
// looks only in the site-packages that holds the package.
std::optional<CallThatLoads> call_that_loads(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped,
                                             const Object& requester) {
  const Distribution* caller = ctx.shipped ? ctx.shipped->owner_of(requester) : nullptr;
  if (!caller || caller->site_packages != shipped.distribution->site_packages) return std::nullopt;
  const PreloadCall* row = ctx.matrix.preload_call(normalize_dist_name(caller->name), caller->version,
                                                   relative_to_site_packages(*shipped.distribution, shipped.path));
  if (!row) return std::nullopt;
  return CallThatLoads{caller, row};
}

}  // namespace

// PyTorch (torch/__init__.py, for cuDNN's dlopen of libnvrtc: pytorch/pytorch#145580), JAX
// (jax_plugins/xla_cuda12/__init__.py) and CuPy 14 and later (through cuda-pathfinder) load such a file by its
// path first; the loader then finds it by its soname.
std::string shipped_note(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped, std::string_view what,
                         const Object& requester) {
  auto call = call_that_loads(ctx, shipped, requester);
  std::string who = call ? fmt::format("as {} does when the application calls it", call->row->call)
                         : "as PyTorch (torch/__init__.py), JAX (jax_plugins) and CuPy 14 (cuda-pathfinder) do for the "
                           "NVIDIA wheels' libraries";
  return fmt::format("; {} {} installs it at {}, where the loader does not look: {} works only when Python code has "
                     "loaded that file first, {}",
                     shipped.distribution->name, shipped.distribution->version, shipped.path, what, who);
}

std::string shipped_fix(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped, std::string_view before,
                        const Object& requester) {
  std::string lead;
  if (auto call = call_that_loads(ctx, shipped, requester))
    lead = fmt::format("call {} {}: {} {} then loads {} by its path; or ", call->row->call, call->row->when,
                       call->caller->name, call->caller->version, shipped.path);
  return fmt::format("{}load {} before {} (ctypes.CDLL), or add {} to {}'s RUNPATH or to LD_LIBRARY_PATH", lead,
                     shipped.path, before, dirname_of(shipped.path), basename_of(requester.path));
}

}  // namespace depscan
