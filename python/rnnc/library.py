"""Compiled rnnc libraries: compile, cache on disk, load, call.

A library is a directory written by `rnn-compile`: `librnnc_model.so` and
`manifest.json`. The manifest names, for each entry point (`infer`,
`train`, `fwd`, `bwd`), its C symbol and its arguments in order, each with
name, layer (per-layer states), shape, dtype and role, plus the sizes of the
saved region and of the scratch arena. An entry point is called with one
data pointer per argument:

    int32_t rnnc_<f>(void *const *buffers, void *stream);

Libraries are compiled on first use for a key (cell, shape, remat policy,
target, and the identity of the compiler) into a cache directory
(`$RNNC_CACHE_DIR`, else `~/.cache/rnnc`), one subdirectory per key, written
under a temporary name and renamed into place, so a crash or a concurrent
compile never leaves a partial library where a later run would load it.
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

_DTYPE_BYTES = {"float32": 4, "bool": 1, "uint8": 1}


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

    def __init__(self, lib, kind, spec):
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

    def call(self, pointers):
        """Calls the entry point with one data pointer per argument."""
        if len(pointers) != len(self.args):
            raise RNNCError(f"{self.symbol} takes {len(self.args)} buffers, "
                            f"got {len(pointers)}")
        rc = self._fn(self._array(*pointers), None)
        if rc != 0:
            raise RNNCError(f"{self.symbol} failed with status {rc}")


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
        self.entries = {kind: Entry(self._lib, kind, spec)
                        for kind, spec in self.manifest["entries"].items()}
        # The scratch arena is the library's: contents are not kept between
        # calls, so one per thread serves every call.
        self._local = threading.local()

    @property
    def saved_bytes(self):
        return self.entries["fwd"].saved_bytes

    def __getitem__(self, kind):
        return self.entries[kind]


_loaded = {}
_lock = threading.Lock()


def _compiler_identity(path):
    st = os.stat(path)
    runtime = os.environ.get("RNNC_RUNTIME_LIB", "")
    return f"{path}:{st.st_size}:{st.st_mtime_ns}:{runtime}"


def compile_model(cell, seq_len, batch, input_size, hidden_size, layers,
                  remat="none", target="cpu"):
    """The library of a preset model, compiled on first use and cached."""
    if cell not in ("lstm", "gru"):
        raise RNNCError(f"unknown cell {cell!r} (expected lstm or gru)")
    compiler = find_compiler()
    key_text = json.dumps([ABI_VERSION, _compiler_identity(compiler), cell,
                           seq_len, batch, input_size, hidden_size, layers,
                           remat, target])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:32]
    with _lock:
        if key in _loaded:
            return _loaded[key]
        root = cache_dir()
        final = os.path.join(root, key)
        if not os.path.exists(os.path.join(final, "manifest.json")):
            os.makedirs(root, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix=key + ".tmp-", dir=root)
            try:
                cmd = [compiler, f"--preset={cell}", f"--seq-len={seq_len}",
                       f"--batch={batch}", f"--input-size={input_size}",
                       f"--hidden-size={hidden_size}", f"--layers={layers}",
                       f"--remat={remat}", f"--target={target}", "-o", tmp]
                run = subprocess.run(cmd, capture_output=True, text=True)
                if run.returncode != 0:
                    message = run.stderr.strip().splitlines()
                    raise RNNCError(message[0] if message else
                                    f"rnn-compile exited {run.returncode}")
                try:
                    os.rename(tmp, final)
                except OSError:
                    # Another process put the same library in place first.
                    if not os.path.exists(os.path.join(final,
                                                       "manifest.json")):
                        raise
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        library = Library(final)
        _loaded[key] = library
        return library
