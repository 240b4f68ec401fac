#!/usr/bin/env bash
# Gathers the Debian packages dicebench builds against into a folder, on a machine that reaches
# Debian's archive, for building on an offline host:
#   tools/gather-offline-deps.sh DIR          downloads the .debs into DIR/debs, unpacks them into DIR/root
# then, on the offline host:
#   DICEBENCH_DEPS_DIR=DIR tools/bootstrap.sh
# CMake (cmake/DicebenchDependencies.cmake) searches the bundle after the host's own libraries,
# so it only fills what the host lacks (seen on the GPU host: sqlite3.h, toml++ and curl/curl.h; pcre2.h and
# seccomp.h, with libseccomp's static archive, are bundled too).
# libcurl comes as its headers only: the host's own libcurl.so.4 is linked and loaded (the bundle's
# runtime needs libssh2, nghttp2 and more, which the GPU host lacks: seen there as 'libssh2.so.1:
# cannot open shared object file').
set -euo pipefail
dir=${1:?usage: tools/gather-offline-deps.sh DIR}
packages=(libsqlite3-dev libsqlite3-0 libtomlplusplus-dev nlohmann-json3-dev libfmt-dev libfmt9
          libcli11-dev doctest-dev libpcre2-dev libpcre2-8-0 libcurl4-openssl-dev libseccomp-dev libseccomp2)
mkdir -p "$dir/debs" "$dir/root"
dir=$(cd "$dir" && pwd)
apt-get update -qq
(cd "$dir/debs" && apt-get download "${packages[@]}")
for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
# Without its runtime, libcurl's static archive would be found in its place.
rm -f "$dir"/root/usr/lib/*/libcurl.a
# Debian's -dev symlinks are relative within usr/lib, so they resolve inside the bundle.
printf '%s\n' "${packages[@]}" > "$dir/PACKAGES"
du -sh "$dir" | awk '{print "bundle: " $1 " in " $2}'
