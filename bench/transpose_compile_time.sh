#!/usr/bin/env bash
# Compile time of a block transpose against the warp count (issue 44): every
# element goes through shared memory, so a thread's one basic block holds
# 2 x (elements / threads) shared-memory accesses, which LLVM's instruction
# selection handled in quadratic time before compiler/nvptx/emit.c bounded
# the DAG combiner's store merging and TokenFactor inlining.
#   bench/transpose_compile_time.sh [BLKC]
set -euo pipefail
blkc=${1:-build/compiler/blkc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for spec in "f32 256 128" "f16 256 256" "f16 512 128"; do
  set -- $spec
  cat > "$dir/t.blk" <<BLK
kernel t(x: *$1, y: *$1) {
    let r = arange(0, $2);
    let c = arange(0, $3);
    let v = load(x + r[:, None] * $3 + c[None, :]);
    store(y + c[:, None] * $2 + r[None, :], trans(v));
}
BLK
  for warps in 8 4 2 1; do
    start=$(date +%s%N)
    "$blkc" "$dir/t.blk" --num-warps $warps --no-hints -o /dev/null
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    printf '%s [%s, %s] transpose, %2d warps: %3d.%02d s\n' "$1" "$2" "$3" "$warps" $((ms / 1000)) $((ms % 1000 / 10))
  done
done
