"""The float64 references of gen_reference.py and the independent checks
of them: the step-by-step reference of a case with the reset rule
(stepwise), multi-layer torch.nn.LSTM / nn.GRU runs without resets
(full_sequence) and episode by episode (episodes), the same three for
stacks of layers of different cells (stack_stepwise, stack_sequence,
stack_episodes), and the comparison of two results (max_rel, TOL)."""

import numpy as np
import torch

from reference_cells import (AS_TORCH, HAS_C, STATES, STEP_CELLS,
                             grad_or_zero, param_names, t64)
from reference_inputs import shape_of

# The largest relative difference (max_rel) a check allows.
TOL = 1e-10


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
