"""The five-product attention backward (attention_bwd.blk: attn_bwd_prepare, attn_bwd_dkdvdq,
attn_bwd_dq_convert) at a length that ends inside a block (S = 200), causal or not, in the
configurations attention_bench.py picks (D = 64: 64 keys, 32 queries a step, 4 warps; D = 128:
128 keys, 32 or 64 queries, 8 warps, the latter with a producer warpgroup): each result checked
against SDPA's math backend in f32, small enough to run under compute-sanitizer. On the GPU
machine:
    BLK_LIBRARY=build-static/libblk.so.0 PYTHONPATH=python \\
        compute-sanitizer --tool racecheck --kernel-name kns=attn_bwd python3 bench/attention_bwd_sanitize.py
(memcheck and synccheck the same way; docs/results/attention_bench_h100.md has the summaries)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_bench as ab  # noqa: E402

ba = ab.BlkAttention()
wrong = 0
for D, cfg in ((64, (64, 32, 4)), (128, (128, 32, 8)), (128, (128, 64, 8))):
    for causal in (False, True):
        B, H, S = 1, 2, 200
        torch.manual_seed(0)
        q, k, v, do = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(4))
        ref_o, ref_g = ab.reference(q, k, v, do, causal)
        o, lse, delta, dq_acc, dq, dk, dv = ab.forward_for_backward(ba, q, k, v, causal)
        for run in ba.fused_kernels(q, k, v, o, do, lse, delta, dq_acc, dq, dk, dv, causal, cfg):
            run()
        err = max(ab.max_err(a, b) for a, b in zip((dq, dk, dv), ref_g))
        ok = err < 2e-2
        wrong += not ok
        print(f"D={D} {ab.fmt_cfg(cfg)} causal={causal}: max error {err:.2e}", "ok" if ok else "WRONG", flush=True)
sys.exit(1 if wrong else 0)
