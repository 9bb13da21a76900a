#!/bin/sh
# Compile time against program size: one kernel of N chained lets, for growing N.
# The front end should stay linear (issue 15). Usage: bench/frontend_scale.sh [blkc]
set -eu
blkc=${1:-build/compiler/blkc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%8s %10s %8s %8s\n' lets bytes bir_s ptx_s
for n in 10000 100000 650000; do
    src="$dir/lets$n.blk"
    awk -v n="$n" 'BEGIN {
        print "kernel k(x: *f32) {"; print "    let v0 = load(x);"
        for (i = 1; i < n; i++) printf "    let v%d = v%d + 1.0;\n", i, i - 1
        printf "    store(x, v%d);\n}\n", n - 1 }' > "$src"
    t0=$(date +%s.%N); "$blkc" "$src" --emit=bir -o "$dir/out.bir"
    t1=$(date +%s.%N); "$blkc" "$src" -o "$dir/out.ptx"
    t2=$(date +%s.%N)
    awk -v n="$n" -v b="$(wc -c < "$src")" -v t0="$t0" -v t1="$t1" -v t2="$t2" \
        'BEGIN { printf "%8d %10d %8.2f %8.2f\n", n, b, t1 - t0, t2 - t1 }'
done
