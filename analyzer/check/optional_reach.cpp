#include "analyzer/check/optional_reach.h"

namespace depscan {

std::optional<size_t> OptionalReach::via(size_t root, size_t object) {
  if (by_root_.empty()) by_root_ = edges_by_root(g_);
  if (root >= by_root_.size()) return std::nullopt;
  if (root != root_) {
    root_ = root;
    via_ = walk(root);
  }
  auto it = via_.find(object);
  return it == via_.end() ? std::nullopt : it->second;
}

bool OptionalReach::optional(const Edge& e) const {
  return e.kind == EdgeKind::Dlopen && m_.dlopen_is_optional(soname_or_file_name(g_.objects[e.from]), e.name);
}

// Breadth-first from the root over the edges it needs, then on from each optional dlopen's target.
// The map holds every object reached: nullopt for those the root needs.
std::unordered_map<size_t, std::optional<size_t>> OptionalReach::walk(size_t root) const {
  std::unordered_map<size_t, std::vector<size_t>> out;
  std::vector<size_t> optional_edges;
  for (size_t i : by_root_[root]) {
    const Edge& e = g_.edges[i];
    if (!e.to) continue;
    if (optional(e)) optional_edges.push_back(i);
    else out[e.from].push_back(i);
  }
  std::unordered_map<size_t, std::optional<size_t>> via;
  if (optional_edges.empty() || root >= g_.roots.size()) return via;
  auto spread = [&](size_t start, std::optional<size_t> label) {
    std::vector<size_t> queue{start};
    via.emplace(start, label);
    for (size_t next = 0; next < queue.size(); ++next)
      for (size_t i : out[queue[next]])
        if (via.emplace(*g_.edges[i].to, label).second) queue.push_back(*g_.edges[i].to);
  };
  spread(g_.roots[root], std::nullopt);
  for (size_t i : optional_edges)
    if (!via.count(*g_.edges[i].to)) spread(*g_.edges[i].to, i);
  return via;
}

}  // namespace depscan
