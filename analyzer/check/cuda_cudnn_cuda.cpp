#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"

namespace depscan {
namespace {

// The CUDA major the process's own CUDA libraries agree on (cudart first), if any.
const CudaLibrary* cuda_anchor(const std::vector<const CudaLibrary*>& libs) {
  const CudaLibrary* found = nullptr;
  for (const CudaLibrary* lib : libs) {
    if (lib->component == "cudnn" || lib->component == "driver" || lib->cuda_majors.size() != 1) continue;
    if (lib->component == "cudart") return lib;
    if (!found) found = lib;
  }
  return found;
}

// The library that shows the process's CUDA version (major.minor) best: the newest runtime or NVRTC
// file of that major. Other libraries carry versions of their own (cuFFT 11.3 in CUDA 12.6).
const CudaLibrary* cuda_version_source(const std::vector<const CudaLibrary*>& libs, int major) {
  const CudaLibrary* found = nullptr;
  for (const CudaLibrary* lib : libs)
    if (carries_cuda_version(*lib) && lib->version && lib->version->parts.size() >= 2 && lib->version->major() == major &&
        (!found || *found->version < *lib->version))
      found = lib;
  return found;
}

std::string majors_text(const std::vector<int>& majors) {
  std::string out;
  for (int m : majors) out += (out.empty() ? "" : " or ") + std::to_string(m);
  return out;
}

// A cuDNN release the support-matrix data has no row for: newer than the data, or one of the
// releases whose support matrix was not read. The check below cannot be made; say so.
Finding no_row_for(const CheckContext& ctx, const CudaLibrary& cudnn) {
  const Object& file = ctx.graph.objects[cudnn.object];
  std::optional<Version> newest = ctx.matrix.newest_cudnn_release();
  bool newer = newest && *newest < *cudnn.version;
  std::string where = newer ? fmt::format("newer than depscan's cuDNN support-matrix data, which ends at {}", newest->str())
                            : "one of the releases depscan's cuDNN support-matrix data has no row for";
  return Finding{
      "matrix-no-data", Severity::Info, cudnn.object,
      fmt::format("the cuDNN in {} is {} ({}), {}: which CUDA versions its builds support was not checked",
                  dirname_of(file.realpath.empty() ? file.path : file.realpath), cudnn.version->str(),
                  cudnn.version_source, where),
      fmt::format("check NVIDIA's support matrix for cuDNN {} (https://docs.nvidia.com/deeplearning/cudnn/); "
                  "`depscan matrix cudnn {}` lists the releases the data has",
                  cudnn.version->str(), cudnn.version->major()),
      ""};
}

std::string ranges_text(const std::vector<const CudnnBuild*>& builds) {
  std::string ranges;
  for (const CudnnBuild* b : builds)
    ranges += (ranges.empty() ? "" : ", ") + b->cuda_min.str() + (b->cuda_max == b->cuda_min ? "" : "-" + b->cuda_max.str());
  return ranges;
}

Version major_minor(const Version& v) { return Version{{v.major(), v.minor()}}; }

// The release's builds for CUDA `major`.
std::vector<const CudnnBuild*> builds_for_major(const CudnnRelease& release, int major) {
  std::vector<const CudnnBuild*> builds;
  for (const CudnnBuild& b : release.builds)
    if (b.cuda_min.major() <= major && major <= b.cuda_max.major()) builds.push_back(&b);
  return builds;
}

// A cuDNN release whose support matrix has no build for the process's CUDA version, which `cuda`
// shows. A runtime newer than every build of its major is only untested (CUDA's minor-version
// compatibility covers it); one older than them, or a major the release has no build for, is not.
void no_build_for(const CheckContext& ctx, const CudaLibrary& cudnn, const CudaLibrary* cuda, std::vector<Finding>& out) {
  if (!cudnn.version || !cuda) return;
  std::vector<const CudnnRelease*> releases = ctx.matrix.cudnn_releases_matching(*cudnn.version);
  if (releases.empty()) return append_unique(out, no_row_for(ctx, cudnn));
  Version wanted = major_minor(*cuda->version);
  for (const CudnnRelease* release : releases) {
    std::vector<const CudnnBuild*> builds = builds_for_major(*release, wanted.major());
    bool covered = std::any_of(builds.begin(), builds.end(), [&](const CudnnBuild* b) {
      return !(wanted < major_minor(b->cuda_min)) && !(major_minor(b->cuda_max) < wanted);
    });
    if (covered) return;
    std::vector<const CudnnBuild*> all;
    for (const CudnnBuild& b : release->builds) all.push_back(&b);
    bool built_for_major = std::find(cudnn.cuda_majors.begin(), cudnn.cuda_majors.end(), wanted.major()) != cudnn.cuda_majors.end();
    if (builds.empty() && built_for_major)
      return append_unique(out, Finding{
          "matrix-no-data", Severity::Info, cudnn.object,
          fmt::format("cuDNN {} was built for CUDA {} ({}), and depscan's support-matrix row for it lists builds for "
                      "CUDA {} only: whether it supports CUDA {} ({} is {}) was not checked",
                      cudnn.version->str(), wanted.major(), cudnn.cuda_source, ranges_text(all), wanted.str(), cuda->name,
                      cuda->version->str()),
          fmt::format("check NVIDIA's support matrix for cuDNN {} (https://docs.nvidia.com/deeplearning/cudnn/)",
                      cudnn.version->str()),
          ""});
    bool newer = !builds.empty() && std::all_of(builds.begin(), builds.end(), [&](const CudnnBuild* b) {
      return major_minor(b->cuda_max) < wanted;
    });
    if (newer)
      return append_unique(out, Finding{
          "cudnn-cuda-mismatch", Severity::Info, cudnn.object,
          fmt::format("cuDNN {}'s support matrix lists its CUDA {} build for CUDA {}, and {} is {}, newer: NVIDIA has "
                      "not tested the pair, which CUDA's minor-version compatibility normally lets run (source: {})",
                      cudnn.version->str(), wanted.major(), ranges_text(builds), cuda->name, cuda->version->str(),
                      release->source),
          "if cuDNN misbehaves with this runtime, use a cuDNN release whose support matrix lists CUDA " + wanted.str() +
              " (depscan matrix cudnn " + std::to_string(cudnn.version->major()) + ")",
          ""});
    return append_unique(out, Finding{
        "cudnn-cuda-mismatch", Severity::Warning, cudnn.object,
        fmt::format("cuDNN {} has no build for CUDA {} ({} is {}); its builds are for CUDA {} (source: {})",
                    cudnn.version->str(), wanted.str(), cuda->name, cuda->version->str(), ranges_text(all), release->source),
        "use a cuDNN release whose support matrix lists this CUDA version (depscan matrix cudnn " +
            cudnn.version->str() + ")",
        ""});
  }
}

}  // namespace

std::vector<Finding> check_cudnn_cuda_mismatch(const CheckContext& ctx, const CudaStack& stack) {
  std::vector<Finding> out;
  const Graph& g = ctx.graph;
  for (size_t root = 0; root < g.roots.size(); ++root) {
    std::vector<const CudaLibrary*> libs = libraries_in_root(g, stack, root);
    std::stable_partition(libs.begin(), libs.end(), [](const CudaLibrary* lib) {
      return !lib->cuda_source.starts_with("same cuDNN install");  // report the library with direct evidence
    });
    const CudaLibrary* cuda = cuda_anchor(libs);
    if (!cuda) continue;
    int major = cuda->cuda_majors.front();
    std::set<std::string> reported_installs;  // one finding per cuDNN directory
    for (const CudaLibrary* lib : libs) {
      if (lib->component != "cudnn") continue;
      if (!reported_installs.insert(dirname_of(g.objects[lib->object].realpath)).second) continue;
      if (!lib->cuda_majors.empty() &&
          std::find(lib->cuda_majors.begin(), lib->cuda_majors.end(), major) == lib->cuda_majors.end()) {
        append_unique(out, Finding{
            "cudnn-cuda-mismatch", Severity::Error, lib->object,
            fmt::format("{} was built for CUDA {} ({}), but this process uses CUDA {} ({}); cuDNN will fail to "
                        "load its CUDA libraries (e.g. 'Invalid handle. Cannot load symbol cublasLtGetVersion')",
                        describe(g, *lib), majors_text(lib->cuda_majors), lib->cuda_source, major, describe(g, *cuda)),
            fmt::format("install the cuDNN build for CUDA {} (pip: nvidia-cudnn-cu{}; conda/apt: the cuda{} "
                        "variant), or use CUDA {} libraries throughout",
                        major, major, major, majors_text(lib->cuda_majors)),
            ""});
        continue;
      }
      no_build_for(ctx, *lib, cuda_version_source(libs, major), out);
    }
  }
  return out;
}

}  // namespace depscan
