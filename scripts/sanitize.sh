#!/usr/bin/env bash
# Sanitizer stage of CI (run by scripts/test.sh after the plain suite):
#  1. the whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan),
#     minus the differential and timing tests over the machine's thousands of libraries (they
#     measure speed or repeat the plain run's coverage at 3x the cost; listed in ASAN_SKIP), one
#     test binary per CPU at a time;
#  2. depscan built with ThreadSanitizer (build-tsan) scanning directories with two reading
#     threads (--jobs 2: the page cache is warm, so depscan would read with one); any
#     report fails the stage.
# usage: scripts/sanitize.sh [asan|tsan]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
stages=("$@"); ((${#stages[@]})) || stages=(asan tsan)
# -O1 as the sanitizers' documentation advises, and line tables only (-g1) for their stack traces:
# the build takes a third of the time it takes at -O2 -g, which kept CI inside its time limit.
SANITIZER_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")

# The slow real-file comparisons, and depscan run under qemu-user: an ASan binary's shadow memory
# does not fit in qemu's address space (the process is killed).
ASAN_SKIP='differential:*,the fast ELF reader and LIEF*,timing:*,no false symbol errors*,interposition is quiet on normal programs,the CUDA libraries bind completely*,*without BMI2*'

# A complete fixture set (fixtures/build-all.sh marks one with .built): the plain suite's, else the
# ASan build's. The fixtures do not depend on the build they were made for.
built_fixtures() {
  local dir
  for dir in build-test/fixtures build-asan/fixtures; do
    [ -f "$dir/.built" ] && { echo "$PWD/$dir"; return 0; }
  done
  return 1
}

# One ASan test binary, its output kept in a log and shown only if it fails.
run_asan_test() {
  local test=$1 log=$2/$(basename "$1").log start=$SECONDS
  if "$test" --test-case-exclude="$ASAN_SKIP" >"$log" 2>&1; then
    echo "== asan: $(basename "$test") passed in $((SECONDS - start)) s"
  else
    echo "== asan: $(basename "$test") FAILED after $((SECONDS - start)) s"; cat "$log"; return 1
  fi
}

asan_stage() {
  local build=build-asan
  cmake -S . -B $build "${SANITIZER_FLAGS[@]}" -DDEPSCAN_USE_ASAN=ON >/dev/null
  cmake --build $build -j"$jobs"
  # handle_segv=0: the verify tests make a fake driver crash on purpose and expect the probe
  # to die from SIGSEGV, not from ASan's report of it. detect_stack_use_after_return: a view of a
  # string that lived in a returned function's frame (a short string's inline buffer) is caught
  # too, not only one into freed heap memory (7 s more for the suite).
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:handle_segv=0:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  local fixtures
  fixtures=$(built_fixtures) || { ctest --test-dir $build -R '^build_fixtures$' --output-on-failure; fixtures=$PWD/$build/fixtures; }
  export DEPSCAN_FIXTURES=$fixtures DEPSCAN_BIN=$PWD/$build/cli/depscan DEPSCAN_SOURCE=$PWD
  local logs=$build/test-logs failed=0 running=0
  mkdir -p $logs
  for test in $build/tests/test_*; do
    [ -x "$test" ] || continue
    if ((running >= jobs)); then wait -n || failed=1; running=$((running - 1)); fi
    run_asan_test "$test" $logs &
    running=$((running + 1))
  done
  while ((running > 0)); do wait -n || failed=1; running=$((running - 1)); done
  return $failed
}

tsan_stage() {
  local build=build-tsan
  cmake -S . -B $build "${SANITIZER_FLAGS[@]}" -DDEPSCAN_USE_TSAN=ON -DDEPSCAN_BUILD_TESTS=OFF >/dev/null
  cmake --build $build -j"$jobs" --target depscan
  nm "$build/cli/depscan" | grep __tsan_init >/dev/null || { echo "tsan: $build/cli/depscan is not instrumented"; return 1; }
  export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
  local dirs=()
  local fixtures=""
  fixtures=$(built_fixtures) || echo "tsan: no complete fixture set; scanning the real directories only"
  # each fixture area on its own (together the hostile corpus's chains would end the scan at its
  # edge budget before the other areas), then two real directories
  for dir in ${fixtures:+$fixtures/*/} /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu/gconv; do
    [[ $dir == */CMakeFiles/ ]] && continue
    [ -d "$dir" ] && dirs+=("$dir")
  done
  ((${#dirs[@]})) || { echo "tsan: no directory to scan"; return 1; }
  local failed=0
  for dir in "${dirs[@]}"; do
    local status=0
    "$build/cli/depscan" --jobs 2 "$dir" >/dev/null 2>$build/tsan.log || status=$?
    # depscan's own exit codes (0-3) are findings; 66 or a report is a race, 128+ a signal.
    if ((status == 66)) || grep -q 'ThreadSanitizer' $build/tsan.log; then
      echo "tsan: race while scanning $dir"; cat $build/tsan.log; failed=1
    elif ((status > 3)); then
      echo "tsan: depscan ended with status $status while scanning $dir"; tail -5 $build/tsan.log; failed=1
    else
      echo "tsan: $dir scanned cleanly (exit $status)"
    fi
  done
  return $failed
}

for stage in "${stages[@]}"; do
  start=$SECONDS
  "${stage}_stage"
  echo "== $stage stage: $((SECONDS - start)) s"
done
