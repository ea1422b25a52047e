"""Checks a library written by rnn-compile with nothing but the standard
library (the lit suite does not need PyTorch).

    check-library.py DIR [--shape=T,B]

A library for every T and B (rnn-compile --dynamic, a manifest of
abi_version 2) is called at --shape: each entry point's sizes entry point
gives its buffers' sizes there, and refuses (returns 1, as does the entry
point) a T or B below 1 or sizes beyond 63 bits.

* The forward then the backward entry point give the fused training entry
  point's outputs and gradients bit for bit, with the saved region and the
  scratch arenas filled with 0xFF (a NaN in every float) before each call:
  the backward reads nothing of the saved region that the forward did not
  write, and no scratch contents survive from one call to the next.
* The inference entry point gives the training outputs bit for bit.
* The saved region argument of both split entry points has the manifest's
  size, which covers every saved buffer of its layout.
* Prints a digest of the outputs and gradients, so that two libraries of
  the same model (e.g. with and without --wavefront) can be compared bit
  for bit: the inputs depend only on the shapes.
* Under a remat budget for every T and B (remat_plan "per call"), where
  the manifest's plans all have a peak above the budget at the shape, the
  training entry points and their sizes refuse it (return 2) and the
  inference entry point does not.

Prints one line per check; exits 1 on the first failure.
"""

import ctypes
import hashlib
import json
import math
import os
import random
import struct
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


directory = sys.argv[1]
with open(os.path.join(directory, "manifest.json")) as f:
    manifest = json.load(f)
lib = ctypes.CDLL(os.path.join(directory, manifest["library"]))
entries = manifest["entries"]
rng = random.Random(11)
dynamic = manifest.get("dynamic", False)
shape = {}
for option in sys.argv[2:]:
    if option.startswith("--shape="):
        t, b = option.split("=", 1)[1].split(",")
        shape = {"T": int(t), "B": int(b)}
if dynamic != bool(shape):
    fail("give --shape=T,B exactly for a library of dynamic shape")


def symbols(shape, chunk=None):
    """T and B, and the symbols the sizes read besides: P, the GEMM block
    (the smallest power of two whose rows P * B reach `gemm_rows`, at most
    T), and under chunk:K (the library's, or `chunk`) the chunk a call
    runs, K rounded up to whole blocks and at most T, and N, the chunks of
    T."""
    t, b = shape["T"], shape["B"]
    p = 1
    while p < t and p * b < manifest["gemm_rows"]:
        p *= 2
    p = max(1, min(p, t))
    values = dict(shape, P=p, K=t, N=1)
    plan = manifest.get("remat_plan", "")
    if chunk is None and plan.startswith("chunk:"):
        chunk = int(plan.split(":")[1])
    if chunk is not None:
        values["K"] = min(-(-chunk // p) * p, t)
        values["N"] = -(-t // values["K"])
    return values


def evaluate(size, values):
    """A size of the manifest ("240*T*B + 24*B*P + 40*B") at `values`."""
    return eval(size, {"__builtins__": {}}, values)


def sizes_of(kind, t, b):
    """The status and the bytes of each argument of an entry point at
    (t, b), from its sizes entry point."""
    entry = entries[kind]
    fn = getattr(lib, entry["sizes_symbol"])
    fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    fn.restype = ctypes.c_int32
    out = (ctypes.c_int64 * len(entry["args"]))()
    return fn(t, b, out), list(out)


sizes = {}
if manifest.get("remat_plan") == "per call":
    # Each variant's peak at the shape: none within the budget, and the
    # training entry points refuse the shape before touching a buffer.
    budget = int(manifest["remat"].split(":", 1)[1])
    peaks = [max(evaluate(c, symbols(shape, v["chunk"])) for c in v["peak"])
             for v in manifest["remat_variants"]]
    if min(peaks) > budget:
        for kind, entry in entries.items():
            status = sizes_of(kind, shape["T"], shape["B"])[0]
            fn = getattr(lib, entry["symbol"])
            fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                           ctypes.c_void_p]
            fn.restype = ctypes.c_int32
            want = 0 if kind == "infer" else 2
            if status != want or \
                    (want and fn(shape["T"], shape["B"], None, None) != 2):
                fail(f"{entry['symbol']}: status {status} at "
                     f"T={shape['T']}, B={shape['B']}, where the smallest "
                     f"peak is {min(peaks)} > budget {budget}")
        print(f"no plan fits budget:{budget} at T={shape['T']}, "
              f"B={shape['B']} (smallest peak {min(peaks)}): the training "
              f"entry points refuse it")
        sys.exit(0)
    print(f"a plan fits budget:{budget} at T={shape['T']}, B={shape['B']} "
          f"(smallest peak {min(peaks)})")
if dynamic:
    for kind in entries:
        status, sizes[kind] = sizes_of(kind, shape["T"], shape["B"])
        if status != 0:
            fail(f"{entries[kind]['sizes_symbol']} refused T={shape['T']}, "
                 f"B={shape['B']}")


def elements(arg):
    return math.prod(shape.get(d, d) if isinstance(d, str) else d
                     for d in arg["shape"])


def nbytes(arg, kind=None, index=None):
    if dynamic and kind is not None:
        return sizes[kind][index]
    return elements(arg) * (1 if arg["dtype"] == "bool" else 4)


def key(arg):
    return (arg["name"], arg.get("layer"))


# Inputs, parameters and cotangents, shared by every call.
given = {}
for arg in entries["train"]["args"]:
    if arg["role"] in ("input", "parameter", "cotangent"):
        n = elements(arg)
        if arg["dtype"] == "bool":
            data = bytes(rng.random() < 0.3 for _ in range(n))
        else:
            data = struct.pack(f"{n}f", *(rng.uniform(-1, 1)
                                          for _ in range(n)))
        given[key(arg)] = ctypes.create_string_buffer(data, len(data))


def poisoned(size):
    return ctypes.create_string_buffer(b"\xff" * size, size)


def call(kind, buffers):
    entry = entries[kind]
    for i, arg in enumerate(entry["args"]):
        if dynamic and key(arg) in buffers and \
                len(buffers[key(arg)]) != nbytes(arg, kind, i):
            fail(f"{kind}: {key(arg)} has {len(buffers[key(arg)])} bytes, "
                 f"its sizes entry point says {nbytes(arg, kind, i)}")
        if key(arg) not in buffers:
            buffers[key(arg)] = poisoned(nbytes(arg, kind, i))
    pointers = (ctypes.c_void_p * len(entry["args"]))(
        *(ctypes.addressof(buffers[key(a)]) for a in entry["args"]))
    fn = getattr(lib, entry["symbol"])
    if dynamic:
        fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                       ctypes.c_void_p]
        fn.restype = ctypes.c_int32
        status = fn(shape["T"], shape["B"], pointers, None)
    else:
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        fn.restype = ctypes.c_int32
        status = fn(pointers, None)
    if status != 0:
        fail(entry["symbol"] + " returned non-zero")


fused = dict(given)
call("train", fused)

split = dict(given)
call("fwd", split)
bwd_arena = [i for i, a in enumerate(entries["bwd"]["args"])
             if a["name"] == "arena"][0]
split[("arena", None)] = poisoned(
    nbytes(entries["bwd"]["args"][bwd_arena], "bwd", bwd_arena)
    if dynamic else entries["bwd"]["arena_bytes"])
call("bwd", split)

checked = 0
for arg in entries["train"]["args"]:
    if arg["role"] not in ("output", "gradient"):
        continue
    a, b = fused[key(arg)].raw, split[key(arg)].raw
    n = len(a) // 4
    if any(math.isnan(v) for v in struct.unpack(f"{n}f", a)):
        fail(f"{key(arg)}: the fused entry point left NaN")
    if a != b:
        fail(f"{key(arg)}: fwd+bwd differs from the fused entry point")
    checked += 1
print(f"split equals fused: {checked} outputs and gradients bitwise")
digest = hashlib.sha256()
for arg in entries["train"]["args"]:
    if arg["role"] in ("output", "gradient"):
        digest.update(fused[key(arg)].raw)
print(f"outputs and gradients sha256 {digest.hexdigest()}")

infer = dict(given)
call("infer", infer)
for arg in entries["infer"]["args"]:
    if arg["role"] == "output" and infer[key(arg)].raw != fused[key(arg)].raw:
        fail(f"{key(arg)}: inference differs from training")
print("infer equals train outputs bitwise")

if dynamic:
    # The saved region: one size for both entry points; and the shapes
    # the library refuses, without touching a buffer.
    saved = [[n for a, n in zip(entries[k]["args"], sizes[k])
              if a["role"] == "saved"] for k in ("fwd", "bwd")]
    if len(saved[0]) != 1 or saved[0] != saved[1] or saved[0][0] <= 0:
        fail(f"saved region sizes {saved} differ or are empty")
    # The manifest's layout (sizes in T and B, each value aligned) spans
    # the region the sizes entry point gives (under a budget each call's
    # plan has its own).
    if "saved" in entries["fwd"]:
        align = entries["fwd"]["saved_alignment"]
        spans = [evaluate(v["size"], symbols(shape))
                 for v in entries["fwd"]["saved"]]
        total = sum(-(-n // align) * align for n in spans)
        if not spans or total != saved[0][0]:
            fail(f"saved layout {entries['fwd']['saved']} spans {total} "
                 f"bytes at {shape}, the sizes entry point {saved[0][0]}")
    elif manifest.get("remat_plan") != "per call":
        fail("the forward entry point has no saved layout")
    for t, b in ((0, 1), (1, 0), (-3, 2), (1 << 40, 1 << 40)):
        for kind, entry in entries.items():
            if sizes_of(kind, t, b)[0] != 1:
                fail(f"{entry['sizes_symbol']} accepts T={t}, B={b}")
            fn = getattr(lib, entry["symbol"])
            fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                           ctypes.c_void_p]
            fn.restype = ctypes.c_int32
            if fn(t, b, None, None) != 1:
                fail(f"{entry['symbol']} accepts T={t}, B={b}")
    print(f"saved region {saved[0][0]} bytes at T={shape['T']}, "
          f"B={shape['B']}; bad shapes refused")
    sys.exit(0)

for kind in ("fwd", "bwd"):
    entry = entries[kind]
    saved = [a for a in entry["args"] if a["role"] == "saved"]
    if len(saved) != 1 or saved[0]["shape"] != [entry["saved_bytes"]]:
        fail(f"{kind}: saved region argument does not match saved_bytes")
    end = max((s["offset"] + s["bytes"] for s in entry["saved"]), default=0)
    if end > entry["saved_bytes"]:
        fail(f"{kind}: saved layout exceeds saved_bytes")
print(f"saved region {entries['fwd']['saved_bytes']} bytes")
