#!/usr/bin/env python3
"""Generate float64 PyTorch golden files for the rnnc integration tests.

Contract (time-major):
  x [T,B,I], is_init [T,B] (bool), h0, c0 [L,B,H]; outputs y [T,B,H] (last
  layer), h_n, c_n [L,B,H].  Weights use PyTorch's layout and gate order
  (LSTM i,f,g,o; GRU r,z,n; MGU f,n; CIFG f,g,o).  The state entering step
  t for batch column b is 0 if is_init[t,b], else the state left by step t-1
  (h0/c0 for t=0).  Then exactly torch.nn.LSTMCell / GRUCell math, for the
  minimal gated unit (rnn.mgu; MGUCell below)
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

Usage:
  python3 test/Integration/gen_reference.py            # (re)write data/
  python3 test/Integration/gen_reference.py --verify   # check data/ is current
"""

import argparse
import io
import os
import runpy
import sys
import zipfile
import zlib
from collections import namedtuple

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
import philox  # noqa: E402 (the dropout masks' Philox, shared with tests)

Shape = namedtuple("Shape", "T B I H")

# The dialect's cells, from the cell table generated from RNNCells.td.
_TABLE = runpy.run_path(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "rnnc",
    "_cells.py"))["CELLS"]
CELLS = tuple(c.name for c in _TABLE)
GATES = {c.name: c.gates for c in _TABLE}
# Each cell's states: h, and for some a cell state c (c0, c_n).
STATES = {c.name: c.states for c in _TABLE}
HAS_C = tuple(c.name for c in _TABLE if "c" in c.states)
LAYERS = (1, 2)
# (name tag, shape, reset patterns).  The tag goes between the layer count and
# the pattern in the case name; "" keeps the original names (and so the
# original seeds and files).
SHAPES = (
    ("", Shape(T=11, B=6, I=5, H=7),
     ("none", "random", "all", "t0", "runs", "nevercol")),
    ("wide", Shape(T=9, B=5, I=13, H=21), ("random", "nevercol")),
)
TOL = 1e-10

# Stacks of layers of different cells and hidden sizes: (name, T, B, I,
# [(cell, H) per layer], reset pattern).
# Cases whose inputs are also written in float64 (<name>.f64.in.npz, the
# float32 values widened, so the .ref.npz is theirs too) for the f64 runs.
F64_CASES = ("lstm_l2_random", "gru_l2_random", "mgu_l2_random",
             "cifg_l2_random", "lstm_l2_wide_random", "gru_l2_wide_random",
             "mgu_l2_wide_random", "cifg_l2_wide_random")

STACKS = (
    ("stack_gru10_lstm12_random", 7, 3, 5, (("gru", 10), ("lstm", 12)),
     "random"),
)

# Presets with dropout between layers: (name, T, B, I, cell, H, layers,
# reset pattern, p, [seed, offset]). The seed and offset have both 32-bit
# halves nonzero, so that every word of Philox's key and counter is tested.
DROPOUT_CASES = (
    ("lstm_l3_dropout_random", 11, 6, 5, "lstm", 7, 3, "random", 0.3,
     (0x0123456789ABCDEF, 0x0000000500000003)),
    ("gru_l2_dropout_runs", 9, 6, 4, "gru", 6, 2, "runs", 0.5,
     (0x7FFFFFFF00000001, 0x00000001FFFFFFFF)),
)

# Presets whose resets enter given states (rnn-run --reset-to): (name, T, B,
# I, cell, H, layers, reset pattern, "step" ([T, B, H] per layer and state)
# or "column" ([B, H])).
RESET_CASES = (
    ("lstm_l2_reset_step_random", 11, 6, 5, "lstm", 7, 2, "random", "step"),
    ("lstm_l1_reset_column_nevercol", 9, 5, 4, "lstm", 6, 1, "nevercol",
     "column"),
    ("gru_l2_reset_column_runs", 9, 6, 4, "gru", 6, 2, "runs", "column"),
    ("gru_l1_reset_step_all", 5, 4, 3, "gru", 5, 1, "all", "step"),
    ("mgu_l2_reset_step_random", 9, 5, 4, "mgu", 6, 2, "random", "step"),
    ("cifg_l2_reset_step_random", 9, 5, 4, "cifg", 6, 2, "random", "step"),
)

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


def shape_of(d):
    """(T, B, I, H) of an input dict."""
    T, B, I = d["x"].shape
    return Shape(T, B, I, d["h0"].shape[2])


def case_seed(name):
    # Stable across Python runs and platforms (unlike hash()).
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------

def make_is_init(pattern, shape, rng):
    T, B = shape.T, shape.B
    m = np.zeros((T, B), dtype=bool)
    if pattern == "none":
        pass
    elif pattern == "all":
        m[:] = True
    elif pattern == "t0":
        m[0, :] = True
    elif pattern == "random":
        # ~5% resets; insist on at least two, one of them after t=0.
        while True:
            m = rng.random((T, B)) < 0.05
            if m.sum() >= 2 and m[1:].any():
                break
    elif pattern == "runs":
        # Some columns reset on several consecutive steps.
        m[3:7, 1] = True   # a run in the middle
        m[0:3, 3] = True   # a run from t=0
        m[8:, 4] = True    # a run to the end
        m[5, 5] = True     # an isolated reset for contrast
    elif pattern == "nevercol":
        # ~10% random resets, but one column never resets.
        never = int(rng.integers(B))
        while True:
            m = rng.random((T, B)) < 0.10
            m[:, never] = False
            others = [b for b in range(B) if b != never]
            # Every other column resets at least once after t=0.
            if all(m[1:, b].any() for b in others):
                break
        assert not m[:, never].any()
    else:
        raise ValueError(pattern)
    return m


def make_inputs(case):
    cell, layers, pattern = case.cell, case.layers, case.pattern
    T, B, I, H = case.shape
    rng = np.random.default_rng(case_seed(case.name))
    G = GATES[cell]
    k = 1.0 / np.sqrt(H)
    f32 = np.float32

    def u(lo, hi, shape):
        return rng.uniform(lo, hi, size=shape).astype(f32)

    d = {}
    d["x"] = u(-1, 1, (T, B, I))
    d["h0"] = u(-0.5, 0.5, (layers, B, H))
    if cell in HAS_C:
        d["c0"] = u(-0.5, 0.5, (layers, B, H))
    for l in range(layers):
        in_l = I if l == 0 else H
        d[f"weight_ih_l{l}"] = u(-k, k, (G * H, in_l))
        d[f"weight_hh_l{l}"] = u(-k, k, (G * H, H))
        d[f"bias_ih_l{l}"] = u(-k, k, (G * H,))
        d[f"bias_hh_l{l}"] = u(-k, k, (G * H,))
    d["grad_y"] = u(-1, 1, (T, B, H))
    d["grad_h_n"] = u(-1, 1, (layers, B, H))
    if cell in HAS_C:
        d["grad_c_n"] = u(-1, 1, (layers, B, H))
    d["is_init"] = make_is_init(pattern, case.shape, rng)
    return d


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def t64(a, grad=False):
    t = torch.from_numpy(np.asarray(a, dtype=np.float64).copy())
    if grad:
        t.requires_grad_(True)
    return t


def grad_or_zero(t):
    return t.grad if t.grad is not None else torch.zeros_like(t)


def param_names(layers):
    for l in range(layers):
        for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            yield f"{p}_l{l}", l, p


# --------------------------------------------------------------------------
# The minimal gated unit: its cell, and the same layers through nn.GRU
# --------------------------------------------------------------------------

class GatedCell(torch.nn.Module):
    """A cell's float64 parameters in PyTorch's names and layout, `gates`
    gate blocks of width H."""

    def __init__(self, gates, input_size, hidden_size):
        super().__init__()
        G, H = gates * hidden_size, hidden_size
        for name, shape in (("weight_ih", (G, input_size)),
                            ("weight_hh", (G, H)), ("bias_ih", (G,)),
                            ("bias_hh", (G,))):
            self.register_parameter(name, torch.nn.Parameter(
                torch.zeros(shape, dtype=torch.float64)))


class MGUCell(GatedCell):
    """The MGU step of the contract above, in float64."""

    def __init__(self, input_size, hidden_size):
        super().__init__(2, input_size, hidden_size)

    def forward(self, x, h):
        xi = x @ self.weight_ih.T + self.bias_ih
        hh = h @ self.weight_hh.T + self.bias_hh
        xf, xn = xi.chunk(2, -1)
        hf, hn = hh.chunk(2, -1)
        f = torch.sigmoid(xf + hf)
        n = torch.tanh(xn + f * hn)
        return (1 - f) * h + f * n


def gru_of_mgu(w):
    """GRU weights or biases (rows r, z, n) of MGU ones (rows f, n)."""
    f, n = w.chunk(2, 0)
    return torch.cat([f, -f, n], 0)


class MappedNN(torch.nn.Module):
    """A multi-layer cell run by the torch.nn module `module_cls`:
    parameters with its names and the cell's shapes (`gates` gate blocks),
    mapped to its own by `mapping` on every call, so that autograd carries
    the gradients back through the map."""

    def __init__(self, module_cls, gates, mapping, input_size, hidden_size,
                 num_layers):
        super().__init__()
        self.nn = module_cls(input_size, hidden_size, num_layers=num_layers,
                             dtype=torch.float64)
        self.mapping = mapping
        for key, l, _ in param_names(num_layers):
            w = getattr(self.nn, key)
            self.register_parameter(key, torch.nn.Parameter(
                torch.zeros(gates * hidden_size, *w.shape[1:],
                            dtype=torch.float64)))

    def forward(self, x, state):
        mapped = {key: self.mapping(getattr(self, key))
                  for key, _, _ in param_names(self.nn.num_layers)}
        return torch.func.functional_call(self.nn, mapped, (x, state))


def MGUAsGRU(input_size, hidden_size, num_layers):
    """Multi-layer MGU run by nn.GRU (gru_of_mgu)."""
    return MappedNN(torch.nn.GRU, 2, gru_of_mgu, input_size, hidden_size,
                    num_layers)


# --------------------------------------------------------------------------
# The LSTM with coupled input and forget gates: its cell, and the same layers
# through nn.LSTM
# --------------------------------------------------------------------------

class CIFGCell(GatedCell):
    """The CIFG LSTM step of the contract above, in float64, with
    nn.LSTMCell's interface."""

    def __init__(self, input_size, hidden_size):
        super().__init__(3, input_size, hidden_size)

    def forward(self, x, state):
        h, c = state
        pre = (x @ self.weight_ih.T + self.bias_ih
               + h @ self.weight_hh.T + self.bias_hh)
        a_f, a_g, a_o = pre.chunk(3, -1)
        f, g, o = torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
        c = f * c + (1 - f) * g
        return o * torch.tanh(c), c


def lstm_of_cifg(w):
    """LSTM weights or biases (rows i, f, g, o) of CIFG ones (rows f, g,
    o): i = 1 - f = sigmoid(-a_f)."""
    f, g, o = w.chunk(3, 0)
    return torch.cat([-f, f, g, o], 0)


def CIFGAsLSTM(input_size, hidden_size, num_layers):
    """Multi-layer CIFG LSTM run by nn.LSTM (lstm_of_cifg)."""
    return MappedNN(torch.nn.LSTM, 3, lstm_of_cifg, input_size, hidden_size,
                    num_layers)


# The cells without a torch.nn cell, stepped by their own float64 cell and
# checked through a torch.nn module on mapped weights.
STEP_CELLS = {"mgu": MGUCell, "cifg": CIFGCell}
AS_TORCH = {"mgu": MGUAsGRU, "cifg": CIFGAsLSTM}
_missing = set(CELLS) - {"lstm", "gru"} - set(STEP_CELLS)
if _missing:
    sys.exit(f"gen_reference.py: no reference for the cells "
             f"{', '.join(sorted(_missing))} of the dialect (RNNCells.td)")


# --------------------------------------------------------------------------
# Reference: step-by-step with LSTMCell / GRUCell
# --------------------------------------------------------------------------

def stepwise(cell, d, is_init):
    """is_init overrides d['is_init'] (used for the no-reset check)."""
    lstm = cell in HAS_C
    layers = d["h0"].shape[0]
    T, _, I, H = shape_of(d)
    x = t64(d["x"], True)
    h0 = t64(d["h0"], True)
    c0 = t64(d["c0"], True) if lstm else None
    cells = []
    for l in range(layers):
        in_l = I if l == 0 else H
        if cell in STEP_CELLS:
            m = STEP_CELLS[cell](in_l, H)
        else:
            m = (torch.nn.LSTMCell if lstm else torch.nn.GRUCell)(
                in_l, H, bias=True, dtype=torch.float64)
        with torch.no_grad():
            for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(m, p).copy_(t64(d[f"{p}_l{l}"]))
        cells.append(m)
    keep = t64(~is_init).unsqueeze(-1)  # [T,B,1], 1.0 where state carries

    inp = [x[t] for t in range(T)]
    h_n, c_n = [], []
    for l in range(layers):
        h = h0[l]
        c = c0[l] if lstm else None
        out = []
        for t in range(T):
            h = h * keep[t]
            if lstm:
                c = c * keep[t]
                h, c = cells[l](inp[t], (h, c))
            else:
                h = cells[l](inp[t], h)
            out.append(h)
        inp = out
        h_n.append(h)
        c_n.append(c)
    y = torch.stack(inp)
    h_n = torch.stack(h_n)
    loss = (y * t64(d["grad_y"])).sum() + (h_n * t64(d["grad_h_n"])).sum()
    if lstm:
        c_n = torch.stack(c_n)
        loss = loss + (c_n * t64(d["grad_c_n"])).sum()
    loss.backward()

    r = {"y": y.detach(), "h_n": h_n.detach()}
    if lstm:
        r["c_n"] = c_n.detach()
    r["grad_x"] = grad_or_zero(x)
    r["grad_h0"] = grad_or_zero(h0)
    if lstm:
        r["grad_c0"] = grad_or_zero(c0)
    for key, l, p in param_names(layers):
        r[f"grad_{key}"] = grad_or_zero(getattr(cells[l], p))
    return {k: v.numpy() for k, v in r.items()}


# --------------------------------------------------------------------------
# Independent checks with torch.nn.LSTM / torch.nn.GRU
# --------------------------------------------------------------------------

def make_module(cell, d):
    """Multi-layer nn.LSTM / nn.GRU (the MGU through nn.GRU) holding the
    case's weights under nn.LSTM's names."""
    layers = d["h0"].shape[0]
    _, _, I, H = shape_of(d)
    if cell in AS_TORCH:
        m = AS_TORCH[cell](I, H, layers)
    else:
        m = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(
            I, H, num_layers=layers, bias=True, batch_first=False,
            dtype=torch.float64)
    with torch.no_grad():
        for key, _, _ in param_names(layers):
            getattr(m, key).copy_(t64(d[key]))
    return m


def collect(cell, m, x, h0, c0, y, h_n, c_n):
    lstm = cell in HAS_C
    layers = h0.shape[0]
    r = {"y": y, "h_n": h_n}
    if lstm:
        r["c_n"] = c_n
    r["grad_x"] = grad_or_zero(x)
    r["grad_h0"] = grad_or_zero(h0)
    if lstm:
        r["grad_c0"] = grad_or_zero(c0)
    for key, _, _ in param_names(layers):
        r[f"grad_{key}"] = grad_or_zero(getattr(m, key))
    return {k: v.detach().numpy() for k, v in r.items()}


def full_sequence(cell, d):
    """Multi-layer nn.LSTM/GRU over the whole sequence, no resets."""
    lstm = cell in HAS_C
    m = make_module(cell, d)
    x = t64(d["x"], True)
    h0 = t64(d["h0"], True)
    c0 = t64(d["c0"], True) if lstm else None
    if lstm:
        y, (h_n, c_n) = m(x, (h0, c0))
    else:
        y, h_n = m(x, h0)
        c_n = None
    loss = (y * t64(d["grad_y"])).sum() + (h_n * t64(d["grad_h_n"])).sum()
    if lstm:
        loss = loss + (c_n * t64(d["grad_c_n"])).sum()
    loss.backward()
    return collect(cell, m, x, h0, c0, y, h_n, c_n)


def episodes(cell, d):
    """Each batch column split at its resets; each episode run on its own."""
    lstm = cell in HAS_C
    layers = d["h0"].shape[0]
    is_init = d["is_init"]
    T, B, _, H = shape_of(d)
    m = make_module(cell, d)
    x = t64(d["x"], True)
    h0 = t64(d["h0"], True)
    c0 = t64(d["c0"], True) if lstm else None
    gy, ghn = t64(d["grad_y"]), t64(d["grad_h_n"])
    gcn = t64(d["grad_c_n"]) if lstm else None

    y = torch.zeros(T, B, H, dtype=torch.float64)
    h_n = torch.zeros(layers, B, H, dtype=torch.float64)
    c_n = torch.zeros(layers, B, H, dtype=torch.float64)
    loss = torch.zeros((), dtype=torch.float64)
    n_episodes = 0
    for b in range(B):
        starts = [0] + [t for t in range(1, T) if is_init[t, b]]
        ends = starts[1:] + [T]
        for s, e in zip(starts, ends):
            n_episodes += 1
            xs = x[s:e, b:b + 1]
            if is_init[s, b]:
                hi = torch.zeros(layers, 1, H, dtype=torch.float64)
                ci = torch.zeros(layers, 1, H, dtype=torch.float64)
            else:
                assert s == 0
                hi = h0[:, b:b + 1].contiguous()
                ci = c0[:, b:b + 1].contiguous() if lstm else None
            if lstm:
                ys, (hs, cs) = m(xs, (hi, ci))
            else:
                ys, hs = m(xs, hi)
            loss = loss + (ys * gy[s:e, b:b + 1]).sum()
            with torch.no_grad():
                y[s:e, b:b + 1] = ys
            if e == T:
                loss = loss + (hs * ghn[:, b:b + 1]).sum()
                with torch.no_grad():
                    h_n[:, b:b + 1] = hs
                if lstm:
                    loss = loss + (cs * gcn[:, b:b + 1]).sum()
                    with torch.no_grad():
                        c_n[:, b:b + 1] = cs
    loss.backward()
    return collect(cell, m, x, h0, c0, y, h_n, c_n if lstm else None), \
        n_episodes


def max_rel(a, b):
    """Worst over all arrays of max|a-b| / max(max|a|, max|b|)."""
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    worst, where = 0.0, None
    for k in a:
        assert a[k].shape == b[k].shape, (k, a[k].shape, b[k].shape)
        scale = max(float(np.abs(a[k]).max()),
                    float(np.abs(b[k]).max()), 1e-300)
        r = float(np.abs(a[k] - b[k]).max()) / scale
        if where is None or r > worst:
            worst, where = r, k
    return worst, where


# --------------------------------------------------------------------------
# Stacks of layers of different cells and hidden sizes
# --------------------------------------------------------------------------

def stack_inputs(name, T, B, I, layers, pattern, reset_to="zero"):
    """With reset_to "step" or "column", each layer also has the states a
    reset enters, <s>_reset_l<k>: [T, B, H] or [B, H]."""
    rng = np.random.default_rng(case_seed(name))
    f32 = np.float32

    def u(lo, hi, shape):
        return rng.uniform(lo, hi, size=shape).astype(f32)

    d = {"x": u(-1, 1, (T, B, I))}
    in_l = I
    for l, (cell, H) in enumerate(layers):
        G = GATES[cell]
        k = 1.0 / np.sqrt(H)
        d[f"h0_l{l}"] = u(-0.5, 0.5, (B, H))
        if cell in HAS_C:
            d[f"c0_l{l}"] = u(-0.5, 0.5, (B, H))
        if reset_to != "zero":
            for s in STATES[cell]:
                d[f"{s}_reset_l{l}"] = u(
                    -0.5, 0.5, (T, B, H) if reset_to == "step" else (B, H))
        d[f"weight_ih_l{l}"] = u(-k, k, (G * H, in_l))
        d[f"weight_hh_l{l}"] = u(-k, k, (G * H, H))
        d[f"bias_ih_l{l}"] = u(-k, k, (G * H,))
        d[f"bias_hh_l{l}"] = u(-k, k, (G * H,))
        in_l = H
    d["grad_y"] = u(-1, 1, (T, B, in_l))
    for l, (cell, H) in enumerate(layers):
        d[f"grad_h_n_l{l}"] = u(-1, 1, (B, H))
        if cell in HAS_C:
            d[f"grad_c_n_l{l}"] = u(-1, 1, (B, H))
    d["is_init"] = make_is_init(pattern, Shape(T, B, I, in_l), rng)
    return d


class StackLeaves:
    """The float64 leaves of a stack's inputs, and its loss and results."""

    def __init__(self, d, layers):
        self.d, self.layers = d, layers
        self.x = t64(d["x"], True)
        self.h0 = [t64(d[f"h0_l{l}"], True) for l in range(len(layers))]
        self.c0 = [t64(d[f"c0_l{l}"], True) if cell in HAS_C else None
                   for l, (cell, _) in enumerate(layers)]
        # The reset states per layer and state name, if any.
        self.reset = [{s: t64(d[f"{s}_reset_l{l}"], True)
                       for s in self.state_names(l)
                       if f"{s}_reset_l{l}" in d}
                      for l in range(len(layers))]

    def entered(self, l, s, t, b, H):
        """State s of layer l that a reset at step t of column b enters, as
        [1, 1, H] (a slice of the reset state's leaf, or zeros)."""
        r = self.reset[l].get(s)
        if r is None:
            return torch.zeros(1, 1, H, dtype=torch.float64)
        return (r[t, b] if r.dim() == 3 else r[b]).reshape(1, 1, H)

    def enter(self, l, s, t, init, v):
        """v ([B, H], state s of layer l entering step t) where no episode
        starts at step t, else the reset state (zero without one)."""
        r = self.reset[l].get(s)
        if r is None:
            return v * t64(~init[t]).unsqueeze(-1)
        return torch.where(torch.from_numpy(init[t]).unsqueeze(-1),
                           r[t] if r.dim() == 3 else r, v)

    def state_names(self, l):
        return STATES[self.layers[l][0]]

    def loss(self, y, finals):
        """finals[l]: the layer's final (h,) or (h, c) over the batch."""
        loss = (y * t64(self.d["grad_y"])).sum()
        for l, states in enumerate(finals):
            for s, v in zip(self.state_names(l), states):
                loss = loss + (v * t64(self.d[f"grad_{s}_n_l{l}"])).sum()
        return loss

    def results(self, y, finals, params):
        """params[l]: the layer's module, whose parameters (with the
        single-layer names weight_ih_l0, ... of nn.LSTM or the cell names
        weight_ih, ...) are read with `pname`."""
        r = {"y": y.detach()}
        for l, states in enumerate(finals):
            for s, v in zip(self.state_names(l), states):
                r[f"{s}_n_l{l}"] = v.detach()
        r["grad_x"] = grad_or_zero(self.x)
        for l in range(len(self.layers)):
            r[f"grad_h0_l{l}"] = grad_or_zero(self.h0[l])
            if self.c0[l] is not None:
                r[f"grad_c0_l{l}"] = grad_or_zero(self.c0[l])
            for s, v in self.reset[l].items():
                r[f"grad_{s}_reset_l{l}"] = grad_or_zero(v)
            for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                m, pname = params[l]
                r[f"grad_{p}_l{l}"] = grad_or_zero(getattr(m, pname(p)))
        return {k: v.numpy() for k, v in r.items()}


def stack_modules(d, layers, kind):
    """One float64 module per layer (kind "cell": nn.LSTMCell/GRUCell; kind
    "seq": single-layer nn.LSTM/GRU) holding the layer's weights, with the
    name of each weight in it."""
    mods = []
    in_l = d["x"].shape[2]
    for l, (cell, H) in enumerate(layers):
        lstm = cell == "lstm"
        if kind == "cell":
            m = (STEP_CELLS[cell](in_l, H) if cell in STEP_CELLS else
                 (torch.nn.LSTMCell if lstm else torch.nn.GRUCell)(
                     in_l, H, bias=True, dtype=torch.float64))
            pname = lambda p: p
        else:
            m = (AS_TORCH[cell](in_l, H, 1) if cell in AS_TORCH else
                 (torch.nn.LSTM if lstm else torch.nn.GRU)(
                     in_l, H, num_layers=1, bias=True, dtype=torch.float64))
            pname = lambda p: p + "_l0"
        with torch.no_grad():
            for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(m, pname(p)).copy_(t64(d[f"{p}_l{l}"]))
        mods.append((m, pname))
        in_l = H
    return mods


def stack_stepwise(d, layers, is_init, drops=None):
    """The reference: step by step with the cells, resets on every layer;
    drops[l] ([T, B, H] float64: 0 or 1 / (1 - p)) multiplies layer l's
    output before layer l + 1 reads it."""
    leaves = StackLeaves(d, layers)
    mods = stack_modules(d, layers, "cell")
    inp = [leaves.x[t] for t in range(d["x"].shape[0])]
    finals = []
    for l, (cell, _) in enumerate(layers):
        h, c = leaves.h0[l], leaves.c0[l]
        out = []
        for t in range(len(inp)):
            h = leaves.enter(l, "h", t, is_init, h)
            if cell in HAS_C:
                c = leaves.enter(l, "c", t, is_init, c)
                h, c = mods[l][0](inp[t], (h, c))
            else:
                h = mods[l][0](inp[t], h)
            out.append(h)
        inp = out
        if drops is not None and l < len(layers) - 1:
            inp = [o * drops[l][t] for t, o in enumerate(out)]
        finals.append((h, c) if cell in HAS_C else (h,))
    y = torch.stack(inp)
    leaves.loss(y, finals).backward()
    return leaves.results(y, finals, mods)


def stack_sequence(d, layers, drops=None):
    """(a) no resets: single-layer nn.LSTM/GRU modules chained (with the
    dropout multipliers between them)."""
    leaves = StackLeaves(d, layers)
    mods = stack_modules(d, layers, "seq")
    inp, finals = leaves.x, []
    for l, (cell, _) in enumerate(layers):
        m = mods[l][0]
        if cell in HAS_C:
            inp, (h, c) = m(inp, (leaves.h0[l][None], leaves.c0[l][None]))
            finals.append((h[0], c[0]))
        else:
            inp, h = m(inp, leaves.h0[l][None])
            finals.append((h[0],))
        if drops is not None and l < len(layers) - 1:
            inp = inp * drops[l]
    leaves.loss(inp, finals).backward()
    return leaves.results(inp, finals, mods)


def stack_episodes(d, layers, drops=None):
    """(b) each batch column split at its resets, each episode run on its own
    through the chained single-layer modules (with the episode's slice of
    the dropout multipliers between them)."""
    leaves = StackLeaves(d, layers)
    mods = stack_modules(d, layers, "seq")
    is_init = d["is_init"]
    T, B, _ = d["x"].shape
    loss = torch.zeros((), dtype=torch.float64)
    y = torch.zeros(T, B, layers[-1][1], dtype=torch.float64)
    finals = [[torch.zeros(B, H, dtype=torch.float64)
               for _ in range(2 if cell in HAS_C else 1)]
              for cell, H in layers]
    for b in range(B):
        starts = [0] + [t for t in range(1, T) if is_init[t, b]]
        for s, e in zip(starts, starts[1:] + [T]):
            inp, ends = leaves.x[s:e, b:b + 1], []
            for l, (cell, H) in enumerate(layers):
                m = mods[l][0]
                fresh = bool(is_init[s, b])
                h = (leaves.entered(l, "h", s, b, H) if fresh
                     else leaves.h0[l][None, b:b + 1])
                if cell in HAS_C:
                    c = (leaves.entered(l, "c", s, b, H) if fresh
                         else leaves.c0[l][None, b:b + 1])
                    inp, (h, c) = m(inp, (h, c))
                    ends.append((h[0], c[0]))
                else:
                    inp, h = m(inp, h)
                    ends.append((h[0],))
                if drops is not None and l < len(layers) - 1:
                    inp = inp * drops[l][s:e, b:b + 1]
            loss = loss + (inp * t64(d["grad_y"])[s:e, b:b + 1]).sum()
            with torch.no_grad():
                y[s:e, b:b + 1] = inp
            if e == T:
                for l, states in enumerate(ends):
                    for i, (name, v) in enumerate(
                            zip(leaves.state_names(l), states)):
                        g = t64(d[f"grad_{name}_n_l{l}"])[b:b + 1]
                        loss = loss + (v * g).sum()
                        with torch.no_grad():
                            finals[l][i][b:b + 1] = v
    loss.backward()
    return leaves.results(y, finals, mods)


def check_stacks(files):
    """Adds each stack's files; returns False if a self-check fails."""
    ok = True
    for name, T, B, I, layers, pattern in STACKS:
        d = stack_inputs(name, T, B, I, layers, pattern)
        ref = stack_stepwise(d, layers, d["is_init"])
        ra, wa = max_rel(stack_stepwise(d, layers, np.zeros_like(d["is_init"])),
                         stack_sequence(d, layers))
        rb, wb = max_rel(ref, stack_episodes(d, layers))
        good = ra <= TOL and rb <= TOL
        ok &= good
        print(f"{name:23s} resets={int(d['is_init'].sum()):2d} "
              f"vs-nn={ra:.2e}({wa}) vs-episodes={rb:.2e}({wb}) "
              f"{'ok' if good else 'FAIL'}")
        files[name + ".in.npz"] = npz_bytes(d)
        files[name + ".ref.npz"] = npz_bytes(ref)
    return ok


# --------------------------------------------------------------------------
# Reset to a given state
# --------------------------------------------------------------------------

def check_reset_states(files):
    """Adds each reset-state case's files (preset names: h_reset [L, T, B,
    H] or [L, B, H], ...); returns False if a self-check fails."""
    ok = True
    for name, T, B, I, cell, H, L, pattern, reset_to in RESET_CASES:
        layers = ((cell, H),) * L
        d = stack_inputs(name, T, B, I, layers, pattern, reset_to)
        ref = stack_stepwise(d, layers, d["is_init"])
        no_reset = np.zeros_like(d["is_init"])
        ra, wa = max_rel(stack_stepwise(d, layers, no_reset),
                         stack_sequence(d, layers))
        rb, wb = max_rel(ref, stack_episodes(d, layers))
        # Every reset enters its state: the gradients of the reset states
        # are nonzero exactly where (per step) or in the columns where
        # (per column) an episode starts.
        starts = d["is_init"]
        for key, g in ref.items():
            if "_reset_l" not in key:
                continue
            nonzero = np.abs(g).max(axis=-1) > 0
            want = starts if g.ndim == 3 else starts.any(axis=0)
            if not np.array_equal(nonzero, want):
                print(f"{name}: {key} is not nonzero exactly at the resets")
                ra = max(ra, 1.0)
        good = ra <= TOL and rb <= TOL
        ok &= good
        print(f"{name:29s} resets={int(d['is_init'].sum()):2d} "
              f"vs-nn={ra:.2e}({wa}) vs-episodes={rb:.2e}({wb}) "
              f"{'ok' if good else 'FAIL'}")
        inputs = stacked_names(d, L)
        files[name + ".in.npz"] = npz_bytes(inputs)
        files[name + ".ref.npz"] = npz_bytes(stacked_names(ref, L))
        # The same inputs in float64, for the f64 runs and finite
        # differences (the reference is theirs too).
        files[name + ".f64.in.npz"] = npz_bytes(
            {k: v.astype(np.float64) if v.dtype == np.float32 else v
             for k, v in inputs.items()})
    return ok


# --------------------------------------------------------------------------
# Dropout between layers: Philox4x32-10 masks (see rnn.dropout)
# --------------------------------------------------------------------------

def dropout_keep(T, B, H, p, layer, seed, offset):
    """The mask of rnn.dropout: True where element (t, b, h) is kept."""
    return np.array([not philox.dropped(n, p, layer, seed, offset)
                     for n in range(T * B * H)]).reshape(T, B, H)


def stacked_names(arrays, num_layers):
    """A stack's per-layer arrays (h0_l0, h0_l1, ...) stacked as rnn-run
    names a preset's ([L, B, H] h0, ...); other arrays unchanged."""
    out = dict(arrays)
    for base in ("h0", "c0", "h_n", "c_n", "grad_h0", "grad_c0", "grad_h_n",
                 "grad_c_n", "h_reset", "c_reset", "grad_h_reset",
                 "grad_c_reset"):
        keys = [f"{base}_l{l}" for l in range(num_layers)]
        if all(k in arrays for k in keys):
            out[base] = np.stack([arrays[k] for k in keys])
            for k in keys:
                del out[k]
    return out


def check_dropout(files):
    """Adds each dropout case's files; returns False if a self-check fails."""
    ok = True
    for c, k in philox.check_known_answers():
        print(f"Philox known answer {c} {k} not reproduced FAIL")
        ok = False
    for name, T, B, I, cell, H, L, pattern, p, (seed, offset) in \
            DROPOUT_CASES:
        layers = ((cell, H),) * L
        d = stack_inputs(name, T, B, I, layers, pattern)
        keeps = [dropout_keep(T, B, H, p, l, seed, offset)
                 for l in range(L - 1)]
        drops = [t64(k / (1.0 - p)) for k in keeps]
        ref = stack_stepwise(d, layers, d["is_init"], drops)
        no_reset = np.zeros_like(d["is_init"])
        ra, wa = max_rel(stack_stepwise(d, layers, no_reset, drops),
                         stack_sequence(d, layers, drops))
        rb, wb = max_rel(ref, stack_episodes(d, layers, drops))
        dropped = sum(int((~k).sum()) for k in keeps)
        good = ra <= TOL and rb <= TOL
        ok &= good
        print(f"{name:23s} resets={int(d['is_init'].sum()):2d} "
              f"dropped={dropped}/{(L - 1) * T * B * H} "
              f"vs-nn={ra:.2e}({wa}) vs-episodes={rb:.2e}({wb}) "
              f"{'ok' if good else 'FAIL'}")
        inputs = stacked_names(d, L)
        inputs["rng"] = np.array([seed, offset], dtype=np.int64)
        files[name + ".in.npz"] = npz_bytes(inputs)
        files[name + ".ref.npz"] = npz_bytes(stacked_names(ref, L))
        # Inference drops nothing.
        plain = stack_stepwise(d, layers, d["is_init"])
        files[name + ".infer.ref.npz"] = npz_bytes(
            {k: v for k, v in stacked_names(plain, L).items()
             if not k.startswith("grad_")})
    return ok


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


def npz_bytes(arrays):
    """What np.savez (uncompressed) writes, but with a fixed member timestamp
    so that regenerating the files is byte-for-byte reproducible.  Mirrors
    numpy's _savez: ZIP_STORED members named <key>.npy, forced zip64."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, mode="w", compression=zipfile.ZIP_STORED,
                         allowZip64=True) as zf:
        for key, val in arrays.items():
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            with zf.open(info, "w", force_zip64=True) as fid:
                np.lib.format.write_array(fid, np.asanyarray(val),
                                          allow_pickle=False)
    return buf.getvalue()


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
