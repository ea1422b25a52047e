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
import sys

from variants import (add_preset_args, bytes_column, heading, interleaved,
                      peak_mismatch)

FORMS = ("zero", "step", "column")
POLICIES = ("none", "chunk:8")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_preset_args(ap, cells="lstm,gru")
    args = ap.parse_args()

    failed = False
    variants = {f: [f"--reset-to={f}"] for f in FORMS}
    for cell in args.cells:
        times, last = interleaved(args, cell, variants, POLICIES)
        print(heading(args, cell, next(iter(last.values()))))
        print(f"  {'reset-to':8s} {'remat':8s} {'step ms':>9s} "
              f"{'vs zero':>8s} {'saved bytes':>12s} {'peak bytes':>12s}")
        for p in POLICIES:
            base = times[("zero", p)]
            for f in FORMS:
                r = last[(f, p)]
                ms = times[(f, p)]
                check = ""
                if peak_mismatch(r):
                    check = " MISMATCH"
                    failed = True
                print(f"  {f:8s} {p:8s} {ms:9.3f} {ms / base:8.3f} "
                      f"{bytes_column(r['saved_bytes'])} "
                      f"{r['peak_bytes']['measured']:12,d}{check}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
