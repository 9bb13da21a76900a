#!/usr/bin/env bash
# The main job: build blkc, then compile every example in dsl_examples/ and
# print a summary of its checked, typed kernels. (Later stages add: emit PTX
# and run the kernels, on the GPU when there is one, else on the interpreter.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
status=0
for src in dsl_examples/*.blk; do
  echo "== $src"
  if ! ast=$(./build/compiler/blkc "$src" --emit=ast); then status=1; continue; fi
  # Summary: each kernel, its parameters, and every binding with its type.
  printf '%s\n' "$ast" | awk '
    /^kernel /                   { print; next }
    /^  (param|const) /          { print; next }
    /^ +(let|var) /              { name = $2; want = 1; next }
    want && /: /                 { sub(/^ +/, ""); n = split($0, a, " : "); printf "    %-12s : %s\n", name, a[n]; want = 0 }'
done
exit $status
