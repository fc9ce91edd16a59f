// Which objects a root loads only through an optional dlopen (ONNX Runtime's TensorRT provider):
// a library they need is missing only when that feature is used.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "analyzer/model.h"
#include "matrix/matrix.h"

namespace depscan {

// Per root, why each object is loaded when only an optional dlopen reaches it (ONNX Runtime's
// TensorRT provider): the index of that dlopen edge. Objects the root needs have none. Only the
// last root asked about is kept: the missing libraries come mostly root by root (dlopen edges,
// added after every root's NEEDED, bring a root back once more), and an audit has thousands.
class OptionalReach {
 public:
  OptionalReach(const Graph& g, const Matrix& m) : g_(g), m_(m) {}

  // The optional dlopen edge through which `root` loads `object`, or nullopt when the root needs it.
  std::optional<size_t> via(size_t root, size_t object);

 private:
  bool optional(const Edge& e) const;
  std::unordered_map<size_t, std::optional<size_t>> walk(size_t root) const;

  const Graph& g_;
  const Matrix& m_;
  std::vector<std::vector<size_t>> by_root_;  // edges_by_root, on the first missing library
  size_t root_ = static_cast<size_t>(-1);
  std::unordered_map<size_t, std::optional<size_t>> via_;  // of root_
};

}  // namespace depscan
