#!/usr/bin/env bash
# Installs the dependencies, builds depscan, and runs it on this machine's CUDA stack.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEPSCAN_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target depscan
status=0
./build/cli/depscan "$@" || status=$?
echo "depscan exit code: $status (0 clean, 1 findings, 2 unreadable input, 3 verification failed)"
