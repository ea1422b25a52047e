"""rnnc's LSTM and GRU in rsl_rl (leggedrobotics/rsl_rl, written against
v5.4.2; the memory module also fits 3.x): see examples/rsl_rl.md.

`RnncMemory` has the interface of rsl_rl's recurrent memory
(`rsl_rl.modules.RNN` in 4.x/5.x, `rsl_rl.networks.Memory` in 3.x):
`forward(input, masks=None, hidden_state=None)`, `reset(dones,
hidden_state)`, `detach_hidden_state(dones)` and the `hidden_state`
attribute. In the rollout (no masks) it steps once from its kept state,
as rsl_rl's does. In the update rsl_rl's storage hands it the minibatch
split at the dones and padded, one column per trajectory, with the masks
of the valid steps and each trajectory's starting state; rsl_rl runs
`nn.LSTM` over the padded columns and unpads the output. `RnncMemory`
undoes the padding instead and runs one call over the environments'
[T, B] sequences: every trajectory's first step is an `is_init` step,
whose entering state is the trajectory's saved state (`reset_state`).

`RnncRNNModel` (rsl_rl >= 4) and `RnncActorCriticRecurrent` (rsl_rl 3.x)
are rsl_rl's recurrent classes with their memories replaced, to be named
by `class_name` in the runner configuration ("rsl_rl_rnnc:RnncRNNModel").
They are defined only when rsl_rl is importable; `RnncMemory` needs only
PyTorch and rnnc.
"""

import contextlib

import torch
from torch import nn

import rnnc.torch


def unpad(padded, masks):
    """rsl_rl's `unpad_trajectories`: the [T, B, ...] tensor whose columns
    `split_and_pad_trajectories` split into `padded` [T, N, ...] with
    `masks` [T, N] (trajectories in environment-major order)."""
    T = padded.shape[0]
    valid = padded.transpose(1, 0)[masks.transpose(1, 0)]
    return valid.view(-1, T, *padded.shape[2:]).transpose(1, 0)


class RnncMemory(nn.Module):
    """rsl_rl's recurrent memory run by rnnc.torch (parameters named as
    rsl_rl's: `rnn.weight_ih_l0`, ...; state dicts load either way)."""

    def __init__(self, input_size, hidden_dim=256, num_layers=1, type="lstm",
                 remat="none"):
        super().__init__()
        if type.lower() not in ("lstm", "gru"):
            raise ValueError(f"type must be 'lstm' or 'gru', got {type!r}")
        self.is_lstm = type.lower() == "lstm"
        cls = rnnc.torch.LSTM if self.is_lstm else rnnc.torch.GRU
        self.rnn = cls(input_size, hidden_dim, num_layers, remat=remat)
        self.hidden_state = None

    @classmethod
    def from_torch(cls, memory, remat="none"):
        """The rnnc memory holding the weights of rsl_rl's `memory` (an
        `RNN` or `Memory` around an nn.LSTM or nn.GRU), on its device."""
        rnn = memory.rnn
        # The module's own initialization draws from a forked generator:
        # the random stream goes on as without the replacement.
        with torch.random.fork_rng(devices=[]):
            ours = cls(rnn.input_size, rnn.hidden_size, rnn.num_layers,
                       "lstm" if isinstance(rnn, nn.LSTM) else "gru", remat)
        ours.rnn.load_state_dict(rnn.state_dict())
        return ours.to(next(rnn.parameters()).device)

    def to_torch(self):
        """An nn.LSTM / nn.GRU with this memory's weights (for rsl_rl's
        TorchScript and ONNX exporters, which test for torch.nn's
        classes)."""
        cls = nn.LSTM if self.is_lstm else nn.GRU
        rnn = cls(self.rnn.input_size, self.rnn.hidden_size,
                  self.rnn.num_layers)
        rnn.load_state_dict(self.rnn.state_dict())
        return rnn.to(next(self.rnn.parameters()).device)

    def forward(self, input, masks=None, hidden_state=None):
        if masks is None:
            # Rollout: one step from the kept state.
            out, self.hidden_state = self.rnn(input.unsqueeze(0),
                                              self.hidden_state)
            return out
        if hidden_state is None:
            raise ValueError("Hidden states not passed to RNN module during "
                             "policy update")
        return self.sequence(input, masks, hidden_state)

    def sequence(self, padded, masks, hidden_state):
        """The update: `padded` [T, N, I] and `masks` [T, N] as rsl_rl's
        storage splits a minibatch of B environments into N trajectories,
        `hidden_state` [L, N, H] (a tuple (h, c) for an LSTM) the state
        each trajectory starts from; returns the output [T, B, H] of the
        environments' steps, as rsl_rl's memory does after unpadding."""
        # [T, B, I]: the minibatch's environments, step by step.
        x = unpad(padded, masks).contiguous()
        T, B = x.shape[:2]
        # A trajectory starts at its column's first step.
        first = torch.zeros(masks.shape, dtype=torch.bool,
                            device=masks.device)
        first[0] = True
        is_init = unpad(first, masks)
        starts = is_init.transpose(0, 1)  # [B, T]: env-major, as rsl_rl's
        states = hidden_state if self.is_lstm else (hidden_state,)
        resets = []
        for state in states:
            L, N, H = state.shape
            if N != int(starts.sum()):
                raise ValueError(f"{N} saved states for "
                                 f"{int(starts.sum())} trajectories")
            # Each trajectory's saved state at its first step ([L, B, T,
            # H], zero elsewhere: never read).
            reset = state.new_zeros(L, B, T, H)
            reset[:, starts] = state
            resets.append(reset.transpose(1, 2))
        # Every column starts with a trajectory, so h0 is the reset state
        # of step 0.
        h0 = tuple(r[:, 0].contiguous() for r in resets)
        if self.is_lstm:
            out, _ = self.rnn(x, h0, is_init=is_init,
                              reset_state=tuple(resets))
        else:
            out, _ = self.rnn(x, h0[0], is_init=is_init,
                              reset_state=resets[0])
        return out

    def reset(self, dones=None, hidden_state=None):
        if dones is None:
            self.hidden_state = hidden_state
        elif self.hidden_state is not None:
            if hidden_state is not None:
                raise NotImplementedError(
                    "Resetting the hidden state of done environments with a "
                    "custom hidden state is not implemented")
            states = self.hidden_state if isinstance(
                self.hidden_state, tuple) else (self.hidden_state,)
            for state in states:
                state[..., dones == 1, :] = 0.0

    def detach_hidden_state(self, dones=None):
        if self.hidden_state is None:
            return
        if dones is None:
            if isinstance(self.hidden_state, tuple):
                self.hidden_state = tuple(s.detach()
                                          for s in self.hidden_state)
            else:
                self.hidden_state = self.hidden_state.detach()
            return
        states = self.hidden_state if isinstance(
            self.hidden_state, tuple) else (self.hidden_state,)
        for state in states:
            state[..., dones == 1, :] = state[..., dones == 1, :].detach()


@contextlib.contextmanager
def _torch_memory(memory):
    """`memory.rnn` replaced by its torch.nn copy for the duration (rsl_rl's
    exporters copy it)."""
    rnn = memory.rnn
    memory.rnn = memory.to_torch()
    try:
        yield
    finally:
        memory.rnn = rnn


try:
    from rsl_rl.models import RNNModel
except ImportError:
    RNNModel = None

if RNNModel is not None:
    class RnncRNNModel(RNNModel):
        """rsl_rl's `RNNModel` (actor or critic) with its RNN run by rnnc;
        `rnn_remat` is rnnc's `remat` policy."""

        def __init__(self, *args, rnn_remat="none", **kwargs):
            # RNNModel builds an LSTM for any rnn_type but "gru".
            rnn_type = kwargs.get("rnn_type", "lstm")
            if str(rnn_type).lower() not in ("lstm", "gru"):
                raise ValueError(f"rnn_type must be 'lstm' or 'gru', got "
                                 f"{rnn_type!r}")
            super().__init__(*args, **kwargs)
            self.rnn = RnncMemory.from_torch(self.rnn, rnn_remat)

        def as_jit(self):
            with _torch_memory(self.rnn):
                return super().as_jit()

        def as_onnx(self, verbose=False):
            with _torch_memory(self.rnn):
                return super().as_onnx(verbose)

try:
    from rsl_rl.modules import ActorCriticRecurrent
except ImportError:
    ActorCriticRecurrent = None

if ActorCriticRecurrent is not None:
    class RnncActorCriticRecurrent(ActorCriticRecurrent):
        """rsl_rl 3.x's `ActorCriticRecurrent` with both memories run by
        rnnc."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.memory_a = RnncMemory.from_torch(self.memory_a)
            self.memory_c = RnncMemory.from_torch(self.memory_c)
