#!/usr/bin/env python3
"""Generate float64 PyTorch golden files for the rnnc integration tests.

Contract (time-major):
  x [T,B,I], is_init [T,B] (bool), h0, c0 [L,B,H]; outputs y [T,B,H] (last
  layer), h_n, c_n [L,B,H].  Weights use PyTorch's layout and gate order
  (LSTM i,f,g,o; GRU r,z,n; MGU f,n; CIFG f,g,o).  The state entering step
  t for batch column b is 0 if is_init[t,b], else the state left by step t-1
  (h0/c0 for t=0).  Then exactly torch.nn.LSTMCell / GRUCell math, for the
  minimal gated unit (rnn.mgu; MGUCell)
      f  = sigmoid(W_if x + b_if + W_hf h + b_hf)
      n  = tanh(W_in x + b_in + f * (W_hn h + b_hn))
      h' = (1 - f) * h + f * n,
  and for the LSTM with coupled input and forget gates (rnn.cifg; CIFGCell)
  the LSTM's with i = 1 - f:  c' = f * c + (1 - f) * g,  h' = o * tanh(c').
  Layer l's y feeds layer l+1 and the resets apply to every layer.
  Training loss = sum(y*grad_y) + sum(h_n*grad_h_n) [+ sum(c_n*grad_c_n)];
  we report the gradients of all float inputs.

Cases (each with its own shape):
  <cell>_l<L>_<pattern>        T=11, B=6, I=5,  H=7,  every pattern
  <cell>_l<L>_wide_<pattern>   T=9,  B=5, I=13, H=21, patterns random and
                               nevercol (H = 2*8+5 exercises both the 8-lane
                               vector loop and the scalar remainder; I != H)
for cell in lstm, gru, mgu, cifg and L in 1, 2, and stacks of layers of different cells
and hidden sizes (STACKS, e.g. a GRU of H=10 feeding an LSTM of H=12), whose
per-layer arrays cannot stack as [L,B,H]: they are named h0_l<k>, c0_l<k>,
h_n_l<k>, ... (rnn-run's naming), with the resets applied to every layer.
Presets whose resets enter given states (RESET_CASES, rnn-run --reset-to):
each layer's h_reset (and c_reset) [T, B, H] per step or [B, H] per batch
column is the state a step with is_init enters; the reference takes it in
the stepping loop, and (b) starts each episode that begins with a reset
from it, so the gradients reach it through both.
For every case this writes
  data/<name>.in.npz   float32 inputs (+ bool is_init)
  data/<name>.ref.npz  float64 outputs and gradients
and for the cases in F64_CASES data/<name>.f64.in.npz, the same inputs
widened to float64 (inputs of the f64 runs, whose reference is the same)
and the malformed inputs used by errors.test (data/bad_*.npz).

The reference is a step-by-step implementation of the reset rule with
torch.nn.LSTMCell / GRUCell in float64.  It is checked against code that does
not share the stepping loop:
  (a) with the resets removed, against multi-layer torch.nn.LSTM / nn.GRU;
  (b) with the resets, an episode-by-episode run: each batch column is split at
      its resets and every episode is run separately through nn.LSTM / nn.GRU
      (zero initial state when the episode starts with a reset, h0/c0 else),
      accumulating the same loss.
The MGU is checked through nn.GRU (MGUAsGRU): it is the GRU with r = f and
z = 1 - f = sigmoid(-a_f), i.e. with the z rows of the GRU's weights and
biases the negated f rows, so (a) and (b) run nn.GRU on weights built from
the MGU's by that map, and autograd carries the gradients back through it.
The CIFG LSTM is checked the same way through nn.LSTM (CIFGAsLSTM): its
input gate rows are the negated forget gate rows.
A stack is checked the same way, with one single-layer nn.LSTM / nn.GRU per
layer chained by hand in (a) and (b).
Outputs and all gradients must agree to 1e-10 (relative to the array's largest
magnitude of the pair); otherwise the script exits with status 1 and writes nothing.

This script holds the cases of one cell in every layer (SHAPES, LAYERS,
F64_CASES), the malformed inputs and the command line; the rest is in
modules in Inputs/:
  reference_cells.py     the cell table, the step cells MGUCell and CIFGCell,
                         and their torch.nn mappings MGUAsGRU and CIFGAsLSTM
  reference_inputs.py    the seeded inputs, reset patterns and .npz encoding
  reference_runs.py      the references and their checks against torch.nn
  reference_features.py  the stack, reset-state and dropout presets
  philox.py              the Philox4x32-10 of the dropout masks

Usage:
  python3 test/Integration/gen_reference.py            # (re)write data/
  python3 test/Integration/gen_reference.py --verify   # check data/ is current
"""

import argparse
import io
import os
import sys
from collections import namedtuple

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from reference_cells import CELLS  # noqa: E402
from reference_features import (  # noqa: E402
    check_dropout, check_reset_states, check_stacks)
from reference_inputs import (  # noqa: E402
    Shape, make_inputs, npz_bytes, shape_of)
from reference_runs import (  # noqa: E402
    TOL, episodes, full_sequence, max_rel, stepwise)

LAYERS = (1, 2)
# (name tag, shape, reset patterns).  The tag goes between the layer count and
# the pattern in the case name; "" keeps the original names (and so the
# original seeds and files).
SHAPES = (
    ("", Shape(T=11, B=6, I=5, H=7),
     ("none", "random", "all", "t0", "runs", "nevercol")),
    ("wide", Shape(T=9, B=5, I=13, H=21), ("random", "nevercol")),
)
# Cases whose inputs are also written in float64 (<name>.f64.in.npz, the
# float32 values widened, so the .ref.npz is theirs too) for the f64 runs.
F64_CASES = ("lstm_l2_random", "gru_l2_random", "mgu_l2_random",
             "cifg_l2_random", "lstm_l2_wide_random", "gru_l2_wide_random",
             "mgu_l2_wide_random", "cifg_l2_wide_random")

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


Case = namedtuple("Case", "name cell layers pattern shape")


def case_name(cell, layers, pattern, tag=""):
    return f"{cell}_l{layers}_{tag + '_' if tag else ''}{pattern}"


def all_cases():
    for tag, shape, patterns in SHAPES:
        for cell in CELLS:
            for layers in LAYERS:
                for pattern in patterns:
                    yield Case(case_name(cell, layers, pattern, tag), cell,
                               layers, pattern, shape)


# --------------------------------------------------------------------------
# Malformed inputs for errors.test
# --------------------------------------------------------------------------

def bad_files():
    _, shape, _ = SHAPES[0]
    d = make_inputs(Case(case_name("lstm", 1, "random"), "lstm", 1, "random",
                         shape))
    T, B, I, _ = shape
    out = {}
    missing = {k: v for k, v in d.items() if k != "weight_hh_l0"}
    out["bad_missing.npz"] = missing
    rank = dict(d)
    rank["x"] = d["x"].reshape(T * B, I)
    out["bad_rank.npz"] = rank
    dtype = dict(d)
    dtype["x"] = d["x"].astype(np.float64)
    out["bad_dtype.npz"] = dtype
    return out


NOT_NPZ = b"this is not an npz file, just text\n"


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=DATA_DIR)
    ap.add_argument("--verify", action="store_true",
                    help="recompute and check the files in --out-dir instead "
                         "of writing them")
    args = ap.parse_args()
    torch.set_num_threads(1)

    files = {}  # name -> bytes
    worst_a = worst_b = 0.0
    failed = False
    for case in all_cases():
        name, cell = case.name, case.cell
        d = make_inputs(case)
        assert shape_of(d) == case.shape, (name, shape_of(d))
        ref = stepwise(cell, d, d["is_init"])

        # (a) no resets: stepwise vs multi-layer nn.LSTM/GRU.
        no_reset = np.zeros_like(d["is_init"])
        ra, wa = max_rel(stepwise(cell, d, no_reset),
                         full_sequence(cell, d))
        # (b) with resets: stepwise vs episode-by-episode nn runs.
        ep, n_ep = episodes(cell, d)
        rb, wb = max_rel(ref, ep)
        worst_a, worst_b = max(worst_a, ra), max(worst_b, rb)
        ok = ra <= TOL and rb <= TOL
        failed |= not ok
        print(f"{name:23s} resets={int(d['is_init'].sum()):2d} "
              f"episodes={n_ep:2d} vs-nn={ra:.2e}({wa}) "
              f"vs-episodes={rb:.2e}({wb}) "
              f"{'ok' if ok else 'FAIL'}")
        files[name + ".in.npz"] = npz_bytes(d)
        files[name + ".ref.npz"] = npz_bytes(ref)
        if name in F64_CASES:
            files[name + ".f64.in.npz"] = npz_bytes(
                {k: v.astype(np.float64) if v.dtype == np.float32 else v
                 for k, v in d.items()})
    failed |= not check_stacks(files)
    failed |= not check_dropout(files)
    failed |= not check_reset_states(files)
    for fname, arrays in bad_files().items():
        files[fname] = npz_bytes(arrays)
    files["bad_notnpz.npz"] = NOT_NPZ

    print(f"max relative difference: vs nn.LSTM/GRU {worst_a:.3e}, "
          f"vs episode runs {worst_b:.3e} (tolerance {TOL:g})")
    if failed:
        print("SELF-CHECK FAILED; nothing written", file=sys.stderr)
        return 1

    if args.verify:
        stale = []
        for fname, data in sorted(files.items()):
            path = os.path.join(args.out_dir, fname)
            if not os.path.exists(path):
                stale.append(fname + " (missing)")
                continue
            if fname.endswith(".ref.npz"):
                old = np.load(path)
                new = np.load(io.BytesIO(data))
                if sorted(old.files) != sorted(new.files) or any(
                        old[k].shape != new[k].shape or
                        not np.allclose(old[k], new[k], rtol=1e-12,
                                        atol=1e-12) for k in new.files):
                    stale.append(fname)
            else:
                with open(path, "rb") as f:
                    if f.read() != data:
                        stale.append(fname)
        if stale:
            print("stale: " + ", ".join(stale), file=sys.stderr)
            return 1
        print(f"{len(files)} files up to date in {args.out_dir}")
        return 0

    os.makedirs(args.out_dir, exist_ok=True)
    total = 0
    for fname, data in sorted(files.items()):
        with open(os.path.join(args.out_dir, fname), "wb") as f:
            f.write(data)
        total += len(data)
    print(f"wrote {len(files)} files, {total} bytes, to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
