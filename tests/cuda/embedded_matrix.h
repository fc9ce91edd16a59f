// The matrix built into depscan, decoded once for the tests that query it.
#pragma once

#include <doctest/doctest.h>

#include "matrix/matrix.h"

inline const depscan::Matrix& embedded_matrix() {
  static const depscan::Matrix matrix = [] {
    auto m = depscan::load_embedded_matrix();
    REQUIRE_MESSAGE(m, (m ? "" : m.error()));
    return *m;
  }();
  return matrix;
}
