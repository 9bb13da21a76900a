#!/usr/bin/env python3
"""Do pipelined loops copy by TMA where the plan says they do? (sm_90a, Nsight Compute)

A TMA ring has a fallback: where thread 0's test finds a tile it cannot copy (an offset
it cannot express as coordinates), every thread copies it by cp.async instead. Both give
the same result, so nothing but the instructions executed tells them apart: a wrong test
sends every copy down the slow path silently (8-bit tiles did, until the test stopped
treating their offsets as 16-bit elements). This script runs each kernel under ncu and
counts LDGSTS (cp.async) instructions: zero where every tile is in reach of the maps,
and more than zero for the same kernel built with no_tma (the control, so that a metric
that counts nothing cannot pass). Each output is also checked against torch.

    python3 tests/gpu/tma_copies.py            # runs ncu on itself, case by case
    python3 tests/gpu/tma_copies.py --case fp8 # one case, no ncu (what ncu profiles)"""
import argparse
import csv
import io
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "dsl_examples")
METRIC = "smsp__sass_inst_executed_op_ldgsts.sum"

# case: (file, kernel, M = N = K (or the sequence), warps, no_tma, whether cp.async copies are expected)
CASES = {
    "f16": ("matmul.blk", "matmul", 1024, 8, False, False),
    "f16_ragged": ("matmul.blk", "matmul", 1000, 8, False, False),  # edges by the maps' bounds
    "fp8": ("matmul_fp8.blk", "matmul_fp8", 1024, 8, False, False),
    "int8": ("matmul_int8.blk", "matmul_int8", 1024, 8, False, False),
    "attention": ("attention.blk", "attn_fwd", 1024, 8, False, False),  # K and V, D = 128
    "fp8_no_tma": ("matmul_fp8.blk", "matmul_fp8", 1024, 8, True, True),
}


def run_case(name):
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import blk
    file, kernel, size, warps, no_tma, _ = CASES[name]
    k = blk.compile(os.path.join(EXAMPLES, file), no_tma=no_tma)[kernel]
    M = N = K = size
    torch.manual_seed(0)
    if file == "attention.blk":
        q, kk, v = (torch.randn(1, 4, size, 128, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.empty_like(q)
        lse = torch.empty(1, 4, size, device="cuda")
        k[(size // 128, 4)](q, kk, v, o, lse, 128 ** -0.5, size, HEAD_DIM=128, BLOCK_M=128, BLOCK_N=64,
                             num_warps=warps)
        torch.cuda.synchronize()
        err = (o.float() - torch.nn.functional.scaled_dot_product_attention(q, kk, v).float()).abs().max().item()
        if err > 1e-2:
            sys.exit(f"{name}: wrong result, max error {err:.3g}")
        return
    bm, bn, bk = 128, 128, (64 if file == "matmul.blk" else 128)
    grid = (-(-M // bm) * -(-N // bn),)
    if file == "matmul.blk":
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        k[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps)
        ref, tol = a.float() @ b.float(), 0.05
    elif file == "matmul_fp8.blk":
        a = (torch.randn(M, K, device="cuda") * 0.5).to(torch.float8_e4m3fn)
        b = (torch.randn(N, K, device="cuda") * 0.5).to(torch.float8_e4m3fn).t()
        c = torch.empty(M, N, device="cuda", dtype=torch.float32)
        one = torch.ones(1, device="cuda")
        k[grid](a, b, c, one, one, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                c.stride(0), c.stride(1), 0, 0, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps)
        ref, tol = a.float() @ b.float(), 1e-3
    else:
        a = torch.randint(-8, 8, (M, K), device="cuda", dtype=torch.int8)
        b = torch.randint(-8, 8, (N, K), device="cuda", dtype=torch.int8).t()
        c = torch.empty(M, N, device="cuda", dtype=torch.int32)
        k[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps)
        ref, tol = (a.float() @ b.float()), 0
    torch.cuda.synchronize()
    err = (c.float() - ref).abs().max().item()
    if err > tol * max(1.0, ref.abs().max().item()):
        sys.exit(f"{name}: wrong result, max error {err:.3g}")


def ldgsts(name):
    """The kernel's LDGSTS count under ncu, or None when ncu reports none."""
    kernel = CASES[name][1]
    out = subprocess.run(["ncu", "--csv", "--metrics", METRIC, "-k", f"regex:^{kernel}$", sys.executable,
                          os.path.abspath(__file__), "--case", name], capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{name}: ncu failed ({out.returncode}):\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    rows = [r for r in csv.reader(io.StringIO(out.stdout[out.stdout.find('"ID"'):])) if len(r) > 3]
    hdr = rows[0] if rows else []
    values = [r[-1] for r in rows[1:] if METRIC in r]
    if not hdr or not values:
        sys.exit(f"{name}: no {METRIC} in ncu's output:\n{out.stdout[-2000:]}")
    return sum(float(v.replace(",", "")) for v in values)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=sorted(CASES))
    args = ap.parse_args()
    if args.case:
        run_case(args.case)
        return
    bad = 0
    for name, (_, _, _, _, _, expect_cp_async) in CASES.items():
        n = ldgsts(name)
        ok = (n > 0) == expect_cp_async
        bad += not ok
        print(f"{name}: {n:.0f} LDGSTS executed ({'expected' if ok else 'WRONG'}: "
              f"{'cp.async' if expect_cp_async else 'TMA only'})", flush=True)
    print(f"{bad} of {len(CASES)} cases wrong")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
