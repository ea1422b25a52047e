"""Checks a library written by rnn-compile with nothing but the standard
library (the lit suite does not need PyTorch).

    check-library.py DIR

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


def nbytes(arg):
    count = math.prod(arg["shape"])
    return count * (1 if arg["dtype"] == "bool" else 4)


def key(arg):
    return (arg["name"], arg.get("layer"))


# Inputs, parameters and cotangents, shared by every call.
given = {}
for arg in entries["train"]["args"]:
    if arg["role"] in ("input", "parameter", "cotangent"):
        n = math.prod(arg["shape"])
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
    for arg in entry["args"]:
        if key(arg) not in buffers:
            buffers[key(arg)] = poisoned(nbytes(arg))
    pointers = (ctypes.c_void_p * len(entry["args"]))(
        *(ctypes.addressof(buffers[key(a)]) for a in entry["args"]))
    fn = getattr(lib, entry["symbol"])
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    fn.restype = ctypes.c_int32
    if fn(pointers, None) != 0:
        fail(entry["symbol"] + " returned non-zero")


fused = dict(given)
call("train", fused)

split = dict(given)
call("fwd", split)
split[("arena", None)] = poisoned(entries["bwd"]["arena_bytes"])
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

for kind in ("fwd", "bwd"):
    entry = entries[kind]
    saved = [a for a in entry["args"] if a["role"] == "saved"]
    if len(saved) != 1 or saved[0]["shape"] != [entry["saved_bytes"]]:
        fail(f"{kind}: saved region argument does not match saved_bytes")
    end = max((s["offset"] + s["bytes"] for s in entry["saved"]), default=0)
    if end > entry["saved_bytes"]:
        fail(f"{kind}: saved layout exceeds saved_bytes")
print(f"saved region {entries['fwd']['saved_bytes']} bytes")
