#!/usr/bin/env python3
"""attention.blk's forward where its consumer warpgroups take turns to issue their dots
(blk's ping_pong flag: a producer loop on 8 warps, sm_90a): lengths that end inside a block, causal,
grouped-query and sliding-window, D = 64 and 128, f16 and bf16; each launch's plan must say
ping-pong, each output is checked against torch in f32, and the same launches without
the flag give the same bits (ping-pong changes when dots are issued, not what they add).
Run plain and under compute-sanitizer's synccheck and racecheck on the GPU machine (--small:
fewer shapes, for the sanitizers):

    compute-sanitizer --tool synccheck python3 tests/gpu/ping_pong_check.py --small"""
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import blk  # noqa: E402

# (Z, H, H_KV, N_CTX, D, causal, window, dtype, BLOCK_M, BLOCK_N)
CASES = [
    (1, 2, 2, 300, 128, False, 0, torch.float16, 128, 128),
    (1, 2, 2, 257, 128, True, 0, torch.bfloat16, 128, 64),
    (2, 4, 1, 1000, 64, True, 0, torch.float16, 128, 128),
    (1, 4, 2, 2048, 128, False, 0, torch.float16, 128, 128),
    (1, 2, 2, 1030, 128, True, 200, torch.float16, 128, 64),
    (1, 2, 2, 1, 64, True, 0, torch.float16, 128, 128),
    (2, 8, 8, 4096, 128, True, 0, torch.float16, 128, 128),
]


def reference(q, k, v, causal, window, group):
    qf, kf, vf = q.float(), k.float().repeat_interleave(group, 1), v.float().repeat_interleave(group, 1)
    s = qf @ kf.transpose(-1, -2) / math.sqrt(q.shape[-1])
    n = q.shape[2]
    i = torch.arange(n, device="cuda")[:, None]
    j = torch.arange(n, device="cuda")[None, :]
    keep = torch.ones(n, n, dtype=torch.bool, device="cuda")
    if causal:
        keep &= j <= i
    if window:
        keep &= j > i - window
    s = s.masked_fill(~keep, float("-inf"))
    return torch.softmax(s, -1) @ vf


def main():
    small = "--small" in sys.argv
    fwd = blk.compile(os.path.join(HERE, "..", "..", "dsl_examples", "attention.blk"))["attn_fwd"]
    bad = 0
    for Z, H, H_KV, N, D, causal, window, dt, bm, bn in CASES[:3] if small else CASES:
        torch.manual_seed(N + D)
        q = torch.randn(Z, H, N, D, device="cuda", dtype=dt) * 0.5
        k, v = (torch.randn(Z, H_KV, N, D, device="cuda", dtype=dt) * 0.5 for _ in range(2))
        outs = []
        for flags in ({"ping_pong": True}, {}):
            o = torch.full_like(q, float("nan"))
            lse = torch.empty(Z, H, N, device="cuda", dtype=torch.float32)
            args = (q, k, v, o, lse, 1.0 / math.sqrt(D), N)
            consts = dict(HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, GROUP=H // H_KV, WINDOW=window,
                          T=dt, num_warps=8, **flags)
            plan = fwd.plan(*args, **consts)
            turns = "ping-pong: its 2 consumer warpgroups take turns" in plan
            if turns != bool(flags):
                print(f"FAIL plan: ping-pong {'on' if turns else 'off'} with {flags or 'the defaults'} at "
                      f"N={N} D={D} {bm}x{bn}")
                bad += 1
            fwd[(math.ceil(N / bm), Z * H)](*args, **consts)
            torch.cuda.synchronize()
            outs.append(o)
        ref = reference(q, k, v, causal, window, H // H_KV)
        err = (outs[0].float() - ref).abs().max().item()
        tol = (1e-2 if dt == torch.bfloat16 else 2e-3) * (1 + ref.abs().max().item())
        same = torch.equal(outs[0], outs[1])
        ok = err < tol and same
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} Z={Z} H={H}/{H_KV} N={N} D={D} causal={causal} window={window} "
              f"{str(dt)[6:]} {bm}x{bn} w8: max err {err:.2e} (tol {tol:.1e}); "
              f"{'bit-identical' if same else 'DIFFERS'} without ping-pong")
    print(f"{bad} of {len(CASES[:3] if small else CASES)} wrong")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
