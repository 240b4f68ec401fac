#!/usr/bin/env bash
# The sanitizer and fuzzing build: a second build folder (default build-asan/) made with clang,
# -fsanitize=address,undefined and libFuzzer (DICEBENCH_SANITIZE, DICEBENCH_FUZZ). It builds the
# parsers' unit tests and the fuzz targets (tests/fuzz) only, runs those tests, replays every
# fuzz target's seeds and regressions, then fuzzes each target for DICEBENCH_FUZZ_SECONDS (label
# `fuzz`). Any sanitizer report, leak or crash fails it.
#   tools/sanitize.sh              all of the above
#   tools/sanitize.sh --no-fuzz    the sanitized tests and replays only
# Environment: DICEBENCH_SANITIZE_BUILD_DIR, DICEBENCH_FUZZ_SECONDS (default 10), DICEBENCH_PYTHON,
# DICEBENCH_CMAKE_ARGS as for tools/bootstrap.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DICEBENCH_SANITIZE_BUILD_DIR:-$root/build-asan}
fuzz_seconds=${DICEBENCH_FUZZ_SECONDS:-10}
say() { printf 'sanitize: %s\n' "$*" >&2; }
run_fuzz=1
[ "${1:-}" = "--no-fuzz" ] && run_fuzz=0

# The unit tests of the parsers' libraries (no torch, no Boost.Process, no plugins: CI's time).
tests=(test_base test_config test_model_folder test_tokenizer_files test_kernelbench test_dice_infill dicebench_replay_folder_tests
       test_results test_fastpath_scanner test_fastpath_splitter test_fastpath_flags)

# The packages (clang, its runtimes) and the Python environment; the normal build is incremental.
DICEBENCH_SANITIZERS=1 "$root/tools/bootstrap.sh"
python=${DICEBENCH_PYTHON:-$root/.venv/bin/python}
[ -n "${DICEBENCH_DEPS_DIR:-}" ] && [ -z "${DICEBENCH_PYTHON:-}" ] && python=$(command -v python3)
# shellcheck disable=SC2206
extra=(${DICEBENCH_CMAKE_ARGS:-})
[ -n "${DICEBENCH_DEPS_DIR:-}" ] && extra+=("-DDICEBENCH_DEPS_DIR=$DICEBENCH_DEPS_DIR")
if [ ! -f "$build/build.ninja" ]; then
  say "configuring $build"
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
    -DDICEBENCH_FUZZ=ON "-DPython3_EXECUTABLE=$python" "-DDICEBENCH_FUZZ_SECONDS=$fuzz_seconds" "${extra[@]}" >&2
else
  cmake "$build" "-DDICEBENCH_FUZZ_SECONDS=$fuzz_seconds" >/dev/null
fi
# Every fuzz target tests/fuzz/CMakeLists.txt defines in this build (read from the build, never
# listed here: a new target is built, replayed and fuzzed without touching this script).
targets=("${tests[@]}")
mapfile -t fuzz_targets < <(sed -n 's|^build tests/fuzz/\(fuzz_[a-z0-9_]*\): .*|\1|p' "$build/build.ninja" | sort -u)
[ "${#fuzz_targets[@]}" -gt 0 ] || { echo "sanitize: no fuzz targets in $build/build.ninja" >&2; exit 1; }
targets+=("${fuzz_targets[@]}")
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >&2

# halt_on_error and fatal UB reports: the first finding fails the test that met it.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
regex="^($(IFS="|"; echo "${tests[*]}")):|^fuzz replay: "
ctest --test-dir "$build" --output-on-failure -j "$jobs" -L unit -R "$regex"
if [ "$run_fuzz" = 1 ]; then
  ctest --test-dir "$build" --output-on-failure -j "$jobs" -L fuzz
fi
