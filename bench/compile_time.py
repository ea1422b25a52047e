"""rnn-compile's time, and the speed of what it compiles, without LLVM's
loop strength reduction (rnn-compile's default, skipLoopStrengthReduction
in lib/Driver/Compile.cpp) and with it (`--disable-lsr=false`).

For each model: the compile's CPU time (user + system of the rnn-compile
process, the better of --rounds compiles) each way, then the train and
infer entry points of both libraries called in alternation on the same
buffers (one BLAS thread), the best of --rounds rounds of --calls calls.
Ratios are without/with; a library of every shape runs at --seq-len and
--batch.

    python3 bench/compile_time.py [--rnn-compile build/bin/rnn-compile]
"""

import argparse
import functools
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from rnnc.library import load  # noqa: E402

# (name, rnn-compile arguments)
MODELS = [
    ("lstm I=H=16 L=1 T=64 B=256", ["--preset=lstm", "--input-size=16",
                                     "--hidden-size=16", "--seq-len=64",
                                     "--batch=256"]),
    ("gru I=H=256 L=1 T=32 B=64", ["--preset=gru", "--input-size=256",
                                    "--hidden-size=256"]),
    ("lstm I=H=256 L=2 every shape", ["--preset=lstm", "--input-size=256",
                                       "--hidden-size=256", "--layers=2",
                                       "--dynamic"]),
    ("lstm I=4 H=5 L=2 every shape budget", [
        "--preset=lstm", "--input-size=4", "--hidden-size=5", "--layers=2",
        "--dynamic", "--remat=budget:100000"]),
]


def compile_seconds(compiler, arguments, out, rounds):
    """The best CPU time of `rounds` compiles into `out`."""
    best = float("inf")
    for _ in range(rounds):
        shutil.rmtree(out, ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([compiler, *arguments, "-o", out], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime +
                   after.ru_stime - before.ru_stime)
    return best


def entry_calls(directory, shape):
    """kind -> a function calling that entry point of the library in
    `directory` once, on buffers of its own (which the function keeps)."""
    lib = load(directory)
    view = lib.at(*shape) if lib.dynamic else lib
    calls = {}
    for kind in ("train", "infer"):
        arrays = []
        for arg in view.entries[kind].args:
            count = max(int(np.prod(arg.shape)), 1)
            if arg.dtype == "float32":
                arrays.append(np.random.default_rng(0).random(
                    count, dtype=np.float32) * 0.1)
            else:
                arrays.append(np.zeros(count * 8, np.uint8))
        calls[kind] = functools.partial(
            call_entry, lib.entries[kind], shape if lib.dynamic else None,
            [a.ctypes.data for a in arrays], arrays)
    return calls


def call_entry(entry, shape, pointers, arrays):
    if shape is None:
        entry.call(pointers)
    else:
        entry.call_at(shape, pointers)


def best_call_seconds(calls, rounds, count):
    """The best mean seconds per call of each function in `calls`, called
    in alternation, round by round."""
    best = [float("inf")] * len(calls)
    for _ in range(rounds):
        for i, call in enumerate(calls):
            start = time.perf_counter()
            for _ in range(count):
                call()
            best[i] = min(best[i], (time.perf_counter() - start) / count)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--rnn-compile", default=os.path.join(
        here, "..", "build", "bin", "rnn-compile"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    print(f"{'model':38} {'compile s':>9} {'with LSR':>8} {'ratio':>6} "
          f"{'train ratio':>11} {'infer ratio':>11}")
    with tempfile.TemporaryDirectory() as scratch:
        for name, arguments in MODELS:
            without = os.path.join(scratch, "without")
            with_lsr = os.path.join(scratch, "with")
            t_without = compile_seconds(args.rnn_compile, arguments, without,
                                        args.rounds)
            t_with = compile_seconds(args.rnn_compile,
                                     arguments + ["--disable-lsr=false"],
                                     with_lsr, args.rounds)
            shape = (args.seq_len, args.batch)
            ours = entry_calls(without, shape)
            theirs = entry_calls(with_lsr, shape)
            ratios = []
            for kind in ("train", "infer"):
                a, b = best_call_seconds([ours[kind], theirs[kind]],
                                         args.rounds * 2, args.calls)
                ratios.append(a / b)
            print(f"{name:38} {t_without:9.2f} {t_with:8.2f} "
                  f"{t_without / t_with:6.2f} {ratios[0]:11.3f} "
                  f"{ratios[1]:11.3f}", flush=True)


if __name__ == "__main__":
    main()
