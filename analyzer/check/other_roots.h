// What the other roots of a scan say about a root's missing library: a directory or environment
// audit makes every file a root, also those only ever loaded by another root.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "analyzer/check/optional_reach.h"
#include "analyzer/model.h"
#include "matrix/matrix.h"

namespace depscan {

class OtherRoots {
 public:
  OtherRoots(const Graph& g, const Matrix& m);

  // "; P is a plugin that Q opens with dlopen only when its feature is used (optional)" when the
  // root is a library another root opens with an optional dlopen; nullopt otherwise, and for a program.
  std::optional<std::string> plugin_opening(const Edge& missing) const;

  // "; it is found when F is loaded by R (through that program's search path)" when another root's
  // search finds what this root misses (auditwheel's grafted libraries); nullopt otherwise.
  std::optional<std::string> root_finding(const Edge& missing) const;

 private:
  const Graph& g_;
  std::map<std::pair<std::string, std::string>, size_t> resolved_;  // (requester's file, name) -> a root that finds it
  std::map<std::string, const Edge*> plugins_;                       // file -> the optional dlopen opening it
};

// Why a library `edge` cannot find fails only when an optional feature is used: the root loads the
// requester only through an optional dlopen, or the root is such a plugin itself. nullopt: always.
std::optional<std::string> only_when_optional(OptionalReach& reach, const OtherRoots& others, const Graph& g,
                                              const Edge& edge);

}  // namespace depscan
