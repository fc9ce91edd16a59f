#!/usr/bin/env bash
# Installs the dependencies, builds depscan with its tests (warnings are errors), and runs the
# whole suite: unit tests, loader-rule fixtures against the real loader, hostile inputs; then the
# same suite under AddressSanitizer + UBSan and the parallel scan under ThreadSanitizer
# (scripts/sanitize.sh, with DEPSCAN_SANITIZERS=1: not yet on by default, the TSan stage still reports a race to triage).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEPSCAN_WERROR=ON >/dev/null
cmake --build build-test -j"$(nproc)"
ctest --test-dir build-test --output-on-failure -j"$(nproc)"
echo "== plain build + suite: $SECONDS s"
if [ "${DEPSCAN_SANITIZERS:-0}" = 1 ]; then  # opt-in until the stage has passed once (see sanitize.sh)
  bash scripts/sanitize.sh
fi
echo "== total: $SECONDS s"
