"""blk from Python: compile blk kernels and launch them on NumPy arrays (the
cpu device, the reference interpreter) or, on a GPU, on device memory, the
way Triton kernels are launched (docs/python.md).

    import blk
    add = blk.compile("dsl_examples/add.blk", device="cpu")["add"]
    add[(blk.cdiv(n, 256),)](x, y, out, n, BLOCK=256)   # out holds x + y afterwards

Const parameters are keyword arguments of the launch; each new combination
is compiled once and kept. Pointer arguments on the cpu device are NumPy
arrays (C-contiguous, of the pointer's element type): copied in before the
launch and back after it.
"""
import ctypes

from . import _lib
from ._args import Marshal
from ._lib import BlkError

__all__ = ["compile", "Module", "Kernel", "BlkError", "cdiv", "next_power_of_2"]
__version__ = "0.1.0"


def cdiv(a, b):
    """a / b rounded up, for grids: cdiv(1000, 256) == 4."""
    return -(-a // b)


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1), for block sizes."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


_contexts = {}


def _context(device):
    """The process's context for "cpu" or "cuda" (device 0), made once."""
    if device not in _contexts:
        ctx = ctypes.c_void_p()
        if device == "cpu":
            _lib.check(_lib.lib.blk_context_create_cpu(ctypes.byref(ctx)))
        else:
            _lib.check(_lib.lib.blk_context_create_cuda(0, ctypes.byref(ctx)))
        _contexts[device] = ctx
    return _contexts[device]


def _auto_device():
    try:
        _context("cuda")
        return "cuda"
    except BlkError:
        return "cpu"


def compile(source, device=None, name=None, num_warps=0, num_stages=0):
    """A Module from a .blk file's path or from source text. device: "cpu"
    (the reference interpreter), "cuda", or None (the GPU if there is one).
    Nothing is compiled until a launch gives the const parameters; errors
    in the source are reported then, as BlkError with the diagnostics."""
    if device not in (None, "cpu", "cuda"):
        raise ValueError(f"blk.compile: device must be 'cpu', 'cuda' or None, not {device!r}")
    if "\n" not in source and "{" not in source and source.endswith(".blk"):
        with open(source, encoding="utf-8") as f:
            text = f.read()
        name = name or source
    else:
        text = source
    return Module(text, device or _auto_device(), name or "<source>", num_warps, num_stages)


def _define(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Module:
    """The kernels of one source, compiled per set of const parameters."""

    def __init__(self, text, device, name, num_warps, num_stages):
        self.text, self.device, self.name = text, device, name
        self.num_warps, self.num_stages = num_warps, num_stages
        self._compiled = {}  # (defines, num_warps, num_stages) -> blk_module
        self._kernels = {}   # (that key, kernel name) -> (blk_kernel, [(name, type, kind)])

    def __getitem__(self, kernel):
        return Kernel(self, kernel)

    def __getattr__(self, kernel):
        if kernel.startswith("_"):
            raise AttributeError(kernel)
        return Kernel(self, kernel)

    def _module(self, defines, num_warps, num_stages):
        key = (defines, num_warps, num_stages)
        if key not in self._compiled:
            enc = [d.encode() for d in defines]
            arr = (ctypes.c_char_p * max(len(enc), 1))(*enc)
            opt = _lib.CompileOptions(arr, len(enc), num_warps, None, self.name.encode(), num_stages)
            mod = ctypes.c_void_p()
            data = self.text.encode()
            _lib.check(_lib.lib.blk_module_create(_context(self.device), data, len(data), ctypes.byref(opt),
                                                  ctypes.byref(mod)))
            self._compiled[key] = mod
        return self._compiled[key]

    def _kernel(self, name, defines, num_warps, num_stages):
        """The kernel's handle and its runtime parameters, looked up once per combination."""
        key = ((defines, num_warps, num_stages), name)
        if key not in self._kernels:
            mod = self._module(defines, num_warps, num_stages)
            k = ctypes.c_void_p()
            _lib.check(_lib.lib.blk_module_get_kernel(mod, name.encode(), ctypes.byref(k)))
            params = [(_lib.lib.blk_kernel_arg_name(k, i).decode(), _lib.lib.blk_kernel_arg_type(k, i).decode(),
                       _lib.lib.blk_kernel_arg_kind(k, i)) for i in range(_lib.lib.blk_kernel_num_args(k))]
            self._kernels[key] = (k, params)
        return self._kernels[key]

    def __del__(self):
        for mod in getattr(self, "_compiled", {}).values():
            _lib.lib.blk_module_destroy(mod)


class Kernel:
    """One kernel of a Module; kernel[grid](*args, **consts) launches it."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __getitem__(self, grid):
        return lambda *args, **consts: self.run(grid, *args, **consts)

    def _handle(self, consts):
        """(blk_kernel, its parameters) for these const parameters."""
        num_warps = consts.pop("num_warps", self.module.num_warps)
        num_stages = consts.pop("num_stages", self.module.num_stages)
        defines = tuple(f"{k}={_define(v)}" for k, v in sorted(consts.items()))
        return self.module._kernel(self.name, defines, num_warps, num_stages)

    def signature(self, **consts):
        """[(name, type)] of the runtime parameters, types as blk spells them."""
        return [(name, ptype) for name, ptype, _ in self._handle(consts)[1]]

    def ptx(self, **consts):
        """The kernel's PTX for these const parameters (without launch specialization)."""
        k = self._handle(consts)[0]
        out = ctypes.c_char_p()
        _lib.check(_lib.lib.blk_kernel_ptx(k, ctypes.byref(out)))
        return out.value.decode()

    def run(self, grid, *args, **consts):
        meta = dict(consts)
        k, params = self._handle(consts)
        if callable(grid):
            grid = grid(meta)
        grid = tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,)))
        if not 1 <= len(grid) <= 3:
            raise ValueError(f"kernel '{self.name}': a grid has 1 to 3 dimensions, got {len(grid)}")
        grid += (1,) * (3 - len(grid))
        n = len(params)
        if len(args) != n:
            names = ", ".join(name for name, _, _ in params)
            raise TypeError(f"kernel '{self.name}' takes {n} arguments ({names}), got {len(args)}")
        with Marshal(self.name, self.module.device, _context(self.module.device), params) as m:
            cargs = m.convert(args)
            _lib.check(_lib.lib.blk_launch(k, grid[0], grid[1], grid[2], cargs, n, m.stream))
