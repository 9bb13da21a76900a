"""The C runtime (include/blk.h) through ctypes: finding libblk.so, the
function prototypes, and turning a failed status into an exception."""
import ctypes
import ctypes.util
import os

PTR, I32, U32, I64, F32, U64, F64 = range(7)  # blk_arg_kind


class BlkError(RuntimeError):
    """A blk call failed; the message is the runtime's (blk_last_error)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class BlkWarning(UserWarning):
    """A successful compile's notes and warnings (blk_module_diagnostics), as blkc prints them."""


def _candidates():
    """Where libblk.so may be: $BLK_LIBRARY, beside the package (an install
    that bundles it), the build tree of a checkout, then the system's."""
    env = os.environ.get("BLK_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libblk.so.0")
    yield os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libblk.so.0")
    found = ctypes.util.find_library("blk")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if not os.path.exists(path) and os.sep in path:
            tried.append(f"{path} (no such file)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as err:
            tried.append(f"{path} ({err})")
    raise ImportError("blk: cannot find libblk.so; build blkc (scripts/build.sh) or set BLK_LIBRARY "
                      "to the library's path. Tried: " + "; ".join(tried or ["nothing"]))


lib = _load()


def _options():
    """The compiler's integer options and flags (compiler/options.def), as this library names them."""
    try:
        ints, flags, size = lib.blk_compile_int_options, lib.blk_compile_flags, lib.blk_compile_options_size
    except AttributeError:
        raise ImportError(f"blk: {lib._name} is older than this package (it has no blk_compile_int_options): "
                          "rebuild it, or point BLK_LIBRARY at a current build") from None
    ints.restype, flags.restype, size.restype = ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t
    return tuple(ints().decode().split()), tuple(flags().decode().split()), size()


INT_OPTIONS, FLAGS, _OPTIONS_SIZE = _options()
_FIXED_INTS = ("num_warps", "num_stages", "min_blocks_per_sm")  # where blk.h has always had them
if INT_OPTIONS[:3] != _FIXED_INTS:
    raise ImportError(f"blk: {lib._name}'s integer options begin {INT_OPTIONS[:3]}, not {_FIXED_INTS}: the library "
                      "and the package are of different versions")


class CompileOptions(ctypes.Structure):
    """include/blk.h's blk_compile_options: num_warps, num_stages and min_blocks_per_sm in their
    places, any other integer option, then an int per flag in FLAGS' order, so an option added
    to the compiler reaches Python without a change here."""
    _fields_ = ([("defines", ctypes.POINTER(ctypes.c_char_p)), ("num_defines", ctypes.c_int),
                 ("num_warps", ctypes.c_int), ("arch", ctypes.c_char_p), ("name", ctypes.c_char_p),
                 ("num_stages", ctypes.c_int), ("min_blocks_per_sm", ctypes.c_int)] +
                [(o, ctypes.c_int) for o in INT_OPTIONS[3:]] + [(f, ctypes.c_int) for f in FLAGS])


if ctypes.sizeof(CompileOptions) != _OPTIONS_SIZE:
    raise ImportError(f"blk: {lib._name}'s blk_compile_options is {_OPTIONS_SIZE} bytes, this package lays it out in "
                      f"{ctypes.sizeof(CompileOptions)}: the library and the package are of different versions")
_P = ctypes.c_void_p
for name, res, args in [
    ("blk_last_error", ctypes.c_char_p, []),
    ("blk_status_string", ctypes.c_char_p, [ctypes.c_int]),
    ("blk_cache_directory", ctypes.c_char_p, []),
    ("blk_context_create_cuda", ctypes.c_int, [ctypes.c_int, ctypes.POINTER(_P)]),
    ("blk_context_create_cpu", ctypes.c_int, [ctypes.POINTER(_P)]),
    ("blk_context_destroy", None, [_P]),
    ("blk_context_device", ctypes.c_char_p, [_P]),
    ("blk_context_shuffle_programs", ctypes.c_int, [_P, ctypes.c_uint64]),
    ("blk_module_create", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(CompileOptions),
                                         ctypes.POINTER(_P)]),
    ("blk_module_destroy", None, [_P]),
    ("blk_module_diagnostics", ctypes.c_char_p, [_P]),
    ("blk_module_get_kernel", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(_P)]),
    ("blk_kernel_num_args", ctypes.c_int, [_P]),
    ("blk_kernel_consts", ctypes.c_char_p, [_P]),
    ("blk_kernel_arg_name", ctypes.c_char_p, [_P, ctypes.c_int]),
    ("blk_kernel_arg_kind", ctypes.c_int, [_P, ctypes.c_int]),
    ("blk_kernel_arg_type", ctypes.c_char_p, [_P, ctypes.c_int]),
    ("blk_kernel_ptx", ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_char_p)]),
    ("blk_kernel_launch_ptx", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
    ("blk_kernel_plan", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
    ("blk_kernel_explore", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
    # args: blk_arg[num_args] packed by _args.packer, passed as bytes
    ("blk_launch", ctypes.c_int, [_P, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_char_p, ctypes.c_int,
                                  _P]),
    # record: a blk_launch_record packed by _args.record_packer, passed as bytes (one argument to convert)
    ("blk_launch_record_run", ctypes.c_int, [ctypes.c_char_p]),
    ("blk_malloc", ctypes.c_int, [_P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64)]),
    ("blk_free", ctypes.c_int, [_P, ctypes.c_uint64]),
    ("blk_memcpy_to_device", ctypes.c_int, [_P, ctypes.c_uint64, _P, ctypes.c_size_t]),
    ("blk_memcpy_to_host", ctypes.c_int, [_P, _P, ctypes.c_uint64, ctypes.c_size_t]),
    ("blk_memset", ctypes.c_int, [_P, ctypes.c_uint64, ctypes.c_int, ctypes.c_size_t]),
    ("blk_synchronize", ctypes.c_int, [_P]),
]:
    fn = getattr(lib, name)
    fn.restype = res
    fn.argtypes = args


def _status_names():
    """blk_status values by name (COMPILE, OUT_OF_MEMORY, ...), read from
    blk_status_string, so the enum is written down only in blk.h."""
    names = {}
    for value in range(1, 64):
        text = lib.blk_status_string(value).decode()
        if not text.startswith("BLK_ERROR_"):
            break
        names[text.split(":")[0][len("BLK_ERROR_"):]] = value
    return names


globals().update(_status_names())  # COMPILE, OUT_OF_MEMORY, BAD_GRID, CUDA, KERNEL_FAULT, ...


def check(status):
    """Raises BlkError with the runtime's message when status is not 0."""
    if status:
        raise BlkError(status, lib.blk_last_error().decode(errors="replace"))
