#!/usr/bin/env bash
# Installs blkc from BUILD_DIR into a temporary prefix, then builds and runs a
# consumer program with find_package(blk) and with pkg-config blk.
set -euo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null
"$work/prefix/bin/blkc" --version
# only the API's symbols are global in the installed library
leaked=$(nm -g --defined-only "$work/prefix/lib/libblk.a" | awk 'NF == 3 && $3 !~ /^blk_/ { print $3 }')
if [ -n "$leaked" ]; then echo "libblk.a defines global symbols without the blk_ prefix:"; echo "$leaked"; exit 1; fi
# 1. CMake: find_package(blk)
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/cmake-build" > /dev/null
"$work/cmake-build/consumer"
# 2. pkg-config
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
cc -std=c11 "$here/consumer.c" $(pkg-config --cflags blk) $(pkg-config --libs blk) -o "$work/consumer-pc"
"$work/consumer-pc"
