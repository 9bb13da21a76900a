"""What the Python examples share: the blk modules they compile (one per
device, compiled once), and making arrays like a given one, so each example
works on PyTorch tensors (CUDA or CPU) and on NumPy arrays alike."""
import os
import sys

import blk

EXAMPLES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_modules = {}

# an array's dtype name -> the kernels' element type T (bf16 from PyTorch only:
# NumPy has no bfloat16)
BLK_TYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def is_torch(x):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def device_of(x):
    """"cuda" for a CUDA tensor, "cpu" (the reference interpreter) otherwise."""
    return "cuda" if is_torch(x) and x.is_cuda else "cpu"


def module(name, x):
    """dsl_examples/<name> compiled for the device x lives on."""
    key = (name, device_of(x))
    if key not in _modules:
        _modules[key] = blk.compile(os.path.join(EXAMPLES, name), device=key[1])
    return _modules[key]


def dtype_name(x):
    return str(x.dtype).replace("torch.", "")


_blk_type_of = {}  # dtype object -> T: asked at every call


def blk_type(x):
    found = _blk_type_of.get(x.dtype)
    if found is not None:
        return found
    name = dtype_name(x)
    if name not in BLK_TYPES:
        raise TypeError(f"the blk examples take float32, float16 or bfloat16 arrays, not {name}")
    _blk_type_of[x.dtype] = BLK_TYPES[name]
    return BLK_TYPES[name]


def empty(like, shape, dtype=None):
    """An uninitialized array of `shape` on like's device, of like's dtype or `dtype` (a name)."""
    if is_torch(like):
        torch = sys.modules["torch"]
        return torch.empty(shape, dtype=getattr(torch, dtype) if dtype else like.dtype, device=like.device)
    import numpy
    return numpy.empty(shape, dtype=dtype or like.dtype)


def zeros(like, shape, dtype=None):
    out = empty(like, shape, dtype)
    out[...] = 0
    return out


def contiguous(x):
    if is_torch(x):
        return x.contiguous()
    import numpy
    return numpy.ascontiguousarray(x)
