// Reading and rewriting fields of a file held in memory, for tests that damage real binaries.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace depscan::test {

using Bytes = std::vector<uint8_t>;

template <class T>
T get(const Bytes& b, uint64_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

template <class T>
void put(Bytes& b, uint64_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

}  // namespace depscan::test
