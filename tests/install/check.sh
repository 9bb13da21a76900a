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
# the shared library: a versioned soname, and only the API exported
lib="$work/prefix/lib/libblk.so.0"
[ -f "$lib" ] && [ -L "$work/prefix/lib/libblk.so" ] || { echo "libblk.so.0 (and its libblk.so link) not installed"; exit 1; }
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libblk.so.0 ] || { echo "libblk.so's soname is '$soname', not libblk.so.0"; exit 1; }
leaked=$(nm -D --defined-only "$lib" | awk 'NF == 3 && $3 !~ /^blk_/ { print $3 }')
if [ -n "$leaked" ]; then echo "libblk.so exports symbols without the blk_ prefix:"; echo "$leaked"; exit 1; fi
# 1. CMake: find_package(blk 0.1), and a version it is not
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/cmake-build" > /dev/null
"$work/cmake-build/consumer"
"$work/cmake-build/consumer_shared" # found where it is installed, no LD_LIBRARY_PATH
mkdir "$work/wrong-version"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(p C)\nfind_package(blk 0.2 REQUIRED)\n' > "$work/wrong-version/CMakeLists.txt"
if cmake -S "$work/wrong-version" -B "$work/wrong-build" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null 2>&1; then
  echo "find_package(blk 0.2) found blk 0.1"; exit 1
fi
# 2. pkg-config
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
cc -std=c11 "$here/consumer.c" $(pkg-config --cflags blk) $(pkg-config --libs blk) -o "$work/consumer-pc"
"$work/consumer-pc"
cc -std=c11 "$here/consumer.c" $(pkg-config --cflags blk-shared) $(pkg-config --libs blk-shared) -o "$work/consumer-so"
env -u LD_LIBRARY_PATH "$work/consumer-so" # the rpath pkg-config gives finds libblk.so.0
