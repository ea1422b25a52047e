"""The float64 cell references of gen_reference.py: the dialect's cells
(from the cell table python/rnnc/_cells.py, generated from RNNCells.td), the
step cells of the cells torch.nn lacks (MGUCell, CIFGCell), the multi-layer
torch.nn modules that run them on mapped weights (MGUAsGRU, CIFGAsLSTM), and
the float64 tensor helpers shared by the references."""

import os
import runpy
import sys

import numpy as np
import torch

# The dialect's cells, from the cell table generated from RNNCells.td.
_TABLE = runpy.run_path(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python",
    "rnnc", "_cells.py"))["CELLS"]
CELLS = tuple(c.name for c in _TABLE)
GATES = {c.name: c.gates for c in _TABLE}
# Each cell's states: h, and for some a cell state c (c0, c_n).
STATES = {c.name: c.states for c in _TABLE}
HAS_C = tuple(c.name for c in _TABLE if "c" in c.states)


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
