#!/usr/bin/env bash
# Sets dicebench up (tools/bootstrap.sh) and runs its tests through ctest; without arguments, first
# the Python linters (tools/lint.sh: ruff and mypy, any finding fails the run), and after the tests
# the sanitizer build's tests and 10 s of fuzzing per target (tools/sanitize.sh), as CI does.
# Arguments go to ctest instead, e.g. tools/test.sh -L unit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DICEBENCH_BUILD_DIR:-$root/build}
"$root/tools/bootstrap.sh"
if [ $# -eq 0 ]; then "$root/tools/lint.sh"; fi  # needs bootstrap's Python environment, not its build
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
[ $# -eq 0 ] && exec "$root/tools/sanitize.sh"
exit 0
