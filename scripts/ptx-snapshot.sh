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
  for arch in sm_80 sm_90; do
    # shellcheck disable=SC2086
    "$blkc" "dsl_examples/$file" --arch $arch $defs -o "$dir/$i-${file%.blk}-$arch.ptx"
  done
  # shellcheck disable=SC2086
  "$blkc" "dsl_examples/$file" $defs --emit=bir -o "$dir/$i-${file%.blk}.bir"
  i=$((i + 1))
done
"$blkc" dsl_examples/softmax.blk --precise-math --no-fma -o "$dir/softmax-precise.ptx"
echo "ptx-snapshot: $(ls "$dir" | wc -l) files in $dir"
