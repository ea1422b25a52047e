"""rnn-compile's time with every entry point (infer, train, fwd, bwd: its
default) and with those rnnc.torch and rnnc.jax call (--entries=infer,
fwd,bwd: compile_model's default), which leaves out the fused training
function.

For each model: the wall time and CPU time (user + system of the
rnn-compile process) of each way, the better of --rounds compiles run in
alternation, and their ratio (infer,fwd,bwd / all).

    python3 bench/compile_entries.py [--rnn-compile build/bin/rnn-compile]
"""

import argparse
import os
import resource
import shutil
import tempfile
import time

from cli import positive_int, program, run_tool

# (name, rnn-compile arguments)
MODELS = [
    ("lstm L=2 I=H=256 T=32 B=64", ["--preset=lstm", "--layers=2",
                                    "--seq-len=32", "--batch=64"]),
    ("lstm L=2 I=H=256 every shape", ["--preset=lstm", "--layers=2",
                                      "--dynamic"]),
    ("lstm L=2 I=H=256 every shape chunk:2", ["--preset=lstm", "--layers=2",
                                              "--dynamic", "--remat=chunk:2"]),
    ("gru L=2 I=H=256 every shape bf16", ["--preset=gru", "--layers=2",
                                          "--dynamic", "--storage=bf16"]),
    ("lstm L=2 I=H=64 every shape budget", ["--preset=lstm", "--layers=2",
                                            "--dynamic", "--input-size=64",
                                            "--hidden-size=64",
                                            "--remat=budget:400000"]),
]
WAYS = [("all", []), ("infer,fwd,bwd", ["--entries=infer,fwd,bwd"])]


def compile_once(compiler, args, out):
    """(wall s, cpu s) of one compile into `out`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run_tool([compiler, *args, "-o", out])
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + \
        (after.ru_stime - before.ru_stime)
    shutil.rmtree(out)
    return wall, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rnn-compile", type=program, default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin",
        "rnn-compile"))
    parser.add_argument("--rounds", type=positive_int, default=2)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="rnnc-compile-entries-")
    print(f"{'model':<38} {'entries':<14} {'wall s':>7} {'cpu s':>7} "
          f"{'wall ratio':>10} {'cpu ratio':>9}")
    try:
        for name, model in MODELS:
            best = {way: (float("inf"), float("inf")) for way, _ in WAYS}
            for _ in range(args.rounds):
                for way, extra in WAYS:
                    wall, cpu = compile_once(args.rnn_compile, model + extra,
                                             os.path.join(work, "lib"))
                    best[way] = (min(best[way][0], wall),
                                 min(best[way][1], cpu))
            base = best["all"]
            for way, _ in WAYS:
                wall, cpu = best[way]
                print(f"{name:<38} {way:<14} {wall:7.2f} {cpu:7.2f} "
                      f"{wall / base[0]:10.2f} {cpu / base[1]:9.2f}",
                      flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
