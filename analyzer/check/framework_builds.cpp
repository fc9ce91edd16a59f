#include "analyzer/check/framework_builds.h"

#include <regex>

#include <fmt/format.h>

#include "analyzer/check/torch_build.h"

namespace depscan {
namespace {

BuildLookup torch_build_row(const CheckContext& ctx, const Distribution& d) {
  TorchBuild torch = torch_build(&d, ctx.fs);
  if (!torch.cuda.value) return {};  // a CPU, ROCm or unreadable build: no CUDA row applies
  auto [major, minor] = *torch.cuda.value;
  const FrameworkRow* row = ctx.matrix.framework_build(d.name, d.version, torch.cuda.value);
  if (!row) return {std::nullopt, fmt::format("torch {} (torch.version.cuda {}.{})", d.version, major, minor)};
  return {FrameworkBuild{fmt::format("torch {} (torch.version.cuda {}.{}: {})", d.version, major, minor, row->variant),
                         *Version::parse(row->cudnn), false, major, row->source, CudnnRefusal::PyTorch},
          ""};
}

BuildLookup tensorflow_build_row(const CheckContext& ctx, const Distribution& d) {
  const FrameworkRow* row = ctx.matrix.framework_build(d.name, d.version);
  if (!row) return {std::nullopt, fmt::format("{} {}", d.name, d.version)};
  return {FrameworkBuild{fmt::format("{} {} ({}: CUDA {})", d.name, d.version, row->variant, row->cuda),
                         *Version::parse(row->cudnn), false, Version::parse(row->cuda)->major(), row->source,
                         CudnnRefusal::TensorFlow},
          ""};
}

// jax-cuda13-pjrt -> 13: the PJRT plugin holds XLA, whose cuda_dnn.cc checks the cuDNN release.
std::optional<int> jax_pjrt_cuda_major(const std::string& normalized_name) {
  static const std::regex pattern(R"(jax-cuda(\d+)-pjrt)");
  std::smatch m;
  if (!std::regex_match(normalized_name, m, pattern)) return std::nullopt;
  return std::stoi(m[1]);
}

// The ">=" bound of a specifier list: ">=9.12.0.46" in "<10.0,>=9.12.0.46".
std::optional<Version> lower_bound_of(const std::string& specifier) {
  static const std::regex pattern(R"((?:^|,)\s*>=\s*([0-9.]+))");
  std::smatch m;
  if (!std::regex_search(specifier, m, pattern)) return std::nullopt;
  return Version::parse(m[1].str());
}

// JAX's CUDA plugin (jax-cudaNN-plugin) requires nvidia-cudnn-cuNN >= a release, and pins the PJRT
// plugin (jax-cudaNN-pjrt, `d`), which holds XLA and opens cuDNN.
BuildLookup jax_plugin_build(const Distribution& d, int cuda_major, const std::vector<Distribution>& dists) {
  std::string plugin_name = fmt::format("jax-cuda{}-plugin", cuda_major);
  std::string cudnn_name = fmt::format("nvidia-cudnn-cu{}", cuda_major);
  for (const Distribution& plugin : dists) {
    if (normalize_dist_name(plugin.name) != plugin_name) continue;
    for (const Requirement& r : plugin.requires_dist) {
      if (r.name != cudnn_name) continue;
      if (auto floor = lower_bound_of(r.specifier))
        return {FrameworkBuild{fmt::format("{} {} (with {} {})", d.name, d.version, plugin.name, plugin.version),
                               *floor, true, cuda_major,
                               fmt::format("{}'s Requires-Dist: {}{}", plugin.name, r.name, r.specifier),
                               CudnnRefusal::Jax},
                ""};
    }
  }
  return {};
}

// An old jaxlib built for CUDA says so in its local version: 0.4.25+cuda12.cudnn89 (cuDNN 8.9).
BuildLookup jaxlib_local_build(const Distribution& d) {
  static const std::regex pattern(R"(\+cuda(\d+)\.cudnn(\d)(\d)(\d*)$)");
  std::smatch m;
  if (!std::regex_search(d.version, m, pattern)) return {};
  std::vector<int> parts = {std::stoi(m[2]), std::stoi(m[3])};
  if (m[4].length() > 0) parts.push_back(std::stoi(m[4]));
  return {FrameworkBuild{fmt::format("jaxlib {}", d.version), Version{parts}, false, std::stoi(m[1]),
                         "the local version label of jaxlib " + d.version, CudnnRefusal::Jax},
          ""};
}

}  // namespace

BuildLookup framework_build_of(const CheckContext& ctx, const Distribution& d, const std::vector<Distribution>& dists) {
  std::string name = normalize_dist_name(d.name);
  if (name == "torch") return torch_build_row(ctx, d);
  if (name == "tensorflow" || name == "tensorflow-gpu") return tensorflow_build_row(ctx, d);
  if (name == "jaxlib") return jaxlib_local_build(d);
  if (auto cuda_major = jax_pjrt_cuda_major(name)) return jax_plugin_build(d, *cuda_major, dists);
  return {};
}

}  // namespace depscan
