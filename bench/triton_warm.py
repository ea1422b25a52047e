#!/usr/bin/env python3
"""Compiles and autotunes TorchRL's triton kernels (the peer of
gpu_vs_cudnn.py) for one cell and mode, ahead of the benchmark, and says
how long that took.

TorchRL 0.14.1's recurrent_backend="triton" autotunes its forward and
backward kernels on the first call of each (T, H, matmul precision,
save-gates) key, over up to 16 configurations each, and every
configuration is a Triton compile of a kernel that holds the whole time
loop: at H=256 the first call of one mode took more than 150 s on an H200
(bench/results/gpu-h200-2026-11-28-call1.log: the benchmark, with the
peer on, printed no row in 233 s at B=4096 nor in 151 s at B=64). The
compiled kernels go to Triton's on-disk cache, so a benchmark run
afterwards pays only the autotuner's timing runs. The batch size is not
in the autotuner's key: a small batch warms the cache for every batch.
Run one process per cell and mode, side by side (the compiles are CPU
work; gpu/call2.sh does):

  bench/triton_warm.py --cell=lstm --mode=tf32 [--seq-len=32 --batch=64
      --input-size=256 --hidden-size=256 --layers=1]

Prints one line: the cell, the mode and the seconds the first train step
took (compiles and autotuning), then those of a second step. Exit 0 on
success; 1 with the error otherwise; 2 where the peer cannot run here.
"""

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchrl_peer  # noqa: E402
from cli import positive_int  # noqa: E402
from torch_peer import make_inputs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cell", choices=("lstm", "gru"), required=True)
    ap.add_argument("--mode", choices=sorted(torchrl_peer.MODES),
                    required=True)
    ap.add_argument("--seq-len", type=positive_int, default=32)
    ap.add_argument("--batch", type=positive_int, default=64)
    ap.add_argument("--input-size", type=positive_int, default=256)
    ap.add_argument("--hidden-size", type=positive_int, default=256)
    ap.add_argument("--layers", type=positive_int, default=1)
    args = ap.parse_args()
    ok, what = torchrl_peer.available("triton")
    if not ok:
        print(f"triton_warm.py: the peer cannot run here: {what}",
              file=sys.stderr)
        return 2
    d = make_inputs(args.cell, args.layers, args.seq_len, args.batch,
                    args.input_size, args.hidden_size, 0.05, 0)
    step = torchrl_peer.TorchRLStep(args.cell, d, "cuda", "triton")
    step.configure(*torchrl_peer.MODES[args.mode])
    times = []
    try:
        for _ in range(2):
            started = time.monotonic()
            step.step()
            torch.cuda.synchronize()
            times.append(time.monotonic() - started)
    except Exception as e:  # a compile or autotuning failure: say which
        print(f"triton_warm.py: {args.cell} {args.mode}: "
              f"{type(e).__name__}: {str(e).strip()[:300]}", file=sys.stderr)
        return 1
    print(f"{args.cell} {args.mode}: first step {times[0]:.1f} s (compiles "
          f"and autotuning), second {times[1] * 1e3:.2f} ms; {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
