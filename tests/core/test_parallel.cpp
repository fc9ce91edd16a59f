#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "analyzer/util/parallel.h"

using namespace depscan;

TEST_CASE("parallel_for_index calls the body once for every index") {
  for (size_t count : {0u, 1u, 2u, 3u, 1000u}) {
    std::vector<std::atomic<int>> calls(count);
    parallel_for_index(count, [&](size_t i) { ++calls[i]; });
    for (size_t i = 0; i < count; ++i) CHECK(calls[i] == 1);
  }
  CHECK(usable_cpus() >= 1);
}

TEST_CASE("parallel_for_index rethrows the body's exception after every thread has stopped") {
  std::atomic<int> started{0};
  CHECK_THROWS_AS(parallel_for_index(100, [&](size_t i) {
                    ++started;
                    if (i == 7) throw std::runtime_error("index 7");
                  }),
                  std::runtime_error);
  CHECK(started >= 8);
}
