#!/bin/sh
# Checks that each plugin library exports exactly one dynamic symbol, the ABI entry
# dicebench_plugin_entry (nm -D --defined-only). Exit 77 (skipped) without nm.
# usage: check_exports.sh <nm> <library>...
set -u
nm_tool=$1
shift
if ! command -v "$nm_tool" >/dev/null 2>&1; then
  echo "SKIP: nm ($nm_tool) not found"
  exit 77
fi
status=0
for library in "$@"; do
  if [ ! -f "$library" ]; then
    echo "FAIL: $library does not exist"
    status=1
    continue
  fi
  symbols=$("$nm_tool" -D --defined-only "$library" | awk 'NF { print $NF }' | sort)
  if [ "$symbols" = "dicebench_plugin_entry" ]; then
    echo "ok: $library exports only dicebench_plugin_entry"
  else
    echo "FAIL: $library must export exactly dicebench_plugin_entry; it exports:"
    echo "$symbols" | sed 's/^/  /'
    status=1
  fi
done
exit $status
