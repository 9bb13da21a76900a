"""The layer-norm backward three ways, in one run on one GPU: blk's lock
version (layer_norm_bwd_dx + layer_norm_bwd_dwdb, Triton's tutorial design),
blk's deterministic one (layer_norm_bwd_dx_det + layer_norm_bwd_dwdb) and
PyTorch's (autograd through F.layer_norm). Kernel times: median of
blk.testing.do_bench (CUDA events, L2 flushed). Run to run: dW from 20 runs
of each blk version, counted as distinct bit patterns.

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/layer_norm_bwd_bench.py
Prints a Markdown table."""
import os

import torch
import torch.nn.functional as F

import blk

EX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dsl_examples", "layernorm.blk")
mod = blk.compile(EX)


def main():
    torch.manual_seed(0)
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}\n")
    print("| M x N | dtype | blk lock µs | blk deterministic µs | PyTorch µs | distinct dW in 20 runs (lock / deterministic) "
          "| max |dW| diff from f64 (lock / det) |")
    print("|---|---|---|---|---|---|---|")
    for m, n in ((4096, 1024), (4096, 4096), (1151, 8192), (8192, 8192)):
        dt = torch.float16
        x = (torch.randn(m, n, device="cuda") * 0.5 - 2.3).to(dt)
        w, b = torch.rand(n, device="cuda", dtype=dt), torch.rand(n, device="cuda", dtype=dt)
        dy = (0.1 * torch.randn(m, n, device="cuda")).to(dt)
        mean, rstd = x.float().mean(1), (x.float().var(1, unbiased=False) + 1e-5).rsqrt()
        block = blk.next_power_of_2(n)
        group = 256 if n <= 1024 else 128 if n <= 4096 else 96 if n <= 8192 else 64
        warps = min(max(block // 256, 1), 8)
        dx = torch.empty_like(x)
        pdw, pdb = torch.zeros(group, n, device="cuda", dtype=dt), torch.zeros(group, n, device="cuda", dtype=dt)
        locks = torch.zeros(2 * group, device="cuda", dtype=torch.int32)
        dw, db = torch.empty(n, device="cuda", dtype=dt), torch.empty(n, device="cuda", dtype=dt)

        def reduce():
            mod.layer_norm_bwd_dwdb[(blk.cdiv(n, 128),)](pdw, pdb, dw, db, group, n, T="f16", BLOCK_SIZE_M=32,
                                                         BLOCK_SIZE_N=128)

        def lock_version():
            locks.zero_()
            mod.layer_norm_bwd_dx[(m,)](dx, dy, pdw, pdb, x, w, mean, rstd, locks, n, n, T="f16", GROUP_SIZE_M=group,
                                        BLOCK_SIZE_N=block, num_warps=warps)
            reduce()

        def det_version():
            mod.layer_norm_bwd_dx_det[(group,)](dx, dy, pdw, pdb, x, w, mean, rstd, n, n, m, T="f16",
                                                BLOCK_SIZE_N=block, num_warps=warps)
            reduce()

        xr = x.detach().requires_grad_()
        wr, br = w.detach().requires_grad_(), b.detach().requires_grad_()
        y = F.layer_norm(xr, (n,), wr, br, 1e-5)

        def torch_version():
            xr.grad = wr.grad = br.grad = None
            y.backward(dy, retain_graph=True)

        x64, w64 = x.double().requires_grad_(), w.double().requires_grad_()
        F.layer_norm(x64, (n,), w64, b.double(), 1e-5).backward(dy.double())
        results, errs = [], []
        for version in (lock_version, det_version):
            seen = set()
            for _ in range(20):
                version()
                torch.cuda.synchronize()
                seen.add(dw.view(torch.int16).cpu().numpy().tobytes())
            results.append(len(seen))
            errs.append((dw.double() - w64.grad).abs().max().item())
        times = [blk.testing.do_bench(f) * 1e3 for f in (lock_version, det_version, torch_version)]
        print(f"| {m}x{n} | f16 | {times[0]:.1f} | {times[1]:.1f} | {times[2]:.1f} | {results[0]} / {results[1]} | "
              f"{errs[0]:.3g} / {errs[1]:.3g} |", flush=True)


if __name__ == "__main__":
    main()
