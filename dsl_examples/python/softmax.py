"""Row softmax through dsl_examples/softmax.blk, as a drop-in for
torch.softmax(x, dim=-1) on CUDA tensors (and on CPU tensors and NumPy
arrays, on the reference interpreter). The number of warps is autotuned per
row length; the block holds a whole row."""
import blk

from _common import blk_type, contiguous, empty, module

_configs = [blk.Config(num_warps=w) for w in (4, 8, 16)]
_tuned = {}


def softmax(x, dim=-1):
    """softmax over the last dimension (dim must be -1 or x.ndim - 1)."""
    if dim not in (-1, x.ndim - 1):
        raise ValueError("blk softmax: only the last dimension")
    x = contiguous(x)
    rows = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])  # a reshape costs a microsecond: only if needed
    out = empty(rows, rows.shape)
    kernel = module("softmax.blk", x).softmax
    if kernel.module.device == "cuda":  # time configs on the GPU; the interpreter's choice would mean nothing
        if kernel.module not in _tuned:
            _tuned[kernel.module] = blk.autotune(_configs, key=["n_cols", "input"])(kernel)
        kernel = _tuned[kernel.module]
    n_rows, n_cols = rows.shape
    kernel[(n_rows,)](out, rows, n_cols, n_cols, n_cols, T=blk_type(x), BLOCK=blk.next_power_of_2(n_cols))
    return out if x.ndim == 2 else out.reshape(x.shape)
