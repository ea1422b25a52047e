#!/usr/bin/env python3
"""What resets that enter given states cost against resets to zero.

For each cell (default LSTM and GRU, T=32, B=64, I=H=256, 1 layer, 5%
resets, CPU), runs `rnn-run --json` in train mode with `--reset-to=zero`,
`step` ([T, B, H] reset states per state) and `column` ([B, H]), under
remat `none` and `chunk:8`, and prints per run the median step time,
saved_bytes and the measured peak, with the step time relative to `zero`
under the same policy. The runs are interleaved over --rounds rounds and
the step time is the median of the per-round medians, so that machine
noise hits every form alike. Predicted == measured peak is checked on
every run (MISMATCH, exit 1).

    python3 bench/reset_states.py [--cells lstm,gru] [--seq-len 32]
        [--batch 64] [--size 256] [--layers 1] [--reset-prob 0.05]
        [--iters 20] [--rounds 3] [--openblas-coretype SkylakeX]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMS = ("zero", "step", "column")
POLICIES = ("none", "chunk:8")


def rnn_run(args, cell, form, remat):
    cmd = [args.rnn_run, f"--preset={cell}", f"--layers={args.layers}",
           f"--seq-len={args.seq_len}", f"--batch={args.batch}",
           f"--input-size={args.size}", f"--hidden-size={args.size}",
           f"--reset-prob={args.reset_prob}", f"--reset-to={form}",
           f"--remat={remat}", f"--iters={args.iters}", "--warmup=2",
           "--json"]
    env = dict(os.environ)
    if args.openblas_coretype:
        env["OPENBLAS_CORETYPE"] = args.openblas_coretype
    return json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                     text=True, env=env).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cells", default="lstm,gru")
    ap.add_argument("--seq-len", type=int, default=32)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--reset-prob", type=float, default=0.05)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--openblas-coretype", default="",
                    help="OPENBLAS_CORETYPE for the runs (e.g. SkylakeX)")
    ap.add_argument("--rnn-run", default=os.path.join(ROOT, "build", "bin",
                                                      "rnn-run"))
    args = ap.parse_args()

    failed = False
    for cell in args.cells.split(","):
        times = {(f, p): [] for f in FORMS for p in POLICIES}
        last = {}
        for _ in range(args.rounds):
            for p in POLICIES:
                for f in FORMS:
                    r = rnn_run(args, cell, f, p)
                    times[(f, p)].append(r["step_ms"]["median"])
                    last[(f, p)] = r
        first = next(iter(last.values()))
        print(f"{cell} T={args.seq_len} B={args.batch} I=H={args.size} "
              f"L={args.layers} resets={args.reset_prob:g}: {first['gemm']}")
        print(f"  {'reset-to':8s} {'remat':8s} {'step ms':>9s} "
              f"{'vs zero':>8s} {'saved bytes':>12s} {'peak bytes':>12s}")
        for p in POLICIES:
            base = statistics.median(times[("zero", p)])
            for f in FORMS:
                r = last[(f, p)]
                ms = statistics.median(times[(f, p)])
                peak = r["peak_bytes"]
                check = ""
                if peak["predicted"] != peak["measured"]:
                    check = " MISMATCH"
                    failed = True
                print(f"  {f:8s} {p:8s} {ms:9.3f} {ms / base:8.3f} "
                      f"{r['saved_bytes']:12,d} {peak['measured']:12,d}"
                      f"{check}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
