#!/usr/bin/env bash
# Times two stages on their own over the CUDA library set: the fast ELF reader (best of 3 warm
# runs) and the symbol checks (index build + version, undefined-symbol, interposition and floor
# checks). Both are doctest cases that the test suite skips; this script runs them with --no-skip.
# Usage: bench/stages.sh [CUDA_LIB_DIR]   (default /usr/local/cuda/lib64)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/usr/local/cuda/lib64}
build=build-bench-stages  # its own tree: bench/run.sh configures build-bench without tests
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DDEPSCAN_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j2 --target test_read test_symbols >/dev/null
export DEPSCAN_CUDA_LIBS=$dir
"$build/tests/test_read" --no-skip -tc='timing*' 2>&1 | grep -E '^fast reader'
"$build/tests/test_symbols" --no-skip -tc='timing*' -s 2>&1 | grep -E 'MESSAGE' | sed 's/^.*MESSAGE: //'
