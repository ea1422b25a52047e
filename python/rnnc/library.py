"""Compiled rnnc libraries: compile, cache on disk, load, call.

A library is a directory written by `rnn-compile`: `librnnc_model.so` and
`manifest.json`. The manifest names, for each entry point (`infer`,
`train`, `fwd`, `bwd`), its C symbol and its arguments in order, each with
name, layer (per-layer states), shape, dtype and role, plus the sizes of the
saved region and of the scratch arena. An entry point is called with one
data pointer per argument:

    int32_t rnnc_<f>(void *const *buffers, void *stream);

A library for the cuda target takes a context first, made per device by
`rnnc_context_create(ordinal)`, then device pointers and the caller's CUDA
stream on that device, on which it enqueues its work without waiting; it
returns non-zero on failure, with the reason from `rnnc_last_error()`.
One loaded library serves every device: a `Library` object runs on one
(`load(directory, device)`), with a context of its own, made at its first
call, and `rnnc_set_graph_replay(context, calls)` turns on the replay of
captured CUDA graphs of its calls (see `Library.set_graph_replay`).

`compile_model` compiles a library on first use into a cache directory
(`$RNNC_CACHE_DIR`, else `~/.cache/rnnc`), one entry per request and
compiler:

    <cache>/<request>-<compiler>/   librnnc_model.so, manifest.json,
                                    rnnc-entry.json

`<request>` is 32 hex digits of the sha256 of the ABI version and the
request (cell, shape, remat, dtype, dropout, resets, storage, target,
chip, GEMM block rows and wavefront); `<compiler>` is 16 hex digits of the
sha256 of what `rnn-compile --print-identity` names: the contents of
`rnn-compile`, of the program it runs where it is a wrapper script and of
the runtime archives it links, the version of the LLVM it runs, and the
CPU (`_cache._compiler_identity`); so the same compiler at another path (a
cache filled in a build image, used on a training node) finds the same
entries. `rnnc-entry.json`
records the request, what the compiler's identity was computed from, and
the size and sha256 of the library and of its manifest.
The rule that chooses an entry:

* with a compiler found, only the entry that compiler wrote serves (it is
  compiled when missing), so a library never comes from another build;
* with none found (a deployment without the compiler), any complete entry
  for the request serves, the newest first: every compiler that speaks
  this ABI version computes the same model for the same request.

An entry is written under a temporary name beside it and renamed into
place, so a crash or a concurrent writer never leaves a partial library at
its name; writers of one entry take a lock on `<entry>.lock` (when they can
open it), so concurrent processes compile it once, and a writer that loses
the rename to a complete entry uses that one. Entries get the modes the
umask allows, so a cache shared by a group serves all its accounts. An
entry damaged outside rnnc (an interrupted copy without its manifest, a
library or manifest of another size or digest than it was written with, or no
`rnnc-entry.json`) is moved aside and compiled again; when it cannot be (no
compiler, or no right to replace it) an `RNNCError` names it and says how
to remove it. A cache directory that cannot be written is replaced, for
the entries to write and to load, by a per-user temporary cache
(`<tmp>/rnnc-cache-<uid>`, mode 0700), with one warning per process naming
`RNNC_CACHE_DIR`; while the cache directory can be written, it is not
looked in. `precompile` fills a cache for a list of requests,
`load` loads a library directory directly, and `clear_cache` empties a
cache (`python3 -m rnnc precompile|cache` from a shell).

Within a process, a library once loaded is returned for the same request
without a look at the disk or the compiler. At most `$RNNC_MAX_LOADED`
(default 32) cpu libraries are kept loaded, the least recently used
released first; a released library is unloaded once nothing refers to it
(a call in progress keeps it), and is loaded again from the same entry when
next asked for, so an autograd graph whose backward is still pending finds
the library its forward ran. cuda libraries stay loaded: unloading one
cannot release its CUDA module and cuBLAS handle.
"""

import _ctypes
import collections
import collections.abc
import ctypes
import inspect
import json
import operator
import os
import re
import shutil
import threading
import weakref

from . import _native
# The on-disk cache (_cache.py); its public functions are this module's.
from . import _cache
from ._cache import (ABI_VERSION, DYNAMIC_ABI_VERSION,  # noqa: F401
                     DEFAULT_ENTRIES, ENTRY_KINDS, _MISSING, _ENTRY_NAME,
                     # (_check_schedule for rnnc.torch, _inspect for tests)
                     _REQUEST_FIELDS, _build, _check_schedule, check_remat,
                     _compiler_identity, _damaged, _inspect,
                     _move_aside, _request, _request_hash, _roots, _served,
                     _writable_root, _any_entry, cache_dir,
                     cache_entries, clear_cache, serves_every_shape)
from ._errors import RNNCError, RNNCTypeError, RNNCValueError


# What a cuda library exports besides its entry points.
_CUDA_FUNCTIONS = ("context_create", "context_destroy", "last_error",
                   "set_graph_replay")

# How many shapes a dynamic library keeps the arguments' sizes of (`at`).
_KEPT_SHAPES = 256

_DTYPE_BYTES = {"float32": 4, "float64": 8, "bool": 1, "uint8": 1, "int64": 8}


def find_compiler():
    """Path of `rnn-compile`: the wheel's own, else `$RNNC_COMPILE`, else
    the one on PATH."""
    given = os.environ.get("RNNC_COMPILE")
    path = _native.compiler() or given or shutil.which("rnn-compile")
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        if path and path == given:
            raise RNNCError(f"rnn-compile not found: RNNC_COMPILE={given} is "
                            f"not an executable file")
        raise RNNCError(
            "rnn-compile not found: build rnnc (see its README) and put "
            "build/bin on PATH, or set RNNC_COMPILE to the tool's path")
    return os.path.realpath(path)


class Arg:
    """One argument of an entry point, as the manifest describes it."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.role = spec["role"]
        self.layer = spec.get("layer")
        self.shape = tuple(spec["shape"])
        self.dtype = spec["dtype"]
        if self.dtype not in _DTYPE_BYTES:
            raise RNNCError(f"manifest: argument {self.name} has unknown "
                            f"dtype {self.dtype}")
        count = 1
        for d in self.shape:
            count *= d
        self.nbytes = count * _DTYPE_BYTES[self.dtype]

    def __repr__(self):
        layer = "" if self.layer is None else f"[{self.layer}]"
        return f"{self.name}{layer}:{self.dtype}{list(self.shape)}"


# The roles of an entry point's arguments (the manifest's "role").
_ROLES = ("input", "parameter", "output", "cotangent", "gradient", "saved",
          "scratch")
# An entry point's symbol: rnnc_<model> and the suffix of its kind.
_SYMBOL_SUFFIXES = {"infer": "", "train": "_grad", "fwd": "_fwd",
                    "bwd": "_bwd"}


def _is_count(value):
    """Whether `value` is a JSON integer >= 0 (not a bool or a float)."""
    return type(value) is int and value >= 0


def _check_manifest(manifest, path, dynamic):
    """Refuses a manifest that is not one rnn-compile writes (hand-edited,
    or of another version) before its library is loaded, with an RNNCError
    naming `path` and the part that is wrong: a library that is no file
    name beside it, an unknown target, an entry point of an unknown kind
    or whose symbol is not its kind's, an argument without a name, role,
    dtype, shape of sizes or layer, and sizes of the arena or the saved
    region that disagree with its argument. Nothing here reads the library:
    an argument list that merely differs from the library's is caught when
    the library is loaded (_check_embedded_manifest)."""
    library = manifest["library"]
    if library in ("", ".", "..") or os.path.basename(library) != library:
        raise RNNCError(f"{path}: \"library\" must be the name of a file "
                        f"beside the manifest, got {library!r}")
    target = manifest.get("target", "cpu")
    if target not in ("cpu", "cuda"):
        raise RNNCError(f"{path}: unknown target {target!r} (expected "
                        f"\"cpu\" or \"cuda\")")
    entries = manifest["entries"]
    if not entries:
        raise RNNCError(f"{path}: no entry points")
    model = manifest.get("model")
    if not isinstance(model, str) or not model:
        raise RNNCError(f"{path}: \"model\" must be the model's name, got "
                        f"{model!r}")
    shape = manifest.get("shape")
    sizes = ("T", "B") if dynamic else ()
    if not isinstance(shape, dict) or not all(
            (shape.get(k) == k if k in sizes else
             _is_count(shape.get(k)) and shape[k] > 0)
            for k in ("T", "B", "I", "H", "L")):
        raise RNNCError(f"{path}: \"shape\" must give the sizes T, B, I, H "
                        f"and L" + (" (T and B as \"T\" and \"B\")" if dynamic
                                    else "") + f", got {shape!r}")
    layers = shape["L"]
    for kind, entry in entries.items():
        where = f"{path}: a malformed entry point {kind!r}"
        if kind not in ENTRY_KINDS:
            raise RNNCError(f"{where}: an unknown kind (expected one of "
                            f"{', '.join(ENTRY_KINDS)})")
        if not isinstance(entry, dict):
            raise RNNCError(f"{where}: not an object")
        symbol = f"rnnc_{model}{_SYMBOL_SUFFIXES[kind]}"
        if entry.get("symbol") != symbol:
            raise RNNCError(f"{where}: its symbol must be {symbol!r}, the "
                            f"{kind} entry point of model {model!r}, got "
                            f"{entry.get('symbol')!r}")
        if dynamic and entry.get("sizes_symbol") != symbol + "_sizes":
            raise RNNCError(f"{where}: its sizes_symbol must be "
                            f"{symbol + '_sizes'!r}, got "
                            f"{entry.get('sizes_symbol')!r}")
        args = entry.get("args")
        if not isinstance(args, list) or not args:
            raise RNNCError(f"{where}: \"args\" must be a list of "
                            f"arguments, got {args!r}")
        for index, arg in enumerate(args):
            _check_arg(arg, f"{where}: argument {index}", dynamic, layers)
        sizes = {}
        for key in ("arena_bytes", "saved_bytes"):
            if key in entry and not _is_count(entry[key]):
                raise RNNCError(f"{where}: {key} must be a number of bytes, "
                                f"got {entry[key]!r}")
            sizes[key] = entry.get(key, 0)
        if dynamic:
            continue
        for arg in args:
            key = {"scratch": "arena_bytes",
                   "saved": "saved_bytes"}.get(arg["role"])
            if key and Arg(arg).nbytes != sizes[key]:
                raise RNNCError(f"{where}: its {arg['role']} argument "
                                f"{arg['name']} has shape {arg['shape']}, "
                                f"its {key} {sizes[key]}")
        layout = entry.get("saved", [])
        if not isinstance(layout, list) or not all(
                isinstance(v, dict) and _is_count(v.get("offset")) and
                _is_count(v.get("bytes")) and
                v["offset"] + v["bytes"] <= sizes["saved_bytes"]
                for v in layout):
            raise RNNCError(f"{where}: \"saved\" must list values with "
                            f"the offset and bytes of each within its "
                            f"{sizes['saved_bytes']} saved_bytes, got "
                            f"{layout!r}")


def _check_arg(arg, where, dynamic, layers):
    """Refuses an argument of an entry point in the manifest that is not
    one rnn-compile writes."""
    if not isinstance(arg, dict) or not isinstance(arg.get("name"), str):
        raise RNNCError(f"{where}: an argument must be an object with a "
                        f"name, got {arg!r}")
    where = f"{where} ({arg['name']})"
    if arg.get("role") not in _ROLES:
        raise RNNCError(f"{where}: unknown role {arg.get('role')!r} "
                        f"(expected one of {', '.join(_ROLES)})")
    if not isinstance(arg.get("dtype"), str) or \
            arg["dtype"] not in _DTYPE_BYTES:
        raise RNNCError(f"{where}: unknown dtype {arg.get('dtype')!r} "
                        f"(expected one of {', '.join(_DTYPE_BYTES)})")
    layer = arg.get("layer")
    if layer is not None and not (_is_count(layer) and layer < layers):
        raise RNNCError(f"{where}: layer must be a layer index below the "
                        f"model's L={layers!r}, got {layer!r}")
    shape = arg.get("shape")
    sized = dynamic and shape is None and arg["role"] in ("saved",
                                                          "scratch")
    if not sized and not (isinstance(shape, list) and all(
            _is_count(d) or (dynamic and d in ("T", "B")) for d in shape)):
        raise RNNCError(f"{where}: shape must be a list of sizes"
                        + (" (or \"T\" and \"B\")" if dynamic else "")
                        + f", got {shape!r}")


class _Context:
    """The rnnc_context a cuda library object's calls pass: one of its
    device (0 unless `Library.use_device` chose another), made at the
    first call, so that loading a library touches no GPU."""

    def __init__(self, create, last_error):
        self._create, self._last_error = create, last_error
        self._lock = threading.Lock()
        self.device = None
        self.pointer = None

    def get(self):
        pointer = self.pointer
        if pointer is not None:
            return pointer
        with self._lock:
            if self.pointer is None:
                ordinal = 0 if self.device is None else self.device
                pointer = self._create(ordinal)
                if not pointer:
                    raise RNNCError(f"rnnc_context_create({ordinal}) "
                                    f"failed: {self._last_error()}")
                self.device, self.pointer = ordinal, pointer
        return self.pointer


class Entry:
    """One C entry point of a library. Of a dynamic library (_dynamic.py)
    it has no argument shapes of its own: `Library.at(T, B)` gives them.
    Of a cuda library it passes `context`'s rnnc_context first."""

    def __init__(self, lib, kind, spec, last_error, dynamic=False,
                 context=None):
        # The library stays loaded while its entry point can be called.
        self._lib = lib
        self.kind = kind
        self.symbol = spec["symbol"]
        self.specs = spec["args"]
        self._context = context
        leading = [ctypes.c_void_p] if context is not None else []
        if dynamic:
            from . import _dynamic
            _dynamic.bind(self, lib, spec, last_error, leading)
            return
        self.args = [Arg(a) for a in spec["args"]]
        self.arena_bytes = spec.get("arena_bytes", 0)
        self.saved_bytes = spec.get("saved_bytes", 0)
        self.predicted_peak_bytes = spec.get("predicted_peak_bytes")
        self.saved_layout = spec.get("saved", [])
        try:
            self._fn = _function(lib, self.symbol, ctypes.c_int32, *leading,
                                 ctypes.c_void_p, ctypes.c_void_p)
        except AttributeError:
            raise RNNCError(f"library has no entry point {self.symbol}")
        self._array = ctypes.c_void_p * len(self.args)
        self._last_error = last_error

    def _leading(self):
        """The arguments before the entry point's own: the context."""
        return () if self._context is None else (self._context.get(),)

    def call_at(self, shape, pointers, stream=None, args=None):
        """Calls the entry point of a dynamic library at `shape` (T, B),
        whose arguments there are `args` (`Library.at(T, B)`'s)."""
        self._run(pointers, stream, args, shape)

    def call(self, pointers, stream=None):
        """Calls the entry point with one data pointer per argument (an
        int address, in the manifest's order; null only for a buffer of
        no bytes), on `stream` (the address of a CUDA stream; cuda target
        only). Nothing can check that an address holds the argument's
        bytes: the caller passes buffers of the manifest's sizes."""
        if self.args is None:
            raise RNNCError(f"{self.symbol} takes T and B: call it through "
                            f"Library.at(T, B)")
        self._run(pointers, stream, self.args)

    def _run(self, pointers, stream, args, shape=()):
        count = len(self.specs)
        if len(pointers) != count:
            raise RNNCError(f"{self.symbol} takes {count} buffers, "
                            f"got {len(pointers)}")
        try:
            array = self._array(*pointers)
        except TypeError:
            array = None
        if array is None or not all(pointers):
            self._check_pointers(pointers, args)
        if stream is not None and type(stream) is not int:
            stream = _integer(stream)
            if stream is None:
                raise RNNCTypeError(f"{self.symbol}: stream must be the "
                                    f"address of a CUDA stream (an int) or "
                                    f"None")
        self._status(self._fn(*self._leading(), *shape, array, stream))

    def _check_pointers(self, pointers, args):
        """Refuses a pointer that is no address, or null for a buffer of
        bytes (the library would write through it)."""
        for index, pointer in enumerate(pointers):
            name = str(args[index]) if args else self.specs[index]["name"]
            address = 0 if pointer is None else pointer.value or 0 \
                if isinstance(pointer, ctypes.c_void_p) else \
                _integer(pointer)
            if address is not None and not 0 <= address < 2 ** 64:
                address = None
            if address is None:
                raise RNNCTypeError(f"{self.symbol}: buffer {index} ({name}) "
                                    f"must be an address (an int), got "
                                    f"{pointer!r}")
            if not address and (args is None or args[index].nbytes):
                raise RNNCValueError(f"{self.symbol}: buffer {index} ({name}) "
                                     f"is null")

    def _status(self, rc):
        if rc != 0:
            why = self._last_error() if self._last_error else ""
            # The runtime names buffers by position: add their names.
            why = re.sub(r"\bbuffer (\d+) \(",
                         lambda m: f"buffer {m[1]} "
                                   f"({self._arg_name(int(m[1]))}, ", why)
            raise RNNCError(f"{self.symbol} failed: {why}" if why else
                            f"{self.symbol} failed with status {rc}")

    def _arg_name(self, index):
        args = self.args or []
        return str(args[index]) if index < len(args) else "?"


def entry_of(library, kind):
    """Entry point `kind` of `library` (a Library, or one at a shape); an
    RNNCError naming what to ask for where the library lacks it."""
    entry = library.entries.get(kind)
    if entry is not None:
        return entry
    if kind in ENTRY_KINDS:
        has = ", ".join(k for k in ENTRY_KINDS if k in library.entries)
        raise RNNCError(f"{library.directory} has no entry point {kind!r} "
                        f"(it has {has}): compile it with entries including "
                        f"{kind!r}")
    raise RNNCError(f"unknown entry point kind {kind!r} (expected one of "
                    f"{', '.join(ENTRY_KINDS)})")


class Library:
    """A compiled model: its manifest and its loaded entry points. A cpu
    library is unloaded when the last object that can call into it (this
    one, an entry point, a function of its handle) is gone."""

    def __init__(self, directory):
        self.directory = directory
        manifest_path = os.path.join(directory, "manifest.json")
        try:
            with open(manifest_path) as f:
                self.manifest = json.load(f)
        except (OSError, ValueError) as e:
            raise RNNCError(f"cannot read {manifest_path}: {e}")
        if not isinstance(self.manifest, dict):
            raise RNNCError(f"{manifest_path} is not a manifest: a JSON "
                            f"object, got {type(self.manifest).__name__}")
        # Version 2: a library for every T and B (_dynamic.py).
        version = self.manifest.get("abi_version")
        dynamic = self.manifest.get("dynamic")
        self.dynamic = type(version) is int and \
            version == DYNAMIC_ABI_VERSION and dynamic is True
        if not self.dynamic and (type(version) is not int or
                                 version != ABI_VERSION or
                                 dynamic not in (None, False)):
            raise RNNCError(
                f"{manifest_path}: ABI version {version!r} with dynamic "
                f"{dynamic!r}; this package speaks ABI version "
                f"{ABI_VERSION} (a library of one shape) and "
                f"{DYNAMIC_ABI_VERSION} with dynamic true (a library of "
                f"every shape): compile the library again with this "
                f"package's rnn-compile")
        missing = [key for key in ("library", "entries")
                   if key not in self.manifest]
        if missing or not isinstance(self.manifest["entries"], dict) or \
                not isinstance(self.manifest["library"], str):
            raise RNNCError(f"{manifest_path}: "
                            + (f"no {' and no '.join(missing)}" if missing
                               else "\"library\" must be a file name and "
                               "\"entries\" an object"))
        _check_manifest(self.manifest, manifest_path, self.dynamic)
        path = os.path.join(directory, self.manifest["library"])
        _native.load_blas()
        try:
            self._lib = ctypes.CDLL(path)
        except OSError as e:
            raise _DlopenError(f"cannot load {path}: {e}") from None
        try:
            _check_embedded_manifest(self._lib, self.manifest, manifest_path,
                                     path)
            self._bind(path)
        except BaseException:
            # Nothing was called: the handle goes, so that a library
            # compiled again at this path is loaded afresh.
            _ctypes.dlclose(self._lib._handle)
            raise
        if self.target == "cpu":
            # Every holder of one of its functions (this object, an entry
            # point) holds the handle: it is closed when the last of them
            # is gone. (A cuda library stays: closing it would leave its
            # CUDA module and cuBLAS handle behind.)
            weakref.finalize(self._lib, _ctypes.dlclose,
                             self._lib._handle).atexit = False

    def _bind(self, path):
        """Looks up the library's functions and entry points."""
        self.target = self.manifest.get("target", "cpu")
        functions = self.manifest.get("functions", {})
        self._last_error = None
        self._set_graph_replay = None
        self._context = None
        if self.target == "cuda":
            missing = [name for name in _CUDA_FUNCTIONS
                       if name not in functions]
            if missing:
                raise RNNCError(
                    f"{path}: a cuda library without the functions "
                    f"{', '.join(missing)} (a library of an older "
                    f"rnn-compile, whose entry points take no context); "
                    f"compile it again")
            fn = _function(self._lib, functions["last_error"],
                           ctypes.c_char_p)
            self._last_error = lambda: (fn() or b"").decode(errors="replace")
            self._context = _Context(
                _function(self._lib, functions["context_create"],
                          ctypes.c_void_p, ctypes.c_int32),
                self._last_error)
            self._set_graph_replay = _function(
                self._lib, functions["set_graph_replay"], ctypes.c_int32,
                ctypes.c_void_p, ctypes.c_int32)
        self.graph_replay = 0
        self._blas_threads = None
        if self.target == "cpu":
            # The library's OpenBLAS (a dependency, found through its
            # handle): its thread count is the process's.
            try:
                get = _function(self._lib, "openblas_get_num_threads",
                                ctypes.c_int)
                put = _function(self._lib, "openblas_set_num_threads", None,
                                ctypes.c_int)
            except AttributeError:
                raise RNNCError(f"{path} does not reach OpenBLAS's thread "
                                f"control (openblas_set_num_threads)")
            self._blas_threads = (get, put)
            _keep_loaded(get)
        try:
            self.entries = {kind: Entry(self._lib, kind, spec,
                                        self._last_error, self.dynamic,
                                        self._context)
                            for kind, spec in
                            self.manifest["entries"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise RNNCError(
                f"{os.path.join(self.directory, 'manifest.json')}: a "
                f"malformed entry point ({type(e).__name__}: {e})") from None
        if self.dynamic:
            from . import _dynamic
            _dynamic.set_schedule(self.entries.values(), self.manifest,
                                  self.directory)
        # The cell's states in the dialect's order (`h` first), which
        # name the entry points' state buffers (`h0`, `h_reset`, ...);
        # empty for a model of mixed cells.
        states = self.manifest.get("states")
        if not isinstance(states, list) or not all(
                isinstance(s, str) and s.isidentifier() for s in states):
            raise RNNCError(f"{path}: the manifest's \"states\" must be a "
                            f"list of names, got {states!r}")
        self.states = tuple(states)
        self.saved_gaps = self._saved_gaps()
        # The scratch arena is the library's: contents are not kept between
        # calls, so one per thread serves every call.
        self._local = threading.local()
        # `at`'s libraries at the shapes called last.
        self._shapes = {}

    @property
    def device(self):
        """The GPU ordinal the object's calls run on (cuda target; None
        until chosen or called)."""
        return self._context.device if self._context else None

    def use_device(self, ordinal):
        """Runs this object's calls on GPU `ordinal` (cuda target): chosen
        once, before the first call. The loaded library serves every
        device, through an object per device (`load`)."""
        ordinal = _device(ordinal)
        if self._context is None:
            raise RNNCError(f"{self.directory} is a library for "
                            f"{self.target}, which has no GPU to choose "
                            f"(device {ordinal!r}: pass None)")
        if self.device == ordinal:
            return
        if self.device is not None:
            raise RNNCError(f"this library object runs on "
                            f"cuda:{self.device}, not cuda:{ordinal}; load "
                            f"the library for cuda:{ordinal}")
        self._context.device = ordinal

    def set_graph_replay(self, calls):
        """Graph replay of the library's calls (cuda target): the library
        keeps the last `calls` pointer sets its entry points were called
        with; the second call with a kept set is captured into a CUDA graph
        (and launched), later ones replay the graph as one launch. 0 turns
        it off (the default) and drops the graphs."""
        if self._set_graph_replay is None:
            raise RNNCError(f"graph replay needs a library for the cuda "
                            f"target; {self.directory} is for "
                            f"{self.target}")
        if self._set_graph_replay(self._context.get(), calls) != 0:
            raise RNNCError(f"rnnc_set_graph_replay({calls}) failed: "
                            f"{self._last_error()}")
        self.graph_replay = calls

    def blas_threads(self):
        """The threads of the OpenBLAS the library calls (cpu target)."""
        return self._blas_threads[0]()

    def set_blas_threads(self, count):
        """Makes OpenBLAS, the process's one, use `count` threads (cpu
        target); a no-op when it already does."""
        get, put = self._blas_threads
        if get() != count:
            with _lock:
                put(count)

    @property
    def saved_bytes(self):
        """The bytes of the saved region the forward entry point writes."""
        return entry_of(self, "fwd").saved_bytes

    def _saved_gaps(self):
        """The byte ranges [start, end) of the saved region that no saved
        value covers (alignment padding): nothing writes them."""
        if "fwd" not in self.entries or self.dynamic:
            return []
        return saved_gaps([(v["offset"], v["bytes"])
                           for v in self.entries["fwd"].saved_layout],
                          self.saved_bytes)

    def __getitem__(self, kind):
        return entry_of(self, kind)

    def at(self, T, B):
        """The library at sequence length T and batch size B: a dynamic
        library's entry points with their buffers' shapes and sizes there
        (a static library is its own shape only)."""
        from . import _dynamic
        given = (T, B)
        T, B = _dynamic.check_shape(self.directory, T, B)
        if not self.dynamic:
            shape = tuple(self.manifest["shape"][k] for k in ("T", "B"))
            if (T, B) != shape:
                raise RNNCError(f"{self.directory} is compiled for T, B = "
                                f"{shape}, not {given}")
            return self
        shaped = self._shapes.get((T, B))
        if shaped is None:
            shaped = _dynamic.ShapedLibrary(self, T, B)
            if len(self._shapes) >= _KEPT_SHAPES:
                self._shapes.clear()
            self._shapes[(T, B)] = shaped
        return shaped


def _check_embedded_manifest(lib, manifest, manifest_path, path):
    """Refuses a manifest (`manifest`, read from `manifest_path`) other
    than the one the library `lib` (at `path`) holds as `rnnc_manifest`:
    its argument lists are what the entry points read buffers by, and they
    cannot check them. (The same content written otherwise is the same
    manifest.)"""
    try:
        embedded = ctypes.string_at(ctypes.addressof(
            ctypes.c_char.in_dll(lib, "rnnc_manifest")))
    except ValueError:
        raise RNNCError(f"{path} holds no manifest (rnnc_manifest): a "
                        f"library of an older rnn-compile; compile it "
                        f"again") from None
    try:
        same = json.loads(embedded) == manifest
    except ValueError:
        same = False
    if not same:
        raise RNNCError(f"{manifest_path} is not the manifest {path} was "
                        f"compiled with (edited, or another library's); "
                        f"compile it again")


def saved_gaps(values, total):
    """The byte ranges [start, end) of a saved region of `total` bytes
    that none of its values, (offset, bytes) pairs, covers."""
    gaps, end = [], 0
    for offset, nbytes in sorted(values):
        if offset > end:
            gaps.append((end, offset))
        end = max(end, offset + nbytes)
    if end < total:
        gaps.append((end, total))
    return gaps


def _function(lib, name, restype, *argtypes):
    """The function `name` of the loaded library `lib` (or of one it
    needs). Unlike `lib[name]` (a function that refers to itself, freed
    only by the cyclic collector, and to `lib`), it refers to nothing: its
    holder keeps `lib` loaded, and `lib` is unloaded as soon as the last
    holder is gone."""
    try:
        address = ctypes.addressof(ctypes.c_char.in_dll(lib, name))
    except ValueError:
        raise AttributeError(name) from None
    return ctypes.CFUNCTYPE(restype, *argtypes)(address)


class _DlInfo(ctypes.Structure):
    """dladdr's answer: the shared object that holds an address."""

    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


_kept = {}   # path of a library's dependency -> its handle, never closed


def _keep_loaded(function):
    """Keeps the shared object that defines `function` (a dependency of a
    library: OpenBLAS) loaded for the life of the process, so that
    unloading the last library does not unload it and stop its threads."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except AttributeError:
        return
    info = _DlInfo()
    # The function's address, read without ctypes.cast (which ties the
    # function to itself in a cycle).
    address = ctypes.c_void_p.from_address(ctypes.addressof(function))
    if not dladdr(address, ctypes.byref(info)) or not info.dli_fname:
        return
    path = os.fsdecode(info.dli_fname)
    if path not in _kept:
        try:
            _kept[path] = ctypes.CDLL(path)
        except OSError:
            pass


# --------------------------------------------------------------------------
# Cache entries
# --------------------------------------------------------------------------


def _entry(request, primary, fallback=True):
    """The directory of a complete cache entry for `request` (see the
    module's description for which), compiled, or rebuilt where damaged,
    as needed; with the compiler used (None when none is found)."""
    try:
        compiler = find_compiler()
    except RNNCError as missing:
        return _any_entry(request, primary, fallback, missing), None
    identity, _ = _compiler_identity(compiler, request["target"])
    name = f"{_request_hash(request)}-{identity}"
    for root in _roots(primary, fallback):
        directory = os.path.join(root, name)
        why = _inspect(directory)
        if why is None:
            return _served(directory, primary), compiler
        # A damaged entry of a cache that cannot be written is compiled
        # into the per-user temporary cache.
        if why is not _MISSING and not (
                fallback and root == primary and
                _cache._unwritable(primary, create=False)):
            return _build(directory, request, compiler, why), compiler
    directory = os.path.join(_writable_root(primary, fallback), name)
    return _build(directory, request, compiler), compiler


# compile_model's arguments (sorted items) -> (request, its JSON), so that
# is_precompiled checks and serializes each request once.
_requests = {}


def is_precompiled(**arguments):
    """Whether the cache holds a complete library for compile_model's
    `arguments` (by the compiler found, else by any), so that asking for it
    compiles nothing. Asked once per process for each request, until
    precompile or clear_cache runs. `device` is ignored: one library
    serves every device."""
    arguments.pop("device", None)
    memo = tuple(sorted(arguments.items()))
    if memo not in _requests:
        request = _request(**arguments)
        _requests[memo] = (request, json.dumps(request, sort_keys=True))
    request, text = _requests[memo]
    known = _cache.has_entry.known.get(text)
    if known is not None:
        return known
    try:
        compiler = find_compiler()
    except RNNCError:
        compiler = None
    return _cache.has_entry(request, cache_dir(), compiler)


# --------------------------------------------------------------------------
# Loaded libraries
# --------------------------------------------------------------------------

# (directory, device) -> Library, the least recently used first. It holds
# the libraries kept loaded; one it lets go is unloaded when nothing else
# refers to it.
_loaded = collections.OrderedDict()
# compile_model's arguments and environment -> (directory, device): the
# entry that served them in this process, loaded again from there when the
# bound let it go.
_requested = {}
_registry_lock = threading.RLock()
_lock = threading.Lock()
_DEFAULT_MAX_LOADED = 32


def _max_loaded():
    """How many cpu libraries a process keeps loaded: $RNNC_MAX_LOADED."""
    text = os.environ.get("RNNC_MAX_LOADED") or str(_DEFAULT_MAX_LOADED)
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise RNNCError(f"RNNC_MAX_LOADED={text!r}: expected a positive "
                        f"number of libraries to keep loaded")
    return count


def _keep(slot, library):
    """Makes `library` the most recently used one, and lets the least
    recently used cpu libraries go beyond the bound."""
    _loaded[slot] = library
    _loaded.move_to_end(slot)
    # list() copies in one step, which other threads' move_to_end (the
    # fast path, without the lock) cannot interleave.
    cpu = [s for s, lib in list(_loaded.items()) if lib.target == "cpu"]
    for s in cpu[:max(0, len(cpu) - _max_loaded())]:
        del _loaded[s]


def _used(library):
    """Marks `library` (from compile_model or load) as just used."""
    slot = getattr(library, "_slot", None)
    if slot is None:
        return
    try:
        if _loaded[slot] is library:
            _loaded.move_to_end(slot)
            return
    except KeyError:
        pass
    with _registry_lock:
        if _loaded.get(slot) is None:
            _keep(slot, library)


class _LoadError(RNNCError):
    """A library directory whose library does not load."""


class _DlopenError(_LoadError):
    """A library file the dynamic loader refuses."""


def _load(directory, device):
    """The library in `directory` for `device` (None on the CPU), loaded
    once per process while it is kept or referred to. A `_LoadError` when
    the directory's library does not load."""
    slot = (directory, device)
    library = _loaded.get(slot)
    if library is None:
        try:
            library = Library(directory)
        except _LoadError:
            raise
        except RNNCError as e:
            raise _LoadError(str(e)) from None
        if device is not None:
            library.use_device(device)
        library._slot = slot
    _keep(slot, library)
    return library


def _integer(value):
    """`value` as an int if it is an integer (Python's, NumPy's: any
    with __index__) other than a bool; else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _device(device):
    """`device` as a GPU ordinal (an int from 0; None: not chosen), or an
    RNNCError naming it."""
    if device is None:
        return None
    ordinal = _integer(device)
    if ordinal is None:
        raise RNNCTypeError(f"device must be a GPU ordinal (an int) or "
                            f"None, got {device!r}")
    if not 0 <= ordinal < 2 ** 31:
        raise RNNCValueError(f"device must be a GPU ordinal from 0, got "
                             f"{device!r}")
    return ordinal


def load(directory, device=None):
    """The library in `directory` (an entry of a cache, or a directory
    `rnn-compile -o` wrote), loaded without the compiler; `device` is the
    GPU ordinal (an int) a cuda library runs on (None: 0, chosen at its
    first call), None for a cpu library. An RNNCError names what is wrong
    with the directory, its manifest or its library."""
    device = _device(device)
    with _registry_lock:
        try:
            return _load(os.path.abspath(directory), device)
        except _LoadError as e:
            raise RNNCError(str(e)) from None


def cuda_chip(major, minor):
    """The chip (sm_NN) to compile PTX for on a GPU of compute capability
    major.minor: its own, or sm_90 on newer GPUs, whose driver compiles
    sm_90's PTX for them."""
    return f"sm_{min(major * 10 + minor, 90)}"


def compile_model(cell, seq_len, batch, input_size, hidden_size, layers,
                  remat="none", target="cpu", chip=None, device=None,
                  dtype="float32", dropout=0.0, reset_to="zero",
                  storage=None, gemm_rows=0, wavefront=False,
                  entries=DEFAULT_ENTRIES):
    """The library of a preset model, compiled on first use and cached.
    `seq_len` and `batch` None (both) ask for one library of every
    sequence length and batch size, run at a shape through
    `Library.at(T, B)`: without a wavefront, under any remat policy (a
    budget's carries a variant per plan and chooses one per call).
    `cell` is a cell of the rnn dialect (lstm, gru, mgu, cifg; rnn-compile
    refuses another, listing them). `dtype` is the element type of its
    float tensors: float32, or float64 (the cpu target only). With `dropout` > 0 the training entry points
    drop between layers, with masks keyed by their argument `rng`
    ([seed, offset], int64). With `reset_to` "step" or "column" a step
    whose is_init is set enters the arguments h_reset (and c_reset), per
    layer [T, B, H] or [B, H], instead of zero, and the backward writes
    their gradients. With `storage` "bf16" (float32 only) the saved values
    that are not states are stored in bf16 and the GEMM operands are
    rounded to bf16 with f32 accumulation.
    `gemm_rows` is the rows the GEMM blocks aim for (0: the target's
    default; rnn-compile's --gemm-rows). With `wavefront` the layers run as
    a wavefront, block by block, each on a stream of its own on the cuda
    target (in program order on the CPU, with the same results); it needs
    at least two GEMM blocks, and holds every layer's scratch at once.
    For the cuda target, `chip` is the GPU chip of the PTX (sm_NN) and
    `device` the GPU ordinal (an int; None: 0) the returned object runs
    on: one loaded library serves every device, through an object (and a
    context) per device. For the cpu target `device` is None.
    `entries` are the entry points the library has, of "infer", "train"
    (the fused training function), "fwd" and "bwd" (rnn-compile's
    --entries): by default those rnnc.torch and rnnc.jax call, without
    "train", which costs about a third of a compile."""
    # A library this process loaded for the same request is returned
    # without looking for the compiler again (a call's fast path); a
    # compiler rebuilt meanwhile is seen by the next process.
    environ = os.environ
    memo = (cell, seq_len, batch, input_size, hidden_size, layers, remat,
            target, chip, device, dtype,
            dropout if isinstance(dropout, (int, float)) else repr(dropout),
            reset_to, storage,
            gemm_rows, wavefront, tuple(entries) if not isinstance(
                entries, str) else entries, environ.get("RNNC_CACHE_DIR"),
            environ.get("HOME"), environ.get("RNNC_COMPILE"),
            environ.get("PATH"),
            environ.get("RNNC_RUNTIME_LIB"),
            environ.get("RNNC_CUDA_RUNTIME_LIB"))
    slot = _requested.get(memo)
    if slot is not None:
        library = _loaded.get(slot)
        if library is not None:
            _used(library)
            return library
    # Checked here, on the first call for these arguments.
    device = _device(device)
    if device is not None and target != "cuda":
        raise RNNCValueError(f"device={device!r} chooses a GPU, which a "
                             f"library for target {target!r} has not: "
                             f"pass None")
    request = _request(cell, seq_len, batch, input_size, hidden_size,
                       layers, remat, target, chip, dtype, dropout, reset_to,
                       storage, gemm_rows, wavefront, entries)
    with _registry_lock:
        slot = _requested.get(memo)
        if slot is not None and (slot in _loaded or
                                 _inspect(slot[0]) is None):
            # Let go by the bound: the same entry again.
            directory, compiler = slot[0], None
        else:
            directory, compiler = _entry(request, cache_dir())
        try:
            library = _load(directory, device)
        except _LoadError as e:
            if isinstance(e, _DlopenError) and _inspect(directory) is None:
                # The library is the file it was written as: what it needs
                # (a shared library it links) is missing here, and another
                # compile would write the same file. The entry is kept for
                # the machines it serves.
                raise RNNCError(f"{e} (the cache entry {directory} is "
                                f"intact: its library is the file it was "
                                f"written as, so this environment lacks "
                                f"what it needs)") from None
            try:
                failed = os.stat(directory).st_ino
            except OSError:
                failed = None
            if compiler is None:
                try:
                    compiler = find_compiler()
                except RNNCError:
                    pass
            _build(directory, request, compiler, str(e), failed)
            try:
                library = _load(directory, device)
            except _LoadError as again:
                raise RNNCError(f"{again} (compiled again into {directory}, "
                                f"it still does not load)") from None
        _requested[memo] = library._slot
        _cache.has_entry(request, None, None, known=True)
        return library


def precompile(requests, directory=None, jobs=1):
    """Compiles the library of each request, so that a cache can be filled
    ahead of use (in an image, for machines without the compiler) and
    returns their entry directories. A request is a dict of compile_model's
    arguments (`device` is ignored: one library serves every device) or a
    sequence of them in order (cell, seq_len, batch,
    input_size, hidden_size, layers, remat, ...). `directory` is the cache
    directory to fill (default: the cache compile_model uses); `jobs`
    compiles run at once."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise RNNCValueError(f"precompile: jobs must be a positive int, got "
                             f"{jobs!r}")
    if isinstance(requests, (str, bytes, dict)) or \
            not isinstance(requests, collections.abc.Iterable):
        raise RNNCTypeError(f"precompile takes a list of requests (dicts "
                            f"of compile_model's arguments), got "
                            f"{requests!r}")
    signature = inspect.signature(compile_model)
    checked = []
    for spec in requests:
        if isinstance(spec, (str, bytes)) or not isinstance(
                spec, (dict, collections.abc.Sequence)):
            raise RNNCTypeError(f"precompile: a request is a dict of "
                                f"compile_model's arguments or a sequence "
                                f"of them in order, got {spec!r}")
        unknown = sorted(set(spec) - set(signature.parameters)) \
            if isinstance(spec, dict) else []
        if unknown:
            raise RNNCTypeError(f"precompile: {spec!r}: unknown arguments "
                                f"{', '.join(map(str, unknown))} (the "
                                f"arguments are those of compile_model: "
                                f"{', '.join(signature.parameters)})")
        try:
            if isinstance(spec, dict):
                arguments = signature.bind(**spec).arguments
            else:
                arguments = signature.bind(*spec).arguments
        except TypeError as e:
            raise RNNCError(f"precompile: {spec!r}: {e}") from None
        arguments.pop("device", None)
        checked.append(_request(**arguments))
    find_compiler()
    primary = os.path.abspath(directory) if directory else cache_dir()

    _cache.has_entry.known.clear()
    # The cache to fill: the per-user temporary cache only in place of a
    # default cache that cannot be written (an entry there does not fill
    # a writable one).
    fallback = directory is None and \
        _cache._unwritable(primary) is not None

    def one(request):
        return _entry(request, primary, fallback=fallback)[0]

    if jobs > 1 and len(checked) > 1:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(one, checked))
    return [one(request) for request in checked]


