"""Reading a DLPack capsule (the `__dlpack__` protocol) without a C
extension: its DLTensor's data address and element type, through ctypes.
The layout is DLPack's ABI (dlpack.h, versions 0.x, the "dltensor" capsule)."""
import ctypes

CPU, CUDA = 1, 2                                 # DLDeviceType
INT, UINT, FLOAT, BFLOAT, BOOL = 0, 1, 2, 4, 6   # DLDataTypeCode
FLOAT8_E4M3FN, FLOAT8_E5M2 = 10, 12              # DLPack 1.1's codes for the fp8 formats
_CODE_NAMES = {INT: "int", UINT: "uint", FLOAT: "float", BFLOAT: "bfloat", BOOL: "bool",
               FLOAT8_E4M3FN: "float8_e4m3fn", FLOAT8_E5M2: "float8_e5m2"}


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class View:
    """What a capsule describes: the first element's address, the element
    type as (type code, bits), the shape and the strides in elements
    (None: C-contiguous)."""
    __slots__ = ("address", "dtype", "shape", "strides")

    def __init__(self, address, dtype, shape, strides):
        self.address, self.dtype, self.shape, self.strides = address, dtype, shape, strides

    def contiguous(self):
        if self.strides is None:
            return True
        expect = 1
        for size, stride in reversed(list(zip(self.shape, self.strides))):
            if size != 1 and stride != expect:
                return False
            expect *= size
        return True


def view(capsule):
    """The View of an unconsumed capsule. The capsule stays its owner's: it
    frees the tensor when garbage-collected, so keep it alive while the
    memory is in use."""
    t = _DLTensor.from_address(_get_pointer(capsule, b"dltensor"))  # DLManagedTensor begins with its DLTensor
    shape = tuple((ctypes.c_int64 * t.ndim).from_address(t.shape)) if t.ndim else ()
    strides = tuple((ctypes.c_int64 * t.ndim).from_address(t.strides)) if t.ndim and t.strides else None
    return View((t.data or 0) + t.byte_offset, (t.code, t.bits if t.lanes == 1 else -1), shape, strides)


def type_name(dtype):
    code, bits = dtype
    if bits <= 0:
        return "a vector type"
    name = _CODE_NAMES.get(code, f"code {code}")
    return name if name.startswith("float8") else f"{name}{bits}"
