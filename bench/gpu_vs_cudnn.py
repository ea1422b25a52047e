#!/usr/bin/env python3
"""GPU train step of rnnc (rnn-run --target=cuda) against PyTorch's
nn.LSTM / nn.GRU on cuDNN and against TorchRL's triton backend: time, peak
memory, and run-to-run bitwise determinism of rnnc's results.

What it measures
  For every configuration (cell x layers x T x B x I x H x reset probability)
  and every mode (--modes: fp32, tf32, bf16; or --tf32: off, on, both), one
  training step, timed on the same inputs and the same GPU, in one run of
  this script:
  * ours:  `rnn-run --target=cuda --preset=CELL --inputs=IN.npz --json
           --iters=N --warmup=W --remat=R [--tf32 | --storage=bf16]` in a
           subprocess; its
           `step_ms.median` (forward + backward of the compiled program:
           kernels of its own, GEMMs through cuBLAS, by default replayed as
           a CUDA graph of one step, buffers in the planned arena; timed
           with events on the stream, from one recorded before the step to
           one recorded after it; --rnn-run-flag=--no-cuda-graph times
           eager launches instead) and
           `peak_bytes.measured` (everything the program allocates on the
           device during a step, results and gradients included, not the
           caller's inputs and parameters), with `peak_bytes.predicted`
           (the memory planner's figure) and `saved_bytes`.  In mode bf16
           rnn-run runs with --storage=bf16 (bf16 saved values and GEMM
           operands, cuBLAS's bf16 GEMM with f32 accumulation).
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
  * triton: TorchRL's LSTMModule / GRUModule (torchrl_peer.TorchRLStep;
           TorchRL 0.14.1, whose wheels the GPU bundle carries) in recurrent
           mode with recurrent_backend="triton": Triton kernels that apply
           is_init inside the time loop, so no split; with and without
           resets.  Same W + N steps, timed and measured as the cuDNN step
           (its caller's data: x [B, T, I], is_init and the per-step state
           [B, T, L, H] that TorchRL stores, with h0/c0 at t = 0).  Its
           recurrent_matmul_precision is "ieee" in mode fp32, "tf32" in
           mode tf32; in mode bf16 its recurrent_compute_dtype is bfloat16.
           --triton=off leaves it out; without TorchRL, triton or CUDA
           (--triton=auto, the default) the columns are '-' and the header
           says why.
  All read the same arrays, written once per configuration to a temporary
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

  Modes: "fp32" (--tf32=off) is equal fp32 math on every side: rnn-run
  without --tf32 (cuBLAS in full fp32) and
  torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 =
  False.  "tf32" (--tf32=on) lets all use TF32 tensor cores: rnn-run --tf32
  and both torch flags True (PyTorch's default lets cuDNN use TF32, so this
  is what an unmodified PyTorch program gets for its RNNs).  "bf16" is
  rnn-run --storage=bf16 against cuDNN in TF32 (the reference the issue
  sets for bf16 storage; its times are those of mode tf32 when both run)
  and TorchRL's triton in bfloat16.  --modes wins over --tf32.

  Before timing, each configuration is checked once (unless --no-check), in
  fp32 (TF32 off on both sides): rnn-run --outputs and the torch step must
  agree on y, h_n, c_n and every gradient; "maxdiff" is the worst
  max|ours - torch| / max|torch| over those arrays, which must be at most
  --check-tol (default 1e-4; fp32 gives about 1e-6; ignoring the resets on
  one side gives about 1e-1).  A configuration above it is marked '!' and
  makes the script exit 1 after printing everything.  TorchRL's results
  are compared with rnn-run's fp32 ones the same way, in every mode ("trl
  diff"; in fp32, precision "ieee", above --check-tol it is marked '!' and
  reported, but does not fail the script: it is the peer's accuracy).  In
  modes tf32 and bf16, maxdiff is that mode's rnn-run results against the
  fp32 torch step, and trl diff TorchRL's in that mode, for information (no
  tolerance).

  Determinism (--determinism): for every configuration and mode, rnn-run's
  outputs and gradients (--outputs) of two runs, the first timed run and
  the fp32 check run (or, for tf32, bf16 or with --no-check, one more run
  of one step), must be bitwise equal, array by array ("bits": "same", or
  the first array that differs).  A difference makes the script exit 1
  after printing everything.

  Noise: each configuration runs --rounds rounds; a round runs, for every
  mode, one rnn-run (W + N steps), one cuDNN run and one triton run (W + N
  steps each), rotating which goes first; each side's time is the median
  over rounds of its per-round medians.  Before every rnn-run, torch's
  cached free GPU memory is released (torch.cuda.empty_cache()), so the two
  processes do not compete for it.

Configurations
  Default: the issue's grid, B=4096, T=32, I=H=256, cells lstm and gru,
  layers 1 and 2, reset probability 0 and 0.05, modes fp32 and tf32 (16
  rows; gpu/call1.sh adds bf16 and B=64).
  --sweep adds TorchRL's sweep: B in {256, 1024, 4096}, T in {16, 32, 64},
  H in {128, 256, 512} with I = H, for the same cells, layers, reset
  probabilities and modes (shapes already in the grid are not
  repeated).  --seq-len/--batch/--input-size/--hidden-size set the grid.
  --time-budget=S starts no configuration after S seconds (the ones left
  are listed), so that a caller's timeout does not cut the table short.

How to run (from anywhere; rnn-run defaults to build/bin/rnn-run of the repo)
  python3 bench/gpu_vs_cudnn.py                       # the B=4096 grid
  python3 bench/gpu_vs_cudnn.py --sweep --rounds=2    # + TorchRL's sweep
  python3 bench/gpu_vs_cudnn.py --cells=lstm --layers=1 --reset-prob=0.05 \\
      --tf32=off --remat=gates --json
  python3 bench/gpu_vs_cudnn.py --batch=4096,64 --modes=fp32,tf32,bf16 \\
      --determinism                                   # gpu/call1.sh's table
  python3 bench/gpu_vs_cudnn.py --dry-run             # the script on the CPU
  Options taking lists take comma-separated values; configurations are their
  product (shapes outermost).  --json prints one JSON object per
  configuration and mode (no table); --json-out=FILE appends them to FILE
  as well.  Progress goes to stderr.  --dry-run runs everything on the CPU
  at a tiny shape (T=5, B=3, I=4, H=6 unless given; resets 0 and 0.3):
  rnn-run --target=cpu, the torch peers on the CPU, TorchRL's "scan"
  backend (or "pad" without hoptorch) in place of triton, mode tf32
  without TF32, no peak memory for torch; its times mean nothing: it tests
  the script without a GPU.  Without a CUDA device for PyTorch (and no
  --dry-run), or when rnn-run --target=cuda fails (e.g. no GPU or driver,
  or a build without the CUDA runtime), the script stops with one line on
  stderr and exit code 2.

How to read the ratios
  ratio = ours_ms / cudnn_ms: < 1 means rnn-run's step is faster.  mem =
  ours peak / torch peak: < 1 means rnn-run's step needs less memory.  With
  p=0 the peer is plain cuDNN; with resets it is the split-and-pack
  workaround above ("split+pack").  r.trl and m.trl are the same ratios
  against TorchRL's triton step.

Modules (next to this script, which imports them as siblings)
  gpu_vs_cudnn_sides.py: rnn-run's runs, the torch step's timing and peak,
  the triton peer, the modes' settings; gpu_vs_cudnn_table.py: the table;
  torch_peer.py and torchrl_peer.py: the peers' steps and shared inputs.
"""

import argparse
import itertools
import json
import os
import statistics
import tempfile
import time

import numpy as np
import torch

from cli import nonnegative_int, positive_int, probabilities
from torch_peer import (PeerError, TorchStep, cell_list, check, int_list,
                        make_inputs)
import torchrl_peer
from gpu_vs_cudnn_sides import (MODES, TORCH_TF32, Triton, die,
                                first_difference, log, run_ours, set_tf32,
                                time_torch)
from gpu_vs_cudnn_table import print_header, print_notes, print_row, ratio

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# TorchRL's sweep (I = H).
SWEEP_B = (256, 1024, 4096)
SWEEP_T = (16, 32, 64)
SWEEP_H = (128, 256, 512)


def mode_list(s):
    modes = [v.strip().lower() for v in s.split(",") if v.strip()]
    for m in modes:
        if m not in MODES:
            raise argparse.ArgumentTypeError(
                f"unknown mode '{m}' (fp32, tf32, bf16)")
    if not modes:
        raise argparse.ArgumentTypeError("no mode given")
    return list(dict.fromkeys(modes))


def main():
    ap = argparse.ArgumentParser(
        description="rnn-run --target=cuda vs PyTorch nn.LSTM/GRU on cuDNN "
                    "and TorchRL's triton backend: train step time, peak "
                    "memory, determinism (see the header of this file)")
    ap.add_argument("--cells", type=cell_list, default=["lstm", "gru"])
    ap.add_argument("--layers", type=int_list, default=[1, 2])
    ap.add_argument("--seq-len", type=int_list, default=None,
                    help="default 32 (--dry-run: 5)")
    ap.add_argument("--batch", type=int_list, default=None,
                    help="default 4096 (--dry-run: 3)")
    ap.add_argument("--input-size", type=int_list, default=None,
                    help="default 256 (--dry-run: 4)")
    ap.add_argument("--hidden-size", type=int_list, default=None,
                    help="default 256 (--dry-run: 6)")
    ap.add_argument("--reset-prob", type=probabilities, default=None,
                    help="probability of is_init[t,b]; comma list (default "
                         "0,0.05; --dry-run: 0,0.3)")
    ap.add_argument("--sweep", action="store_true",
                    help="add TorchRL's sweep B in {256,1024,4096}, "
                         "T in {16,32,64}, I=H in {128,256,512}")
    ap.add_argument("--tf32", choices=("off", "on", "both"), default="both",
                    help="TF32 on every side: off (mode fp32), on (mode "
                         "tf32), or both (default); --modes wins")
    ap.add_argument("--modes", type=mode_list, default=None,
                    help="comma list of fp32, tf32, bf16 (rnn-run "
                         "--storage=bf16 against cuDNN in TF32); default "
                         "from --tf32")
    ap.add_argument("--triton", choices=("auto", "on", "off"),
                    default="auto",
                    help="TorchRL's recurrent_backend='triton' as a peer: "
                         "auto (if it can run; default), on (required), off")
    ap.add_argument("--determinism", action="store_true",
                    help="check that two rnn-run runs give bitwise equal "
                         "outputs and gradients, per configuration and mode")
    ap.add_argument("--time-budget", type=float, default=0,
                    help="start no configuration after this many seconds "
                         "(0: no limit)")
    ap.add_argument("--remat", default="none",
                    help="rnn-run --remat policy (default none)")
    ap.add_argument("--iters", type=positive_int, default=20,
                    help="measured steps per run (every side)")
    ap.add_argument("--warmup", type=nonnegative_int, default=5,
                    help="unmeasured steps per run (every side)")
    ap.add_argument("--rounds", type=positive_int, default=3,
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
                    help="print one JSON object per configuration and mode")
    ap.add_argument("--json-out", metavar="FILE",
                    help="also append those JSON objects to FILE (one a "
                         "line), whatever stdout shows")
    ap.add_argument("--dry-run", action="store_true",
                    help="everything on the CPU at a tiny shape, to test "
                         "this script without a GPU (times mean nothing)")
    args = ap.parse_args()
    if args.time_budget < 0:
        ap.error("need --time-budget >= 0")
    if args.json_out:
        # Checked before any configuration runs, not after the first; a
        # file made by the check is removed, so that a run that ends before
        # its first row leaves none.
        existed = os.path.exists(args.json_out)
        try:
            open(args.json_out, "a").close()
        except OSError as e:
            die(f"--json-out {args.json_out}: cannot write it: "
                f"{e.strerror or e}")
        if not existed:
            os.remove(args.json_out)
    shape_defaults = ((5, 3, 4, 6) if args.dry_run else (32, 4096, 256, 256))
    for name, default in zip(("seq_len", "batch", "input_size",
                              "hidden_size"), shape_defaults):
        if getattr(args, name) is None:
            setattr(args, name, [default])
    if args.reset_prob is None:
        args.reset_prob = [0.0, 0.3] if args.dry_run else [0.0, 0.05]
    modes = args.modes or {"off": ["fp32"], "on": ["tf32"],
                           "both": ["fp32", "tf32"]}[args.tf32]
    started = time.monotonic()

    if args.dry_run:
        args.target = "cpu"
        device = torch.device("cpu")
        torch.set_num_threads(1)
        backend = "scan" if torchrl_peer.available("scan")[0] else "pad"
    else:
        args.target = "cuda"
        if not torch.cuda.is_available():
            die(f"PyTorch has no CUDA device (torch {torch.__version__}: "
                "torch.cuda.is_available() is False); this benchmark needs "
                "a GPU (--dry-run runs it on the CPU)")
        if not torch.backends.cudnn.is_available():
            die(f"PyTorch has no cuDNN (torch {torch.__version__})")
        torch.backends.cudnn.enabled = True
        device = torch.device("cuda")
        backend = "triton"
    if not os.access(args.rnn_run, os.X_OK):
        die(f"rnn-run not found at {args.rnn_run} (build it: "
            "ninja -C build rnn-run, or pass --rnn-run)")
    triton_on, triton_what = False, "off (--triton=off)"
    if args.triton != "off":
        triton_on, triton_what = torchrl_peer.available(backend)
        if not triton_on:
            if args.triton == "on":
                die(f"--triton=on, but TorchRL's peer cannot run: "
                    f"{triton_what}")
            triton_what = f"unavailable: {triton_what}"

    # Shapes: the grid, then the sweep's (I = H) not already in it.
    shapes = list(itertools.product(args.seq_len, args.batch,
                                    args.input_size, args.hidden_size))
    if args.sweep:
        for B, T, H in itertools.product(SWEEP_B, SWEEP_T, SWEEP_H):
            if (T, B, H, H) not in shapes:
                shapes.append((T, B, H, H))
    cfgs = []
    for i, ((T, B, I, H), cell, L, p) in enumerate(itertools.product(
            shapes, args.cells, args.layers, args.reset_prob)):
        cfgs.append(dict(cell=cell, L=L, T=T, B=B, I=I, H=H, p=p,
                         name=f"{cell} L{L} T{T} B{B} I{I} H{H} p={p:g}",
                         seed=args.seed + i))

    if args.dry_run:
        gpu, cudnn = "CPU (--dry-run)", None
    else:
        gpu = torch.cuda.get_device_name(device)
        cudnn = torch.backends.cudnn.version()

    mtime = os.stat(args.rnn_run).st_mtime
    failed_checks, nondeterministic, trl_off = [], [], []
    gemm, header_printed, skipped, triton_failures = None, False, [], []
    with tempfile.TemporaryDirectory(prefix="gpu_vs_cudnn.") as tmp:
        for n, c in enumerate(cfgs):
            elapsed = time.monotonic() - started
            if args.time_budget and elapsed > args.time_budget:
                skipped = cfgs[n:]
                break
            # Inputs once per configuration, on disk for rnn-run and on the
            # device for torch; gone before the next configuration.
            d = make_inputs(c["cell"], c["L"], c["T"], c["B"], c["I"], c["H"],
                            c["p"], c["seed"])
            npz = os.path.join(tmp, "in.npz")
            np.savez(npz, **d)
            resets = int(d["is_init"].sum())
            ts = TorchStep(c["cell"], d, device=device)
            if triton_on and len(triton_failures) >= 2:
                triton_on = False
                triton_what += " [left out after failures on " + \
                    ", ".join(triton_failures) + "]"
                log(f"# triton peer left out after failures on "
                    f"{', '.join(triton_failures)}")
            trl = Triton(backend, c["cell"], d, device, c["name"]) \
                if triton_on else None
            del d
            outs = {m: os.path.join(tmp, f"{m}.npz") for m in modes}
            keep_outputs = not args.no_check or args.determinism
            check_npz = os.path.join(tmp, "check.npz")
            ref = check_diff = None
            maxdiff = {m: None for m in modes}
            trl_diff = {m: None for m in modes}
            if not args.no_check:
                set_tf32(False)
                if device.type == "cuda":
                    torch.cuda.empty_cache()
                run_ours(args, c, npz, "fp32", 1, 0, outputs=check_npz)
                try:
                    ref = ts.results()
                    check_diff = check(check_npz, ref)[0]
                    # TorchRL against rnn-run in fp32, per mode (fp32:
                    # the check; tf32, bf16: information).
                    for m in modes if trl is not None else []:
                        got = trl.run(m, lambda s: s.results())
                        if got is not None:
                            trl_diff[m] = check(check_npz, got)[0]
                except PeerError as e:
                    die(e)
                if "fp32" in modes:
                    maxdiff["fp32"] = check_diff
                if not check_diff <= args.check_tol:
                    failed_checks.append(c["name"])
                if trl_diff.get("fp32") is not None and \
                        not trl_diff["fp32"] <= args.check_tol:
                    trl_off.append(f"{c['name']} ({trl_diff['fp32']:.1e})")
            ours = {m: [] for m in modes}
            theirs = {m: [] for m in modes}
            trls = {m: [] for m in modes}
            peaks, trl_peaks, js = {}, {}, {}
            for r in range(args.rounds):
                log(f"# [{n + 1}/{len(cfgs)}] {c['name']}: round "
                    f"{r + 1}/{args.rounds}")
                cudnn_round = {}
                for m in modes:
                    sides = ["ours", "torch", "triton"]
                    k = r % 3
                    for side in sides[k:] + sides[:k]:
                        if side == "ours":
                            if device.type == "cuda":
                                torch.cuda.empty_cache()
                            j = run_ours(args, c, npz, m, args.iters,
                                         args.warmup,
                                         outputs=outs[m] if r == 0 and
                                         keep_outputs else None)
                            ours[m].append(j["step_ms"]["median"])
                            js[m] = j
                        elif side == "torch":
                            tf = TORCH_TF32[m]
                            if tf not in cudnn_round:
                                set_tf32(tf)
                                cudnn_round[tf] = time_torch(
                                    ts, args.iters, args.warmup, device)
                            ms, peak = cudnn_round[tf]
                            theirs[m].append(ms)
                            if peak is not None:
                                peaks[m] = max(peaks.get(m, 0), peak)
                        elif trl is not None:
                            set_tf32(TORCH_TF32[m])
                            got = trl.run(m, lambda s: time_torch(
                                s, args.iters, args.warmup, device))
                            if got is not None:
                                trls[m].append(got[0])
                                if got[1] is not None:
                                    trl_peaks[m] = max(trl_peaks.get(m, 0),
                                                       got[1])
            # What each mode's outputs say: the error against the fp32
            # torch step (tf32, bf16: information) and run-to-run bits.
            bits = {m: None for m in modes}
            for m in modes:
                if not keep_outputs:
                    continue
                if ref is not None and m != "fp32":
                    maxdiff[m] = check(outs[m], ref)[0]
                if args.determinism:
                    other = check_npz if m == "fp32" and ref is not None \
                        else os.path.join(tmp, "again.npz")
                    if other != check_npz:
                        run_ours(args, c, npz, m, 1, 0, outputs=other)
                    diff = first_difference(outs[m], other)
                    bits[m] = "same" if diff is None else diff
                    if diff is not None:
                        nondeterministic.append(f"{c['name']} {m} ({diff})")
                    if other != check_npz:
                        os.remove(other)
                os.remove(outs[m])
            if os.path.exists(check_npz):
                os.remove(check_npz)
            if trl is not None and trl.error is not None:
                triton_failures.append(c["name"])
            del ts, trl, ref
            if device.type == "cuda":
                torch.cuda.empty_cache()
            os.remove(npz)

            for m in modes:
                j = js[m]
                gemm = j.get("gemm")
                o = statistics.median(ours[m])
                t = statistics.median(theirs[m])
                tr = statistics.median(trls[m]) if trls[m] else None
                opk = j["peak_bytes"]["measured"]
                row = {
                    "config": c["name"], "cell": c["cell"],
                    "shape": {"T": c["T"], "B": c["B"], "I": c["I"],
                              "H": c["H"], "L": c["L"]},
                    "reset_prob": c["p"], "resets": resets, "mode": m,
                    "tf32": m == "tf32",
                    "storage": "bf16" if m == "bf16" else "f32",
                    "torch_tf32": TORCH_TF32[m],
                    "remat": args.remat, "remat_plan": j.get("remat_plan"),
                    "ours_ms": o, "torch_ms": t, "ratio": o / t,
                    "ours_ms_rounds": ours[m], "torch_ms_rounds": theirs[m],
                    "ours_peak_bytes": opk,
                    "ours_peak_bytes_predicted": j["peak_bytes"].get(
                        "predicted"),
                    "torch_peak_bytes": peaks.get(m),
                    "mem_ratio": ratio(opk, peaks.get(m)),
                    "triton_ms": tr, "triton_ratio": ratio(o, tr),
                    "triton_ms_rounds": trls[m],
                    "triton_peak_bytes": trl_peaks.get(m),
                    "triton_mem_ratio": ratio(opk, trl_peaks.get(m)),
                    "triton": triton_what,
                    "triton_maxdiff": trl_diff[m],
                    "saved_bytes": j.get("saved_bytes"),
                    "flops": j.get("flops"),
                    "ours_gflops": (j["flops"] / o / 1e6
                                    if j.get("flops") else None),
                    "torch_gflops": (j["flops"] / t / 1e6
                                     if j.get("flops") else None),
                    "maxdiff": maxdiff[m], "check_maxdiff": check_diff,
                    "check_tol": args.check_tol,
                    "check_ok": (None if check_diff is None
                                 else check_diff <= args.check_tol),
                    "bitwise_rerun": bits[m],
                    "torch_method": "split+pack" if resets else "cudnn",
                    "iters": args.iters, "warmup": args.warmup,
                    "rounds": args.rounds, "gemm": gemm,
                    "launches": j.get("launches"),
                    "gemm_calls": j.get("gemm_calls"),
                    "device": gpu, "torch_version": torch.__version__,
                    "cudnn_version": cudnn,
                }
                if args.json_out:
                    with open(args.json_out, "a") as f:
                        f.write(json.dumps(row) + "\n")
                if args.json:
                    print(json.dumps(row), flush=True)
                    continue
                if not header_printed:
                    # With the first row, so that an early failure (no GPU
                    # for rnn-run, say) leaves only its one line.
                    print_header(gpu, cudnn, len(cfgs), modes, args,
                                 triton_what)
                    header_printed = True
                print_row(row, args.check_tol)

    if os.stat(args.rnn_run).st_mtime != mtime:
        log(f"# warning: {args.rnn_run} was rebuilt during this run; "
            "its times may mix two builds")
    if not args.json:
        if not header_printed:
            print_header(gpu, cudnn, len(cfgs), modes, args, triton_what)
        print_notes(gemm, started)
    if skipped:
        log(f"# --time-budget={args.time_budget:g} s reached: "
            f"{len(skipped)} of {len(cfgs)} configurations not run: "
            f"{', '.join(c['name'] for c in skipped)}")
        if not args.json:
            print(f"# --time-budget={args.time_budget:g} s reached: not run: "
                  f"{', '.join(c['name'] for c in skipped)}")
    if trl_off:
        log(f"# warning: TorchRL's results differ from rnn-run's by more "
            f"than --check-tol: {', '.join(trl_off)}")
    problems = []
    if failed_checks:
        problems.append(f"{len(failed_checks)} configuration(s) differ from "
                        f"torch by more than --check-tol={args.check_tol:g}: "
                        f"{', '.join(failed_checks)}")
    if nondeterministic:
        problems.append(f"rnn-run's results differ between two runs: "
                        f"{', '.join(nondeterministic)}")
    if problems:
        die("; ".join(problems), code=1)


if __name__ == "__main__":
    main()
