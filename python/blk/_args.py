"""Launch arguments: Python values to blk_arg, checked against the kernel's
parameters (their types from blk_kernel_arg_type). NumPy arrays on the cpu
device are copied into blk memory before the launch and back after it;
device memory on the GPU (PyTorch CUDA tensors, __cuda_array_interface__)
is passed as its address."""
import ctypes
import sys

from . import _lib

# a pointer parameter's type -> what it takes: the NumPy dtype, the PyTorch
# dtype and the array-interface type (bf16 has no NumPy type: its arrays
# are uint16 holding the bits)
_POINTEES = {
    "*f32": ("float32", "torch.float32", "f4"),
    "*f16": ("float16", "torch.float16", "f2"),
    "*bf16": ("uint16", "torch.bfloat16", "u2"),
    "*i32": ("int32", "torch.int32", "i4"),
    "*u32": ("uint32", "torch.uint32", "u4"),
    "*i64": ("int64", "torch.int64", "i8"),
    "*i1": ("bool", "torch.bool", "b1"),
}


class Marshal:
    """Converts one launch's arguments; on leaving, copies arrays back (if
    the launch succeeded) and frees the blk memory it took."""

    def __init__(self, kernel, device, ctx, params):
        self.kernel, self.device, self.ctx, self.params = kernel, device, ctx, params
        self.copies = []   # (array, blk_ptr): copied in, to copy back
        self.owned = {}    # array data address -> blk_ptr, so one array passed twice is one buffer
        self.stream = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        try:
            if kind is None:
                for arr, ptr in self.copies:
                    if arr.flags.writeable:
                        _lib.check(_lib.lib.blk_memcpy_to_host(self.ctx, arr.ctypes.data, ptr, arr.nbytes))
        finally:
            for ptr in self.owned.values():
                _lib.lib.blk_free(self.ctx, ptr)
        return False

    def _fail(self, i, name, what):
        raise TypeError(f"kernel '{self.kernel}', argument {i} ('{name}'): {what}")

    def convert(self, args):
        out = (_lib.Arg * max(len(args), 1))()
        for i, (a, (name, ptype, kind)) in enumerate(zip(args, self.params)):
            out[i].kind = kind
            if kind == _lib.PTR:
                out[i].value.ptr = self._pointer(i, name, ptype, a)
            elif kind == _lib.F32:
                if not isinstance(a, (int, float)) and not hasattr(a, "__float__"):
                    self._fail(i, name, f"expects a number ({ptype}), got {type(a).__name__}")
                out[i].value.f = float(a)
            else:
                if isinstance(a, float) or not hasattr(a, "__index__"):
                    self._fail(i, name, f"expects an integer ({ptype}), got {type(a).__name__}")
                out[i].value.i = a.__index__()
        return out

    def _pointer(self, i, name, ptype, a):
        if isinstance(a, (int, float)):
            self._fail(i, name, f"expects an array or tensor ({ptype}), got {type(a).__name__}")
        numpy_type, torch_type, typestr = _POINTEES.get(ptype, (None, None, None))
        if type(a).__module__.startswith("torch"):
            if str(a.dtype) != torch_type:
                self._fail(i, name, f"a tensor of {a.dtype} where the kernel takes {ptype}")
            if a.is_cuda:
                if self.device != "cuda":
                    self._fail(i, name, "a CUDA tensor, but the module is compiled for the cpu device")
                self.stream = sys.modules["torch"].cuda.current_stream(a.device).cuda_stream
                return a.data_ptr()
            a = a.numpy()  # a CPU tensor: the NumPy view of its memory
        if hasattr(a, "__cuda_array_interface__"):
            iface = a.__cuda_array_interface__
            if iface["typestr"][1:] != typestr:
                self._fail(i, name, f"device memory of type {iface['typestr']} where the kernel takes {ptype}")
            if self.device != "cuda":
                self._fail(i, name, "device memory, but the module is compiled for the cpu device")
            return iface["data"][0]
        if not hasattr(a, "__array_interface__"):
            self._fail(i, name, f"expects an array or tensor ({ptype}), got {type(a).__name__}")
        if self.device != "cpu":
            self._fail(i, name, "a host array, but the module runs on the GPU: pass device memory "
                                "(a CUDA tensor)")
        if str(a.dtype) != numpy_type:
            self._fail(i, name, f"an array of {a.dtype} where the kernel takes {ptype}"
                                + (" (bf16 arrays are uint16 holding the bits)" if ptype == "*bf16" else ""))
        if not a.flags.c_contiguous:
            self._fail(i, name, "a non-contiguous array: it is copied as one block of memory, so pass "
                                "numpy.ascontiguousarray(...) and its strides")
        addr = a.__array_interface__["data"][0]
        if addr in self.owned:
            return self.owned[addr]
        ptr = ctypes.c_uint64()
        _lib.check(_lib.lib.blk_malloc(self.ctx, max(a.nbytes, 1), ctypes.byref(ptr)))
        self.owned[addr] = ptr.value
        if a.nbytes:
            _lib.check(_lib.lib.blk_memcpy_to_device(self.ctx, ptr.value, a.ctypes.data, a.nbytes))
        self.copies.append((a, ptr.value))
        return ptr.value
