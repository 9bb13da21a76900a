#!/usr/bin/env python3
"""attention_fwd_ab.py: attention.blk's forward built two ways, in one process beside SDPA's
cuDNN and flash backends, with attention_bench.py's timer (triton.testing.do_bench: L2 flushed,
median): A, as it is; B, with a compile flag on (--flag NAME[,NAME...]: ping_pong, say) or from another
version of the file (--source FILE: A is then dsl_examples/attention.blk, B the FILE).

    BLK_LIBRARY=build-static/libblk.so.0 PYTHONPATH=python python3 bench/attention_fwd_ab.py \\
        (--flag NAME | --source FILE) [--configs 128x128w8,...] [--quick] [--out FILE]

Shapes as attention_bench.py's: fp16, 16k tokens a batch, 2048 / D heads, S in 1k, 4k, 16k,
D in 64 and 128, causal or not; blk at each of the configurations (BLOCK_M x BLOCK_N on W
warps; attention_bench.py's forward ones by default). Every output is checked against SDPA's
math backend in f32 before it is timed; its largest error is printed beside its rate (TFLOP/s
as attention_bench.py counts them).
"""
import argparse
import os
import re
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attention_bench as ab  # noqa: E402
import blk  # noqa: E402  (attention_bench put the package on the path)
from attention_fp8_bench import reference as reference_forward  # noqa: E402  (SDPA math in f32)

def parse_configs(text):
    """'128x128w8,128x64w8' -> [(128, 128, 8), (128, 64, 8)]"""
    out = []
    for item in text.split(","):
        m = re.fullmatch(r"(\d+)x(\d+)w(\d+)", item.strip())
        if not m:
            raise SystemExit(f"--configs: '{item}' is not BMxBNwW")
        out.append(tuple(int(x) for x in m.groups()))
    return out


def flag_list(text):
    """'ping_pong,overlap_dots' -> ['ping_pong', 'overlap_dots'], each one of blk.FLAGS"""
    names = [f.strip() for f in text.split(",")]
    for f in names:
        if f not in blk.FLAGS:
            raise argparse.ArgumentTypeError(f"'{f}' is not a compile flag ({', '.join(blk.FLAGS)})")
    return names


def main():
    ap_ = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = ap_.add_mutually_exclusive_group(required=True)
    which.add_argument("--flag", type=flag_list, help="B: A with these compile flags on (NAME[,NAME...]: blk.FLAGS)")
    which.add_argument("--source", help="B: the forward of this file (A: dsl_examples/attention.blk)")
    ap_.add_argument("--configs", help="BMxBNwW,... (default: attention_bench.py's forward configurations)")
    ap_.add_argument("--out")
    ap_.add_argument("--quick", action="store_true", help="S = 4096 and 16384, D = 128 only")
    ap_.add_argument("--dims", default="64,128", help="head dims, D,... (default 64,128; 256 takes --configs)")
    args = ap_.parse_args()
    configs = parse_configs(args.configs) if args.configs else ab.FWD_CONFIGS
    a = ab.BlkAttention()
    if args.flag:
        b, b_name = ab.BlkAttention(**{f: True for f in args.flag}), " and ".join(args.flag)
    else:
        b, b_name = ab.BlkAttention(), os.path.basename(args.source)
        b.fwd = blk.compile(args.source)["attn_fwd"]
    builds = {"A": a, "B": b}
    lines = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; triton.testing.do_bench "
             f"(L2 flushed, median); fp16, 16k tokens a batch, 2048/D heads; TFLOP/s (largest |x - SDPA math "
             f"in f32|); A: dsl_examples/attention.blk as it is, B: {'with ' if args.flag else ''}{b_name}", "",
             "| S | D | causal | config | A | B | B / A | SDPA cudnn | SDPA flash | best blk / cudnn |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for D in ([128] if args.quick else [int(d) for d in args.dims.split(",")]):
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
                for cfg in configs:
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
                    ra, rb = cells["A"], cells["B"]
                    row = (f"| {S} | {D} | {'yes' if causal else 'no'} | {ab.fmt_cfg(cfg)} | {ab.cell(ra)} | "
                           f"{ab.cell(rb)} | {rb[0] / ra[0]:.3f} | {ab.cell(sdpa['cudnn'])} | {ab.cell(sdpa['flash'])} | "
                           f"{max(ra[0], rb[0]) / sdpa['cudnn'][0]:.2f} |")
                    lines.append(row)
                    print(row, flush=True)
                del q, k, v, ref
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
