"""Compiled rnnc libraries: compile, cache on disk, load, call.

A library is a directory written by `rnn-compile`: `librnnc_model.so` and
`manifest.json`. The manifest names, for each entry point (`infer`,
`train`, `fwd`, `bwd`), its C symbol and its arguments in order, each with
name, layer (per-layer states), shape, dtype and role, plus the sizes of the
saved region and of the scratch arena. An entry point is called with one
data pointer per argument:

    int32_t rnnc_<f>(void *const *buffers, void *stream);

A library for the cuda target takes device pointers and the caller's CUDA
stream, on which it enqueues its work without waiting; it returns non-zero
on failure, with the reason from `rnnc_last_error()`;
`rnnc_set_device(ordinal)` picks its device before its first call, and
`rnnc_set_graph_replay(calls)` turns on the replay of captured CUDA graphs
of its calls (see `Library.set_graph_replay`).

`compile_model` compiles a library on first use into a cache directory
(`$RNNC_CACHE_DIR`, else `~/.cache/rnnc`), one entry per request and
compiler:

    <cache>/<request>-<compiler>/   librnnc_model.so, manifest.json,
                                    rnnc-entry.json

`<request>` is 32 hex digits of the sha256 of the ABI version and the
request (cell, shape, remat, dtype, dropout, resets, storage, target,
chip, GEMM block rows and wavefront); `<compiler>` is 16 hex digits of the
sha256 of the contents of `rnn-compile` and of the runtime archives it
links, so the same compiler at another path (a cache filled in a build
image, used on a training node) finds the same entries. `rnnc-entry.json`
records the request and what the compiler's identity was computed from.
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
truncated library) is moved aside and compiled again; when it cannot be (no
compiler, or no right to replace it) an `RNNCError` names it and says how
to remove it. A cache directory that cannot be written is replaced, for
the entries to write, by a per-user temporary cache
(`<tmp>/rnnc-cache-<uid>`, mode 0700), with one warning per process naming
`RNNC_CACHE_DIR`. `precompile` fills a cache for a list of requests,
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
import contextlib
import ctypes
import fcntl
import hashlib
import inspect
import json
import mmap
import operator
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
import uuid
import warnings
import weakref

from . import _native

ABI_VERSION = 1

_DTYPE_BYTES = {"float32": 4, "float64": 8, "bool": 1, "uint8": 1, "int64": 8}


class RNNCError(RuntimeError):
    """A model rnnc cannot compile or call, with one message saying why."""


def find_compiler():
    """Path of `rnn-compile`: the wheel's own, else `$RNNC_COMPILE`, else
    the one on PATH."""
    path = _native.compiler() or os.environ.get("RNNC_COMPILE") or \
        shutil.which("rnn-compile")
    if not path or not os.access(path, os.X_OK):
        raise RNNCError(
            "rnn-compile not found: build rnnc (see its README) and put "
            "build/bin on PATH, or set RNNC_COMPILE to the tool's path")
    return os.path.realpath(path)


def cache_dir():
    """Where compiled libraries are kept (see the module's description for
    the directory that replaces it when it cannot be written)."""
    return os.path.abspath(os.environ.get("RNNC_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "rnnc"))


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


class Entry:
    """One C entry point of a library."""

    def __init__(self, lib, kind, spec, last_error):
        # The library stays loaded while its entry point can be called.
        self._lib = lib
        self.kind = kind
        self.symbol = spec["symbol"]
        self.args = [Arg(a) for a in spec["args"]]
        self.arena_bytes = spec.get("arena_bytes", 0)
        self.saved_bytes = spec.get("saved_bytes", 0)
        self.predicted_peak_bytes = spec.get("predicted_peak_bytes")
        self.saved_layout = spec.get("saved", [])
        try:
            self._fn = _function(lib, self.symbol, ctypes.c_int32,
                                 ctypes.c_void_p, ctypes.c_void_p)
        except AttributeError:
            raise RNNCError(f"library has no entry point {self.symbol}")
        self._array = ctypes.c_void_p * len(self.args)
        self._last_error = last_error

    def call(self, pointers, stream=None):
        """Calls the entry point with one data pointer per argument, on
        `stream` (the address of a CUDA stream; cuda target only)."""
        if len(pointers) != len(self.args):
            raise RNNCError(f"{self.symbol} takes {len(self.args)} buffers, "
                            f"got {len(pointers)}")
        rc = self._fn(self._array(*pointers), stream)
        if rc != 0:
            why = self._last_error() if self._last_error else ""
            # The runtime names buffers by position: add their names.
            why = re.sub(r"\bbuffer (\d+) \(",
                         lambda m: f"buffer {m[1]} "
                                   f"({self._arg_name(int(m[1]))}, ", why)
            raise RNNCError(f"{self.symbol} failed: {why}" if why else
                            f"{self.symbol} failed with status {rc}")

    def _arg_name(self, index):
        return str(self.args[index]) if index < len(self.args) else "?"


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
        if self.manifest.get("abi_version") != ABI_VERSION:
            raise RNNCError(
                f"{manifest_path}: ABI version "
                f"{self.manifest.get('abi_version')}, this package speaks "
                f"{ABI_VERSION}")
        path = os.path.join(directory, self.manifest["library"])
        _native.load_blas()
        try:
            self._lib = ctypes.CDLL(path)
        except OSError as e:
            raise RNNCError(f"cannot load {path}: {e}")
        try:
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
        self._set_device = None
        if "last_error" in functions:
            fn = _function(self._lib, functions["last_error"],
                           ctypes.c_char_p)
            self._last_error = lambda: (fn() or b"").decode(errors="replace")
        if "set_device" in functions:
            self._set_device = _function(self._lib, functions["set_device"],
                                         ctypes.c_int32, ctypes.c_int32)
        self._set_graph_replay = None
        if "set_graph_replay" in functions:
            self._set_graph_replay = _function(
                self._lib, functions["set_graph_replay"], ctypes.c_int32,
                ctypes.c_int32)
        self.graph_replay = 0
        self.device = None
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
        self.entries = {kind: Entry(self._lib, kind, spec, self._last_error)
                        for kind, spec in self.manifest["entries"].items()}
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

    def use_device(self, ordinal):
        """Runs the library on GPU `ordinal` (cuda target): chosen once,
        before the first call; a library cannot move."""
        if self.device == ordinal:
            return
        if self.device is not None:
            raise RNNCError(f"this library runs on cuda:{self.device}, not "
                            f"cuda:{ordinal}")
        if self._set_device(ordinal) != 0:
            raise RNNCError(f"rnnc_set_device({ordinal}) failed: "
                            f"{self._last_error()}")
        self.device = ordinal

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
        if self._set_graph_replay(calls) != 0:
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
        return self.entries["fwd"].saved_bytes

    def _saved_gaps(self):
        """The byte ranges [start, end) of the saved region that no saved
        value covers (alignment padding): nothing writes them."""
        if "fwd" not in self.entries:
            return []
        gaps, end = [], 0
        for value in sorted(self.entries["fwd"].saved_layout,
                            key=lambda v: v["offset"]):
            if value["offset"] > end:
                gaps.append((end, value["offset"]))
            end = max(end, value["offset"] + value["bytes"])
        if end < self.saved_bytes:
            gaps.append((end, self.saved_bytes))
        return gaps

    def __getitem__(self, kind):
        return self.entries[kind]


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

_REQUEST_FIELDS = ("cell", "seq_len", "batch", "input_size", "hidden_size",
                   "layers", "remat", "target", "chip", "dtype", "dropout",
                   "reset_to", "storage", "gemm_rows", "wavefront")
_ENTRY_FILE = "rnnc-entry.json"
# <request>-<compiler>
_ENTRY_NAME = re.compile(r"[0-9a-f]{32}-[0-9a-f]{16}")
# What a cache directory holds that rnnc wrote: entries, their device
# copies, the copies of loaded directories, their lock files, temporary and
# moved-aside directories (and the entries of rnnc's first layout,
# <32 hex digits>).
_OWNED_NAME = re.compile(r"(?:[0-9a-f]{32}(?:-[0-9a-f]{16})?"
                         r"|load-[0-9a-f]{24})(?:\.cuda[0-9]+)?"
                         r"(?:\.lock|\.(?:tmp|old)-\w+)?")
# A temporary directory younger than this may be a compile in progress.
_TEMPORARY_AGE_S = 3600
_MISSING = object()


def _request(cell, seq_len, batch, input_size, hidden_size, layers,
             remat="none", target="cpu", chip=None, dtype="float32",
             dropout=0.0, reset_to="zero", storage=None, gemm_rows=0,
             wavefront=False):
    """A request, compile_model's arguments but the device, checked."""
    _check(cell, target, dtype, reset_to, storage)
    _check_schedule(gemm_rows, wavefront)
    try:
        sizes = [operator.index(n) for n in (seq_len, batch, input_size,
                                              hidden_size, layers)]
    except TypeError:
        raise RNNCError(f"sizes must be integers, got seq_len={seq_len!r}, "
                        f"batch={batch!r}, input_size={input_size!r}, "
                        f"hidden_size={hidden_size!r}, layers={layers!r}")
    return dict(zip(_REQUEST_FIELDS, [cell, *sizes, remat, target, chip,
                                      dtype, float(dropout), reset_to,
                                      storage, gemm_rows, wavefront]))


def _check(cell, target, dtype, reset_to, storage):
    """An RNNCError for a value compile_model does not know."""
    # The dialect's cells are rnn-compile's to list: it refuses another
    # name, naming them.
    if not isinstance(cell, str) or not re.fullmatch(r"[a-z][a-z0-9_]*",
                                                     cell):
        raise RNNCError(f"cell must name a cell of the rnn dialect (lstm, "
                        f"gru, ...), got {cell!r}")
    if target not in ("cpu", "cuda"):
        raise RNNCError(f"unknown target {target!r} (expected cpu or cuda)")
    if dtype not in ("float32", "float64"):
        raise RNNCError(f"unknown dtype {dtype!r} (expected float32 or "
                        f"float64)")
    if reset_to not in ("zero", "step", "column"):
        raise RNNCError(f"unknown reset_to {reset_to!r} (expected zero, step "
                        f"or column)")
    if storage not in (None, "bf16"):
        raise RNNCError(f"unknown storage {storage!r} (expected None or "
                        f"'bf16')")
    if storage and dtype != "float32":
        raise RNNCError(f"bf16 storage needs float32 parameters, got {dtype}")


def _check_schedule(gemm_rows, wavefront):
    """An RNNCError for GEMM block rows or a wavefront flag rnn-compile
    would refuse."""
    if isinstance(gemm_rows, bool) or not isinstance(gemm_rows, int) or \
            not 0 <= gemm_rows < 2 ** 63:
        raise RNNCError(f"gemm_rows must be an int >= 0 (0: the target's "
                        f"default), got {gemm_rows!r}")
    if not isinstance(wavefront, bool):
        raise RNNCError(f"wavefront must be True or False, got "
                        f"{wavefront!r}")


def _request_hash(request):
    """The `<request>` part of an entry's name."""
    text = json.dumps([ABI_VERSION] + [request[f] for f in _REQUEST_FIELDS])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


_digests = {}  # (path, device, inode, size, mtime) -> (sha256, embedded)
# The runtime archives rnn-compile links: the variable that names one, else
# the path built into rnn-compile.
_ARCHIVES = {"cpu": [("RNNC_RUNTIME_LIB", "librnn_library_runtime.a")],
             "cuda": [("RNNC_CUDA_RUNTIME_LIB",
                       "librnn_library_cuda_runtime.a"),
                      ("RNNC_RUNTIME_LIB", "librnn_library_runtime.a")]}


def _digest(path, embedded=()):
    """The sha256 of the file at `path` and the absolute paths ending in
    each of the file names `embedded` that it holds (as C strings), hashed
    once per process for a file's inode, size and time."""
    st = os.stat(path)
    stamp = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    known = _digests.get(stamp)
    if known is None:
        found = {}
        with open(path, "rb") as f:
            if st.st_size == 0:
                digest = hashlib.sha256(b"").hexdigest()
            else:
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    digest = hashlib.sha256(data).hexdigest()
                    for name in embedded:
                        end = data.find(b"/" + name.encode() + b"\0")
                        if end >= 0:
                            start = data.rfind(b"\0", 0, end) + 1
                            text = data[start:end + 1 + len(name)]
                            if text.startswith(b"/"):
                                found[name] = os.fsdecode(text)
        known = _digests[stamp] = (digest, found)
    return known


def _tool_environment(compiler):
    """The variables `compiler` runs with that differ from this process's:
    the wheel's rnn-compile takes the wheel's archives, link kit and
    libdevice."""
    return _native.environment() if compiler == _native.compiler() else {}


def _compiler_identity(compiler, target):
    """(16 hex digits, what they were computed from) for the libraries
    `compiler` writes for `target`: the contents of rnn-compile and of the
    runtime archives it links, not their paths."""
    archives = _ARCHIVES[target]
    environ = {**os.environ, **_tool_environment(compiler)}
    digest, embedded = _digest(compiler, [name for _, name in archives])
    parts = {"rnn-compile": {"path": compiler, "sha256": digest}}
    for variable, name in archives:
        path = environ.get(variable) or embedded.get(name)
        sha = None
        if path:
            path = os.path.abspath(path)
            try:
                sha = _digest(path)[0]
            except OSError:
                pass
        parts[name] = {"path": path, "sha256": sha}
    text = json.dumps([[name, part["sha256"]] for name, part in
                       parts.items()])
    return hashlib.sha256(text.encode()).hexdigest()[:16], parts


def _inspect(directory):
    """None when `directory` is a complete library, `_MISSING` when there
    is nothing there, else what is wrong with it."""
    manifest = os.path.join(directory, "manifest.json")
    try:
        with open(manifest) as f:
            text = json.load(f)
    except FileNotFoundError:
        if not os.path.lexists(directory):
            return _MISSING
        if not os.path.isdir(directory):
            return "it is not a directory"
        return "it has no manifest.json"
    except (OSError, ValueError) as e:
        return f"cannot read {manifest}: {e}"
    if not isinstance(text, dict) or text.get("abi_version") != ABI_VERSION:
        return f"{manifest} is not a manifest of ABI version {ABI_VERSION}"
    library = text.get("library")
    if not isinstance(library, str) or \
            not os.path.isfile(os.path.join(directory, library)):
        return f"it has no {library or 'library'}"
    return None


def _damaged(directory, why, because):
    """The error for a damaged entry that cannot be compiled again."""
    return RNNCError(
        f"the cache entry {directory} is damaged ({why}) and cannot be "
        f"compiled again here: {because}; remove it (rm -r {directory}, or "
        f"`python3 -m rnnc cache clear` as its owner) and rnnc compiles it "
        f"again")


def _unique(prefix):
    """A fresh name beginning with `prefix`."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def _move_aside(directory):
    """Takes `directory` away from its name in one rename, then deletes it
    (what cannot be deleted stays under a `.old-` name)."""
    aside = _unique(directory + ".old-")
    os.rename(directory, aside)
    shutil.rmtree(aside, ignore_errors=True)


@contextlib.contextmanager
def _entry_lock(directory):
    """Holds the lock of the cache entry `directory` (`<entry>.lock`, any
    account's), when its file can be opened: concurrent writers then
    compile an entry once. Correctness does not depend on it."""
    path = directory + ".lock"
    fd = None
    for flags in (os.O_RDONLY, os.O_RDONLY | os.O_CREAT):
        try:
            fd = os.open(path, flags, 0o666)
            break
        except OSError:
            pass
    if fd is None:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _publish(final, fill):
    """Makes the library directory `final`: `fill(tmp)` writes it in a
    directory beside it (mode as the umask allows), which is renamed into
    place, so a crash or a concurrent writer never leaves a partial library
    there. A complete library another writer put there first is kept;
    anything else there is replaced."""
    tmp = _unique(final + ".tmp-")
    os.mkdir(tmp, 0o777)
    try:
        fill(tmp)
        for _ in range(3):
            try:
                os.rename(tmp, final)
                return
            except OSError:
                if not os.path.isdir(final):
                    raise
                if _inspect(final) is None:
                    return
                _move_aside(final)
        raise RNNCError(f"cannot put a library at {final}: another process "
                        f"keeps writing there")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _compile(tmp, compiler, request):
    """Runs `compiler` for `request` into the directory `tmp`."""
    r = request
    cmd = [compiler, f"--preset={r['cell']}", f"--seq-len={r['seq_len']}",
           f"--batch={r['batch']}", f"--input-size={r['input_size']}",
           f"--hidden-size={r['hidden_size']}", f"--layers={r['layers']}",
           f"--remat={r['remat']}", f"--target={r['target']}",
           f"--dtype={'f64' if r['dtype'] == 'float64' else 'f32'}",
           "-o", tmp]
    if r["dropout"]:
        cmd.insert(-2, f"--dropout={r['dropout']!r}")
    if r["reset_to"] != "zero":
        cmd.insert(-2, f"--reset-to={r['reset_to']}")
    if r["storage"]:
        cmd.insert(-2, f"--storage={r['storage']}")
    if r["chip"]:
        cmd.insert(-2, f"--chip={r['chip']}")
    if r["gemm_rows"]:
        cmd.insert(-2, f"--gemm-rows={r['gemm_rows']}")
    if r["wavefront"]:
        cmd.insert(-2, "--wavefront")
    run = subprocess.run(cmd, capture_output=True, text=True,
                         env={**os.environ, **_tool_environment(compiler)})
    if run.returncode != 0:
        message = run.stderr.strip().splitlines()
        raise RNNCError(message[0] if message else
                        f"rnn-compile exited {run.returncode}")


def _build(directory, request, compiler, why=_MISSING, failed=None):
    """Compiles the entry `directory` with `compiler`, replacing what is
    there: nothing, a damaged entry (`why`), or the entry whose inode is
    `failed` (it did not load). Another writer's complete entry, put there
    meanwhile, is kept."""
    if compiler is None:
        raise _damaged(directory, why, "rnn-compile is not found")
    identity, parts = _compiler_identity(compiler, request["target"])
    if not os.path.basename(directory).endswith("-" + identity):
        raise _damaged(directory, why, f"it comes from another rnn-compile "
                       f"than {compiler}")

    def fill(tmp):
        _compile(tmp, compiler, request)
        with open(os.path.join(tmp, _ENTRY_FILE), "w") as f:
            json.dump({"abi_version": ABI_VERSION, "request": request,
                       "compiler": dict(identity=identity, **parts),
                       "created": time.time()}, f, indent=2)
            f.write("\n")

    with _entry_lock(directory):
        try:
            inode = os.stat(directory).st_ino
        except FileNotFoundError:
            inode = None
        if inode is not None and inode != failed and \
                _inspect(directory) is None:
            return directory
        try:
            if inode is not None:
                _move_aside(directory)
            _publish(directory, fill)
        except OSError as e:
            if why is _MISSING and failed is None:
                raise RNNCError(f"cannot write {directory}: {e}") from None
            raise _damaged(directory, why, f"cannot replace it "
                           f"({e.strerror or e})") from None
    return directory


def _fallback_root(create):
    """The per-user temporary cache, `<tmp>/rnnc-cache-<uid>` (mode 0700),
    created when `create`; None when it is absent or not this user's
    alone."""
    path = os.path.join(tempfile.gettempdir(), f"rnnc-cache-{os.getuid()}")
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as e:
            raise RNNCError(f"cannot create {path}: {e}; set RNNC_CACHE_DIR "
                            f"to a writable directory") from None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and \
            not st.st_mode & 0o022:
        return path
    if create:
        raise RNNCError(f"{path} (rnnc's per-user cache when the cache "
                        f"directory cannot be written) is not a directory "
                        f"only this user writes; set RNNC_CACHE_DIR to a "
                        f"writable directory")
    return None


def _roots(primary, fallback=True):
    """The cache directories to look in: `primary`, then the per-user
    temporary cache where it exists."""
    roots = [primary]
    if fallback:
        extra = _fallback_root(create=False)
        if extra and extra != primary:
            roots.append(extra)
    return roots


_fallback_warned = False


def _writable_root(primary, fallback=True):
    """The cache directory new entries go to: `primary`, else (it cannot
    be created or written) the per-user temporary cache, with one warning
    per process."""
    global _fallback_warned
    try:
        os.makedirs(primary, exist_ok=True)
        if os.access(primary, os.W_OK | os.X_OK):
            return primary
        reason = "permission denied"
    except OSError as e:
        reason = e.strerror or str(e)
    if not fallback:
        raise RNNCError(f"cannot write to the cache directory {primary}: "
                        f"{reason}")
    root = _fallback_root(create=True)
    if not _fallback_warned:
        _fallback_warned = True
        warnings.warn(
            f"rnnc: the cache directory {primary} cannot be written "
            f"({reason}); compiled libraries go to {root} instead. Set "
            f"RNNC_CACHE_DIR to a writable directory to keep them there.",
            RuntimeWarning, stacklevel=2)
    return root


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
            return directory, compiler
        if why is not _MISSING:
            return _build(directory, request, compiler, why), compiler
    directory = os.path.join(_writable_root(primary, fallback), name)
    return _build(directory, request, compiler), compiler


def _any_entry(request, primary, fallback, missing):
    """The newest complete entry for `request` by any compiler, when no
    compiler is found."""
    prefix = _request_hash(request) + "-"
    complete, damaged = [], []
    for root in _roots(primary, fallback):
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and _ENTRY_NAME.fullmatch(name):
                directory = os.path.join(root, name)
                why = _inspect(directory)
                if why is None:
                    try:
                        complete.append((os.stat(os.path.join(
                            directory, "manifest.json")).st_mtime, directory))
                    except OSError:
                        pass
                elif why is not _MISSING:
                    damaged.append((directory, why))
    if complete:
        return max(complete)[1]
    if damaged:
        raise _damaged(*damaged[0], str(missing))
    raise RNNCError(f"{missing}; and {primary} holds no library for this "
                    f"request ({_describe(request)}) to load without it "
                    f"(rnnc.precompile or `python3 -m rnnc precompile` "
                    f"fills a cache for a machine without the compiler)")


def _describe(request):
    """A request as `key=value, ...`, for messages."""
    return ", ".join(f"{k}={request[k]!r}" for k in _REQUEST_FIELDS)


def _device_copy(directory, device):
    """A copy of the library in `directory` for GPU `device`, so that the
    loader gives it its own runtime: a loaded library runs on one device,
    and the loader keeps one copy of a file per process. It is kept beside
    a cache entry, or in the cache (for a directory given to `load`)."""
    if device == 0:
        return directory
    parent, base = os.path.split(directory)
    entry = _ENTRY_NAME.fullmatch(base) is not None
    if not entry:
        st = os.stat(os.path.join(directory, "manifest.json"))
        identity = f"{os.path.realpath(directory)}\0{st.st_mtime_ns}"
        base = "load-" + hashlib.sha256(identity.encode()).hexdigest()[:24]
    name = f"{base}.cuda{device}"
    primary = cache_dir()
    places = ([parent] if entry else []) + _roots(primary)
    for root in dict.fromkeys(places):
        if _inspect(os.path.join(root, name)) is None:
            return os.path.join(root, name)
    if entry and os.access(parent, os.W_OK | os.X_OK):
        root = parent
    else:
        root = _writable_root(primary)
    copy = os.path.join(root, name)

    def copy_files(tmp):
        for item in os.listdir(directory):
            if os.path.isfile(os.path.join(directory, item)):
                shutil.copy2(os.path.join(directory, item), tmp)

    with _entry_lock(copy):
        why = _inspect(copy)
        if why is not None:
            if why is not _MISSING:
                _move_aside(copy)
            _publish(copy, copy_files)
    return copy


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


def _load(directory, device):
    """The library in `directory` for `device` (None on the CPU), loaded
    once per process while it is kept or referred to. A `_LoadError` when
    the directory's library does not load (a damaged device copy is
    deleted, to be made again)."""
    slot = (directory, device)
    library = _loaded.get(slot)
    if library is None:
        path = directory if device is None else \
            _device_copy(directory, device)
        try:
            library = Library(path)
        except RNNCError as e:
            if path != directory:
                with contextlib.suppress(OSError):
                    _move_aside(path)
            raise _LoadError(str(e)) from None
        if device is not None:
            library.use_device(device)
        library._slot = slot
    _keep(slot, library)
    return library


def load(directory, device=None):
    """The library in `directory` (an entry of a cache, or a directory
    `rnn-compile -o` wrote), loaded without the compiler; `device` is the
    GPU ordinal a cuda library runs on."""
    with _registry_lock:
        try:
            return _load(os.path.abspath(directory), device)
        except _LoadError as e:
            raise RNNCError(str(e)) from None


def compile_model(cell, seq_len, batch, input_size, hidden_size, layers,
                  remat="none", target="cpu", chip=None, device=None,
                  dtype="float32", dropout=0.0, reset_to="zero",
                  storage=None, gemm_rows=0, wavefront=False):
    """The library of a preset model, compiled on first use and cached.
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
    `device` the GPU ordinal the loaded library runs on: a library loaded
    in this process serves one device, so each device gets its own."""
    # A library this process loaded for the same request is returned
    # without looking for the compiler again (a call's fast path); a
    # compiler rebuilt meanwhile is seen by the next process.
    environ = os.environ
    memo = (cell, seq_len, batch, input_size, hidden_size, layers, remat,
            target, chip, device, dtype, float(dropout), reset_to, storage,
            gemm_rows, wavefront, environ.get("RNNC_CACHE_DIR"),
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
    request = _request(cell, seq_len, batch, input_size, hidden_size,
                       layers, remat, target, chip, dtype, dropout, reset_to,
                       storage, gemm_rows, wavefront)
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
        return library


def precompile(requests, directory=None, jobs=1):
    """Compiles the library of each request, so that a cache can be filled
    ahead of use (in an image, for machines without the compiler) and
    returns their entry directories. A request is a dict of compile_model's
    arguments (`device` is ignored: device copies are made where they are
    loaded) or a sequence of them in order (cell, seq_len, batch,
    input_size, hidden_size, layers, remat, ...). `directory` is the cache
    directory to fill (default: the cache compile_model uses); `jobs`
    compiles run at once."""
    signature = inspect.signature(compile_model)
    checked = []
    for spec in requests:
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

    def one(request):
        return _entry(request, primary, fallback=directory is None)[0]

    if jobs > 1 and len(checked) > 1:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(one, checked))
    return [one(request) for request in checked]


def cache_entries(directory=None):
    """What a cache directory (default: compile_model's, and the per-user
    temporary cache) holds: one dict per entry or device copy, with its
    path, state ("complete", or what is wrong with it), request and
    compiler (from rnnc-entry.json, None where absent) and size in
    bytes."""
    found = []
    for root, names in _listings(directory):
        found.extend(_entries_in(root, names))
    return found


def _listings(directory):
    """(root, sorted names) of `directory`, or of compile_model's cache and
    the per-user temporary cache; roots that do not exist are skipped."""
    roots = [os.path.abspath(directory)] if directory else \
        _roots(cache_dir())
    for root in roots:
        try:
            names = sorted(os.listdir(root))
        except FileNotFoundError:
            continue
        except OSError as e:
            raise RNNCError(f"cannot list {root}: {e}") from None
        yield root, names


def _entries_in(root, names):
    """cache_entries' dicts for the `names` in the directory `root`."""
    found = []
    for name in names:
        path = os.path.join(root, name)
        if not _OWNED_NAME.fullmatch(name) or name.endswith(".lock") or \
                ".tmp-" in name or ".old-" in name or not os.path.isdir(path):
            continue
        why = _inspect(path)
        if why is _MISSING:
            continue
        info = {}
        try:
            with open(os.path.join(path, _ENTRY_FILE)) as f:
                info = json.load(f)
        except (OSError, ValueError):
            pass
        if not isinstance(info, dict):
            info = {}
        size = 0
        try:
            for item in os.listdir(path):
                size += os.lstat(os.path.join(path, item)).st_size
        except OSError:
            pass
        found.append(dict(path=path, state=why or "complete",
                          request=info.get("request"),
                          compiler=info.get("compiler"), bytes=size))
    return found


def clear_cache(directory=None):
    """Deletes what rnnc wrote in a cache directory (default:
    compile_model's, and the per-user temporary cache) and returns the
    paths deleted; temporary directories younger than an hour (compiles
    in progress) are left. Libraries already loaded stay loaded. Files
    that cannot be deleted (another account's, in a shared cache) are an
    RNNCError naming them, after the rest are gone."""
    removed, left = [], []
    now = time.time()
    for root, names in _listings(directory):
        for name in names:
            if not _OWNED_NAME.fullmatch(name):
                continue
            path = os.path.join(root, name)
            try:
                if name.endswith(".lock") or not os.path.isdir(path):
                    os.unlink(path)
                elif ".tmp-" in name or ".old-" in name:
                    if ".tmp-" in name and \
                            now - os.lstat(path).st_mtime < _TEMPORARY_AGE_S:
                        continue
                    shutil.rmtree(path)
                else:
                    aside = _unique(path + ".old-")
                    os.rename(path, aside)
                    shutil.rmtree(aside)
            except FileNotFoundError:
                continue
            except OSError as e:
                left.append(f"{path} ({e.strerror or e})")
                continue
            removed.append(path)
    if left:
        raise RNNCError("cannot delete " + ", ".join(left) + " (remove them "
                        "as their owner)")
    return removed
