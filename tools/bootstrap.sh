#!/usr/bin/env bash
# Sets dicebench up on a fresh Debian or Ubuntu machine and builds it; safe to run again (it only
# installs what is missing, and the build is incremental).
#   tools/bootstrap.sh                 install missing packages, configure, build
# Environment:
#   DICEBENCH_BUILD_DIR   build folder (default: build/ in the checkout)
#   DICEBENCH_DEPS_DIR    offline dependency bundle from tools/gather-offline-deps.sh; with it
#                         nothing is installed, the bundle fills what the system lacks, and the
#                         host's python3 (which must hold torch and pybind11) is used
#   DICEBENCH_PYTHON      the Python with torch and pybind11 to build the worker against
#                         (default: the project environment .venv, made from tools/requirements.txt)
#   DICEBENCH_CMAKE_ARGS  extra CMake arguments
#   DICEBENCH_SANITIZERS  1: also install clang with its sanitizer and libFuzzer runtimes, for
#                         tools/sanitize.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DICEBENCH_BUILD_DIR:-$root/build}
say() { printf 'bootstrap: %s\n' "$*" >&2; }

# Debian packages the build needs (toolchain, libraries, test framework; Chromium and ChromeDriver
# for the HTML report's browser test).
packages=(cmake ninja-build g++ git pkg-config python3-venv python3-dev
          libsqlite3-dev libtomlplusplus-dev nlohmann-json3-dev libfmt-dev libcli11-dev doctest-dev
          libboost-dev libboost-filesystem-dev libpcre2-dev libcurl4-openssl-dev libseccomp-dev
          chromium chromium-driver)
[ "${DICEBENCH_SANITIZERS:-}" = 1 ] && packages+=(clang-14 libclang-rt-14-dev)

if [ -z "${DICEBENCH_DEPS_DIR:-}" ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
      command -v sudo >/dev/null || { say "need root (or sudo) to install: ${missing[*]}"; exit 1; }
      sudo=sudo
    fi
    say "installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  say "offline: using the dependency bundle at $DICEBENCH_DEPS_DIR"
fi

# The Python environment: torch (the worker embeds CPython and imports it), pybind11, numpy;
# tokenizers, transformers and safetensors for the tokenizer's and the model engine's references;
# pandas for the Python module's DataFrames.
python=${DICEBENCH_PYTHON:-}
if [ -z "$python" ] && [ -n "${DICEBENCH_DEPS_DIR:-}" ]; then
  python=$(command -v python3)
elif [ -z "$python" ]; then
  python=$root/.venv/bin/python
  [ -x "$python" ] || { say "creating the Python environment $root/.venv"; python3 -m venv "$root/.venv"; }
  if ! "$python" -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in ("torch", "pybind11", "numpy", "tokenizers", "transformers", "safetensors", "pandas")))' 2>/dev/null; then
    say "installing Python packages (tools/requirements.txt)"
    "$python" -m pip install -q --disable-pip-version-check -r "$root/tools/requirements.txt"
  fi
fi
"$python" -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in ("torch", "pybind11")))' 2>/dev/null ||
  { say "$python lacks torch or pybind11"; exit 1; }

# Line tables and function names (-g1) are what backtraces and profilers read; full debug info
# (-g) made every compile about 28% slower (12.0 s against 8.8 s for results/report/summary_file.cpp).
# DICEBENCH_CMAKE_ARGS, given after, can set them back.
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
            "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DPython3_EXECUTABLE=$python")
[ -n "${DICEBENCH_DEPS_DIR:-}" ] && cmake_args+=("-DDICEBENCH_DEPS_DIR=$DICEBENCH_DEPS_DIR")
[ "${CI:-}" = "true" ] && cmake_args+=(-DDICEBENCH_WERROR=ON)
# shellcheck disable=SC2206
[ -n "${DICEBENCH_CMAKE_ARGS:-}" ] && cmake_args+=($DICEBENCH_CMAKE_ARGS)

if [ ! -f "$build/build.ninja" ] || ! grep -qx "Python3_EXECUTABLE:FILEPATH=$python" "$build/CMakeCache.txt"; then
  say "configuring $build"
  cmake -S "$root" -B "$build" "${cmake_args[@]}" >&2
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build "$build" -j "$jobs" >&2

# The project environment imports the build's dicebench package (README: "The Python module")
# through a .pth file naming the folder that holds it.
if [ "$python" = "$root/.venv/bin/python" ]; then
  site=$("$python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  printf '%s\n' "$build/lib/dicebench/python" > "$site/dicebench.pth"
fi

# The RL trainers' own code, which tests/python/test_trainers.py calls the dicebench.trainers adapters
# with (tools/requirements-rl.txt): trl, verl and openrlhf as wheels in $build/rl-wheels, read by the
# test and never installed (their dependencies are GPU stacks), fetched for CPython 3.11 on x86-64
# whatever this host is (only their sources are read); and aiohttp, which OpenRLHF's executor
# imports, and Ray (dicebench.ray), installed into the project environment. About 90 MB, 20 s;
# skipped offline. A failure here fails nothing: the tests skip the cases that need what is missing.
if [ -z "${DICEBENCH_DEPS_DIR:-}" ]; then
  rl_requirements=$root/tools/requirements-rl.txt
  rl_missing=()
  while read -r pin; do
    compgen -G "$build/rl-wheels/${pin%%==*}-${pin#*==}-*.whl" >/dev/null || rl_missing+=("$pin")
  done < <(grep -E '^(trl|verl|openrlhf)==' "$rl_requirements")
  if [ ${#rl_missing[@]} -gt 0 ]; then
    say "downloading the RL trainers' wheels (${rl_missing[*]}) into $build/rl-wheels"
    "$python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.11 \
      --implementation cp --platform manylinux1_x86_64 -d "$build/rl-wheels" "${rl_missing[@]}" ||
      say "could not download them: tests/python/test_trainers.py will skip the trainers' own code"
  fi
  if [ "$python" = "$root/.venv/bin/python" ]; then
    while read -r pin; do
      if ! "$python" -c "import importlib.metadata as m, sys; sys.exit(m.version('${pin%%==*}') != '${pin#*==}')" 2>/dev/null; then
        say "installing $pin (tools/requirements-rl.txt)"
        "$python" -m pip install -q --disable-pip-version-check "$pin" ||
          say "could not install it: the tests that need it (test_trainers, test_ray) skip what it serves"
      fi
    done < <(grep -E '^[A-Za-z]' "$rl_requirements" | grep -vE '^(trl|verl|openrlhf)==')
  fi
fi
