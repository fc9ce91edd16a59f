#!/usr/bin/env bash
# Installs the dependencies, builds depscan with its tests (warnings are errors), and runs the
# whole suite: unit tests, loader-rule fixtures against the real loader, hostile inputs; then the
# same suite under AddressSanitizer + UBSan and the parallel scan under ThreadSanitizer
# (scripts/sanitize.sh; DEPSCAN_SKIP_SANITIZERS=1 skips that stage for a quick local run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEPSCAN_WERROR=ON >/dev/null
cmake --build build-test -j"$(nproc)"
ctest --test-dir build-test --output-on-failure -j"$(nproc)"
echo "== plain build + suite: $SECONDS s"
if [ "${DEPSCAN_SKIP_SANITIZERS:-0}" != 1 ]; then
  bash scripts/sanitize.sh
fi
echo "== total: $SECONDS s"
