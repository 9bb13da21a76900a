#!/usr/bin/env python3
"""ping_pong_ab.py: attention.blk's forward with and without ping-pong (the consumer
warpgroups of a producer loop taking turns to issue their dots; blkc --ping-pong, the compile
flag ping_pong), in one process beside SDPA's cuDNN and flash backends, same timer as attention_bench.py
(triton.testing.do_bench: L2 flushed, median).

    BLK_LIBRARY=build-static/libblk.so.0 PYTHONPATH=python python3 bench/ping_pong_ab.py [--out FILE]

Shapes as attention_bench.py's: fp16, 16k tokens a batch, 2048 / D heads, S in 1k, 4k, 16k,
D in 64 and 128, causal or not; blk at the 8-warp configurations that get a producer
warpgroup (BLOCK_M x BLOCK_N on 8 warps). Every output is checked against SDPA's math backend
in f32 before it is timed; its largest error is printed beside its rate (TFLOP/s as
attention_bench.py counts them).
"""
import argparse
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attention_bench as ab  # noqa: E402
from attention_fp8_bench import reference as reference_forward  # noqa: E402  (SDPA math in f32)

CONFIGS = [(128, 128, 8), (128, 64, 8)]


def main():
    ap_ = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap_.add_argument("--out")
    ap_.add_argument("--quick", action="store_true", help="S = 4096 and 16384, D = 128 only")
    args = ap_.parse_args()
    builds = {"ping-pong": ab.BlkAttention(ping_pong=True), "no ping-pong": ab.BlkAttention()}
    lines = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; triton.testing.do_bench "
             f"(L2 flushed, median); fp16, 16k tokens a batch, 2048/D heads; TFLOP/s (largest |x - SDPA math "
             f"in f32|)", "",
             "| S | D | causal | config | ping-pong | no ping-pong | ratio | SDPA cudnn | SDPA flash | "
             "best blk / cudnn |", "|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for D in ([128] if args.quick else [64, 128]):
        for S in ([4096, 16384] if args.quick else [1024, 4096, 16384]):
            for causal in (False, True):
                B, H = 16384 // S, 2048 // D
                torch.manual_seed(0)
                q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
                ref = reference_forward(q, k, v, causal)
                tol = 2e-3 + 2e-3 * ref.abs().max().item()
                flops = 4 * B * H * S * S * D / (2 if causal else 1)
                tf = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
                sdpa = {}
                for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
                    with sdpa_kernel(backend):
                        f = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
                        err = ab.max_err(f(), ref)
                        if not err < tol:
                            raise SystemExit(f"SDPA {name} S={S} D={D}: error {err:.3g}")
                        sdpa[name] = (tf(ab.timed(f)), err)
                for cfg in CONFIGS:
                    cells = {}
                    for label, ba in builds.items():
                        o = torch.empty_like(q)
                        lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
                        f = ba.forward(q, k, v, o, lse, causal, cfg)
                        if not ab.compiles(f, "forward", cfg):
                            continue
                        err = ab.max_err(o, ref)
                        if not err < tol:
                            raise SystemExit(f"blk {label} {ab.fmt_cfg(cfg)} S={S} D={D} causal={causal}: error {err:.3g}")
                        cells[label] = (tf(ab.timed(f)), err)
                    if len(cells) < 2:
                        continue
                    on, off = cells["ping-pong"], cells["no ping-pong"]
                    row = (f"| {S} | {D} | {'yes' if causal else 'no'} | {ab.fmt_cfg(cfg)} | {ab.cell(on)} | "
                           f"{ab.cell(off)} | {on[0] / off[0]:.3f} | {ab.cell(sdpa['cudnn'])} | {ab.cell(sdpa['flash'])} | "
                           f"{max(on[0], off[0]) / sdpa['cudnn'][0]:.2f} |")
                    lines.append(row)
                    print(row, flush=True)
                del q, k, v, ref
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
