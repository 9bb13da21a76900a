#!/usr/bin/env python3
"""attention_varlen_bench.py: attention_varlen.blk's forward on a batch of sequences of
different lengths packed without padding, beside PyTorch's own variable-length paths in one
process, with attention_bench.py's timer (triton.testing.do_bench: L2 flushed, median):
SDPA on nested (jagged) tensors with each backend forced, and torch.nn.attention.varlen's
varlen_attn where this PyTorch has it.

    BLK_LIBRARY=build-static/libblk.so.0 PYTHONPATH=python:bench python3 bench/attention_varlen_bench.py \\
        [--configs 128x128w8,...] [--out FILE]

Batches: about 16k tokens of fp16, 2048 / D heads, lengths drawn uniformly from [S/4, 7S/4]
(seeded) for a mean S of 512, 2048 and 8192; D 64 and 128; causal or not. Every output (Out;
blk's LSE is checked by run_examples, not here) is checked against SDPA's math backend in f32,
sequence by sequence, before it is timed; its
largest error is printed beside its rate (TFLOP/s of the work the lengths need: 4 n^2 D a
head and sequence, half that causal).
"""
import argparse
import inspect
import math
import os
import random

import torch
import triton
from torch.nn.attention import SDPBackend, sdpa_kernel

import attention_bench as ab
import blk
from attention_fwd_ab import parse_configs

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dsl_examples")
TOKENS = 16384


def lengths(mean, seed):
    """Lengths from [mean/4, 7 mean/4] until they hold TOKENS tokens (the last one cut)."""
    rng, out = random.Random(seed), []
    while sum(out) < TOKENS:
        out.append(min(rng.randint(mean // 4, 7 * mean // 4), TOKENS - sum(out)))
    return out


def reference(q, k, v, lens, causal):
    """SDPA math in f32, one sequence at a time: packed [total, H, D]."""
    out, at = torch.empty_like(q, dtype=torch.float32), 0
    with sdpa_kernel(SDPBackend.MATH):
        for n in lens:
            s = slice(at, at + n)
            o = torch.nn.functional.scaled_dot_product_attention(
                *(x[s].transpose(0, 1).float().unsqueeze(0) for x in (q, k, v)), is_causal=causal)
            out[s] = o.squeeze(0).transpose(0, 1)
            at += n
    return out


def peers(q, k, v, cu, lens, causal):
    """name -> a call giving packed [total, H, D] output, for each PyTorch path there is."""
    offsets = cu.to(torch.int64)
    nested = [torch.nested.nested_tensor_from_jagged(x, offsets).transpose(1, 2) for x in (q, k, v)]
    calls = {}
    for name, backend in (("nested cudnn", SDPBackend.CUDNN_ATTENTION), ("nested flash", SDPBackend.FLASH_ATTENTION),
                          ("nested efficient", SDPBackend.EFFICIENT_ATTENTION)):
        def call(backend=backend):
            with sdpa_kernel(backend):
                o = torch.nn.functional.scaled_dot_product_attention(*nested, is_causal=causal)
            return o.transpose(1, 2).values()
        calls[name] = call
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError:
        return calls
    longest = max(lens)
    # causal: window_size (-1, 0) in torch 2.11, is_causal in earlier ones
    if "window_size" in inspect.signature(varlen_attn).parameters:
        mode = {"window_size": (-1, 0) if causal else (-1, -1)}
    else:
        mode = {"is_causal": causal}
    calls["varlen_attn"] = lambda: varlen_attn(q, k, v, cu, cu, longest, longest, **mode)
    return calls


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", type=parse_configs, help="BMxBNwW,... (default: 128x64w4,128x128w8 at D = 64; "
                    "128x128w8,128x64w8 at D = 128)")
    ap.add_argument("--out")
    args = ap.parse_args()
    fwd = blk.compile(os.path.join(EXAMPLES, "attention_varlen.blk"))["attn_fwd_varlen"]
    peer_names = ["nested cudnn", "nested flash", "nested efficient", "varlen_attn"]
    lines = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; triton.testing.do_bench "
             f"(L2 flushed, median); fp16, {TOKENS} tokens a batch packed without padding, 2048/D heads, lengths "
             f"uniform in [S/4, 7S/4]; TFLOP/s (largest |x - SDPA math in f32|)", "",
             "| mean S | sequences | D | causal | blk config | blk | " + " | ".join(peer_names) + " | blk / best |",
             "|---|---|---|---|---|---|" + "---|" * len(peer_names) + "---|"]
    print("\n".join(lines), flush=True)
    for D in (64, 128):
        configs = args.configs or ([(128, 64, 4), (128, 128, 8)] if D == 64 else [(128, 128, 8), (128, 64, 8)])
        for mean in (512, 2048, 8192):
            lens = lengths(mean, seed=mean + D)
            H, total = 2048 // D, sum(lens)
            cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), device="cuda", dtype=torch.int32)
            torch.manual_seed(0)
            q, k, v = (torch.randn(total, H, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
            for causal in (False, True):
                ref = reference(q, k, v, lens, causal)
                tol = 2e-3 + 2e-3 * ref.abs().max().item()
                flops = sum(4 * n * n * D * H for n in lens) / (2 if causal else 1)
                tf = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
                cells = {}
                for name, call in peers(q, k, v, cu, lens, causal).items():
                    try:
                        err = ab.max_err(call(), ref)
                    except RuntimeError as e:  # a backend that refuses these inputs
                        print(f"  {name}: {str(e).splitlines()[0][:120]}", flush=True)
                        continue
                    if not err < tol:
                        raise SystemExit(f"{name} S={mean} D={D} causal={causal}: error {err:.3g}")
                    cells[name] = (tf(ab.timed(call)), err)
                best = max((c[0] for c in cells.values()), default=None)
                for bm, bn, w in configs:
                    o = torch.empty_like(q)
                    lse = torch.empty(H, total, device="cuda", dtype=torch.float32)
                    run = lambda: fwd[(triton.cdiv(max(lens), bm), H, len(lens))](  # noqa: E731
                        q, k, v, o, lse, cu, 1.0 / math.sqrt(D), H, HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn,
                        CAUSAL=causal, num_warps=w)
                    if not ab.compiles(run, "forward", (bm, bn, w)):
                        continue
                    err = ab.max_err(o, ref)
                    if not err < tol:
                        raise SystemExit(f"blk {bm}x{bn} w{w} S={mean} D={D} causal={causal}: error {err:.3g}")
                    rate = tf(ab.timed(run))
                    row = (f"| {mean} | {len(lens)} | {D} | {'yes' if causal else 'no'} | {bm}x{bn} w{w} | "
                           f"{ab.cell((rate, err))} | " + " | ".join(ab.cell(cells.get(p)) for p in peer_names) +
                           (f" | {rate / best:.2f} |" if best else " | - |"))
                    lines.append(row)
                    print(row, flush=True)
            del q, k, v
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
