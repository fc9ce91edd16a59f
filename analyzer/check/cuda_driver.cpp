#include <map>

#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"

namespace depscan {
namespace {

struct RuntimeNeed {
  const CudaLibrary* library = nullptr;  // the library that shows the CUDA version
  std::optional<Version> version;        // major.minor when a runtime file tells it
};

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

// A CUDA version the driver table has no row for (newer than the data, usually): what could not be
// checked. Null when the table has its row, or when only its major is known and the table covers it.
std::optional<Finding> no_row_for(const CheckContext& ctx, int major, const RuntimeNeed& need,
                                  const MinorCompatRow* compat, const DriverRow* full) {
  if (full || (compat && !need.version)) return std::nullopt;
  const DriverRow* newest = ctx.matrix.newest_toolkit();
  if (!need.version && newest && major <= newest->toolkit.major()) return std::nullopt;  // only its minor is unknown
  std::string unchecked =
      compat ? fmt::format("only CUDA {}'s minor-version-compatibility floor (>= {}) was checked, not the full driver "
                           "it needs",
                           major, compat->linux_driver ? compat->linux_driver->str() : "?")
             : "the driver it needs was not checked";
  return Finding{
      "matrix-no-data", Severity::Info, need.library->object,
      fmt::format("{} is CUDA {}, which depscan's driver table has no row for (it ends at CUDA {}): {}",
                  describe(ctx.graph, *need.library), cuda_text(major, need), newest ? newest->toolkit.str() : "?",
                  unchecked),
      fmt::format("check the minimum driver of CUDA {} in NVIDIA's CUDA Toolkit release notes "
                  "(https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/)",
                  cuda_text(major, need)),
      ""};
}

void judge(const CheckContext& ctx, const SourcedVersion& driver, int major, const RuntimeNeed& need,
           std::vector<Finding>& out) {
  const Graph& g = ctx.graph;
  const MinorCompatRow* compat = ctx.matrix.minor_compat(major);
  const DriverRow* full = need.version ? ctx.matrix.driver_row(*need.version) : nullptr;
  if (auto notice = no_row_for(ctx, major, need, compat, full)) append_unique(out, std::move(*notice));
  // A driver new enough for the release itself runs it whatever the major's compatibility floor:
  // CUDA 11.0's own drivers (450.36, 450.51) are older than CUDA 11's floor (450.80.02).
  bool full_is_lower = full && full->linux_driver && compat && compat->linux_driver && *full->linux_driver < *compat->linux_driver;
  const MinorCompatRow* floor_row = full_is_lower ? nullptr : compat;
  std::optional<Version> floor = floor_row ? floor_row->linux_driver : (full ? full->linux_driver : std::nullopt);
  std::string floor_source = floor_row ? floor_row->source : (full ? full->source : "");
  if (floor && driver.version < *floor) {
    append_unique(out, Finding{
        "cuda-driver-too-old", Severity::Error, need.library->object,
        fmt::format("the NVIDIA driver {} ({}) is older than CUDA {} needs (>= {}{}), required by {}: CUDA calls fail "
                    "with 'CUDA driver version is insufficient for CUDA runtime version' (source: {})",
                    driver.version.str(), driver.source, cuda_text(major, need), floor->str(),
                    floor_row ? fmt::format(", the minor-version-compatibility floor of CUDA {}", major) : "",
                    describe(g, *need.library), floor_source),
        fmt::format("install an NVIDIA driver >= {}{}, or use a build of the application for an older CUDA major; "
                    "on data-center GPUs the cuda-compat-{} package can provide a newer user-mode driver",
                    full && full->linux_driver ? full->linux_driver->str() : floor->str(),
                    full && full->linux_driver ? fmt::format(" (the full driver of CUDA {})", need.version->str()) : "",
                    major),
        ""});
    return;
  }
  if (!floor_row || !full || !full->linux_driver || !(driver.version < *full->linux_driver)) return;
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
