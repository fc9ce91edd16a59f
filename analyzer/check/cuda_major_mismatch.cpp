#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "analyzer/check/cuda_checks.h"

namespace depscan {
namespace {

bool disjoint(const std::vector<int>& a, const std::vector<int>& b) {
  return std::none_of(a.begin(), a.end(), [&](int m) { return std::find(b.begin(), b.end(), m) != b.end(); });
}

std::string majors_text(const std::vector<int>& majors) {
  std::string out;
  for (int m : majors) out += (out.empty() ? "" : "/") + std::to_string(m);
  return out;
}

// The first pair of libraries whose CUDA majors cannot both hold.
std::optional<std::pair<const CudaLibrary*, const CudaLibrary*>> first_conflict(const std::vector<const CudaLibrary*>& libs) {
  for (size_t i = 0; i < libs.size(); ++i)
    for (size_t j = i + 1; j < libs.size(); ++j)
      if (disjoint(libs[i]->cuda_majors, libs[j]->cuda_majors)) return std::make_pair(libs[i], libs[j]);
  return std::nullopt;
}

}  // namespace

std::vector<Finding> check_cuda_major_mismatch(const CheckContext& ctx, const CudaStack& stack) {
  std::vector<Finding> out;
  const Graph& g = ctx.graph;
  for (size_t root = 0; root < g.roots.size(); ++root) {
    std::vector<const CudaLibrary*> libs;
    for (const CudaLibrary* lib : libraries_in_root(g, stack, root))
      if (lib->component != "cudnn" && lib->component != "driver" && !lib->cuda_majors.empty()) libs.push_back(lib);
    auto conflict = first_conflict(libs);
    if (!conflict) continue;
    auto [a, b] = *conflict;
    append_unique(out, Finding{
        "cuda-major-mismatch", Severity::Error, b->object,
        fmt::format("CUDA libraries of different majors are loaded into one process: {} is CUDA {} but {} is CUDA {}",
                    describe(g, *a), majors_text(a->cuda_majors), describe(g, *b), majors_text(b->cuda_majors)),
        "install every CUDA component for the same CUDA major (e.g. all nvidia-*-cu12 or all CUDA 13 wheels) and "
        "remove the other major's directory from the search path",
        ""});
  }
  return out;
}

}  // namespace depscan
