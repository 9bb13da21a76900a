#!/usr/bin/env python3
"""attention.blk's forward under flags that change when its dots are issued, not what they add
(sm_90a): --flag ping_pong (the default: the consumer warpgroups of a producer loop on 8 warps take
turns to issue their dots) or --flag overlap_dots (the deferred dot issued in the next iteration
right after the first one: on 8 warps with a producer and on one warpgroup without), or both
(--flag overlap_dots,ping_pong). Lengths that end inside a block, causal, grouped-query and
sliding-window, D = 64 and 128, f16 and bf16; each launch's plan must say the flags' schedule,
each output is checked against torch in f32, and the same launches without the flags must give
the same bits. Run plain and under compute-sanitizer's synccheck and racecheck on the GPU machine
(--small: fewer shapes, for the sanitizers):

    compute-sanitizer --tool synccheck python3 tests/gpu/attention_schedule_check.py --small [--flag F]"""
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import blk  # noqa: E402

# (Z, H, H_KV, N_CTX, D, causal, window, dtype, BLOCK_M, BLOCK_N, warps)
CASES = [
    (1, 2, 2, 300, 128, False, 0, torch.float16, 128, 128, 8),
    (1, 2, 2, 257, 128, True, 0, torch.bfloat16, 128, 64, 8),
    (2, 4, 1, 1000, 64, True, 0, torch.float16, 128, 128, 8),
    (1, 4, 2, 2048, 128, False, 0, torch.float16, 128, 128, 8),
    (1, 2, 2, 1030, 128, True, 200, torch.float16, 128, 64, 8),
    (1, 2, 2, 1, 64, True, 0, torch.float16, 128, 128, 8),
    (2, 8, 8, 4096, 128, True, 0, torch.float16, 128, 128, 8),
    # one warpgroup, no producer (cp.async or TMA by thread 0): overlap_dots only
    (1, 4, 2, 1000, 64, True, 0, torch.float16, 128, 64, 4),
    (1, 2, 2, 300, 64, False, 0, torch.bfloat16, 64, 64, 4),
    (2, 4, 4, 2048, 128, False, 0, torch.float16, 64, 64, 4),
    (1, 2, 2, 1030, 64, True, 200, torch.float16, 128, 32, 4),
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


# what each flag's plan says on the loop
PLAN_SAYS = {"ping_pong": "ping-pong: its 2 consumer warpgroups take turns",
             "overlap_dots": "issued in the next iteration right after dot line"}


def main():
    small = "--small" in sys.argv
    flag = sys.argv[sys.argv.index("--flag") + 1] if "--flag" in sys.argv else "ping_pong"  # NAME[,NAME]
    names = flag.split(",")
    fwd = blk.compile(os.path.join(HERE, "..", "..", "dsl_examples", "attention.blk"))["attn_fwd"]
    bad = 0
    cases = [c for c in (CASES[:3] if small else CASES) if c[-1] == 8 or "ping_pong" not in names]
    for Z, H, H_KV, N, D, causal, window, dt, bm, bn, warps in cases:
        torch.manual_seed(N + D)
        q = torch.randn(Z, H, N, D, device="cuda", dtype=dt) * 0.5
        k, v = (torch.randn(Z, H_KV, N, D, device="cuda", dtype=dt) * 0.5 for _ in range(2))
        outs = []
        for flags in ({f: True for f in names}, {}):
            o = torch.full_like(q, float("nan"))
            lse = torch.empty(Z, H, N, device="cuda", dtype=torch.float32)
            args = (q, k, v, o, lse, 1.0 / math.sqrt(D), N)
            consts = dict(HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, GROUP=H // H_KV, WINDOW=window,
                          T=dt, num_warps=warps, **flags)
            plan = fwd.plan(*args, **consts)
            turns = all(PLAN_SAYS[f] in plan for f in names) if flags else any(PLAN_SAYS[f] in plan for f in names)
            if turns != bool(flags):
                print(f"FAIL plan: {flag} {'on' if turns else 'off'} with {flags or 'the defaults'} at "
                      f"N={N} D={D} {bm}x{bn} w{warps}")
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
              f"{str(dt)[6:]} {bm}x{bn} w{warps}: max err {err:.2e} (tol {tol:.1e}); "
              f"{'bit-identical' if same else 'DIFFERS'} without {flag}")
    print(f"{bad} of {len(cases)} wrong")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
