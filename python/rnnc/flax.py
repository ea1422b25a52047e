"""rnnc's recurrent layers as Flax linen modules, and Flax's cells'
parameters in rnnc's names.

    rnn = rnnc.flax.GRU(hidden_size=128, num_layers=1)
    carry = rnn.initialize_carry(batch_size)
    params = rnn.init(key, carry, (x, resets))
    carry, y = rnn.apply(params, carry, (x, resets))

The call takes the carry and `(x, resets)` as PureJaxRL's `ScannedRNN`
does: `x` `[T, B, I]`, `resets` `[T, B]` bool (a set flag starts a new
episode at that step: the state entering it is zero), and returns the new
carry and `y` `[T, B, H]`. The carry is the cell's states, each `[L, B,
H]`: `(h,)` for `GRU` and `MGU`, `(h, c)` for `LSTM` and `CIFG`. The
parameters are named as the torch.nn module's state_dict (`weight_ih_l0`,
...) and drawn as PyTorch draws them; `remat`, `storage` and `dropout` are
rnnc.jax.rnn's (dropout, between layers, draws from the "dropout" RNG
stream unless `deterministic`).

`convert(cell_params, cell)` gives the parameters of a Flax
`OptimizedLSTMCell` / `LSTMCell` (cell "lstm") or `GRUCell` ("gru"), one
tree per layer, in rnnc's names: the same function, so that weights a
user trained with Flax's cells run in rnnc. (Flax's LSTM carry is `(c,
h)`; rnnc's is `(h, c)`.)
"""

import numbers
import warnings
from collections.abc import Mapping
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn

from . import _cells
from . import jax as rnnc_jax
from ._errors import RNNCTypeError, RNNCValueError

__all__ = ["LSTM", "GRU", "MGU", "CIFG", "convert"]


class _RNN(nn.Module):
    """A stack of `num_layers` layers of the cell `_cell` (see the module's
    description)."""

    hidden_size: int
    num_layers: int = 1
    remat: str = "none"
    storage: Optional[str] = None
    dropout: float = 0.0
    deterministic: Optional[bool] = None
    param_dtype: jnp.dtype = jnp.float32

    _cell = None

    @nn.compact
    def __call__(self, carry, inputs, deterministic=None):
        self._check_sizes()
        if not isinstance(inputs, (tuple, list)) or len(inputs) != 2:
            raise RNNCTypeError(f"the inputs of {type(self).__name__} are "
                                f"a pair (x, resets), as ScannedRNN's, got "
                                f"{type(inputs).__name__}")
        x, resets = inputs
        x = jnp.asarray(x)
        if x.ndim != 3:
            raise RNNCValueError(f"x of {type(self).__name__} must be [T, B, "
                                 f"I], got shape {list(x.shape)}")
        # Checked whether or not this call drops: a module of a bad rate
        # is refused in evaluation too.
        dropout = rnnc_jax._dropout_of(self.dropout)
        rnnc_jax._check_param_dtype(
            f"{type(self).__name__}: param_dtype", self.param_dtype)
        cell = _cells.BY_NAME[self._cell]
        G, H = cell.gates, self.hidden_size
        states = cell.states
        if not isinstance(carry, (tuple, list)) or \
                len(carry) != len(states):
            raise RNNCTypeError(f"the carry of {type(self).__name__} is a "
                                f"tuple of {len(states)} arrays "
                                f"({', '.join(states)})")
        for name, state in zip(states, carry):
            shape = tuple(jnp.shape(state))
            if len(shape) != 3 or shape[0] != self.num_layers or \
                    shape[2] != H:
                raise RNNCValueError(
                    f"carry {name} must be [num_layers, B, hidden_size] = "
                    f"[{self.num_layers}, B, {H}] of this "
                    f"{type(self).__name__}, got {list(shape)}")
        # rnnc computes in its parameters' dtype: x of another is named
        # with the module's param_dtype, which the parameters come from.
        if x.dtype != np.dtype(self.param_dtype):
            raise RNNCValueError(f"x of {type(self).__name__} is {x.dtype}, "
                                 f"its param_dtype "
                                 f"{np.dtype(self.param_dtype)}: rnnc "
                                 f"computes in one dtype")
        bound = 1.0 / jnp.sqrt(H)

        def uniform(key, shape, dtype):
            return jax.random.uniform(key, shape, dtype, -bound, bound)

        params = {}
        for k in range(self.num_layers):
            width = x.shape[-1] if k == 0 else H
            for kind, shape in rnnc_jax._param_shapes(G, width, H).items():
                params[f"{kind}_l{k}"] = self.param(f"{kind}_l{k}", uniform,
                                                    shape, self.param_dtype)
        if dropout and self.num_layers == 1:
            warnings.warn(f"{type(self).__name__}: dropout applies between "
                          f"layers: with num_layers=1 and dropout={dropout} "
                          f"nothing is dropped", stacklevel=2)
        deterministic = nn.merge_param("deterministic", self.deterministic,
                                       deterministic) \
            if dropout else True
        if not isinstance(deterministic, (bool, np.bool_)):
            raise RNNCTypeError(f"{type(self).__name__}: deterministic must "
                                f"be a bool (whether dropout's masks are "
                                f"drawn: a static argument under jit), got "
                                f"{deterministic!r}")
        dropping = 0.0 if deterministic or self.num_layers == 1 else \
            dropout
        rng = self.make_rng("dropout") if dropping else None
        y, state = rnnc_jax.rnn(params, x, resets, tuple(carry),
                                cell=self._cell, remat=self.remat,
                                storage=self.storage, dropout=dropping,
                                rng=rng)
        return state, y

    def _check_sizes(self):
        for name in ("hidden_size", "num_layers"):
            size = getattr(self, name)
            # Any integer (NumPy's too, as init_params takes), not a bool.
            if isinstance(size, bool) or not isinstance(size,
                                                        numbers.Integral):
                raise RNNCTypeError(f"{type(self).__name__}: {name} must be "
                                    f"an int, got {size!r}")
            if size < 1:
                raise RNNCValueError(f"{type(self).__name__}: {name} must "
                                     f"be positive, got {size}")

    def initialize_carry(self, batch_size, dtype=None):
        """Zero states, each `[L, batch_size, H]`."""
        self._check_sizes()
        name = type(self).__name__
        if dtype is None:
            dtype = self.param_dtype
            rnnc_jax._check_param_dtype(f"{name}: param_dtype", dtype)
        else:
            rnnc_jax._check_param_dtype(f"{name}.initialize_carry: dtype",
                                        dtype)
        states = _cells.BY_NAME[self._cell].states
        shape = (self.num_layers, batch_size, self.hidden_size)
        return tuple(jnp.zeros(shape, dtype) for _ in states)


class LSTM(_RNN):
    """rnnc's LSTM layers (carry `(h, c)`)."""
    _cell = "lstm"


class GRU(_RNN):
    """rnnc's GRU layers (carry `(h,)`)."""
    _cell = "gru"


class MGU(_RNN):
    """rnnc's minimal gated unit layers (carry `(h,)`)."""
    _cell = "mgu"


class CIFG(_RNN):
    """rnnc's LSTM with coupled input and forget gates (carry `(h, c)`)."""
    _cell = "cifg"


# Flax's dense layers of each gate, in PyTorch's gate order, and which of
# them have a bias (the others' is zero).
_FLAX_GATES = {
    "lstm": (("ii", "if", "ig", "io"), ("hi", "hf", "hg", "ho")),
    "gru": (("ir", "iz", "in"), ("hr", "hz", "hn")),
}


def _check_dense(k, tree, gates):
    """Refuses gates of layer k's `tree` that are not one Flax Dense's
    parameters each (a kernel [in, H], perhaps a bias [H]), or whose
    kernels read inputs of different widths."""
    rows = set()
    for g in gates:
        dense = tree[g]
        kernel = dense.get("kernel") if isinstance(dense, Mapping) else None
        if kernel is None or jnp.ndim(kernel) != 2:
            raise RNNCValueError(f"layer {k}: gate {g} is not a Flax Dense's "
                                 f"parameters (a 2-D kernel, perhaps a "
                                 f"bias), got {_describe(dense)}")
        bias = dense.get("bias")
        if bias is not None and jnp.shape(bias) != jnp.shape(kernel)[1:]:
            raise RNNCValueError(f"layer {k}: gate {g}'s bias has shape "
                                 f"{list(jnp.shape(bias))}, its kernel "
                                 f"{list(jnp.shape(kernel))}")
        rows.add(jnp.shape(kernel)[0])
    if len(rows) > 1:
        raise RNNCValueError(f"layer {k}: the kernels of gates "
                             f"{', '.join(gates)} read inputs of different "
                             f"widths {sorted(rows)}")


def _describe(value):
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{name}: {_describe(v)}"
                               for name, v in value.items()) + "}"
    shape = getattr(value, "shape", None)
    return list(shape) if shape is not None else type(value).__name__


def convert(cell_params, cell):
    """The parameters of Flax cells (`OptimizedLSTMCell` or `LSTMCell` for
    "lstm", `GRUCell` for "gru"; one parameter tree per layer, a list, or
    one tree for one layer; with or without the outer "params") in rnnc's
    names (weight_ih_l0, ...). A Flax `GRUCell` computes PyTorch's GRU,
    and a Flax LSTM cell PyTorch's LSTM, gate for gate, with the cells'
    default `gate_fn` (sigmoid) and `activation_fn` (tanh): the parameters
    do not say which a cell was made with, and rnnc's cells have those."""
    if cell not in _FLAX_GATES:
        raise RNNCValueError(f"convert takes Flax's LSTM and GRU cells "
                             f"(cell 'lstm' or 'gru'), got {cell!r}")
    layers = cell_params if isinstance(cell_params, (list, tuple)) else \
        [cell_params]
    if not layers:
        raise RNNCValueError("convert: no layer's parameters")
    out = {}
    for k, tree in enumerate(layers):
        if not isinstance(tree, Mapping):
            raise RNNCTypeError(f"layer {k}: a Flax cell's parameters are a "
                                f"dict, got {type(tree).__name__}")
        tree = tree.get("params", tree)
        if not isinstance(tree, Mapping):
            raise RNNCTypeError(f"layer {k}: a Flax cell's parameters are a "
                                f"dict, got {type(tree).__name__} under "
                                f"'params'")
        names = _FLAX_GATES[cell]
        missing = [n for n in names[0] + names[1] if n not in tree]
        if missing:
            raise RNNCValueError(f"layer {k}: not a Flax {cell} cell's "
                                 f"parameters (no {', '.join(missing)}; "
                                 f"it has {', '.join(map(str, tree))})")
        for side, gates in zip(("ih", "hh"), names):
            _check_dense(k, tree, gates)
            kernels = [tree[g]["kernel"] for g in gates]
            out[f"weight_{side}_l{k}"] = jnp.concatenate(kernels, 1).T
            out[f"bias_{side}_l{k}"] = jnp.concatenate([
                tree[g]["bias"] if "bias" in tree[g] else
                jnp.zeros(tree[g]["kernel"].shape[1],
                          tree[g]["kernel"].dtype) for g in gates])
    # Each layer's hidden size is its recurrent kernels' (H, H), and the
    # next layer's input size.
    G = len(_FLAX_GATES[cell][0])
    for k in range(len(layers)):
        H = out[f"weight_hh_l{k}"].shape[1]
        width = out["weight_ih_l0"].shape[1] if k == 0 else H
        for kind, shape in rnnc_jax._param_shapes(G, width, H).items():
            got = out[f"{kind}_l{k}"].shape
            if got != shape:
                raise RNNCValueError(
                    f"layer {k}: {kind} of shape {list(got)}, not "
                    f"{list(shape)}: the layers' hidden sizes differ, or "
                    f"not every gate has H = {H} features")
    return out
