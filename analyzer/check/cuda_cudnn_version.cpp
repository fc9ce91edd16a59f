#include <map>
#include <set>

#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"

namespace depscan {
namespace {

std::string where_of(const Graph& g, const CudaLibrary& lib) {
  const Object& o = g.objects[lib.object];
  return dirname_of(o.realpath.empty() ? o.path : o.realpath);
}

// Sub-libraries of one series from different releases (E13 SUBLIBRARY_VERSION_MISMATCH, E5b).
void different_releases(const Graph& g, const std::vector<const CudaLibrary*>& cudnn, std::vector<Finding>& out) {
  for (const CudaLibrary* a : cudnn)
    for (const CudaLibrary* b : cudnn) {
      if (a->object >= b->object || a->cudnn_major != b->cudnn_major || !a->version || !b->version) continue;
      Version va{{a->version->major(), a->version->minor(), a->version->patch()}};
      Version vb{{b->version->major(), b->version->minor(), b->version->patch()}};
      if (va == vb) continue;
      append_unique(out, Finding{
          "cudnn-version-mismatch", Severity::Error, b->object,
          fmt::format("cuDNN libraries of different releases are loaded together: {} is {} ({}) but {} is {} ({}); "
                      "cuDNN fails with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH or undefined versioned symbols",
                      describe(g, *a), va.str(), a->version_source, describe(g, *b), vb.str(), b->version_source),
          "use one cuDNN release: remove the other copy from the search path (LD_LIBRARY_PATH, ld.so.cache, RPATH) "
          "or reinstall cuDNN so every libcudnn*.so comes from the same release",
          ""});
    }
}

// One series loaded from two directories (a shim from one install, sub-libraries from another).
void two_places(const Graph& g, const std::vector<const CudaLibrary*>& cudnn, std::vector<Finding>& out) {
  std::map<int, std::map<std::string, const CudaLibrary*>> dirs;
  for (const CudaLibrary* lib : cudnn) dirs[lib->cudnn_major].emplace(where_of(g, *lib), lib);
  for (const auto& [major, places] : dirs) {
    if (places.size() < 2) continue;
    auto first = places.begin(), second = std::next(places.begin());
    append_unique(out, Finding{
        "cudnn-version-mismatch", Severity::Warning, second->second->object,
        fmt::format("cuDNN {} libraries come from two places in one process: {} from {} and {} from {}", major,
                    first->second->name, first->first, second->second->name, second->first),
        fmt::format("keep a single cuDNN {} install on the search path; if the two are different releases, cuDNN "
                    "refuses to run (sub-library version mismatch)", major),
        ""});
  }
}

// cuDNN 8 and 9 in one process.
void two_majors(const Graph& g, const std::vector<const CudaLibrary*>& cudnn, std::vector<Finding>& out) {
  std::map<int, const CudaLibrary*> majors;
  for (const CudaLibrary* lib : cudnn) majors.emplace(lib->cudnn_major, lib);
  if (majors.size() < 2) return;
  const CudaLibrary* a = majors.begin()->second;
  const CudaLibrary* b = std::next(majors.begin())->second;
  append_unique(out, Finding{
      "cudnn-version-mismatch", Severity::Error, b->object,
      fmt::format("cuDNN {} and cuDNN {} are loaded into one process: {} and {}; the API is not compatible across "
                  "major versions", a->cudnn_major, b->cudnn_major, describe(g, *a), describe(g, *b)),
      "build or install every component against the same cuDNN major (for example the framework's matching "
      "onnxruntime-gpu or torch build)",
      ""});
}

// The application asks for a cuDNN major that is not there, while another major is.
void wanted_major_absent(const CheckContext& ctx, const CudaStack& stack, std::vector<Finding>& out) {
  const Graph& g = ctx.graph;
  for (const Edge& e : g.edges) {
    if (e.to) continue;
    const CudnnSeries* wanted = ctx.matrix.cudnn_series_of(e.name);
    if (!wanted) continue;
    for (const CudaLibrary* have : stack.of("cudnn")) {
      if (have->cudnn_major == wanted->major) continue;
      append_unique(out, Finding{
          "cudnn-version-mismatch", Severity::Error, e.from,
          fmt::format("{} needs cuDNN {} ({}), but only cuDNN {} is installed: {}{}", g.objects[e.from].path,
                      wanted->major, e.name, have->cudnn_major, describe(g, *have),
                      have->version ? " version " + have->version->str() : ""),
          fmt::format("install cuDNN {} (for pip: nvidia-cudnn-cuXX=={}.*), or use a build of the application made "
                      "for cuDNN {}", wanted->major, wanted->major, have->cudnn_major),
          ""});
      break;
    }
  }
}

// Two files with the same cuDNN or cudart SONAME reachable from the scanned roots.
void two_copies(const Graph& g, const CudaStack& stack, std::vector<Finding>& out) {
  std::map<std::string, std::vector<const CudaLibrary*>> by_name;
  for (const CudaLibrary& lib : stack.libraries)
    if (lib.component == "cudnn" || lib.component == "cudart") by_name[lib.name].push_back(&lib);
  for (const auto& [name, copies] : by_name) {
    std::set<std::string> paths;
    for (const CudaLibrary* lib : copies) paths.insert(g.objects[lib->object].realpath);
    if (paths.size() < 2) continue;
    append_unique(out, Finding{
        "cudnn-version-mismatch", Severity::Warning, copies[1]->object,
        fmt::format("two copies of {} are reachable: {} and {}; which one a process loads depends on the search "
                    "order, and the other one's users may get the wrong version",
                    name, *paths.begin(), *std::next(paths.begin())),
        "remove the copy that should not be used, or make sure each application's RPATH/RUNPATH or "
        "LD_LIBRARY_PATH finds the intended one first",
        ""});
  }
}

}  // namespace

std::vector<Finding> check_cudnn_version_mismatch(const CheckContext& ctx, const CudaStack& stack) {
  std::vector<Finding> out;
  for (size_t root = 0; root < ctx.graph.roots.size(); ++root) {
    std::vector<const CudaLibrary*> cudnn;
    for (const CudaLibrary* lib : libraries_in_root(ctx.graph, stack, root))
      if (lib->component == "cudnn") cudnn.push_back(lib);
    different_releases(ctx.graph, cudnn, out);
    two_places(ctx.graph, cudnn, out);
    two_majors(ctx.graph, cudnn, out);
  }
  wanted_major_absent(ctx, stack, out);
  two_copies(ctx.graph, stack, out);
  return out;
}

}  // namespace depscan
