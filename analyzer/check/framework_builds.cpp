#include "analyzer/check/framework_builds.h"

#include <fmt/format.h>

#include "analyzer/check/torch_build.h"
#include "analyzer/check/wheel_policy.h"
#include "analyzer/util/strings.h"

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

// A small number written out in full ("13", "91"), or nullopt. Names and versions come from
// METADATA files of up to 16 MiB, so nothing here may recurse per character (std::regex does).
std::optional<int> small_number(std::string_view text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// jax-cuda13-pjrt -> 13: the PJRT plugin holds XLA, whose cuda_dnn.cc checks the cuDNN release.
std::optional<int> jax_pjrt_cuda_major(std::string_view normalized_name) {
  constexpr std::string_view kPrefix = "jax-cuda", kSuffix = "-pjrt";
  if (!normalized_name.starts_with(kPrefix) || !normalized_name.ends_with(kSuffix)) return std::nullopt;
  return small_number(normalized_name.substr(kPrefix.size(), normalized_name.size() - kPrefix.size() - kSuffix.size()));
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
      if (auto floor = specifier_floor(r.specifier))
        return {FrameworkBuild{fmt::format("{} {} (with {} {})", d.name, d.version, plugin.name, plugin.version),
                               *floor, true, cuda_major,
                               fmt::format("{}'s Requires-Dist: {}{}", plugin.name, r.name, r.specifier),
                               CudnnRefusal::Jax},
                ""};
    }
  }
  return {};
}

// An old jaxlib built for CUDA says so in its local version: 0.4.25+cuda12.cudnn89 (cuDNN 8.9),
// 0.4.7+cuda11.cudnn805 (8.0.5).
BuildLookup jaxlib_local_build(const Distribution& d) {
  std::string_view version = d.version;
  size_t plus = version.find('+');
  if (plus == std::string_view::npos) return {};
  std::string_view local = version.substr(plus + 1);
  size_t dot = local.find('.');
  if (dot == std::string_view::npos || !local.starts_with("cuda") || !local.substr(dot + 1).starts_with("cudnn")) return {};
  std::optional<int> cuda = small_number(local.substr(4, dot - 4));
  std::string_view digits = local.substr(dot + 1 + 5);
  if (!cuda || digits.size() < 2 || !small_number(digits)) return {};
  std::vector<int> parts = {digits[0] - '0', digits[1] - '0'};
  if (digits.size() > 2) parts.push_back(*small_number(digits.substr(2)));
  return {FrameworkBuild{fmt::format("jaxlib {}", d.version), Version{parts}, false, *cuda,
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
