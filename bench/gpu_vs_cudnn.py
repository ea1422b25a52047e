#!/usr/bin/env python3
"""GPU train step of rnnc (rnn-run --target=cuda) against PyTorch's
nn.LSTM / nn.GRU on cuDNN: time and peak memory.

What it measures
  For every configuration (cell x layers x T x B x I x H x reset probability)
  and every TF32 mode (--tf32: off, on, or both), one training step, timed
  on the same inputs and the same GPU, in one run of this script:
  * ours:  `rnn-run --target=cuda --preset=CELL --inputs=IN.npz --json
           --iters=N --warmup=W --remat=R [--tf32]` in a subprocess; its
           `step_ms.median` (forward + backward of the compiled program:
           kernels of its own, GEMMs through cuBLAS, by default replayed as
           a CUDA graph of one step, buffers in the planned arena; timed
           with events on the stream, from one recorded before the step to
           one recorded after it; --rnn-run-flag=--no-cuda-graph times
           eager launches instead) and
           `peak_bytes.measured` (everything the program allocates on the
           device during a step, results and gradients included, not the
           caller's inputs and parameters), with `peak_bytes.predicted`
           (the memory planner's figure) and `saved_bytes`.
  * cudnn: torch.nn.LSTM / nn.GRU in this process, float32, on 'cuda' with
           torch.backends.cudnn.enabled (so the module runs cuDNN's RNN),
           the same W warmup and N measured steps.  The step is the one of
           cpu_vs_torch.py (torch_peer.TorchStep): clear the gradients, the
           forward, torch.autograd.backward([y, h_n(, c_n)],
           [grad_y, grad_h_n(, grad_c_n)]), so it computes what rnn-run
           computes: y, h_n, c_n and the gradients of x, h0, c0 and all
           weights.
           Time: before each measured step the stream is synchronized (the
           GPU is idle, as it is when an rnn-run step starts); a
           torch.cuda.Event is recorded, the step runs, a second event is
           recorded and waited for; the step's time is the events' elapsed
           time (from the first event, which the idle GPU passes at once, to
           the end of the step's last kernel: host-side work inside the step
           counts, as it does in rnn-run's events).  Median over N.
           Memory: after the gradients of the previous step are dropped and
           the stream synchronized, torch.cuda.memory_allocated() is the
           base (inputs, parameters, cotangents: the caller's) and
           torch.cuda.reset_peak_memory_stats() is called; the step's peak
           is torch.cuda.max_memory_allocated() - base: what the step
           allocates, results, gradients, cuDNN's reserve space (what it
           saves for backward) and workspaces included, as rnn-run counts
           it.  (Memory allocated once and kept, such as cuBLAS's
           workspace, is in neither figure.  The caching allocator's
           reserved but unallocated memory is not counted.)
  Both read the same arrays, written once per configuration to a temporary
  .npz (torch_peer.make_inputs: x, is_init, h0, c0, weights, cotangents; the
  mask is Bernoulli(--reset-prob) over all [T, B], t = 0 included).

  Without resets the torch step is one call of the module: plain cuDNN.
  With resets (is_init[t, b] = 1: the state entering step t of column b is
  0), which nn.LSTM/GRU cannot express, the torch step is TorchRL's cuDNN
  path (LSTMModule/GRUModule in recurrent_mode): split every column into
  segments at its resets, run the module once on the segments laid side by
  side as N >= B sequences (initial state 0 for segments that start with a
  reset, h0/c0 of the column for a first segment that does not), scatter the
  outputs back to [T, B, H].  As in cpu_vs_torch.py the segments go in as a
  PackedSequence (so h_n/c_n are read at each segment's true end; TorchRL
  pads and reads them after the padding) and the padded steps are skipped,
  so this is if anything faster than TorchRL's padded run.  The mask lives
  on the GPU and is copied to the host inside the step (TorchRL's split
  reads the segment lengths back to the host too); the segmentation (numpy)
  and the gather/scatter are inside the timed step.

  TF32: "off" is equal fp32 math on both sides: rnn-run without --tf32
  (cuBLAS in full fp32) and torch.backends.cuda.matmul.allow_tf32 =
  torch.backends.cudnn.allow_tf32 = False.  "on" lets both use TF32 tensor
  cores: rnn-run --tf32 and both torch flags True (PyTorch's default lets
  cuDNN use TF32, so "on" is what an unmodified PyTorch program gets for
  its RNNs).

  Before timing, each configuration is checked once (unless --no-check), in
  fp32 (TF32 off on both sides): rnn-run --outputs and the torch step must
  agree on y, h_n, c_n and every gradient; "maxdiff" is the worst
  max|ours - torch| / max|torch| over those arrays, which must be at most
  --check-tol (default 1e-4; fp32 gives about 1e-6; ignoring the resets on
  one side gives about 1e-1).  A configuration above it is marked '!' and
  makes the script exit 1 after printing everything.

  Noise: each configuration runs --rounds rounds; a round runs, for every
  TF32 mode, one rnn-run (W + N steps) and one torch run (W + N steps),
  alternating which goes first; each side's time is the median over rounds
  of its per-round medians.  Before every rnn-run, torch's cached free GPU
  memory is released (torch.cuda.empty_cache()), so the two processes do
  not compete for it.

Configurations
  Default: the issue's grid, B=4096, T=32, I=H=256, cells lstm and gru,
  layers 1 and 2, reset probability 0 and 0.05, TF32 off and on (16 rows).
  --sweep adds TorchRL's sweep: B in {256, 1024, 4096}, T in {16, 32, 64},
  H in {128, 256, 512} with I = H, for the same cells, layers, reset
  probabilities and TF32 modes (shapes already in the grid are not
  repeated).  --seq-len/--batch/--input-size/--hidden-size set the grid.

How to run (from anywhere; rnn-run defaults to build/bin/rnn-run of the repo)
  python3 bench/gpu_vs_cudnn.py                       # the B=4096 grid
  python3 bench/gpu_vs_cudnn.py --sweep --rounds=2    # + TorchRL's sweep
  python3 bench/gpu_vs_cudnn.py --cells=lstm --layers=1 --reset-prob=0.05 \\
      --tf32=off --remat=gates --json
  Options taking lists take comma-separated values; configurations are their
  product.  --json prints one JSON object per configuration and TF32 mode
  (no table).  Progress goes to stderr.  Without a CUDA device for PyTorch, or
  when rnn-run --target=cuda fails (e.g. no GPU or driver, or a build
  without the CUDA runtime), the script stops with one line on stderr and
  exit code 2.

How to read the ratios
  ratio = ours_ms / cudnn_ms: < 1 means rnn-run's step is faster.  mem =
  ours peak / torch peak: < 1 means rnn-run's step needs less memory.  With
  p=0 the peer is plain cuDNN; with resets it is the split-and-pack
  workaround above ("split+pack").
"""

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile

import numpy as np
import torch

from torch_peer import (PeerError, TorchStep, cell_list, check, float_list,
                        int_list, launch, make_inputs)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG = "gpu_vs_cudnn"

# TorchRL's sweep (I = H).
SWEEP_B = (256, 1024, 4096)
SWEEP_T = (16, 32, 64)
SWEEP_H = (128, 256, 512)


def die(message, code=2):
    """One line on stderr, exit `code`."""
    line = " | ".join(s.strip() for s in str(message).splitlines()
                      if s.strip())
    print(f"{PROG}: {line}", file=sys.stderr, flush=True)
    sys.exit(code)


def stderr_line(text):
    """rnn-run's error line (it prints one); else the last line."""
    lines = [s.strip() for s in (text or "").splitlines() if s.strip()]
    if not lines:
        return "(nothing on stderr)"
    own = [s for s in lines if s.startswith("rnn-run:")]
    return own[0] if own else lines[-1]


# --------------------------------------------------------------------------
# Ours: rnn-run --target=cuda
# --------------------------------------------------------------------------

def run_ours(args, cfg, npz, tf32, iters, warmup, outputs=None):
    cmd = [args.rnn_run, f"--preset={cfg['cell']}", "--target=cuda",
           f"--inputs={npz}", "--json", f"--iters={iters}",
           f"--warmup={warmup}", f"--remat={args.remat}",
           *args.rnn_run_flag]
    if tf32:
        cmd.append("--tf32")
    if outputs:
        cmd.append(f"--outputs={outputs}")
    try:
        r = launch(cmd)
    except PeerError as e:
        die(str(e))
    what = f"rnn-run --target=cuda{' --tf32' if tf32 else ''} " \
           f"({cfg['name']})"
    if r.returncode != 0:
        status = (f"exit {r.returncode}" if r.returncode > 0
                  else f"signal {-r.returncode}")
        die(f"{what} failed ({status}): {stderr_line(r.stderr)}")
    try:
        j = json.loads(r.stdout)
        j["step_ms"]["median"], j["peak_bytes"]["measured"]
    except (ValueError, KeyError, TypeError):
        die(f"{what} printed no usable JSON: "
            f"{(r.stdout.strip() or '(nothing)')[:200]}")
    if j.get("target") != "cuda":
        die(f"{what} ran on target '{j.get('target')}', not cuda")
    return j


# --------------------------------------------------------------------------
# PyTorch on cuDNN (the step itself is torch_peer.TorchStep)
# --------------------------------------------------------------------------

def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def time_torch(ts, iters, warmup):
    """(median step ms, peak bytes the step allocates); see the header."""
    for _ in range(warmup):
        ts.step()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    ms, peaks = [], []
    for _ in range(iters):
        ts.clear_grads()
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        start.record()
        out = ts.step()
        end.record()
        end.synchronize()
        ms.append(start.elapsed_time(end))
        peaks.append(torch.cuda.max_memory_allocated() - base)
        del out
    return statistics.median(ms), max(peaks)


# --------------------------------------------------------------------------

def fmt_bytes(n):
    if n is None:
        return "-"
    if n >= 2**30:
        return f"{n / 2**30:.2f}GiB"
    if n >= 2**20:
        return f"{n / 2**20:.1f}MiB"
    return f"{n / 2**10:.1f}KiB"


def main():
    ap = argparse.ArgumentParser(
        description="rnn-run --target=cuda vs PyTorch nn.LSTM/GRU on cuDNN: "
                    "train step time and peak memory (see the header of "
                    "this file)")
    ap.add_argument("--cells", type=cell_list, default=["lstm", "gru"])
    ap.add_argument("--layers", type=int_list, default=[1, 2])
    ap.add_argument("--seq-len", type=int_list, default=[32])
    ap.add_argument("--batch", type=int_list, default=[4096])
    ap.add_argument("--input-size", type=int_list, default=[256])
    ap.add_argument("--hidden-size", type=int_list, default=[256])
    ap.add_argument("--reset-prob", type=float_list, default=[0.0, 0.05],
                    help="probability of is_init[t,b]; comma list")
    ap.add_argument("--sweep", action="store_true",
                    help="add TorchRL's sweep B in {256,1024,4096}, "
                         "T in {16,32,64}, I=H in {128,256,512}")
    ap.add_argument("--tf32", choices=("off", "on", "both"), default="both",
                    help="TF32 on both sides: off (equal fp32 math), on, "
                         "or both (default)")
    ap.add_argument("--remat", default="none",
                    help="rnn-run --remat policy (default none)")
    ap.add_argument("--iters", type=int, default=20,
                    help="measured steps per run (both sides)")
    ap.add_argument("--warmup", type=int, default=5,
                    help="unmeasured steps per run (both sides)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved rounds; each side reports the median "
                         "of its per-round medians")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rnn-run-flag", action="append", default=[],
                    help="extra rnn-run flag, e.g. --rnn-run-flag="
                         "--no-cuda-graph (repeatable)")
    ap.add_argument("--rnn-run", default=os.path.join(REPO, "build", "bin",
                                                      "rnn-run"))
    ap.add_argument("--no-check", action="store_true",
                    help="skip the one-time output/gradient comparison")
    ap.add_argument("--check-tol", type=float, default=1e-4,
                    help="largest max|ours-torch|/max|torch| the fp32 check "
                         "accepts (default 1e-4)")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object per configuration and TF32 "
                         "mode")
    args = ap.parse_args()
    if args.iters < 1 or args.warmup < 0 or args.rounds < 1:
        ap.error("need --iters >= 1, --warmup >= 0, --rounds >= 1")

    if not torch.cuda.is_available():
        die(f"PyTorch has no CUDA device (torch {torch.__version__}: "
            "torch.cuda.is_available() is False); this benchmark needs a GPU")
    if not torch.backends.cudnn.is_available():
        die(f"PyTorch has no cuDNN (torch {torch.__version__})")
    if not os.access(args.rnn_run, os.X_OK):
        die(f"rnn-run not found at {args.rnn_run} (build it: "
            "ninja -C build rnn-run, or pass --rnn-run)")
    torch.backends.cudnn.enabled = True
    device = torch.device("cuda")
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.tf32]
    # Progress and warnings on stderr: stdout is the table (or the JSON).
    log = lambda *a: print(*a, file=sys.stderr, flush=True)  # noqa: E731

    # Shapes: the grid, then the sweep's (I = H) not already in it.
    shapes = list(itertools.product(args.seq_len, args.batch,
                                    args.input_size, args.hidden_size))
    if args.sweep:
        for B, T, H in itertools.product(SWEEP_B, SWEEP_T, SWEEP_H):
            if (T, B, H, H) not in shapes:
                shapes.append((T, B, H, H))
    cfgs = []
    for i, (cell, L, (T, B, I, H), p) in enumerate(itertools.product(
            args.cells, args.layers, shapes, args.reset_prob)):
        cfgs.append(dict(cell=cell, L=L, T=T, B=B, I=I, H=H, p=p,
                         name=f"{cell} L{L} T{T} B{B} I{I} H{H} p={p:g}",
                         seed=args.seed + i))

    gpu = torch.cuda.get_device_name(device)
    cudnn = torch.backends.cudnn.version()

    def print_header():
        # Printed with the first row, so that an early failure (no GPU for
        # rnn-run, say) leaves only its one line.
        print(f"# {gpu}; torch {torch.__version__}, cuDNN {cudnn}; "
              f"{len(cfgs)} configurations x TF32 "
              f"{'/'.join('on' if m else 'off' for m in modes)}; rnn-run "
              f"--remat={args.remat}")
        print(f"# {args.rounds} interleaved rounds x ({args.warmup} warmup "
              f"+ {args.iters} measured) steps per side; times: median of "
              "per-round medians")
        hdr = (f"{'config':36s} {'tf32':>4s} {'ours ms':>8s} "
               f"{'cudnn ms':>9s} {'ratio':>6s} {'ours pk':>9s} "
               f"{'torch pk':>9s} {'mem':>5s} {'saved':>9s} "
               f"{'torch':>10s} {'maxdiff':>8s}")
        print(hdr)
        print("-" * len(hdr))

    mtime = os.stat(args.rnn_run).st_mtime
    failed_checks, gemm, header_printed = [], None, False
    with tempfile.TemporaryDirectory(prefix="gpu_vs_cudnn.") as tmp:
        for n, c in enumerate(cfgs):
            # Inputs once per configuration, on disk for rnn-run and on the
            # GPU for torch; gone before the next configuration.
            d = make_inputs(c["cell"], c["L"], c["T"], c["B"], c["I"], c["H"],
                            c["p"], c["seed"])
            npz = os.path.join(tmp, "in.npz")
            np.savez(npz, **d)
            resets = int(d["is_init"].sum())
            ts = TorchStep(c["cell"], d, device=device)
            del d
            maxdiff = maxdiff_at = None
            if not args.no_check:
                out = os.path.join(tmp, "out.npz")
                set_tf32(False)
                torch.cuda.empty_cache()
                run_ours(args, c, npz, False, 1, 0, outputs=out)
                try:
                    maxdiff, maxdiff_at = check(out, ts.results())
                except PeerError as e:
                    die(e)
                os.remove(out)
                if not maxdiff <= args.check_tol:
                    failed_checks.append(c["name"])
            ours = {m: [] for m in modes}
            theirs = {m: [] for m in modes}
            peaks, js = {}, {}
            for r in range(args.rounds):
                log(f"# [{n + 1}/{len(cfgs)}] {c['name']}: round "
                    f"{r + 1}/{args.rounds}")
                for m in modes:
                    order = ("ours", "torch") if r % 2 == 0 \
                        else ("torch", "ours")
                    for side in order:
                        if side == "ours":
                            torch.cuda.empty_cache()
                            j = run_ours(args, c, npz, m, args.iters,
                                         args.warmup)
                            ours[m].append(j["step_ms"]["median"])
                            js[m] = j
                        else:
                            set_tf32(m)
                            ms, peak = time_torch(ts, args.iters,
                                                  args.warmup)
                            theirs[m].append(ms)
                            peaks[m] = max(peaks.get(m, 0), peak)
            del ts
            torch.cuda.empty_cache()
            os.remove(npz)

            for m in modes:
                j = js[m]
                gemm = j.get("gemm")
                o = statistics.median(ours[m])
                t = statistics.median(theirs[m])
                opk = j["peak_bytes"]["measured"]
                row = {
                    "config": c["name"], "cell": c["cell"],
                    "shape": {"T": c["T"], "B": c["B"], "I": c["I"],
                              "H": c["H"], "L": c["L"]},
                    "reset_prob": c["p"], "resets": resets, "tf32": m,
                    "remat": args.remat, "remat_plan": j.get("remat_plan"),
                    "ours_ms": o, "torch_ms": t, "ratio": o / t,
                    "ours_ms_rounds": ours[m], "torch_ms_rounds": theirs[m],
                    "ours_peak_bytes": opk,
                    "ours_peak_bytes_predicted": j["peak_bytes"].get(
                        "predicted"),
                    "torch_peak_bytes": peaks[m],
                    "mem_ratio": opk / peaks[m] if peaks[m] else None,
                    "saved_bytes": j.get("saved_bytes"),
                    "flops": j.get("flops"),
                    "ours_gflops": (j["flops"] / o / 1e6
                                    if j.get("flops") else None),
                    "torch_gflops": (j["flops"] / t / 1e6
                                     if j.get("flops") else None),
                    "maxdiff": maxdiff, "maxdiff_at": maxdiff_at,
                    "check_tol": args.check_tol,
                    "check_ok": (None if maxdiff is None
                                 else maxdiff <= args.check_tol),
                    "torch_method": "split+pack" if resets else "cudnn",
                    "iters": args.iters, "warmup": args.warmup,
                    "rounds": args.rounds, "gemm": gemm,
                    "device": gpu, "torch_version": torch.__version__,
                    "cudnn_version": cudnn,
                }
                if args.json:
                    print(json.dumps(row), flush=True)
                    continue
                if not header_printed:
                    print_header()
                    header_printed = True
                md = "-" if maxdiff is None else \
                    f"{maxdiff:.1e}" + ("" if row["check_ok"] else "!")
                mem = "-" if row["mem_ratio"] is None else \
                    f"{row['mem_ratio']:.2f}"
                print(f"{c['name']:36s} {'on' if m else 'off':>4s} "
                      f"{o:8.2f} {t:9.2f} {o / t:6.2f} "
                      f"{fmt_bytes(opk):>9s} {fmt_bytes(peaks[m]):>9s} "
                      f"{mem:>5s} {fmt_bytes(row['saved_bytes']):>9s} "
                      f"{row['torch_method']:>10s} {md:>8s}", flush=True)

    if os.stat(args.rnn_run).st_mtime != mtime:
        log(f"# warning: {args.rnn_run} was rebuilt during this run; "
            "its times may mix two builds")
    if not args.json:
        print(f"# ours gemm: {gemm}")
        print("# ratio = ours/cudnn step time (< 1: rnn-run faster); "
              "mem = ours pk/torch pk; pk = peak bytes a step allocates "
              "(rnn-run peak_bytes.measured; torch max_memory_allocated - "
              "allocated before the step); saved = rnn-run saved_bytes; "
              "maxdiff: fp32 (TF32 off) check, '!' above --check-tol")
    if failed_checks:
        die(f"{len(failed_checks)} configuration(s) differ from torch by "
            f"more than --check-tol={args.check_tol:g}: "
            f"{', '.join(failed_checks)}", code=1)


if __name__ == "__main__":
    main()
