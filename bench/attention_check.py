"""Attention forward and backward results of several libblk builds against
PyTorch (SDPA, and autograd through it), in every configuration the
benchmarks try, at a sequence length that ends inside a block (1000) and
one that does not: the max error of each (the backward's relative to the
largest gradient), then each build's worst forward error. On the GPU
machine:  BLK_CACHE_DISABLE=1 python3 bench/attention_check.py LIBBLK...
(dot_bench.py only rejects errors above its tolerance, and skips the
configuration it rejects.)"""
import math, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import dot_bench as db
libs = sys.argv[1:]
blks = [db.Blk(p) for p in libs]
torch.manual_seed(0)
worst = {p: 0.0 for p in libs}
for S in (1000, 4096):
    for D in (64, 128):
        Z, H = 2, 8
        q, k, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
        for causal in (False, True):
            ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            o = torch.empty_like(q)
            lse = torch.empty(Z, H, S, device="cuda", dtype=torch.float32)
            row = []
            for bm, bn, w in [(128, 64, 4), (128, 64, 8), (128, 128, 8), (64, 64, 4), (64, 128, 4), (128, 32, 4)]:
                errs = []
                for p, B in zip(libs, blks):
                    o.zero_()
                    try:
                        db.blk_attention(B, q, k, v, o, lse, causal, bm, bn, w)()
                        torch.cuda.synchronize()
                        e = (o.float() - ref.float()).abs().max().item()
                        worst[p] = max(worst[p], e)
                        errs.append(f"{e:.1e}")
                    except Exception as ex:
                        errs.append("skip:" + str(ex).splitlines()[0][:40])
                row.append(f"{bm}x{bn}w{w} " + "/".join(errs))
            print(f"fwd S={S} D={D} causal={causal}: " + "  ".join(row), flush=True)
for S in (1000, 1024):
    D = 64
    Z, H = 2, 8
    q, k, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
    do = torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16)
    for causal in (False, True):
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
        out = torch.nn.functional.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
        ref = torch.autograd.grad(out, (qg, kg, vg), do)
        s = torch.matmul(q.float(), k.float().transpose(-1, -2)) / math.sqrt(D)
        if causal:
            s = s.masked_fill(torch.ones(S, S, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
        lse = (torch.logsumexp(s, dim=-1) * 1.4426950408889634).contiguous()
        delta = torch.empty(Z, H, S, device="cuda", dtype=torch.float32)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(q), torch.empty_like(q)
        row = []
        for bm, bn, w in [(64, 64, 4), (64, 64, 8), (128, 64, 8), (32, 64, 4)]:
            errs = []
            for p, B in zip(libs, blks):
                for t in (dq, dk, dv): t.zero_()
                try:
                    db.blk_attention_bwd(B, q, k, v, out.detach(), do, lse, delta, dq, dk, dv, causal, bm, bn, w)()
                    torch.cuda.synchronize()
                    e = max(((g.float() - r.float()).abs().max() / r.float().abs().max()).item() for g, r in zip((dq, dk, dv), ref))
                    errs.append(f"{e:.1e}")
                except Exception as ex:
                    errs.append("skip:" + str(ex).splitlines()[0][:40])
            row.append(f"{bm}x{bn}w{w} " + "/".join(errs))
        print(f"bwd S={S} D={D} causal={causal} (relative): " + "  ".join(row), flush=True)
print("worst forward error per build:", {os.path.basename(p): f"{e:.2g}" for p, e in worst.items()})
