#include "analyzer/check/other_roots.h"

#include <fmt/format.h>

namespace depscan {

OtherRoots::OtherRoots(const Graph& g, const Matrix& m) : g_(g) {
  for (const Edge& e : g.edges) {
    if (!e.to) continue;
    if (e.kind != EdgeKind::Dlopen) resolved_.try_emplace({file_path(g.objects[e.from]), e.name}, e.root);
    else if (m.dlopen_is_optional(soname_or_file_name(g.objects[e.from]), e.name))
      plugins_.try_emplace(file_path(g.objects[*e.to]), &e);
  }
}

std::optional<std::string> OtherRoots::plugin_opening(const Edge& missing) const {
  const Object& root = g_.objects[g_.roots[missing.root]];
  if (root.binary && root.binary->is_executable()) return std::nullopt;  // a program does not start
  auto plugin = plugins_.find(file_path(root));
  if (plugin == plugins_.end()) return std::nullopt;
  return fmt::format("; {} is a plugin that {} opens with dlopen only when its feature is used (optional)", root.path,
                     g_.objects[plugin->second->from].path);
}

std::optional<std::string> OtherRoots::root_finding(const Edge& missing) const {
  const Object& root = g_.objects[g_.roots[missing.root]];
  if (root.binary && root.binary->is_executable()) return std::nullopt;
  auto found = resolved_.find({file_path(g_.objects[missing.from]), missing.name});
  if (found == resolved_.end()) return std::nullopt;
  return fmt::format("; it is found when {} is loaded by {} (through that program's search path)",
                     g_.objects[missing.from].path, g_.objects[g_.roots[found->second]].path);
}

std::optional<std::string> only_when_optional(OptionalReach& reach, const OtherRoots& others, const Graph& g,
                                              const Edge& edge) {
  if (auto via = reach.via(edge.root, edge.from)) {
    const Edge& opened = g.edges[*via];
    return fmt::format("; {} is loaded only when {} opens {} with dlopen, which it does without (optional)",
                       g.objects[edge.from].path, g.objects[opened.from].path, opened.name);
  }
  return others.plugin_opening(edge);
}

}  // namespace depscan
