#!/usr/bin/env python3
"""A library for every T and B (`rnn-compile --dynamic`) against libraries
compiled for one shape each, called through their C entry points in one
process (ctypes, one BLAS thread):

* step time: the dynamic library's inference and training (forward then
  backward) entry points against the static library's at the same shape,
  interleaved; the median of each and their ratio;
* a new shape: what the first call at a shape the process has not called
  yet costs beyond a call at a shape it has (the sizes entry point, the
  buffers, the call), against compiling a static library for it
  (rnn-compile, what a per-shape cache pays on a miss).

Usage: bench/dynamic_library.py [--cell lstm] [--I 64 --H 64 --L 1]
       [--shapes 1x8,32x64,...] [--iters 50] [--rnn-compile PATH]
"""

import argparse
import ctypes
import json
import os
import random
import shutil
import statistics
import struct
import tempfile
import time

from cli import CELLS, positive_int, program, run_tool, shape_list


def compile_library(args, directory, shape=None):
    command = [args.rnn_compile, f"--preset={args.cell}",
               f"--input-size={args.I}", f"--hidden-size={args.H}",
               f"--layers={args.L}", "-o", directory]
    command += ["--dynamic"] if shape is None else [
        f"--seq-len={shape[0]}", f"--batch={shape[1]}"]
    start = time.perf_counter()
    run_tool(command)
    return time.perf_counter() - start


class Library:
    """The entry points of a compiled library, with buffers per shape."""

    def __init__(self, directory):
        with open(os.path.join(directory, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.lib = ctypes.CDLL(os.path.join(directory,
                                            self.manifest["library"]))
        self.dynamic = self.manifest.get("dynamic", False)
        self.functions = {}
        for kind, entry in self.manifest["entries"].items():
            fn = getattr(self.lib, entry["symbol"])
            fn.restype = ctypes.c_int32
            sizes = None
            if self.dynamic:
                fn.argtypes = [ctypes.c_int64, ctypes.c_int64,
                               ctypes.c_void_p, ctypes.c_void_p]
                sizes = getattr(self.lib, entry["sizes_symbol"])
                sizes.restype = ctypes.c_int32
                sizes.argtypes = [ctypes.c_int64, ctypes.c_int64,
                                  ctypes.c_void_p]
            else:
                fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            self.functions[kind] = (entry, fn, sizes)

    def buffers(self, kind, t, b, fill=True):
        """Buffers of entry point `kind` at (t, b), as the caller
        makes them: the sizes entry point, then one allocation each, each
        aligned to 64 bytes."""
        entry, _, sizes = self.functions[kind]
        if self.dynamic:
            out = (ctypes.c_int64 * len(entry["args"]))()
            if sizes(t, b, out) != 0:
                raise RuntimeError(f"{entry['sizes_symbol']} refused {t}x{b}")
            counts = list(out)
        else:
            counts = []
            for arg in entry["args"]:
                n = 1
                for d in arg["shape"]:
                    n *= d
                counts.append(n * (1 if arg["dtype"] in ("bool", "uint8")
                                   else 4))
            counts[-1] = entry["arena_bytes"]
            for i, arg in enumerate(entry["args"]):
                if arg["role"] == "saved":
                    counts[i] = entry["saved_bytes"]
        # Aligned to 64 bytes, as a PyTorch tensor's storage is; floats
        # uniform in [-1, 1) where the caller gives values, masks a tenth
        # set.
        rng = random.Random(7)
        held = [ctypes.create_string_buffer(max(n, 1) + 64) for n in counts]
        addresses = [(ctypes.addressof(h) + 63) // 64 * 64 for h in held]
        for arg, n, address in zip(entry["args"], counts, addresses):
            if not fill or arg["role"] not in ("input", "parameter",
                                                "cotangent"):
                continue
            if arg["dtype"] == "bool":
                data = bytes(rng.random() < 0.1 for _ in range(n))
            else:
                data = struct.pack(f"{n // 4}f", *(rng.uniform(-1, 1)
                                                   for _ in range(n // 4)))
            ctypes.memmove(address, data, len(data))
        pointers = (ctypes.c_void_p * len(held))(*addresses)
        return held, pointers

    def call(self, kind, t, b, pointers):
        _, fn, _ = self.functions[kind]
        status = fn(t, b, pointers, None) if self.dynamic else \
            fn(pointers, None)
        if status != 0:
            raise RuntimeError(f"{kind} returned {status}")


def median_ms(calls, iters):
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        calls()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cell", choices=CELLS, default="lstm")
    parser.add_argument("--I", type=positive_int, default=64)
    parser.add_argument("--H", type=positive_int, default=64)
    parser.add_argument("--L", type=positive_int, default=1)
    parser.add_argument("--shapes", type=shape_list,
                        default="1x8,32x64,17x5,100x3,64x16")
    parser.add_argument("--iters", type=positive_int, default=50,
                        help="calls per entry point and shape, in 5 rounds "
                             "(at least 5)")
    parser.add_argument("--rnn-compile", type=program, default="rnn-compile")
    args = parser.parse_args()
    if args.iters < 5:
        parser.error(f"--iters must be at least 5 (5 rounds of --iters/5 "
                     f"calls), got {args.iters}")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    work = tempfile.mkdtemp(prefix="rnnc-bench-")
    try:
        measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args, work):
    """Compiles the libraries into `work` and prints the table."""
    shapes = args.shapes
    compile_library(args, os.path.join(work, "dynamic"))
    dynamic = Library(os.path.join(work, "dynamic"))

    print(f"{args.cell} I={args.I} H={args.H} L={args.L}, one BLAS thread")
    print(f"{'T x B':>8} {'entry':>6} {'static ms':>10} {'dynamic ms':>11} "
          f"{'ratio':>6} {'new shape ms':>13} {'static compile s':>17}")
    for t, b in shapes:
        # The first call at this shape: sizes, buffers, the call (on
        # zeros: the values are the caller's); then the same call again
        # (the buffers kept) is the step.
        start = time.perf_counter()
        _, pointers = dynamic.buffers("infer", t, b, fill=False)
        dynamic.call("infer", t, b, pointers)
        first = (time.perf_counter() - start) * 1e3
        seconds = compile_library(args, os.path.join(work, f"{t}x{b}"),
                                  (t, b))
        static = Library(os.path.join(work, f"{t}x{b}"))
        for kind in ("infer", "train"):
            held_d, ptr_d = dynamic.buffers(kind, t, b)
            held_s, ptr_s = static.buffers(kind, t, b)
            # Warm-up calls, not measured.
            median_ms(lambda: static.call(kind, t, b, ptr_s), args.iters // 5)
            median_ms(lambda: dynamic.call(kind, t, b, ptr_d), args.iters // 5)
            s_ms, d_ms = [], []
            for _ in range(5):
                s_ms.append(median_ms(
                    lambda: static.call(kind, t, b, ptr_s), args.iters // 5))
                d_ms.append(median_ms(
                    lambda: dynamic.call(kind, t, b, ptr_d), args.iters // 5))
            s, d = statistics.median(s_ms), statistics.median(d_ms)
            new = f"{first - d:13.3f}" if kind == "infer" else " " * 13
            comp = f"{seconds:17.2f}" if kind == "infer" else ""
            print(f"{t:>3} x {b:<4} {kind:>6} {s:10.4f} {d:11.4f} "
                  f"{d / s:6.3f} {new} {comp}", flush=True)
            del held_d, held_s


if __name__ == "__main__":
    main()
