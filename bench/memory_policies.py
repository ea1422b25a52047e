#!/usr/bin/env python3
"""Memory and time of each remat policy, in the spirit of TorchRL's
recompute-memory benchmark.

For LSTM and GRU, 1 and 2 layers (default T=32, B=256, I=H=256, CPU), runs
`rnn-run --json` once per policy (`none`, `gates`, `chunk:K` for K = 1, 2,
4, ..., T, and `budget:` set to half of `none`'s measured peak, or to the
smallest budget some plan fits where no plan fits that half, as at small
shapes: rnn-run names it when it refuses the half) and once in inference
(which takes no remat policy), and prints per run: saved_bytes, predicted
and measured peak,
step time, and the ratios of saved bytes, peak and step time to `none` of
the same model. The runs of one model are interleaved over --rounds rounds
and the step time is the median of the per-round medians, so that machine
noise hits every policy alike. Predicted == measured is checked on every run
(a mismatch is printed as MISMATCH and makes the script exit 1). For the
budget run it also prints the plan chosen, whether it fits (measured <=
budget) and the fastest fixed policy that fits.

    python3 bench/memory_policies.py [--cells lstm,gru] [--layers 1,2]
        [--seq-len 32] [--batch 256] [--size 256] [--iters 5] [--rounds 3]
"""

import argparse
import json
import os
import re
import statistics
import sys

from cli import (CELLS, attempt, fail, last_line, name_list, positive_int,
                 positive_ints, probability, program, run_tool)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def runs_for(seq_len, budget):
    chunks, k = [], 1
    while k < seq_len:
        chunks.append(k)
        k *= 2
    chunks.append(seq_len)
    return ([("train", "none"), ("train", "gates")] +
            [("train", f"chunk:{k}") for k in chunks] +
            [("train", f"budget:{budget}"), ("infer", None)])


def command(binary, cell, layers, args, mode, remat):
    """The rnn-run command of one run; inference takes no remat policy."""
    cmd = [binary, f"--preset={cell}", f"--layers={layers}",
           f"--seq-len={args.seq_len}", f"--batch={args.batch}",
           f"--input-size={args.size}", f"--hidden-size={args.size}",
           f"--mode={mode}", f"--iters={args.iters}", "--warmup=1",
           f"--reset-prob={args.reset_prob}", "--json"]
    if remat is not None:
        cmd.append(f"--remat={remat}")
    return cmd


def rnn_run(binary, cell, layers, args, mode, remat):
    return json.loads(run_tool(command(binary, cell, layers, args, mode,
                                       remat)))


def feasible_budget(binary, cell, layers, args, half):
    """(budget, how it was chosen): `half` where a plan fits it, else the
    smallest feasible budget rnn-run names when it refuses `half`."""
    done = attempt(command(binary, cell, layers, args, "train",
                           f"budget:{half}"))
    if done.returncode == 0:
        return half, "half of none's peak"
    m = re.search(r"smallest feasible budget is (\d+) bytes", done.stderr)
    if m is None:
        fail(last_line(done.stderr) or
             f"rnn-run exited with status {done.returncode}")
    return int(m.group(1)), (f"the smallest feasible budget: no plan fits "
                             f"half of none's peak, {mib(half).strip()} MiB")


def mib(n):
    return f"{n / 2**20:8.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cells", type=name_list(CELLS), default="lstm,gru")
    ap.add_argument("--layers", type=positive_ints, default="1,2")
    ap.add_argument("--seq-len", type=positive_int, default=32)
    ap.add_argument("--batch", type=positive_int, default=256)
    ap.add_argument("--size", type=positive_int, default=256)
    ap.add_argument("--reset-prob", type=probability, default=0.05)
    ap.add_argument("--iters", type=positive_int, default=5)
    ap.add_argument("--rounds", type=positive_int, default=3)
    ap.add_argument("--rnn-run", type=program,
                    default=os.path.join(ROOT, "build", "bin", "rnn-run"))
    args = ap.parse_args()

    ok = True
    print(f"# T={args.seq_len} B={args.batch} I=H={args.size} "
          f"reset-prob={args.reset_prob}, CPU; MiB; ratios to train/none")
    print(f"{'model':10} {'run':19} {'saved':>8} {'predicted':>9} "
          f"{'measured':>8} {'step ms':>8}  {'saved/':>6} {'peak/':>6} "
          f"{'time/':>6}")
    for cell in args.cells:
        for layers in args.layers:
            probe = rnn_run(args.rnn_run, cell, layers, args, "train", "none")
            budget, chosen_how = feasible_budget(
                args.rnn_run, cell, layers, args,
                probe["peak_bytes"]["measured"] // 2)
            RUNS = runs_for(args.seq_len, budget)
            steps = {run: [] for run in RUNS}
            last = {}
            for _ in range(args.rounds):
                for mode, remat in RUNS:
                    r = rnn_run(args.rnn_run, cell, layers, args, mode, remat)
                    steps[(mode, remat)].append(r["step_ms"]["median"])
                    last[(mode, remat)] = r
            base = last[("train", "none")]
            base_ms = statistics.median(steps[("train", "none")])
            for mode, remat in RUNS:
                r = last[(mode, remat)]
                ms = statistics.median(steps[(mode, remat)])
                peak = r["peak_bytes"]
                flag = ""
                if peak["predicted"] != peak["measured"]:
                    flag, ok = "  MISMATCH", False
                saved_ratio = (r["saved_bytes"] / base["saved_bytes"]
                               if base["saved_bytes"] else 0.0)
                label = mode if remat is None else f"{mode}/{remat}"
                print(f"{cell} L={layers:<4} {label:19} "
                      f"{mib(r['saved_bytes'])} {mib(peak['predicted']):>9} "
                      f"{mib(peak['measured'])} {ms:8.2f}  "
                      f"{saved_ratio:6.3f} "
                      f"{peak['measured'] / base['peak_bytes']['measured']:6.3f} "
                      f"{ms / base_ms:6.3f}{flag}")
            chosen = last[("train", f"budget:{budget}")]
            fits = {remat: statistics.median(steps[(mode, remat)])
                    for mode, remat in RUNS
                    if mode == "train" and not remat.startswith("budget")
                    and last[(mode, remat)]["peak_bytes"]["measured"] <= budget}
            fastest = min(fits, key=fits.get) if fits else "none fits"
            chosen_ms = statistics.median(steps[("train", f"budget:{budget}")])
            print(f"{cell} L={layers:<4} budget {mib(budget).strip()} MiB "
                  f"({chosen_how}): "
                  f"chose {chosen['remat_plan']}, measured "
                  f"{mib(chosen['peak_bytes']['measured']).strip()} MiB "
                  f"({'fits' if chosen['peak_bytes']['measured'] <= budget else 'DOES NOT FIT'}), "
                  f"{chosen_ms:.2f} ms; fastest fixed policy that fits: "
                  f"{fastest}" + (f" {fits[fastest]:.2f} ms" if fits else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
