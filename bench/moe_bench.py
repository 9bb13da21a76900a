#!/usr/bin/env python3
"""moe_bench.py: blkc's mixture-of-experts matmul (dsl_examples/moe_matmul.blk)
beside vLLM's fused_moe Triton kernel, the original it corresponds to: one
process, one GPU, one timer (dot_bench.py's kernel time: CUDA graphs, L2
flushed before every run).

    python3 bench/moe_bench.py LIBBLK_SO --vllm FILE [--quick] [--out FILE]

FILE holds vLLM's `fused_moe_kernel` (and the `write_zeros_to_output` it
calls) as vLLM ships them in vllm/model_executor/layers/fused_moe/fused_moe.py;
the bench runs that code unchanged, with vLLM's tuned H100 configuration for
each batch (E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json: Mixtral 8x7B's
experts at tensor parallelism 2, the file's nearest batch size). Both kernels
read the same inputs: tokens routed to 2 of 8 experts, the routed rows sorted
by expert and padded to BLOCK_M (vLLM's moe_align_block_size, done here in
PyTorch), B as [E, N, K] with K contiguous, C [tokens, top_k, N]. Each output
is checked against PyTorch's per-expert matmuls in f32."""
import argparse
import importlib.util
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dot_bench  # noqa: E402
from dot_bench import I32, PTR, Blk, kernel_time  # noqa: E402

I64 = 3

# vLLM's tuned H100 configurations (E=8, N=7168): batch -> (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages)
VLLM_H100 = {1: (16, 64, 128, 64, 4, 4), 16: (16, 128, 128, 1, 4, 4), 64: (32, 128, 128, 1, 4, 4),
             256: (64, 128, 128, 64, 4, 4), 512: (64, 256, 64, 32, 4, 4), 1024: (128, 256, 64, 16, 8, 4),
             2048: (128, 256, 64, 32, 8, 4), 4096: (128, 256, 64, 16, 8, 4)}


def load_vllm(path):
    """The peer's own code, imported as a module (Triton names the functions
    a kernel calls by their module)."""
    spec = importlib.util.spec_from_file_location("vllm_fused_moe", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["vllm_fused_moe"] = module
    spec.loader.exec_module(module)
    return module.fused_moe_kernel


def align(topk_ids, experts, block_m):
    """vLLM's moe_align_block_size: the routed rows (token * top_k + choice)
    sorted by expert, each expert's run padded to block_m with the id `rows`;
    the buffer as long as the worst case, as vLLM's."""
    flat = topk_ids.flatten().to(torch.int64)
    rows = flat.numel()
    counts = torch.bincount(flat, minlength=experts)
    padded = (counts + block_m - 1) // block_m * block_m
    starts = torch.cumsum(padded, 0) - padded
    order = torch.argsort(flat, stable=True)
    first = torch.cumsum(counts, 0) - counts
    e = flat[order]
    slot = starts[e] + torch.arange(rows, device=flat.device) - first[e]
    cap = rows + experts * (block_m - 1)
    sorted_ids = torch.full((cap,), rows, dtype=torch.int32, device=flat.device)
    sorted_ids[slot] = order.to(torch.int32)
    expert_ids = torch.zeros((cap + block_m - 1) // block_m, dtype=torch.int32, device=flat.device)
    blocks = torch.repeat_interleave(torch.arange(experts, device=flat.device), padded // block_m)
    expert_ids[:blocks.numel()] = blocks.to(torch.int32)
    total = torch.tensor([int(padded.sum())], dtype=torch.int32, device=flat.device)
    return sorted_ids, expert_ids, total


def reference(a, w, topk_ids, topk_w, weighted, a_top_k):
    """Routed row r = token * top_k + choice reads A's row r // a_top_k."""
    tokens, top_k = topk_ids.shape
    out = torch.empty(tokens, top_k, w.shape[1], dtype=torch.float32, device=a.device)
    for e in range(w.shape[0]):
        t, j = torch.nonzero(topk_ids == e, as_tuple=True)
        if t.numel():
            y = a[(t * top_k + j) // a_top_k].float() @ w[e].float().T
            out[t, j] = y * topk_w[t, j, None] if weighted else y
    return out


def vllm_launch(kern, a, w, c, topk_w, ids, eids, total, top_k, cfg, weighted):
    bm, bn, bk, gm, warps, stages = cfg
    em = ids.shape[0]
    grid = (triton.cdiv(em, bm) * triton.cdiv(w.shape[1], bn),)
    ct = tl.bfloat16 if a.dtype == torch.bfloat16 else tl.float16
    return lambda: kern[grid](a, w, c, None, None, topk_w, ids, eids, total, w.shape[1], w.shape[2], em,
                              topk_w.numel(), a.stride(0), a.stride(1), w.stride(0), w.stride(2), w.stride(1),
                              c.stride(1), c.stride(2), 0, 0, 0, 0, 0, 0, 0, MUL_ROUTED_WEIGHT=weighted,
                              top_k=top_k, compute_type=ct, use_fp8_w8a8=False, use_int8_w8a8=False,
                              use_int8_w8a16=False, per_channel_quant=False, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                              BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm, num_warps=warps, num_stages=stages)


def blk_launch(blk, a, w, c, topk_w, ids, eids, total, top_k, cfg, weighted):
    bm, bn, bk, gm, warps, stages = cfg
    em = ids.shape[0]
    t = {torch.float16: "f16", torch.bfloat16: "bf16"}[a.dtype]
    k = blk.kernel("moe_matmul.blk", "moe_matmul",
                   [f"T={t}", f"TOP_K={top_k}", f"MUL_WEIGHT={'true' if weighted else 'false'}", f"BLOCK_M={bm}",
                    f"BLOCK_N={bn}", f"BLOCK_K={bk}", f"GROUP_M={gm}"], warps, stages)
    args = [(PTR, a.data_ptr()), (PTR, w.data_ptr()), (PTR, c.data_ptr()), (PTR, ids.data_ptr()),
            (PTR, eids.data_ptr()), (PTR, topk_w.data_ptr()), (PTR, total.data_ptr()), (I32, w.shape[1]),
            (I32, w.shape[2]), (I32, em), (I32, topk_w.numel()), (I32, a.stride(0)), (I64, w.stride(0)),
            (I32, w.stride(1)), (I32, c.stride(1))]
    grid = (triton.cdiv(em, bm) * triton.cdiv(w.shape[1], bn), 1, 1)
    return lambda: blk.launch(k, grid, args)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib")
    ap.add_argument("--vllm", required=True, help="a file with vLLM's fused_moe_kernel")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.manual_seed(0)
    dot_bench.FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    blk = Blk(args.lib)
    kern = load_vllm(args.vllm)
    experts, top_k = 8, 2
    # as vLLM's fused_experts: w1's A is the tokens (each read by its top_k
    # rows), w2's the routed rows themselves (top_k = 1 to the kernel), weighted
    gemms = [("w1 (gate/up)", 14336, 4096, top_k, False), ("w2 (down)", 4096, 7168, 1, True)]
    batches = [16, 256, 4096] if args.quick else [1, 16, 64, 256, 1024, 4096]
    lines = [f"# MoE matmul, {torch.cuda.get_device_name()}, {experts} experts, top {top_k}, f16, "
             "kernel time (CUDA graphs, L2 flushed)", "",
             "| GEMM | tokens | config (BM/BN/BK/GROUP_M, warps, stages) | vLLM Triton TFLOP/s | blkc TFLOP/s | "
             "blkc / vLLM | max err vLLM | max err blkc |", "|---|---|---|---|---|---|---|---|"]
    for name, N, K, a_top_k, weighted in gemms:
        w = torch.randn(experts, N, K, dtype=torch.float16, device="cuda") / K ** 0.5
        for tokens in batches:
            a = torch.randn(tokens * top_k // a_top_k, K, dtype=torch.float16, device="cuda")
            logits = torch.randn(tokens, experts, device="cuda")
            topk_w, topk_ids = torch.topk(torch.softmax(logits, -1), top_k, dim=-1)
            topk_w = topk_w.contiguous()
            topk_ids = topk_ids.to(torch.int32)
            cfg = VLLM_H100[min(VLLM_H100, key=lambda b: abs(b - tokens))]
            ids, eids, total = align(topk_ids, experts, cfg[0])
            ref = reference(a, w, topk_ids, topk_w, weighted, a_top_k)
            c_tl = torch.zeros(tokens, top_k, N, dtype=torch.float16, device="cuda")
            c_blk = torch.zeros_like(c_tl)
            run_tl = vllm_launch(kern, a, w, c_tl, topk_w, ids, eids, total, a_top_k, cfg, weighted)
            run_blk = blk_launch(blk, a, w, c_blk, topk_w, ids, eids, total, a_top_k, cfg, weighted)
            run_tl(), run_blk()
            torch.cuda.synchronize()
            scale = ref.abs().max().item()
            err_tl = (c_tl.float() - ref).abs().max().item() / scale
            err_blk = (c_blk.float() - ref).abs().max().item() / scale
            flops = 2.0 * tokens * top_k * N * K
            t_tl, t_blk = kernel_time(run_tl), kernel_time(run_blk)
            tf_tl, tf_blk = flops / t_tl / 1e9, flops / t_blk / 1e9
            row = (f"| {name} N={N} K={K} | {tokens} | {'/'.join(map(str, cfg[:4]))}, {cfg[4]}, {cfg[5]} | "
                   f"{tf_tl:.1f} | {tf_blk:.1f} | {tf_blk / tf_tl:.2f} | {err_tl:.1e} | {err_blk:.1e} |")
            print(row, flush=True)
            lines.append(row)
            if err_blk > 1e-2 or err_tl > 1e-2:
                print(f"  WRONG: relative error above 1e-2 (vLLM {err_tl:.1e}, blkc {err_blk:.1e})", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
