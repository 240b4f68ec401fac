#!/bin/sh
# Installs the dicebench build tree into a temporary prefix, then builds the example plugin
# out of tree against it through find_package(dicebench), and checks the result: the library,
# its single exported symbol and its manifest. Exit 77 (skipped) without cmake.
# usage: example_out_of_tree.sh <cmake> <build dir> <example source dir> <work dir> <generator> <c++ compiler> <nm>
set -eu
cmake_tool=$1 build_dir=$2 example_dir=$3 work_dir=$4 generator=$5 cxx=$6 nm_tool=$7
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v "$cmake_tool" >/dev/null 2>&1; then
  echo "SKIP: cmake ($cmake_tool) not found"
  exit 77
fi

prefix=$work_dir/prefix
example_build=$work_dir/example-build
rm -rf "$work_dir"
mkdir -p "$work_dir"

echo "== installing $build_dir into $prefix"
"$cmake_tool" --install "$build_dir" --prefix "$prefix"

fail() { echo "FAIL: $*"; exit 1; }
for installed in bin/dicebench include/dicebench/plugin.h include/dicebench/plugin.hpp \
                 lib/cmake/dicebench/dicebenchConfig.cmake lib/cmake/dicebench/dicebenchConfigVersion.cmake \
                 lib/cmake/dicebench/dicebenchTargets.cmake lib/cmake/dicebench/DicebenchPlugin.cmake \
                 lib/dicebench/plugins/libdicebench-model-replay.so \
                 lib/dicebench/plugins/libdicebench-model-replay.so.manifest.json; do
  [ -e "$prefix/$installed" ] || fail "the install lacks $installed"
done
"$here/check_exports.sh" "$nm_tool" "$prefix"/lib/dicebench/plugins/*.so

echo "== building $example_dir against $prefix"
"$cmake_tool" -S "$example_dir" -B "$example_build" -G "$generator" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror"
"$cmake_tool" --build "$example_build"

library=$example_build/libdicebench-model-example.so
[ -f "$library" ] || fail "$library was not built"
"$here/check_exports.sh" "$nm_tool" "$library"
manifest=$library.manifest.json
[ -f "$manifest" ] || fail "$manifest was not written"
grep -q '"example-echo"' "$manifest" || fail "$manifest does not list example-echo"

echo "== installing the example plugin beside the installed ones"
"$cmake_tool" --install "$example_build" --prefix "$prefix"
[ -f "$prefix/lib/dicebench/plugins/libdicebench-model-example.so" ] || fail "the example plugin was not installed"
[ -f "$prefix/lib/dicebench/plugins/libdicebench-model-example.so.manifest.json" ] || fail "the installed example plugin has no manifest"
models=$(env -u DICEBENCH_PLUGIN_PATH "$prefix/bin/dicebench" list models) || fail "the installed dicebench cannot list models"
echo "$models"
echo "$models" | grep -q "example-echo" || fail "the installed dicebench does not list example-echo"
echo "$models" | grep -q "replay:" || fail "the installed dicebench does not list replay:"
echo "ok: the example plugin builds out of tree against the installed package"
