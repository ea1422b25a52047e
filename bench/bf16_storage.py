#!/usr/bin/env python3
"""What bf16 storage saves and costs against f32, per cell and remat policy.

Memory and time: for each cell (default LSTM, GRU and MGU; T=32, B=64,
I=H=256, 1 layer, 5% resets, CPU) and remat policy (none, gates,
chunk:8), runs `rnn-run --json` in train mode with f32 storage and with
`--storage=bf16`, and prints saved_bytes, the measured peak (predicted ==
measured is checked: MISMATCH, exit 1) and the step time of bf16 relative
to f32 under the same policy. The runs are interleaved over --rounds
rounds and the time is the median of the per-round medians.

Error: for each cell, runs the float64 reference case `<cell>_l2_random`
of test/Integration/data (T=11 or 9, B=6, 2 layers, PyTorch float64) with
both storage types and prints the largest |out - ref| / (1 + |ref|) over
the outputs (y and the final states) and over the gradients.

    python3 bench/bf16_storage.py [--cells lstm,gru,mgu] [--seq-len 32]
        [--batch 64] [--size 256] [--layers 1] [--reset-prob 0.05]
        [--iters 20] [--rounds 3] [--openblas-coretype SkylakeX]
        [--target cpu|cuda]
"""

import argparse
import os
import re
import sys
import tempfile

from cli import attempt, fail, last_line
from variants import (ROOT, add_preset_args, bytes_column, heading,
                      interleaved, peak_mismatch, run)

DATA = os.path.join(ROOT, "test", "Integration", "data")
STORAGE = ("f32", "bf16")
POLICIES = ("none", "gates", "chunk:8")


def reference_errors(args, cell, storage, tmp):
    """Largest scaled error vs the float64 reference: (outputs, gradients)."""
    case = os.path.join(DATA, f"{cell}_l2_random")
    out = os.path.join(tmp, f"{cell}.{storage}.npz")
    run(args, [args.rnn_run, f"--preset={cell}", f"--storage={storage}",
               f"--inputs={case}.in.npz", f"--outputs={out}", "--iters=1",
               "--warmup=0", f"--target={args.target}"])
    compare = os.path.join(os.path.dirname(args.rnn_run), "rnn-npz-compare")
    # Its exit status says whether the tolerance holds; the errors are in
    # its output either way.
    done = attempt([compare, out, f"{case}.ref.npz", "--rtol=1"])
    outputs, grads, found = 0.0, 0.0, False
    for line in done.stdout.splitlines():
        m = re.match(r"(\S+)\s.*max_scaled_err=(\S+)", line)
        if not m:
            continue
        found = True
        err = float(m.group(2))
        if m.group(1).startswith("grad_"):
            grads = max(grads, err)
        else:
            outputs = max(outputs, err)
    if not found:
        fail(last_line(done.stderr) or f"{compare} printed no errors")
    return outputs, grads


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_preset_args(ap, cells="lstm,gru,mgu")
    args = ap.parse_args()

    failed = False
    variants = {s: [f"--storage={s}"] for s in STORAGE}
    with tempfile.TemporaryDirectory() as tmp:
        for cell in args.cells:
            times, last = interleaved(args, cell, variants, POLICIES)
            print(heading(args, cell, next(iter(last.values()))))
            print(f"  {'remat':8s} {'storage':7s} {'step ms':>9s} "
                  f"{'vs f32':>7s} {'saved bytes':>12s} {'vs f32':>7s} "
                  f"{'peak bytes':>12s}")
            for p in POLICIES:
                base = times[("f32", p)]
                base_saved = last[("f32", p)]["saved_bytes"]
                for s in STORAGE:
                    r = last[(s, p)]
                    peak = r["peak_bytes"]
                    if peak_mismatch(r):
                        failed = True
                        print(f"  MISMATCH {cell} {p} {s}: predicted "
                              f"{peak['predicted']} measured "
                              f"{peak['measured']}")
                    saved = r["saved_bytes"]
                    ratio = f"{saved / base_saved:7.3f}" if base_saved \
                        else f"{'-':>7s}"
                    ms = times[(s, p)]
                    print(f"  {p:8s} {s:7s} {ms:9.3f} {ms / base:7.3f} "
                          f"{bytes_column(saved)} {ratio} "
                          f"{peak['measured']:12,d}")
            print(f"  error vs the float64 reference ({cell}_l2_random), "
                  "max |out - ref| / (1 + |ref|):")
            for s in STORAGE:
                outputs, grads = reference_errors(args, cell, s, tmp)
                print(f"    {s:5s} outputs {outputs:.2e}  gradients "
                      f"{grads:.2e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
