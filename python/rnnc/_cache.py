"""The on-disk cache of compiled libraries: requests checked and hashed,
the compiler's identity, entries inspected, written under temporary names
and published by a rename under a lock, damaged ones moved aside, the
per-user fallback for a cache that cannot be written, and the listing and
clearing of a cache. rnnc.library
(whose docstring describes the layout and the rules) chooses and loads
the entries."""

import contextlib
import errno
import fcntl
import functools
import hashlib
import json
import mmap
import numbers
import operator
import os
import platform
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import uuid
import warnings

from . import _native
from ._errors import RNNCError, RNNCTypeError, RNNCValueError

ABI_VERSION = 1
# The manifest of a library of every sequence length and batch size
# (_dynamic.py).
DYNAMIC_ABI_VERSION = 2


def cache_dir():
    """Where compiled libraries are kept (see the module's description for
    the directory that replaces it when it cannot be written)."""
    return os.path.abspath(os.environ.get("RNNC_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "rnnc"))


_REQUEST_FIELDS = ("cell", "seq_len", "batch", "input_size", "hidden_size",
                   "layers", "remat", "target", "chip", "dtype", "dropout",
                   "reset_to", "storage", "gemm_rows", "wavefront", "entries")

# A library's entry points, in rnn-compile's order: inference, the fused
# training function, its forward and its backward.
ENTRY_KINDS = ("infer", "train", "fwd", "bwd")
# Those compile_model compiles unless asked for others: what rnnc.torch and
# rnnc.jax call (the fused training function costs a third of a compile
# and serves neither).
DEFAULT_ENTRIES = ("infer", "fwd", "bwd")


_ENTRY_FILE = "rnnc-entry.json"


# <request>-<compiler>
_ENTRY_NAME = re.compile(r"[0-9a-f]{32}-[0-9a-f]{16}")


# What a cache directory holds that rnnc wrote: entries, their lock files,
# temporary and moved-aside directories (and what older versions wrote:
# the entries of rnnc's first layout, <32 hex digits>, and the copies of
# cuda libraries per device, <entry>.cudaN and load-<24 hex digits>.cudaN,
# from before one loaded library served every device).
_OWNED_NAME = re.compile(r"(?:[0-9a-f]{32}(?:-[0-9a-f]{16})?"
                         r"|load-[0-9a-f]{24})(?:\.cuda[0-9]+)?"
                         r"(?:\.lock|\.(?:tmp|old)-\w+)?")


# A temporary directory younger than this may be a compile in progress.
_TEMPORARY_AGE_S = 3600


_MISSING = object()


def _request(cell, seq_len, batch, input_size, hidden_size, layers,
             remat="none", target="cpu", chip=None, dtype="float32",
             dropout=0.0, reset_to="zero", storage=None, gemm_rows=0,
             wavefront=False, entries=DEFAULT_ENTRIES):
    """A request, compile_model's arguments but the device, checked.
    `seq_len` and `batch` both None ask for a library of every sequence
    length and batch size (rnn-compile --dynamic)."""
    _check(cell, target, dtype, reset_to, storage)
    check_remat(remat)
    _check_schedule(gemm_rows, wavefront)
    entries = _check_entries(entries)
    shape = (seq_len, batch)
    if (seq_len is None) != (batch is None):
        raise RNNCValueError(f"seq_len and batch are both sizes, or both "
                             f"None for every size; got seq_len="
                             f"{seq_len!r}, batch={batch!r}")
    if seq_len is None:
        _check_dynamic(remat, wavefront)
    try:
        given = (input_size, hidden_size, layers) + \
            (shape if seq_len is not None else ())
        if any(isinstance(n, bool) for n in given):
            raise TypeError
        sizes = [operator.index(n) for n in (input_size, hidden_size, layers)]
        if seq_len is not None:
            shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise RNNCTypeError(f"sizes must be integers, got seq_len="
                            f"{seq_len!r}, batch={batch!r}, input_size="
                            f"{input_size!r}, hidden_size={hidden_size!r}, "
                            f"layers={layers!r}")
    if isinstance(dropout, bool) or \
            not isinstance(dropout, numbers.Real):
        raise RNNCTypeError(f"dropout must be a number, got {dropout!r}")
    return dict(zip(_REQUEST_FIELDS, [cell, *shape, *sizes, remat, target,
                                      chip, dtype, float(dropout), reset_to,
                                      storage, gemm_rows, wavefront,
                                      entries]))


def _check_entries(entries):
    """The entry point kinds `entries` names, as a list in ENTRY_KINDS's
    order; an RNNCTypeError or RNNCValueError for anything else."""
    if isinstance(entries, str) or not all(
            isinstance(kind, str) for kind in entries or ()):
        raise RNNCTypeError(f"entries must be a sequence of entry point "
                            f"kinds of {', '.join(ENTRY_KINDS)}, got "
                            f"{entries!r}")
    unknown = [kind for kind in entries if kind not in ENTRY_KINDS]
    if unknown or not entries:
        raise RNNCValueError(f"entries: unknown entry point kinds "
                             f"{unknown} (expected some of "
                             f"{', '.join(ENTRY_KINDS)})"
                             if unknown else "entries: no entry point")
    return [kind for kind in ENTRY_KINDS if kind in entries]


def _check(cell, target, dtype, reset_to, storage):
    """An RNNCValueError for a value compile_model does not know."""
    # The dialect's cells are rnn-compile's to list: it refuses another
    # name, naming them.
    if not isinstance(cell, str) or not re.fullmatch(r"[a-z][a-z0-9_]*",
                                                     cell):
        raise RNNCValueError(f"cell must name a cell of the rnn dialect "
                             f"(lstm, gru, ...), got {cell!r}")
    if target not in ("cpu", "cuda"):
        raise RNNCValueError(f"unknown target {target!r} (expected cpu or "
                             f"cuda)")
    if dtype not in ("float32", "float64"):
        raise RNNCValueError(f"unknown dtype {dtype!r} (expected float32 or "
                             f"float64)")
    if reset_to not in ("zero", "step", "column"):
        raise RNNCValueError(f"unknown reset_to {reset_to!r} (expected "
                             f"zero, step or column)")
    if storage not in (None, "bf16"):
        raise RNNCValueError(f"unknown storage {storage!r} (expected None "
                             f"or 'bf16')")
    if storage and dtype != "float32":
        raise RNNCValueError(f"bf16 storage needs float32 parameters, got "
                             f"{dtype}")


# rnn-compile's remat policies (none, gates, chunk:K, budget:BYTES; K and
# BYTES positive 64-bit integers), checked when a module is made.
_REMAT = re.compile(r"(none|gates|(chunk|budget):([0-9]+))")


def check_remat(remat):
    """An RNNCTypeError or RNNCValueError for a remat policy rnn-compile
    would refuse."""
    if not isinstance(remat, str):
        raise RNNCTypeError(f"remat must be a string, got {remat!r}")
    match = _REMAT.fullmatch(remat)
    if not match:
        raise RNNCValueError(f"unknown remat policy {remat!r} (expected "
                             f"none, gates, chunk:K or budget:BYTES)")
    if match.group(3) is not None and \
            not 1 <= int(match.group(3)) < 2 ** 63:
        what = "K" if match.group(2) == "chunk" else "BYTES"
        raise RNNCValueError(f"bad remat policy {remat!r}: {what} must "
                             f"be a positive integer")


def serves_every_shape(remat, target, wavefront):
    """Whether rnnc.torch runs one library of these settings for every
    sequence length and batch size: one rnn-compile --dynamic compiles, on
    the cpu target (the cuda target's is compiled and checked on the null
    device, and awaits a check on a GPU), without a wavefront (its blocks
    are known for a static shape only), under a remat policy of one plan.
    A budget's library of every shape carries a variant per plan (13 of
    them, about 25 times one plan's compile), each call running the one
    its shape lets the budget choose: rnnc.torch compiles a budget's plan
    per shape instead, a second each, unless the cache holds that library
    (rnnc.precompile with seq_len=None, batch=None; is_precompiled)."""
    return target == "cpu" and not wavefront and \
        not str(remat).startswith("budget:")


def _check_dynamic(remat, wavefront):
    """An RNNCValueError for settings a library of every shape cannot
    have."""
    if wavefront:
        raise RNNCValueError("seq_len=None, batch=None (every shape): a "
                             "wavefront's blocks are known for a static "
                             "shape only")


def _check_schedule(gemm_rows, wavefront):
    """An RNNCTypeError or RNNCValueError for GEMM block rows or a
    wavefront flag rnn-compile would refuse."""
    if isinstance(gemm_rows, bool) or not isinstance(gemm_rows, int):
        raise RNNCTypeError(f"gemm_rows must be an int >= 0 (0: the "
                            f"target's default), got {gemm_rows!r}")
    if not 0 <= gemm_rows < 2 ** 63:
        raise RNNCValueError(f"gemm_rows must be an int >= 0 (0: the "
                             f"target's default), got {gemm_rows!r}")
    if not isinstance(wavefront, bool):
        raise RNNCTypeError(f"wavefront must be True or False, got "
                            f"{wavefront!r}")


def _request_hash(request):
    """The `<request>` part of an entry's name."""
    text = json.dumps([ABI_VERSION] + [request[f] for f in _REQUEST_FIELDS])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


_digests = {}  # (path, device, inode, size, mtime) -> sha256
# (compiler, device, inode, size, mtime, archive variables) -> what
# `compiler --print-identity` printed
_printed_identities = {}


# The runtime archives rnn-compile links: their keys in what
# --print-identity prints and their names in an entry's record.
_ARCHIVES = {"cpu": [("runtime_lib", "librnn_library_runtime.a")],
             "cuda": [("cuda_runtime_lib", "librnn_library_cuda_runtime.a"),
                      ("runtime_lib", "librnn_library_runtime.a")]}


def _stamp(path):
    st = os.stat(path)
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _digest(path):
    """The sha256 of the file at `path`, hashed once per process for a
    file's inode, size and time."""
    stamp = _stamp(path)
    digest = _digests.get(stamp)
    if digest is None:
        with open(path, "rb") as f:
            if stamp[3] == 0:
                digest = hashlib.sha256(b"").hexdigest()
            else:
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    digest = hashlib.sha256(data).hexdigest()
        _digests[stamp] = digest
    return digest


def _file_digest(path):
    """`_digest`, or None where `path` cannot be read."""
    try:
        return _digest(path)
    except OSError:
        return None


def _tool_environment(compiler):
    """The variables `compiler` runs with that differ from this process's:
    the wheel's rnn-compile takes the wheel's archives, link kit and
    libdevice."""
    return _native.environment() if compiler == _native.compiler() else {}


def _failure(run):
    """(how the tool's `run` failed, as "exited -7 (SIGBUS)"; its last
    words or None; its first line where it refused rather than crashed,
    else None)."""
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    crashed = run.returncode < 0 or run.returncode > 128 or \
        any("PLEASE submit a bug report" in line for line in lines)
    status = run.returncode
    how = f"exited {status}"
    if status < 0 or status > 128:
        number = -status if status < 0 else status - 128
        try:
            how += f" ({signal.Signals(number).name})"
        except ValueError:
            pass
    last = next((line.strip() for line in reversed(lines)
                 if "PLEASE submit" not in line and
                 not line.lstrip().startswith(("#", "Stack dump"))), None)
    return how, last, (lines[0] if lines and not crashed else None)


def _printed_identity(compiler):
    """What `compiler --print-identity` prints (rnn-compile.cpp): the
    executable that runs, which differs from `compiler` where that is a
    wrapper script, the LLVM version, the runtime archives' paths. Asked
    once per process for a compiler's file and archive variables."""
    environ = {**os.environ, **_tool_environment(compiler)}
    key = (*_stamp(compiler), environ.get("RNNC_RUNTIME_LIB"),
           environ.get("RNNC_CUDA_RUNTIME_LIB"))
    known = _printed_identities.get(key)
    if known is not None:
        return known
    try:
        run = subprocess.run([compiler, "--print-identity"],
                             capture_output=True, text=True, env=environ)
    except OSError as e:
        raise RNNCError(f"cannot run {compiler}: {e.strerror or e}") from None
    printed = None
    if run.returncode == 0:
        try:
            printed = json.loads(run.stdout)
        except ValueError:
            pass
    fields = ("executable", "llvm", *(field for field, _ in _ARCHIVES["cuda"]))
    if not isinstance(printed, dict) or not all(
            isinstance(printed.get(field), str) for field in fields):
        if run.returncode == 0:
            said = "it printed no identity"
        else:
            how, last, refusal = _failure(run)
            said = refusal or (f"{how}; its last words: {last}" if last
                               else how)
        raise RNNCError(f"{compiler} is not an rnn-compile of this rnnc: "
                        f"{compiler} --print-identity: {said}")
    _printed_identities[key] = printed
    return printed


@functools.lru_cache(maxsize=None)
def _host_cpu():
    """This machine's CPU as the code rnn-compile writes depends on it: the
    instruction set extensions (/proc/cpuinfo's flags, hashed). rnn-compile
    compiles for the CPU it runs on (AVX-512 where there is AVX-512), so
    an entry is of one CPU's extensions: a CPU with fewer would fault on
    it."""
    flags = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = " ".join(sorted(line.split(":", 1)[1].split()))
                    break
    except OSError:
        pass
    if flags is None:
        flags = f"{platform.machine()} {platform.processor()}"
    return hashlib.sha256(flags.encode()).hexdigest()


def _compiler_identity(compiler, target):
    """(16 hex digits, what they were computed from) for the libraries
    `compiler` writes for `target`: the contents, not the paths, of
    `compiler`, of the executable it runs where that differs (a wrapper
    script's), and of the runtime archives it links; the version of the
    LLVM it runs (a shared library in a build from source); the CPU it
    compiles for (`_host_cpu`)."""
    printed = _printed_identity(compiler)
    parts = {"rnn-compile": {"path": compiler, "sha256": _digest(compiler)}}
    executable = os.path.realpath(printed["executable"])
    if executable != compiler:
        parts["executable"] = {"path": executable,
                               "sha256": _file_digest(executable)}
    parts["llvm"] = {"version": printed["llvm"]}
    parts["cpu"] = {"sha256": _host_cpu()}
    for field, name in _ARCHIVES[target]:
        path = printed[field] or None
        parts[name] = {"path": path,
                       "sha256": _file_digest(path) if path else None}
    text = json.dumps([[name, part.get("sha256", part.get("version"))]
                       for name, part in parts.items()])
    return hashlib.sha256(text.encode()).hexdigest()[:16], parts


def _manifest_record(raw):
    """What an entry's record says of its manifest's text `raw`."""
    return {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}


def _inspect(directory):
    """None when `directory` is a complete library, `_MISSING` when there
    is nothing there, else what is wrong with it."""
    manifest = os.path.join(directory, "manifest.json")
    try:
        with open(manifest, "rb") as f:
            raw = f.read()
        text = json.loads(raw)
    except (FileNotFoundError, NotADirectoryError):
        # (A cache directory that is a file holds nothing.)
        if not os.path.lexists(directory):
            return _MISSING
        if not os.path.isdir(directory):
            return "it is not a directory"
        return "it has no manifest.json"
    except PermissionError as e:
        try:
            os.lstat(directory)
        except OSError:
            # A cache directory this process cannot search holds nothing
            # it can use.
            return _MISSING
        return f"cannot read {manifest}: {e}"
    except (OSError, ValueError) as e:
        return f"cannot read {manifest}: {e}"
    if not isinstance(text, dict) or text.get("abi_version") not in (
            ABI_VERSION, DYNAMIC_ABI_VERSION):
        return (f"{manifest} is not a manifest of ABI version "
                f"{ABI_VERSION} or {DYNAMIC_ABI_VERSION}")
    library = text.get("library")
    if not isinstance(library, str) or \
            not os.path.isfile(os.path.join(directory, library)):
        return f"it has no {library or 'library'}"
    # A library cut short still loads, and faults where it is read past its
    # end: it is checked against the size and digest it was written with.
    entry = os.path.join(directory, _ENTRY_FILE)
    try:
        with open(entry) as f:
            written = json.load(f)
        record = written.get("library")
    except FileNotFoundError:
        return f"it has no {_ENTRY_FILE}"
    except (OSError, ValueError, AttributeError) as e:
        return f"cannot read {entry}: {e}"
    # The manifest is the library's own (which loading checks again); one
    # changed in the cache makes the entry damaged, to be compiled again.
    if "manifest" not in written:
        return f"{entry} does not record the size and digest of " \
            f"manifest.json (an entry of an older rnnc)"
    if written["manifest"] != _manifest_record(raw):
        return "its manifest.json is not the one it was written with"
    if not isinstance(record, dict) or record.get("file") != library or \
            not isinstance(record.get("bytes"), int) or \
            not isinstance(record.get("sha256"), str):
        return f"{entry} does not record the size and digest of {library}"
    path = os.path.join(directory, library)
    try:
        size = os.path.getsize(path)
        digest = _digest(path) if size == record["bytes"] else None
    except OSError as e:
        return f"cannot read {path}: {e.strerror or e}"
    if size != record["bytes"]:
        return f"its {library} has {size} bytes, not the {record['bytes']} " \
            f"it was written with"
    if digest != record["sha256"]:
        return f"its {library} is not the file it was written as (another " \
            f"sha256)"
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
        # The lock of an entry that is not there (its compile failed) goes:
        # a writer that waited on it compiles once more, at worst.
        if not os.path.isdir(directory):
            with contextlib.suppress(OSError):
                os.unlink(path)
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
    shape = ["--dynamic"] if r["seq_len"] is None else \
        [f"--seq-len={r['seq_len']}", f"--batch={r['batch']}"]
    cmd = [compiler, f"--preset={r['cell']}", *shape,
           f"--input-size={r['input_size']}",
           f"--hidden-size={r['hidden_size']}", f"--layers={r['layers']}",
           f"--target={r['target']}",
           f"--dtype={'f64' if r['dtype'] == 'float64' else 'f32'}",
           f"--entries={','.join(r['entries'])}", "-o", tmp]
    # rnn-compile refuses a policy for a library of inference alone.
    if r["remat"] != "none":
        cmd.insert(-2, f"--remat={r['remat']}")
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
    if run.returncode == 0:
        return
    how, last, refusal = _failure(run)
    if refusal:
        # A refusal: rnn-compile's one-line error.
        raise RNNCError(refusal)
    raise RNNCError(f"rnn-compile {how} compiling {_describe(request)}"
                    + (f"; its last words: {last}" if last else ""))


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
        manifest = os.path.join(tmp, "manifest.json")
        try:
            with open(manifest, "rb") as f:
                raw = f.read()
            library = json.loads(raw)["library"]
            if not isinstance(library, str):
                raise TypeError("\"library\" is not a file name")
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise RNNCError(f"{compiler} succeeded but wrote no usable "
                            f"{manifest} ({type(e).__name__}: {e})") from None
        path = os.path.join(tmp, library)
        record = dict(file=library, bytes=os.path.getsize(path),
                      sha256=_digest(path))
        with open(os.path.join(tmp, _ENTRY_FILE), "w") as f:
            json.dump({"abi_version": ABI_VERSION, "request": request,
                       "compiler": dict(identity=identity, **parts),
                       "library": record, "manifest": _manifest_record(raw),
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


def _fallback_path():
    """The path of the per-user temporary cache."""
    return os.path.join(tempfile.gettempdir(), f"rnnc-cache-{os.getuid()}")


def _fallback_root(create):
    """The per-user temporary cache, `<tmp>/rnnc-cache-<uid>` (mode 0700),
    created when `create`; None when it is absent or not this user's
    alone."""
    path = _fallback_path()
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


def _roots(primary, fallback=True, listing=False):
    """The cache directories to look in: `primary`, then the per-user
    temporary cache where it exists and stands in for `primary`, which
    cannot be written (always, when `listing`)."""
    roots = [primary]
    if fallback and (listing or _unwritable(primary, create=False)):
        extra = _fallback_root(create=False)
        if extra and extra != primary:
            roots.append(extra)
    return roots


_fallback_warned = False


def _unwritable(directory, create=True):
    """None when `directory` is (or is created as, or where not `create`
    could be created as) a directory this process can write entries to,
    else why not."""
    if not create:
        probe = directory
        while not os.path.lexists(probe) and os.path.dirname(probe) != probe:
            probe = os.path.dirname(probe)
        if not os.path.isdir(probe):
            return os.strerror(errno.ENOTDIR)
        return None if os.access(probe, os.W_OK | os.X_OK) else \
            _denied(probe)
    try:
        os.makedirs(directory, exist_ok=True)
        if os.access(directory, os.W_OK | os.X_OK):
            return None
        return _denied(directory)
    except FileExistsError:
        # (makedirs' answer for a file at the path.)
        return os.strerror(errno.ENOTDIR)
    except OSError as e:
        return e.strerror or str(e)


def _denied(directory):
    """Why the directory `directory`, which os.access says cannot be
    written, cannot be: a read-only file system, else no permission."""
    try:
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            return os.strerror(errno.EROFS)
    except OSError:
        pass
    return os.strerror(errno.EACCES)


def _warn_of_fallback(primary, reason, root):
    """The one warning per process that entries are in the per-user
    temporary cache `root`, as `primary` cannot be written."""
    global _fallback_warned
    if not _fallback_warned:
        _fallback_warned = True
        warnings.warn(
            f"rnnc: the cache directory {primary} cannot be written "
            f"({reason}); compiled libraries go to {root} instead. Set "
            f"RNNC_CACHE_DIR to a writable directory to keep them there.",
            RuntimeWarning, stacklevel=4)


def _served(directory, primary):
    """`directory`, an entry found in a root of `_roots(primary)`, with the
    fallback's warning where it is the per-user temporary cache's."""
    root = os.path.dirname(directory)
    if root != primary:
        _warn_of_fallback(primary, _unwritable(primary, create=False), root)
    return directory


def _writable_root(primary, fallback=True):
    """The cache directory new entries go to: `primary`, else (it cannot
    be created or written) the per-user temporary cache, with one warning
    per process."""
    reason = _unwritable(primary)
    if reason is None:
        return primary
    if not fallback:
        raise RNNCError(f"cannot write to the cache directory {primary}: "
                        f"{reason}")
    root = _fallback_root(create=True)
    _warn_of_fallback(primary, reason, root)
    return root


def cache_entries(directory=None):
    """What a cache directory (default: compile_model's, and the per-user
    temporary cache) holds: one dict per entry or device copy, with its
    path, state ("complete", or what is wrong with it), request and
    compiler (from rnnc-entry.json, None where absent) and size in
    bytes."""
    return _entries(directory)


def _entries(directory, unlisted=None):
    """cache_entries' list; the roots that cannot be listed are appended
    to the list `unlisted` (None: an RNNCError)."""
    found = []
    for root, names in _listings(directory, unlisted):
        found.extend(_entries_in(root, names))
    return found


def _listings(directory, unlisted=None):
    """(root, sorted names) of `directory`, or of compile_model's cache and
    the per-user temporary cache; roots that do not exist are skipped, and
    so is a default cache directory that is not a directory (a cache that
    cannot be written, which the per-user one stands in for). A root that
    cannot be listed is an RNNCError, or where `unlisted` is a list, a
    message appended to it."""
    if directory is not None and not isinstance(directory, (str,
                                                            os.PathLike)):
        raise RNNCTypeError(f"the cache directory must be a path or None, "
                            f"got {directory!r}")
    roots = [os.path.abspath(directory)] if directory else \
        _roots(cache_dir(), listing=True)
    for root in roots:
        try:
            names = sorted(os.listdir(root))
        except FileNotFoundError:
            continue
        except OSError as e:
            if not directory and isinstance(e, NotADirectoryError):
                continue
            message = f"cannot list {root}: {e.strerror or e}"
            if unlisted is None:
                raise RNNCError(message) from None
            unlisted.append(message)
            continue
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


def has_entry(request, primary, compiler, known=None):
    """Whether `primary` (or the per-user fallback) holds a complete entry
    for `request` by `compiler` (None: by any). Answered once per process
    for each request (`has_entry.known`, which clear_cache and precompile
    empty); `known` records an answer instead."""
    memo = json.dumps(request, sort_keys=True)
    if known is not None:
        has_entry.known[memo] = known
    if memo not in has_entry.known:
        prefix = _request_hash(request) + "-"
        if compiler is not None:
            prefix += _compiler_identity(compiler, request["target"])[0]
        found = False
        for root in _roots(primary):
            try:
                names = os.listdir(root)
            except OSError:
                continue
            found |= any(_inspect(os.path.join(root, name)) is None
                         for name in names
                         if name == prefix or (compiler is None and
                                               name.startswith(prefix)))
        has_entry.known[memo] = found
    return has_entry.known[memo]


has_entry.known = {}


def clear_cache(directory=None):
    """Deletes what rnnc wrote in a cache directory (default:
    compile_model's, and the per-user temporary cache) and returns the
    paths deleted; temporary directories younger than an hour (compiles
    in progress) are left, and of a symbolic link the link alone goes.
    Libraries already loaded stay loaded. Files that cannot be deleted
    (another account's, in a shared cache; a read-only cache) and
    directories that cannot be listed are an RNNCError naming them, after
    the rest are gone."""
    return _clear(directory)[0]


def _clear(directory):
    """clear_cache's paths deleted, and how many of them were entries
    (directories; not the locks, temporary or set-aside directories, links
    and plain files under entries' names)."""
    has_entry.known.clear()
    removed, left, unlisted = [], [], []
    entries = 0
    owner = False
    now = time.time()
    for root, names in _listings(directory, unlisted):
        for name in names:
            if not _OWNED_NAME.fullmatch(name):
                continue
            path = os.path.join(root, name)
            try:
                # A symbolic link goes, never what it points to.
                if name.endswith(".lock") or os.path.islink(path) or \
                        not os.path.isdir(path):
                    os.unlink(path)
                elif ".tmp-" in name or ".old-" in name:
                    if ".tmp-" in name and \
                            now - os.lstat(path).st_mtime < _TEMPORARY_AGE_S:
                        continue
                    shutil.rmtree(path)
                else:
                    aside = _unique(path + ".old-")
                    os.rename(path, aside)
                    entries += 1
                    shutil.rmtree(aside)
            except FileNotFoundError:
                continue
            except OSError as e:
                left.append(f"{path} ({e.strerror or e})")
                owner |= e.errno in (errno.EACCES, errno.EPERM)
                continue
            removed.append(path)
    if left or unlisted:
        raise RNNCError("; ".join(
            unlisted + (["cannot delete " + ", ".join(left) +
                         (" (remove them as their owner)" if owner
                          else "")] if left else [])))
    return removed, entries


def _entry_cpu(directory):
    """The CPU (`_host_cpu`) the entry's library was compiled for, as its
    rnnc-entry.json records it (None: not recorded)."""
    try:
        with open(os.path.join(directory, _ENTRY_FILE)) as f:
            return json.load(f)["compiler"]["cpu"]["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _any_entry(request, primary, fallback, missing):
    """The newest complete entry for `request` by any compiler for this
    CPU, when no compiler is found."""
    prefix = _request_hash(request) + "-"
    complete, damaged, other_cpu = [], [], []
    for root in _roots(primary, fallback):
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and _ENTRY_NAME.fullmatch(name):
                directory = os.path.join(root, name)
                why = _inspect(directory)
                if why is None and _entry_cpu(directory) != _host_cpu():
                    other_cpu.append(directory)
                elif why is None:
                    try:
                        complete.append((os.stat(os.path.join(
                            directory, "manifest.json")).st_mtime, directory))
                    except OSError:
                        pass
                elif why is not _MISSING:
                    damaged.append((directory, why))
    if complete:
        return _served(max(complete)[1], primary)
    if damaged:
        raise _damaged(*damaged[0], str(missing))
    elsewhere = ""
    if other_cpu:
        elsewhere = (f" (it holds {other_cpu[0]}, compiled for another "
                     f"CPU, whose instruction set extensions differ from "
                     f"this one's)")
    raise RNNCError(f"{missing}; and {primary} holds no library for this "
                    f"request ({_describe(request)}) to load without it"
                    f"{elsewhere} (rnnc.precompile or `python3 -m rnnc "
                    f"precompile` on a machine of this CPU fills a cache "
                    f"for a machine without the compiler)")


def _describe(request):
    """A request as `key=value, ...`, for messages."""
    return ", ".join(f"{k}={request[k]!r}" for k in _REQUEST_FIELDS)
