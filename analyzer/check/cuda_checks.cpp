#include "analyzer/check/cuda_checks.h"

#include <algorithm>

#include <fmt/format.h>

namespace depscan {

std::vector<const CudaLibrary*> libraries_in_root(const Graph& graph, const CudaStack& stack, size_t root) {
  std::vector<const CudaLibrary*> out;
  if (root >= graph.load_order.size()) return out;
  for (size_t object : graph.load_order[root])
    if (const CudaLibrary* lib = stack.for_object(object)) out.push_back(lib);
  return out;
}

bool carries_cuda_version(const CudaLibrary& lib) {
  return lib.component == "cudart" || lib.component == "nvrtc" || lib.component == "nvrtc-builtins";
}

std::string describe(const Graph& graph, const CudaLibrary& lib) {
  const Object& o = graph.objects[lib.object];
  return fmt::format("{} ({})", lib.name, o.realpath.empty() ? o.path : o.realpath);
}

void append_unique(std::vector<Finding>& out, Finding finding) {
  for (const Finding& f : out)
    if (f.code == finding.code && f.message == finding.message) return;
  out.push_back(std::move(finding));
}

std::vector<Finding> check_cuda_stack(const CheckContext& ctx, const CudaStack& stack) {
  std::vector<Finding> out;
  for (auto check : {check_cudnn_version_mismatch, check_cudnn_cuda_mismatch, check_cuda_driver,
                     check_driver_library_mismatch, check_stub_driver, check_dlopen_libraries, check_cuda_major_mismatch})
    for (Finding& f : check(ctx, stack)) out.push_back(std::move(f));
  return out;
}

}  // namespace depscan
