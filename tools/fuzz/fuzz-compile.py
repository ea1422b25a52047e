#!/usr/bin/env python3
"""Deterministic fuzzer for rnn-compile and the libraries it writes.

Usage:
    tools/fuzz/fuzz-compile.py [--seed N] [--runs N] [--minutes M]
                               [--rnn-compile PATH] [--out DIR]
                               [--timeout S] [--mem-limit-mb MB]

Each case is rnn-compile with random flags: a preset (cell, T, B, I, H, L,
remat, target, chip, gpu-math, dtype, storage, dropout, reset-to, gemm-rows,
wavefront, dynamic; values drawn from sensible ones, boundary ones and
nonsense) or
a model file, a seed of tools/fuzz/fuzz-mlir.py's corpus mutated by its
mutators, with or without --entry. Every case gets a fresh output directory that does not exist yet.
A library that compiles for the cpu target (and whose buffers come to at
most 64 MiB) is then called, in a child process, through each of its four
C entry points with the manifest's argument list: buffers of the listed
shapes and types, small random inputs, the arena and the saved region of
the listed sizes; forward then backward on the same saved region. A
library for every T and B (--dynamic) is called at a shape drawn from
1..9 x 1..9, its buffers sized by each entry point's sizes entry point.

Findings, grouped by a signature (fuzz-mlir.py's normalization):
  CRASH      a signal, or a crash message (LLVM ERROR, Stack dump, ...), from
             rnn-compile or from a library call;
  TIMEOUT    no exit within --timeout seconds;
  EXIT       an exit status other than 0 or 2 (1 is an internal failure);
  LINES      a refusal (exit 2) that is not exactly one line on stderr;
  PARTIAL    a refusal that left anything in the output directory;
  MISSING    success without librnnc_model.so and manifest.json;
  CALL       an entry point that returns non-zero, or an output or gradient
             that is not finite.
Each signature's first case is written to DIR/<kind>-<NN>/ (cmd.sh, the
model, stderr). The summary is printed and written to DIR/summary.txt; the
exit status is 1 if there was any finding.
"""

import argparse
import collections
import importlib.util
import json
import os
import random
import resource
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _load_fuzz_mlir():
    spec = importlib.util.spec_from_file_location(
        "fuzz_mlir", os.path.join(HERE, "fuzz-mlir.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FM = _load_fuzz_mlir()


def _cell_names():
    """The dialect's cells, from the cell table (python/rnnc/_cells.py,
    generated from RNNCells.td)."""
    return list(runpy.run_path(os.path.join(ROOT, "python", "rnnc",
                                            "_cells.py"))["NAMES"])

# Per flag: values that should compile, then values that should be refused
# (or stress a limit); a flag takes one of the latter with NONSENSE odds.
SIZES = ([1, 2, 3, 4, 5, 8, 16], [0, -1, 7, 64, 2**31, 2**62, "x", ""])
CHOICES = {
    "preset": (_cell_names(), ["rnn", ""]),
    "remat": (["none", "gates", "chunk:1", "chunk:2", "chunk:3",
               "budget:100000"],
              ["chunk:0", "chunk:-1", "chunk:x", "budget:1",
               "budget:99999999999999999999", "sometimes", ""]),
    "target": (["cpu", "cpu", "cuda"], ["gpu"]),
    "chip": (["sm_90", "sm_80", "sm_100"], ["sm_9", "gfx90a", ""]),
    "gpu-math": (["polynomial", "ex2", "approx"], ["fast", ""]),
    "dtype": (["f32", "f64"], ["bf16", "i32"]),
    "storage": (["bf16", "f32"], ["f64", "f16", ""]),
    "dropout": (["0", "0.25", "0.5", "0.999"], ["1", "-0.1", "nan", "inf"]),
    "reset-to": (["zero", "step", "column"], ["none"]),
    "layers": ([1, 2, 3], [0, -1, 64, 65, 100000]),
    "gemm-rows": ([0, 1, 3, 8, 64], [-1, "x", 2**63]),
}
NONSENSE = 0.08
MAX_CALL_BYTES = 64 << 20
DTYPE_BYTES = {"bool": 1, "uint8": 1, "int64": 8, "float32": 4,
               "float64": 8}

# Run in a child: calls every entry point of a cpu library with the
# manifest's buffers; prints a problem and exits 3 if an entry point fails
# or an output is not finite.
CALLER = r"""
import ctypes, json, math, os, random, struct, sys
lib_dir = sys.argv[1]
m = json.load(open(os.path.join(lib_dir, "manifest.json")))
lib = ctypes.CDLL(os.path.join(lib_dir, m["library"]))
rnd = random.Random(1)
sizes = {"bool": 1, "uint8": 1, "int64": 8, "float32": 4, "float64": 8}
fmt = {"float32": "f", "float64": "d"}
saved = None
dynamic = m.get("dynamic", False)
shape = {"T": rnd.randint(1, 9), "B": rnd.randint(1, 9)}
def buffer(arg, entry, nbytes):
    if arg["name"] == "saved":
        return saved
    n = nbytes // sizes[arg["dtype"]]
    raw = ctypes.create_string_buffer(max(nbytes, 1) + 16)
    base = (ctypes.addressof(raw) + 15) // 16 * 16
    if arg["role"] in ("input", "parameter", "cotangent"):
        if arg["dtype"] in fmt:
            f = fmt[arg["dtype"]]
            for i in range(n):
                struct.pack_into(f, raw, base - ctypes.addressof(raw) + i * sizes[arg["dtype"]], rnd.uniform(-1, 1))
        elif arg["dtype"] == "bool":
            for i in range(n):
                raw[base - ctypes.addressof(raw) + i] = 1 if rnd.random() < 0.2 else 0
        elif arg["dtype"] == "int64":
            for i in range(n):
                struct.pack_into("q", raw, base - ctypes.addressof(raw) + 8 * i, rnd.randrange(2**40))
    return (raw, base, n)
def static_bytes(arg):
    n = 1
    for d in arg["shape"]:
        n *= d
    return n * sizes[arg["dtype"]]
for kind in ("infer", "train", "fwd", "bwd"):
    e = m["entries"][kind]
    if dynamic:
        sz = getattr(lib, e["sizes_symbol"])
        sz.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
        sz.restype = ctypes.c_int32
        out = (ctypes.c_int64 * len(e["args"]))()
        if sz(shape["T"], shape["B"], out) != 0:
            print("%s refused T=%d B=%d" % (e["sizes_symbol"], shape["T"], shape["B"])); sys.exit(3)
        nbytes = list(out)
    else:
        nbytes = [static_bytes(a) if a["name"] != "saved" else e["saved_bytes"] for a in e["args"]]
    if kind == "fwd":
        count = [n for a, n in zip(e["args"], nbytes) if a["name"] == "saved"][0]
        raw = ctypes.create_string_buffer(count + 16)
        saved = (raw, (ctypes.addressof(raw) + 15) // 16 * 16, 0)
    bufs = [buffer(a, e, n) for a, n in zip(e["args"], nbytes)]
    fn = getattr(lib, e["symbol"])
    fn.restype = ctypes.c_int32
    ptrs = (ctypes.c_void_p * len(bufs))(*[b[1] for b in bufs])
    if dynamic:
        fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
        rc = fn(shape["T"], shape["B"], ptrs, None)
    else:
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        rc = fn(ptrs, None)
    if rc != 0:
        print("%s returned %d" % (e["symbol"], rc)); sys.exit(3)
    for a, b in zip(e["args"], bufs):
        if a["role"] in ("output", "gradient") and a["dtype"] in fmt:
            size = sizes[a["dtype"]]
            for i in range(b[2]):
                v = struct.unpack_from(fmt[a["dtype"]], b[0], b[1] - ctypes.addressof(b[0]) + i * size)[0]
                if not math.isfinite(v):
                    print("%s: %s[%d] = %r" % (e["symbol"], a["name"], i, v)); sys.exit(3)
"""


def pick(rng, values):
    good, bad = values
    return rng.choice(bad if rng.random() < NONSENSE else good)


def preset_case(rng):
    c = lambda k: pick(rng, CHOICES[k])
    s = lambda: pick(rng, SIZES)
    flags = ["--preset=" + c("preset"), "--seq-len=%s" % s(),
             "--batch=%s" % s(), "--input-size=%s" % s(),
             "--hidden-size=%s" % s(), "--layers=%s" % c("layers")]
    for key, p in (("remat", 0.6), ("target", 0.4), ("dtype", 0.2),
                   ("storage", 0.2), ("dropout", 0.3), ("reset-to", 0.3)):
        if rng.random() < p:
            flags.append("--%s=%s" % (key, c(key)))
    if "--target=cuda" in flags and rng.random() < 0.5:
        flags.append("--chip=" + c("chip"))
    if rng.random() < 0.3:
        flags.append("--gemm-rows=%s" % c("gemm-rows"))
    if rng.random() < 0.3:
        flags.append("--wavefront")
    if rng.random() < 0.25:
        flags.append("--dynamic")
        # A library of every shape takes T and B at each call: mostly
        # without the flags, which it refuses.
        if rng.random() < 0.9:
            flags = [f for f in flags
                     if not f.startswith(("--seq-len=", "--batch="))]
    # Drawn from the case's own flags, not the run's stream: no other draw
    # of a seed depends on it.
    side = random.Random(" ".join(flags))
    if "--target=cuda" in flags and side.random() < 0.3:
        flags.append("--gpu-math=" + pick(side, CHOICES["gpu-math"]))
    return flags, None


def file_case(rng, seeds):
    name, base = rng.choice(seeds)
    text, applied = FM.mutate(rng, base)
    flags = []
    if rng.random() < 0.4:
        flags.append("--remat=" + pick(rng, CHOICES["remat"]))
    if rng.random() < 0.3:
        flags.append("--target=" + pick(rng, CHOICES["target"]))
    if rng.random() < 0.1:
        flags.append("--entry=" + rng.choice(["lstm", "gru", "f", "main"]))
    if rng.random() < 0.05:
        flags.append("--seq-len=4")  # a preset flag with a model file
    return flags, (text, "%s [%s]" % (name, ",".join(applied) or "unmutated"))


def limits(mem_mb):
    def f():
        b = mem_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (b, b))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return f


def run(args, timeout, mem_mb):
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, preexec_fn=limits(mem_mb))
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out.decode("utf-8", "replace"), \
            err.decode("utf-8", "replace"), False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return None, out.decode("utf-8", "replace"), \
            err.decode("utf-8", "replace"), True


def crashed(rc, err):
    return (rc is not None and (rc < 0 or rc >= 128)) or \
        any(p in err for p in FM.CRASH_PATTERNS)


def library_bytes(manifest):
    """The buffers' bytes; of a dynamic library at the largest shape the
    caller draws (its arena and saved region, sized per call, left out)."""
    total = 0
    for e in manifest["entries"].values():
        for a in e["args"]:
            n = DTYPE_BYTES.get(a["dtype"], 8)
            for d in a["shape"] or []:
                n *= 9 if isinstance(d, str) else d
            total += n
        total += e.get("saved_bytes", 0)
    return total


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=200,
                    help="rnn-compile invocations (default 200)")
    ap.add_argument("--minutes", type=float, default=0,
                    help="stop after this long instead (0: --runs only)")
    ap.add_argument("--rnn-compile",
                    default=os.path.join(ROOT, "build/bin/rnn-compile"))
    ap.add_argument("--out", default="fuzz-compile-out")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--mem-limit-mb", type=int, default=4096)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    seeds = [s for s in FM.load_seeds() if "func.func" in s[1]]
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="fuzz-compile-")
    counts, findings = collections.Counter(), {}
    t0 = time.time()
    runs = calls = 0

    def record(kind, sig, cmd, text, err):
        f = findings.setdefault((kind, sig), {"count": 0, "case": None})
        f["count"] += 1
        if f["case"] is None:
            f["case"] = (cmd, text, err)
        if not args.quiet:
            print("[%d] %s: %s" % (runs, kind.upper(), sig), flush=True)

    while True:
        if args.minutes:
            if time.time() - t0 > args.minutes * 60:
                break
        elif runs >= args.runs:
            break
        runs += 1
        flags, model = preset_case(rng) if rng.random() < 0.7 else \
            file_case(rng, seeds)
        out = os.path.join(tmp, "lib-%d" % runs)
        cmd = [args.rnn_compile, *flags, "-o", out]
        text = None
        if model:
            text = model[0]
            path = os.path.join(tmp, "model.mlir")
            with open(path, "w") as fh:
                fh.write(text)
            cmd.insert(1, path)
        rc, _, err, timed_out = run(cmd, args.timeout, args.mem_limit_mb)
        lines = [l for l in err.splitlines() if l.strip()]
        first = FM.normalize(lines[0]) if lines else "(no output)"
        if timed_out:
            kind = "timeout"
        elif crashed(rc, err):
            kind = "crash"
        elif rc not in (0, 2):
            kind = "exit"
        elif rc == 2 and len(lines) != 1:
            kind = "lines"
        elif rc != 0 and os.path.exists(out) and os.listdir(out):
            kind = "partial"
        elif rc == 0 and not all(os.path.exists(os.path.join(out, f)) for f
                                 in ("librnnc_model.so", "manifest.json")):
            kind = "missing"
        else:
            kind = "refused" if rc else "compiled"
        counts[kind] += 1
        if kind not in ("refused", "compiled"):
            record(kind, first, cmd, text, err)
        elif kind == "compiled":
            manifest = json.load(open(os.path.join(out, "manifest.json")))
            if manifest["target"] == "cpu" and \
                    library_bytes(manifest) <= MAX_CALL_BYTES:
                calls += 1
                crc, cout, cerr, cto = run(
                    [sys.executable, "-c", CALLER, out], args.timeout,
                    args.mem_limit_mb)
                if cto or crashed(crc, cerr) or crc != 0:
                    sig = (cout.strip() or cerr.strip() or
                           "exit %s" % crc).splitlines()[0]
                    record("call", FM.normalize(sig), cmd, text,
                           cout + cerr)
                    counts["call"] += 1
        shutil.rmtree(out, ignore_errors=True)

    elapsed = time.time() - t0
    summary = ["fuzz-compile: %d rnn-compile runs in %.0f s (seed %d): %s; "
               "%d libraries called" % (
                   runs, elapsed, args.seed,
                   ", ".join("%d %s" % (n, k) for k, n in sorted(
                       counts.items())), calls)]
    for i, ((kind, sig), f) in enumerate(sorted(findings.items())):
        summary.append("%s x%d: %s" % (kind.upper(), f["count"], sig))
        d = os.path.join(args.out, "%s-%02d" % (kind, i))
        os.makedirs(d, exist_ok=True)
        cmd, text, err = f["case"]
        if text is not None:
            with open(os.path.join(d, "input.mlir"), "w") as fh:
                fh.write(text)
            cmd = [cmd[0], "input.mlir"] + cmd[2:]
        with open(os.path.join(d, "cmd.sh"), "w") as fh:
            fh.write(" ".join("'%s'" % c for c in cmd) + "\n")
        with open(os.path.join(d, "stderr.txt"), "w") as fh:
            fh.write(err)
    summary.append("findings: %d" % len(findings))
    with open(os.path.join(args.out, "summary.txt"), "w") as fh:
        fh.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
