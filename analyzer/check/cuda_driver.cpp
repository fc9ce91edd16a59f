#include <map>

#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"

namespace depscan {
namespace {

struct RuntimeNeed {
  const CudaLibrary* library = nullptr;  // the library that shows the CUDA version
  std::optional<Version> version;        // major.minor when a runtime file tells it
};

// Components whose file version is the CUDA version itself (not a library version like cuBLAS 12.6.4).
bool carries_cuda_version(const CudaLibrary& lib) {
  return lib.component == "cudart" || lib.component == "nvrtc" || lib.component == "nvrtc-builtins";
}

// CUDA major -> the newest CUDA version the process's libraries show for it.
std::map<int, RuntimeNeed> runtime_needs(const std::vector<const CudaLibrary*>& libs) {
  std::map<int, RuntimeNeed> needs;
  for (const CudaLibrary* lib : libs) {
    if (lib->component == "driver" || lib->component == "cudnn" || lib->cuda_majors.size() != 1) continue;
    RuntimeNeed& need = needs[lib->cuda_majors.front()];
    if (!need.library) need.library = lib;
    if (!carries_cuda_version(*lib) || !lib->version || lib->version->parts.size() < 2 ||
        lib->version->major() != lib->cuda_majors.front())
      continue;
    Version v{{lib->version->major(), lib->version->minor()}};
    if (!need.version || *need.version < v) {
      need.version = v;
      need.library = lib;
    }
  }
  return needs;
}

std::string cuda_text(int major, const RuntimeNeed& need) {
  return need.version ? need.version->str() : std::to_string(major);
}

void judge(const CheckContext& ctx, const SourcedVersion& driver, int major, const RuntimeNeed& need,
           std::vector<Finding>& out) {
  const Graph& g = ctx.graph;
  const MinorCompatRow* compat = ctx.matrix.minor_compat(major);
  const DriverRow* full = need.version ? ctx.matrix.driver_row(*need.version) : nullptr;
  std::optional<Version> floor = compat ? compat->linux_driver : (full ? full->linux_driver : std::nullopt);
  std::string floor_source = compat ? compat->source : (full ? full->source : "");
  if (floor && driver.version < *floor) {
    append_unique(out, Finding{
        "cuda-driver-too-old", Severity::Error, need.library->object,
        fmt::format("the NVIDIA driver {} ({}) is older than CUDA {} needs (>= {}{}), required by {}: CUDA calls fail "
                    "with 'CUDA driver version is insufficient for CUDA runtime version' (source: {})",
                    driver.version.str(), driver.source, cuda_text(major, need), floor->str(),
                    compat ? fmt::format(", the minor-version-compatibility floor of CUDA {}", major) : "",
                    describe(g, *need.library), floor_source),
        fmt::format("install an NVIDIA driver >= {}{}, or use a build of the application for an older CUDA major; "
                    "on data-center GPUs the cuda-compat-{} package can provide a newer user-mode driver",
                    full && full->linux_driver ? full->linux_driver->str() : floor->str(),
                    full && full->linux_driver ? fmt::format(" (the full driver of CUDA {})", need.version->str()) : "",
                    major),
        ""});
    return;
  }
  if (!compat || !full || !full->linux_driver || !(driver.version < *full->linux_driver)) return;
  append_unique(out, Finding{
      "cuda-driver-too-old", Severity::Warning, need.library->object,
      fmt::format("the NVIDIA driver {} ({}) runs CUDA {} ({}) only through minor-version compatibility: CUDA "
                  "{} needs {}; JIT of newer PTX (cudaErrorUnsupportedPtxVersion), cuLink* and APIs added after "
                  "the driver's CUDA version (cudaErrorCallRequiresNewerDriver) fail (source: {})",
                  driver.version.str(), driver.source, need.version->str(), describe(g, *need.library), full->release, full->linux_driver->str(), full->source),
      fmt::format("upgrade the driver to >= {} for full CUDA {} support, or ship SASS (cubins) for your GPUs instead of "
                  "relying on PTX JIT", full->linux_driver->str(), need.version->str()),
      ""});
}

}  // namespace

std::vector<Finding> check_cuda_driver(const CheckContext& ctx, const CudaStack& stack) {
  std::vector<Finding> out;
  if (!stack.driver || stack.driver->version.major() < 100) return out;  // unknown, or not a driver version
  // One verdict per CUDA major, for the newest version any process of the scan shows.
  std::vector<const CudaLibrary*> all;
  for (size_t root = 0; root < ctx.graph.roots.size(); ++root)
    for (const CudaLibrary* lib : libraries_in_root(ctx.graph, stack, root)) all.push_back(lib);
  for (const auto& [major, need] : runtime_needs(all)) judge(ctx, *stack.driver, major, need, out);
  return out;
}

}  // namespace depscan
