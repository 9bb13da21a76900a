#!/usr/bin/env bash
# Writes the PTX (and block IR) of every example at several configurations
# and archs into DIR, so that two builds of blkc can be diffed:
#   scripts/ptx-snapshot.sh BLKC DIR
# A refactoring of the backend must leave `diff -r before after` empty, or
# explain each difference.
set -euo pipefail
blkc=$1 dir=$2
cd "$(dirname "$0")/.."
mkdir -p "$dir"
configs=(
  "add.blk|"
  "add.blk|-D T=f16 -D BLOCK=256"
  "add.blk|-D T=bf16 -D BLOCK=4096"
  "softmax.blk|"
  "softmax.blk|-D T=f16 -D BLOCK=4096"
  "softmax.blk|-D BLOCK=16384"
  "dropout.blk|"
  "dropout.blk|-D T=f16 -D BLOCK=512"
  "layernorm.blk|"
  "layernorm.blk|-D T=f32 -D BLOCK_SIZE=4096 -D BLOCK_SIZE_N=2048 -D BLOCK_SIZE_M=8"
  "layernorm.blk|-D BLOCK_SIZE_M=64 -D BLOCK_SIZE_N=64"
  "matmul.blk|"
  "matmul.blk|-D T=bf16 -D BLOCK_M=64 -D BLOCK_N=64 -D BLOCK_K=16 -D GROUP_M=1"
  "attention.blk|"
  "attention.blk|-D CAUSAL=true -D HEAD_DIM=128 -D BLOCK_M=64 -D BLOCK_N=32 -D T=bf16"
  "attention_bwd.blk|"
)
for ex in dsl_examples/*.blk; do
  case " ${configs[*]} " in *"$(basename "$ex")|"*) ;; *) configs+=("$(basename "$ex")|");; esac
done
i=0
for c in "${configs[@]}"; do
  file=${c%%|*} defs=${c#*|}
  for arch in sm_80 sm_90 sm_90a; do
    # shellcheck disable=SC2086
    "$blkc" "dsl_examples/$file" --arch $arch --no-hints $defs -o "$dir/$i-${file%.blk}-$arch.ptx"
  done
  # shellcheck disable=SC2086
  "$blkc" "dsl_examples/$file" $defs --emit=bir -o "$dir/$i-${file%.blk}.bir"
  # the launch contract as JSON: the register floor and notes besides the PTX's
  # shellcheck disable=SC2086
  "$blkc" "dsl_examples/$file" --arch sm_90a --no-hints $defs --emit=launch -o "$dir/$i-${file%.blk}-sm_90a.json"
  i=$((i + 1))
done
"$blkc" dsl_examples/softmax.blk --no-hints --precise-math --no-fma -o "$dir/softmax-precise.ptx"
# sm_90a (wgmma, TMA, producer warpgroups): each example as written, and each
# kernel under the launch facts its faster-build note names (the runtime's
# specialized build), with TMA, with cp.async only, without a producer, and
# persistent
for ex in dsl_examples/*.blk; do
  name=$(basename "$ex" .blk)
  "$blkc" "$ex" --arch sm_90a --no-hints -o "$dir/$name-sm_90a.ptx"
  "$blkc" "$ex" --arch sm_90a --no-hints --persistent -o "$dir/$name-sm_90a-persistent.ptx"
  "$blkc" "$ex" --arch sm_90a -o /dev/null 2>&1 |
    sed -n "s/.*note: kernel '\([A-Za-z0-9_]*\)' has a faster build: .* with --assume \([^ ]*\)\. The runtime.*/\1 \2/p" |
    while read -r kernel facts; do
      for extra in "" --no-tma --no-warp-specialize --persistent; do
        # shellcheck disable=SC2086
        "$blkc" "$ex" --arch sm_90a --no-hints --kernel "$kernel" --assume "$facts" $extra \
          -o "$dir/$name-$kernel-sm_90a-facts${extra//-/_}.ptx"
        # shellcheck disable=SC2086
        "$blkc" "$ex" --arch sm_90a --no-hints --kernel "$kernel" --assume "$facts" $extra --emit=launch \
          -o "$dir/$name-$kernel-sm_90a-facts${extra//-/_}.json"
      done
    done
done
echo "ptx-snapshot: $(ls "$dir" | wc -l) files in $dir"
