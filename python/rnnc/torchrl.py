"""TorchRL's `LSTMModule` and `GRUModule` run by rnnc: drop-in replacements
for `torchrl.modules.LSTMModule` / `GRUModule` whose layer stack is an
`rnnc.torch.LSTM` / `GRU` (batch_first), with TorchRL's constructor
arguments, keys and parameter names, so state dicts load both ways:

    from torchrl.modules import set_recurrent_mode
    lstm = rnnc.torchrl.LSTMModule(input_size=4, hidden_size=64,
                                   in_key="observation", out_key="features")
    env = env.append_transform(lstm.make_tensordict_primer())
    ...                                  # collectors: sequential mode
    with set_recurrent_mode(True):       # losses: recurrent mode
        loss = loss_module(data)

The tensordict carries the input, the stored recurrent states
(`recurrent_state_h` and `recurrent_state_c` of an LSTM, `recurrent_state`
of a GRU: `[..., L, H]` per step),
`is_init` and, on the way out, the output and `("next", recurrent_state_*)`.

Sequential mode (the default; collectors): each element of the
tensordict is one step of its own column; the stored state is the state
entering the step, zeroed where `is_init` is set, and the next state is
the state after the step.

Recurrent mode (`torchrl.modules.set_recurrent_mode(True)` or
`default_recurrent_mode=True`): the last batch dimension is time, the
others are flattened into columns, `[B, T]`. TorchRL's backends (pad,
scan) start step 0 of each column from its stored state, whatever
`is_init[:, 0]` says, and replace the carry by the stored state at every
step marked `is_init`. rnnc computes this in one call of the layer stack:
the initial state is the stored state at step 0 and the per-step reset
states are the stored states, `[L, B, T, H]`.

`("next", recurrent_state_*)` holds, as TorchRL's, each trajectory's final
state (all layers) at the trajectory's last step (the step before the next
`is_init` of its column, or step T-1) and zero elsewhere. The call gives the
final state at step T-1 only. The N trajectories that end before T-1 are
run again, with gradients, in more calls: each trajectory fills one row,
right-aligned so that it ends at the row's last step, its first step
marked `is_init` with its stored state as reset state; the steps before
it are zero input that the reset discards. Where one library serves every
shape, the trajectories are grouped by length (1, 2, 3-4, 5-8, ...) and
each group is one call as long as its longest trajectory: at most
1 + ceil(log2(T)) calls, less than twice the steps the trajectories have.
Where a library is compiled per shape (on the GPU, or with remat
"budget:BYTES" unless the cache holds its library of every shape for
per-step reset states), the extra calls have the first call's shape `[B,
T]`: ceil(N / B) of them, each costing as much as the first. A batch in
which no trajectory ends inside the sequence (one trajectory per column)
costs the one call. With dropout in training mode the extra
calls draw their own masks: the end states of those trajectories come
from other masks than the outputs.

`recurrent_backend` may be "pad" (TorchRL's default), "scan" or "auto":
TorchRL computes the same function with each, and rnnc computes it its
own way for all three. TorchRL arguments rnnc cannot honour (the "triton"
backend and its precision settings, `recurrent_recompute`, `python_based`,
`proj_size`, bidirectional layers, `batch_first=False`) raise an
`RNNCError` naming them; rnnc's own `remat`, `storage` and `dtype` are
keyword arguments. `lstm=` / `gru=` take an `rnnc.torch.LSTM` / `GRU` (an
`MGU` too) with `batch_first=True`.

This module imports tensordict; torchrl itself is imported when a method
needs it (the recurrent mode, the primer).
"""

import torch

from ._abi import _FLOATS
from ._arguments import _AUTOCAST_INPUTS
from ._errors import RNNCValueError
from .library import RNNCError
from .torch import GRU, LSTM

try:
    from tensordict import TensorDictBase, unravel_key_list
    from tensordict.nn import TensorDictModuleBase, dispatch
except ImportError as error:  # pragma: no cover - depends on the install
    raise ImportError("rnnc.torchrl needs tensordict and torchrl "
                      "(pip install torchrl)") from error

__all__ = ["LSTMModule", "GRUModule", "RNNCError"]

# TorchRL's recurrent backends that compute the recurrent-mode function
# rnnc computes; "triton" is refused (its precision settings are its own).
_BACKENDS = ("pad", "scan", "auto")


def _recurrent_mode():
    """The mode set by `torchrl.modules.set_recurrent_mode`, or None."""
    from torchrl.modules.tensordict_module.rnn import recurrent_mode
    return recurrent_mode()


def _check_torchrl_options(name, batch_first, proj_size,
                           bidirectional, python_based, recurrent_backend,
                           recurrent_compute_dtype, recurrent_recompute,
                           recurrent_matmul_precision):
    """Refuses the TorchRL arguments that rnnc cannot honour."""
    if not batch_first:
        raise RNNCError(f"{name} needs batch_first=True, as TorchRL's does")
    if proj_size:
        raise RNNCError(f"proj_size={proj_size!r} is not supported by rnnc")
    if bidirectional:
        raise RNNCError("bidirectional=True is not supported by rnnc")
    if python_based:
        raise RNNCError("python_based=True asks for TorchRL's Python cell; "
                        "rnnc runs its compiled library (use TorchRL's "
                        f"{name} for the Python cell)")
    if recurrent_backend not in _BACKENDS:
        raise RNNCError(f"recurrent_backend={recurrent_backend!r} is not "
                        f"supported by rnnc: one of {list(_BACKENDS)}, which "
                        f"compute the same function (rnnc computes it in "
                        f"one compiled call)")
    if recurrent_compute_dtype != torch.float32:
        raise RNNCError(f"recurrent_compute_dtype="
                        f"{recurrent_compute_dtype} is a setting of TorchRL's "
                        f"triton backend; rnnc computes in the parameters' "
                        f"dtype (storage='bf16' rounds GEMM operands to "
                        f"bf16)")
    if recurrent_recompute != "none":
        raise RNNCError(f"recurrent_recompute={recurrent_recompute!r} is not "
                        f"supported by rnnc: pass remat= (none, gates, "
                        f"chunk:K, budget:BYTES) to choose what is saved "
                        f"for the backward")
    if recurrent_matmul_precision != "auto":
        raise RNNCError(f"recurrent_matmul_precision="
                        f"{recurrent_matmul_precision!r} is a setting of "
                        f"TorchRL's triton backend, not supported by rnnc")


def _check_keys(name, in_key, in_keys, out_key, out_keys, default_in,
                default_out, states):
    """TorchRL's in/out keys: (in_keys with "is_init" last, out_keys)."""
    if not ((in_key is None) ^ (in_keys is None)):
        raise RNNCError(f"{name}: either in_keys or in_key must be given, "
                        f"not both or none; got in_keys={in_keys!r} and "
                        f"in_key={in_key!r}")
    if in_key is not None:
        in_keys = [in_key, *default_in]
    if not ((out_key is None) ^ (out_keys is None)):
        raise RNNCError(f"{name}: either out_keys or out_key must be given, "
                        f"not both or none; got out_keys={out_keys!r} and "
                        f"out_key={out_key!r}")
    if out_key is not None:
        out_keys = [out_key, *default_out]
    in_keys = unravel_key_list(in_keys)
    out_keys = unravel_key_list(out_keys)
    if not isinstance(in_keys, (tuple, list)) or (
            len(in_keys) != 1 + states and not (
                len(in_keys) == 2 + states and in_keys[-1] == "is_init")):
        raise RNNCError(f"{name} expects in_keys: a value, {states} hidden "
                        f"state(s) and optionally 'is_init' last; got "
                        f"{in_keys!r}")
    if not isinstance(out_keys, (tuple, list)) or len(out_keys) != 1 + states:
        raise RNNCError(f"{name} expects out_keys: a value and {states} "
                        f"hidden state(s); got {out_keys!r}")
    in_keys = list(in_keys)
    if "is_init" not in in_keys:
        in_keys = in_keys + ["is_init"]
    return in_keys, list(out_keys)


def _as_tuple(key):
    return key if isinstance(key, tuple) else (key,)


def _is_init_of(is_init, value, tensordict):
    """`is_init` of the shaped tensordict as the layers take it, bool
    `value.shape[:2]`: with or without TorchRL's trailing dimension of
    one, of any dtype TorchRL takes (nonzero starts a trajectory)."""
    batch = value.shape[:-1]
    if is_init.numel() != batch.numel():
        raise RNNCValueError(f"is_init must have the tensordict's batch "
                             f"shape {list(tensordict.shape)} (with or "
                             f"without a trailing 1), got "
                             f"{list(tensordict['is_init'].shape)}")
    is_init = is_init.reshape(batch)
    return is_init if is_init.dtype == torch.bool else is_init != 0


class _RecurrentModule(TensorDictModuleBase):
    """What `LSTMModule` and `GRUModule` share: the modes, the key handling
    and the recurrent-mode call with its trajectory-end states. A subclass
    names its layer attribute (`_attr`), its number of states and its
    rnnc module class."""

    _attr = None
    _states = None
    _rnn_class = None

    def _setup(self, rnn, input_size, hidden_size, num_layers, bias,
               dropout, device, dtype, remat, storage, in_key, in_keys,
               out_key, out_keys, default_recurrent_mode, recurrent_backend):
        name = type(self).__name__
        cls = self._rnn_class
        if rnn is not None:
            if not isinstance(rnn, cls):
                raise RNNCError(f"{self._attr}= must be an rnnc.torch."
                                f"{cls.__name__}, got "
                                f"{type(rnn).__module__}."
                                f"{type(rnn).__qualname__}: make one with "
                                f"the same arguments and load its state "
                                f"dict")
            if not rnn.batch_first:
                raise RNNCError(f"the {self._attr}= module must have "
                                f"batch_first=True")
            # (argument, value, default): the module's own settings.
            given = (("input_size", input_size, None),
                     ("hidden_size", hidden_size, None),
                     ("num_layers", num_layers, 1), ("bias", bias, True),
                     ("dropout", dropout, 0), ("device", device, None),
                     ("dtype", dtype, None), ("remat", remat, "none"),
                     ("storage", storage, None))
            named = [k for k, value, default in given if value != default]
            if named:
                raise RNNCError(f"{', '.join(named)} cannot be passed along "
                                f"with {self._attr}=: they are the "
                                f"module's")
        else:
            if hidden_size is None:
                raise RNNCError(f"{name}: hidden_size must be passed")
            if input_size is None:
                raise RNNCError(f"{name}: input_size must be passed")
            rnn = cls(input_size, hidden_size, num_layers, bias=bias,
                      batch_first=True, dropout=dropout, device=device,
                      dtype=dtype, remat=remat, storage=storage)
        if default_recurrent_mode is not None and \
                not isinstance(default_recurrent_mode, bool):
            raise RNNCValueError(f"{name}: default_recurrent_mode="
                                 f"{default_recurrent_mode!r} must be True, "
                                 f"False or None (TorchRL's module would "
                                 f"take any truthy value as the recurrent "
                                 f"mode)")
        self.in_keys, self.out_keys = _check_keys(
            name, in_key, in_keys, out_key, out_keys, self.DEFAULT_IN_KEYS,
            self.DEFAULT_OUT_KEYS, self._states)
        setattr(self, self._attr, rnn)
        self._recurrent_mode = default_recurrent_mode
        # TorchRL's settings as its module keeps them (the triton
        # backend's at the only values rnnc takes).
        self.recurrent_backend = recurrent_backend
        self.recurrent_compute_dtype = torch.float32
        self.recurrent_recompute = "none"
        self.recurrent_matmul_precision = "auto"

    @property
    def _rnn(self):
        return getattr(self, self._attr)

    # ----------------------------------------------------------------------
    # Modes, as TorchRL's
    # ----------------------------------------------------------------------

    @property
    def recurrent_mode(self):
        mode = _recurrent_mode()
        if mode is None:
            return bool(self._recurrent_mode)
        return mode

    @recurrent_mode.setter
    def recurrent_mode(self, value):
        raise RNNCError("recurrent_mode cannot be changed in-place. Please "
                        "use the set_recurrent_mode context manager.")

    @property
    def temporal_mode(self):
        raise RNNCError("temporal_mode is deprecated, use recurrent_mode "
                        "instead.")

    def set_recurrent_mode(self, mode=True):
        """Refused, as by TorchRL since v0.8."""
        raise RNNCError(f"The {self._attr}.set_recurrent_mode() API has been "
                        f"removed in v0.8. To set the recurrent mode, use "
                        f"the torchrl.modules.set_recurrent_mode context "
                        f"manager or the `default_recurrent_mode` keyword "
                        f"argument in the constructor.")

    def make_python_based(self):
        """Refused: the layers are rnnc's compiled ones."""
        raise RNNCError("make_python_based: rnnc's module runs its compiled "
                        "library; load the state dict into TorchRL's module "
                        "for its Python cell")

    def make_cudnn_based(self):
        """Refused: the layers are rnnc's compiled ones."""
        raise RNNCError("make_cudnn_based: rnnc's module runs its compiled "
                        "library; load the state dict into TorchRL's module "
                        "for cuDNN")

    @property
    def canonical_keys(self):
        """The keys whose layout matters to the module, as TorchRL's."""
        return list(self.in_keys) + list(self.out_keys)

    def canonicalize(self, data, *, inplace=False):
        """`data` with the module's keys made contiguous, as TorchRL's."""
        keys = [key for key in self.canonical_keys
                if key in data.keys(include_nested=True)]
        if not keys:
            return data
        sub = data.select(*keys, strict=False)
        try:
            sub = sub.contiguous(canonical=True)
        except TypeError:
            sub = sub.contiguous()
        out = data if inplace else data.copy()
        out.update(sub)
        return out

    def _primer_specs(self):
        """{in_key: shape} of the recurrent states, checked against the
        out keys as TorchRL's `make_tensordict_primer` does."""
        rnn = self._rnn
        specs = {}
        for k in range(1, 1 + self._states):
            if _as_tuple(self.out_keys[k]) != ("next",
                                               *_as_tuple(self.in_keys[k])):
                raise RNNCError(
                    f"make_tensordict_primer is supposed to work with "
                    f"in_keys/out_keys that have compatible names, ie. the "
                    f"out_keys should be named after ('next', <in_key>). "
                    f"Got in_keys={self.in_keys} and "
                    f"out_keys={self.out_keys} instead.")
            specs[_as_tuple(self.in_keys[k])] = (rnn.num_layers,
                                                 rnn.hidden_size)
        return specs

    def make_tensordict_primer(self):
        """A `TensorDictPrimer` for the environment, as TorchRL's: it adds
        the recurrent states (zeros, `[L, H]` per step, of the parameters'
        dtype) to every reset."""
        from torchrl.data.tensor_specs import Unbounded
        from torchrl.envs.transforms.transforms import TensorDictPrimer
        dtype = next(self._rnn.parameters()).dtype
        return TensorDictPrimer(
            {key: Unbounded(shape=shape, dtype=dtype)
             for key, shape in self._primer_specs().items()},
            expand_specs=True)

    # ----------------------------------------------------------------------
    # The forward
    # ----------------------------------------------------------------------

    def _call(self, x, h0, is_init, reset):
        """One call of the layer stack (batch_first): the output and the
        final states, each `[L, B, H]`."""
        raise NotImplementedError

    @dispatch
    def forward(self, tensordict: TensorDictBase):
        shape = tensordict.shape
        recurrent = self.recurrent_mode
        if recurrent:
            if tensordict.ndim == 0:
                raise RNNCError(f"{type(self).__name__}(recurrent_mode=True) "
                                f"requires the input tensordict to have at "
                                f"least one batch dim (time). Got a 0-d "
                                f"tensordict.")
            if tensordict.ndim == 1:
                shaped = tensordict.unsqueeze(0)
            elif tensordict.ndim == 2:
                shaped = tensordict
            else:
                shaped = tensordict.flatten(0, -2)
        else:
            shaped = tensordict.reshape(-1).unsqueeze(-1)
        value = shaped[self.in_keys[0]]
        rnn = self._rnn
        if value.dim() != 3 or value.shape[-1] != rnn.input_size:
            raise RNNCValueError(
                f"{type(self).__name__}: {self.in_keys[0]} must be the "
                f"tensordict's batch shape {list(shape)} and "
                f"input_size={rnn.input_size} features, got "
                f"{list(tensordict.get(self.in_keys[0]).shape)}")
        is_init = _is_init_of(shaped["is_init"], value, tensordict)
        stored = [shaped.get(key, None)
                  for key in self.in_keys[1:1 + self._states]]
        for key, state in zip(self.in_keys[1:], stored):
            if state is not None and tuple(state.shape[2:]) != (
                    rnn.num_layers, rnn.hidden_size):
                raise RNNCValueError(
                    f"{type(self).__name__}: {key} must be the tensordict's "
                    f"batch shape {list(shape)} and [num_layers, "
                    f"hidden_size] = {[rnn.num_layers, rnn.hidden_size]}, "
                    f"got {list(tensordict.get(key).shape)}")
        # The layers' device and dtype rules (the parameters', or under
        # torch.autocast any float autocast converts), checked here to
        # name the key.
        cast, _ = rnn._autocast(value)
        dtype = rnn._dtype
        device = next(rnn.parameters()).device
        for key, tensor in zip(self.in_keys, [value, *stored]):
            if tensor is not None and tensor.device != device:
                raise RNNCValueError(
                    f"{type(self).__name__}: {key} is on {tensor.device}, "
                    f"the parameters on {device}")
            if tensor is not None and tensor.dtype != dtype and not (
                    cast is not None and tensor.dtype in _AUTOCAST_INPUTS):
                raise RNNCValueError(
                    f"{type(self).__name__}: {key} must be "
                    f"{_FLOATS[dtype]} (the parameters' dtype), got "
                    f"{tensor.dtype}")
        if any(s is None for s in stored) and \
                any(s is not None for s in stored):
            raise RNNCError(f"{type(self).__name__}: the tensordict has "
                            f"some of the recurrent states "
                            f"{self.in_keys[1:1 + self._states]} but not all")
        if recurrent:
            out, states = self._recurrent(value, stored, is_init)
        else:
            out, states = self._sequential(value, stored, is_init)
        shaped.set(self.out_keys[0], out)
        for key, state in zip(self.out_keys[1:], states):
            shaped.set(key, state)
        if shape != shaped.shape or shaped is not tensordict:
            tensordict.update(shaped.reshape(shape))
        return tensordict

    def _zero_states(self, value):
        rnn = self._rnn
        batch, steps = value.shape[:2]
        return [value.new_zeros(batch, steps, rnn.num_layers,
                                rnn.hidden_size)
                for _ in range(self._states)]

    def _sequential(self, value, stored, is_init):
        """One step per column, `[N, 1]`: the stored state zeroed where
        `is_init` is set (rnnc resets it to zero), the next state after
        the step."""
        if stored[0] is None:
            stored = self._zero_states(value)
        h0 = [s[:, 0].transpose(0, 1).contiguous() for s in stored]
        out, finals = self._call(value, h0, is_init.contiguous(), None)
        return out, [f.transpose(0, 1).unsqueeze(1) for f in finals]

    def _recurrent(self, value, stored, is_init):
        """A `[B, T]` sequence: one call from the stored state at step 0
        with the stored states as per-step reset states, then the states
        of the trajectories that end before T-1 (see the module
        docstring)."""
        if stored[0] is None:
            stored = self._zero_states(value)
        batch, steps = value.shape[:2]
        is_init = is_init.contiguous()
        h0 = [s[:, 0].transpose(0, 1).contiguous() for s in stored]
        out, finals = self._call(value, h0, is_init,
                                 [s.permute(2, 0, 1, 3) for s in stored])
        columns = torch.arange(batch, device=value.device)
        positions = columns * steps + (steps - 1)
        ends = [f.transpose(0, 1) for f in finals]
        inside = self._interior_ends(value, stored, is_init)
        if inside is not None:
            at, states = inside
            positions = torch.cat([positions, at])
            ends = [torch.cat([e, s]) for e, s in zip(ends, states)]
        rnn = self._rnn
        nexts = [value.new_zeros(batch * steps, rnn.num_layers,
                                 rnn.hidden_size).index_put((positions,), e)
                 .view(batch, steps, rnn.num_layers, rnn.hidden_size)
                 for e in ends]
        return out, nexts

    def _interior_ends(self, value, stored, is_init):
        """The final states of the trajectories that end before the last
        step, and where they go (flat indices into `[B * T]`); None when
        there are none. Each is run in a row of an extra call,
        right-aligned, from its stored state at its first step (see the
        module docstring for the calls)."""
        batch, steps = is_init.shape
        if steps == 1 or not bool(is_init[:, 1:].any()):
            return None
        device = value.device
        col, end = is_init[:, 1:].nonzero(as_tuple=True)
        count = col.numel()
        t = torch.arange(steps, device=device)
        # The first step of the trajectory holding each step: the last
        # is_init at or before it, else step 0.
        first = torch.where(is_init, t, torch.zeros_like(t)).cummax(1).values
        start = first[col, end]
        rnn = self._rnn
        L, H = rnn.num_layers, rnn.hidden_size
        zero = batch * steps
        # Row `zero` of each flat tensor is the zero that fills the unused
        # steps and rows.
        x_flat = torch.cat([value.reshape(zero, value.shape[-1]),
                            value.new_zeros(1, value.shape[-1])])
        s_flat = [torch.cat([s.reshape(zero, L, H), s.new_zeros(1, L, H)])
                  for s in stored]
        if rnn._serves_every_shape(device, reset_to="step"):
            # A call per group of lengths (1, 2, 3-4, 5-8, ...), each as
            # long as its longest trajectory.
            lengths = end - start + 1
            group = torch.ceil(torch.log2(lengths.double())).long()
            groups = [(group == g).nonzero().flatten()
                      for g in group.unique().tolist()]
            calls = [(rows, int(lengths[rows].max()), rows.numel())
                     for rows in groups]
        else:
            # Calls of the first call's shape, the last one padded.
            calls = [(torch.arange(c, min(c + batch, count), device=device),
                      steps, batch) for c in range(0, count, batch)]
        states = [value.new_empty(count, L, H) for _ in stored]
        for rows, width, height in calls:
            got = self._run_trajectories(x_flat, s_flat, col[rows] * steps +
                                         start[rows], end[rows] - start[rows],
                                         width, height)
            for state, f in zip(states, got):
                state[rows] = f[:, :rows.numel()].transpose(0, 1)
        return col * steps + end, states

    def _run_trajectories(self, x_flat, s_flat, first, last, width, height):
        """The final states `[L, height, H]` of a call of `height` rows of
        `width` steps whose row k runs the trajectory that starts at flat
        step first[k] and ends `last[k]` steps later, right-aligned, from
        its stored state; rows past `first`'s are zero and reset."""
        zero = x_flat.shape[0] - 1
        pad = height - first.numel()
        t = torch.arange(width, device=first.device)
        # The step at which the trajectory begins in its row.
        offset = (width - 1) - last
        live = t[None, :] >= offset[:, None]
        source = first[:, None] + t[None, :] - offset[:, None]
        source = torch.where(live, source, torch.full_like(source, zero))
        init = t[None, :] == offset[:, None]
        reset = torch.where(init, first[:, None],
                            torch.full_like(source, zero))
        source = torch.cat([source, source.new_full((pad, width), zero)])
        reset = torch.cat([reset, reset.new_full((pad, width), zero)])
        init = torch.cat([init, init.new_zeros(pad, width)])
        L, H = s_flat[0].shape[1:]
        h0 = [x_flat.new_zeros(L, height, H) for _ in s_flat]
        _, got = self._call(x_flat[source], h0, init.contiguous(),
                            [s[reset].permute(2, 0, 1, 3) for s in s_flat])
        return got


class LSTMModule(_RecurrentModule):
    """`torchrl.modules.LSTMModule` whose layers are an `rnnc.torch.LSTM`
    (`self.lstm`, batch_first)."""

    DEFAULT_IN_KEYS = ["recurrent_state_h", "recurrent_state_c"]
    DEFAULT_OUT_KEYS = [("next", "recurrent_state_h"),
                        ("next", "recurrent_state_c")]
    _attr = "lstm"
    _states = 2
    _rnn_class = LSTM

    def __init__(self, input_size=None, hidden_size=None, num_layers=1,
                 bias=True, batch_first=True, dropout=0, proj_size=0,
                 bidirectional=False, python_based=False,
                 recurrent_backend="pad",
                 recurrent_compute_dtype=torch.float32,
                 recurrent_recompute="none",
                 recurrent_matmul_precision="auto", *, in_key=None,
                 in_keys=None, out_key=None, out_keys=None, device=None,
                 lstm=None, default_recurrent_mode=None, dtype=None,
                 remat="none", storage=None):
        super().__init__()
        _check_torchrl_options(
            "LSTMModule", batch_first, proj_size, bidirectional,
            python_based, recurrent_backend, recurrent_compute_dtype,
            recurrent_recompute, recurrent_matmul_precision)
        self._setup(lstm, input_size, hidden_size, num_layers, bias, dropout,
                    device, dtype, remat, storage, in_key, in_keys, out_key,
                    out_keys, default_recurrent_mode, recurrent_backend)

    def _call(self, x, h0, is_init, reset):
        y, (h_n, c_n) = self.lstm(
            x, tuple(h0), is_init=is_init,
            reset_state=None if reset is None else tuple(reset))
        return y, [h_n, c_n]


class GRUModule(_RecurrentModule):
    """`torchrl.modules.GRUModule` whose layers are an `rnnc.torch.GRU`
    (`self.gru`, batch_first; `gru=` may be an `rnnc.torch.MGU`)."""

    DEFAULT_IN_KEYS = ["recurrent_state"]
    DEFAULT_OUT_KEYS = [("next", "recurrent_state")]
    _attr = "gru"
    _states = 1
    _rnn_class = GRU

    def __init__(self, input_size=None, hidden_size=None, num_layers=1,
                 bias=True, batch_first=True, dropout=0, bidirectional=False,
                 python_based=False, recurrent_backend="pad",
                 recurrent_compute_dtype=torch.float32,
                 recurrent_recompute="none",
                 recurrent_matmul_precision="auto", *, in_key=None,
                 in_keys=None, out_key=None, out_keys=None, device=None,
                 gru=None, default_recurrent_mode=None, dtype=None,
                 remat="none", storage=None):
        super().__init__()
        _check_torchrl_options(
            "GRUModule", batch_first, 0, bidirectional,
            python_based, recurrent_backend, recurrent_compute_dtype,
            recurrent_recompute, recurrent_matmul_precision)
        self._setup(gru, input_size, hidden_size, num_layers, bias, dropout,
                    device, dtype, remat, storage, in_key, in_keys, out_key,
                    out_keys, default_recurrent_mode, recurrent_backend)

    def _call(self, x, h0, is_init, reset):
        y, h_n = self.gru(x, h0[0], is_init=is_init,
                          reset_state=None if reset is None else reset[0])
        return y, [h_n]
