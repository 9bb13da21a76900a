#!/bin/sh
# Compile time against the depth of reused index arithmetic: c1 = c0 + c0, ..., cD, used in a
# mask over a dot's result, which the backend recomputes in the dot's layout. A walk per path
# would take 2^D steps a register; the conversion works each value out once.
# Usage: bench/reuse_scale.sh [blkc]
set -eu
blkc=${1:-build/compiler/blkc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%6s %8s\n' depth ptx_s
for d in 8 11 14 17; do
    src="$dir/reuse$d.blk"
    awk -v d="$d" 'BEGIN {
        print "kernel k(a: *f16, o: *f32, n: i32) {"; print "    let i = arange(0, 64);"
        print "    let x = load(a + i[:, None] * 64 + i[None, :]);"; print "    let c0 = i;"
        for (k = 1; k <= d; k++) printf "    let c%d = c%d + c%d;\n", k, k - 1, k - 1
        printf "    store(o + i[:, None] * 64 + i[None, :], where(c%d[None, :] < n, dot(x, x), 1.0));\n}\n", d }' > "$src"
    t0=$(date +%s.%N); "$blkc" "$src" --arch sm_80 -o "$dir/out.ptx"
    t1=$(date +%s.%N)
    awk -v d="$d" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%6d %8.2f\n", d, t1 - t0 }'
done
