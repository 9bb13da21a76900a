"""blk from Python: compile blk kernels and launch them the way Triton
kernels are launched, on PyTorch tensors on the GPU, or on NumPy arrays on
the cpu device (the reference interpreter, with its bounds checks); with an
autotuner (blk.autotune) and a timer (blk.testing.do_bench). docs/python.md.

    import blk
    add = blk.compile("dsl_examples/add.blk")["add"]       # device: the GPU if there is one
    add[(blk.cdiv(n, 256),)](x, y, out, n, BLOCK=256)      # CUDA tensors; out = x + y

Const parameters are keyword arguments of the launch; each new combination
is compiled once and kept. On the cpu device, host arrays are copied in
before the launch and back after it.
"""
import ctypes
import difflib
import functools
import os
import re
import sys
import threading
import warnings

from . import _lib
from ._args import Marshal, Param, _current_stream, as_integer, device_of, is_bool, packer, record_packer, what
from ._lib import FLAGS, INT_OPTIONS, BlkError, BlkWarning

__all__ = ["compile", "FLAGS", "INT_OPTIONS", "Module", "Kernel", "BlkError", "BlkWarning", "cdiv", "next_power_of_2", "device_name", "shuffle_programs", "autotune", "Config",
           "testing"]
__version__ = "0.1.0"  # the runtime's BLK_VERSION (a test keeps them equal)


def cdiv(a, b):
    """a / b rounded up, for grids: cdiv(1000, 256) == 4."""
    return -(-a // b)


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1), for block sizes."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


_contexts = {}
_contexts_lock = threading.Lock()


def _context(device, ordinal=0):
    """The process's context for "cpu", or for CUDA device `ordinal` (its
    primary context, the one PyTorch uses), made once."""
    key = (device, ordinal if device == "cuda" else None)
    ctx = _contexts.get(key)
    if ctx is None:
        with _contexts_lock:  # threads: one context per device, made once
            ctx = _contexts.get(key)
            if ctx is None:
                ctx = ctypes.c_void_p()
                if device == "cpu":
                    _lib.check(_lib.lib.blk_context_create_cpu(ctypes.byref(ctx)))
                else:
                    _lib.check(_lib.lib.blk_context_create_cuda(ordinal, ctypes.byref(ctx)))
                _contexts[key] = ctx
    return ctx


def device_name(device="cuda", ordinal=0):
    """What the runtime calls the device: "NVIDIA H100 80GB HBM3 (sm_90a)",
    "cpu (reference interpreter)"."""
    return _lib.lib.blk_context_device(_context(device, ordinal)).decode()


def shuffle_programs(seed):
    """On the cpu device, run each later launch's programs in an order
    shuffled by `seed` (0: in order, the default): a kernel whose result
    depends on the order its programs run in shows it."""
    _lib.check(_lib.lib.blk_context_shuffle_programs(_context("cpu"), seed))


def _auto_device():
    try:
        _context("cuda")
        return "cuda"
    except BlkError:
        return "cpu"


def compile(source, device=None, name=None, **options):
    """A Module from a .blk file's path or from source text. device: "cpu"
    (the reference interpreter), "cuda", or None (the GPU if there is one).
    options: the compiler's integer options (blk.INT_OPTIONS; 0 each by default):
    num_warps, num_stages, min_blocks_per_sm (the occupancy target, 0 automatic,
    -1 none, 1 to 32; blk_compile_options, docs/runtime.md); and its flags, each
    True or False (off by default), as blkc's options of the same names
    (blk.FLAGS lists them): no_tma (pipelined loads by cp.async even where
    sm_90a's TMA could copy them), no_warp_specialize (no producer warpgroup
    issuing a TMA loop's copies), persistent (a CUDA launch makes as many
    programs as run at once, each running many program ids in turn), debug
    (device_assert and assume checked on the GPU too; the interpreter always
    checks them; $BLK_DEBUG=1 turns it on everywhere), precise_math
    (IEEE-rounded division, sqrt and rsqrt), no_fma (no contraction into fma),
    no_bulk_reduce (relaxed block atomic_adds by reds, never a bulk reduction),
    ping_pong (a producer loop's consumer warpgroups take turns to issue
    their dots), overlap_dots (a loop's deferred dot issued in the next
    iteration right after its first dot, the work between under it).
    A launch may give any of these too, as an autotuning Config may.
    Nothing is compiled until a launch gives the const parameters; errors
    in the source are reported then, as BlkError with the diagnostics."""
    if device not in (None, "cpu", "cuda"):
        raise ValueError(f"blk.compile: device must be 'cpu', 'cuda' or None, not {device!r}")
    if isinstance(source, os.PathLike):  # pathlib.Path: always a file
        source = os.fspath(source)
        with open(source, encoding="utf-8") as f:
            text = f.read()
        name = name or source
    elif "\n" not in source and "{" not in source and source.endswith(".blk"):
        with open(source, encoding="utf-8") as f:
            text = f.read()
        name = name or source
    else:
        text = source
    return Module(text, device or _auto_device(), name or "<source>", **options)


def _int_option(where, name, value):
    """An integer option (one of INT_OPTIONS) as the C
    int it becomes: an int or a NumPy integer, never a bool, a float or a
    string, and within a C int, never cut to its low bits. The runtime then
    checks the option's own range."""
    v = as_integer(value)
    if v is None:
        raise TypeError(f"{where}: {name} must be an integer, got {what(value)}")
    if not -(1 << 31) <= v < (1 << 31):
        raise OverflowError(f"{where}: {name}={v} does not fit a C int")
    return v


def _bool_option(where, name, value):
    """A flag (one of FLAGS): a bool, or 0 or 1."""
    if is_bool(value) or (as_integer(value) in (0, 1)):
        return bool(value)
    raise TypeError(f"{where}: {name} must be True or False, got {value!r}")


def _options(where, given):
    """Each of INT_OPTIONS (0 where not given), then each of FLAGS (False), in order, checked."""
    return (*(_int_option(where, o, given.get(o, 0)) for o in INT_OPTIONS),
            *(_bool_option(where, f, given.get(f, False)) for f in FLAGS))


def _dimension(kernel, value, axis, called):
    """One grid dimension as the u32 the launch takes: an int or a NumPy
    integer from 0 to 2^32 - 1 (0 is the runtime's "empty grid" error), never
    a bool, a float or a string, and never cut to its low bits."""
    v = as_integer(value)
    if v is None:
        raise TypeError(f"kernel '{kernel}': grid dimension {axis}{called} must be an integer, got {what(value)}")
    if not 0 <= v <= 0xFFFFFFFF:
        raise OverflowError(f"kernel '{kernel}': grid dimension {axis}{called} is {v}, outside 0 to 4294967295")
    return v


def _grid(kernel, grid, called=False):
    """(gx, gy, gz) from an int, a tuple (or list) of 1 to 3 ints, or what a
    grid callable returned (called: the messages say so)."""
    how = " (from the grid callable)" if called else ""
    if type(grid) is tuple and len(grid) == 1 and type(grid[0]) is int and 0 < grid[0] <= 0xFFFFFFFF:
        return grid[0], 1, 1  # the common case, checked without a call
    if isinstance(grid, (tuple, list)) or getattr(grid, "ndim", 0) == 1:
        dims = tuple(grid)
    elif (hasattr(grid, "__index__") or isinstance(grid, float) or is_bool(grid)) and not getattr(grid, "ndim", 0):
        dims = (grid,)  # one dimension: _dimension refuses what is not an integer
    else:
        raise TypeError(f"kernel '{kernel}': a grid{how} is an int or a tuple of 1 to 3 ints, got {what(grid)}")
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"kernel '{kernel}': a grid{how} has 1 to 3 dimensions, got {len(dims)}")
    return tuple(_dimension(kernel, g, axis, how) for g, axis in zip(dims, "xyz")) + (1,) * (3 - len(dims))


# blk's type names for the dtypes NumPy and PyTorch spell (a `const T: type` takes either)
_DTYPE_NAMES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int8": "i8",
                "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32", "uint32": "u32", "int64": "i64",
                "uint64": "u64", "bool": "i1", "bool_": "i1", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}


_DTYPE_NAME_SEEN = {}  # dtype object -> blk's name: a launch that infers T asks each time


def _dtype_name(value):
    """blk's name for a torch.dtype, a numpy dtype or scalar type; None for anything else."""
    try:
        return _DTYPE_NAME_SEEN[value]
    except (KeyError, TypeError):  # not seen, or not hashable
        pass
    name = _dtype_name_of(value)
    if name is not None:  # a dtype: few distinct ones (other values, such as ints, are not kept)
        _DTYPE_NAME_SEEN[value] = name
    return name


def _dtype_name_of(value):
    if value is None:
        return None
    module = type(value).__module__ if not isinstance(value, type) else value.__module__
    if not (module.startswith("torch") or module.startswith("numpy")):
        return None
    if isinstance(value, type):  # np.float16
        name = value.__name__
    elif module.startswith("torch"):  # torch.float16, printed "torch.float16"
        name = str(value).rpartition(".")[2]
    else:  # np.dtype("float16")
        name = getattr(value, "name", None)
    return _DTYPE_NAMES.get(name)


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_KERNEL = re.compile(r"\bkernel\s+([A-Za-z_]\w*)\s*\(")
_CONST = re.compile(r'(\w+) = ("[^"]*"|[^,]*)(?:, |$)')


def _parse_consts(text):
    """blk_kernel_consts's text as values: ints, floats, bools, type names and
    strings (their quotes removed)."""
    out = {}
    for name, value in _CONST.findall(text):
        if value.startswith('"'):
            out[name] = value[1:-1]
        elif value in ("true", "false"):
            out[name] = value == "true"
        else:
            try:
                out[name] = int(value)
            except ValueError:
                try:
                    out[name] = float(value)
                except ValueError:
                    out[name] = value  # a type: "f16"
    return out


def _bind(kernel, names, args, given):
    """The arguments in parameter order from positional ones and keywords naming runtime
    parameters (names); the other keywords stay const parameters."""
    bound = list(args)
    for i, name in enumerate(names):
        if name not in given:
            continue
        if i < len(args):
            raise TypeError(f"kernel '{kernel}': argument '{name}' given by position and by keyword")
        if len(bound) != i:
            raise TypeError(f"kernel '{kernel}': argument '{names[len(bound)]}' is missing (before '{name}')")
        bound.append(given[name])
    return tuple(bound), {k: v for k, v in given.items() if k not in names}


def _define(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    dtype = _dtype_name(value)
    return dtype if dtype else str(value)


class Module:
    """The kernels of one source, compiled per set of const parameters and
    per GPU (a module belongs to one device's context)."""

    def __init__(self, text, device, name, **options):
        unknown = sorted(set(options) - set(INT_OPTIONS) - set(FLAGS))
        if unknown:
            raise TypeError(f"blk.compile: no option {', '.join(map(repr, unknown))} (the compiler's options: "
                            f"{', '.join(INT_OPTIONS + FLAGS)})")
        self.text, self.device, self.name = text, device, name
        for option, value in zip(INT_OPTIONS + FLAGS, _options(f"blk.compile ({name})", options)):
            setattr(self, option, value)  # the module's defaults: mod.num_warps, mod.no_tma, ...
        # (defines, each of INT_OPTIONS, each of FLAGS, ordinal) -> blk_module
        self._compiled = {}
        self._kernels = {}   # (that key, kernel name) -> (blk_kernel, [Param])
        self._kernel_objects = {}  # name -> Kernel, so its launches stay cached however it is looked up
        self._lock = threading.RLock()  # threads: each combination compiled once (found without it)

    def __getitem__(self, kernel):
        found = self._kernel_objects.get(kernel)
        if found is not None:
            return found
        unknown = self._unknown(kernel)
        if unknown:
            raise BlkError(_lib.NOT_FOUND, unknown)
        return self._kernel_objects.setdefault(kernel, Kernel(self, kernel))

    def __getattr__(self, kernel):
        if kernel.startswith("_"):
            raise AttributeError(kernel)
        try:
            return self[kernel]
        except BlkError as err:
            raise AttributeError(str(err)) from None

    def _runtime_params(self, kernel):
        """The names of the kernel's runtime parameters in order, read from the source's
        declaration (past comments), for arguments given by keyword; None where it cannot be read."""
        pieces = self._declaration(kernel)
        if pieces is None:
            return None
        names = [p.split(":")[0].strip() for p in pieces if p and not p.startswith("const ")]
        return names if all(n.isidentifier() for n in names) else None

    def _type_sources(self, kernel):
        """[(i, T)]: runtime parameter i is declared `*T` for a `const T: type` parameter,
        whose value a launch that does not give it takes from argument i's dtype, as Triton
        takes a pointer's element type from its tensor (Kernel.run)."""
        pieces = self._declaration(kernel) or []
        types = {p[6:].partition(":")[0].strip() for p in pieces
                 if p.startswith("const ") and p[6:].partition(":")[2].split("=")[0].strip() == "type"}
        runtime = [p for p in pieces if p and not p.startswith("const ")]
        out = []
        for i, piece in enumerate(runtime):
            declared = piece.partition(":")[2].split()
            t = declared[0][1:] if declared and declared[0].startswith("*") else None
            if t in types:
                out.append((i, t))
        return out

    def _declaration(self, kernel):
        """The kernel's parameters as the source declares them, one string each (past comments;
        an attribute's parentheses balanced); None where it cannot be read."""
        text = _COMMENT.sub(" ", self.text)
        m = re.search(r"\bkernel\s+" + re.escape(kernel) + r"\s*\(", text)
        if not m:
            return None
        depth, start, pieces = 1, m.end(), []
        for i in range(m.end(), len(text)):
            c = text[i]
            depth += (c == "(") - (c == ")")
            if (c == "," and depth == 1) or depth == 0:
                pieces.append(text[start:i].strip())
                start = i + 1
            if depth == 0:
                break
        else:
            return None
        return pieces

    def _unknown(self, kernel):
        """Why no kernel of that name is in the source (None: there may be one), said at once
        rather than at the first launch: the kernels the source declares, read past comments
        (the compiler has the last word: a launch of a name found here still compiles it)."""
        text = _COMMENT.sub(" ", self.text)
        names = _KERNEL.findall(text)
        if not names or kernel in names:
            return None
        near = difflib.get_close_matches(kernel, names, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        return f"{self.name}: no kernel named '{kernel}' (its kernels: {', '.join(names)}){hint}"

    def _module(self, key):
        if key in self._compiled:
            return self._compiled[key]
        with self._lock:
            return self._module_locked(key)

    def _module_locked(self, key):
        if key not in self._compiled:
            defines, *options, ordinal = key
            enc = [d.encode() for d in defines]
            arr = (ctypes.c_char_p * max(len(enc), 1))(*enc)
            opt = _lib.CompileOptions(defines=arr, num_defines=len(enc), arch=None, name=self.name.encode(),
                                      **{o: int(v) for o, v in zip(INT_OPTIONS + FLAGS, options)})
            mod = ctypes.c_void_p()
            data = self.text.encode()
            _lib.check(_lib.lib.blk_module_create(_context(self.device, ordinal), data, len(data),
                                                  ctypes.byref(opt), ctypes.byref(mod)))
            said = _lib.lib.blk_module_diagnostics(mod)
            if said:
                warnings.warn(said.decode(errors="replace").rstrip("\n"), BlkWarning, stacklevel=2)
            self._compiled[key] = mod
        return self._compiled[key]

    def _kernel(self, name, key):
        """The kernel's handle and its runtime parameters, looked up once per
        combination of const parameters, warps, stages and device."""
        found = self._kernels.get((key, name))
        if found is not None:
            return found
        with self._lock:
            return self._kernel_locked(name, key)

    def _kernel_locked(self, name, key):
        if (key, name) not in self._kernels:
            try:
                mod = self._module(key)
            except BlkError as err:
                if err.status != _lib.INVALID_VALUE:
                    raise
                raise BlkError(err.status, f"kernel '{name}': {err}") from None  # an option out of its range
            k = ctypes.c_void_p()
            _lib.check(_lib.lib.blk_module_get_kernel(mod, name.encode(), ctypes.byref(k)))
            params = [Param(i, _lib.lib.blk_kernel_arg_name(k, i).decode(), _lib.lib.blk_kernel_arg_type(k, i).decode(),
                            _lib.lib.blk_kernel_arg_kind(k, i)) for i in range(_lib.lib.blk_kernel_num_args(k))]
            self._kernels[(key, name)] = (k, params)
        return self._kernels[(key, name)]

    def __del__(self):
        for mod in getattr(self, "_compiled", {}).values():
            _lib.lib.blk_module_destroy(mod)


class Kernel:
    """One kernel of a Module; kernel[grid](*args, **consts) launches it."""

    def __init__(self, module, name):
        self.module, self.name = module, name
        self._launches = {}  # (consts as given, device ordinal, None arguments) -> _Launch
        # read from the source once, not at each launch
        self._runtime_names = module._runtime_params(name)
        self._keywords = frozenset(self._runtime_names or ())
        self._type_sources = module._type_sources(name)
        self._type_indices = tuple(sorted({i for i, _ in self._type_sources}))
        # (consts as given, the dtypes of the arguments a `const T: type` is taken from) -> the _Launch
        # a launch of PyTorch CUDA tensors and ints took: found without reading the rest (run)
        self._tensor_launches = {}

    def __getitem__(self, grid):
        return functools.partial(self.run, grid)  # called in C: cheaper than a lambda's frame

    def _key(self, consts, ordinal, args=()):
        """The Module's key for these const parameters (the compiler's options,
        INT_OPTIONS and FLAGS, among them) on CUDA
        device `ordinal`; a pointer argument given as None (Triton's optional pointer) adds
        `NAME=None`, a build where that pointer is absent (`NAME != None` false there)."""
        if any(a is None for a in args):
            params = self.module._kernel(self.name, self._key(consts, ordinal))[1]
            nones = {f"{self.name}.{p.name}": "None" for p, a in zip(params, args) if a is None and p.kind == _lib.PTR}
            consts = {**consts, **nones}
        consts = dict(consts)
        m = self.module
        options = _options(f"kernel '{self.name}'", {o: consts.pop(o, getattr(m, o)) for o in INT_OPTIONS + FLAGS})
        defines = tuple(f"{k}={_define(v)}" for k, v in sorted(consts.items()))
        return (defines, *options, ordinal if self.module.device == "cuda" else None)

    def _inferred_types(self, args, consts):
        """{T: "f16"} for each `const T: type` not given, from its first `*T` argument's dtype."""
        out = {}
        for i, t in self._type_sources:
            if i < len(args) and t not in consts and t not in out:
                name = _dtype_name(getattr(args[i], "dtype", None))
                if name:
                    out[t] = name
        return out

    def signature(self, **consts):
        """[(name, type)] of the runtime parameters, types as blk spells them."""
        return [(p.name, p.type) for p in self.module._kernel(self.name, self._key(consts, 0))[1]]

    def ptx(self, *args, **consts):
        """The kernel's PTX for these const parameters, its launch contract at
        the top. Without arguments: the build without launch facts. With a
        launch's arguments: the PTX that launch runs (its specialization for
        their facts, with the occupancy target the device set), compiled now
        if need be; nothing is launched."""
        return self._text("ptx", args, consts)

    def plan(self, *args, **consts):
        """Every decision the compiler makes about the kernel for these const
        parameters, as `blkc --emit=plan` prints it: each value's layout, the
        shared-memory map, pipelined loops, dots, access widths and what
        limits them. Without arguments: the build without launch facts; with
        a launch's arguments: the build for their facts. Nothing is compiled
        to code or launched."""
        return self._text("plan", args, consts)

    def explore(self, path, *args, **consts):
        """Writes to path one HTML page to study the kernel, as `blkc --explore` does: the
        source, the plan and the PTX side by side, each line tied to its source line, the PTX
        instructions counted by kind per line. Without arguments: the build without launch
        facts; with a launch's arguments: the specialization that launch runs. Returns path."""
        html = self._text("explore", args, consts)
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)
        return path

    def _text(self, what, args, consts):
        if not args:
            k = self.module._kernel(self.name, self._key(consts, 0))[0]
            out = ctypes.c_char_p()
            if what == "ptx":
                _lib.check(_lib.lib.blk_kernel_ptx(k, ctypes.byref(out)))
            elif what == "plan":
                _lib.check(_lib.lib.blk_kernel_plan(k, None, 0, ctypes.byref(out)))
            else:
                _lib.check(_lib.lib.blk_kernel_explore(k, None, 0, ctypes.byref(out)))
            return out.value.decode()
        ordinal = (device_of(args) or 0) if self.module.device == "cuda" else None
        k, params = self.module._kernel(self.name, self._key(consts, ordinal, args))
        launch = _Launch(self.name, self.module.device, ordinal, k, params)
        return launch.ptx(args) if what == "ptx" else launch.plan(args) if what == "plan" else launch.explore(args)

    def compile(self, ordinal=0, **consts):
        """Compiles this combination of const parameters now (a launch would
        do it on first use); BlkError if it does not compile."""
        self.module._kernel(self.name, self._key(consts, ordinal))

    def run(self, grid, *args, **consts):
        # the common launch first: PyTorch CUDA tensors and ints, consts by keyword, a grid of ints
        tensor_key = None
        if type(grid) is tuple and (not consts or self._keywords.isdisjoint(consts)):
            try:
                tensor_key = (tuple(consts.items()), tuple([args[i].dtype for i in self._type_indices]))
            except (IndexError, AttributeError):
                pass
            launch = self._tensor_launches.get(tensor_key)
            if launch is not None and launch.launch_tensors(grid, args):
                return
        if consts and not self._keywords.isdisjoint(consts):  # runtime arguments by keyword, as in Python
            args, consts = _bind(self.name, self._runtime_names, args, consts)
        if self._type_sources:
            inferred = self._inferred_types(args, consts)
            if inferred:
                consts = {**inferred, **consts}
        ordinal = (device_of(args) or 0) if self.module.device == "cuda" else None
        # as given: another order of the same consts is one more entry; a None argument another build
        nones = tuple(i for i, a in enumerate(args) if a is None) if _NONE_ID in map(id, args) else ()
        cached = (tuple(consts.items()), ordinal, nones)
        launch = self._launches.get(cached)
        if launch is None:
            k, params = self.module._kernel(self.name, self._key(consts, ordinal, args))
            launch = self._launches[cached] = _Launch(self.name, self.module.device, ordinal, k, params)
        if callable(grid):
            launch(_grid(self.name, grid(launch.meta(args, consts)), called=True), args)
        else:
            launch(_grid(self.name, grid), args)
            if tensor_key is not None and not nones:
                self._tensor_launches[tensor_key] = launch


_launch = _lib.lib.blk_launch
_launch_record = _lib.lib.blk_launch_record_run
_NONE_ID = id(None)
_FLOAT_KINDS = (_lib.F32, _lib.F64)
_INT_RANGE = {_lib.I32: (-(1 << 63), 1 << 63), _lib.U32: (-(1 << 63), 1 << 63), _lib.I64: (-(1 << 63), 1 << 63),
              _lib.U64: (0, 1 << 64)}  # what a blk_arg holds; the runtime checks the parameter's own range


class _Launch:
    """What one launch needs that does not change between launches of a
    kernel with the same const parameters on the same device."""
    __slots__ = ("name", "device", "ordinal", "ctx", "kernel", "params", "layout", "consts", "tensor_kinds",
                 "record")

    def __init__(self, name, device, ordinal, kernel, params):
        self.name, self.device, self.ordinal, self.kernel, self.params = name, device, ordinal, kernel, params
        self.ctx = _context(device, ordinal)
        self.layout = packer(params)
        self.record = record_packer(params)
        self.consts = None
        self.tensor_kinds = None  # [(kind, torch dtype or None)], made at the first launch of PyTorch tensors

    def meta(self, args, given):
        """What a grid callable sees, as Triton's does: every argument by its
        parameter's name, the build's const parameters (defaults included),
        and the launch's keywords as given."""
        if self.consts is None:
            self.consts = _parse_consts(_lib.lib.blk_kernel_consts(self.kernel).decode())
        return {**self.consts, **{p.name: a for p, a in zip(self.params, args)}, **given}

    def _marshal(self, args):
        """A Marshal for these arguments, their count checked."""
        if len(args) != len(self.params):
            names = ", ".join(p.name for p in self.params)
            raise TypeError(f"kernel '{self.name}' takes {len(self.params)} arguments ({names}), got {len(args)}")
        return Marshal(self.name, self.device, self.ctx, self.params, self.ordinal)

    def launch_tensors(self, grid, args):
        """Launches on grid (a tuple of ints) if this is the common launch on the GPU: every pointer
        a PyTorch CUDA tensor of the parameter's dtype on this device, every other argument a Python
        int that a blk_arg holds or a Python float that every float type holds. False, having done nothing, for anything else: Marshal checks it
        and says what is wrong."""
        if self.device != "cuda" or not 1 <= len(grid) <= 3:
            return False
        if type(grid[0]) is int and len(grid) == 1 and 0 < grid[0] <= 0xFFFFFFFF:
            gx, gy, gz = grid[0], 1, 1
        else:
            gx, gy, gz = _grid(self.name, grid)
        values = self._tensor_values(args)
        if values is None:
            return False
        status = _launch_record(self.record.pack(self.kernel.value, _current_stream(self.ordinal), gx, gy, gz,
                                                 len(self.params), *values))
        if status:
            _lib.check(status)
        return True

    def _tensor_values(self, args):
        """The (kind, value) pairs of blk_args for launch_tensors' arguments, or None."""
        torch = sys.modules.get("torch")
        if torch is None or len(args) != len(self.params):
            return None
        if self.tensor_kinds is None:
            self.tensor_kinds = [(p.kind, p.torch_dtype(torch) if p.kind == _lib.PTR else None) for p in self.params]
        tensor, ordinal, values = torch.Tensor, self.ordinal, []
        for a, (kind, dtype) in zip(args, self.tensor_kinds):
            if dtype is not None:
                if type(a) is not tensor or a.dtype is not dtype or a.get_device() != ordinal:
                    return None  # (a CPU tensor's device is -1)
                values += (kind, a.data_ptr())
            elif type(a) is int and kind in _INT_RANGE:
                lo, hi = _INT_RANGE[kind]
                if not lo <= a < hi:
                    return None
                values += (kind, a)
            elif type(a) is float and kind in _FLOAT_KINDS and -65504.0 <= a <= 65504.0:  # fits every float type
                values += (kind, a)
            else:
                return None
        if _lib.PTR not in values[::2]:
            return None  # no tensor: Marshal chooses the stream
        return values

    def __call__(self, grid, args):
        if self.launch_tensors(grid, args):
            return
        gx, gy, gz = grid  # checked by _grid
        m = self._marshal(args)
        if self.device == "cuda":  # device memory is passed by address: nothing to copy back or free
            status = _launch(self.kernel, gx, gy, gz, m.pack(args, self.layout), len(self.params), m.stream)
            if status:
                _lib.check(status)
            return
        with m:
            packed = m.pack(args, self.layout)
            _lib.check(_launch(self.kernel, gx, gy, gz, packed, len(self.params), m.stream))

    def ptx(self, args):
        """The PTX a launch with these arguments runs (blk_kernel_launch_ptx)."""
        return self._text(_lib.lib.blk_kernel_launch_ptx, args)

    def plan(self, args):
        """The schedule for these arguments' facts (blk_kernel_plan)."""
        return self._text(_lib.lib.blk_kernel_plan, args)

    def explore(self, args):
        """The page to study the PTX these arguments' launch runs (blk_kernel_explore)."""
        return self._text(_lib.lib.blk_kernel_explore, args)

    def _text(self, fn, args):
        """The text fn gives for this kernel and these arguments; nothing runs."""
        m = self._marshal(args)
        out = ctypes.c_char_p()
        with m:
            packed = m.pack(args, self.layout)
            m.copies = []  # nothing ran: nothing to copy back
            _lib.check(fn(self.kernel, packed, len(self.params), ctypes.byref(out)))
        return out.value.decode()

from . import testing  # noqa: E402  (they use the above)
from ._autotune import Config, autotune  # noqa: E402
