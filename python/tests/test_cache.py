"""The cache of compiled libraries (rnnc.library): entries named by the
request and the compiler's contents, shared by accounts, repaired when
damaged, served without the compiler; the per-user temporary cache of a
process that cannot write the cache; the bound on loaded libraries;
precompile, load, clear_cache and `python3 -m rnnc`.

Needs `rnn-compile` (RNNC_COMPILE or PATH). The tests that run a process
as another account (uid 65534, through setpriv) need root and skip
otherwise. Every test uses a cache directory of its own.
"""

import collections
import gc
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import pytest

from rnnc import _cache, library
from rnnc.library import RNNCError, compile_model

# The package's source beside these tests (what ./dev.sh installs), which
# another account can import where the installed copy sits in root's home.
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRU = ("gru", 4, 2, 3, 3, 1)   # compile_model's first arguments, tiny
OTHER_UID = 65534


@pytest.fixture(scope="module")
def compiler():
    try:
        return library.find_compiler()
    except RNNCError as e:
        pytest.skip(str(e))


@pytest.fixture
def cache(tmp_path, monkeypatch, compiler):
    """A cache directory of the test's own, and a process that has loaded
    nothing from it."""
    root = tmp_path / "cache"
    monkeypatch.setenv("RNNC_CACHE_DIR", str(root))
    # The per-user temporary cache is the test's too.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(library, "_loaded", collections.OrderedDict())
    monkeypatch.setattr(library, "_requested", {})
    return root


def forget(monkeypatch):
    """Makes this process forget what it loaded (as a new process would),
    so that the next request looks at the disk."""
    monkeypatch.setattr(library, "_loaded", collections.OrderedDict())
    monkeypatch.setattr(library, "_requested", {})


def no_compiles(monkeypatch):
    """Fails the test where rnn-compile compiles (it may tell its
    identity)."""
    run = subprocess.run

    def refuse(cmd, *args, **kwargs):
        if cmd[1:] == ["--print-identity"]:
            return run(cmd, *args, **kwargs)
        raise AssertionError(f"rnn-compile was run: {cmd}")

    monkeypatch.setattr(subprocess, "run", refuse)


def entries(root):
    return sorted(n for n in os.listdir(root)
                  if re.fullmatch(r"[0-9a-f]{32}-[0-9a-f]{16}", n))


def leftovers(root):
    return [n for n in os.listdir(root) if ".tmp-" in n or ".old-" in n]


@pytest.fixture(scope="module")
def shared(compiler):
    """A directory every account can read (pytest's own are root's alone),
    with a copy of rnn-compile at another path: bin/rnn-compile."""
    top = tempfile.mkdtemp(prefix="rnnc-test-")
    os.chmod(top, 0o755)
    os.mkdir(os.path.join(top, "bin"), 0o755)
    copy = os.path.join(top, "bin", "rnn-compile")
    shutil.copy2(compiler, copy)
    os.chmod(copy, 0o755)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def made(parent, name, mode):
    path = os.path.join(parent, name)
    os.mkdir(path)
    os.chmod(path, mode)
    return path


def counting_compiler(directory, real):
    """A wrapper of `real` that appends a line to `directory`/count for
    each compile, not for the question of its identity (a compiler of its
    own identity)."""
    count = os.path.join(directory, "count")
    wrapper = os.path.join(directory, "rnn-compile")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\n[ \"$1\" = --print-identity ] || "
                f"echo run >> '{count}'\nexec '{real}' \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return wrapper, count


def compiles(count):
    if not os.path.exists(count):
        return 0
    with open(count) as f:
        return len(f.readlines())


# A child process: compiles or loads the requests (JSON, argv[1]) and
# prints the directories and the warnings it got.
CHILD = textwrap.dedent("""
    import json, sys, warnings
    import rnnc.library as L
    out = {"directories": [], "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for args in json.loads(sys.argv[1]):
                out["directories"].append(L.compile_model(*args).directory)
        except L.RNNCError as e:
            out["error"] = str(e)
    out["warnings"] = [str(w.message) for w in caught]
    print(json.dumps(out))
""")


def child_env(**extra):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": PYTHON_DIR,
           "HOME": "/nonexistent"}
    env.update({k: str(v) for k, v in extra.items() if v is not None})
    return env


def run_child(prefix, requests, env, background=False):
    cmd = [*prefix, "-c", CHILD, json.dumps(requests)]
    if background:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    run = subprocess.run(cmd, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def result(process):
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def other_account():
    """The command prefix that runs Python as uid 65534 (nobody)."""
    if os.geteuid() != 0:
        pytest.skip("running a process as another account needs root")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    prefix = [setpriv, f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}",
              "--clear-groups"]
    for python in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        probe = subprocess.run([*prefix, python, "-c", "import rnnc.library"],
                               env=child_env(), capture_output=True)
        if probe.returncode == 0:
            return [*prefix, python]
    pytest.skip(f"uid {OTHER_UID} cannot run a Python that imports rnnc "
                f"from {PYTHON_DIR}")


def with_umask(mask, fn):
    old = os.umask(mask)
    try:
        return fn()
    finally:
        os.umask(old)


def test_entry_is_named_by_request_and_compiler(cache):
    """An entry <request>-<compiler> holds the library, its manifest and
    rnnc-entry.json (the request, the compiler's hashes), readable as the
    umask allows."""
    lib = with_umask(0o022, lambda: compile_model(*GRU))
    assert os.path.dirname(lib.directory) == str(cache)
    assert entries(cache) == [os.path.basename(lib.directory)]
    assert sorted(os.listdir(lib.directory)) == [
        "librnnc_model.so", "manifest.json", "rnnc-entry.json"]
    assert stat.S_IMODE(os.stat(lib.directory).st_mode) == 0o755
    for name in os.listdir(lib.directory):
        assert os.stat(os.path.join(lib.directory, name)).st_mode & 0o044
    with open(os.path.join(lib.directory, "rnnc-entry.json")) as f:
        info = json.load(f)
    assert info["request"]["cell"] == "gru" and info["request"]["seq_len"] == 4
    compiler = info["compiler"]
    assert os.path.basename(lib.directory).endswith("-" + compiler["identity"])
    assert len(compiler["rnn-compile"]["sha256"]) == 64
    assert not leftovers(cache)


def test_cells_are_the_dialects(cache):
    """compile_model takes any cell of the dialect (the CIFG LSTM, which no
    module of rnnc.torch wraps, included); the manifest names the cell's
    states; an unknown name is refused by rnn-compile, naming the cells."""
    lib = compile_model("cifg", 3, 2, 4, 5, 1)
    assert lib.manifest["cell"] == "cifg"
    assert lib.manifest["states"] == ["h", "c"]
    assert compile_model("mgu", 3, 2, 4, 5, 1).manifest["states"] == ["h"]
    with pytest.raises(RNNCError, match=r"unknown cell 'lstmx' \(the cells "
                                        r"are lstm, gru, mgu, cifg\)"):
        compile_model("lstmx", 3, 2, 4, 5, 1)
    with pytest.raises(RNNCError, match="cell must name a cell"):
        compile_model("--remat=gates", 3, 2, 4, 5, 1)
    assert not leftovers(cache)


def test_manifest_states_dropout_and_storage(cache):
    """The manifest says what the arguments do not: the dropout compiled
    into the training entry points (probability and site, between each
    pair of layers) and each layer's storage type."""
    plain = compile_model("lstm", 3, 2, 4, 5, 2, entries=("fwd",))
    assert plain.manifest["dropout"] == []
    assert plain.manifest["storage"] == ["float32", "float32"]
    lib = compile_model("gru", 3, 2, 4, 5, 3, dropout=0.375, storage="bf16",
                        entries=("fwd",))
    assert lib.manifest["dropout"] == [{"p": 0.375, "layer": 0},
                                       {"p": 0.375, "layer": 1}]
    assert lib.manifest["storage"] == ["bfloat16"] * 3
    wide = compile_model("mgu", 3, 2, 4, 5, 1, dtype="float64",
                         entries=("fwd",))
    assert wide.manifest["storage"] == ["float64"]


def test_entries_are_those_asked_for(cache):
    """By default a library has the entry points rnnc.torch and rnnc.jax
    call (infer, fwd, bwd: rnn-compile --entries), not the fused training
    function, which a library asked for with it has; each is its own cache
    entry. Asking a library for an entry point it lacks, or for entries of
    unknown kinds, is one clear error."""
    default = compile_model(*GRU)
    assert sorted(default.manifest["entries"]) == ["bwd", "fwd", "infer"]
    with pytest.raises(RNNCError, match=r"has no entry point 'train' \(it "
                       r"has infer, fwd, bwd\): compile it with entries "
                       r"including 'train'"):
        default["train"]
    every = compile_model(*GRU, entries=library.ENTRY_KINDS)
    assert sorted(every.manifest["entries"]) == ["bwd", "fwd", "infer",
                                                 "train"]
    assert every.directory != default.directory
    # The entry points both have are the same functions.
    for kind in ("infer", "fwd", "bwd"):
        assert every.manifest["entries"][kind] == \
            default.manifest["entries"][kind]
    assert compile_model(*GRU, entries=["bwd", "fwd", "infer"]) is default
    # A library of inference alone takes no remat policy.
    alone = compile_model(*GRU, entries=["infer"])
    assert list(alone.manifest["entries"]) == ["infer"]
    with pytest.raises(RNNCError, match="--remat applies to the training "
                                        "entry points"):
        compile_model(*GRU, remat="gates", entries=["infer"])
    with pytest.raises(RNNCError, match=r"unknown entry point kinds "
                                        r"\['grad'\]"):
        compile_model(*GRU, entries=("infer", "grad"))
    with pytest.raises(RNNCError, match="no entry point"):
        compile_model(*GRU, entries=())
    with pytest.raises(RNNCError, match="sequence of entry point kinds"):
        compile_model(*GRU, entries="infer")
    with pytest.raises(RNNCError, match="unknown entry point kind 'step'"):
        default["step"]
    assert not leftovers(cache)


def test_copied_compiler_reuses_the_entry(cache, monkeypatch, shared,
                                          tmp_path):
    """The compiler's identity is its contents: the same rnn-compile at
    another path loads the entry without compiling. Another compiler (here
    a wrapper) gets an entry of its own."""
    lib = compile_model(*GRU)
    manifest = os.path.join(lib.directory, "manifest.json")
    stamp = os.stat(manifest).st_mtime_ns
    forget(monkeypatch)
    monkeypatch.setenv("RNNC_COMPILE", os.path.join(shared, "bin",
                                                    "rnn-compile"))
    with monkeypatch.context() as m:
        no_compiles(m)
        again = compile_model(*GRU)
    assert again.directory == lib.directory
    assert os.stat(manifest).st_mtime_ns == stamp

    wrapper, count = counting_compiler(str(tmp_path), library.find_compiler())
    monkeypatch.setenv("RNNC_COMPILE", wrapper)
    other = compile_model(*GRU)
    assert compiles(count) == 1
    assert other.directory != lib.directory
    assert len(entries(cache)) == 2


def test_wrapper_entries_follow_the_compiler_it_runs(cache, monkeypatch,
                                                    tmp_path, compiler):
    """A wrapper script is named by its own contents and those of the
    executable it runs (which rnn-compile --print-identity names): once
    that executable changes, the wrapper compiles an entry of its own
    rather than serving the old one's."""
    real = tmp_path / "real-rnn-compile"
    shutil.copy2(compiler, real)
    wrapper, count = counting_compiler(str(tmp_path), str(real))
    monkeypatch.setenv("RNNC_COMPILE", wrapper)
    lib = compile_model(*GRU)
    record = json.loads((Path(lib.directory) / "rnnc-entry.json").read_text())
    assert record["compiler"]["executable"]["path"] == str(real)
    forget(monkeypatch)
    assert compile_model(*GRU).directory == lib.directory
    assert compiles(count) == 1
    # Another build of the compiler, runnable as the first.
    with open(real, "ab") as f:
        f.write(b"\0rebuilt")
    forget(monkeypatch)
    again = compile_model(*GRU)
    assert compiles(count) == 2
    assert again.directory != lib.directory
    assert len(entries(cache)) == 2


def test_compiler_without_an_identity_is_named(cache, monkeypatch,
                                               tmp_path):
    """A compiler that cannot say what it runs (another program, an
    rnn-compile of an older rnnc) is named before it compiles anything."""
    other = tmp_path / "rnn-compile"
    other.write_text("#!/bin/sh\necho \"rnn-compile: Unknown command line "
                     "argument '$1'.\" >&2\nexit 2\n")
    other.chmod(0o755)
    monkeypatch.setenv("RNNC_COMPILE", str(other))
    with pytest.raises(RNNCError, match=re.escape(
            f"{other} is not an rnn-compile of this rnnc: {other} "
            f"--print-identity: rnn-compile: Unknown command line argument "
            f"'--print-identity'.")):
        compile_model(*GRU)
    other.write_text("#!/bin/sh\necho '{}'\n")
    with pytest.raises(RNNCError, match="it printed no identity"):
        compile_model(*GRU)
    assert not os.path.exists(cache) or entries(cache) == []


def test_compiler_absent_loads_the_cached_library(cache, monkeypatch):
    """Without rnn-compile (RNNC_COMPILE names nothing, PATH lacks it) a
    cached library for the request is loaded; a request the cache lacks is
    an error that says so."""
    lib = compile_model(*GRU)
    forget(monkeypatch)
    monkeypatch.setenv("RNNC_COMPILE", "/nonexistent/rnn-compile")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    no_compiles(monkeypatch)
    assert compile_model(*GRU).directory == lib.directory
    with pytest.raises(RNNCError, match=r"rnn-compile not found.*holds no "
                                        r"library for this request.*"
                                        r"precompile"):
        compile_model("gru", 5, 2, 3, 3, 1)


def test_entries_are_of_one_cpu(cache, monkeypatch):
    """The code rnn-compile writes is for the CPU it runs on: an entry is
    named by the CPU's extensions too (rnnc-entry.json records them), a
    CPU of other extensions compiles its own, and without a compiler it
    does not load another CPU's entry, which the error names."""
    lib = compile_model(*GRU)
    with open(os.path.join(lib.directory, "rnnc-entry.json")) as f:
        recorded = json.load(f)["compiler"]["cpu"]["sha256"]
    assert recorded == _cache._host_cpu()
    other_cpu = lambda: "0" * 64  # noqa: E731
    forget(monkeypatch)
    monkeypatch.setattr(_cache, "_host_cpu", other_cpu)
    other = compile_model(*GRU)
    assert other.directory != lib.directory
    assert len(entries(cache)) == 2
    # A third CPU, without a compiler: neither entry is its.
    shutil.rmtree(other.directory)
    forget(monkeypatch)
    monkeypatch.setattr(_cache, "_host_cpu", lambda: "1" * 64)
    monkeypatch.setenv("RNNC_COMPILE", "/nonexistent/rnn-compile")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    no_compiles(monkeypatch)
    with pytest.raises(RNNCError, match=re.escape(
            f"it holds {lib.directory}, compiled for another CPU")):
        compile_model(*GRU)


def test_intact_entry_that_does_not_load_is_kept(cache, monkeypatch):
    """An entry whose library is the file it was written as but which the
    dynamic loader refuses here (a shared library it needs is missing)
    is an error saying so; the entry is neither compiled again nor
    removed, as it serves the machines that have what it needs."""
    lib = compile_model(*GRU)
    inode = os.stat(lib.directory).st_ino
    forget(monkeypatch)
    real = library.ctypes.CDLL

    def loader(path, *args, **kwargs):
        if str(path).startswith(str(cache)):
            raise OSError("libmissing.so.1: cannot open shared object "
                          "file: No such file or directory")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(library.ctypes, "CDLL", loader)
    no_compiles(monkeypatch)
    with pytest.raises(RNNCError, match=r"libmissing\.so\.1.*the cache "
                                        r"entry .* is intact"):
        compile_model(*GRU)
    assert os.stat(lib.directory).st_ino == inode
    assert _cache._inspect(lib.directory) is None


def test_partial_entry_is_rebuilt(cache, monkeypatch):
    """An entry without its manifest (an interrupted copy), with a
    library of another size or digest than rnnc-entry.json records, or
    without that record, is moved aside and compiled again."""
    lib = compile_model(*GRU)
    os.remove(os.path.join(lib.directory, "manifest.json"))
    forget(monkeypatch)
    again = compile_model(*GRU)
    assert again.directory == lib.directory
    assert library._inspect(lib.directory) is None
    assert not leftovers(cache)

    # Compiled, never loaded in this process, then damaged: cut short
    # (at 64 bytes the loader refuses it; cut at half its size it loads and
    # faults where it is read), one byte changed, the entry's record of
    # the library gone (an entry written before the record was), or the
    # manifest edited.
    [directory] = library.precompile([("mgu", 3, 2, 3, 3, 1)])
    so = os.path.join(directory, "librnnc_model.so")
    record = os.path.join(directory, "rnnc-entry.json")
    size = os.path.getsize(so)

    def truncate(length):
        with open(so, "r+b") as f:
            f.truncate(length)

    def flip():
        with open(so, "r+b") as f:
            f.seek(size // 2)
            byte = f.read(1)
            f.seek(size // 2)
            f.write(bytes([byte[0] ^ 1]))

    def unrecord(key):
        """The damage: the record of the entry's `key` gone."""
        def damage():
            with open(record) as f:
                info = json.load(f)
            del info[key]
            with open(record, "w") as f:
                json.dump(info, f)
        return damage

    def edit_manifest():
        path = os.path.join(directory, "manifest.json")
        with open(path) as f:
            manifest = json.load(f)
        manifest["entries"]["infer"]["args"].pop()
        with open(path, "w") as f:
            json.dump(manifest, f, indent=2)

    for damage, why in [(lambda: truncate(64), "has 64 bytes"),
                        (lambda: truncate(size // 2), f"has {size // 2} "),
                        (flip, "another sha256"),
                        (unrecord("library"), "does not record the size"),
                        (edit_manifest, "manifest.json is not the one it "
                                        "was written with"),
                        (unrecord("manifest"), "does not record the size and "
                                             "digest of manifest.json"),
                        (lambda: os.remove(record), "no rnnc-entry.json")]:
        damage()
        assert why in library._inspect(directory)
        # Rebuilt without loading it (this process must not load a library
        # that the next round damages: the loader would hand back the
        # mapping of the file it cuts).
        assert library.precompile([("mgu", 3, 2, 3, 3, 1)]) == [directory]
        assert os.path.getsize(so) == size
        assert library._inspect(directory) is None
    forget(monkeypatch)
    truncate(size // 2)
    rebuilt = compile_model("mgu", 3, 2, 3, 3, 1)
    assert rebuilt.directory == directory and rebuilt.saved_bytes > 0
    assert os.path.getsize(so) == size
    assert len(entries(cache)) == 2 and not leftovers(cache)


def test_concurrent_compiles_make_one_entry(cache, tmp_path, compiler):
    """Processes that ask for the same new library at once all get it:
    one compiles (the others wait on the entry's lock), one entry."""
    wrapper, count = counting_compiler(str(tmp_path), compiler)
    env = child_env(RNNC_CACHE_DIR=cache, RNNC_COMPILE=wrapper)
    processes = [run_child([sys.executable], [GRU], env, background=True)
                 for _ in range(4)]
    results = [result(p) for p in processes]
    assert all("error" not in r for r in results), results
    directories = {r["directories"][0] for r in results}
    assert len(directories) == 1
    assert entries(cache) == [os.path.basename(directories.pop())]
    assert compiles(count) == 1
    assert not leftovers(cache)


def test_another_account_loads_the_entry(other_account, shared):
    """An entry root wrote with umask 022 serves another account, which
    cannot write the cache: loaded, not compiled, no warning."""
    cache = made(shared, "read", 0o755)
    copy = os.path.join(shared, "bin", "rnn-compile")
    env = child_env(RNNC_CACHE_DIR=cache, RNNC_COMPILE=copy)
    mine = with_umask(0o022, lambda: run_child([sys.executable], [GRU], env))
    [directory] = mine["directories"]
    stamp = os.stat(os.path.join(directory, "manifest.json")).st_mtime_ns
    theirs = run_child(other_account, [GRU], env)
    assert theirs == {"directories": [directory], "warnings": []}
    assert os.stat(os.path.join(directory, "manifest.json")).st_mtime_ns \
        == stamp
    assert entries(cache) == [os.path.basename(directory)]


def test_accounts_write_one_cache_concurrently(other_account, shared):
    """Two accounts compiling the same library into a cache both write
    (mode 1777) get one entry, which both load."""
    cache = made(shared, "both", 0o1777)
    copy = os.path.join(shared, "bin", "rnn-compile")
    env = child_env(RNNC_CACHE_DIR=cache, RNNC_COMPILE=copy)
    requests = [GRU, ("lstm", 3, 2, 3, 4, 1)]
    processes = [with_umask(0o022, lambda: run_child(
        prefix, requests, env, background=True))
        for prefix in (other_account, [sys.executable], other_account)]
    results = [result(p) for p in processes]
    assert all("error" not in r and not r["warnings"] for r in results), \
        results
    assert len({tuple(r["directories"]) for r in results}) == 1
    assert len(entries(cache)) == 2 and not leftovers(cache)


def test_damaged_entry_of_another_account_is_named(other_account, shared):
    """A damaged entry that this account may not replace (another's, in a
    sticky cache directory) is an error naming it and how to remove it."""
    cache = made(shared, "sticky", 0o1777)
    copy = os.path.join(shared, "bin", "rnn-compile")
    env = child_env(RNNC_CACHE_DIR=cache, RNNC_COMPILE=copy)
    [directory] = with_umask(0o022, lambda: run_child(
        [sys.executable], [GRU], env))["directories"]
    os.remove(os.path.join(directory, "manifest.json"))
    theirs = run_child(other_account, [GRU], env)
    assert theirs["directories"] == []
    assert f"the cache entry {directory} is damaged" in theirs["error"]
    assert "no manifest.json" in theirs["error"]
    assert f"rm -r {directory}" in theirs["error"]
    assert "python3 -m rnnc cache clear" in theirs["error"]


@pytest.mark.parametrize("unwritable", ["cache", "home"])
def test_unwritable_cache_falls_back_with_one_warning(other_account, shared,
                                                      unwritable):
    """A cache directory the process cannot write (RNNC_CACHE_DIR, or
    ~/.cache/rnnc in a read-only HOME) is replaced by a per-user temporary
    cache, mode 0700, with one warning naming RNNC_CACHE_DIR."""
    readonly = made(shared, f"readonly-{unwritable}", 0o755)
    tmp = made(shared, f"tmp-{unwritable}", 0o1777)
    copy = os.path.join(shared, "bin", "rnn-compile")
    if unwritable == "cache":
        env = child_env(RNNC_CACHE_DIR=readonly, RNNC_COMPILE=copy,
                        TMPDIR=tmp)
    else:
        env = child_env(HOME=readonly, RNNC_COMPILE=copy, TMPDIR=tmp)
    theirs = run_child(other_account, [GRU, ("gru", 5, 2, 3, 3, 1)], env)
    fallback = os.path.join(tmp, f"rnnc-cache-{OTHER_UID}")
    assert "error" not in theirs, theirs
    assert [os.path.dirname(d) for d in theirs["directories"]] == \
        [fallback] * 2
    [warning] = theirs["warnings"]
    assert "RNNC_CACHE_DIR" in warning and fallback in warning
    st = os.stat(fallback)
    assert st.st_uid == OTHER_UID and stat.S_IMODE(st.st_mode) == 0o700
    assert os.listdir(readonly) == []
    # The next process finds them there and compiles nothing; the cache
    # directory still cannot be written, which it says once.
    again = run_child(other_account, [GRU, ("gru", 5, 2, 3, 3, 1)], env)
    assert again["directories"] == theirs["directories"]
    assert again["warnings"] == [warning]
    assert os.listdir(readonly) == []


def test_loaded_libraries_are_bounded(cache, monkeypatch):
    """With RNNC_MAX_LOADED=2 a third library unloads the least recently
    used one; a backward whose forward ran an unloaded library loads it
    again, and every result is torch.nn's."""
    torch = pytest.importorskip("torch")
    import rnnc.torch as rt
    monkeypatch.setenv("RNNC_MAX_LOADED", "2")

    def mapped():
        gc.collect()
        with open("/proc/self/maps") as f:
            return {line.split()[-1] for line in f
                    if line.rstrip().endswith(".so") and str(cache) in line}

    torch.manual_seed(3)
    pending = {}
    # One library per hidden size (each serves every T and B).
    for H in (4, 5, 6):
        ours, ref = rt.GRU(3, H), torch.nn.GRU(3, H)
        ref.load_state_dict(ours.state_dict())
        x = torch.randn(H - 2, 2, 3, requires_grad=True)
        y, _ = ours(x)
        y_ref, _ = ref(x)
        assert torch.allclose(y, y_ref, atol=1e-5)
        pending[H] = (ours, ref, x, y, y_ref)
        assert len(mapped()) <= 2
    assert len(mapped()) == 2
    # H=4's library was unloaded under its pending backward.
    for ours, ref, x, y, y_ref in pending.values():
        grads = torch.autograd.grad(y.sum(), [x, *ours.parameters()])
        want = torch.autograd.grad(y_ref.sum(), [x, *ref.parameters()])
        for a, b in zip(grads, want):
            assert torch.allclose(a, b, atol=1e-5)
        assert len(mapped()) <= 2
    cpu = [lib for lib in library._loaded.values() if lib.target == "cpu"]
    assert len(cpu) == 2


def test_precompile_then_load_without_compiler(tmp_path, monkeypatch,
                                               compiler):
    """precompile fills a cache (dicts or compile_model's positional
    arguments); a machine without the compiler loads its entries through
    compile_model, or a library directory through load."""
    image = tmp_path / "image"
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    forget(monkeypatch)
    dirs = library.precompile(
        [dict(cell="lstm", seq_len=3, batch=2, input_size=3, hidden_size=4,
              layers=1, device=None), GRU], directory=str(image))
    assert [os.path.dirname(d) for d in dirs] == [str(image)] * 2
    monkeypatch.setenv("RNNC_CACHE_DIR", str(image))
    monkeypatch.setenv("RNNC_COMPILE", "/nonexistent/rnn-compile")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    no_compiles(monkeypatch)
    assert compile_model(*GRU).directory == dirs[1]
    lib = library.load(dirs[0])
    assert lib.directory == dirs[0] and set(lib.entries) >= {"fwd", "bwd"}
    with pytest.raises(RNNCError, match="cannot read"):
        library.load(str(tmp_path))



def test_compiler_failures_are_named(cache, tmp_path, monkeypatch):
    """A compiler that crashes is named with its exit status, signal, the
    request and its last words (not LLVM's request for a bug report); one
    that succeeds without a manifest is named, not the cache; neither
    leaves an entry."""
    real = library.find_compiler()

    def script(name, body):
        # The real compiler tells the identity.
        path = tmp_path / name
        path.write_text(f"#!/bin/sh\n[ \"$1\" = --print-identity ] && "
                        f"exec '{real}' \"$1\"\n" + body)
        path.chmod(0o755)
        return str(path)

    crash = script("crash", "echo 'PLEASE submit a bug report to x' >&2\n"
                            "echo 'rnn-compile: out of disk' >&2\n"
                            "kill -BUS $$\n")
    monkeypatch.setenv("RNNC_COMPILE", crash)
    with pytest.raises(RNNCError, match=r"rnn-compile exited -7 \(SIGBUS\) "
                                        r"compiling cell='gru', .*; its last "
                                        r"words: rnn-compile: out of disk"):
        compile_model(*GRU)
    silent = script("silent", "exit 0\n")
    monkeypatch.setenv("RNNC_COMPILE", silent)
    with pytest.raises(RNNCError, match=r"silent succeeded but wrote no "
                                        r"usable .*manifest.json"):
        compile_model(*GRU)
    assert not os.path.exists(cache) or entries(cache) == []
    assert not os.path.exists(cache) or not leftovers(cache)


def test_cache_dir_that_is_a_file_falls_back(tmp_path, monkeypatch,
                                             compiler):
    """RNNC_CACHE_DIR naming a file is a cache that cannot be written: the
    per-user temporary cache, with the warning naming RNNC_CACHE_DIR;
    RNNC_COMPILE naming no executable file is named."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(_cache, "_fallback_warned", False)
    forget(monkeypatch)
    afile = tmp_path / "afile"
    afile.write_text("")
    monkeypatch.setenv("RNNC_CACHE_DIR", str(afile))
    with pytest.warns(RuntimeWarning, match="RNNC_CACHE_DIR"):
        lib = compile_model(*GRU)
    assert os.path.dirname(lib.directory) == str(
        tmp_path / f"rnnc-cache-{os.getuid()}")
    monkeypatch.setenv("RNNC_COMPILE", str(tmp_path))
    with pytest.raises(RNNCError, match=re.escape(
            f"rnn-compile not found: RNNC_COMPILE={tmp_path} is not an "
            f"executable file")):
        library.find_compiler()


def test_temporary_cache_stands_in_only_for_an_unwritable_one(
        tmp_path, monkeypatch, compiler):
    """The per-user temporary cache serves only while the cache directory
    cannot be written, with the warning each time a process uses it; a
    cache directory that can be written gets its own entries."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    forget(monkeypatch)
    monkeypatch.setattr(_cache, "_fallback_warned", False)
    afile = tmp_path / "afile"
    afile.write_text("")
    monkeypatch.setenv("RNNC_CACHE_DIR", str(afile / "cache"))
    with pytest.warns(RuntimeWarning, match="RNNC_CACHE_DIR"):
        lib = compile_model(*GRU)
    fallback = str(tmp_path / f"rnnc-cache-{os.getuid()}")
    assert os.path.dirname(lib.directory) == fallback
    forget(monkeypatch)
    monkeypatch.setattr(_cache, "_fallback_warned", False)
    with monkeypatch.context() as m:
        no_compiles(m)
        with pytest.warns(RuntimeWarning, match=re.escape(
                f"the cache directory {afile / 'cache'} cannot be written "
                f"(Not a directory); compiled libraries go to {fallback}")):
            assert compile_model(*GRU).directory == lib.directory
    writable = tmp_path / "writable"
    monkeypatch.setenv("RNNC_CACHE_DIR", str(writable))
    forget(monkeypatch)
    monkeypatch.setattr(_cache, "_fallback_warned", False)
    monkeypatch.setattr(_cache.has_entry, "known", {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not library.is_precompiled(**dict(zip(
            ("cell", "seq_len", "batch", "input_size", "hidden_size",
             "layers"), GRU)))
        mine = compile_model(*GRU)
    assert os.path.dirname(mine.directory) == str(writable)
    assert entries(writable) == [os.path.basename(lib.directory)]


def test_precompile_fills_a_writable_default_cache(tmp_path, monkeypatch,
                                                   compiler):
    """precompile without a directory fills the default cache
    (RNNC_CACHE_DIR) where it can be written, even with the entry in the
    per-user temporary cache already."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    forget(monkeypatch)
    fallback = library.precompile([GRU], directory=str(
        tmp_path / f"rnnc-cache-{os.getuid()}"))[0]
    os.chmod(os.path.dirname(fallback), 0o700)
    assert _cache._fallback_root(create=False) == os.path.dirname(fallback)
    image = tmp_path / "image"
    monkeypatch.setenv("RNNC_CACHE_DIR", str(image))
    dirs = library.precompile([GRU])
    assert [os.path.dirname(d) for d in dirs] == [str(image)]
    assert entries(image) == [os.path.basename(fallback)]


def test_load_refuses_a_malformed_manifest(tmp_path, compiler):
    """A manifest.json that is not one rnn-compile writes is one
    RNNCError naming it, whatever part of it is wrong."""
    good = library.compile_model("gru", 3, 2, 3, 4, 1, "none").directory
    with open(os.path.join(good, "manifest.json")) as f:
        manifest = json.load(f)
    entry = next(iter(manifest["entries"]))
    cases = [([], "is not a manifest: a JSON object, got list"),
             ({k: v for k, v in manifest.items() if k != "entries"},
              "no entries"),
             (dict(manifest, entries=[]), '"entries" an object'),
             (dict(manifest, entries={entry: {}}),
              "a malformed entry point")]
    for i, (text, message) in enumerate(cases):
        directory = tmp_path / str(i)
        shutil.copytree(good, directory)
        with open(directory / "manifest.json", "w") as f:
            json.dump(text, f)
        with pytest.raises(RNNCError, match=re.escape(
                str(directory / "manifest.json")) + ".*" + message):
            library.load(str(directory))


def test_command_line_fills_lists_and_clears(tmp_path, compiler):
    """python3 -m rnnc precompile|cache dir|list|clear; clearing leaves
    what rnnc did not write."""
    root = tmp_path / "cli"
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, RNNC_COMPILE=compiler,
               RNNC_CACHE_DIR=str(root))

    def rnnc(*args):
        run = subprocess.run([sys.executable, "-m", "rnnc", *args], env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        return run.stdout

    out = rnnc("precompile", "cell=gru,seq_len=4,batch=2,input_size=3,"
               "hidden_size=3,layers=1",
               '{"cell": "mgu", "seq_len": 2, "batch": 1, "input_size": 2, '
               '"hidden_size": 2, "layers": 1, "remat": "gates"}',
               "cell=lstm,seq_len=4,batch=2,input_size=3,hidden_size=3,"
               "layers=2,gemm_rows=4,wavefront=true",
               "cell=gru,seq_len=none,batch=none,input_size=3,"
               "hidden_size=3,layers=1")
    written = out.split()
    assert len(written) == 4 and \
        entries(root) == sorted(map(os.path.basename, written))
    with open(os.path.join(written[2], "manifest.json")) as f:
        manifest = json.load(f)
    assert (manifest["gemm_rows"], manifest["wavefront"]) == (4, True)
    # The library of every shape that rnnc.torch's GRU(3, 3) runs.
    with open(os.path.join(written[3], "manifest.json")) as f:
        assert json.load(f)["dynamic"] is True
    assert rnnc("cache", "dir").strip() == str(root)
    listing = rnnc("cache", "list")
    assert "cell=gru seq_len=4" in listing and "remat=gates" in listing
    (root / "notes.txt").write_text("not rnnc's")
    assert "cell=gru seq_len=none batch=none" in listing
    # A plain file and a link under entries' names go, but are not
    # libraries.
    (root / ("a" * 32)).write_text("")
    os.symlink(tmp_path, root / ("b" * 32 + "-" + "c" * 16))
    assert "removed 4 libraries" in rnnc("cache", "clear")
    assert os.listdir(root) == ["notes.txt"]
    bad = subprocess.run([sys.executable, "-m", "rnnc", "precompile",
                          "cell=rnn,seq_len=1"], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "rnnc:" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "rnnc", "precompile",
                          "cell=lstm,wavefront=maybe"], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 1 and \
        "wavefront='maybe' is not true or false" in bad.stderr

    def refused(*args):
        run = subprocess.run([sys.executable, "-m", "rnnc", "precompile",
                              *args], env=env, capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 1 and run.stdout == ""
        return run.stderr

    # A request rnn-compile refuses leaves nothing in the cache, not even
    # its entry's lock file.
    assert "no plan fits" in refused(
        "cell=lstm,seq_len=4,batch=2,input_size=3,hidden_size=3,layers=1,"
        "remat=budget:10")
    assert os.listdir(root) == ["notes.txt"]
    # An unknown argument is named, though required ones are missing too.
    assert "unknown arguments bogus" in refused("cell=lstm,bogus=1")
    listed = tmp_path / "requests.json"
    listed.write_text("[{")
    assert f"{listed}: not JSON" in refused("--file", str(listed))
    listed.write_text("[1]")
    assert f"{listed}: expected a JSON list of requests (objects)" in \
        refused("--file", str(listed))
    assert "hidden_size is given twice" in refused(
        "cell=gru,seq_len=4,batch=2,input_size=3,hidden_size=3,"
        "hidden_size=4,layers=1")


def test_request_arguments_of_the_wrong_type(cache):
    """A bool as a size or a dropout that is no number is a TypeError
    naming it (True is no size of 1); is_precompiled takes compile_model's
    arguments, device included."""
    with pytest.raises(TypeError, match="hidden_size=True"):
        compile_model("gru", 4, 2, 3, True, 1)
    with pytest.raises(TypeError, match="dropout must be a number, got "
                                        "None"):
        compile_model(*GRU, dropout=None)
    arguments = dict(cell="gru", seq_len=4, batch=2, input_size=3,
                     hidden_size=3, layers=1)
    assert library.is_precompiled(**arguments, device=0) == \
        library.is_precompiled(**arguments)


def test_clear_cache_keeps_loaded_libraries(cache):
    """clear_cache deletes the entries; a library loaded before still runs,
    and the next process compiles again."""
    lib = compile_model(*GRU)
    removed = library.clear_cache()
    assert lib.directory in removed and entries(cache) == []
    assert lib.blas_threads() >= 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        library._requested.clear()
        library._loaded.clear()
        assert compile_model(*GRU).directory == lib.directory
    assert entries(cache) == [os.path.basename(lib.directory)]


def test_command_line_interrupted_leaves_nothing(tmp_path, compiler):
    """precompile interrupted (SIGINT, as Ctrl-C sends) while it compiles
    exits 130 with one line, no traceback, and leaves no entry and no
    temporary directory in the cache."""
    started = tmp_path / "started"
    wrapper = tmp_path / "rnn-compile"
    wrapper.write_text(f"#!/bin/sh\n[ \"$1\" = --print-identity ] && "
                       f"exec '{compiler}' \"$@\"\ntouch '{started}'\n"
                       f"exec sleep 60\n")
    wrapper.chmod(0o755)
    root = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, RNNC_COMPILE=str(wrapper),
               RNNC_CACHE_DIR=str(root))
    # `python3 -m rnnc` as an interactive shell starts it: SIGINT raises
    # KeyboardInterrupt even where the tests ignore SIGINT (a suite started
    # in the background by a non-interactive shell does; a child inherits
    # an ignored signal, and Python then leaves it ignored).
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import runpy, signal, sys; "
         "signal.signal(signal.SIGINT, signal.default_int_handler); "
         "sys.argv[0] = 'rnnc'; "
         "runpy.run_module('rnnc', run_name='__main__', alter_sys=True)",
         "precompile",
         "cell=gru,seq_len=4,batch=2,input_size=3,hidden_size=3,layers=1"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not started.exists() and child.poll() is None and \
                time.time() < deadline:
            time.sleep(0.05)
        assert started.exists(), child.communicate(timeout=60)
        child.send_signal(signal.SIGINT)
        try:
            out, err = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            with open(f"/proc/{child.pid}/status") as f:
                status = [line.strip() for line in f
                          if line.startswith(("State", "Sig"))]
            pytest.fail(f"still running 60 s after SIGINT: {status}")
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, err
    assert err == "rnnc: interrupted\n" and out == ""
    assert entries(root) == [] and leftovers(root) == []


def cli(*args, env, prefix=(sys.executable,)):
    """`python3 -m rnnc ARGS` (as the account of `prefix`)."""
    return subprocess.run([*prefix, "-m", "rnnc", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_command_line_refuses_bad_flags(tmp_path):
    """A flag given a bad value, and precompile without requests, are
    argparse's errors: status 2, the subcommand's usage, a line naming
    the flag; an empty --cache-dir is refused, not taken as the default
    cache, which keeps its entries."""
    root = tmp_path / "cache"
    entry = root / ("0" * 32 + "-" + "1" * 16)
    entry.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, RNNC_CACHE_DIR=str(root))
    request = "cell=gru,seq_len=4,batch=2,input_size=3,hidden_size=3,layers=1"
    cases = [
        (["precompile", "--jobs", "0", request],
         "precompile", "argument --jobs: expected a positive int, got '0'"),
        (["precompile", "--jobs", "two", request],
         "precompile", "argument --jobs: expected a positive int, got "
                       "'two'"),
        (["precompile", "--cache-dir", "", request],
         "precompile", "argument --cache-dir: expected a directory, got an "
                       "empty path"),
        (["cache", "clear", "--cache-dir", ""],
         "cache", "argument --cache-dir: expected a directory, got an empty "
                  "path"),
        (["cache", "list", "--cache-dir="],
         "cache", "argument --cache-dir: expected a directory, got an empty "
                  "path"),
        (["precompile"],
         "precompile", "no requests (give REQUEST or --file)"),
        (["precompile", "--file", str(tmp_path / "absent.json")],
         "precompile", f"argument --file: cannot read "
                       f"{tmp_path / 'absent.json'}: No such file or "
                       f"directory"),
    ]
    for args, command, message in cases:
        run = cli(*args, env=env)
        assert run.returncode == 2 and run.stdout == "", (args, run)
        lines = run.stderr.splitlines()
        assert lines[0].startswith(f"usage: python3 -m rnnc {command} "), \
            (args, run.stderr)
        assert lines[-1] == f"python3 -m rnnc {command}: error: {message}", \
            (args, run.stderr)
        assert "Traceback" not in run.stderr
    assert os.listdir(root) == [entry.name]


def test_command_line_lists_the_temporary_cache_of_a_file(tmp_path,
                                                          compiler):
    """RNNC_CACHE_DIR naming a file is a cache that cannot be written,
    which the per-user temporary cache stands in for: cache list shows
    the entries there, cache dir says where they go, cache clear deletes
    them and keeps the file; --cache-dir naming the file is one error."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(mode=0o700)
    fallback = tmp / f"rnnc-cache-{os.getuid()}"
    [directory] = library.precompile([GRU], directory=str(fallback))
    os.chmod(fallback, 0o700)
    afile = tmp_path / "afile"
    afile.write_text("not a cache")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, RNNC_COMPILE=compiler,
               RNNC_CACHE_DIR=str(afile), TMPDIR=str(tmp))
    listed = cli("cache", "list", env=env)
    assert listed.returncode == 0 and listed.stderr == "", listed
    assert listed.stdout.splitlines()[0].startswith(
        f"{directory}  ") and "cell=gru seq_len=4 batch=2" in listed.stdout
    assert listed.stdout.splitlines()[-1].startswith("1 library, ")
    where = cli("cache", "dir", env=env)
    assert where.returncode == 0 and where.stdout == f"{afile}\n"
    assert where.stderr == f"rnnc: it cannot be written (Not a " \
                           f"directory): compiled libraries go to " \
                           f"{fallback}\n"
    refused = cli("cache", "list", "--cache-dir", str(afile), env=env)
    assert (refused.returncode, refused.stdout, refused.stderr) == \
        (1, "", f"rnnc: cannot list {afile}: Not a directory\n")
    cleared = cli("cache", "clear", env=env)
    assert (cleared.returncode, cleared.stdout, cleared.stderr) == \
        (0, "removed 1 library\n", "")
    assert entries(fallback) == [] and afile.read_text() == "not a cache"


def test_cache_list_shows_requests_as_requests_and_counts_damage(
        tmp_path, compiler):
    """cache list gives each request's values as a request on the command
    line takes them (entries=infer+fwd+bwd, wavefront=false) and counts
    the damaged entries apart."""
    root = tmp_path / "cache"
    good, bad = library.precompile([GRU, ("gru", 5, 2, 3, 3, 1)],
                                   directory=str(root))
    os.remove(os.path.join(bad, "rnnc-entry.json"))
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, RNNC_COMPILE=compiler)
    listed = cli("cache", "list", "--cache-dir", str(root), env=env)
    assert listed.returncode == 0, listed
    lines = {line.split("  ")[0]: line for line in listed.stdout.splitlines()}
    assert "wavefront=false entries=infer+fwd+bwd" in lines[good]
    assert lines[bad].endswith("[damaged: it has no rnnc-entry.json]")
    assert re.fullmatch(r"2 libraries \(1 damaged\), [0-9.]+ KiB",
                        listed.stdout.splitlines()[-1])


def test_clear_cache_deletes_links_not_what_they_point_to(tmp_path):
    """A symbolic link in a cache under a name rnnc writes is deleted by
    clear_cache, and what it points to is left."""
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "keep").write_text("keep")
    root = tmp_path / "cache"
    root.mkdir()
    names = ["0" * 32 + "-" + "1" * 16, "0" * 32 + "-" + "1" * 16 + ".old-x",
             "2" * 32 + ".tmp-y"]
    for name in names:
        os.symlink(outside, root / name)
    os.utime(root / names[2], (0, 0), follow_symlinks=False)
    removed = library.clear_cache(str(root))
    assert sorted(removed) == sorted(str(root / name) for name in names)
    assert os.listdir(root) == []
    assert (outside / "sub" / "keep").read_text() == "keep"


def test_unsearchable_cache_falls_back(other_account, shared):
    """A cache directory this account cannot search (mode 000) is one it
    cannot write: compile_model uses the per-user temporary cache with the
    warning; cache list shows that one's entries and names the directory
    it cannot list; cache clear empties that one and names it too."""
    cache = made(shared, "unsearchable", 0o000)
    tmp = made(shared, "tmp-unsearchable", 0o1777)
    copy = os.path.join(shared, "bin", "rnn-compile")
    env = child_env(RNNC_CACHE_DIR=cache, RNNC_COMPILE=copy, TMPDIR=tmp)
    theirs = run_child(other_account, [GRU], env)
    fallback = os.path.join(tmp, f"rnnc-cache-{OTHER_UID}")
    assert "error" not in theirs, theirs
    assert [os.path.dirname(d) for d in theirs["directories"]] == [fallback]
    [warning] = theirs["warnings"]
    assert f"{cache} cannot be written (Permission denied)" in warning
    listed = cli("cache", "list", env=env, prefix=other_account)
    assert listed.returncode == 1, listed
    assert listed.stdout.startswith(theirs["directories"][0] + "  ")
    assert listed.stderr == f"rnnc: cannot list {cache}: Permission " \
                            f"denied\n"
    cleared = cli("cache", "clear", env=env, prefix=other_account)
    assert (cleared.returncode, cleared.stdout) == (1, ""), cleared
    assert cleared.stderr == f"rnnc: cannot list {cache}: Permission " \
                             f"denied\n"
    assert entries(fallback) == []


def test_damaged_entry_of_a_read_only_cache_goes_to_the_temporary_one(
        other_account, shared):
    """A damaged entry in a cache this account cannot write is compiled
    into the per-user temporary cache, with the warning, and left as it
    is; an intact one there is loaded."""
    cache = made(shared, "readonly-damaged", 0o755)
    tmp = made(shared, "tmp-readonly-damaged", 0o1777)
    copy = os.path.join(shared, "bin", "rnn-compile")
    env = child_env(RNNC_CACHE_DIR=cache, RNNC_COMPILE=copy, TMPDIR=tmp)
    other = ("gru", 5, 2, 3, 3, 1)
    damaged, intact = with_umask(0o022, lambda: run_child(
        [sys.executable], [GRU, other], env))["directories"]
    library_file = os.path.join(damaged, "librnnc_model.so")
    os.truncate(library_file, 100)
    theirs = run_child(other_account, [GRU, other], env)
    fallback = os.path.join(tmp, f"rnnc-cache-{OTHER_UID}")
    assert "error" not in theirs, theirs
    assert theirs["directories"] == [
        os.path.join(fallback, os.path.basename(damaged)), intact]
    [warning] = theirs["warnings"]
    assert "RNNC_CACHE_DIR" in warning and fallback in warning
    assert os.path.getsize(library_file) == 100
