"""Row softmax through dsl_examples/softmax.blk, as a drop-in for
torch.softmax(x, dim=-1) on CUDA tensors (and on CPU tensors and NumPy
arrays, on the reference interpreter). The number of warps is autotuned per
row length; the block holds a whole row."""
import sys

import blk

from _common import blk_type, contiguous, empty, module

_configs = [blk.Config(num_warps=w) for w in (4, 8, 16)]
_tuned = {}
# (dtype, row length, device) -> what a call of a contiguous 2-D array there needs once its
# config is chosen: the kernel, its const parameters (the config's among them), the function
# that makes the output and the test for a contiguous input. The first call of each goes the
# long way (and tunes); later ones skip the lookups and the autotuner's own key.
_ready = {}


def softmax(x, dim=-1):
    """softmax over the last dimension (dim must be -1 or x.ndim - 1)."""
    if dim not in (-1, x.ndim - 1):
        raise ValueError("blk softmax: only the last dimension")
    if x.ndim == 2:
        try:
            ready = _ready.get((x.dtype, x.shape[1], x.device))
        except AttributeError:  # an array without .device (NumPy before 2.0)
            ready = None
        if ready is not None and ready[3](x):
            kernel, consts, empty_like = ready[0], ready[1], ready[2]
            out = empty_like(x)
            n_rows, n_cols = x.shape
            kernel.run((n_rows,), out, x, n_cols, n_cols, n_cols, **consts)
            return out
    x = contiguous(x)
    rows = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])  # a reshape costs a microsecond: only if needed
    out = empty(rows, rows.shape)
    kernel = module("softmax.blk", x).softmax
    n_rows, n_cols = rows.shape
    consts = {"T": blk_type(x), "BLOCK": blk.next_power_of_2(n_cols)}
    if kernel.module.device == "cuda":  # time configs on the GPU; the interpreter's choice would mean nothing
        if kernel.module not in _tuned:
            _tuned[kernel.module] = blk.autotune(_configs, key=["n_cols", "input"])(kernel)
        tuner = _tuned[kernel.module]
        tuner[(n_rows,)](out, rows, n_cols, n_cols, n_cols, **consts)
        if x.ndim == 2:  # a CUDA tensor: PyTorch's
            torch = sys.modules["torch"]
            _ready[(x.dtype, n_cols, x.device)] = (kernel, {**consts, **tuner.best_config.all()}, torch.empty_like,
                                                   torch.Tensor.is_contiguous)
    else:
        kernel[(n_rows,)](out, rows, n_cols, n_cols, n_cols, **consts)
    return out if x.ndim == 2 else out.reshape(x.shape)
