#include "analyzer/scan/cuda_audit.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace depscan {
namespace {

std::optional<std::string> trivial_program(const FileSystem& fs) {
  // The dynamic loader last: a distroless image has it and libc, but no shell or coreutils.
  for (const char* path : {"/usr/bin/true", "/bin/true", "/bin/sh", "/usr/bin/env", "/lib64/ld-linux-x86-64.so.2"})
    if (fs.is_regular(path)) return std::string(path);
  return std::nullopt;
}

// The names to try, newest CUDA major first within each component; one list per component.
std::vector<std::vector<std::string>> candidate_groups(const Matrix& matrix) {
  std::vector<std::vector<std::string>> groups = {{"libcuda.so.1"}};
  for (const ComponentRow& c : matrix.components()) {
    if (c.component == "driver" || c.component == "nvrtc-builtins" || c.sonames.empty()) continue;
    std::vector<ComponentSoname> sonames = c.sonames;
    std::stable_sort(sonames.begin(), sonames.end(), [](const ComponentSoname& a, const ComponentSoname& b) {
      int ma = a.cuda_majors.empty() ? 0 : a.cuda_majors.back(), mb = b.cuda_majors.empty() ? 0 : b.cuda_majors.back();
      return ma > mb;
    });
    std::vector<std::string> names;
    for (const ComponentSoname& s : sonames) names.push_back(s.name);
    groups.push_back(std::move(names));
  }
  std::vector<const CudnnSeries*> series;
  for (const CudnnSeries& s : matrix.cudnn_series()) series.push_back(&s);
  std::sort(series.begin(), series.end(), [](const CudnnSeries* a, const CudnnSeries* b) { return a->major > b->major; });
  std::vector<std::string> shims;
  for (const CudnnSeries* s : series) shims.push_back(s->shim);
  groups.push_back(std::move(shims));
  return groups;
}

bool found(const std::vector<Attempt>& steps) { return !steps.empty() && steps.back().outcome.starts_with("found"); }

}  // namespace

std::optional<size_t> add_cuda_audit_root(Resolver& resolver, const Matrix& matrix, const FileSystem& fs) {
  auto program = trivial_program(fs);
  if (!program) return std::nullopt;
  size_t root = resolver.add_root(*program);
  size_t main = resolver.graph().roots[root];
  for (const std::vector<std::string>& group : candidate_groups(matrix)) {
    for (const std::string& name : group) {
      bool is_driver = name == "libcuda.so.1";
      if (!is_driver && !found(resolver.explain(root, main, name))) continue;
      resolver.add_dlopen(root, main, name, false,
                          fmt::format("audit: a program that loads {} by name, as CUDA applications do", name));
      break;  // the newest one found stands for the component
    }
  }
  return root;
}

}  // namespace depscan
