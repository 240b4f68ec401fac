#!/usr/bin/env bash
# Runs clang-tidy with .clang-tidy over the given C++ files, or every one of the build's
# (compile_commands.json in DICEBENCH_BUILD_DIR, default build/), two at a time. Prints the findings
# and exits 1 on any. Not part of CI: a whole run takes tens of minutes on two cores.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DICEBENCH_BUILD_DIR:-$root/build}
cd "$root"
command -v clang-tidy >/dev/null || { echo "tidy: clang-tidy is not installed (apt-get install clang-tidy)" >&2; exit 1; }
[ -f "$build/compile_commands.json" ] || { echo "tidy: no $build/compile_commands.json: run tools/bootstrap.sh first" >&2; exit 1; }
if [ $# -gt 0 ]; then files=("$@"); else mapfile -t files < <(git ls-files '*.cpp' ':!harness/fastpath/shim/**' ':!tests/**'); fi
out=$(printf '%s\n' "${files[@]}" | xargs -P 2 -n 4 clang-tidy -p "$build" --quiet 2>/dev/null || true)
count=$(grep -c ': warning: \|: error: ' <<<"$out" || true)
printf '%s\n' "$out"
echo "tidy: $count finding(s) in ${#files[@]} files"
[ "$count" -eq 0 ]
