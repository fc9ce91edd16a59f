// For checks about one object at a time: one file reached by several paths is reported once.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
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

// One finding per requesting file and name, the most severe of its roots'.
inline void add_once_per_request(std::vector<Finding>& out, std::map<std::pair<std::string, std::string>, size_t>& seen,
                                 const Graph& g, const Edge& edge, Finding f) {
  auto [it, inserted] = seen.try_emplace({file_path(g.objects[edge.from]), edge.name}, out.size());
  if (inserted) out.push_back(std::move(f));
  else if (f.severity > out[it->second].severity) out[it->second] = std::move(f);
}

// Whether a finding is about the file at `path`: its object's path or real path, else its own path.
// loader-missing is about the analysed system (no loader for a class), named by its first library.
inline bool finding_is_about(const Finding& f, const Graph& g, const std::string& path) {
  if (f.code == "loader-missing") return false;
  if (!f.object || *f.object >= g.objects.size()) return f.path == path;
  const Object& o = g.objects[*f.object];
  return o.path == path || o.realpath == path;
}

}  // namespace depscan
