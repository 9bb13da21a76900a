"""Launch arguments: Python values to the runtime's blk_arg array, checked
against the kernel's parameters (their types from blk_kernel_arg_type).

On the cpu device a pointer takes host memory (a NumPy array, a CPU tensor,
a DLPack CPU array), copied into blk memory before the launch and back after
it. On the GPU it takes device memory, passed as its address: a PyTorch CUDA
tensor (launched on its device's current stream), an object with
__cuda_array_interface__, or a DLPack CUDA tensor. Every error names the
kernel, the argument's position and its name."""
import ctypes
import math
import operator
import struct
import sys

from . import _dlpack, _lib

# A pointer parameter's type -> what it takes: the NumPy dtype, the PyTorch
# dtype, the array-interface type and the DLPack (type code, bits). bf16 and
# the fp8 types have no NumPy type: their arrays hold the bits (uint16, uint8).
_POINTEES = {
    "*f64": ("float64", "float64", "f8", (_dlpack.FLOAT, 64)),
    "*f32": ("float32", "float32", "f4", (_dlpack.FLOAT, 32)),
    "*f16": ("float16", "float16", "f2", (_dlpack.FLOAT, 16)),
    "*bf16": ("uint16", "bfloat16", "u2", (_dlpack.BFLOAT, 16)),
    "*f8e4m3": ("uint8", "float8_e4m3fn", "u1", (_dlpack.FLOAT8_E4M3FN, 8)),
    "*f8e5m2": ("uint8", "float8_e5m2", "u1", (_dlpack.FLOAT8_E5M2, 8)),
    "*i8": ("int8", "int8", "i1", (_dlpack.INT, 8)),
    "*i16": ("int16", "int16", "i2", (_dlpack.INT, 16)),
    "*i32": ("int32", "int32", "i4", (_dlpack.INT, 32)),
    "*i64": ("int64", "int64", "i8", (_dlpack.INT, 64)),
    "*u8": ("uint8", "uint8", "u1", (_dlpack.UINT, 8)),
    "*u16": ("uint16", "uint16", "u2", (_dlpack.UINT, 16)),
    "*u32": ("uint32", "uint32", "u4", (_dlpack.UINT, 32)),
    "*u64": ("uint64", "uint64", "u8", (_dlpack.UINT, 64)),
    "*i1": ("bool", "bool", "b1", (_dlpack.BOOL, 8)),
}
_NONE = (None, None, None, None)
# the types whose NumPy arrays hold bits: a tensor is viewed as this integer type
_BITS_VIEW = {"*bf16": "int16", "*f8e4m3": "uint8", "*f8e5m2": "uint8"}

# blk_arg is {int kind; (4 bytes padding); union {u64 ptr; i64 i; u64 u; float f; double d}}:
# packing it with struct is several times faster than filling ctypes fields
_FORMATS = {_lib.PTR: "i4xQ", _lib.U64: "i4xQ", _lib.F32: "i4xf4x", _lib.F64: "i4xd"}  # the others: "i4xq"
_FLOAT_KINDS = (_lib.F32, _lib.F64)


class Param:
    """One runtime parameter of a compiled kernel."""
    __slots__ = ("index", "name", "type", "kind", "numpy", "torch", "typestr", "dlpack", "_torch_dtype")

    def __init__(self, index, name, ptype, kind):
        self.index, self.name, self.type, self.kind = index, name, ptype, kind
        self.numpy, self.torch, self.typestr, self.dlpack = _POINTEES.get(ptype, _NONE)

    def torch_dtype(self, torch):
        """The PyTorch dtype object this pointer takes (None if not a pointer)."""
        try:
            return self._torch_dtype
        except AttributeError:
            self._torch_dtype = getattr(torch, self.torch) if self.torch else None
            return self._torch_dtype

    def fail(self, kernel, what, error=TypeError):
        raise error(f"kernel '{kernel}', argument {self.index} ('{self.name}'): {what}")


def is_bool(v):
    """A Python, NumPy or PyTorch boolean (also a 0-d array of one): never
    taken for an integer, since True for a count is a mistake, not a 1."""
    return isinstance(v, bool) or str(getattr(v, "dtype", "")) in ("bool", "torch.bool")


def what(v):
    """A value's kind for an error: "float", "str", "a 0-d array of float64"."""
    if hasattr(v, "__len__") and hasattr(v, "dtype") and isinstance(getattr(v, "ndim", None), int):
        return f"a {v.ndim}-d {type(v).__name__} of {v.dtype}"  # an array or a tensor, not a NumPy scalar
    return type(v).__name__


def as_integer(v):
    """v as a Python int if it is an integer (an int, a NumPy integer, a 0-d
    integer array: what operator.index takes), else None: never a float,
    a string or a bool rounded or parsed into one."""
    if type(v) is int:
        return v
    if isinstance(v, float) or is_bool(v):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


# the magnitude from which an integer rounds to infinity in a float parameter
# (round to nearest even: the largest finite value plus half its ulp); f64's
# is float()'s OverflowError
_FLOAT_OVERFLOW = {"f32": 2**128 - 2**103, "bf16": 2**128 - 2**119, "f16": 65520}


def _float_argument(kernel, p, a):
    """A number for a float parameter: an int, a float, or what has __float__
    (NumPy scalars, 0-d arrays); never a bool or a string. A finite number
    that would round to infinity in the parameter's type is an error (inf
    and NaN themselves pass); anything else is rounded by the runtime, to
    nearest even (docs/runtime.md)."""
    if type(a) is float and -65504.0 <= a <= 65504.0:
        return a  # the common case: fits every float parameter
    if is_bool(a) or isinstance(a, str) or not hasattr(a, "__float__"):
        p.fail(kernel, f"expects a number ({p.type}), got {what(a)}")
    try:
        f = float(a)
    except OverflowError:
        p.fail(kernel, f"{a} does not fit {p.type}", OverflowError)
    except (TypeError, ValueError) as err:
        p.fail(kernel, f"expects a number ({p.type}), got {what(a)} ({err})")
    limit = _FLOAT_OVERFLOW.get(p.type)
    if limit is not None and math.isfinite(f) and abs(f) >= limit:
        p.fail(kernel, f"{a} does not fit {p.type} (it would arrive as infinity)", OverflowError)
    return f


def packer(params):
    """A struct.Struct laying out blk_arg[len(params)]."""
    return struct.Struct("<" + "".join(_FORMATS.get(p.kind, "i4xq") for p in params))


def record_packer(params):
    """A struct.Struct laying out a blk_launch_record (kernel, stream, grid[3], num_args) and its
    blk_arg[len(params)]."""
    return struct.Struct("<QQIIIi" + "".join(_FORMATS.get(p.kind, "i4xq") for p in params))


def device_of(args):
    """The CUDA device index of the first PyTorch CUDA tensor (or CuPy-like
    array with .device.id) among args; None if there is none."""
    for a in args:
        if getattr(a, "is_cuda", False):
            return a.get_device()
        dev = getattr(a, "__dlpack_device__", None)
        if dev is not None and not hasattr(a, "__array_interface__"):
            kind, index = dev()
            if kind == _dlpack.CUDA:
                return index
    return None


_raw_stream = None  # torch._C._cuda_getCurrentRawStream, once found


def _current_stream(ordinal):
    global _raw_stream
    if _raw_stream is None:
        torch = sys.modules["torch"]
        # what Triton calls: no Stream object made
        _raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or \
            (lambda i: torch.cuda.current_stream(i).cuda_stream)
    return _raw_stream(ordinal)


class Marshal:
    """One launch's arguments. On leaving, copies host arrays back (if the
    launch succeeded) and frees the blk memory it took for them."""

    def __init__(self, kernel, device, ctx, params, ordinal):
        self.kernel, self.device, self.ctx, self.params, self.ordinal = kernel, device, ctx, params, ordinal
        self.copies = []   # (array, blk_ptr, Param): copied in, to copy back (or compare, if read-only)
        self.owned = {}    # array data address -> blk_ptr, so one array passed twice is one buffer
        self.keep = []     # DLPack capsules, alive until the launch is issued
        self.stream = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        try:
            if kind is None:
                changed = None
                for arr, ptr, p in self.copies:
                    if arr.flags.writeable:
                        _lib.check(_lib.lib.blk_memcpy_to_host(self.ctx, arr.ctypes.data, ptr, arr.nbytes))
                    elif changed is None and self._changed(arr, ptr):
                        changed = p
                if changed is not None:
                    changed.fail(self.kernel, "a read-only array, and the kernel wrote to it: what it wrote cannot be "
                                              "copied back, so pass a writeable array (or a copy)", ValueError)
        finally:
            for ptr in self.owned.values():
                _lib.lib.blk_free(self.ctx, ptr)
        return False

    def _changed(self, arr, ptr):
        """Whether the blk copy of read-only `arr` differs from it, bit for
        bit, after the launch. The runtime cannot say which pointers a kernel
        stores to, so a read-only array is copied in and compared after the
        launch: an output that cannot receive its results is an error, never
        a silent no-op (docs/python.md)."""
        if not arr.nbytes:
            return False
        after = (ctypes.c_char * arr.nbytes)()
        _lib.check(_lib.lib.blk_memcpy_to_host(self.ctx, after, ptr, arr.nbytes))
        return after.raw != arr.tobytes()

    def pack(self, args, layout):
        values = []
        gpu = self.device == "cuda"
        torch = sys.modules.get("torch")
        tensor = torch.Tensor if torch is not None else ()
        for a, p in zip(args, self.params):
            kind = p.kind
            values.append(kind)
            if kind == _lib.PTR:
                if a is None:  # a pointer the build has absent (Kernel._key): null, which the runtime checks
                    values.append(0)
                elif gpu and isinstance(a, tensor) and a.is_cuda and a.dtype is p.torch_dtype(torch) \
                        and a.get_device() == self.ordinal:  # the common case, checked without a call
                    if self.stream is None:
                        self.stream = _current_stream(self.ordinal)
                    values.append(a.data_ptr())
                else:
                    values.append(self._device_pointer(p, a) if gpu else self._host_pointer(p, a))
            elif type(a) is int and kind not in _FLOAT_KINDS and -(1 << 63) <= a < (1 << 63) and \
                    (kind != _lib.U64 or a >= 0):
                values.append(a)
            elif kind in _FLOAT_KINDS:
                values.append(_float_argument(self.kernel, p, a))
            else:
                v = int(a) if p.type == "i1" and is_bool(a) else as_integer(a)  # only an i1 takes a bool
                if v is None:
                    p.fail(self.kernel, f"expects an integer ({p.type}), got {what(a)}")
                lo, hi = (0, 1 << 64) if kind == _lib.U64 else (-(1 << 63), 1 << 63)
                if not lo <= v < hi:  # the runtime checks the parameter's own range
                    p.fail(self.kernel, f"{v} does not fit {p.type}", OverflowError)
                values.append(v)
        return layout.pack(*values)

    def _device_pointer(self, p, a):
        if getattr(a, "is_cuda", None) is not None and hasattr(a, "data_ptr"):  # a PyTorch tensor
            if str(a.dtype)[6:] != p.torch:
                p.fail(self.kernel, f"a tensor of {a.dtype} where the kernel takes {p.type}")
            if not a.is_cuda:
                p.fail(self.kernel, "a CPU tensor, but the module runs on the GPU: pass a CUDA tensor")
            if a.get_device() != self.ordinal:
                p.fail(self.kernel, f"a tensor on cuda:{a.get_device()}, but this launch is on cuda:{self.ordinal} "
                                    "(all tensors of a launch must be on one device)")
            if self.stream is None:
                self.stream = _current_stream(self.ordinal)
            return a.data_ptr()
        iface = getattr(a, "__cuda_array_interface__", None)
        if iface is not None:
            if iface["typestr"][1:] != p.typestr:
                p.fail(self.kernel, f"device memory of type {iface['typestr']} where the kernel takes {p.type}")
            return iface["data"][0] or 0
        if hasattr(a, "__dlpack__") and not hasattr(a, "__array_interface__"):
            kind, index = a.__dlpack_device__()
            if kind != _dlpack.CUDA or index != self.ordinal:
                p.fail(self.kernel, f"a DLPack tensor on device ({kind}, {index}), but this launch is on "
                                    f"cuda:{self.ordinal}")
            return self._dlpack(p, a).address
        if hasattr(a, "__array_interface__"):
            p.fail(self.kernel, "a host array, but the module runs on the GPU: pass device memory (a CUDA tensor)")
        p.fail(self.kernel, f"expects a tensor or device array ({p.type}), got {type(a).__name__}")

    def _dlpack(self, p, a):
        capsule = a.__dlpack__()
        self.keep.append(capsule)  # the memory stays the producer's until the capsule goes
        v = _dlpack.view(capsule)
        if v.dtype != p.dlpack:
            p.fail(self.kernel, f"a DLPack tensor of type {_dlpack.type_name(v.dtype)} where the kernel takes {p.type}")
        return v

    def _host_pointer(self, p, a):
        if getattr(a, "is_cuda", False) or hasattr(a, "__cuda_array_interface__"):
            p.fail(self.kernel, "device memory (a CUDA tensor), but the module is compiled for the cpu device")
        if hasattr(a, "data_ptr") and hasattr(a, "numpy"):  # a CPU PyTorch tensor: the NumPy view of its memory
            if str(a.dtype)[6:] != p.torch:
                p.fail(self.kernel, f"a tensor of {a.dtype} where the kernel takes {p.type}")
            bits = _BITS_VIEW.get(p.type)
            a = a.detach().numpy() if bits is None else \
                a.detach().view(getattr(sys.modules["torch"], bits)).numpy().view(p.numpy)
        elif not hasattr(a, "__array_interface__") and hasattr(a, "__dlpack__"):
            if a.__dlpack_device__()[0] != _dlpack.CPU:
                p.fail(self.kernel, "device memory (DLPack), but the module is compiled for the cpu device")
            v = self._dlpack(p, a)
            if not v.contiguous():
                p.fail(self.kernel, "a non-contiguous DLPack tensor: it is copied as one block of memory")
            # a writable NumPy view of its memory (numpy.from_dlpack's is read-only), so results come back
            numpy = __import__("numpy")
            n = int(numpy.prod(v.shape)) if v.shape else 1
            buf = (ctypes.c_byte * (n * numpy.dtype(p.numpy).itemsize)).from_address(v.address)
            a = numpy.frombuffer(buf, dtype=p.numpy).reshape(v.shape)
        if not hasattr(a, "__array_interface__"):
            p.fail(self.kernel, f"expects an array or tensor ({p.type}), got {type(a).__name__}")
        if str(a.dtype) != p.numpy:
            p.fail(self.kernel, f"an array of {a.dtype} where the kernel takes {p.type}"
                                + (f" ({p.type[1:]} arrays are {p.numpy} holding the bits)" if p.type in _BITS_VIEW else ""))
        if not a.flags.c_contiguous:
            p.fail(self.kernel, "a non-contiguous array: it is copied as one block of memory, so pass "
                                "numpy.ascontiguousarray(...) and its strides")
        addr = a.__array_interface__["data"][0]
        if addr in self.owned:
            return self.owned[addr]
        ptr = ctypes.c_uint64()
        _lib.check(_lib.lib.blk_malloc(self.ctx, max(a.nbytes, 1), ctypes.byref(ptr)))
        self.owned[addr] = ptr.value
        if a.nbytes:
            _lib.check(_lib.lib.blk_memcpy_to_device(self.ctx, ptr.value, a.ctypes.data, a.nbytes))
        self.copies.append((a, ptr.value, p))
        return ptr.value
