#!/usr/bin/env python3
"""GEMM calls per step of the compiled functions, per remat policy and
target, counted in the IR by rnn-opt's -test-rnn-gemm-calls (calls to the
runtime's sgemm, weighted by loop trip counts) after the train pipeline's
to-buffers stage (rnn-train-to-buffers-pipeline). Inference is the model
function the same module compiles. No GPU is needed for the cuda rows.

    python3 bench/gemm_calls.py [--seq-len 32] [--batch 64] [--size 256]
        [--cuda-batch 4096] [--policies none,gates,chunk:8]
"""

import argparse
import os
import re
import sys

from cli import attempt, fail, last_line, name_list, positive_int, run_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def count(model, options):
    """GEMM calls per function, and the GEMM block rnn-autodiff chose."""
    # The IR printed after rnn-autodiff goes to stderr: on failure, its
    # last line is rnn-opt's error.
    r = attempt([os.path.join(BIN, "rnn-opt"), "-",
                 f"--rnn-train-to-buffers-pipeline={options}",
                 "--mlir-print-ir-after=rnn-autodiff",
                 "--test-rnn-gemm-calls", "-o", "/dev/null"], input=model)
    if r.returncode != 0:
        fail(last_line(r.stderr) or
             f"rnn-opt exited with status {r.returncode}")
    counts = {m.group(1): int(m.group(2))
              for m in re.finditer(r"gemm calls of @(\w+): (\d+)", r.stdout)}
    block = re.search(r"block\((\d+)\)", r.stderr)
    if block is None:
        fail("rnn-opt printed no GEMM block after rnn-autodiff")
    return counts, int(block.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seq-len", type=positive_int, default=32)
    ap.add_argument("--batch", type=positive_int, default=64)
    ap.add_argument("--cuda-batch", type=positive_int, default=4096)
    ap.add_argument("--size", type=positive_int, default=256)
    ap.add_argument("--policies", type=name_list(),
                    default="none,gates,chunk:8")
    args = ap.parse_args()
    policies = args.policies
    print(f"# T={args.seq_len} I=H={args.size}; B={args.batch} (cpu), "
          f"B={args.cuda_batch} (cuda)")
    print(f"{'target':6} {'cell':4} {'L':>2} {'block':>5} {'infer':>6} " +
          " ".join(f"{p:>8}" for p in policies))
    for target, batch in (("cpu", args.batch), ("cuda", args.cuda_batch)):
        for cell in ("lstm", "gru"):
            for layers in (1, 2):
                model = run_tool(
                    [os.path.join(BIN, "rnn-run"), f"--preset={cell}",
                     f"--seq-len={args.seq_len}", f"--batch={batch}",
                     f"--input-size={args.size}",
                     f"--hidden-size={args.size}", f"--layers={layers}",
                     f"--target={target}", "--emit=mlir"])
                cells = []
                infer = block = None
                for policy in policies:
                    counts, block = count(model,
                                          f"target={target} remat={policy}")
                    infer = counts[cell]
                    cells.append(counts[cell + "_grad"])
                print(f"{target:6} {cell:4} {layers:>2} {block:>5} "
                      f"{infer:>6} " + " ".join(f"{c:>8}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
