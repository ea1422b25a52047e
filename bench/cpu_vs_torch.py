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
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def int_list(s):
    return [int(v) for v in s.split(",") if v]


def float_list(s):
    return [float(v) for v in s.split(",") if v]


def cell_list(s):
    cells = [v.strip().lower() for v in s.split(",") if v.strip()]
    for c in cells:
        if c not in ("lstm", "gru"):
            raise argparse.ArgumentTypeError(f"unknown cell '{c}'")
    return cells


# --------------------------------------------------------------------------
# Inputs (shared by both sides through an .npz)
# --------------------------------------------------------------------------

def make_inputs(cell, L, T, B, I, H, p, seed):
    rng = np.random.default_rng(seed)
    G = 4 if cell == "lstm" else 3
    k = 1.0 / np.sqrt(H)
    f32 = np.float32

    def u(bound, shape):
        return rng.uniform(-bound, bound, size=shape).astype(f32)

    d = {"x": u(1.0, (T, B, I)), "h0": u(0.5, (L, B, H))}
    if cell == "lstm":
        d["c0"] = u(0.5, (L, B, H))
    for l in range(L):
        in_l = I if l == 0 else H
        d[f"weight_ih_l{l}"] = u(k, (G * H, in_l))
        d[f"weight_hh_l{l}"] = u(k, (G * H, H))
        d[f"bias_ih_l{l}"] = u(k, (G * H,))
        d[f"bias_hh_l{l}"] = u(k, (G * H,))
    d["grad_y"] = u(1.0, (T, B, H))
    d["grad_h_n"] = u(1.0, (L, B, H))
    if cell == "lstm":
        d["grad_c_n"] = u(1.0, (L, B, H))
    d["is_init"] = rng.random((T, B)) < p
    return d


# --------------------------------------------------------------------------
# Ours: rnn-run
# --------------------------------------------------------------------------

def run_ours(args, cfg, npz, iters, warmup, outputs=None):
    cmd = [args.rnn_run, f"--preset={cfg['cell']}", f"--inputs={npz}",
           "--json", f"--iters={iters}", f"--warmup={warmup}",
           f"--blas-threads={args.threads}"]
    if outputs:
        cmd.append(f"--outputs={outputs}")
    # Someone may be relinking rnn-run right now: retry the launch a while.
    for attempt in range(60):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
            break
        except OSError as e:
            if attempt == 59:
                sys.exit(f"cpu_vs_torch: cannot run {args.rnn_run}: {e}")
            time.sleep(2)
    if r.returncode != 0:
        sys.exit(f"cpu_vs_torch: {' '.join(cmd)} failed "
                 f"({r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout)


# --------------------------------------------------------------------------
# PyTorch
# --------------------------------------------------------------------------

class TorchStep:
    """One train step of nn.LSTM/nn.GRU on the arrays d (see the header)."""

    def __init__(self, cell, d):
        self.lstm = cell == "lstm"
        T, B, I = d["x"].shape
        L, _, H = d["h0"].shape
        self.T, self.B, self.H, self.L = T, B, H, L
        ctor = torch.nn.LSTM if self.lstm else torch.nn.GRU
        self.mod = ctor(I, H, num_layers=L, bias=True, batch_first=False,
                        dtype=torch.float32)
        with torch.no_grad():
            for l in range(L):
                for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    getattr(self.mod, f"{p}_l{l}").copy_(
                        torch.from_numpy(d[f"{p}_l{l}"]))
        t = lambda k: torch.from_numpy(d[k].copy())  # noqa: E731
        self.x = t("x").requires_grad_(True)
        self.h0 = t("h0").requires_grad_(True)
        self.c0 = t("c0").requires_grad_(True) if self.lstm else None
        self.gy, self.ghn = t("grad_y"), t("grad_h_n")
        self.gcn = t("grad_c_n") if self.lstm else None
        self.is_init = d["is_init"].astype(bool)
        self.resets = bool(self.is_init.any())
        self.leaves = [self.x, self.h0] + ([self.c0] if self.lstm else []) \
            + list(self.mod.parameters())

    def _forward_plain(self):
        if self.lstm:
            y, (h_n, c_n) = self.mod(self.x, (self.h0, self.c0))
        else:
            y, h_n = self.mod(self.x, self.h0)
            c_n = None
        return y, h_n, c_n

    def _forward_segments(self):
        T, B, H, L = self.T, self.B, self.H, self.L
        is_init = self.is_init
        # Segments: a new one starts at t = 0 and wherever is_init.  Number
        # them column by column (b-major), so a column's segments are
        # consecutive and its last one ends at T.
        start = is_init.copy()
        start[0, :] = True
        start_bm = start.T.reshape(-1)                 # [B*T], index b*T+t
        seg_bm = np.cumsum(start_bm) - 1               # segment id
        pos = np.arange(B * T)
        first = np.maximum.accumulate(np.where(start_bm, pos, 0))
        tau_bm = pos - first                           # step within segment
        N = int(seg_bm[-1]) + 1
        lengths = np.bincount(seg_bm, minlength=N)
        Tmax = int(lengths.max())
        # Back to the t-major order of x/y ([T, B] flattened as t*B+b).
        seg = seg_bm.reshape(B, T).T.reshape(-1)
        tau = tau_bm.reshape(B, T).T.reshape(-1)
        pidx = torch.from_numpy(tau * N + seg)         # into [Tmax*N]
        # First segments of the columns that do not reset at t = 0 start
        # from h0/c0; every other segment from 0.
        keep_cols = np.nonzero(~is_init[0])[0]
        keep_segs = torch.from_numpy(seg_bm.reshape(B, T)[keep_cols, 0])
        keep_cols = torch.from_numpy(keep_cols)
        last_segs = torch.from_numpy(seg_bm.reshape(B, T)[:, T - 1])

        x_flat = self.x.reshape(T * B, -1)
        xp = x_flat.new_zeros(Tmax * N, x_flat.shape[1]).index_copy(
            0, pidx, x_flat).view(Tmax, N, -1)
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            xp, torch.from_numpy(lengths), enforce_sorted=False)

        def init(s0):
            z = s0.new_zeros(L, N, H)
            if len(keep_cols):
                z = z.index_copy(1, keep_segs, s0.index_select(1, keep_cols))
            return z

        if self.lstm:
            out, (hs, cs) = self.mod(packed, (init(self.h0), init(self.c0)))
        else:
            out, hs = self.mod(packed, init(self.h0))
            cs = None
        yp, _ = torch.nn.utils.rnn.pad_packed_sequence(out, total_length=Tmax)
        y = yp.reshape(Tmax * N, H).index_select(0, pidx).view(T, B, H)
        h_n = hs.index_select(1, last_segs)
        c_n = cs.index_select(1, last_segs) if self.lstm else None
        return y, h_n, c_n

    def step(self):
        for p in self.leaves:
            p.grad = None
        y, h_n, c_n = (self._forward_segments() if self.resets
                       else self._forward_plain())
        outs, cots = [y, h_n], [self.gy, self.ghn]
        if self.lstm:
            outs.append(c_n)
            cots.append(self.gcn)
        torch.autograd.backward(outs, cots)
        return y, h_n, c_n

    def results(self):
        y, h_n, c_n = self.step()
        r = {"y": y, "h_n": h_n, "grad_x": self.x.grad,
             "grad_h0": self.h0.grad}
        if self.lstm:
            r.update(c_n=c_n, grad_c0=self.c0.grad)
        for name, p in self.mod.named_parameters():
            r[f"grad_{name}"] = p.grad
        return {k: (v.detach().numpy() if v is not None
                    else np.zeros(1, np.float32)) for k, v in r.items()}

    def time(self, iters, warmup):
        for _ in range(warmup):
            self.step()
        ms = []
        for _ in range(iters):
            t0 = time.perf_counter()
            self.step()
            ms.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ms)


def check(ours_npz, torch_res):
    ours = np.load(ours_npz)
    worst, where = 0.0, None
    for k, ref in torch_res.items():
        if k not in ours.files:
            sys.exit(f"cpu_vs_torch: rnn-run --outputs lacks '{k}'")
        a = ours[k]
        if a.shape != ref.shape:
            if k.startswith("grad_") and not ref.any():
                ref = np.zeros_like(a)   # torch left the gradient None
            else:
                sys.exit(f"cpu_vs_torch: '{k}' has shape {a.shape} in "
                         f"rnn-run, {ref.shape} in torch")
        scale = max(float(np.abs(ref).max()), 1e-30)
        r = float(np.abs(a - ref).max()) / scale
        if where is None or r > worst:
            worst, where = r, k
    return worst, where


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
    ap.add_argument("--reset-prob", type=float_list, default=[0.0],
                    help="probability of is_init[t,b]; comma list")
    ap.add_argument("--iters", type=int, default=20,
                    help="measured steps per run (both sides)")
    ap.add_argument("--warmup", type=int, default=5,
                    help="unmeasured steps per run (both sides)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="interleaved rounds; each side reports the median "
                         "of its per-round medians")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS threads of rnn-run and torch.set_num_threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rnn-run", default=os.path.join(REPO, "build", "bin",
                                                      "rnn-run"))
    ap.add_argument("--no-check", action="store_true",
                    help="skip the one-time output/gradient comparison")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object per configuration")
    args = ap.parse_args()
    if args.iters < 1 or args.warmup < 0 or args.rounds < 1:
        ap.error("need --iters >= 1, --warmup >= 0, --rounds >= 1")
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
                c["maxdiff"], c["maxdiff_at"] = check(out,
                                                      c["torch"].results())
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
