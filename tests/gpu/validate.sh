#!/usr/bin/env bash
# The GPU checks of docs/gpu-validation.md in one run, on the GPU machine,
# from the static build (docs/gpu-validation.md says how to build it):
#   tests/gpu/validate.sh BIN_DIR OUT_DIR
# BIN_DIR holds run_examples, gpu_ops, gpu_runtime and gpu_bench.
# Each check's whole output goes to OUT_DIR/NAME.txt; the summary to stdout.
# Exit status 0 when every check passed.
set -uo pipefail
bin=$1 out=$2
mkdir -p "$out"
cd "$(dirname "$0")/../.."
status=0
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  compute-sanitizer --version | tail -1; date -u; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
check() { # check NAME COMMAND...: appends to OUT_DIR/NAME.txt
    local name=$1; shift
    echo "### $*" >> "$out/$name.txt"
    local t0=$SECONDS
    "$@" >> "$out/$name.txt" 2>&1
    local rc=$?
    echo "### exit $rc ($((SECONDS - t0)) s)" >> "$out/$name.txt"
    printf '%-10s exit %d  %4d s  %s\n' "$name" $rc $((SECONDS - t0)) "$*"
    [ $rc -eq 0 ] || status=1
}
export BLK_CACHE_DIR=$(mktemp -d)
check gpu_ops "$bin/gpu_ops" --device cuda
check gpu_ops "$bin/gpu_ops" --device cuda --persistent
check examples "$bin/run_examples" --device cuda --all-shapes --examples dsl_examples
check examples "$bin/run_examples" --device cuda --all-shapes --examples dsl_examples --persistent
check runtime "$bin/gpu_runtime"
check gpu_bench "$bin/gpu_bench" dsl_examples
for tool in memcheck racecheck synccheck; do
  check sanitizers compute-sanitizer --tool $tool --error-exitcode 1 "$bin/gpu_ops" --device cuda
done
for tool in memcheck racecheck; do
  check sanitizers compute-sanitizer --tool $tool --error-exitcode 1 "$bin/run_examples" --device cuda --examples dsl_examples
  check sanitizers compute-sanitizer --tool $tool --error-exitcode 1 "$bin/run_examples" --device cuda --examples dsl_examples \
    --persistent
done
exit $status
