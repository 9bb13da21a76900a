#!/usr/bin/env bash
# The fuzzers (docs/testing.md): builds them with clang, ASan and UBSan, and
# runs each for SECONDS (default 60) on its corpus in .fuzz-corpus/NAME,
# seeded from the examples, the golden diagnostics, tests/interp, tests/sema, tests/ptx, tests/fuzz/seeds and the
# inputs of past findings (tests/fuzz/regressions). Any finding fails.
#   scripts/fuzz.sh [SECONDS] [NAME ...]     NAME: frontend interp cache
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/fuzz/seeds.sh
seconds=${1:-60}
shift || true
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(frontend interp cache)

CC=clang-19 cmake -S . -B build-fuzz -G Ninja -DBLK_FUZZ=ON >/dev/null
cmake --build build-fuzz --target "${names[@]/#/fuzz_}"

for name in "${names[@]}"; do
  mkdir -p ".fuzz-corpus/$name"
  dict=()
  [ "$name" = cache ] || dict=(-dict=tests/fuzz/blk.dict)
  mapfile -t existing < <(fuzz_seed_dirs "$name")
  echo "### fuzz_$name for $seconds s"
  rm -f build-fuzz/"$name"-*
  # the corpus directory comes first: new inputs are written there only. An input may take 60 s:
  # fuzz_frontend compiles some under few warps, where a kernel near the 65,536-operation limit
  # spends many seconds in LLVM under the sanitizers (matmul_fp8_blockwise.blk's configuration:
  # 21 s on an idle 2-core machine, over 30 with a second job running)
  rc=0
  ./build-fuzz/tests/fuzz_"$name" ".fuzz-corpus/$name" "${existing[@]}" "${dict[@]}" \
    -max_total_time="$seconds" -max_len=4096 -timeout=60 -rss_limit_mb=2048 \
    -artifact_prefix="build-fuzz/$name-" -print_final_stats=1 >"build-fuzz/$name.log" 2>&1 || rc=$?
  grep -E "^Done|stat::number_of_executed_units|INITED" "build-fuzz/$name.log" || true
  if [ $rc -ne 0 ]; then
    tail -40 "build-fuzz/$name.log" >&2
    echo "fuzz_$name failed (exit $rc): $(ls build-fuzz/"$name"-* 2>/dev/null)" >&2
    exit 1
  fi
done
