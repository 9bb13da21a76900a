"""Attention forward configurations, each with TMA where the compiler picks it, with --no-tma and
with --no-warp-specialize: TFLOP/s from kernel time (dot_bench's timer), and WRONG where the
result is off. On the GPU machine:
  BLK_CACHE_DISABLE=1 python3 bench/attention_configs.py LIBBLK D BMxBNxWARPS,... S,...
"""
import math, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import dot_bench as db
db.FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
lib = sys.argv[1]
CFGS = [tuple(int(x) for x in c.split("x")) for c in sys.argv[3].split(",")]
SIZES = [int(s) for s in sys.argv[4].split(",")]
variants = {"auto": db.Blk(lib), "notma": db.Blk(lib, no_tma=True), "nows": db.Blk(lib, no_warp_specialize=True)}
for D in (int(sys.argv[2]),):
    for S in SIZES:
        Z, H = 4, 32 if D == 64 else 16
        q, k, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
        o, lse = torch.empty_like(q), torch.empty(Z, H, S, device="cuda", dtype=torch.float32)
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        flops = 4 * Z * H * S * S * D
        for bm, bn, w in CFGS:
            row = []
            for name, B in variants.items():
                try:
                    f = db.blk_attention(B, q, k, v, o, lse, False, bm, bn, w)
                    f(); torch.cuda.synchronize()
                    err = (o.float() - ref.float()).abs().max().item()
                    t = db.kernel_time(f)
                    row.append(f"{name} {flops / (t * 1e-3) / 1e12:.0f}" + ("" if err < 2e-3 else f" WRONG {err:.2g}"))
                except Exception as e:
                    row.append(f"{name} -")
            print(f"D={D} S={S} {bm}x{bn} w{w}: " + ", ".join(row), flush=True)
