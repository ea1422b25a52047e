"""The fuzz oracle's float64 reference (torch_fuzz_oracle.py judges a call
of rnnc by it).

`interpret` reads a call as torch.nn's interface and rnnc's documented
extensions take it, into time-major float64 leaves, or refuses an input
that means nothing there (`Meaningless`: a non-tensor, a rank other than 2
or 3, no steps, a non-floating input, states of the wrong shape, a
non-bool is_init, reset states of the wrong form, ...). `reference` runs
it step by step with torch.nn.LSTMCell / GRUCell (a cell torch.nn does not
have as one of them on mapped weights: the MGU as a GRUCell, the CIFG as
an LSTMCell; see `_NN_ROWS`), zeroing the state entering step t of column
b where is_init[t, b] is set, or entering the given reset state.
"""

import torch
from torch import nn

from rnnc import _cells

from torch_fuzz_cases import CELLS, LSTM_LIKE


class Meaningless(Exception):
    """An input that means nothing in torch.nn's interface and rnnc's
    documented extensions."""


def _floating(t, name, shape=None):
    if not isinstance(t, torch.Tensor):
        raise Meaningless(f"{name} is not a tensor")
    if not t.is_floating_point():
        raise Meaningless(f"{name} is {t.dtype}")
    if t.device.type != "cpu":
        raise Meaningless(f"{name} is on {t.device}")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise Meaningless(f"{name} has shape {list(t.shape)}, not "
                          f"{list(shape)}")
    return t


def _leaf(t):
    """A float64 leaf with t's values (the reference's argument)."""
    return t.detach().to(torch.float64).requires_grad_(True)


def interpret(cell, module, bias, batch_first, x, hx, is_init, reset):
    """The call as the reference runs it: time-major float64 leaves, or
    Meaningless. Returns a dict with x [T, B, I], h0/c0 [L, B, H], is_init
    [T, B] (or None), hr/cr (step [L, T, B, H] or column [L, B, H]), the
    form, `leaves` (call tensor -> reference leaf) and `unbatched`."""
    I, H, L = module.input_size, module.hidden_size, module.num_layers
    if not isinstance(x, torch.Tensor):
        raise Meaningless("input is not a tensor")
    _floating(x, "input")
    if x.dim() not in (2, 3):
        raise Meaningless(f"input has rank {x.dim()}")
    unbatched = x.dim() == 2
    leaves = {}

    def leaf(t):
        if id(t) not in leaves:
            leaves[id(t)] = (t, _leaf(t))
        return leaves[id(t)][1]

    xr = leaf(x)
    if unbatched:
        xr = xr.unsqueeze(1)
    elif batch_first:
        xr = xr.transpose(0, 1)
    T, B, F = xr.shape
    if T == 0:
        raise Meaningless("input has no steps")
    if F != I:
        raise Meaningless(f"input has {F} features, not {I}")
    for p in module.parameters():
        _floating(p, "a parameter")
    sshape = (L, H) if unbatched else (L, B, H)

    def as_batched(t):
        return t.unsqueeze(-2) if unbatched else t

    if hx is None:
        h0 = torch.zeros(L, B, H, dtype=torch.float64)
        c0 = torch.zeros(L, B, H, dtype=torch.float64)
    elif cell in LSTM_LIKE:
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise Meaningless(f"hx of {cell} (two states) is not a pair")
        h0 = as_batched(leaf(_floating(hx[0], "h0", sshape)))
        c0 = as_batched(leaf(_floating(hx[1], "c0", sshape)))
    else:
        h0 = as_batched(leaf(_floating(hx, "h0", sshape)))
        c0 = None

    init = None
    if is_init is not None:
        if not isinstance(is_init, torch.Tensor) or \
                is_init.dtype != torch.bool or is_init.device.type != "cpu":
            raise Meaningless("is_init is not a bool tensor")
        want = (T,) if unbatched else ((B, T) if batch_first else (T, B))
        if tuple(is_init.shape) != want:
            raise Meaningless(f"is_init has shape {list(is_init.shape)}")
        init = is_init.reshape(T, 1) if unbatched else (
            is_init.t() if batch_first else is_init)

    hr = cr = None
    form = "zero"
    if reset is not None:
        if is_init is None:
            raise Meaningless("reset_state without is_init: no step enters "
                              "it")
        if cell in LSTM_LIKE:
            if not isinstance(reset, (tuple, list)) or len(reset) != 2:
                raise Meaningless(f"reset_state of {cell} (two states) is "
                                  f"not a pair")
            given = list(reset)
        else:
            if not isinstance(reset, torch.Tensor):
                raise Meaningless("reset_state is not a tensor")
            given = [reset]
        if unbatched:
            step, column = (L, T, H), (L, H)
        else:
            step = (L, B, T, H) if batch_first else (L, T, B, H)
            column = (L, B, H)
        forms, states = set(), []
        for t in given:
            _floating(t, "a reset state")
            if tuple(t.shape) == step:
                forms.add("step")
                r = leaf(t)
                if unbatched:
                    r = r.unsqueeze(2)
                elif batch_first:
                    r = r.transpose(1, 2)
            elif tuple(t.shape) == column:
                forms.add("column")
                r = as_batched(leaf(t))
            else:
                raise Meaningless(f"a reset state has shape "
                                  f"{list(t.shape)}")
            states.append(r)
        if len(forms) != 1:
            raise Meaningless("reset states of two forms")
        form = forms.pop()
        hr = states[0]
        cr = states[1] if cell in LSTM_LIKE else None
    return dict(x=xr, h0=h0, c0=c0, is_init=init, hr=hr, cr=cr, form=form,
                leaves=leaves, unbatched=unbatched, T=T, B=B)


def reference_params(cell, module, bias):
    """float64 leaves of the module's parameters, by name (zero biases
    without bias)."""
    out = {}
    for name, p in module.named_parameters():
        out[name] = _leaf(p)
    if not bias:
        for k in range(module.num_layers):
            for kind in ("bias_ih", "bias_hh"):
                out[f"{kind}_l{k}"] = torch.zeros(
                    module._gates * module.hidden_size, dtype=torch.float64)
    return out


# Each cell's gate blocks (of H rows) as those of the torch.nn cell that
# runs it (LSTMCell for a cell of two states, GRUCell for one), applied to
# every weight and bias; None: the cell is torch.nn's own. The MGU is the
# GRU with r = f and z = 1 - f = sigmoid(-a_f): its f, n rows give r = f,
# z = -f, n. The CIFG (f, g, o) is the LSTM with i = 1 - f = sigmoid(-a_f):
# i = -f, f, g, o.
_NN_ROWS = {
    "lstm": None,
    "gru": None,
    "mgu": lambda f, n: (f, -f, n),
    "cifg": lambda f, g, o: (-f, f, g, o),
}
assert set(_NN_ROWS) == set(CELLS), (
    f"the fuzz oracle has no torch.nn form of a cell of the dialect: "
    f"_NN_ROWS in torch_fuzz_reference.py has {sorted(_NN_ROWS)}, the dialect "
    f"{sorted(CELLS)}")


def _nn_rows(cell, w):
    """A weight or bias of the cell in the rows of the torch.nn cell that
    runs it (`_NN_ROWS`)."""
    rows = _NN_ROWS[cell]
    if rows is None:
        return w
    return torch.cat(rows(*w.chunk(_cells.BY_NAME[cell].gates, 0)), 0)


def reference(cell, params, r):
    """y [T, B, H], h_n, c_n [L, B, H] in float64, step by step with
    torch.nn.LSTMCell / GRUCell (on the weights in its rows)."""
    x, init = r["x"], r["is_init"]
    T, B = r["T"], r["B"]
    L = r["h0"].shape[0]
    H = r["h0"].shape[2]
    h = list(r["h0"].unbind(0))
    two = cell in LSTM_LIKE
    c = list(r["c0"].unbind(0)) if two else None
    cells = []
    for k in range(L):
        width = x.shape[2] if k == 0 else H
        module = (nn.LSTMCell if two else nn.GRUCell)(
            width, H, dtype=torch.float64)
        weights = {kind: _nn_rows(cell, params[f"{kind}_l{k}"])
                   for kind in ("weight_ih", "weight_hh", "bias_ih",
                                "bias_hh")}
        cells.append((module, weights))
    ys = []
    for t in range(T):
        if init is not None:
            m = init[t].reshape(B, 1)
            for k in range(L):
                if r["form"] == "zero":
                    rh = torch.zeros_like(h[k])
                    rc = torch.zeros_like(h[k])
                elif r["form"] == "step":
                    rh = r["hr"][k, t]
                    rc = r["cr"][k, t] if two else None
                else:
                    rh = r["hr"][k]
                    rc = r["cr"][k] if two else None
                h[k] = torch.where(m, rh, h[k])
                if two:
                    c[k] = torch.where(m, rc, c[k])
        inp = x[t]
        for k, (module, weights) in enumerate(cells):
            if two:
                h[k], c[k] = torch.func.functional_call(
                    module, weights, (inp, (h[k], c[k])))
            else:
                h[k] = torch.func.functional_call(module, weights,
                                                  (inp, h[k]))
            inp = h[k]
        ys.append(inp)
    y = torch.stack(ys)
    return y, torch.stack(h), (torch.stack(c) if two else None)
