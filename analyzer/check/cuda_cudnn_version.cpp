#include <map>
#include <optional>
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
  std::map<int, std::map<Version, std::vector<const CudaLibrary*>>> releases;  // major -> release -> libraries
  for (const CudaLibrary* lib : cudnn)
    if (lib->version)
      releases[lib->cudnn_major][Version{{lib->version->major(), lib->version->minor(), lib->version->patch()}}]
          .push_back(lib);
  for (const auto& [major, by_release] : releases) {
    if (by_release.size() < 2) continue;
    std::string listing;
    const CudaLibrary* last = nullptr;
    for (const auto& [release, libs] : by_release) {
      std::string names;
      for (const CudaLibrary* lib : libs) names += (names.empty() ? "" : ", ") + describe(g, *lib);
      listing += fmt::format("{}{} from {} ({})", listing.empty() ? "" : "; ", release.str(), names,
                             libs.front()->version_source);
      last = libs.front();
    }
    append_unique(out, Finding{
        "cudnn-version-mismatch", Severity::Error, last->object,
        fmt::format("cuDNN {} libraries of different releases are loaded together: {}; cuDNN fails with "
                    "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH or undefined versioned symbols", major, listing),
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

// "libcudnn_ops.so.9" -> "libcudnn_ops.so.": what every major of that library starts with.
std::string stem_of(const std::string& name) {
  size_t at = name.find(".so.");
  return at == std::string::npos ? name + "." : name.substr(0, at + 4);
}

// Another major of the wanted library in the directories the search went through, or in the graph.
std::optional<std::string> other_major_near(const CheckContext& ctx, const CudaStack& stack, const Edge& e, int major) {
  std::string stem = stem_of(e.name);
  std::set<std::string> dirs;
  for (const Attempt& a : e.tried)
    if (a.path.starts_with("/")) dirs.insert(dirname_of(a.path));
  for (const std::string& dir : dirs)
    for (const std::string& file : ctx.fs.list(dir)) {
      auto v = version_from_file_name(file);
      if (file.starts_with(stem) && v && v->major() != major) return join_path(dir, file);
    }
  for (const CudaLibrary* have : stack.of("cudnn"))
    if (have->cudnn_major != major) return describe(ctx.graph, *have);
  return std::nullopt;
}

// The application asks for a cuDNN major that is not there, while another major is (E1, E18).
void wanted_major_absent(const CheckContext& ctx, const CudaStack& stack, std::vector<Finding>& out) {
  const Graph& g = ctx.graph;
  for (const Edge& e : g.edges) {
    if (e.to) continue;
    const CudnnSeries* wanted = ctx.matrix.cudnn_series_of(e.name);
    if (!wanted) continue;
    auto other = other_major_near(ctx, stack, e, wanted->major);
    if (!other) continue;
    append_unique(out, Finding{
        "cudnn-version-mismatch", Severity::Error, e.from,
        fmt::format("{} needs cuDNN {} ({}), but the cuDNN on its search path is another major: {}; cuDNN's API is "
                    "not compatible across majors", g.objects[e.from].path, wanted->major, e.name, *other),
        fmt::format("install cuDNN {} next to it (pip: nvidia-cudnn-cu12=={}.* or the matching CUDA variant), or use a "
                    "build of the application made for the cuDNN that is installed",
                    wanted->major, wanted->major),
        ""});
  }
}

// Two files with the same cuDNN or cudart SONAME reachable from the scanned roots.
void two_copies(const Graph& g, const CudaStack& stack, std::vector<Finding>& out) {
  std::map<std::string, std::vector<const CudaLibrary*>> by_name;
  for (const CudaLibrary& lib : stack.libraries)
    if (lib.component == "cudnn" || lib.component == "cudart") by_name[lib.name].push_back(&lib);
  for (const auto& [name, copies] : by_name) {
    std::map<std::string, std::string> paths;  // real path -> " (9.19.0)" when the version is known
    for (const CudaLibrary* lib : copies) {
      std::string& version = paths[g.objects[lib->object].realpath];
      if (version.empty() && lib->version) version = " (" + lib->version->str() + ")";
    }
    if (paths.size() < 2) continue;
    auto first = paths.begin(), second = std::next(first);
    append_unique(out, Finding{
        "cudnn-version-mismatch", Severity::Warning, copies[1]->object,
        fmt::format("two copies of {} are reachable: {}{} and {}{}; which one a process loads depends on the search "
                    "order, and the other one's users may get the wrong version",
                    name, first->first, first->second, second->first, second->second),
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
