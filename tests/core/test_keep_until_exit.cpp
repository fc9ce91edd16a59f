// keep_until_exit: the value moves to a block that is never freed, reachable from a static list.
#include <doctest/doctest.h>

#include <string>

#include "analyzer/util/keep_until_exit.h"

using namespace depscan;

namespace {

struct CountsDestruction {
  int* destroyed;
  std::string payload;
  CountsDestruction(int* d, std::string p) : destroyed(d), payload(std::move(p)) {}
  CountsDestruction(CountsDestruction&& other) noexcept : destroyed(other.destroyed), payload(std::move(other.payload)) {
    other.destroyed = nullptr;  // a moved-from value's destruction is not the kept value's
  }
  ~CountsDestruction() {
    if (destroyed) ++*destroyed;
  }
};

}  // namespace

TEST_CASE("a kept value is moved once, stays where it is and is never destroyed") {
  int destroyed = 0;
  KeptUntilExit* before = kept_until_exit;
  const CountsDestruction* address = nullptr;
  {
    CountsDestruction& kept = keep_until_exit(CountsDestruction(&destroyed, std::string(100, 'x')));
    address = &kept;
    CHECK(kept.payload == std::string(100, 'x'));
  }
  CHECK(destroyed == 0);
  CHECK(address->payload == std::string(100, 'x'));
  CHECK(kept_until_exit != before);  // the head of the list leak checkers reach it through
  CHECK(kept_until_exit->next == before);
}

TEST_CASE("values kept one after another stay reachable from the list") {
  KeptUntilExit* before = kept_until_exit;
  int& first = keep_until_exit(1);
  int& second = keep_until_exit(2);
  CHECK(first == 1);
  CHECK(second == 2);
  CHECK(&first != &second);
  size_t reachable = 0;
  for (KeptUntilExit* k = kept_until_exit; k != before; k = k->next) ++reachable;
  CHECK(reachable == 2);
}
