// For checks about one object at a time: one file reached by several paths is reported once.
#pragma once

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "analyzer/model.h"

namespace depscan {

// finding_for(index) for each object of the graph, keeping the first finding about each file.
template <class FindingFor>
std::vector<Finding> once_per_file(const Graph& graph, FindingFor finding_for) {
  std::set<std::pair<uint64_t, uint64_t>> reported;
  std::vector<Finding> out;
  for (size_t i = 0; i < graph.objects.size(); ++i) {
    std::optional<Finding> finding = finding_for(i);
    if (finding && reported.insert(file_key(graph, i)).second) out.push_back(std::move(*finding));
  }
  return out;
}

}  // namespace depscan
