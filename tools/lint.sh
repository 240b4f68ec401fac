#!/usr/bin/env bash
# Lints the Python under harness/, python/ and core/spec (the worker's packages, dicebench_timing,
# dicebench_fastpath, the dicebench package with its stubs, the spec's generator): ruff with .ruff.toml, then mypy with
# .mypy.ini; then checks the C++'s formatting (tools/format.sh --check, .clang-format). Prints the
# findings, one summary line per tool, and exits non-zero on any finding.
# Needs no build: CI runs it through tools/test.sh (no arguments), right after tools/bootstrap.sh.
# ruff and mypy (pinned in tools/requirements-lint.txt) are installed into the Python environment
# where missing; mypy reads torch's and numpy's types from that environment.
# Environment:
#   DICEBENCH_PYTHON  the Python whose environment holds torch (as for tools/bootstrap.sh; default:
#                     the project environment .venv, which tools/bootstrap.sh makes), e.g.
#                     DICEBENCH_PYTHON=/path/to/other/checkout/.venv/bin/python tools/lint.sh
#   DICEBENCH_DEPS_DIR with it (the offline bundle) and no DICEBENCH_PYTHON, the host's python3, into
#                     which nothing is installed: without ruff and mypy there, linting is skipped
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"  # mypy reads .mypy.ini from the folder it runs in
say() { printf 'lint: %s\n' "$*" >&2; }

python=${DICEBENCH_PYTHON:-$root/.venv/bin/python}
[ -n "${DICEBENCH_DEPS_DIR:-}" ] && [ -z "${DICEBENCH_PYTHON:-}" ] && python=$(command -v python3)
[ -x "$python" ] || { say "no Python environment at $python: run tools/bootstrap.sh first (or set DICEBENCH_PYTHON)"; exit 1; }

requirements=$root/tools/requirements-lint.txt
# Installed at the pinned versions? (A changed pin installs again.)
if ! "$python" - "$requirements" <<'EOF'
import importlib.metadata as metadata, sys
for line in open(sys.argv[1]):
    name, _, version = line.split("#")[0].strip().partition("==")
    try:
        if name and metadata.version(name) != version:
            sys.exit(1)
    except metadata.PackageNotFoundError:
        sys.exit(1)
EOF
then
  if [ -n "${DICEBENCH_DEPS_DIR:-}" ] && [ -z "${DICEBENCH_PYTHON:-}" ]; then
    # Offline, with the host's python3: nothing is installed there (as tools/bootstrap.sh installs nothing).
    say "skipped: $python lacks ruff or mypy at the versions of tools/requirements-lint.txt (offline)"
    exit 0
  fi
  say "installing ruff and mypy into $python's environment (tools/requirements-lint.txt)"
  "$python" -m pip install -q --disable-pip-version-check -r "$requirements"
fi

# The files: tracked ones and new ones not ignored, so a new file is linted before it is added.
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- 'harness/*.py' 'python/*.py' 'python/*.pyi' 'core/spec/*.py' | sort -u)
[ ${#files[@]} -gt 0 ] || { say "no Python files found under harness/ and python/"; exit 1; }
# mypy takes a module once: where a stub (.pyi) stands beside its .py, the stub is what importers
# see and what mypy checks (python/dicebench/__init__.pyi is the package's typed API).
typed=()
for f in "${files[@]}"; do
  [[ $f == *.py && -f ${f}i ]] || typed+=("$f")
done

status=0
# One summary line per tool; the findings, if any, above it.
report() {  # report TOOL SECONDS OUTPUT PATTERN CONFIG FILES
  local count
  count=$(grep -cE "$4" <<<"$3" || true)
  printf '%s\n' "$3"
  printf 'lint: %s: %s finding(s) in %s files, %s s (%s)\n' "$1" "$count" "$6" "$2" "$5"
  status=1
}
started=$SECONDS
if out=$("$python" -m ruff check --no-cache --output-format concise "${files[@]}" 2>&1); then
  printf 'lint: ruff: clean, %s files, %s s\n' "${#files[@]}" $((SECONDS - started))
else
  report ruff $((SECONDS - started)) "$out" '^[^ ]+:[0-9]+:[0-9]+: ' .ruff.toml "${#files[@]}"
fi
# The modules core/spec generates (dicebench_spec; the package's _spec and _record), generated here
# into a folder of their own that mypy reads beside the sources (no build needed).
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
mkdir -p "$generated/dicebench"
"$python" core/spec/generate.py --python "$generated/dicebench_spec.py" --python "$generated/dicebench/_spec.py" \
  --record-python "$generated/dicebench/_record.py"
started=$SECONDS
if out=$(MYPYPATH="$generated" "$python" -m mypy "${typed[@]}" "$generated/dicebench_spec.py" 2>&1); then
  printf 'lint: mypy: clean, %s files, %s s\n' "${#typed[@]}" $((SECONDS - started))
else
  report mypy $((SECONDS - started)) "$out" '^[^ ]+:[0-9]+: error: ' .mypy.ini "${#typed[@]}"
fi
# C++ formatting (.clang-format): a check, as the Python's.
started=$SECONDS
if out=$("$root/tools/format.sh" --check 2>&1); then
  printf 'lint: %s, %s s\n' "$out" $((SECONDS - started))
else
  printf '%s\n' "$out"
  status=1
fi
exit $status
