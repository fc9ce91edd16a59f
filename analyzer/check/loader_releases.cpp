#include "analyzer/check/loader_releases.h"

#include <limits>

#include <fmt/format.h>

namespace depscan {
namespace {

constexpr size_t kNoRoot = std::numeric_limits<size_t>::max();
const std::optional<GlibcRelease> kUnknown;

}  // namespace

const std::optional<GlibcRelease>& LoaderReleases::of_root(size_t root_index) const {
  return root_index < graph_.root_loaders.size() ? graph_.root_loaders[root_index].release : kUnknown;
}

size_t LoaderReleases::first_root(size_t object) {
  if (first_root_.empty()) {
    first_root_.assign(graph_.objects.size(), kNoRoot);
    for (size_t r = graph_.roots.size(); r-- > 0;) first_root_[graph_.roots[r]] = r;
    for (const Edge& edge : graph_.edges)
      if (edge.to && first_root_[*edge.to] > edge.root) first_root_[*edge.to] = edge.root;
  }
  return object < first_root_.size() ? first_root_[object] : kNoRoot;
}

const std::optional<GlibcRelease>& LoaderReleases::of_object(size_t object) {
  size_t root = first_root(object);
  return root != kNoRoot ? of_root(root) : kUnknown;
}

bool LoaderReleases::musl_root(size_t root_index) const {
  return root_index < graph_.root_loaders.size() && graph_.root_loaders[root_index].musl;
}

bool LoaderReleases::musl_object(size_t object) {
  size_t root = first_root(object);
  return root != kNoRoot && musl_root(root);
}

std::string LoaderReleases::describe(size_t root_index) const {
  const std::optional<GlibcRelease>& release = of_root(root_index);
  const std::string& own = root_index < graph_.root_loaders.size() ? graph_.root_loaders[root_index].own : "";
  if (own.empty())
    return release ? fmt::format("the analysed system has glibc {}.{}", release->major, release->minor)
                   : "the analysed system's glibc release is unknown";
  return release ? fmt::format("the program runs under its own loader {}, glibc {}.{}", own, release->major, release->minor)
                 : fmt::format("the program runs under its own loader {}, of an unknown glibc release", own);
}

}  // namespace depscan
