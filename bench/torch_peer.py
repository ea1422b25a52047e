"""The PyTorch side of the benchmarks against rnn-run (cpu_vs_torch.py,
gpu_vs_cudnn.py): the shared inputs, the torch train step and the check of
rnn-run's outputs against it.

* make_inputs(): the arrays both sides read (written to one .npz per
  configuration): x, is_init, h0, c0, weights and biases as PyTorch names and
  initializes them, cotangents grad_y, grad_h_n, grad_c_n; the mask is
  Bernoulli(p) over all [T, B], t = 0 included.
* TorchStep: one train step of nn.LSTM / nn.GRU (float32, on the CPU or on a
  CUDA device, where nn.LSTM/GRU run on cuDNN) computing what rnn-run
  computes: y, h_n, c_n and the gradients of x, h0, c0 and every weight.
  Without resets it is one call of the module.  With resets (is_init[t, b]
  = 1: the state entering step t of column b is 0), which nn.LSTM/GRU cannot
  express, it is TorchRL's cuDNN-style path (LSTMModule/GRUModule in
  recurrent_mode): split every column into segments at its resets, lay the
  segments side by side as N >= B independent sequences, run the module once
  on them (initial state 0 for segments that start with a reset, the column's
  h0/c0 for a first segment that does not), scatter the outputs back to
  [T, B, H].  The segments go in as a PackedSequence, so h_n/c_n are read at
  each segment's true end (TorchRL pads and reads them after the padding)
  and the padded steps are skipped.  The segmentation (numpy on the mask,
  which is first copied to the host when it lives on the GPU, as TorchRL's
  split reads segment lengths back to the host) and the gather/scatter are
  part of the step.
* check(): max|ours - torch| / max|torch| over every array, the worst one;
  a NaN in either side's array is worse than any number (the result is
  nan), and an infinity that the other side does not match gives inf.
* launch(): runs an rnn-run command line.

Errors are raised as PeerError; the scripts turn them into their one-line
exits.
"""

import argparse
import math
import statistics
import subprocess
import time

import numpy as np
import torch

from cli import positive_ints


class PeerError(Exception):
    pass


def launch(cmd):
    """Runs `cmd` (rnn-run) and returns its CompletedProcess. rnn-run may be
    being relinked right now: launching is retried for two minutes before
    PeerError."""
    for attempt in range(60):
        try:
            return subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            if attempt == 59:
                raise PeerError(f"cannot run {cmd[0]}: {e}")
            time.sleep(2)


def int_list(s):
    """A comma list of sizes or layer counts, each at least 1."""
    return positive_ints(s)


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
# The torch train step
# --------------------------------------------------------------------------

class TorchStep:
    """One train step of nn.LSTM/nn.GRU on the arrays d (see the header),
    with the module and the arrays on `device`."""

    def __init__(self, cell, d, device="cpu"):
        self.lstm = cell == "lstm"
        self.device = torch.device(device)
        self.on_cpu = self.device.type == "cpu"
        T, B, I = d["x"].shape
        L, _, H = d["h0"].shape
        self.T, self.B, self.H, self.L = T, B, H, L
        ctor = torch.nn.LSTM if self.lstm else torch.nn.GRU
        self.mod = ctor(I, H, num_layers=L, bias=True, batch_first=False,
                        dtype=torch.float32, device=self.device)
        with torch.no_grad():
            for l in range(L):
                for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    getattr(self.mod, f"{p}_l{l}").copy_(
                        torch.from_numpy(d[f"{p}_l{l}"]))
        if not self.on_cpu:
            # One contiguous weight buffer, as cuDNN wants it.
            self.mod.flatten_parameters()
        t = lambda k: torch.from_numpy(d[k].copy()).to(self.device)  # noqa: E731
        self.x = t("x").requires_grad_(True)
        self.h0 = t("h0").requires_grad_(True)
        self.c0 = t("c0").requires_grad_(True) if self.lstm else None
        self.gy, self.ghn = t("grad_y"), t("grad_h_n")
        self.gcn = t("grad_c_n") if self.lstm else None
        self.is_init = d["is_init"].astype(bool)
        self.resets = bool(self.is_init.any())
        # Off the CPU the mask lives on the device, as it would in training.
        self.is_init_dev = None if self.on_cpu else \
            torch.from_numpy(self.is_init).to(self.device)
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
        is_init = self.is_init if self.on_cpu else \
            self.is_init_dev.cpu().numpy()
        dev = (lambda a: a) if self.on_cpu else \
            (lambda a: a.to(self.device))  # noqa: E731
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
        pidx = dev(torch.from_numpy(tau * N + seg))    # into [Tmax*N]
        # First segments of the columns that do not reset at t = 0 start
        # from h0/c0; every other segment from 0.
        keep_cols = np.nonzero(~is_init[0])[0]
        keep_segs = dev(torch.from_numpy(seg_bm.reshape(B, T)[keep_cols, 0]))
        keep_cols = dev(torch.from_numpy(keep_cols))
        last_segs = dev(torch.from_numpy(seg_bm.reshape(B, T)[:, T - 1]))

        x_flat = self.x.reshape(T * B, -1)
        xp = x_flat.new_zeros(Tmax * N, x_flat.shape[1]).index_copy(
            0, pidx, x_flat).view(Tmax, N, -1)
        # The lengths stay on the host, as pack_padded_sequence wants them.
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

    def clear_grads(self):
        for p in self.leaves:
            p.grad = None

    def step(self):
        self.clear_grads()
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
        return {k: (v.detach().cpu().numpy() if v is not None
                    else np.zeros(1, np.float32)) for k, v in r.items()}

    def time(self, iters, warmup):
        """Median host time of a step (for the CPU: nothing to wait for)."""
        for _ in range(warmup):
            self.step()
        ms = []
        for _ in range(iters):
            t0 = time.perf_counter()
            self.step()
            ms.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ms)


# --------------------------------------------------------------------------
# Check
# --------------------------------------------------------------------------

def _badness(r):
    """The order of check's ratios: NaN above every number."""
    return (math.isnan(r), 0.0 if math.isnan(r) else r)


def check(ours_npz, torch_res):
    """(worst max|ours - torch| / max|torch|, the array where it is); the
    scale is the largest finite |torch|, equal infinities differ by 0."""
    ours = np.load(ours_npz)
    worst, where = 0.0, None
    for k, ref in torch_res.items():
        if k not in ours.files:
            raise PeerError(f"rnn-run --outputs lacks '{k}'")
        a = ours[k]
        if a.shape != ref.shape:
            if k.startswith("grad_") and not ref.any():
                ref = np.zeros_like(a)   # torch left the gradient None
            else:
                raise PeerError(f"'{k}' has shape {a.shape} in rnn-run, "
                                f"{ref.shape} in torch")
        a64, ref64 = a.astype(np.float64), ref.astype(np.float64)
        # NaN != NaN: a NaN on either side stays NaN, and max keeps it.
        with np.errstate(invalid="ignore"):
            diff = np.where(a64 == ref64, 0.0, np.abs(a64 - ref64))
        finite = np.abs(ref64[np.isfinite(ref64)])
        scale = max(float(finite.max()) if finite.size else 0.0, 1e-30)
        r = float(diff.max()) / scale if diff.size else 0.0
        if where is None or _badness(r) > _badness(worst):
            worst, where = r, k
    return worst, where
