#include <doctest/doctest.h>

#include "analyzer/model.h"

using namespace depscan;

namespace {

Edge edge_of_root(size_t root, std::string name) {
  Edge e;
  e.name = std::move(name);
  e.root = root;
  return e;
}

}  // namespace

TEST_CASE("edges_by_root: each root's edges in graph order, later edges (dlopen) included, roots without edges empty") {
  Graph g;
  g.roots = {0, 1, 2};
  g.load_order.resize(3);
  for (auto [root, name] : std::initializer_list<std::pair<size_t, const char*>>{
           {0, "a"}, {0, "b"}, {2, "c"}, {0, "dlopen-d"}, {2, "dlopen-e"}, {4, "audit-f"}})
    g.edges.push_back(edge_of_root(root, name));
  auto by_root = edges_by_root(g);
  REQUIRE(by_root.size() == 5);  // the audit root's edge lies past the roots listed
  CHECK(by_root[0] == std::vector<size_t>{0, 1, 3});
  CHECK(by_root[1].empty());
  CHECK(by_root[2] == std::vector<size_t>{2, 4});
  CHECK(by_root[3].empty());
  CHECK(by_root[4] == std::vector<size_t>{5});
  CHECK(edges_by_root(Graph()).empty());
}
