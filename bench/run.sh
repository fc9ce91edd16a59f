#!/usr/bin/env bash
# Benchmarks depscan against libtree, lddtree and ldd on the same files, in one run.
# Builds depscan (Release) first. Extra arguments go to bench/compare.py (e.g. --runs 3).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DDEPSCAN_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target depscan >/dev/null
python3 bench/compare.py --depscan build-bench/cli/depscan "$@"
