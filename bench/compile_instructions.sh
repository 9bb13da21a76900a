#!/usr/bin/env bash
# blkc's work from source to PTX, counted in instructions (valgrind's
# callgrind): deterministic where wall time on a shared machine is not, so
# two builds compare exactly. Per example and arch, one process each (LLVM's
# setup included, as for the CLI); with two blkc binaries, both and the ratio.
#   bench/compile_instructions.sh BLKC [BLKC_BEFORE]
set -euo pipefail
now=$1 before=${2:-}
cd "$(dirname "$0")/.."
count() { # instructions blkc $1 executes for dsl_examples/$2 --arch $3
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "dsl_examples/$2.blk" --arch "$3" --no-hints \
    -o /dev/null 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
if [ -n "$before" ]; then
  printf '| example | arch | before (M instr.) | now (M instr.) | now / before |\n|---|---|---|---|---|\n'
else
  printf '| example | arch | M instructions |\n|---|---|---|\n'
fi
for ex in softmax layernorm matmul attention attention_bwd; do
  for arch in sm_90 sm_90a; do
    n=$(count "$now" $ex $arch)
    if [ -n "$before" ]; then
      b=$(count "$before" $ex $arch)
      awk -v e=$ex -v a=$arch -v b="$b" -v n="$n" 'BEGIN { printf "| %s | %s | %.0f | %.0f | %.2f |\n", e, a, b / 1e6, n / 1e6, n / b }'
    else
      awk -v e=$ex -v a=$arch -v n="$n" 'BEGIN { printf "| %s | %s | %.0f |\n", e, a, n / 1e6 }'
    fi
  done
done
