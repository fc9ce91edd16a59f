#include "analyzer/check/framework_cudnn.h"

#include <map>
#include <optional>

#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"
#include "analyzer/check/framework_builds.h"

namespace depscan {
namespace {

std::string path_of(const Object& o) { return o.realpath.empty() ? o.path : o.realpath; }
std::string triple(const Version& v) { return fmt::format("({}, {}, {})", v.major(), v.minor(), v.patch()); }
std::string dotted(const Version& v) { return fmt::format("{}.{}.{}", v.major(), v.minor(), v.patch()); }

// The framework's own words when it meets the older cuDNN.
std::string refusal_of(const FrameworkBuild& build, const Version& runtime) {
  constexpr const char* kXla = "CuDNN library needs to have matching major version and equal or higher minor version";
  switch (build.refusal) {
    case CudnnRefusal::PyTorch:
      return fmt::format("PyTorch raises \"cuDNN version incompatibility: PyTorch was compiled against {} but found "
                         "runtime version {}\" when it first uses cuDNN", triple(build.cudnn), triple(runtime));
    case CudnnRefusal::TensorFlow:
      return fmt::format("TensorFlow logs \"Loaded runtime CuDNN library: {} but source was compiled with: {}.  {}\" "
                         "and cannot use the GPU", dotted(runtime), dotted(build.cudnn), kXla);
    case CudnnRefusal::Jax:
      return fmt::format("XLA logs \"Loaded runtime CuDNN library: {} but source was compiled with: {}.  {}\" and JAX's "
                         "operations that need cuDNN fail (\"DNN library initialization failed\")",
                         dotted(runtime),
                         build.floor_only ? fmt::format("<JAX's cuDNN, {}.{} or newer>", build.cudnn.major(), build.cudnn.minor())
                                          : dotted(build.cudnn),
                         kXla);
  }
  return "";
}

Finding too_old(const Graph& g, const FrameworkBuild& build, const CudaLibrary& cudnn) {
  const Version& runtime = *cudnn.version;
  std::string built = build.floor_only ? fmt::format("requires cuDNN {} or newer", build.cudnn.str())
                                       : fmt::format("was built with cuDNN {}", build.cudnn.str());
  return Finding{
      "cudnn-version-mismatch", Severity::Error, cudnn.object,
      fmt::format("{} {} (source: {}), and this process loads cuDNN {} from {} ({}), which is older: {}", build.label,
                  built, build.source, runtime.str(), path_of(g.objects[cudnn.object]), cudnn.version_source,
                  refusal_of(build, runtime)),
      fmt::format("load cuDNN {}.{} or a newer {}.x instead (pip install 'nvidia-cudnn-cu{}>={}'), and take the older "
                  "one off the search path (LD_LIBRARY_PATH, ld.so.cache, RPATH)",
                  build.cudnn.major(), build.cudnn.minor(), build.cudnn.major(), build.cuda_major, build.cudnn.str()),
      ""};
}

Finding no_row(const Graph& g, const std::string& unknown, const CudaLibrary& cudnn, size_t framework_object) {
  return Finding{
      "matrix-no-data", Severity::Info, framework_object,
      fmt::format("{} has no row in depscan's framework table: the cuDNN it was built with was not compared with the "
                  "cuDNN {} this process loads from {}",
                  unknown, cudnn.version->str(), path_of(g.objects[cudnn.object])),
      "check the cuDNN version in the framework's release notes or tested build configurations: it needs the same "
      "cuDNN major and at least the minor it was built with",
      ""};
}

}  // namespace

std::vector<Finding> check_framework_cudnn(const CheckContext& ctx, const CudaStack& stack,
                                           const std::vector<Distribution>& dists) {
  std::vector<Finding> out;
  if (dists.empty()) return out;
  std::map<std::string, const Distribution*> by_name;
  for (const Distribution& d : dists) by_name.emplace(d.name, &d);
  std::map<const Distribution*, BuildLookup> builds;  // read once per distribution
  const Graph& g = ctx.graph;
  for (size_t root = 0; root < g.roots.size(); ++root) {
    const CudaLibrary* cudnn = nullptr;
    for (const CudaLibrary* lib : libraries_in_root(g, stack, root))
      if (lib->component == "cudnn" && (!cudnn || lib->cudnn_shim)) cudnn = lib;
    if (!cudnn) continue;
    if (!cudnn->version) continue;
    const Version& runtime = *cudnn->version;
    for (size_t object : g.load_order[root]) {
      auto owner = by_name.find(g.objects[object].owner);
      if (owner == by_name.end()) continue;
      auto [it, fresh] = builds.try_emplace(owner->second);
      if (fresh) it->second = framework_build_of(ctx, *owner->second, dists);
      const std::optional<FrameworkBuild>& build = it->second.build;
      if (!it->second.unknown.empty()) append_unique(out, no_row(g, it->second.unknown, *cudnn, object));
      if (!build || build->cudnn.major() != runtime.major() || runtime.minor() >= build->cudnn.minor()) continue;
      append_unique(out, too_old(g, *build, *cudnn));
    }
  }
  return out;
}

}  // namespace depscan
