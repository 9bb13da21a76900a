# Sourced by scripts/fuzz.sh and scripts/fuzz-coverage.sh: the one list of
# seed directories per fuzzer. fuzz_seed_dirs NAME prints those that exist,
# a line each (the run's own corpus, .fuzz-corpus/NAME, is not among them).
fuzz_seed_dirs() {
  local dirs
  case $1 in
    cache) dirs=(tests/fuzz/seeds/cache tests/fuzz/regressions/cache) ;;
    *) dirs=(dsl_examples tests/diagnostics tests/interp tests/sema tests/ptx tests/fuzz/seeds/programs tests/fuzz/regressions/programs) ;;
  esac
  for d in "${dirs[@]}"; do [ -d "$d" ] && echo "$d"; done
  return 0
}
