// driver-library-mismatch: the libcuda.so.NNN a process loads and the kernel module that runs are
// of different releases. Only a newer user-space driver from a CUDA forward-compatibility package
// (cuda-compat, .../compat/) is meant to differ, and only on data-center GPUs.
#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"

namespace depscan {
namespace {

std::string directory_of(const Object& o) { return dirname_of(o.realpath.empty() ? o.path : o.realpath); }

bool in_compat_directory(const Object& o) {
  std::string dir = directory_of(o);
  return dir.ends_with("/compat") || dir.find("/compat/") != std::string::npos;
}

Finding forward_compatibility(const Graph& g, const CudaLibrary& user, const SourcedVersion& kernel) {
  return Finding{
      "driver-library-mismatch", Severity::Info, user.object,
      fmt::format("{} is NVIDIA driver {}, newer than the kernel module's {} ({}): CUDA forward compatibility "
                  "(cuda-compat), which runs only on data-center GPUs and select RTX server SKUs; elsewhere cuInit "
                  "fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)",
                  describe(g, user), user.version->str(), kernel.version.str(), kernel.source),
      "on other GPUs, upgrade the kernel driver to a release that supports the application's CUDA instead of using "
      "cuda-compat",
      ""};
}

Finding mismatch(const Graph& g, const CudaLibrary& user, const SourcedVersion& kernel) {
  bool older = *user.version < kernel.version;
  std::string dir = directory_of(g.objects[user.object]);
  return Finding{
      "driver-library-mismatch", Severity::Error, user.object,
      fmt::format("{} is NVIDIA driver {}, but the kernel module is {} ({}): cuInit fails with "
                  "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803, \"system has unsupported display driver / cuda driver "
                  "combination\"){}",
                  describe(g, user), user.version->str(), kernel.version.str(), kernel.source,
                  older ? "; a user-space driver older than the kernel module never runs (cuda-compat packages "
                          "only go forward)"
                        : "; nvidia-smi says \"Driver/library version mismatch\", as after a driver upgrade without a reboot"),
      older ? fmt::format("take {} off the library search path (LD_LIBRARY_PATH, ld.so.conf), so that the driver's own "
                          "libcuda.so.1 ({}) is loaded",
                          dir, kernel.version.str())
            : "reboot (or reload the nvidia kernel module) so that the kernel runs the installed driver",
      ""};
}

}  // namespace

std::vector<Finding> check_driver_library_mismatch(const CheckContext& ctx, const CudaStack& stack) {
  std::vector<Finding> out;
  if (!stack.kernel_driver) return out;
  for (const CudaLibrary* user : stack.of("driver")) {
    if (user->stub || !user->version || *user->version == stack.kernel_driver->version) continue;
    bool forward = stack.kernel_driver->version < *user->version && in_compat_directory(ctx.graph.objects[user->object]);
    append_unique(out, forward ? forward_compatibility(ctx.graph, *user, *stack.kernel_driver)
                               : mismatch(ctx.graph, *user, *stack.kernel_driver));
  }
  return out;
}

}  // namespace depscan
