#!/bin/bash
# The sm_90a PTX of attention (forward and backward) and matmul in the benchmarks'
# configurations, assembled by each ptxas given, checked by wgmma_hazards.py: no register an
# in-flight wgmma reads or writes is written before its wait. Needs nvdisasm on PATH.
#   bench/wgmma_hazard_sweep.sh BLKC PTXAS...
set -u
blkc=$1; shift
here=$(cd "$(dirname "$0")" && pwd); examples=$here/../dsl_examples
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
n=0; bad=0
check() { # name, blkc arguments
    local name=$1; shift
    "$blkc" "$@" --arch sm_90a -o "$work/$name.ptx" 2>/dev/null || { echo "$name: blkc refused"; return; }
    for ptxas in $PTXAS_LIST; do
        local v; v=$("$ptxas" --version | grep -o 'release [0-9.]*' | cut -d' ' -f2)
        "$ptxas" -arch=sm_90a "$work/$name.ptx" -o "$work/x.cubin" 2>/dev/null || { echo "$name, ptxas $v: failed"; bad=$((bad + 1)); continue; }
        nvdisasm -c "$work/x.cubin" > "$work/x.sass" 2>/dev/null
        n=$((n + 1))
        python3 "$here/wgmma_hazards.py" "$work/x.sass" > "$work/out" || { bad=$((bad + 1)); echo "$name, ptxas $v:"; cat "$work/out"; }
    done
}
PTXAS_LIST="$*"
attn_facts=Q%16,K%16,V%16,Out%16,N_CTX%16
mm_facts=stride_ak=1,stride_bn=1,stride_cn=1,stride_am%16,stride_bk%16,stride_cm%16,K%16,M%16,N%16,a%16,b%16,c%16
for D in 64 128; do for causal in false true; do
    for cfg in "128 64 4" "128 64 8" "128 128 8" "64 64 4" "64 128 4" "128 128 4"; do set -- $cfg
        check "attn_${D}_${causal}_$1_$2_$3" "$examples/attention.blk" -D HEAD_DIM=$D -D BLOCK_M=$1 -D BLOCK_N=$2 \
            -D CAUSAL=$causal --num-warps $3 --assume $attn_facts
    done
    for cfg in "64 64 4" "64 64 8" "128 64 8"; do set -- $cfg
        check "bwd_${D}_${causal}_$1_$2_$3" "$examples/attention_bwd.blk" -D HEAD_DIM=$D -D BLOCK_M=$1 -D BLOCK_N=$2 \
            -D CAUSAL=$causal --num-warps $3
    done
done; done
for cfg in "128 256 64 8" "128 128 64 4" "128 128 64 8" "64 128 64 4"; do set -- $cfg
    check "mm_$1_$2_$3_$4" "$examples/matmul.blk" -D BLOCK_M=$1 -D BLOCK_N=$2 -D BLOCK_K=$3 --num-warps $4 --assume $mm_facts
done
echo "$n assembled, $bad with hazards or failures"
[ "$bad" -eq 0 ]
