"""The autotuner: blk.autotune(configs, key)(kernel) launches like the kernel,
and on the first launch for each value of the key it times every config
(const parameters, num_warps, num_stages) and keeps the fastest: in memory,
and on disk beside the kernel cache, so a later process does not time again.

    softmax = blk.autotune(configs=[blk.Config(num_warps=w) for w in (2, 4, 8)],
                           key=["n_cols"])(mod["softmax"])
    softmax[(M,)](y, x, x.stride(0), y.stride(0), N, BLOCK=blk.next_power_of_2(N))
"""
import functools
import hashlib
import json
import os
import stat
import tempfile
import threading
import warnings

from . import _lib, testing
from ._lib import BlkError

_CACHE_FORMAT = 1
# the largest choice file read (docs/python.md): a larger one is a miss,
# never read; a choice is about a hundred bytes, so this holds thousands
MAX_CACHE_FILE = 1 << 20
# errors that rule a config out (it does not compile, or needs more shared
# memory or threads than the GPU has); any other error is the caller's
_UNFIT = {_lib.COMPILE, _lib.OUT_OF_MEMORY, _lib.BAD_GRID, _lib.CUDA}


class Config:
    """One configuration: const parameters, and num_warps / num_stages
    (None: the module's). Config({"BLOCK": 128}, num_warps=4) or
    Config(BLOCK=128, num_warps=4)."""

    def __init__(self, consts=None, num_warps=None, num_stages=None, **more):
        self.consts = dict(consts or {}, **more)
        self.num_warps, self.num_stages = num_warps, num_stages

    def all(self):
        """The launch's keyword arguments for this config."""
        out = dict(self.consts)
        if self.num_warps is not None:
            out["num_warps"] = self.num_warps
        if self.num_stages is not None:
            out["num_stages"] = self.num_stages
        return out

    def __repr__(self):
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in sorted(self.all().items())) + ")"

    def __eq__(self, other):
        return isinstance(other, Config) and self.all() == other.all()

    def __hash__(self):
        return hash(repr(self))


def autotune(configs, key, reset_to_zero=(), restore_value=(), warmup=25, rep=100, do_bench=None):
    """A decorator for a Kernel (mod["name"]) that picks among configs by
    timing. key: names of the kernel's runtime parameters whose values (for
    arrays and tensors: their dtype) select a tuning; reset_to_zero: pointer
    parameters zeroed before each timed launch (accumulators); restore_value:
    pointer parameters that timed launches update in place. Both are saved
    before tuning and put back after it, so the launch that follows finds
    them as given. do_bench: the timer (blk.testing.do_bench)."""
    if not configs:
        raise ValueError("blk.autotune: configs is empty")

    def wrap(kernel):
        return Autotuner(kernel, list(configs), list(key), list(reset_to_zero), list(restore_value), warmup, rep,
                         do_bench or testing.do_bench)
    return wrap


class Autotuner:
    """A kernel that chooses its config per key; autotuner[grid](*args, **consts)."""

    def __init__(self, kernel, configs, key, reset_to_zero, restore_value, warmup, rep, bench):
        self.kernel, self.configs, self.key = kernel, configs, key
        self.reset_to_zero, self.restore_value = reset_to_zero, restore_value
        self.warmup, self.rep, self.bench = warmup, rep, bench
        self.cache = {}        # key values -> Config
        self.timings = {}      # of the last tuning: Config -> milliseconds (None: ruled out, with why in .unfit)
        self.unfit = {}
        self.tunings = 0       # how many times configs were timed (not read from a cache)
        self.best_config = None
        self._names = None
        # read once, not at each launch: the names configs set, each config's keywords, and where
        # the key's arguments stand (once the kernel's parameter names are known)
        self._config_names = frozenset().union(*(c.all() for c in configs))
        self._config_kwargs = {id(c): c.all() for c in configs}
        self._key_at = None
        # Tuning (timing the configs, the disk cache) is serialized by this
        # lock: threads sharing the tuner time each key once, and no thread
        # reads the state another is filling. A key already tuned is read
        # from self.cache without it (a dict lookup is atomic).
        self._lock = threading.RLock()

    def __getitem__(self, grid):
        return functools.partial(self.run, grid)

    def _param_names(self, consts):
        if self._names is None:
            for config in self.configs:
                try:
                    self._names = [name for name, _ in self.kernel.signature(**dict(consts, **config.all()))]
                    break
                except BlkError:
                    continue
            else:
                self._names = [name for name, _ in self.kernel.signature(**consts)]  # raises the reason
        return self._names

    def _arguments(self, args, consts):
        names = self._param_names(consts)
        if len(args) != len(names):
            raise TypeError(f"kernel '{self.kernel.name}' takes {len(names)} arguments ({', '.join(names)}), "
                            f"got {len(args)}")
        return dict(zip(names, args))

    def run(self, grid, *args, **consts):
        if consts and not self._config_names.isdisjoint(consts):
            both = self._config_names & set(consts)
            raise TypeError(f"kernel '{self.kernel.name}': {', '.join(sorted(both))} given at the launch and "
                            "by the autotuner's configs")
        if self._key_at is None or len(args) != len(self._names):
            named = self._arguments(args, consts)  # checks the count; the first time, the names too
            unknown = [k for k in self.key + self.reset_to_zero + self.restore_value if k not in named]
            if unknown:
                raise TypeError(f"kernel '{self.kernel.name}' has no parameter {', '.join(map(repr, unknown))} "
                                f"(it has {', '.join(named)})")
            self._key_at = [self._names.index(k) for k in self.key]
        key = tuple([_key_value(args[i]) for i in self._key_at])
        if consts:
            key += tuple(sorted(consts.items()))
        config = self.cache.get(key)
        if config is None:
            with self._lock:
                config = self.cache.get(key)  # another thread may have tuned it meanwhile
                if config is None:
                    named = self._arguments(args, consts)
                    config = self._from_disk(key, args)
                    if config is None:
                        config = self._tune(grid, args, consts, named)
                        self._to_disk(key, config, args)
                    self.cache[key] = config
        self.best_config = config
        kwargs = self._config_kwargs.get(id(config))
        if kwargs is None:  # a config not among self.configs (set by hand)
            kwargs = config.all()
        self.kernel.run(grid, *args, **consts, **kwargs) if consts else self.kernel.run(grid, *args, **kwargs)

    def _tune(self, grid, args, consts, named):
        # what tuning launches write is put back afterwards: the user's launch
        # then finds its arguments as they were given
        saved = {name: _copy(named[name]) for name in self.restore_value + self.reset_to_zero}
        timings, unfit = {}, {}
        self.timings, self.unfit = timings, unfit  # new dicts: a reader of the last tuning's keeps its own
        try:
            for config in self.configs:
                launch_consts = dict(consts, **config.all())

                def launch():
                    for name in self.reset_to_zero:
                        _zero(named[name])
                    self.kernel.run(grid, *args, **launch_consts)
                try:
                    launch()  # compiles it: a config that cannot run is ruled out here
                except BlkError as err:
                    if err.status not in _UNFIT:
                        raise
                    timings[config], unfit[config] = None, str(err)
                    continue
                timings[config] = self.bench(launch, warmup=self.warmup, rep=self.rep)
        finally:
            for name, value in saved.items():
                _restore(named[name], value)
        self.tunings += 1
        timed = [c for c in self.configs if timings[c] is not None]
        if not timed:
            raise BlkError(_lib.COMPILE, f"kernel '{self.kernel.name}': no config could run:\n"
                           + "\n".join(f"{c}: {why}" for c, why in unfit.items()))
        return min(timed, key=lambda c: timings[c])

    # ---- the disk cache: one JSON file per kernel source, config list and device
    def _file(self, args):
        directory = _lib.lib.blk_cache_directory()
        if not directory:
            why = _lib.lib.blk_last_error()
            if why:  # the cache is not off but unusable (BLK_CACHE_DIR a regular file, say): said once
                _warn_once(os.environ.get("BLK_CACHE_DIR") or "the cache directory", why.decode())
            return None
        from . import _args, device_name
        module = self.kernel.module
        ordinal = (_args.device_of(args) or 0) if module.device == "cuda" else 0
        ident = json.dumps([_CACHE_FORMAT, module.text, self.kernel.name, [repr(c) for c in self.configs],
                            self.key, device_name(module.device, ordinal)])
        digest = hashlib.sha256(ident.encode()).hexdigest()[:32]
        return os.path.join(directory.decode(), "autotune", f"{self.kernel.name}-{digest}.json")

    def _from_disk(self, key, args):
        path = self._file(args)
        if path is None:
            return None
        index = _read_choices(path).get(repr(key))
        if type(index) is int and 0 <= index < len(self.configs):  # not a bool, a float or out of range
            return self.configs[index]
        return None  # no file, or one damaged: tune again

    def _to_disk(self, key, config, args):
        path = self._file(args)
        if path is None:
            return
        choices = _read_choices(path)
        choices[repr(key)] = self.configs.index(config)
        text = json.dumps(choices, indent=1, sort_keys=True)
        if len(text.encode()) > MAX_CACHE_FILE:  # full: start again with this choice
            text = json.dumps({repr(key): self.configs.index(config)}, indent=1)
        try:
            _write_atomically(path, text)
        except OSError as err:
            _warn_once(os.path.dirname(path), err)


def _read_choices(path):
    """The choice file's dict, or {} when there is none or it cannot be
    trusted: only a regular file is opened (not through a link, and without
    blocking on a FIFO), only one of at most MAX_CACHE_FILE bytes is read, and
    any failure to parse it (also nesting too deep for the parser) is a miss."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return {}  # none, a link (ELOOP), or unreadable
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CACHE_FILE:
            return {}
        chunks, size = [], 0
        while size <= MAX_CACHE_FILE:  # the file may grow after fstat: never read past the limit
            chunk = os.read(fd, MAX_CACHE_FILE + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_CACHE_FILE:
            return {}
        choices = json.loads(b"".join(chunks).decode("utf-8"))
    except (OSError, ValueError, RecursionError, MemoryError):  # UnicodeDecodeError and JSON errors are ValueErrors
        return {}
    finally:
        os.close(fd)
    return choices if isinstance(choices, dict) else {}


def _write_atomically(path, text):
    """Writes path through a fresh temporary file in its directory
    (tempfile.mkstemp: a name no one can predict, created with O_EXCL, so a
    link planted in the directory is never followed), renamed over path:
    readers see the old file or the new one, never half of one, and a link at
    path is replaced, not written through."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".choices-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_warned = set()
_warned_lock = threading.Lock()


def _warn_once(directory, err):
    """A cache directory the tuner cannot write (BLK_CACHE_DIR a regular file,
    a read-only directory) is said once per process and directory, as a
    RuntimeWarning: the choices are then kept in memory only, and a later
    process times again."""
    with _warned_lock:
        if directory in _warned:
            return
        _warned.add(directory)
    why = err if isinstance(err, str) else (err.strerror or err)
    warnings.warn(f"blk.autotune: cannot keep choices in {directory} ({why}); they are kept in "
                  "memory only, so a new process times its configs again", RuntimeWarning, stacklevel=4)


_ARRAY_TYPES = frozenset({("torch", "Tensor"), ("numpy", "ndarray")})  # a value's key: its dtype, always
_array_types = set()  # those type objects, as met
_DTYPE_TEXT = {}  # dtype -> str(dtype), the part of a key an array gives


def _key_value(value):
    """What of an argument selects a tuning: a number itself, an array's or
    tensor's dtype (NumPy scalars and 0-d tensors count as numbers)."""
    kind = type(value)
    if kind is int or kind is str or kind is float or kind is bool:
        return value
    if kind in _array_types or (kind.__module__, kind.__name__) in _ARRAY_TYPES:
        _array_types.add(kind)
        dtype = value.dtype
        text = _DTYPE_TEXT.get(dtype)
        if text is None:
            text = _DTYPE_TEXT[dtype] = str(dtype)
        return text
    if isinstance(value, (bool, int, float, str)):
        return value
    if getattr(value, "ndim", 0) or hasattr(value, "__cuda_array_interface__") or hasattr(value, "__dlpack__"):
        return str(getattr(value, "dtype", type(value).__name__))
    if hasattr(value, "__index__"):
        return value.__index__()
    if hasattr(value, "__float__"):
        return float(value)
    return type(value).__name__


def _zero(a):
    if hasattr(a, "zero_"):
        a.zero_()
    else:
        a.fill(0)


def _copy(a):
    return a.clone() if hasattr(a, "clone") else a.copy()


def _restore(a, saved):
    if hasattr(a, "copy_"):
        a.copy_(saved)
    else:
        a[...] = saved
