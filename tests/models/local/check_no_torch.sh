#!/bin/sh
# Checks that an executable (the dicebench host) needs no libtorch or c10 library, directly or
# through its dependencies (ldd): only model plugins load libtorch.
# usage: check_no_torch.sh <executable>
set -u
libraries=$(ldd "$1") || { echo "FAIL: ldd $1 failed"; exit 1; }
if echo "$libraries" | grep -E 'lib(torch|c10)[^ ]*\.so'; then
  echo "FAIL: $1 links libtorch"
  exit 1
fi
echo "ok: $1 links no libtorch"
