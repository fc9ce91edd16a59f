#include "analyzer/check/load_order.h"

#include <deque>

namespace depscan {

std::vector<size_t> load_closure(const Graph& graph, const std::vector<size_t>& root_edges,
                                 const std::vector<size_t>& starts, bool through_dlopen) {
  std::vector<bool> seen(graph.objects.size());
  std::deque<size_t> queue;
  for (size_t s : starts)
    if (!seen[s]) seen[s] = true, queue.push_back(s);
  std::vector<size_t> out;
  while (!queue.empty()) {
    size_t at = queue.front();
    queue.pop_front();
    out.push_back(at);
    for (size_t e : root_edges) {
      const Edge& edge = graph.edges[e];
      if (edge.from != at || !edge.to || seen[*edge.to]) continue;
      if (edge.kind == EdgeKind::Dlopen && !through_dlopen) continue;
      seen[*edge.to] = true;
      queue.push_back(*edge.to);
    }
  }
  return out;
}

bool python_extension_name(std::string_view path) {
  return path.find(".cpython-") != std::string_view::npos || path.find(".abi3.") != std::string_view::npos ||
         path.find(".pypy") != std::string_view::npos;
}

}  // namespace depscan
