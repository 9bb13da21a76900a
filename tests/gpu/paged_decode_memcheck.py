#!/usr/bin/env python3
"""Paged decode attention on the GPU (attention_decode.blk's attn_decode_paged_part, whose
loop reads its block table ahead of the copies it addresses): sequences of 1, 15, 17, 1000
and 4095 tokens in one batch, pages of 1, 16 and 64 tokens handed out shuffled, the slots
no sequence uses NaN, 1, 2 and 4 warps; each output checked against torch in f32. Run plain
and under compute-sanitizer's memcheck and racecheck on the GPU machine:

    compute-sanitizer --tool memcheck python3 tests/gpu/paged_decode_memcheck.py"""
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import blk  # noqa: E402

D, H, H_KV = 128, 16, 4
LENS = (1, 15, 17, 1000, 4095)


def main():
    mod = blk.compile(os.path.join(HERE, "..", "..", "dsl_examples", "attention_decode.blk"))
    part_k, combine_k = mod["attn_decode_paged_part"], mod["attn_decode_combine"]
    torch.manual_seed(2)
    B, scale, bad = len(LENS), 1.0 / math.sqrt(D), 0
    lens = torch.tensor(LENS, device="cuda", dtype=torch.int32)
    q = torch.randn(B, H, D, device="cuda", dtype=torch.float16)
    for page in (1, 16, 64):
        per_seq = -(-max(LENS) // page)
        pages = B * per_seq + 1
        k_pool = torch.full((pages, page, H_KV, D), float("nan"), device="cuda", dtype=torch.float16)
        v_pool = torch.full_like(k_pool, float("nan"))
        order = torch.randperm(pages, device="cuda").to(torch.int32)
        table = torch.full((B, per_seq), -1, device="cuda", dtype=torch.int32)
        ref = torch.empty(B, H, D, device="cuda")
        for b, n in enumerate(LENS):
            used = -(-n // page)
            table[b, :used] = order[b * per_seq:b * per_seq + used]
            k, v = (torch.randn(n, H_KV, D, device="cuda", dtype=torch.float16) for _ in range(2))
            for j in range(used):
                rows = slice(j * page, min(n, (j + 1) * page))
                k_pool[table[b, j], :rows.stop - rows.start] = k[rows]
                v_pool[table[b, j], :rows.stop - rows.start] = v[rows]
            s = torch.einsum("hgd,lhd->hgl", q[b].float().view(H_KV, H // H_KV, D), k.float()) * scale
            ref[b] = torch.einsum("hgl,lhd->hgd", torch.softmax(s, -1), v.float()).reshape(H, D)
        for split, warps in ((512, 1), (1024, 2), (256, 4)):
            parts = -(-max(LENS) // split)
            part_out = torch.empty(B, H, parts, D, device="cuda")
            part_lse = torch.empty(B, H, parts, device="cuda")
            out = torch.empty(B, H, D, device="cuda", dtype=torch.float16)
            part_k[(parts, H_KV, B)](q, k_pool, v_pool, table, lens, part_out, part_lse, scale, per_seq, H_KV, parts,
                                     HEAD_DIM=D, GROUP=H // H_KV, BLOCK_N=64, SPLIT=split, PAGE_SIZE=page,
                                     num_warps=warps)
            combine_k[(B * H,)](part_out, part_lse, out, parts, HEAD_DIM=D, MAX_PARTS=16, num_warps=4)
            err = (out.float() - ref).abs().max().item()
            print(f"paged decode page={page} split={split} warps={warps}: error {err:.1e}")
            bad += not err < 2e-3 + 2e-3 * ref.abs().max().item()
    torch.cuda.synchronize()
    print("WRONG" if bad else "all match")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
