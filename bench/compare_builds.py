# Times the same kernels built by several libblk builds, or one build with different compile
# options, in one process on one GPU with dot_bench.py's timer (kernel time through CUDA graphs,
# L2 flushed): an A/B of a compiler change.
#   python3 bench/compare_builds.py LIBBLK_A LIBBLK_B ...   (BLK_CACHE_DISABLE=1, so each build compiles)
#   python3 bench/compare_builds.py LIBBLK LIBBLK:no_warp_specialize   (a dot_bench.Blk keyword set to 1:
#                                                                       no_tma, no_warp_specialize, persistent)
#   --only SUBSTRING (before the builds): only the cases whose name holds it
# Attention, matmul and fp8 (matmul_fp8.blk on e4m3, its sums promoted every 128 terms unless the
# name says) print TFLOP/s; layer_norm_fwd (4096 rows, f16) GB/s read and written.
import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import dot_bench as db
db.FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
args = sys.argv[1:]
only = ""
if args[:1] == ["--only"]:
    only, args = args[1], args[2:]
libs = args
q64, k64, v64 = (torch.randn(4, 32, 4096, 64, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
o64, l64 = torch.empty_like(q64), torch.empty(4, 32, 4096, device="cuda", dtype=torch.float32)
q, k, v = (torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
o, l = torch.empty_like(q), torch.empty(4, 16, 4096, device="cuda", dtype=torch.float32)
q96, k96, v96, do96 = (torch.randn(4, 21, 4096, 96, device="cuda", dtype=torch.float16) * 0.5 for _ in range(4))
o96, l96, dl96 = torch.empty_like(q96), *(torch.empty(4, 21, 4096, device="cuda", dtype=torch.float32) for _ in range(2))
dq96, dk96, dv96 = (torch.empty_like(q96) for _ in range(3))
a, b = (torch.randn(4096, 4096, device="cuda", dtype=torch.float16) for _ in range(2))
c = torch.empty_like(a)
a1, b1 = (torch.randn(1024, 1024, device="cuda", dtype=torch.float16) for _ in range(2))
c1 = torch.empty_like(a1)
a2, b2 = (torch.randn(2048, 2048, device="cuda", dtype=torch.float16) for _ in range(2))
c2 = torch.empty_like(a2)
a8, b8 = (torch.randn(8192, 8192, device="cuda", dtype=torch.float16) for _ in range(2))
c8 = torch.empty_like(a8)
xl = torch.randn(4096, 15872, device="cuda", dtype=torch.float16)
yl, wl, bl = torch.empty_like(xl), torch.randn(15872, device="cuda", dtype=torch.float16), torch.randn(15872, device="cuda", dtype=torch.float16)
ml, rl = torch.empty(4096, device="cuda"), torch.empty(4096, device="cuda")


from fp8_bench import blk_matmul_fp8  # noqa: E402
f8a = {n: (torch.randn(n, n, device="cuda") * 0.5).to(torch.float8_e4m3fn) for n in (4096, 8192)}
f8b = {n: (torch.randn(n, n, device="cuda") * 0.5).to(torch.float8_e4m3fn).t() for n in (4096, 8192)}  # column-major
f8c = {n: torch.empty(n, n, device="cuda", dtype=torch.bfloat16) for n in (4096, 8192)}
one = torch.ones((), device="cuda")


def fp8(B, n, bm, bn, bk, warps, stages=0, promote=128):
    """matmul_fp8.blk on n^3 e4m3, its sums promoted every `promote` terms."""
    return blk_matmul_fp8(B, f8a[n], f8b[n], f8c[n], one, one, bm, bn, bk, warps, stages, promote=promote)


def layer_norm(B, n, block, warps):
    k = B.kernel("layernorm.blk", "layer_norm_fwd", ["T=f16", f"BLOCK_SIZE={block}"], warps)
    args = [(db.PTR, t.data_ptr()) for t in (xl, yl, wl, bl, ml, rl)] + [(db.I32, 15872), (db.I32, n), (db.F32, 1e-5)]
    return lambda: B.launch(k, (4096, 1, 1), args)


blks = [db.Blk(p.split(":")[0], **{o: True for o in p.split(":")[1:]}) for p in libs]
cases = [("attn D=64 64x64 w4", lambda B: db.blk_attention(B, q64, k64, v64, o64, l64, False, 64, 64, 4), 4 * 4 * 32 * 4096**2 * 64),
         ("attn D=64 causal", lambda B: db.blk_attention(B, q64, k64, v64, o64, l64, True, 64, 64, 4), 2 * 4 * 32 * 4096**2 * 64),
         ("attn D=128 128x128 w8", lambda B: db.blk_attention(B, q, k, v, o, l, False, 128, 128, 8), 4 * 4 * 16 * 4096**2 * 128),
         ("attn D=128 128x64 w8", lambda B: db.blk_attention(B, q, k, v, o, l, False, 128, 64, 8), 4 * 4 * 16 * 4096**2 * 128),
         ("attn D=128 causal 128x128 w8", lambda B: db.blk_attention(B, q, k, v, o, l, True, 128, 128, 8), 2 * 4 * 16 * 4096**2 * 128),
         ("attn D=64 128x64 w8", lambda B: db.blk_attention(B, q64, k64, v64, o64, l64, False, 128, 64, 8), 4 * 4 * 32 * 4096**2 * 64),
         ("attn D=64 causal 128x64 w4", lambda B: db.blk_attention(B, q64, k64, v64, o64, l64, True, 128, 64, 4), 2 * 4 * 32 * 4096**2 * 64),
         ("attn D=128 64x64 w4", lambda B: db.blk_attention(B, q, k, v, o, l, False, 64, 64, 4), 4 * 4 * 16 * 4096**2 * 128),
         ("attn D=128 causal 64x64 w4", lambda B: db.blk_attention(B, q, k, v, o, l, True, 64, 64, 4), 2 * 4 * 16 * 4096**2 * 128),
         ("attn D=64 128x128 w8", lambda B: db.blk_attention(B, q64, k64, v64, o64, l64, False, 128, 128, 8), 4 * 4 * 32 * 4096**2 * 64),
         ("attn D=64 128x32 w4", lambda B: db.blk_attention(B, q64, k64, v64, o64, l64, False, 128, 32, 4), 4 * 4 * 32 * 4096**2 * 64),
         ("attn D=64 causal 128x32 w4", lambda B: db.blk_attention(B, q64, k64, v64, o64, l64, True, 128, 32, 4), 2 * 4 * 32 * 4096**2 * 64),
         ("attn D=96 128x128 w8", lambda B: db.blk_attention(B, q96, k96, v96, o96, l96, False, 128, 128, 8), 4 * 4 * 21 * 4096**2 * 96),
         ("attn D=96 128x64 w8", lambda B: db.blk_attention(B, q96, k96, v96, o96, l96, False, 128, 64, 8), 4 * 4 * 21 * 4096**2 * 96),
         ("attn D=96 64x64 w4", lambda B: db.blk_attention(B, q96, k96, v96, o96, l96, False, 64, 64, 4), 4 * 4 * 21 * 4096**2 * 96),
         ("attn D=96 causal 128x128 w8", lambda B: db.blk_attention(B, q96, k96, v96, o96, l96, True, 128, 128, 8), 2 * 4 * 21 * 4096**2 * 96),
         ("attn_bwd D=96 64x64 w4", lambda B: db.blk_attention_bwd(B, q96, k96, v96, o96, do96, l96, dl96, dq96, dk96, dv96, False, 64, 64, 4), 2.5 * 4 * 4 * 21 * 4096**2 * 96),
         ("attn D=64 causal 64x32 w4", lambda B: db.blk_attention(B, q64, k64, v64, o64, l64, True, 64, 32, 4), 2 * 4 * 32 * 4096**2 * 64),
         ("layer_norm_fwd 15872 w16", lambda B: layer_norm(B, 15872, 16384, 0), 2 * 2 * 4096 * 15872),
         ("layer_norm_fwd 15872 w8", lambda B: layer_norm(B, 15872, 16384, 8), 2 * 2 * 4096 * 15872),
         ("layer_norm_fwd 8192", lambda B: layer_norm(B, 8192, 8192, 0), 2 * 2 * 4096 * 8192),
         ("layer_norm_fwd 4096", lambda B: layer_norm(B, 4096, 4096, 0), 2 * 2 * 4096 * 4096),
         ("matmul 1024 64x128x64 w4", lambda B: db.blk_matmul(B, a1, b1, c1, 64, 128, 64, 4), 2 * 1024**3),
         ("matmul 1024 64x64x32 w4", lambda B: db.blk_matmul(B, a1, b1, c1, 64, 64, 32, 4), 2 * 1024**3),
         ("matmul 2048 128x256x64 w8", lambda B: db.blk_matmul(B, a2, b2, c2, 128, 256, 64, 8), 2 * 2048**3),
         ("matmul 2048 128x128x64 w8", lambda B: db.blk_matmul(B, a2, b2, c2, 128, 128, 64, 8), 2 * 2048**3),
         ("matmul 4096 128x128x64 w8", lambda B: db.blk_matmul(B, a, b, c, 128, 128, 64, 8), 2 * 4096**3),
         ("matmul 4096 128x256x64 w8", lambda B: db.blk_matmul(B, a, b, c, 128, 256, 64, 8), 2 * 4096**3),
         ("matmul 8192 128x256x64 w8", lambda B: db.blk_matmul(B, a8, b8, c8, 128, 256, 64, 8), 2 * 8192**3),
         ("fp8 4096 128x128x256 w8", lambda B: fp8(B, 4096, 128, 128, 256, 8), 2 * 4096**3),
         ("fp8 4096 128x128x256 w8 s2", lambda B: fp8(B, 4096, 128, 128, 256, 8, 2), 2 * 4096**3),
         ("fp8 4096 64x128x256 w4", lambda B: fp8(B, 4096, 64, 128, 256, 4), 2 * 4096**3),
         ("fp8 4096 128x128x128 w8", lambda B: fp8(B, 4096, 128, 128, 128, 8), 2 * 4096**3),
         ("fp8 4096 128x128x128 w8 s5 p64", lambda B: fp8(B, 4096, 128, 128, 128, 8, 5, 64), 2 * 4096**3),
         ("fp8 8192 128x128x256 w8", lambda B: fp8(B, 8192, 128, 128, 256, 8), 2 * 8192**3),
         ("fp8 8192 64x128x256 w4", lambda B: fp8(B, 8192, 64, 128, 256, 4), 2 * 8192**3)]
for name, mk, flops in [c for c in cases if only in c[0]]:
    for rep in range(2):
        for p, B in zip(libs, blks):
            t = db.kernel_time(mk(B))
            rate = f"{flops / t / 1e6:.0f} GB/s" if name.startswith("layer_norm") else f"{flops / t / 1e9:.0f} TFLOP/s"
            print(f"{name:28s} {os.path.basename(p):36s} rep {rep}: {t:.3f} ms {rate}", flush=True)
