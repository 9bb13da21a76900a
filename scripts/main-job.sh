#!/usr/bin/env bash
# The main job: build blkc, compile every example in dsl_examples/ to PTX
# (build/ptx/, checked with ptxas when it is installed), then run every example
# and compare it with its C reference through the runtime API: on the GPU when
# there is one (kernels JIT-compiled for their arguments), else on the
# reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
mkdir -p build/ptx
PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
status=0
for src in dsl_examples/*.blk; do
  out="build/ptx/$(basename "$src" .blk).ptx"
  if ./build/compiler/blkc "$src" -o "$out"; then
    kernels=$(grep -o '^\.visible \.entry [A-Za-z0-9_]*' "$out" | awk '{ printf " %s", $3 }')
    check="(ptxas not installed)"
    if [ -x "$PTXAS" ]; then
      if "$PTXAS" -arch=sm_90 -o /dev/null "$out"; then check="ptxas ok"; else check="PTXAS FAILED"; status=1; fi
    fi
    printf 'compiled %-26s -> %-24s %6d bytes, %s; kernels:%s\n' "$src" "$out" "$(wc -c < "$out")" "$check" "$kernels"
  else
    status=1
  fi
done
echo
./build/tests/harness/run_examples --device auto || status=1
echo
# the host programs: each example JIT-compiled and run from C (docs/runtime.md)
for host in vector_add softmax layer_norm dropout matmul attention; do
  ./build/dsl_examples/$host || status=1
done
exit $status
