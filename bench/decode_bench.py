#!/usr/bin/env python3
"""decode_bench.py: blkc's grouped-query decode attention over a paged KV cache
(dsl_examples/attention_decode.blk: attn_decode_paged_part, then attn_decode_combine)
beside the Triton original it corresponds to, vLLM's decode attention
(vllm/v1/attention/ops/triton_decode_attention.py: _fwd_grouped_kernel_stage1 and
_fwd_kernel_stage2, from SGLang and LightLLM): one process, one GPU, one timer (dot_bench.py's
kernel time: the launches replayed from a CUDA graph, as a serving engine runs its decode steps,
L2 flushed before every run).

    BLK_LIBRARY=build-static/libblk.so.0 PYTHONPATH=python \\
        python3 bench/decode_bench.py --vllm FILE [--quick] [--out FILE]
        ncu -k regex:"paged_part|_fwd_grouped|_fwd_kernel_stage2|decode_combine" \\
            python3 bench/decode_bench.py --vllm FILE --once

FILE is vLLM's triton_decode_attention.py as vLLM ships it (the wheel's file, carried to
the GPU machine, never committed); the bench runs its decode_attention_fwd unchanged, with
vLLM's own launch parameters and the K/V scale tensors vLLM's backend always passes, after
giving it the two vLLM modules it imports (the platform, not ROCm, and vLLM's re-export of
triton). Both read the same cache: fp16, D = 128, 32 query
heads on 8 K/V heads (Llama-3-8B's attention), pages of 16 tokens ([pages, 16, 8, 128], vLLM's
layout) handed out to the sequences in shuffled order through a block table. Each side runs
with its best number of splits of the cache (the Triton kernel's NUM_KV_SPLITS; blk's SPLIT
keys a part) and blk with 1, 2 or 4 warps; vLLM's own rule for the splits (its Triton MLA
backend's: the next power of two of max_len / 512, at most 2 a SM) is among those tried.
GB/s counts the K and V bytes read. Both outputs are checked against PyTorch's attention in f32
over the same keys before they are timed. --once: one launch of each kernel at B = 16, 4096
tokens (vLLM with 4 splits, its best there; blk's parts of 2048 keys at 1, 2 and 4 warps, then
its combine), for a profiler."""
import argparse
import importlib.util
import math
import os
import sys
import types

import torch
import triton
import triton.language as tl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import blk  # noqa: E402
import dot_bench  # noqa: E402

EXAMPLES = os.path.join(HERE, "..", "dsl_examples")
D, H, H_KV, PAGE = 128, 32, 8, 16
SHAPES = ((1, 4096), (1, 16384), (1, 32768), (8, 8192), (16, 4096), (16, 16384), (64, 4096), (128, 2048), (256, 1024))
QUICK = ((1, 16384), (16, 4096), (64, 4096))


def load_vllm(path):
    """vLLM's module as it ships, its two vLLM imports given: the platform (CUDA, so not ROCm)
    and vllm.triton_utils (which re-exports triton and triton.language)."""
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_rocm=lambda: False)
    triton_utils = types.ModuleType("vllm.triton_utils")
    triton_utils.triton, triton_utils.tl = triton, tl
    vllm = types.ModuleType("vllm")
    vllm.platforms, vllm.triton_utils = platforms, triton_utils
    sys.modules.update({"vllm": vllm, "vllm.platforms": platforms, "vllm.triton_utils": triton_utils})
    spec = importlib.util.spec_from_file_location("vllm_triton_decode_attention", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.decode_attention_fwd


def timed(fn):
    return dot_bench.kernel_time(fn)


def paged_cache(B, L):
    """K and V for B sequences of L tokens, in pages of PAGE tokens given out in shuffled order:
    the pool [pages, PAGE, H_KV, D] and the block table [B, L / PAGE] (int32)."""
    per_seq = triton.cdiv(L, PAGE)
    pages = B * per_seq
    k_pool, v_pool = (torch.randn(pages, PAGE, H_KV, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(2))
    table = torch.randperm(pages, device="cuda").to(torch.int32).view(B, per_seq)
    return k_pool, v_pool, table


def reference(q, k_pool, v_pool, table, L):
    """Attention of each query head over its sequence's L keys, in f32: [B, H, D]."""
    B = q.shape[0]
    out = torch.empty(B, H, D, device="cuda", dtype=torch.float32)
    for b in range(B):
        idx = table[b].long()
        k = k_pool[idx].reshape(-1, H_KV, D)[:L].float()  # [L, H_KV, D]
        v = v_pool[idx].reshape(-1, H_KV, D)[:L].float()
        qb = q[b].float().view(H_KV, H // H_KV, D)
        s = torch.einsum("hgd,lhd->hgl", qb, k) / math.sqrt(D)
        out[b] = torch.einsum("hgl,lhd->hgd", torch.softmax(s, dim=-1), v).reshape(H, D)
    return out


def vllm_splits(L, sms):
    """vLLM's Triton MLA backend's rule (_compute_num_kv_splits): the next power of two of
    max_len // 512, at most 2 a SM."""
    return min(triton.next_power_of_2(max(1, L // 512)), 2 * sms)


def once(decode_attention_fwd, part_k, combine_k, kv_scale):
    """One launch of each side at B = 16, 4096 tokens, for ncu."""
    B, L, parts, scale = 16, 4096, 2, 1.0 / math.sqrt(D)
    q = torch.randn(B, H, D, device="cuda", dtype=torch.float16)
    k_pool, v_pool, table = paged_cache(B, L)
    lens = torch.full((B,), L, device="cuda", dtype=torch.int32)
    o = torch.empty(B, H, D, device="cuda", dtype=torch.float16)
    lse = torch.empty(B, H, device="cuda", dtype=torch.float32)
    logits = torch.empty(B, H, 4, D + 1, device="cuda", dtype=torch.float32)
    decode_attention_fwd(q, k_pool, v_pool, o, lse, table, lens, logits, 4, scale, page_size=PAGE, k_scale=kv_scale,
                         v_scale=kv_scale)
    part_out = torch.empty(B, H, parts, D, device="cuda", dtype=torch.float32)
    part_lse = torch.empty(B, H, parts, device="cuda", dtype=torch.float32)
    for warps in (1, 2, 4):
        part_k[(parts, H_KV, B)](q, k_pool, v_pool, table, lens, part_out, part_lse, scale, table.shape[1], H_KV, parts,
                                 HEAD_DIM=D, GROUP=H // H_KV, BLOCK_N=64, SPLIT=2048, PAGE_SIZE=PAGE, num_warps=warps)
    combine_k[(B * H,)](part_out, part_lse, o, parts, HEAD_DIM=D, MAX_PARTS=parts, num_warps=4)
    torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm", required=True, help="vLLM's vllm/v1/attention/ops/triton_decode_attention.py")
    ap.add_argument("--quick", action="store_true", help="three shapes")
    ap.add_argument("--once", action="store_true", help="one launch of each kernel, for ncu")
    ap.add_argument("--out")
    args = ap.parse_args()
    decode_attention_fwd = load_vllm(args.vllm)
    kv_scale = torch.ones((), device="cuda", dtype=torch.float32)  # (vLLM's layer._k_scale)
    mod = blk.compile(os.path.join(EXAMPLES, "attention_decode.blk"))
    part_k, combine_k = mod["attn_decode_paged_part"], mod["attn_decode_combine"]
    if args.once:
        return once(decode_attention_fwd, part_k, combine_k, kv_scale)
    dot_bench.FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    scale = 1.0 / math.sqrt(D)
    lines = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}, triton {triton.__version__}; "
             f"kernel time (CUDA graphs, L2 flushed; dot_bench.kernel_time); fp16, D = {D}, {H} query heads on {H_KV} K/V heads, "
             f"pages of {PAGE} tokens, shuffled; GB/s: K and V bytes read / time; err: largest |out - PyTorch f32|", "",
             "| B | tokens a sequence | blk GB/s (err) | blk config | vLLM Triton GB/s (err) | vLLM splits "
             "| vLLM at its own rule's splits | blk / vLLM best |", "|" + "---|" * 8]
    for B, L in (QUICK if args.quick else SHAPES):
        torch.manual_seed(0)
        q = torch.randn(B, H, D, device="cuda", dtype=torch.float16) * 0.5
        k_pool, v_pool, table = paged_cache(B, L)
        ref = reference(q, k_pool, v_pool, table, L)
        tol = 2e-3 + 2e-3 * ref.abs().max().item()
        lens = torch.full((B,), L, device="cuda", dtype=torch.int32)
        gbs = lambda ms: 2 * B * H_KV * L * D * 2 / (ms * 1e-3) / 1e9  # noqa: E731

        # vLLM's kernel: its output o [B, H, D], lse [B, H], scratch [B, H, splits, D + 1]
        o = torch.empty(B, H, D, device="cuda", dtype=torch.float16)
        lse = torch.empty(B, H, device="cuda", dtype=torch.float32)
        own = vllm_splits(L, sms)
        triton_best, own_gbs = None, None
        for splits in sorted({4, 8, 16, 32, 64, own}):
            logits = torch.empty(B, H, splits, D + 1, device="cuda", dtype=torch.float32)

            def run_vllm(splits=splits, logits=logits):
                decode_attention_fwd(q, k_pool, v_pool, o, lse, table, lens, logits, splits, scale, page_size=PAGE,
                                     k_scale=kv_scale, v_scale=kv_scale)
            run_vllm()
            err = (o.float() - ref).abs().max().item()
            if not err < tol:
                raise SystemExit(f"vLLM decode splits {splits} B={B} L={L}: error {err:.3g}")
            ms = timed(run_vllm)
            if splits == own:
                own_gbs = gbs(ms)
            if triton_best is None or ms < triton_best[0]:
                triton_best = (ms, splits, err)

        # blk: parts of SPLIT keys, then the combine
        out = torch.empty(B, H, D, device="cuda", dtype=torch.float16)
        best = None
        for split in (256, 512, 1024, 2048, 4096):
            if split > 2 * L:
                continue
            parts = triton.cdiv(L, split)
            part_out = torch.empty(B, H, parts, D, device="cuda", dtype=torch.float32)
            part_lse = torch.empty(B, H, parts, device="cuda", dtype=torch.float32)
            for warps in (1, 2, 4):
                def run(split=split, parts=parts, part_out=part_out, part_lse=part_lse, warps=warps):
                    part_k[(parts, H_KV, B)](q, k_pool, v_pool, table, lens, part_out, part_lse, scale,
                                             table.shape[1], H_KV, parts, HEAD_DIM=D, GROUP=H // H_KV, BLOCK_N=64,
                                             SPLIT=split, PAGE_SIZE=PAGE, num_warps=warps)
                    combine_k[(B * H,)](part_out, part_lse, out, parts, HEAD_DIM=D,
                                        MAX_PARTS=triton.next_power_of_2(parts), num_warps=4)
                run()
                err = (out.float() - ref).abs().max().item()
                if not err < tol:
                    raise SystemExit(f"blk paged decode split {split} w{warps} B={B} L={L}: error {err:.3g}")
                ms = timed(run)
                if best is None or ms < best[0]:
                    best = (ms, f"split {split} w{warps}", err)
        row = (f"| {B} | {L} | {gbs(best[0]):.0f} ({best[2]:.1e}) | {best[1]} | "
               f"{gbs(triton_best[0]):.0f} ({triton_best[2]:.1e}) | {triton_best[1]} | {own_gbs:.0f} ({own}) | "
               f"{triton_best[0] / best[0]:.2f} |")
        lines.append(row)
        print(row, flush=True)
        del q, k_pool, v_pool, table, ref
        torch.cuda.empty_cache()
    dot_bench.write_report(lines, args.out)


if __name__ == "__main__":
    main()
