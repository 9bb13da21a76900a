#!/bin/sh
# The occupancy target the runtime set (docs/runtime.md) for each kernel
# specialization that run_examples --all-shapes loads on the GPU: a count per
# kernel, threads a program and target, read from a fresh disk cache.
#   scripts/occupancy_targets.sh BUILD_DIR   (BUILD_DIR/tests/harness/run_examples)
set -eu
bin=${1:?usage: scripts/occupancy_targets.sh BUILD_DIR}
cd "$(dirname "$0")/.."
BLK_CACHE_DIR=$(mktemp -d)
export BLK_CACHE_DIR
trap 'rm -rf "$BLK_CACHE_DIR"' EXIT
"$bin/tests/harness/run_examples" --device cuda --all-shapes --examples dsl_examples >/dev/null
find "$BLK_CACHE_DIR" -name '*.blkc' | while read -r f; do
    kernel=$(grep -a -o '^kernel [a-z_0-9]*' "$f" | head -1)
    threads=$(grep -a -o 'maxntid [0-9]*' "$f" | head -1)
    target=$(grep -a -o 'minnctapersm [0-9]*' "$f" | head -1 || true)
    echo "$kernel | $threads | ${target:-none}"
done | sort | uniq -c
