#!/usr/bin/env python3
"""attention_fp8_bench.py: blkc's fp8 attention forward (dsl_examples/attention_fp8.blk: e4m3 Q, K
and V with per-tensor scales, Out in bf16) beside its f16 forward (attention.blk) and PyTorch's
SDPA on f16 with each backend forced: one process, one GPU, one timer
(triton.testing.do_bench, L2 flushed, median).

    BLK_LIBRARY=... PYTHONPATH=python python3 bench/attention_fp8_bench.py [--quick] [--configs ...] [--out FILE]

Inputs: q, k, v ~ N(0, 1) in f16, each quantized to e4m3 with the per-tensor scale amax / 448
(what an fp8 inference stack does); V transposed once on the host (Vt [B, H, D, S]: the k of p V
must be contiguous for 8-bit wgmma, as Triton's tutorial 06 does for fp8). The fp8 forward's
error is against SDPA's math backend in f32 on the dequantized inputs (so it measures the kernel:
p rounded to e4m3 and fp8 sums, not the inputs' quantization); the f16 providers' against the
same on the f16 inputs. 16k tokens a batch, 2048 / D heads; TFLOP/s as tutorial 06 counts them
(4 B H S^2 D, halved when causal). blk fp8 runs twice: p V's sums promoted (added to Out's f32
sums every 128 keys, attention_fp8.blk's default) and not (PROMOTE = 2^30: the tensor cores sum
into them, as Triton's fp8 dots do by default on Hopper). No fp8 attention peer runs on the
machine: SDPA has none and FlashAttention-3 is not installed.
"""
import argparse
import math
import os
import re
import sys

import torch
import triton
import triton.testing
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import blk  # noqa: E402
from attention_bench import BACKENDS, BlkAttention, best_forward, compiles, max_err, timed  # noqa: E402
from dot_bench import write_report  # noqa: E402

EXAMPLES = os.path.join(HERE, "..", "dsl_examples")
E4M3_MAX = 448.0
# (BLOCK_M, BLOCK_N, warps[, stages[, programs an SM]]): 64 query rows a warpgroup, as wgmma takes them
FP8_CONFIGS = [(128, 128, 8), (128, 64, 8), (128, 64, 4), (64, 128, 4), (128, 128, 4), (256, 64, 8), (256, 128, 8),
               (64, 128, 4, 2), (64, 64, 4, 2), (128, 128, 8, 2), (64, 128, 4, 2, 2)]
PROMOTES = [128, 1 << 30]


def fmt_cfg(c):
    return f"{c[0]}x{c[1]} w{c[2]}" + (f" s{c[3]}" if len(c) > 3 else "") + (f" {c[4]}/SM" if len(c) > 4 else "")


def quantize(x):
    """x as e4m3 with a per-tensor scale: (x8, scale), x ~ x8 * scale."""
    scale = (x.abs().amax().float() / E4M3_MAX).item()
    return (x.float() / scale).to(torch.float8_e4m3fn), scale


def reference(q, k, v, causal):
    """SDPA's math backend in f32, a few heads at a time (S^2 scores of f32 each)."""
    B, H, S, D = q.shape
    heads = max(1, min(H, (1 << 31) // (S * S * 4)))
    out = torch.empty(B, H, S, D, device="cuda", dtype=torch.float32)
    with sdpa_kernel(SDPBackend.MATH):
        for b in range(B):
            for h in range(0, H, heads):
                sl = (b, slice(h, h + heads))
                out[sl] = torch.nn.functional.scaled_dot_product_attention(q[sl].float(), k[sl].float(),
                                                                           v[sl].float(), is_causal=causal)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="S = 16384, D = 128 only")
    ap.add_argument("--configs", help="fp8 configurations to try, as BMxBNwW[sS[bB]],... (default: all)")
    ap.add_argument("--out")
    args = ap.parse_args()
    configs = FP8_CONFIGS
    if args.configs:
        configs = [tuple(int(x) for x in re.findall(r"\d+", c)) for c in args.configs.split(",")]
    fp8 = blk.compile(os.path.join(EXAMPLES, "attention_fp8.blk"))["attn_fwd_fp8"]
    ba = BlkAttention()
    lines = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}, triton {triton.__version__}; "
             f"triton.testing.do_bench (L2 flushed, median); 16k tokens a batch, 2048/D heads; TFLOP/s as "
             f"tutorial 06 counts them; err: largest |x - SDPA math in f32| (fp8: on the dequantized inputs)", "",
             "| S | D | causal | blk fp8 TFLOP/s (err, config) | blk fp8 not promoted TFLOP/s (err, config) | "
             "blk f16 TFLOP/s | " + " | ".join(f"SDPA {n} f16" for n, _ in BACKENDS) +
             " | fp8 / blk f16 | fp8 / best SDPA | not promoted / blk f16 | not promoted / best SDPA |",
             "|---|---|---|---|---|---|" + "---|" * len(BACKENDS) + "---|---|---|---|"]
    shapes = [(16384, 128)] if args.quick else [(S, D) for D in (64, 128) for S in (1024, 4096, 16384)]
    for S, D in shapes:
        for causal in (False, True):
            B, H = 16384 // S, 2048 // D
            torch.manual_seed(0)
            q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
            (q8, sq), (k8, sk), (v8, sv) = quantize(q), quantize(k), quantize(v)
            vt8 = v8.transpose(2, 3).contiguous()
            flops = 4 * B * H * S * S * D / (2 if causal else 1)
            tf = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
            ref8 = reference(q8.float() * sq, k8.float() * sk, v8.float() * sv, causal)
            vmax = (v8.float() * sv).abs().max().item()
            o = torch.empty(B, H, S, D, device="cuda", dtype=torch.bfloat16)
            lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
            best = {}
            for promote in PROMOTES:
                for cfg in configs:
                    bm, bn, w = cfg[:3]
                    opts = {"num_stages": cfg[3]} if len(cfg) > 3 else {}
                    if len(cfg) > 4:
                        opts["min_blocks_per_sm"] = cfg[4]
                    f = lambda: fp8[(triton.cdiv(S, bm), B * H)](q8, k8, vt8, o, lse, sq, sk, sv,  # noqa: E731
                                                                1.0 / math.sqrt(D), S, HEAD_DIM=D, BLOCK_M=bm,
                                                                BLOCK_N=bn, CAUSAL=causal, PROMOTE=promote,
                                                                num_warps=w, **opts)
                    o.fill_(float("nan"))
                    if not compiles(f, "fp8 forward", cfg):
                        continue
                    err = max_err(o, ref8)
                    # p rounded to e4m3 moves each weight by up to 2^-4 of itself: Out by up to 2^-4 of
                    # the largest |v| (run_examples checks each element against its own bound)
                    if not err < 0.07 * vmax:
                        raise SystemExit(f"blk fp8 forward {fmt_cfg(cfg)} PROMOTE={promote} S={S} D={D} "
                                         f"causal={causal}: error {err:.3g}")
                    ms = timed(f)
                    print(f"  fp8 {fmt_cfg(cfg)} PROMOTE={promote} S={S} D={D} causal={causal}: {tf(ms):.0f} "
                          f"TFLOP/s, err {err:.2e}", file=sys.stderr)
                    if promote not in best or ms < best[promote][0]:
                        best[promote] = (ms, cfg, err)
            del ref8
            ref16 = reference(q, k, v, causal)
            o16 = torch.empty_like(q)
            b16 = best_forward(ba, q, k, v, o16, lse, causal, ref16, f"S={S} D={D}")
            sdpa = []
            for name, backend in BACKENDS:
                try:
                    with sdpa_kernel(backend):
                        def call():
                            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        err = max_err(call(), ref16)
                        sdpa.append((tf(timed(call)), err))
                except RuntimeError as e:
                    sdpa.append(None)
                    print(f"  SDPA {name}: {str(e).splitlines()[0][:120]}", file=sys.stderr)
            best_sdpa = max((c[0] for c in sdpa if c), default=None)
            r16 = tf(b16[0]) if b16 else None
            cells = []
            for promote in PROMOTES:
                b = best.get(promote)
                cells += [f"{tf(b[0]):.0f} ({b[2]:.1e}, {fmt_cfg(b[1])})" if b else "-"]
            cells += [f"{r16:.0f}" if r16 else "-"] + [f"{c[0]:.0f}" if c else "-" for c in sdpa]
            for promote in PROMOTES:
                b = best.get(promote)
                cells += [f"{tf(b[0]) / r16:.2f}" if b and r16 else "-",
                          f"{tf(b[0]) / best_sdpa:.2f}" if b and best_sdpa else "-"]
            lines.append(f"| {S} | {D} | {'yes' if causal else 'no'} | " + " | ".join(cells) + " |")
            del q, k, v, q8, k8, v8, vt8, ref16, o, o16
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
