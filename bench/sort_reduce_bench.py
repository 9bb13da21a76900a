"""sort, a tuple reduce and flip beside PyTorch in one run on one GPU,
through the blk Python package: rows of [M, N] f32, one program per row.
sort is a bitonic network through shared memory (docs/language.md §6);
argmax by reduce((x, i), 1, first_max) runs the combine helper in shared
memory, shown beside the builtin argmax (registers and shuffles) and
torch.argmax. Median kernel time (blk.testing.do_bench: CUDA events, L2
flushed before each call) and GB/s of the bytes each must move.
    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/sort_reduce_bench.py
Prints a Markdown table."""
import torch

import blk

SRC = """
fn first_max(va, ia, vb, ib) { let b_wins = vb > va; return (where(b_wins, vb, va), where(b_wins, ib, ia)); }
kernel sort_rows(X: *f32 @align(16), Y: *f32 @align(16), const N: i32) {
    let o = program_id(0) * N + arange(0, N);
    store(Y + o, sort(load(X + o)));
}
kernel flip_rows(X: *f32 @align(16), Y: *f32 @align(16), const N: i32) {
    let o = program_id(0) * N + arange(0, N);
    store(Y + o, flip(load(X + o)));
}
kernel argmax_reduce(X: *f32 @align(16), I: *i32, const N: i32) {
    let x = load(X + program_id(0) * N + arange(0, N));
    let (m, i) = reduce((x, arange(0, N)), 0, first_max);
    store(I + program_id(0), i);
}
kernel argmax_builtin(X: *f32 @align(16), I: *i32, const N: i32) {
    store(I + program_id(0), argmax(load(X + program_id(0) * N + arange(0, N))));
}
"""


def row(name, shape, tb, tt, nbytes):
    print(f"| {name} | {shape} | {tb:.1f} | {tt:.1f} | {nbytes / tb / 1e3:.0f} | {nbytes / tt / 1e3:.0f} |", flush=True)


def main():
    torch.manual_seed(0)
    mod = blk.compile(SRC)
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}\n")
    print("| kernel | shape | blk µs | PyTorch µs | blk GB/s | PyTorch GB/s |")
    print("|---|---|---|---|---|---|")
    bench = blk.testing.do_bench
    for m, n in ((16384, 256), (4096, 1024), (1024, 4096)):
        x = torch.randn(m, n, device="cuda")
        y, i, j = torch.empty_like(x), torch.empty(m, dtype=torch.int32, device="cuda"), torch.empty(m, dtype=torch.int32, device="cuda")
        shape = f"{m}x{n}"
        run_sort = lambda: mod.sort_rows[(m,)](x, y, N=n)
        run_sort()
        assert torch.equal(y, torch.sort(x, 1).values), "sort differs from torch.sort"
        row("sort (rows)", shape, bench(run_sort) * 1e3, bench(lambda: torch.sort(x, 1)) * 1e3, 2 * x.numel() * 4)
        run_flip = lambda: mod.flip_rows[(m,)](x, y, N=n)
        run_flip()
        assert torch.equal(y, torch.flip(x, (1,))), "flip differs from torch.flip"
        row("flip (rows)", shape, bench(run_flip) * 1e3, bench(lambda: torch.flip(x, (1,))) * 1e3, 2 * x.numel() * 4)
        run_reduce = lambda: mod.argmax_reduce[(m,)](x, i, N=n)
        run_builtin = lambda: mod.argmax_builtin[(m,)](x, j, N=n)
        run_reduce(), run_builtin()
        want = torch.argmax(x, 1).int()
        assert torch.equal(i, want) and torch.equal(j, want), "argmax differs from torch.argmax"
        t_torch = bench(lambda: torch.argmax(x, 1)) * 1e3
        row("argmax by reduce((x, i), first_max)", shape, bench(run_reduce) * 1e3, t_torch, x.numel() * 4)
        row("argmax builtin", shape, bench(run_builtin) * 1e3, t_torch, x.numel() * 4)


if __name__ == "__main__":
    main()
