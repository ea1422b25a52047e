"""rnn-compile's time, and the speed of what it compiles, as it compiles
by default (in parts on every core, without LLVM's loop strength
reduction: emitObjects in tools/rnn-compile/Link.cpp and
skipLoopStrengthReduction in lib/Driver/Compile.cpp) and as its peers:
with loop strength reduction (`--disable-lsr=false`), in one part
(RNNC_COMPILE_THREADS=1), and neither (both).

For each model and way: the compile's wall time and CPU time (user +
system of the rnn-compile process), each the better of --rounds
compiles; then the train and infer entry points of the default library
and the peer's called in alternation on the same inputs (one BLAS
thread), the best of 2 * --rounds rounds of --calls calls. Ratios are
default/peer; a library of every shape runs at --seq-len and --batch.

    python3 bench/compile_time.py [--rnn-compile build/bin/rnn-compile]
"""

import argparse
import functools
import os
import resource
import shutil
import sys
import tempfile
import time

import numpy as np

from cli import positive_int, program, run_tool

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

# (name, extra arguments, environment) of each peer.
PEERS = [
    ("with LSR", ["--disable-lsr=false"], {}),
    ("one part", [], {"RNNC_COMPILE_THREADS": "1"}),
    ("neither", ["--disable-lsr=false"], {"RNNC_COMPILE_THREADS": "1"}),
]


def compile_seconds(compiler, arguments, environment, out, rounds):
    """The best wall and CPU seconds of `rounds` compiles into `out`."""
    wall = cpu = float("inf")
    env = dict(os.environ, **environment)
    for _ in range(rounds):
        shutil.rmtree(out, ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        run_tool([compiler, *arguments, "-o", out], env=env)
        wall = min(wall, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, after.ru_utime - before.ru_utime +
                  after.ru_stime - before.ru_stime)
    return wall, cpu


def call_entry(entry, shape, pointers, arrays):
    """One call of `entry` (at `shape` for a library of every shape) on
    `pointers`, the data of `arrays`."""
    if shape is None:
        entry.call(pointers)
    else:
        entry.call_at(shape, pointers)


def entry_calls(directory, shape):
    """kind -> a function calling that entry point of the library in
    `directory` once, on buffers of its own (which the function keeps)."""
    lib = load(directory)
    view = lib.at(*shape) if lib.dynamic else lib
    calls = {}
    for kind in ("train", "infer"):
        rng = np.random.default_rng(0)
        arrays = []
        for arg in view.entries[kind].args:
            count = max(int(np.prod(arg.shape)), 1)
            if arg.dtype == "float32":
                arrays.append(rng.random(count, dtype=np.float32) - 0.5)
            else:
                arrays.append(np.zeros(count * 8, np.uint8))
        calls[kind] = functools.partial(
            call_entry, lib.entries[kind], shape if lib.dynamic else None,
            [a.ctypes.data for a in arrays], arrays)
    return calls


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
    parser.add_argument("--rnn-compile", type=program, default=os.path.join(
        here, "..", "build", "bin", "rnn-compile"))
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--calls", type=positive_int, default=10)
    parser.add_argument("--seq-len", type=positive_int, default=32)
    parser.add_argument("--batch", type=positive_int, default=64)
    args = parser.parse_args()
    shape = (args.seq_len, args.batch)
    print(f"{os.cpu_count()} cores; ratios default/peer")
    print(f"{'model':36} {'peer':9} {'wall s':>7} {'peer':>7} {'ratio':>6} "
          f"{'cpu s':>7} {'peer':>7} {'ratio':>6} {'train':>6} "
          f"{'infer':>6}")
    with tempfile.TemporaryDirectory() as scratch:
        for name, arguments in MODELS:
            ours_dir = os.path.join(scratch, "default")
            wall, cpu = compile_seconds(args.rnn_compile, arguments, {},
                                        ours_dir, args.rounds)
            ours = entry_calls(ours_dir, shape)
            for peer, extra, environment in PEERS:
                peer_dir = os.path.join(scratch, peer.replace(" ", "-"))
                peer_wall, peer_cpu = compile_seconds(
                    args.rnn_compile, arguments + extra, environment,
                    peer_dir, args.rounds)
                theirs = entry_calls(peer_dir, shape)
                steps = []
                for kind in ("train", "infer"):
                    a, b = best_call_seconds([ours[kind], theirs[kind]],
                                             args.rounds * 2, args.calls)
                    steps.append(a / b)
                print(f"{name:36} {peer:9} {wall:7.2f} {peer_wall:7.2f} "
                      f"{wall / peer_wall:6.2f} {cpu:7.2f} {peer_cpu:7.2f} "
                      f"{cpu / peer_cpu:6.2f} {steps[0]:6.3f} "
                      f"{steps[1]:6.3f}", flush=True)


if __name__ == "__main__":
    main()
