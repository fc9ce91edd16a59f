#!/usr/bin/env bash
# Installs the dependencies, builds depscan with its tests (warnings are errors), and runs the
# whole suite: unit tests, loader-rule fixtures against the real loader, hostile inputs; then the
# same suite under AddressSanitizer + UBSan and the parallel scan under ThreadSanitizer
# (scripts/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Line tables only (-g1): enough for a backtrace, and a third less compile time than full -g.
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  -DDEPSCAN_WERROR=ON >/dev/null
cmake --build build-test -j"$(nproc)"
# Tests that need the CUDA toolkit, cuDNN, musl, mingw-w64 or glibc 2.36 fail here instead of
# skipping (tests/toolchains.h).
export DEPSCAN_REQUIRE_TOOLCHAINS=1
ctest --test-dir build-test --output-on-failure -j"$(nproc)"
echo "== plain build + suite: $SECONDS s"
# AddressSanitizer + UBSan suite, then the parallel directory scan under ThreadSanitizer.
bash scripts/sanitize.sh asan tsan
echo "== total: $SECONDS s"
