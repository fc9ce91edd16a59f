// After a failed GPU step: whether the failure left the device's context, or the whole process,
// unable to do CUDA work, and so which later steps cannot run.
#include <fmt/format.h>

#include "loader/probe.h"

namespace depscan {

std::optional<cuda::CUresult> note_sticky_error(ProbeState& state, ProbeDevice& device, const std::string& failed_step) {
  const cuda::DriverApi& cu = state.cu;
  cuda::CUresult r = device.retain_error;  // no context: the retain's own error is all there is
  std::string source = failed_step + " left";
  if (device.context) {
    r = cu.cuCtxSetCurrent(device.context);
    if (r == cuda::kSuccess) r = cu.cuCtxSynchronize();
  } else {
    source = "cuDevicePrimaryCtxRetain in " + failed_step + " returned";
  }
  switch (cuda::sticky_scope(r)) {
    case cuda::StickyScope::Process:
      state.cuda_unusable = fmt::format(
          "not run: {} {}; cuda.h: the process must be terminated and relaunched to use CUDA again", source,
          describe_cuda_error(cu, r));
      return r;
    case cuda::StickyScope::Context:
      device.unusable = fmt::format("not run: {} {}; cuda.h: device {}'s context cannot be used anymore", source,
                                    describe_cuda_error(cu, r), device.ordinal);
      return r;
    case cuda::StickyScope::None:
      break;
  }
  return std::nullopt;
}

std::string unusable_reason(const ProbeState& state, const ProbeDevice& device) {
  return state.cuda_unusable.empty() ? device.unusable : state.cuda_unusable;
}

}  // namespace depscan
