#!/usr/bin/env bash
# Times the symbol checks on the CUDA library set: the whole `depscan` run (hyperfine when
# installed), and the symbol stage's own time (index build + version, undefined-symbol,
# interposition and floor checks) from the timing case of test_symbols.
# Usage: bench/symbols.sh [CUDA_LIB_DIR]   (default /usr/local/cuda/lib64)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/usr/local/cuda/lib64}
build=build-bench-symbols  # its own tree: bench/run.sh configures build-bench without tests
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DDEPSCAN_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j2 --target depscan test_symbols >/dev/null
mapfile -t libs < <(find "$dir" -maxdepth 1 -type f -name '*.so*' | sort)
echo "symbols bench: ${#libs[@]} libraries in $dir"
if command -v hyperfine >/dev/null; then
  hyperfine --warmup 1 --runs 5 -N "$build/cli/depscan --format json ${libs[*]}"
  hyperfine --warmup 1 --runs 5 -N "$build/cli/depscan --bind-now --format json ${libs[*]}"
else
  time "$build/cli/depscan" --format json "${libs[@]}" >/dev/null
fi
DEPSCAN_CUDA_LIBS=$dir "$build/tests/test_symbols" -tc='timing*' -s 2>&1 | grep -E 'MESSAGE|timing:' | sed 's/^.*MESSAGE: //'
