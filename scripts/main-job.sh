#!/usr/bin/env bash
# The main job: build blkc, compile every example in dsl_examples/ (to the
# verified block IR, shown in short: the PTX backend is the next stage), then
# run every example and compare it with its C reference. There is no GPU
# runtime yet, so the examples run on the reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
status=0
for src in dsl_examples/*.blk; do
  if bir=$(./build/compiler/blkc "$src" --emit=bir); then
    ops=$(printf '%s\n' "$bir" | grep -c '; line ' || true)
    printf '%s\n' "$bir" | awk -v f="$src" -v n="$ops" '/^kernel @/ { sub(/\(.*/, ""); k = k " " substr($2, 2) } END { printf "compiled %-26s kernels:%s (%d ops)\n", f, k, n }'
  else
    status=1
  fi
done
echo
./build/dsl_examples/run_examples --device cpu || status=1
exit $status
