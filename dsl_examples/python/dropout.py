"""Seeded dropout through dsl_examples/dropout.blk: the mask is never
stored, it is regenerated from (seed, element index) with Philox, bit-exact
with Triton's tl.rand. With PyTorch, Dropout is an autograd.Function whose
backward applies the same mask to the gradient."""
import blk

from _common import blk_type, contiguous, empty, is_torch, module

BLOCK = 1024


def dropout(x, p, seed):
    """x with each element zeroed with probability p (the rest scaled by
    1 / (1 - p)); the same (seed, p) always drops the same elements."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"blk dropout: p must be in [0, 1), not {p}")
    if is_torch(x) and x.requires_grad:
        return Dropout.apply(x, p, seed)
    return _apply(x, p, seed)


def _apply(x, p, seed):
    x = contiguous(x)
    out = empty(x, x.shape)
    n = x.size if not is_torch(x) else x.numel()
    module("dropout.blk", x).dropout[(blk.cdiv(n, BLOCK),)](x, out, n, p, seed, T=blk_type(x), BLOCK=BLOCK)
    return out


try:
    import torch

    class Dropout(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, p, seed):
            ctx.p, ctx.seed = p, seed
            return _apply(x.detach(), p, seed)

        @staticmethod
        def backward(ctx, dy):
            # d(out)/dx is the mask times 1/(1-p): the same kernel on dy
            return _apply(dy, ctx.p, ctx.seed), None, None
except ImportError:
    Dropout = None
