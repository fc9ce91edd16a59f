#include <set>

#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"

namespace depscan {

std::vector<Finding> check_stub_driver(const CheckContext& ctx, const CudaStack& stack) {
  std::vector<Finding> out;
  const Graph& g = ctx.graph;
  std::set<size_t> stubs;
  for (const CudaLibrary* lib : stack.of("driver"))
    if (lib->stub) stubs.insert(lib->object);
  std::set<size_t> reported;
  for (const Edge& e : g.edges) {
    if (!e.to || !stubs.contains(*e.to) || !reported.insert(*e.to).second) continue;
    const Object& stub = g.objects[*e.to];
    append_unique(out, Finding{
        "stub-driver", Severity::Error, *e.to,
        fmt::format("{} resolves to the CUDA toolkit's stub driver {} (via {}, requested by {}): every CUDA call "
                    "fails with 'CUDA driver is a stub library' (cudaErrorStubLibrary, 34)",
                    e.name, stub.realpath.empty() ? stub.path : stub.realpath,
                    e.how_detail.empty() ? to_string(e.how) : e.how_detail, g.objects[e.from].path),
        fmt::format("remove {} from LD_LIBRARY_PATH, ld.so.conf and RPATH/RUNPATH (the stub is only for linking) and "
                    "install the NVIDIA driver, whose libcuda.so.1 must be found instead",
                    dirname_of(stub.realpath.empty() ? stub.path : stub.realpath)),
        ""});
  }
  return out;
}

}  // namespace depscan
