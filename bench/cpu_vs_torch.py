#!/usr/bin/env python3
"""CPU train step of rnnc (rnn-run) against PyTorch's nn.LSTM / nn.GRU.

What it measures
  For every configuration (cell x layers x T x B x I x H x reset probability)
  one training step, timed two ways on the same inputs:
  * ours:  `rnn-run --preset=CELL --inputs=IN.npz --json --iters=N --warmup=W`
           in a subprocess; its `step_ms.median` (forward + backward of the
           compiled program, GEMMs through OpenBLAS at --threads threads).
  * torch: torch.nn.LSTM / nn.GRU in this process, float32,
           torch.set_num_threads(--threads), the same W warmup and N measured
           steps, median.  A step is: clear the gradients (set to None), the
           forward, and torch.autograd.backward([y, h_n(, c_n)],
           [grad_y, grad_h_n(, grad_c_n)]), so it computes what rnn-run
           computes: y, h_n, c_n and the gradients of x, h0, c0 and all weights.
  Both read the same arrays, written once per configuration to a temporary
  .npz (x, is_init, h0, c0, weights, cotangents; the mask is
  Bernoulli(--reset-prob) over all [T, B], t = 0 included).

  Without resets the torch step is one call of the module: the peer.
  With resets (is_init[t, b] = 1: the state entering step t of column b is 0),
  nn.LSTM/GRU cannot reset mid-sequence, so the torch step does what TorchRL's
  LSTMModule/GRUModule do for their cuDNN-style path (recurrent_mode): split
  every batch column into segments at its resets, lay the segments side by
  side as a batch of N >= B independent sequences padded to the longest one,
  and run the module once on that batch with the initial state zero for the
  segments that start with a reset (h0/c0 of the column for a first segment
  that does not); then scatter the outputs back to [T, B, H].  One difference
  from TorchRL, for correctness: the padded batch is handed to the module as a
  PackedSequence (pack_padded_sequence, enforce_sorted=False), so h_n/c_n are
  taken at each segment's true end (TorchRL's padded run reads them after the
  padding, and the loss here has h_n/c_n terms); packing also skips the padded
  steps, so this is if anything faster than TorchRL's padded run.  The
  segmentation (numpy on is_init) and the gather/scatter are inside the timed
  step, as they are in TorchRL's forward.
  (The inputs, this step and the check are in torch_peer.py, shared with
  gpu_vs_cudnn.py.)

  Before timing, each configuration is checked once (unless --no-check):
  rnn-run --outputs and the torch step must agree on y, h_n, c_n and every
  gradient; the "maxdiff" column is the worst max|ours - torch| / max|torch|
  over those arrays (float32: about 1e-6 at the default shapes; ignoring the
  resets on one side gives about 1e-1).

  Noise: the measurements are interleaved.  Each of --rounds rounds runs, for
  every configuration, one rnn-run (W + N steps) and one torch run (W + N
  steps), alternating which goes first; the reported time of each side is the
  median over rounds of the per-round medians, so slow phases of the machine
  hit both sides.

  Also printed: PyTorch's float32 GEMM speed at --threads threads (a 1024^3
  matmul, MKL; measured in every round, median), and for each configuration the GEMM FLOPs of the step
  (rnn-run's `flops`, the same math on both sides) divided by each side's step
  time: the "implied" GFLOP/s.  Ours near the sgemm figure means the GEMMs are
  a tuned BLAS's (OpenBLAS, see the `gemm:` line), not a reference one.

How to run (from anywhere; rnn-run defaults to build/bin/rnn-run of the repo)
  python3 bench/cpu_vs_torch.py                        # LSTM + GRU, T32 B64 I=H=256, L1
  python3 bench/cpu_vs_torch.py --reset-prob=0,0.05 --layers=1,2
  python3 bench/cpu_vs_torch.py --cells=lstm --seq-len=64 --batch=32 --json
  Options taking lists take comma-separated values; configurations are their
  product.  --json prints one JSON object per configuration (no table).

How to read the ratio
  ratio = ours_ms / torch_ms: < 1 means rnn-run's step is faster than
  PyTorch's, > 1 slower.  With --reset-prob=0 the comparison is against plain
  nn.LSTM/nn.GRU; with resets it is against the split-and-pad workaround
  above.  peak_bytes is rnn-run's peak_bytes.measured (everything the step
  allocates, results and gradients included) and saved_bytes what it keeps
  from forward for backward; PyTorch's memory is not measured here.
"""

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import torch

from cli import nonnegative_int, positive_int, probabilities
from torch_peer import (PeerError, TorchStep, cell_list, check, int_list,
                        launch, make_inputs)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------
# Ours: rnn-run
# --------------------------------------------------------------------------

def run_ours(args, cfg, npz, iters, warmup, outputs=None):
    cmd = [args.rnn_run, f"--preset={cfg['cell']}", f"--inputs={npz}",
           "--json", f"--iters={iters}", f"--warmup={warmup}",
           f"--blas-threads={args.threads}"]
    if outputs:
        cmd.append(f"--outputs={outputs}")
    try:
        r = launch(cmd)
    except PeerError as e:
        sys.exit(f"cpu_vs_torch: {e}")
    if r.returncode != 0:
        sys.exit(f"cpu_vs_torch: {' '.join(cmd)} failed "
                 f"({r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout)


# --------------------------------------------------------------------------
# PyTorch (the step itself is torch_peer.TorchStep)
# --------------------------------------------------------------------------

def sgemm_gflops(n=1024, reps=5):
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        a @ b
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        ts.append(time.perf_counter() - t0)
    return 2.0 * n ** 3 / statistics.median(ts) / 1e9


# --------------------------------------------------------------------------

def fmt_bytes(n):
    if n is None:
        return "-"
    if n >= 2**20:
        return f"{n / 2**20:.1f}MiB"
    return f"{n / 2**10:.1f}KiB"


def main():
    ap = argparse.ArgumentParser(
        description="rnn-run vs PyTorch nn.LSTM/GRU train step on the CPU "
                    "(see the header of this file)")
    ap.add_argument("--cells", type=cell_list, default=["lstm", "gru"])
    ap.add_argument("--layers", type=int_list, default=[1])
    ap.add_argument("--seq-len", type=int_list, default=[32])
    ap.add_argument("--batch", type=int_list, default=[64])
    ap.add_argument("--input-size", type=int_list, default=[256])
    ap.add_argument("--hidden-size", type=int_list, default=[256])
    ap.add_argument("--reset-prob", type=probabilities, default=[0.0],
                    help="probability of is_init[t,b]; comma list")
    ap.add_argument("--iters", type=positive_int, default=20,
                    help="measured steps per run (both sides)")
    ap.add_argument("--warmup", type=nonnegative_int, default=5,
                    help="unmeasured steps per run (both sides)")
    ap.add_argument("--rounds", type=positive_int, default=5,
                    help="interleaved rounds; each side reports the median "
                         "of its per-round medians")
    ap.add_argument("--threads", type=positive_int, default=1,
                    help="BLAS threads of rnn-run and torch.set_num_threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rnn-run", default=os.path.join(REPO, "build", "bin",
                                                      "rnn-run"))
    ap.add_argument("--no-check", action="store_true",
                    help="skip the one-time output/gradient comparison")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object per configuration")
    args = ap.parse_args()
    if not os.access(args.rnn_run, os.X_OK):
        ap.error(f"rnn-run not found at {args.rnn_run} (build it: "
                 "ninja -C build rnn-run, or pass --rnn-run)")

    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    log = (lambda *a: print(*a, file=sys.stderr, flush=True)) if args.json \
        else (lambda *a: print(*a, flush=True))

    cfgs = []
    for i, (cell, L, T, B, I, H, p) in enumerate(itertools.product(
            args.cells, args.layers, args.seq_len, args.batch,
            args.input_size, args.hidden_size, args.reset_prob)):
        cfgs.append(dict(cell=cell, L=L, T=T, B=B, I=I, H=H, p=p,
                         name=f"{cell} L{L} T{T} B{B} I{I} H{H} p={p:g}",
                         seed=args.seed + i))

    mtime = os.stat(args.rnn_run).st_mtime
    sgemm = []
    with tempfile.TemporaryDirectory(prefix="cpu_vs_torch.") as tmp:
        for i, c in enumerate(cfgs):
            d = make_inputs(c["cell"], c["L"], c["T"], c["B"], c["I"], c["H"],
                            c["p"], c["seed"])
            c["npz"] = os.path.join(tmp, f"in_{i}.npz")
            np.savez(c["npz"], **d)
            c["torch"] = TorchStep(c["cell"], d)
            c["resets"] = int(d["is_init"].sum())
            c["ours_ms"], c["torch_ms"] = [], []
            if not args.no_check:
                out = os.path.join(tmp, f"out_{i}.npz")
                run_ours(args, c, c["npz"], 1, 0, outputs=out)
                try:
                    c["maxdiff"], c["maxdiff_at"] = check(
                        out, c["torch"].results())
                except PeerError as e:
                    sys.exit(f"cpu_vs_torch: {e}")
        for r in range(args.rounds):
            log(f"# round {r + 1}/{args.rounds}")
            sgemm.append(sgemm_gflops())
            for c in cfgs:
                order = ("ours", "torch") if r % 2 == 0 else ("torch", "ours")
                for side in order:
                    if side == "ours":
                        j = run_ours(args, c, c["npz"], args.iters,
                                     args.warmup)
                        c["ours_ms"].append(j["step_ms"]["median"])
                        c["json"] = j
                    else:
                        c["torch_ms"].append(
                            c["torch"].time(args.iters, args.warmup))

    if os.stat(args.rnn_run).st_mtime != mtime:
        log(f"# warning: {args.rnn_run} was rebuilt during this run; "
            "its times may mix two builds")
    gflops = statistics.median(sgemm)
    rows = []
    for c in cfgs:
        j = c["json"]
        ours = statistics.median(c["ours_ms"])
        ref = statistics.median(c["torch_ms"])
        rows.append({
            "config": c["name"], "cell": c["cell"],
            "shape": {"T": c["T"], "B": c["B"], "I": c["I"], "H": c["H"],
                      "L": c["L"]},
            "reset_prob": c["p"], "resets": c["resets"],
            "ours_ms": ours, "torch_ms": ref, "ratio": ours / ref,
            "ours_ms_rounds": c["ours_ms"], "torch_ms_rounds": c["torch_ms"],
            "peak_bytes_measured": j["peak_bytes"]["measured"],
            "saved_bytes": j["saved_bytes"], "flops": j["flops"],
            "ours_gflops": j["flops"] / ours / 1e6,
            "torch_gflops": j["flops"] / ref / 1e6,
            "torch_sgemm_gflops": gflops,
            "maxdiff": c.get("maxdiff"), "maxdiff_at": c.get("maxdiff_at"),
            "torch_method": "split+pack" if c["resets"] else "plain",
            "threads": args.threads, "iters": args.iters,
            "warmup": args.warmup, "rounds": args.rounds,
            "gemm": j.get("gemm"), "torch_version": torch.__version__,
        })

    if args.json:
        for row in rows:
            print(json.dumps(row))
        return

    print(f"# {args.rounds} interleaved rounds x ({args.warmup} warmup + "
          f"{args.iters} measured) steps per side; {args.threads} thread(s); "
          f"times: median of per-round medians")
    print(f"# torch {torch.__version__}: sgemm 1024^3 at {args.threads} "
          f"thread(s) = {gflops:.1f} GFLOP/s")
    print(f"# ours gemm: {rows[0]['gemm']}")
    hdr = (f"{'config':34s} {'ours ms':>8s} {'torch ms':>9s} {'ratio':>6s} "
           f"{'peak':>9s} {'saved':>9s} {'ourGF/s':>8s} {'trchGF/s':>8s} "
           f"{'torch':>10s} {'maxdiff':>8s}")
    print(hdr)
    print("-" * len(hdr))
    for row in rows:
        md = "-" if row["maxdiff"] is None else f"{row['maxdiff']:.1e}"
        print(f"{row['config']:34s} {row['ours_ms']:8.2f} "
              f"{row['torch_ms']:9.2f} {row['ratio']:6.2f} "
              f"{fmt_bytes(row['peak_bytes_measured']):>9s} "
              f"{fmt_bytes(row['saved_bytes']):>9s} "
              f"{row['ours_gflops']:8.1f} {row['torch_gflops']:8.1f} "
              f"{row['torch_method']:>10s} {md:>8s}")
    print("# ratio = ours/torch (< 1: rnn-run faster); peak = rnn-run "
          "peak_bytes.measured, saved = saved_bytes; GF/s = GEMM flops / "
          "step time")


if __name__ == "__main__":
    main()
