// An edge's tried paths: copies share one list until one of them changes it.
#include <doctest/doctest.h>

#include "analyzer/model.h"

using namespace depscan;

TEST_CASE("a copied attempt list shares its entries and copies them before a change") {
  AttemptList searched{{"/opt/lib/libfoo.so.1", "not found"}, {"/usr/lib/libfoo.so.1", "taken"}};
  AttemptList edge = searched;
  CHECK(&edge.front() == &searched.front());

  edge.edit().back().outcome = "cannot dynamically load executable (the loader stops here)";
  CHECK(searched.back().outcome == "taken");
  CHECK(edge.back().outcome == "cannot dynamically load executable (the loader stops here)");
  CHECK(&edge.front() != &searched.front());

  AttemptList other = searched;
  other.push_back({"/lib/libfoo.so.1", "not found"});
  CHECK(searched.size() == 2);
  CHECK(other.size() == 3);
}

TEST_CASE("an empty attempt list iterates nothing and grows on push_back") {
  AttemptList none;
  CHECK(none.empty());
  CHECK(none.begin() == none.end());
  none.push_back({"ld.so.cache", "no entry for libfoo.so.1"});
  REQUIRE(none.size() == 1);
  CHECK(none[0].path == "ld.so.cache");
  CHECK(none == AttemptList{{"ld.so.cache", "no entry for libfoo.so.1"}});
}
