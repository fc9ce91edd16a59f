#include <fmt/format.h>

#include "analyzer/check/check.h"

namespace depscan {
namespace {

// Windows API sets (api-ms-win-*, ext-ms-*) are virtual names the OS loader maps itself.
bool is_api_set(const Edge& edge) {
  return edge.name.rfind("api-ms-win-", 0) == 0 || edge.name.rfind("ext-ms-", 0) == 0;
}

// What to do differs by format: ld.so searches RUNPATH and LD_LIBRARY_PATH, Windows the
// application directory and its system directories.
std::string fix_for(const Object& importer, const std::string& name, const std::string& tried) {
  if (tried.empty()) return "install the library or add its directory to the search path";
  if (importer.binary && importer.binary->format == Format::Pe)
    return fmt::format("put {} in the application directory, or scan with --root DIR where DIR/Windows/System32 "
                       "holds the system DLLs; tried: {}", name, tried);
  return fmt::format("install {} or add its directory to LD_LIBRARY_PATH or the binary's RUNPATH; tried: {}", name,
                     tried);
}

Finding missing_library(const Graph& g, const Edge& edge) {
  const Object& from = g.objects[edge.from];
  std::string tried;
  for (const Attempt& a : edge.tried) tried += (tried.empty() ? "" : ", ") + a.path;
  std::string reason = edge.how_detail.empty() ? "cannot open shared object file: No such file or directory"
                                               : edge.how_detail;
  Finding f;
  f.code = "library-not-found";
  // A delay-loaded DLL fails only when the program first calls into it.
  f.severity = edge.kind == EdgeKind::Delay ? Severity::Warning : Severity::Error;
  f.object = edge.from;
  f.message = fmt::format("{}: {} (needed by {})", edge.name, reason, from.path);
  f.fix = fix_for(from, edge.name, tried);
  return f;
}

}  // namespace

std::vector<Finding> check_missing_libraries(const CheckContext& ctx) {
  std::vector<Finding> out;
  const Graph& g = ctx.graph;
  for (const Edge& edge : g.edges) {
    if (edge.to) continue;
    // dlopen edges belong to the CUDA checks; the loader ignores a preload it cannot load
    // (the resolver reports preload-not-loaded).
    if (edge.kind == EdgeKind::Dlopen || edge.kind == EdgeKind::Preload || is_api_set(edge)) continue;
    out.push_back(missing_library(g, edge));
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
