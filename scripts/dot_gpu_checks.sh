#!/bin/sh
# The GPU checks and benchmark of dot (docs/gpu-validation.md, docs/performance.md):
# every example at every shape on both dot paths (the device's own arch, sm_90a's
# wgmma on an H100, and sm_90's mma.sync), gpu_runtime, gpu_ops, compute-sanitizer's
# memcheck, racecheck and synccheck on run_examples, then bench/dot_bench.py.
#   scripts/dot_gpu_checks.sh BUILD_DIR OUT_DIR [dot_bench options]
# BUILD_DIR holds tests/harness/run_examples, tests/gpu/gpu_ops, tests/gpu/gpu_runtime
# and libblk.so.0 (the static build: -DBLK_STATIC_LLVM=ON).
set -u
bin=${1:?usage: scripts/dot_gpu_checks.sh BUILD_DIR OUT_DIR [dot_bench options]}
out=${2:?usage: scripts/dot_gpu_checks.sh BUILD_DIR OUT_DIR [dot_bench options]}
shift 2
cd "$(dirname "$0")/.."
mkdir -p "$out"
BLK_CACHE_DIR=$(mktemp -d)
export BLK_CACHE_DIR BLK_LIBRARY="$bin/libblk.so.0" PYTHONPATH="$PWD/python"
trap 'rm -rf "$BLK_CACHE_DIR"' EXIT
ex="$bin/tests/harness/run_examples --device cuda --examples dsl_examples"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
run() { name=$1; shift; "$@" > "$out/$name.txt" 2>&1; echo "exit status $?" >> "$out/$name.txt"; }
run examples $ex --all-shapes
run examples_sm90 $ex --all-shapes --arch sm_90
run gpu_runtime "$bin/tests/gpu/gpu_runtime" dsl_examples
run gpu_ops "$bin/tests/gpu/gpu_ops"
for tool in memcheck racecheck synccheck; do
    run "sanitizer_$tool" compute-sanitizer --tool $tool --error-exitcode 1 $ex
done
run dot_bench python3 bench/dot_bench.py "$bin/libblk.so.0" --out "$out/dot_bench.md" "$@"
grep -H 'exit status' "$out"/*.txt
