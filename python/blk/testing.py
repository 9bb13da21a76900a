"""Timing for benchmarks and the autotuner: do_bench(fn) runs fn repeatedly
and returns its median time in milliseconds, as Triton's do_bench does.

How it times, by what is at hand:
- PyTorch with CUDA: CUDA events around each call on the current stream,
  with the L2 cache flushed (a 256 MiB buffer zeroed) before each, so a
  call never finds its inputs left in L2 by the previous one. Kernel time,
  as Triton measures it.
- a GPU without PyTorch: the same flush through blk_memset, then the host
  clock around fn() and a blk_synchronize. This includes the launch and the
  synchronize (some microseconds), which is what a caller waits for.
- the cpu device: the host clock around fn() (the interpreter runs the
  launch before returning).
"""
import ctypes
import statistics
import sys
import time

from . import _lib

_FLUSH_BYTES = 256 << 20  # larger than any GPU's L2 (H100: 50 MiB)
_flush = {}               # where -> its flush buffer, made once


def _torch_cuda():
    torch = sys.modules.get("torch")
    return torch if torch is not None and torch.cuda.is_available() else None


def _blk_flush(ctx):
    if ctx.value not in _flush:
        ptr = ctypes.c_uint64()
        _lib.check(_lib.lib.blk_malloc(ctx, _FLUSH_BYTES, ctypes.byref(ptr)))
        _flush[ctx.value] = ptr.value
    _lib.check(_lib.lib.blk_memset(ctx, _flush[ctx.value], 0, _FLUSH_BYTES))


def _timer(device):
    """A function (fn -> milliseconds of one call) for the device."""
    from . import _auto_device, _context
    device = device or ("cuda" if _torch_cuda() else _auto_device())
    torch = _torch_cuda() if device == "cuda" else None
    if torch is not None:
        cache = torch.empty(_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")

        def time_one(fn):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            cache.zero_()
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        return time_one, torch.cuda.synchronize
    ctx = _context(device)
    sync = (lambda: _lib.check(_lib.lib.blk_synchronize(ctx)))

    def time_host(fn):
        if device == "cuda":
            _blk_flush(ctx)
            sync()
        t0 = time.perf_counter()
        fn()
        sync()
        return (time.perf_counter() - t0) * 1e3
    return time_host, sync


def do_bench(fn, warmup=25, rep=100, quantiles=None, device=None):
    """The median time of fn() in milliseconds (or the given quantiles, a
    list of fractions such as [0.5, 0.2, 0.8]). warmup and rep are time
    budgets in milliseconds, as in Triton: one call is timed to estimate how
    many calls fill them (at least 1 warm-up call and 5 timed ones).
    device: "cuda" or "cpu"; None picks the GPU if there is one."""
    time_one, sync = _timer(device)
    fn()  # compiles, loads
    sync()
    estimate = max(time_one(fn), 1e-3)
    for _ in range(max(1, int(warmup / estimate))):
        fn()
    sync()
    times = sorted(time_one(fn) for _ in range(max(5, int(rep / estimate))))
    if quantiles is None:
        return statistics.median(times)
    return [_quantile(times, q) for q in quantiles]


def _quantile(sorted_times, q):
    """Linear interpolation between the closest ranks."""
    pos = q * (len(sorted_times) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_times) - 1)
    return sorted_times[lo] + (sorted_times[hi] - sorted_times[lo]) * (pos - lo)
