#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a given time, printing each target's
# final statistics line. Seeds come from tests/fuzz/corpus/<target>/*.hex (hex text, committed);
# new crashes land in build-fuzz/crashes/<target>/ — turn each into a regression input with
# `xxd -p crash > tests/fuzz/regressions/<target>/<name>.hex`.
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}; shift || true
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDEPSCAN_BUILD_FUZZERS=ON -DDEPSCAN_BUILD_TESTS=ON >/dev/null
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=($(sed -n 's/^set(DEPSCAN_FUZZ_TARGETS \(.*\))$/\1/p' tests/fuzz/CMakeLists.txt))
fi
for t in "${targets[@]}"; do
  cmake --build build-fuzz -j"$(nproc)" --target "fuzz_$t" >/dev/null
  corpus=build-fuzz/corpus/$t; crashes=build-fuzz/crashes/$t
  mkdir -p "$corpus" "$crashes"
  for seed in tests/fuzz/corpus/"$t"/*.hex; do
    [ -e "$seed" ] && xxd -r -p "$seed" > "$corpus/$(basename "$seed" .hex)"
  done
  log=build-fuzz/fuzz_$t.log
  # LIEF itself can be slow (quadratic) on large inputs: keep PE inputs small.
  max_len=(); [ "$t" = pe ] && max_len=(-max_len=4096)
  # Each input is written to a temporary directory of its own; one cut off by the time limit stays.
  tmp=build-fuzz/tmp/$t
  rm -rf "$tmp" && mkdir -p "$tmp"
  TMPDIR=$PWD/$tmp ASAN_OPTIONS=detect_leaks=1 ./build-fuzz/tests/fuzz/fuzz_"$t" "$corpus" "${max_len[@]}" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1 || true
  echo "$t: $(grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units' "$log" | tail -2 | tr '\n' ' ')"
  if ls "$crashes" | grep -q .; then echo "$t: CRASHES in $crashes"; fi
done
