#!/usr/bin/env python3
"""The program compiled for every sequence length and batch size
(`rnn-run --dynamic`) against the program compiled for the shape it runs
at, on the CPU: median step time of each, interleaved round by round so
that both see the same machine, and their ratio. Each round is one
rnn-run process per program (compile, then --warmup and --iters steps);
the figure of a round is rnn-run's median step.

The configurations: training steps at T = 32, B = 64, I = H = 256 with 1
and 2 layers (the second also with checkpoints every 8 steps and under a
budget of 20 MB), and a rollout step (inference at T = 1, B = 8, I = H = 64), for the LSTM and the
GRU.

Usage: bench/dynamic_vs_static.py [--rounds 5] [--iters 20] [--threads 1]
       [--rnn-run PATH] [--only NAME]   (rollout steps run 15 times --iters)
"""

import argparse
import json
import statistics

from cli import nonnegative_int, positive_int, program, run_tool

CONFIGS = [
    ("train L=1", ["--mode=train", "--seq-len=32", "--batch=64",
                   "--input-size=256", "--hidden-size=256", "--layers=1"]),
    ("train L=2", ["--mode=train", "--seq-len=32", "--batch=64",
                   "--input-size=256", "--hidden-size=256", "--layers=2"]),
    ("chunk:8 L=2", ["--mode=train", "--seq-len=32", "--batch=64",
                     "--input-size=256", "--hidden-size=256", "--layers=2",
                     "--remat=chunk:8"]),
    # A budget that replaying the gates does not fit: each call of the
    # dynamic program chooses among its 13 plans, as the static one did
    # once.
    ("budget L=2", ["--mode=train", "--seq-len=32", "--batch=64",
                    "--input-size=256", "--hidden-size=256", "--layers=2",
                    "--remat=budget:20000000"]),
    ("rollout", ["--mode=infer", "--seq-len=1", "--batch=8",
                 "--input-size=64", "--hidden-size=64", "--layers=1"]),
]


def step_ms(rnn_run, cell, flags, dynamic, args):
    # A rollout step takes microseconds: more of them for a stable median.
    iters = args.iters * (15 if "--seq-len=1" in flags else 1)
    command = [rnn_run, f"--preset={cell}", *flags, "--json",
               f"--iters={iters}", f"--warmup={args.warmup}",
               f"--blas-threads={args.threads}"]
    if dynamic:
        command.append("--dynamic")
    out = json.loads(run_tool(command))
    return out["step_ms"]["median"], out["remat_plan"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=positive_int, default=5)
    parser.add_argument("--iters", type=positive_int, default=20)
    parser.add_argument("--warmup", type=nonnegative_int, default=3)
    parser.add_argument("--threads", type=positive_int, default=1)
    parser.add_argument("--rnn-run", type=program, default="rnn-run")
    parser.add_argument("--only", default="",
                        help="the configurations whose name contains it")
    args = parser.parse_args()
    if not any(args.only in name for name, _ in CONFIGS):
        parser.error(f"--only {args.only!r} matches no configuration ("
                     + ", ".join(name for name, _ in CONFIGS) + ")")
    print(f"{'cell':5} {'config':10} {'static ms':>10} {'dynamic ms':>11} "
          f"{'dynamic/static':>15}  plan (static, dynamic)")
    for cell in ("lstm", "gru"):
        for name, flags in CONFIGS:
            if args.only not in name:
                continue
            static, dynamic, plans = [], [], set()
            for _ in range(args.rounds):
                for times, is_dynamic in ((static, False), (dynamic, True)):
                    ms, plan = step_ms(args.rnn_run, cell, flags, is_dynamic,
                                       args)
                    times.append(ms)
                    plans.add((is_dynamic, plan))
            s, d = statistics.median(static), statistics.median(dynamic)
            plan = ", ".join(p for _, p in sorted(plans))
            print(f"{cell:5} {name:10} {s:10.4f} {d:11.4f} {d / s:15.3f}  "
                  f"{plan}", flush=True)


if __name__ == "__main__":
    main()
