#!/usr/bin/env bash
# Formats dicebench's C++ with clang-format and .clang-format (the checkout's tracked .cpp, .hpp and
# .h files, the fast path's device headers and third-party shims aside):
#   tools/format.sh            rewrites the files in place
#   tools/format.sh --check    changes nothing; lists the files that differ and exits 1 if any does
# tools/lint.sh runs the check, as CI does.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
command -v clang-format >/dev/null || { echo "format: clang-format is not installed (apt-get install clang-format)" >&2; exit 1; }
# The fast path's shims stand in for torch's and CUDA's own headers, written to their layout.
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.h' \
  ':!harness/fastpath/shim/**' ':!harness/fastpath/device/**' | sort -u)
if [ "${1:-}" = "--check" ]; then
  differ=()
  for f in "${files[@]}"; do
    clang-format --style=file "$f" | cmp -s - "$f" || differ+=("$f")
  done
  if [ ${#differ[@]} -gt 0 ]; then
    printf 'format: %s\n' "${differ[@]}" >&2
    echo "format: ${#differ[@]} of ${#files[@]} C++ files differ from .clang-format (run tools/format.sh)" >&2
    exit 1
  fi
  echo "format: clean, ${#files[@]} C++ files"
else
  clang-format --style=file -i "${files[@]}"
  echo "format: ${#files[@]} C++ files formatted"
fi
