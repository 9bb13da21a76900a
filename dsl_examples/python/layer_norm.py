"""Layer norm through dsl_examples/layernorm.blk (Triton's tutorial 05): a
fused forward, and a backward in two kernels: the first computes dX and
partial dW/dB rows (each program summing its own rows; or, as the tutorial,
GROUP_SIZE_M rows shared under locks), the second reduces the partial rows.

With PyTorch, layer_norm() is a drop-in for torch.nn.functional.layer_norm
over the last dimension, differentiable through LayerNorm (an
autograd.Function). forward() and backward() work on NumPy arrays too, on
the reference interpreter."""
import blk

from _common import blk_type, contiguous, empty, is_torch, module, zeros


def _sizes(n):
    block = blk.next_power_of_2(n)
    if block * 2 > 65536:  # 2 bytes per element; the backward holds a whole row
        raise ValueError(f"blk layer_norm: rows of {n} elements are more than the backward kernel holds")
    # the tutorial's choices for the lock version: a whole row backward, and
    # fewer partial-sum groups as rows get longer
    group = 256 if n <= 1024 else 128 if n <= 4096 else 96 if n <= 8192 else 64
    return block, group


def _forward_config(n, t):
    """(BLOCK_SIZE, num_warps) of the forward for rows of n elements of blk
    type t. Measured on the H100 (bench/layer_norm_sweep.py,
    docs/performance.md): a 16-bit row whose power of two is 8192 or 16384
    and that fills over 3/4 of it, whole, 64 elements a thread (N = 15872:
    16384 and 8 warps, 95 us against 100 in blocks of 4096, with the
    runtime's occupancy target; 125 without it); other rows in blocks of up
    to 4096, a warp per 1024 elements of the row's power of two, 4 to 16."""
    full = blk.next_power_of_2(n)
    if t != "f32" and 8192 <= full <= 16384 and 4 * n > 3 * full:  # measured up to 16384
        return full, full // (64 * 32)
    return min(full, 4096), min(16, max(4, full // 1024))


def _sm_count(x):
    """Streaming multiprocessors of x's GPU (8 for arrays on the interpreter)."""
    if is_torch(x) and x.is_cuda:
        import torch
        return torch.cuda.get_device_properties(x.device).multi_processor_count
    return 8


def _programs(x, n):
    """Programs of the deterministic backward: enough for every SM, more for
    short rows, whose programs finish a row sooner (H100: 4 per SM at N <=
    2048, 2 at 4096, 1 beyond, bench/layer_norm_sweep.py)."""
    return _sm_count(x) * (4 if n <= 2048 else 2 if n <= 4096 else 1)


def forward(x, weight, bias, eps):
    """(y, mean, rstd) for x of shape (M, N), weight and bias of shape (N,)."""
    m, n = x.shape
    _sizes(n)
    block, num_warps = _forward_config(n, blk_type(x))
    y = empty(x, (m, n))
    mean, rstd = empty(x, (m,), "float32"), empty(x, (m,), "float32")
    module("layernorm.blk", x).layer_norm_fwd[(m,)](x, y, weight, bias, mean, rstd, n, n, eps, T=blk_type(x),
                                                   BLOCK_SIZE=block, num_warps=num_warps)
    return y, mean, rstd


def backward(dy, x, weight, mean, rstd, deterministic=True, programs=None):
    """(dx, dweight, dbias) from the forward's saved x, mean and rstd.

    deterministic=True (the default): layer_norm_bwd_dx_det, each of
    `programs` programs summing its rows' dW/dB (in registers, or in shared
    memory where the registers would not hold them: the compiler decides);
    the same bits every run, and faster than the lock version at every
    size (H100: bench/side_by_side.py, docs/performance.md).
    False: the tutorial's lock version, whose dW/dB depend on the order in
    which programs take the locks."""
    m, n = x.shape
    block_n, group = _sizes(n)
    if deterministic:
        group = min(programs or _programs(x, n), m)
    t = blk_type(x)
    mod = module("layernorm.blk", x)
    dx = empty(x, (m, n))
    if deterministic:  # each program writes its whole partial row; the compiler picks the warps
        partial_dw, partial_db = empty(x, (group, n)), empty(x, (group, n))
        mod.layer_norm_bwd_dx_det[(group,)](dx, dy, partial_dw, partial_db, x, weight, mean, rstd, n, n, m, T=t,
                                            BLOCK_SIZE_N=block_n)
    else:
        # zeroed: the second kernel sums all `group` rows, also those no row of x fell in
        partial_dw, partial_db = zeros(x, (group, n)), zeros(x, (group, n))
        locks = zeros(x, (2 * group,), "int32")  # a lock and a "written yet" flag per group
        num_warps = min(max(block_n // 256, 1), 8)  # the tutorial's
        mod.layer_norm_bwd_dx[(m,)](dx, dy, partial_dw, partial_db, x, weight, mean, rstd, locks, n, n, T=t,
                                    GROUP_SIZE_M=group, BLOCK_SIZE_N=block_n, num_warps=num_warps)
    dw, db = empty(x, (n,)), empty(x, (n,))
    mod.layer_norm_bwd_dwdb[(blk.cdiv(n, 128),)](partial_dw, partial_db, dw, db, group, n, T=t,
                                                 BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    return dx, dw, db


try:
    import torch

    class LayerNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, normalized_shape, weight, bias, eps):
            rows = x.reshape(-1, x.shape[-1]).contiguous()
            y, mean, rstd = forward(rows, weight.contiguous(), bias.contiguous(), eps)
            ctx.save_for_backward(rows, weight, mean, rstd)
            return y.reshape(x.shape)

        @staticmethod
        def backward(ctx, dy):
            rows, weight, mean, rstd = ctx.saved_tensors
            dx, dw, db = backward(dy.reshape(rows.shape).contiguous(), rows, weight.contiguous(), mean, rstd)
            return dx.reshape(dy.shape), None, dw, db, None
except ImportError:
    LayerNorm = None


def layer_norm(x, normalized_shape, weight, bias, eps=1e-5):
    """torch.nn.functional.layer_norm(x, normalized_shape, weight, bias, eps)
    for a normalized_shape of the last dimension, with weight and bias."""
    if tuple(normalized_shape) != (x.shape[-1],):
        raise ValueError("blk layer_norm: normalized_shape must be the last dimension")
    if is_torch(x):
        return LayerNorm.apply(x, normalized_shape, weight, bias, eps)
    rows = contiguous(x).reshape(-1, x.shape[-1])
    return forward(rows, weight, bias, eps)[0].reshape(x.shape)
