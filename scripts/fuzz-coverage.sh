#!/usr/bin/env bash
# Line coverage per pipeline stage of what each fuzzer's corpus reaches
# (the table in docs/testing.md): builds the fuzzers with clang's source
# coverage in build-cov, runs each once over its corpus (.fuzz-corpus/NAME,
# as scripts/fuzz.sh leaves it, plus the seeds) and sums llvm-cov's line
# counts per stage.   scripts/fuzz-coverage.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/fuzz/seeds.sh
flags="-fprofile-instr-generate -fcoverage-mapping"
CC=clang-19 cmake -S . -B build-cov -G Ninja -DBLK_FUZZ=ON -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fprofile-instr-generate" >/dev/null
cmake --build build-cov --target fuzz_frontend fuzz_interp fuzz_cache >/dev/null

# stage: the files that make it (paths as llvm-cov prints them)
stages=(
  "lexer:compiler/lexer.c"
  "parser:compiler/parser.c"
  "sema:compiler/sema.c compiler/sema_expr.c compiler/sema_args.c compiler/sema_builtins.c compiler/sema_asm.c compiler/sema_stmt.c compiler/types.c compiler/builtins.c"
  "lowering:compiler/lower.c"
  "block IR (verifier, printer):compiler/bir.c"
  "interpreter:compiler/interp/interp.c"
  "NVPTX backend:compiler/nvptx/"
  "cache reader:runtime/cache.c"
)

printf '| stage | lines |'
for name in frontend interp cache; do printf ' fuzz_%s |' "$name"; done
printf '\n|---|---|---|---|---|\n'
declare -A report
for name in frontend interp cache; do
  mapfile -t dirs < <(fuzz_seed_dirs "$name")
  [ -d ".fuzz-corpus/$name" ] && dirs=(".fuzz-corpus/$name" "${dirs[@]}")
  rm -f build-cov/"$name".profraw
  LLVM_PROFILE_FILE="build-cov/$name.profraw" ./build-cov/tests/fuzz_"$name" -runs=0 -max_len=4096 \
    -rss_limit_mb=4096 "${dirs[@]}" >/dev/null 2>&1
  llvm-profdata-19 merge -sparse -o build-cov/"$name".profdata build-cov/"$name".profraw
  report[$name]=$(llvm-cov-19 report ./build-cov/tests/fuzz_"$name" -instr-profile=build-cov/"$name".profdata \
    -show-region-summary=false -show-branch-summary=false -show-functions=false 2>/dev/null)
done
for entry in "${stages[@]}"; do
  label=${entry%%:*}
  files=${entry#*:}
  row="| $label |"
  total=""
  for name in frontend interp cache; do
    # Filename, Functions, Missed, Executed, Lines, Missed, Cover: sum Lines and Missed
    read -r lines missed < <(awk -v files="$files" '
      BEGIN { n = split(files, f, " ") }
      { for (i = 1; i <= n; i++) if (index($1, f[i])) { l += $(NF-2); m += $(NF-1) } }
      END { print l + 0, m + 0 }' <<<"${report[$name]}")
    [ -z "$total" ] || [ "$lines" -gt "$total" ] && total=$lines
    if [ "$lines" -eq 0 ]; then row+=" — |"
    else row+=" $(( (lines - missed) * 100 / lines ))% |"
    fi
  done
  echo "$row" | sed "s/^| $label |/| $label | $total |/"
done

# the backend file by file, for fuzz_frontend (which compiles under the options its inputs pick)
echo
echo '| backend file | lines | fuzz_frontend |'
echo '|---|---|---|'
for f in compiler/nvptx/*.c; do
  awk -v f="$f" '
    index($1, f) { l += $(NF-2); m += $(NF-1) }
    END { if (l) printf "| `%s` | %d | %d%% |\n", substr(f, 16), l, (l - m) * 100 / l }' <<<"${report[frontend]}"
done
