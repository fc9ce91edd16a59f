#include "analyzer/check/framework_cudnn.h"

#include <map>
#include <optional>

#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"
#include "analyzer/check/torch_build.h"
#include "matrix/matrix.h"

namespace depscan {
namespace {

// What the framework table says a framework distribution was built with.
struct FrameworkBuild {
  std::string label;  // "torch 2.9.1 (torch.version.cuda 12.8)"
  Version cudnn;      // 9.10.2.21
  int cuda_major = 0;
  std::string source;
  bool torch = false;
};

// A distribution's build, or the name of a CUDA build of a framework the table has no row for.
struct BuildLookup {
  std::optional<FrameworkBuild> build;
  std::string unknown;  // "torch 2.15.0 (torch.version.cuda 13.0)"
};

BuildLookup torch_build_row(const CheckContext& ctx, const Distribution& d) {
  TorchBuild torch = torch_build(&d, ctx.fs);
  if (!torch.cuda.value) return {};  // a CPU, ROCm or unreadable build: no CUDA row applies
  auto [major, minor] = *torch.cuda.value;
  const FrameworkRow* row = ctx.matrix.framework_build(d.name, d.version, torch.cuda.value);
  if (!row) return {std::nullopt, fmt::format("torch {} (torch.version.cuda {}.{})", d.version, major, minor)};
  return {FrameworkBuild{fmt::format("torch {} (torch.version.cuda {}.{}: {})", d.version, major, minor, row->variant),
                         *Version::parse(row->cudnn), major, row->source, true},
          ""};
}

BuildLookup tensorflow_build_row(const CheckContext& ctx, const Distribution& d) {
  const FrameworkRow* row = ctx.matrix.framework_build(d.name, d.version);
  if (!row) return {std::nullopt, fmt::format("{} {}", d.name, d.version)};
  return {FrameworkBuild{fmt::format("{} {} ({}: CUDA {})", d.name, d.version, row->variant, row->cuda),
                         *Version::parse(row->cudnn), Version::parse(row->cuda)->major(), row->source, false},
          ""};
}

BuildLookup build_of(const CheckContext& ctx, const Distribution& d) {
  std::string name = normalize_dist_name(d.name);
  if (name == "torch") return torch_build_row(ctx, d);
  if (name == "tensorflow" || name == "tensorflow-gpu") return tensorflow_build_row(ctx, d);
  return {};
}

std::string path_of(const Object& o) { return o.realpath.empty() ? o.path : o.realpath; }
std::string triple(const Version& v) { return fmt::format("({}, {}, {})", v.major(), v.minor(), v.patch()); }
std::string dotted(const Version& v) { return fmt::format("{}.{}.{}", v.major(), v.minor(), v.patch()); }

Finding too_old(const Graph& g, const FrameworkBuild& build, const CudaLibrary& cudnn) {
  const Version& runtime = *cudnn.version;
  std::string refusal =
      build.torch ? fmt::format("PyTorch raises \"cuDNN version incompatibility: PyTorch was compiled against {} but "
                                "found runtime version {}\" when it first uses cuDNN", triple(build.cudnn), triple(runtime))
                  : fmt::format("TensorFlow logs \"Loaded runtime CuDNN library: {} but source was compiled with: {}.  "
                                "CuDNN library needs to have matching major version and equal or higher minor version\" "
                                "and cannot use the GPU", dotted(runtime), dotted(build.cudnn));
  return Finding{
      "cudnn-version-mismatch", Severity::Error, cudnn.object,
      fmt::format("{} was built with cuDNN {} (source: {}), and this process loads cuDNN {} from {} ({}), which is "
                  "older: {}",
                  build.label, build.cudnn.str(), build.source, runtime.str(), path_of(g.objects[cudnn.object]),
                  cudnn.version_source, refusal),
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
      if (fresh) it->second = build_of(ctx, *owner->second);
      const std::optional<FrameworkBuild>& build = it->second.build;
      if (!it->second.unknown.empty()) append_unique(out, no_row(g, it->second.unknown, *cudnn, object));
      if (!build || build->cudnn.major() != runtime.major() || runtime.minor() >= build->cudnn.minor()) continue;
      append_unique(out, too_old(g, *build, *cudnn));
    }
  }
  return out;
}

}  // namespace depscan
