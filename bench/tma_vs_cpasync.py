"""Does cp.async beat TMA issued by thread 0 on one warpgroup? For each shape, every matmul
candidate of dot_bench (and attention's 4-warp ones) is timed as built; where its launch's plan
says "TMA from thread 0" on 4 warps, it is timed again built with no_tma (cp.async rings); then the
best as built and the best if that rule held (kernel time, dot_bench's timer, each output checked
against PyTorch). On the GPU machine:
    python3 bench/tma_vs_cpasync.py build-static/libblk.so.0
Results: docs/results/tma_vs_cpasync_h100.txt, notebook 2026-11-28."""
import sys, os, math, ctypes, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dot_bench as db
db.FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
lib = sys.argv[1]
base, notma = db.Blk(lib), db.Blk(lib, no_tma=True)
base.lib.blk_kernel_plan.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]

def plan_of(blk, kern, args):
    arr = (db.BlkArg * len(args))()
    for i, (kind, v) in enumerate(args):
        arr[i].kind = kind
        if kind == db.PTR: arr[i].value.ptr = v
        elif kind == db.F32: arr[i].value.f = v
        else: arr[i].value.i = v
    out = ctypes.c_char_p()
    blk.check(blk.lib.blk_kernel_plan(kern, arr, len(args), ctypes.byref(out)))
    return out.value.decode()

def timed(fn, check):
    fn(); torch.cuda.synchronize(); check()
    return db.kernel_time(fn)

CANDS = [(128, 128, 32, 4), (128, 128, 32, 8), (128, 256, 32, 8), (128, 128, 64, 8), (128, 128, 64, 4),
         (128, 256, 64, 8), (128, 128, 128, 8), (128, 128, 128, 4), (64, 64, 32, 4), (64, 64, 64, 4),
         (64, 128, 128, 4), (64, 128, 32, 4), (64, 128, 64, 4), (128, 64, 64, 4), (16, 64, 64, 4)]
for M, N, K in [(512, 512, 512), (1000, 1000, 1000), (1024, 1024, 1024), (520, 1000, 4000), (2000, 3000, 1500),
                (256, 4096, 4096), (2048, 2048, 2048), (3000, 5000, 4000), (4096, 4096, 4096)]:
    a = torch.randn(M, K, device="cuda", dtype=torch.float16); b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float(); c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    def check():
        err = (c.float() - ref).abs().max().item()
        if err > 2 ** -10 * ref.abs().max().item() + K * 2 ** -20: raise RuntimeError(f"wrong: {err}")
    flops = 2 * M * N * K
    best_d, best_r, rows = (1e9, ""), (1e9, ""), []
    for bm, bn, bk, w in CANDS:
        if bm > max(M, 16) * 8: continue
        name = f"{bm}x{bn}x{bk} w{w}"
        try:
            fn = db.blk_matmul(base, a, b, c, bm, bn, bk, w)
            t = timed(fn, check)
        except Exception as e:
            print(f"  {M}x{N}x{K} {name}: {str(e).splitlines()[0][:90]}", flush=True); continue
        kern = base.kernel("matmul.blk", "matmul", ["T=f16", f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"BLOCK_K={bk}", "GROUP_M=8"], w, 0, None)
        args = [(db.PTR, a.data_ptr()), (db.PTR, b.data_ptr()), (db.PTR, c.data_ptr()), (db.I32, M), (db.I32, N), (db.I32, K),
                (db.I32, a.stride(0)), (db.I32, a.stride(1)), (db.I32, b.stride(0)), (db.I32, b.stride(1)), (db.I32, c.stride(0)), (db.I32, c.stride(1))]
        plan = plan_of(base, kern, args)
        best_d = min(best_d, (t, name))
        tr = t
        if "TMA from thread 0" in plan and w == 4:
            t2 = timed(db.blk_matmul(notma, a, b, c, bm, bn, bk, w), check)
            rows.append(f"  {M}x{N}x{K} {name}: TMA from thread 0 {flops/t/1e9:.0f}, cp.async {flops/t2/1e9:.0f} TFLOP/s ({t/t2:.2f}x)")
            tr = t2
        best_r = min(best_r, (tr, name))
    for r in rows: print(r, flush=True)
    print(f"{M}x{N}x{K}: best now {flops/best_d[0]/1e9:.0f} ({best_d[1]}), with the rule {flops/best_r[0]/1e9:.0f} ({best_r[1]})", flush=True)

for S, D in [(4096, 64), (4096, 128)]:
    for causal in (False, True):
        Z, H = 4, 32 if D == 64 else 16
        q, k, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o = torch.empty_like(ref); lse = torch.empty(Z, H, S, device="cuda", dtype=torch.float32)
        def check():
            if (o.float() - ref.float()).abs().max().item() > 2e-3: raise RuntimeError("wrong")
        flops = 4 * Z * H * S * S * D / (2 if causal else 1)
        for bm, bn, w in [(128, 64, 4), (64, 64, 4), (64, 128, 4), (128, 32, 4), (128, 128, 4)]:
            try:
                t = timed(db.blk_attention(base, q, k, v, o, lse, causal, bm, bn, w), check)
            except Exception as e:
                print(f"  attn S={S} D={D} {bm}x{bn} w{w}: {str(e).splitlines()[0][:80]}"); continue
            kern = base.kernel("attention.blk", "attn_fwd", [f"HEAD_DIM={D}", f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"CAUSAL={'true' if causal else 'false'}"], w, 0, None)
            args = [(db.PTR, q.data_ptr()), (db.PTR, k.data_ptr()), (db.PTR, v.data_ptr()), (db.PTR, o.data_ptr()), (db.PTR, lse.data_ptr()), (db.F32, 1.0 / math.sqrt(D)), (db.I32, S)]
            plan = plan_of(base, kern, args)
            how = "TMA from thread 0" if "TMA from thread 0" in plan else "producer" if "producer warpgroup:" in plan else "other"
            extra = ""
            if how == "TMA from thread 0":
                t2 = timed(db.blk_attention(notma, q, k, v, o, lse, causal, bm, bn, w), check)
                extra = f", cp.async {flops/t2/1e9:.0f} ({t/t2:.2f}x)"
            print(f"  attn S={S} D={D} causal={causal} {bm}x{bn} w{w} [{how}]: {flops/t/1e9:.0f}{extra}", flush=True)
