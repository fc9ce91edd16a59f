#include <fmt/format.h>

#include "analyzer/check/check.h"

namespace depscan {

std::vector<Finding> check_missing_libraries(const CheckContext& ctx) {
  std::vector<Finding> out;
  const Graph& g = ctx.graph;
  for (const Edge& edge : g.edges) {
    if (edge.to || edge.kind == EdgeKind::Dlopen) continue;  // dlopen edges: the CUDA checks
    const Object& from = g.objects[edge.from];
    std::string tried;
    for (const Attempt& a : edge.tried) tried += (tried.empty() ? "" : ", ") + a.path;
    Finding f;
    f.code = "library-not-found";
    f.severity = Severity::Error;
    f.object = edge.from;
    f.message = fmt::format("{}: cannot open shared object file: No such file or directory "
                            "(needed by {})", edge.name, from.path);
    f.fix = tried.empty() ? "install the library or add its directory to the search path"
                          : fmt::format("install {} or add its directory to LD_LIBRARY_PATH or the "
                                        "binary's RUNPATH; tried: {}", edge.name, tried);
    out.push_back(std::move(f));
  }
  for (size_t i = 0; i < g.objects.size(); ++i) {
    const Object& obj = g.objects[i];
    if (obj.binary || obj.read_error.empty()) continue;
    out.push_back(Finding{"parse-error", Severity::Error, i,
                          fmt::format("{}: {}", obj.path, obj.read_error), "", obj.path});
  }
  return out;
}

}  // namespace depscan
