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
on failure, with the reason from `rnnc_last_error()`, and
`rnnc_set_device(ordinal)` picks its device before its first call.

Libraries are compiled on first use for a key (cell, shape, remat policy,
target and GPU chip, and the identity of the compiler) into a cache directory
(`$RNNC_CACHE_DIR`, else `~/.cache/rnnc`), one subdirectory per key, written
under a temporary name and renamed into place, so a crash or a concurrent
compile never leaves a partial library where a later run would load it.
Within a process, a library once loaded is returned for the same request
without a look at the disk or the compiler.
"""

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading

ABI_VERSION = 1

_DTYPE_BYTES = {"float32": 4, "float64": 8, "bool": 1, "uint8": 1, "int64": 8}


class RNNCError(RuntimeError):
    """A model rnnc cannot compile or call, with one message saying why."""


def find_compiler():
    """Path of `rnn-compile`: `$RNNC_COMPILE`, else the one on PATH."""
    path = os.environ.get("RNNC_COMPILE") or shutil.which("rnn-compile")
    if not path or not os.access(path, os.X_OK):
        raise RNNCError(
            "rnn-compile not found: build rnnc (see its README) and put "
            "build/bin on PATH, or set RNNC_COMPILE to the tool's path")
    return os.path.realpath(path)


def cache_dir():
    """Where compiled libraries are kept."""
    return os.environ.get("RNNC_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "rnnc")


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
        self.kind = kind
        self.symbol = spec["symbol"]
        self.args = [Arg(a) for a in spec["args"]]
        self.arena_bytes = spec.get("arena_bytes", 0)
        self.saved_bytes = spec.get("saved_bytes", 0)
        self.predicted_peak_bytes = spec.get("predicted_peak_bytes")
        self.saved_layout = spec.get("saved", [])
        try:
            fn = getattr(lib, self.symbol)
        except AttributeError:
            raise RNNCError(f"library has no entry point {self.symbol}")
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        fn.restype = ctypes.c_int32
        self._fn = fn
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
            raise RNNCError(f"{self.symbol} failed: {why}" if why else
                            f"{self.symbol} failed with status {rc}")


class Library:
    """A compiled model: its manifest and its loaded entry points."""

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
        try:
            self._lib = ctypes.CDLL(path)
        except OSError as e:
            raise RNNCError(f"cannot load {path}: {e}")
        self.target = self.manifest.get("target", "cpu")
        functions = self.manifest.get("functions", {})
        self._last_error = None
        self._set_device = None
        if "last_error" in functions:
            fn = getattr(self._lib, functions["last_error"])
            fn.argtypes = []
            fn.restype = ctypes.c_char_p
            self._last_error = lambda: (fn() or b"").decode(errors="replace")
        if "set_device" in functions:
            self._set_device = getattr(self._lib, functions["set_device"])
            self._set_device.argtypes = [ctypes.c_int32]
            self._set_device.restype = ctypes.c_int32
        self.device = None
        self._blas_threads = None
        if self.target == "cpu":
            # The library's OpenBLAS (a dependency, found through its
            # handle): its thread count is the process's.
            try:
                get = self._lib.openblas_get_num_threads
                put = self._lib.openblas_set_num_threads
            except AttributeError:
                raise RNNCError(f"{path} does not reach OpenBLAS's thread "
                                f"control (openblas_set_num_threads)")
            get.argtypes, get.restype = [], ctypes.c_int
            put.argtypes, put.restype = [ctypes.c_int], None
            self._blas_threads = (get, put)
        self.entries = {kind: Entry(self._lib, kind, spec, self._last_error)
                        for kind, spec in self.manifest["entries"].items()}
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


_loaded = {}      # (cache key, device) -> Library
_requested = {}   # compile_model's arguments and environment -> Library
_lock = threading.Lock()


def _compiler_identity(path):
    st = os.stat(path)
    runtime = os.environ.get("RNNC_RUNTIME_LIB", "")
    return f"{path}:{st.st_size}:{st.st_mtime_ns}:{runtime}"


def compile_model(cell, seq_len, batch, input_size, hidden_size, layers,
                  remat="none", target="cpu", chip=None, device=None,
                  dtype="float32", dropout=0.0, reset_to="zero",
                  storage=None):
    """The library of a preset model, compiled on first use and cached.
    `dtype` is the element type of its float tensors: float32, or float64
    (the cpu target only). With `dropout` > 0 the training entry points
    drop between layers, with masks keyed by their argument `rng`
    ([seed, offset], int64). With `reset_to` "step" or "column" a step
    whose is_init is set enters the arguments h_reset (and c_reset), per
    layer [T, B, H] or [B, H], instead of zero, and the backward writes
    their gradients. With `storage` "bf16" (float32 only) the saved values
    that are not states are stored in bf16 and the GEMM operands are
    rounded to bf16 with f32 accumulation.
    For the cuda target, `chip` is the GPU chip of the PTX (sm_NN) and
    `device` the GPU ordinal the loaded library runs on: a library loaded
    in this process serves one device, so each device gets its own."""
    if cell not in ("lstm", "gru", "mgu"):
        raise RNNCError(f"unknown cell {cell!r} (expected lstm, gru or mgu)")
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
    # A library this process loaded for the same request is returned
    # without looking for the compiler again (a call's fast path); a
    # compiler rebuilt meanwhile is seen by the next process.
    request = (cell, seq_len, batch, input_size, hidden_size, layers, remat,
               target, chip, device, dtype, float(dropout), reset_to,
               storage, cache_dir()) + tuple(
                   os.environ.get(name) for name in ("RNNC_COMPILE", "PATH",
                                                     "RNNC_RUNTIME_LIB"))
    library = _requested.get(request)
    if library is not None:
        return library
    compiler = find_compiler()
    key_text = json.dumps([ABI_VERSION, _compiler_identity(compiler), cell,
                           seq_len, batch, input_size, hidden_size, layers,
                           remat, target, chip, dtype, float(dropout),
                           reset_to, storage])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:32]
    loaded_key = (key, device)
    with _lock:
        if loaded_key in _loaded:
            _requested[request] = _loaded[loaded_key]
            return _loaded[loaded_key]
        root = cache_dir()
        final = os.path.join(root, key)
        if not os.path.exists(os.path.join(final, "manifest.json")):
            os.makedirs(root, exist_ok=True)

            def run_compiler(tmp):
                cmd = [compiler, f"--preset={cell}", f"--seq-len={seq_len}",
                       f"--batch={batch}", f"--input-size={input_size}",
                       f"--hidden-size={hidden_size}", f"--layers={layers}",
                       f"--remat={remat}", f"--target={target}",
                       f"--dtype={'f64' if dtype == 'float64' else 'f32'}",
                       "-o", tmp]
                if dropout:
                    cmd.insert(-2, f"--dropout={float(dropout)!r}")
                if reset_to != "zero":
                    cmd.insert(-2, f"--reset-to={reset_to}")
                if storage:
                    cmd.insert(-2, f"--storage={storage}")
                if chip:
                    cmd.insert(-2, f"--chip={chip}")
                run = subprocess.run(cmd, capture_output=True, text=True)
                if run.returncode != 0:
                    message = run.stderr.strip().splitlines()
                    raise RNNCError(message[0] if message else
                                    f"rnn-compile exited {run.returncode}")

            _publish(final, run_compiler)
        directory = final if device is None else _device_copy(final, device)
        try:
            library = Library(directory)
        except RNNCError as e:
            raise RNNCError(f"{e} (if the cache entry is damaged, remove "
                            f"{directory} to compile it again)") from None
        if device is not None:
            library.use_device(device)
        _loaded[loaded_key] = library
        _requested[request] = library
        return library


def _publish(final, fill):
    """Makes the library directory `final`: `fill(tmp)` writes it in a
    temporary directory beside it, which is renamed into place, so a crash
    or a concurrent writer never leaves a partial library there."""
    tmp = tempfile.mkdtemp(prefix=os.path.basename(final) + ".tmp-",
                           dir=os.path.dirname(final))
    try:
        fill(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            # Another process put the same library in place first.
            if not os.path.exists(os.path.join(final, "manifest.json")):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _device_copy(directory, device):
    """A copy of the library in `directory` for GPU `device`, so that the
    loader gives it its own runtime: a loaded library runs on one device,
    and the loader keeps one copy of a file per process."""
    if device == 0:
        return directory
    copy = f"{directory}.cuda{device}"
    if not os.path.exists(os.path.join(copy, "manifest.json")):

        def copy_files(tmp):
            for name in os.listdir(directory):
                shutil.copy2(os.path.join(directory, name), tmp)

        _publish(copy, copy_files)
    return copy
