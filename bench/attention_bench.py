#!/usr/bin/env python3
"""attention_bench.py: blk's attention forward and backward (dsl_examples/attention.blk,
attention_bwd.blk, through the Python package) beside PyTorch's scaled_dot_product_attention
with each backend forced, and Triton's tutorial 06 file as published: one process, one GPU,
one timer (triton.testing.do_bench: CUDA events, L2 flushed before each run, median).

    BLK_LIBRARY=build-static/libblk.so.0 PYTHONPATH=python \\
        python3 bench/attention_bench.py [--tutorial PATH] [--quick] [--out FILE] [--kernels] [--flag FLAG]...
        python3 bench/attention_bench.py --gqa [--out FILE]
        python3 bench/attention_bench.py --decode [--out FILE]

--tutorial PATH: Triton's python/tutorials/06-fused-attention.py (the triton-lang/triton
repository; the GPU machine's Triton package has no tutorials, so the file travels with the
command). Its backward is causal only (its dK/dV loop starts at the diagonal and its dQ loop
ends there), so it is timed for causal shapes only.

Shapes: fp16, 16k tokens a batch (B = 16384 / S), 2048 / D heads, S in 1k, 4k, 16k, D in 64
and 128, causal or not. TFLOP/s as the tutorial counts them: forward 4·B·H·S²·D, backward 2.5
times that, both halved when causal. Every output is checked against SDPA's math backend in
f32 (per head where S² would not fit) before it is timed; the largest absolute error of each
provider is printed beside its time. blk's backward is the faster of its two forms
(attention_bwd.blk): seven products a step in three kernels (Delta, dK/dV, dQ), each with the best
of its block configurations ("7: ..."), or five, dQ added into f32 sums by atomics ("5: ...");
--kernels also prints each kernel's time. --gqa: grouped-query and multi-query forwards instead
(attention.blk's GROUP: K and V read in place), against SDPA's backends with enable_gqa=True.
--decode: decode attention (attention_decode.blk), one query token a sequence against caches of
4k-32k tokens, in GB/s of K and V read, against SDPA's backends the same way.
"""
import argparse
import math
import os
import sys

import torch
import triton
import triton.testing
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import blk  # noqa: E402
import dot_bench  # noqa: E402  (its loader of Triton tutorial files)
from dot_bench import write_report as report  # noqa: E402

EXAMPLES = os.path.join(HERE, "..", "dsl_examples")
LOG2E = 1.4426950408889634
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
# blk block configurations: forward (BLOCK_M, BLOCK_N, warps); backward dK/dV (BLOCK_N keys a
# program, BLOCK_M queries a step, warps) and dQ (BLOCK_M queries a program, BLOCK_N keys a step)
FWD_CONFIGS = [(128, 64, 4), (128, 64, 8), (128, 128, 8), (64, 64, 4), (128, 32, 4)]
DKDV_CONFIGS = [(64, 64, 4), (128, 64, 8), (64, 32, 4), (128, 32, 8)]
DQ_CONFIGS = [(64, 64, 4), (128, 64, 8), (64, 32, 4), (128, 32, 8), (128, 128, 8)]
# the five-product backward's dK/dV/dQ kernel: (BLOCK_N keys a program, BLOCK_M queries a step, warps[,
# an occupancy target: programs an SM])
FUSED_CONFIGS = [(64, 64, 4), (128, 64, 8), (64, 32, 4), (128, 32, 8), (64, 32, 4, 3), (64, 64, 4, 3)]


def timed(fn):
    return triton.testing.do_bench(fn, warmup=10, rep=50)


def reference(q, k, v, do, causal):
    """SDPA's math backend in f32: the output and the three gradients, a few heads at a time."""
    B, H, S, D = q.shape
    heads = max(1, min(H, (1 << 31) // (S * S * 4)))
    out, grads = torch.empty_like(q, dtype=torch.float32), [torch.empty_like(q, dtype=torch.float32) for _ in range(3)]
    with sdpa_kernel(SDPBackend.MATH):
        for b in range(B):
            for h in range(0, H, heads):
                sl = (b, slice(h, h + heads))
                qf, kf, vf = (t[sl].float().requires_grad_() for t in (q, k, v))
                o = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=causal)
                g = torch.autograd.grad(o, (qf, kf, vf), do[sl].float())
                out[sl] = o.detach()
                for dst, src in zip(grads, g):
                    dst[sl] = src
    return out, grads


def max_err(got, want):
    return (got.float() - want).abs().max().item()


padded_head = dot_bench.padded_head  # BLOCK_D for a head dim that is not a power of two


class BlkAttention:
    def __init__(self, **flags):
        """flags: the compiler's (blk.FLAGS), for every kernel: no_bulk_reduce=True, say."""
        self.fwd = blk.compile(os.path.join(EXAMPLES, "attention.blk"), **flags)["attn_fwd"]
        bwd = blk.compile(os.path.join(EXAMPLES, "attention_bwd.blk"), **flags)
        self.delta, self.dkdv, self.dq = bwd["attn_bwd_delta"], bwd["attn_bwd_dkdv"], bwd["attn_bwd_dq"]
        self.prepare, self.dkdvdq, self.convert = bwd["attn_bwd_prepare"], bwd["attn_bwd_dkdvdq"], bwd["attn_bwd_dq_convert"]

    def fused_kernels(self, q, k, v, o, do, lse, delta, dq_acc, dq, dk, dv, causal, cfg):
        """The five-product backward: Delta and dQacc's zeros, dK/dV with dQ's shares added, dQ from dQacc."""
        B, H, S, D = q.shape
        scale = 1.0 / math.sqrt(D)
        kn, km, kw = cfg[:3]
        occupancy = {"min_blocks_per_sm": cfg[3]} if len(cfg) > 3 else {}

        def run_prepare():
            self.prepare[(triton.cdiv(S, 128), B * H)](o, do, delta, dq_acc, S, HEAD_DIM=D, BLOCK_M=128, num_warps=4,
                                                       **padded_head(D))

        def run_main():
            self.dkdvdq[(triton.cdiv(S, kn), B * H)](q, k, v, do, lse, delta, dk, dv, dq_acc, scale, S, HEAD_DIM=D,
                                                     BLOCK_M=km, BLOCK_N=kn, CAUSAL=causal, num_warps=kw, **occupancy,
                                                     **padded_head(D))

        def run_convert():
            self.convert[(triton.cdiv(S, 128), B * H)](dq_acc, dq, scale, S, HEAD_DIM=D, BLOCK_M=128, num_warps=4,
                                                       **padded_head(D))
        return run_prepare, run_main, run_convert

    def forward(self, q, k, v, o, lse, causal, cfg):
        B, H, S, D = q.shape
        bm, bn, w = cfg
        group = H // k.shape[1]  # query heads a K/V head (grouped-query attention)
        padded = padded_head(D)
        return lambda: self.fwd[(triton.cdiv(S, bm), B * H)](q, k, v, o, lse, 1.0 / math.sqrt(D), S, HEAD_DIM=D,
                                                            BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, GROUP=group,
                                                            num_warps=w, **padded)

    def backward_kernels(self, q, k, v, o, do, lse, delta, dq, dk, dv, causal, kv_cfg, q_cfg):
        B, H, S, D = q.shape
        scale = 1.0 / math.sqrt(D)
        kn, km, kw = kv_cfg
        qm, qn, qw = q_cfg

        def run_delta():
            self.delta[(triton.cdiv(S, 128), B * H)](o, do, delta, S, HEAD_DIM=D, BLOCK_M=128, num_warps=4,
                                                     **padded_head(D))

        def run_dkdv():
            self.dkdv[(triton.cdiv(S, kn), B * H)](q, k, v, do, lse, delta, dk, dv, scale, S, HEAD_DIM=D,
                                                   BLOCK_M=km, BLOCK_N=kn, CAUSAL=causal, num_warps=kw, **padded_head(D))

        def run_dq():
            self.dq[(triton.cdiv(S, qm), B * H)](q, k, v, do, lse, delta, dq, scale, S, HEAD_DIM=D,
                                                 BLOCK_M=qm, BLOCK_N=qn, CAUSAL=causal, num_warps=qw, **padded_head(D))
        return run_delta, run_dkdv, run_dq


def compiles(run, what, cfg):
    """Runs a blk kernel's first launch; False where its configuration does not compile (too
    much shared memory for its blocks), which is said on stderr."""
    try:
        run()
        return True
    except blk.BlkError as e:
        print(f"  blk {what} {fmt_cfg(cfg)}: {str(e).splitlines()[0][:160]}", file=sys.stderr)
        return False


def cell(x):
    """A provider's table cell: its rate (its error), or - where it did not run."""
    return "-" if x is None else f"{x[0]:.0f} ({x[1]:.1e})"


def sdpa_cells(call, ref, rate, what):
    """Each SDPA backend's (rate, error) running call() (None where the backend refuses)."""
    cells = []
    for name, backend in BACKENDS:
        try:
            with sdpa_kernel(backend):
                err = max_err(call(), ref)
                cells.append((rate(timed(call)), err))
        except RuntimeError as e:
            cells.append(None)
            print(f"  SDPA {name} {what}: {str(e).splitlines()[0][:120]}", file=sys.stderr)
    return cells


def best_forward(ba, q, k, v, o, lse, causal, ref, what):
    """blk's forward in each configuration that compiles, each output checked against ref before it
    is timed: (ms, configuration, error) of the fastest."""
    best = None
    for cfg in FWD_CONFIGS:
        f = ba.forward(q, k, v, o, lse, causal, cfg)
        if not compiles(f, "forward", cfg):
            continue
        err = max_err(o, ref)
        if not err < 2e-3 + 2e-3 * ref.abs().max().item():
            raise SystemExit(f"blk forward {fmt_cfg(cfg)} {what}: error {err:.3g}")
        ms = timed(f)
        if best is None or ms < best[0]:
            best = (ms, cfg, err)
    return best


def forward_for_backward(ba, q, k, v, causal):
    """blk's forward's Out and LSE, and the backward's buffers: Delta, dQ's f32 sums, dQ, dK, dV."""
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    ba.forward(q, k, v, o, lse, causal, (64, 64, 4))()
    dq_acc = torch.empty(B, H, S, D, device="cuda", dtype=torch.float32)
    return (o, lse, torch.empty_like(lse), dq_acc) + tuple(torch.empty_like(q) for _ in range(3))


def fmt_cfg(c):
    return f"{c[0]}x{c[1]} w{c[2]}" + (f" {c[3]}/SM" if len(c) > 3 else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tutorial", help="Triton's python/tutorials/06-fused-attention.py")
    ap.add_argument("--quick", action="store_true", help="S = 4096 only")
    ap.add_argument("--kernels", action="store_true", help="each blk backward kernel's time and configuration")
    ap.add_argument("--head-dim", type=int, choices=[64, 96, 128], help="this head dimension only (96: in blocks of 128, BLOCK_D)")
    ap.add_argument("--out")
    ap.add_argument("--gqa", action="store_true",
                    help="grouped-query forward only: D = 128, 32 query heads on 8 and on 1 K/V heads, S 4k and 16k, "
                         "against SDPA's backends with enable_gqa")
    ap.add_argument("--decode", action="store_true",
                    help="decode attention only (attention_decode.blk): one query token a sequence, D = 128, 32 "
                         "query heads on 8 K/V heads, caches of 4k-32k tokens, against SDPA with enable_gqa")
    ap.add_argument("--flag", action="append", default=[], choices=blk.FLAGS,
                    help="build blk's kernels with this compiler flag on (repeatable): --flag no_bulk_reduce times "
                         "the five-product backward's dQ shares by reds, as before bulk reductions")
    args = ap.parse_args()
    ba = BlkAttention(**{f: True for f in args.flag})
    if args.gqa:
        return gqa(ba, args)
    if args.decode:
        return decode(args)
    tut = dot_bench.load_triton_tutorial(args.tutorial, "triton_tutorial_06")
    lines = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}, triton {triton.__version__}; "
             f"blk's compiler flags: {', '.join(args.flag) or 'none'}; "
             f"triton.testing.do_bench (L2 flushed, median); fp16, 16k tokens a batch, 2048/D heads; "
             f"TFLOP/s as tutorial 06 counts them; err: largest |x - SDPA math in f32| over the output "
             f"(forward) or dQ, dK, dV (backward)", ""]
    fwd_rows, bwd_rows, kernel_rows = [], [], []
    sizes = [4096] if args.quick else [1024, 4096, 16384]
    for D in ([args.head_dim] if args.head_dim else [64, 128]):
        for S in sizes:
            for causal in (False, True):
                B, H = 16384 // S, 2048 // D
                torch.manual_seed(0)
                q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
                do = torch.randn(B, H, S, D, device="cuda", dtype=torch.float16)
                ref_o, ref_g = reference(q, k, v, do, causal)
                fwd_flops = 4 * B * H * S * S * D / (2 if causal else 1)
                bwd_flops = 2.5 * fwd_flops
                tf = lambda flops, ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
                shape = f"| {S} | {D} | {'yes' if causal else 'no'} |"
                # ---- SDPA, each backend: forward, then autograd's backward through it
                sdpa_f, sdpa_b = {}, {}
                for name, backend in BACKENDS:
                    try:
                        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
                        with sdpa_kernel(backend):
                            f = lambda: torch.nn.functional.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)  # noqa: E731
                            out = f()
                            err = max_err(out, ref_o)
                            sdpa_f[name] = (tf(fwd_flops, timed(f)), err)
                            g = torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True)
                            gerr = max(max_err(a, b) for a, b in zip(g, ref_g))
                            ms = timed(lambda: torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True))
                            sdpa_b[name] = (tf(bwd_flops, ms), gerr)
                        del out, g, qg, kg, vg
                    except RuntimeError as e:
                        sdpa_f.setdefault(name, None)
                        sdpa_b.setdefault(name, None)
                        print(f"  SDPA {name} at S={S} D={D}: {str(e).splitlines()[0]}", file=sys.stderr)
                # ---- blk forward: the best configuration, its output and LSE kept for the backward
                o = torch.empty_like(q)
                lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
                best = best_forward(ba, q, k, v, o, lse, causal, ref_o, f"S={S} D={D} causal={causal}")
                ba.forward(q, k, v, o, lse, causal, best[1])()
                blk_f = (tf(fwd_flops, best[0]), best[2], best[1])
                # ---- blk backward: the best configuration of each kernel, then the three timed together
                delta = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
                dq, dk, dv = (torch.empty_like(q) for _ in range(3))
                run_delta, _, _ = ba.backward_kernels(q, k, v, o, do, lse, delta, dq, dk, dv, causal,
                                                      DKDV_CONFIGS[0], DQ_CONFIGS[0])
                run_delta()
                t_delta = timed(run_delta)
                best_kv = best_q = None
                for cfg in DKDV_CONFIGS:
                    _, run, _ = ba.backward_kernels(q, k, v, o, do, lse, delta, dq, dk, dv, causal, cfg, DQ_CONFIGS[0])
                    if not compiles(run, "dK/dV", cfg):
                        continue
                    err = max(max_err(dk, ref_g[1]), max_err(dv, ref_g[2]))
                    if not err < 2e-2 + 1e-2 * max(ref_g[1].abs().max().item(), ref_g[2].abs().max().item()):
                        raise SystemExit(f"blk dK/dV {fmt_cfg(cfg)} S={S} D={D} causal={causal}: error {err:.3g}")
                    ms = timed(run)
                    if best_kv is None or ms < best_kv[0]:
                        best_kv = (ms, cfg)
                for cfg in DQ_CONFIGS:
                    _, _, run = ba.backward_kernels(q, k, v, o, do, lse, delta, dq, dk, dv, causal, DKDV_CONFIGS[0], cfg)
                    if not compiles(run, "dQ", cfg):
                        continue
                    err = max_err(dq, ref_g[0])
                    if not err < 2e-2 + 1e-2 * ref_g[0].abs().max().item():
                        raise SystemExit(f"blk dQ {fmt_cfg(cfg)} S={S} D={D} causal={causal}: error {err:.3g}")
                    ms = timed(run)
                    if best_q is None or ms < best_q[0]:
                        best_q = (ms, cfg)
                kernels = ba.backward_kernels(q, k, v, o, do, lse, delta, dq, dk, dv, causal, best_kv[1], best_q[1])

                def blk_bwd(kernels=kernels):
                    for run in kernels:
                        run()
                dq.zero_(), dk.zero_(), dv.zero_()
                blk_bwd()
                gerr = max(max_err(a, b) for a, b in zip((dq, dk, dv), ref_g))
                blk_b = (tf(bwd_flops, timed(blk_bwd)), gerr, f"7: dKdV {fmt_cfg(best_kv[1])}, dQ {fmt_cfg(best_q[1])}")
                # the five-product backward: the best configuration of its main kernel, all three timed together
                dq_acc = torch.empty(B, H, S, D, device="cuda", dtype=torch.float32)
                best_f = None
                for cfg in FUSED_CONFIGS:
                    runs = ba.fused_kernels(q, k, v, o, do, lse, delta, dq_acc, dq, dk, dv, causal, cfg)
                    dq.zero_(), dk.zero_(), dv.zero_()
                    if not compiles(lambda: [run() for run in runs], "dK/dV/dQ", cfg):
                        continue
                    err = max(max_err(a, b) for a, b in zip((dq, dk, dv), ref_g))
                    if not err < 2e-2 + 1e-2 * max(g.abs().max().item() for g in ref_g):
                        raise SystemExit(f"blk dK/dV/dQ {fmt_cfg(cfg)} S={S} D={D} causal={causal}: error {err:.3g}")
                    ms = timed(lambda: [run() for run in runs])
                    if best_f is None or ms < best_f[0]:
                        best_f = (ms, cfg, err, timed(runs[1]))
                fused_cell = "-"
                if best_f:
                    fused_cell = f"{best_f[3]:.3f} ({fmt_cfg(best_f[1])}), all {best_f[0]:.3f}"
                    if tf(bwd_flops, best_f[0]) > blk_b[0]:
                        blk_b = (tf(bwd_flops, best_f[0]), best_f[2], f"5: {fmt_cfg(best_f[1])}")
                kernel_rows.append(f"{shape} {t_delta:.3f} | {best_kv[0]:.3f} ({fmt_cfg(best_kv[1])}, "
                                   f"{tf(2 * fwd_flops, best_kv[0]):.0f} TFLOP/s) | {best_q[0]:.3f} "
                                   f"({fmt_cfg(best_q[1])}, {tf(1.5 * fwd_flops, best_q[0]):.0f} TFLOP/s) | {fused_cell} |")
                # ---- Triton's tutorial: its forward (TMA where it takes it, autotuned) and causal backward
                tut_f = tut_b = None
                if tut is not None:
                    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
                    # its TMA forward where it is right, else its other one (its own switch, supports_tma)
                    published_supports_tma = tut.supports_tma
                    for use_tma in (True, False):
                        tut.supports_tma = published_supports_tma if use_tma else (lambda: False)
                        f = lambda: tut.attention(qg, kg, vg, causal, 1.0 / math.sqrt(D))  # noqa: E731
                        try:
                            out = f()
                        except Exception as e:  # Triton's compile errors are of several kinds
                            print(f"  tutorial forward (TMA: {use_tma}) S={S} D={D}: {type(e).__name__}: "
                                  f"{str(e).splitlines()[-1][:160] if str(e) else ''}", file=sys.stderr)
                            continue
                        err = max_err(out, ref_o)
                        if err < 2e-3 + 2e-3 * ref_o.abs().max().item():
                            tut_f = (tf(fwd_flops, timed(f)), err, "TMA" if use_tma else "no TMA")
                            break
                        print(f"  tutorial forward (TMA: {use_tma}) S={S} D={D} causal={causal}: error {err:.3g}",
                              file=sys.stderr)
                    tut.supports_tma = published_supports_tma
                    if causal and tut_f is not None:
                        g = torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True)
                        gerr = max(max_err(a, b) for a, b in zip(g, ref_g))
                        ms = timed(lambda: torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True))
                        tut_b = (tf(bwd_flops, ms), gerr)
                    del qg, kg, vg

                best_sdpa_f = max((x[0] for x in sdpa_f.values() if x), default=float("nan"))
                best_sdpa_b = max((x[0] for x in sdpa_b.values() if x), default=float("nan"))
                fwd_rows.append(f"{shape} {cell(blk_f)} | {blk_f[2] and fmt_cfg(blk_f[2])} | "
                                + " | ".join(cell(sdpa_f.get(n)) for n, _ in BACKENDS)
                                + f" | {cell(tut_f)}{', ' + tut_f[2] if tut_f else ''} | {blk_f[0] / best_sdpa_f:.2f} | "
                                + (f"{blk_f[0] / tut_f[0]:.2f} |" if tut_f else "- |"))
                bwd_rows.append(f"{shape} {cell(blk_b)} | {blk_b[2]} | "
                                + " | ".join(cell(sdpa_b.get(n)) for n, _ in BACKENDS)
                                + f" | {cell(tut_b)} | {blk_b[0] / best_sdpa_b:.2f} | "
                                + (f"{blk_b[0] / tut_b[0]:.2f} |" if tut_b else "- |"))
                for row in (fwd_rows[-1], bwd_rows[-1]):
                    print(row, flush=True)
                del q, k, v, do, ref_o, ref_g, o, lse, delta, dq, dk, dv, dq_acc
                torch.cuda.empty_cache()
    head = "| S | D | causal | blk TFLOP/s (err) | blk config | " + " | ".join(
        f"SDPA {n}" for n, _ in BACKENDS) + " | Triton tutorial 06 | blk / best SDPA | blk / tutorial |"
    sep = "|" + "---|" * 11
    lines += ["## forward", "", head, sep] + fwd_rows + [""]
    lines += ["## backward (dQ, dK, dV from dOut; the tutorial's is causal only)", "", head, sep] + bwd_rows + [""]
    if args.kernels:
        lines += ["## blk's backward kernels: ms, best configuration, TFLOP/s of the kernel's own products "
                  "(dK/dV 4, dQ 3); the five-product backward's main kernel and all three of its kernels, ms",
                  "", "| S | D | causal | Delta ms | dK/dV | dQ | dK/dV/dQ |", "|" + "---|" * 7] + kernel_rows
    report(lines, args.out)


def gqa(ba, args):
    """Grouped-query (and multi-query) attention forward: K and V with fewer heads, read in place."""
    lines = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; triton.testing.do_bench (L2 flushed, "
             f"median); fp16, D = 128, 32 query heads, 16k tokens a batch; TFLOP/s 4·B·H·S²·D (halved when causal); "
             f"err: largest |out - SDPA math in f32 on K, V repeated|", "",
             "| S | K/V heads | causal | blk TFLOP/s (err) | blk config | " + " | ".join(f"SDPA {n}" for n, _ in BACKENDS)
             + " | blk / best SDPA |", "|" + "---|" * 9]
    D, H = 128, 32
    for S in (4096, 16384):
        for hkv in (8, 1):
            for causal in (False, True):
                B = 16384 // S
                torch.manual_seed(0)
                q = torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) * 0.5
                k, v = (torch.randn(B, hkv, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(2))
                rep = H // hkv
                ref = torch.empty(B, H, S, D, device="cuda", dtype=torch.float32)
                with sdpa_kernel(SDPBackend.MATH):
                    for h in range(H):  # a head at a time: S^2 f32 scores
                        ref[:, h] = torch.nn.functional.scaled_dot_product_attention(
                            q[:, h].float(), k[:, h // rep].float(), v[:, h // rep].float(), is_causal=causal)
                flops = 4 * B * H * S * S * D / (2 if causal else 1)
                tf = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
                what = f"S={S} K/V heads {hkv} causal={causal}"
                cells = sdpa_cells(lambda: torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, enable_gqa=True), ref, tf, what)
                o = torch.empty_like(q)
                lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
                best = best_forward(ba, q, k, v, o, lse, causal, ref, what)
                best_sdpa = max((c[0] for c in cells if c), default=float("nan"))
                row = (f"| {S} | {hkv} | {'yes' if causal else 'no'} | {cell((tf(best[0]), best[2]))} | {fmt_cfg(best[1])} | "
                       + " | ".join(cell(c) for c in cells) + f" | {tf(best[0]) / best_sdpa:.2f} |")
                lines.append(row)
                print(row, flush=True)
                del q, k, v, ref, o, lse
                torch.cuda.empty_cache()
    report(lines, args.out)


def decode(args):
    """Decode attention: GB/s of K and V read (the kernel is bound by them), blk's parts at 1, 2 and 4
    warps and a few part sizes, against SDPA's backends on a query of one token."""
    mod = blk.compile(os.path.join(EXAMPLES, "attention_decode.blk"), **{f: True for f in args.flag})
    part_k, combine_k = mod["attn_decode_part"], mod["attn_decode_combine"]
    D, H, H_KV = 128, 32, 8
    group = H // H_KV
    lines = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; triton.testing.do_bench (L2 flushed, "
             f"median); fp16, D = {D}, {H} query heads on {H_KV} K/V heads; GB/s: K and V bytes read / time; err: "
             f"largest |out - SDPA math in f32|", "",
             "| B | cache | blk GB/s (err) | blk config | " + " | ".join(f"SDPA {n}" for n, _ in BACKENDS)
             + " | blk / best SDPA |", "|" + "---|" * 8]
    for B, L in ((1, 16384), (1, 32768), (16, 4096), (16, 16384), (64, 4096)):
        torch.manual_seed(0)
        q = torch.randn(B, H, 1, D, device="cuda", dtype=torch.float16) * 0.5
        k, v = (torch.randn(B, H_KV, L, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(2))
        scale = 1.0 / math.sqrt(D)
        with sdpa_kernel(SDPBackend.MATH):
            ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), enable_gqa=True)
        gbs = lambda ms: 2 * B * H_KV * L * D * 2 / (ms * 1e-3) / 1e9  # noqa: E731
        cells = sdpa_cells(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True), ref,
                           gbs, f"B={B} L={L}")
        lens = torch.full((B,), L, device="cuda", dtype=torch.int32)
        out = torch.empty(B, H, D, device="cuda", dtype=torch.float16)
        best = None
        for split in (256, 512, 1024, 2048):
            parts = triton.cdiv(L, split)
            max_parts = triton.next_power_of_2(parts)
            part_out = torch.empty(B, H, parts, D, device="cuda", dtype=torch.float32)
            part_lse = torch.empty(B, H, parts, device="cuda", dtype=torch.float32)
            for warps in (1, 2, 4):
                def run(split=split, parts=parts, max_parts=max_parts, part_out=part_out, part_lse=part_lse,
                        warps=warps):
                    part_k[(parts, H_KV, B)](q, k, v, lens, part_out, part_lse, scale, L, H_KV, parts, HEAD_DIM=D,
                                             GROUP=group, BLOCK_N=64, SPLIT=split, num_warps=warps)
                    combine_k[(B * H,)](part_out, part_lse, out, parts, HEAD_DIM=D, MAX_PARTS=max_parts, num_warps=4)
                if not compiles(run, "decode", (split, 64, warps)):
                    continue
                err = max_err(out.view(B, H, 1, D), ref)
                if not err < 2e-3 + 2e-3 * ref.abs().max().item():
                    raise SystemExit(f"blk decode split {split} w{warps} B={B} L={L}: error {err:.3g}")
                ms = timed(run)
                if best is None or ms < best[0]:
                    best = (ms, f"split {split} w{warps}", err)
        best_sdpa = max((c[0] for c in cells if c), default=float("nan"))
        row = (f"| {B} | {L} | {cell((gbs(best[0]), best[2]))} | {best[1]} | " + " | ".join(cell(c) for c in cells)
               + f" | {gbs(best[0]) / best_sdpa:.2f} |")
        lines.append(row)
        print(row, flush=True)
        del q, k, v, ref, out
        torch.cuda.empty_cache()
    report(lines, args.out)


if __name__ == "__main__":
    main()
