"""sb3-contrib's recurrent actor-critic policies with rnnc's LSTM.

    from rnnc.sb3 import RecurrentPPO
    model = RecurrentPPO("MlpLstmPolicy", env)    # rnnc's policy

or, with sb3-contrib's algorithm,

    import rnnc.sb3
    from sb3_contrib import RecurrentPPO
    model = RecurrentPPO(rnnc.sb3.RecurrentActorCriticPolicy, env)

`RecurrentActorCriticPolicy` (and its Cnn and MultiInput variants) is
sb3-contrib's policy of the same name whose `lstm_actor` and
`lstm_critic` are `rnnc.torch.LSTM` modules, with `torch.nn.LSTM`'s
parameter names, so that policy state dicts, `RecurrentPPO` checkpoints
and optimizer states load from one policy into the other. The
constructor takes sb3-contrib's arguments; `lstm_kwargs` may also hold
rnnc's `remat`, `storage`, `gemm_rows` and `wavefront`.

sb3-contrib runs a sequence batch (`n_seq` padded sequences, time-major
after a reshape) through `torch.nn.LSTM` in one call when no episode
starts in it, and otherwise one step at a time in Python, multiplying
the state by `1 - episode_start` before each step. Here every batch is
one rnnc call per LSTM: an episode start is `is_init`, which resets the
state entering that step to zero, as the multiplication does.

Training batches vary in sequence length and batch size (the longest
sequence of a minibatch, the number of sequences in it). On the CPU, one
library serves every shape (with remat "none", "gates" or "chunk:K", or
"budget:BYTES" where the cache holds its library of every shape, made by
rnnc.precompile with seq_len=None, batch=None; and no wavefront): each
batch runs as it comes, from the given states. Where a library is
compiled per shape (the GPU, a wavefront, a budget not precompiled so),
the call pads both to powers of two, so that a run compiles a few
libraries (4 for the 30000 steps of CartPole in tests/test_sb3.py, whose
batches come in 61 shapes). Padding columns
start from zero and are dropped; padding steps go before the sequence,
and the first real step is reset to the given state (`reset_state`), so
the outputs and the final states are those of the unpadded batch.

Where sb3-contrib's reshape would read a batch as sequences of other
lengths, rnnc's policy refuses it with one error naming it: features of
another width than the LSTM's input, states that are not `[n_lstm_layers,
n_seq, lstm_hidden_size]` or whose `n_seq` does not divide the
observations, and a `predict()` state without one column per
environment.
"""

import inspect

import torch

from . import torch as rnnc_torch
from ._errors import RNNCValueError
from .library import RNNCError

try:
    import sb3_contrib
    from sb3_contrib.common.recurrent import policies as _policies
except ImportError as error:  # pragma: no cover - depends on the install
    raise ImportError("rnnc.sb3 needs sb3-contrib (pip install "
                      "sb3-contrib)") from error

__all__ = ["RecurrentActorCriticPolicy", "RecurrentActorCriticCnnPolicy",
           "RecurrentMultiInputActorCriticPolicy", "MlpLstmPolicy",
           "CnnLstmPolicy", "MultiInputLstmPolicy", "RecurrentPPO",
           "RNNCError"]

# lstm_kwargs that rnnc's LSTM takes and torch.nn.LSTM does not.
_RNNC_OPTIONS = ("remat", "storage", "gemm_rows", "wavefront")
# lstm_kwargs that both take, passed on as given.
_TORCH_OPTIONS = ("bias", "dropout", "device", "dtype")
# lstm_kwargs taken only at their default (false), with why not otherwise.
_REFUSED_WHEN_SET = {
    # sb3-contrib hands the LSTM time-major sequences whatever this says.
    "batch_first": "sb3-contrib passes time-major sequences",
    "bidirectional": "rnnc's LSTM runs forward in time only",
    "proj_size": "rnnc's LSTM has no projection",
}


def _bucket(n):
    """The padded size for `n`: the next power of two."""
    return 1 << (n - 1).bit_length()


def _split_lstm_kwargs(lstm_kwargs):
    """sb3-contrib's `lstm_kwargs` as (torch.nn.LSTM's, rnnc's), refusing
    what sb3-contrib's sequence layout or rnnc cannot honour."""
    if lstm_kwargs is None:
        return {}, {}
    if not isinstance(lstm_kwargs, dict):
        raise RNNCError(f"lstm_kwargs must be a dict, got {lstm_kwargs!r}")
    torch_kwargs, rnnc_kwargs = {}, {}
    for name, value in lstm_kwargs.items():
        if name in _RNNC_OPTIONS:
            rnnc_kwargs[name] = value
        elif name in _TORCH_OPTIONS:
            torch_kwargs[name] = value
        elif name in _REFUSED_WHEN_SET:
            if value:
                raise RNNCError(f"lstm_kwargs {name}={value!r}: "
                                f"{_REFUSED_WHEN_SET[name]}")
            torch_kwargs[name] = value
        else:
            raise RNNCError(f"lstm_kwargs {name!r} is not an option of "
                            f"rnnc's LSTM (it takes "
                            f"{', '.join(_TORCH_OPTIONS + _RNNC_OPTIONS)})")
    return torch_kwargs, rnnc_kwargs


class RecurrentActorCriticPolicy(_policies.RecurrentActorCriticPolicy):
    """sb3-contrib's `RecurrentActorCriticPolicy` whose LSTMs are rnnc's:
    a sequence batch is one rnnc call per LSTM, episode starts included."""

    def __init__(self, *args, **kwargs):
        # The signature (and the defaults) of the sb3-contrib policy this
        # class derives from: the Cnn and MultiInput variants differ in
        # their features extractor.
        try:
            bound = inspect.signature(super().__init__).bind(*args,
                                                             **kwargs)
        except TypeError as error:
            raise RNNCError(f"{type(self).__name__}: {error}") from None
        bound.apply_defaults()
        arguments = bound.arguments
        for name in ("lstm_hidden_size", "n_lstm_layers"):
            value = arguments[name]
            if isinstance(value, bool) or not isinstance(value, int) or \
                    value <= 0:
                raise RNNCError(f"{name} must be a positive int, got "
                                f"{value!r}")
        if arguments["shared_lstm"] and arguments["enable_critic_lstm"]:
            raise RNNCError("shared_lstm=True needs enable_critic_lstm="
                            "False: the critic either shares the actor's "
                            "LSTM or has its own")
        if arguments["shared_lstm"] and \
                not arguments["share_features_extractor"]:
            raise RNNCError("shared_lstm=True needs share_features_extractor"
                            "=True: a shared LSTM reads shared features")
        torch_kwargs, rnnc_kwargs = _split_lstm_kwargs(
            arguments["lstm_kwargs"])
        arguments["lstm_kwargs"] = torch_kwargs
        super().__init__(**arguments)
        self.lstm_kwargs = {**torch_kwargs, **rnnc_kwargs}
        for name in ("lstm_actor", "lstm_critic"):
            stock = getattr(self, name)
            if stock is None:
                continue
            weight = stock.weight_ih_l0
            # Drawing rnnc's initial weights would advance PyTorch's
            # generator: the stock LSTM's weights are kept instead, so a
            # seeded policy holds the same weights and leaves the
            # generator where sb3-contrib's does.
            on_gpu = [weight.device] if weight.device.type == "cuda" else []
            with torch.random.fork_rng(devices=on_gpu):
                lstm = rnnc_torch.LSTM(
                    stock.input_size, stock.hidden_size, stock.num_layers,
                    bias=stock.bias, dropout=stock.dropout,
                    device=weight.device, dtype=weight.dtype, **rnnc_kwargs)
            lstm.load_state_dict(stock.state_dict())
            # Replaces the module in place in the module order, so the
            # parameters (and the optimizer's state) keep sb3-contrib's
            # order.
            setattr(self, name, lstm)
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=arguments["lr_schedule"](1),
            **self.optimizer_kwargs)

    def _process_sequence(self, features, lstm_states, episode_starts, lstm):
        """sb3-contrib's `_process_sequence` as one rnnc call: `features`
        `[n_seq * T, I]` (sequence-major), `lstm_states` `([L, n_seq, H],
        [L, n_seq, H])`, `episode_starts` `[n_seq * T]` (0. or 1.).
        Returns the output `[n_seq * T, H]` and the final states."""
        h0, c0 = lstm_states
        H, I = lstm.hidden_size, lstm.input_size
        # sb3-contrib's reshape would cut features of another width, or
        # states of another batch, into sequences of other lengths.
        if features.dim() != 2 or features.shape[1] != I:
            raise RNNCValueError(f"features must be [n_observations, {I}] "
                                 f"(the LSTM's input_size), got "
                                 f"{list(features.shape)}")
        n_seq = h0.shape[1] if h0.dim() == 3 else -1
        shape = (lstm.num_layers, n_seq, H)
        if tuple(h0.shape) != shape or tuple(c0.shape) != shape:
            raise RNNCValueError(f"lstm_states must be two tensors of shape "
                                 f"{list(shape)} (n_lstm_layers, n_seq, "
                                 f"lstm_hidden_size), got "
                                 f"{list(h0.shape)} and {list(c0.shape)}")
        device = lstm.weight_hh_l0.device
        for name, tensor in (("features", features), ("lstm_states", h0),
                             ("lstm_states", c0),
                             ("episode_starts", episode_starts)):
            if tensor.device != device:
                raise RNNCValueError(f"{name} is on {tensor.device}, the "
                                     f"LSTM's parameters on {device}")
        if n_seq == 0 or features.shape[0] % n_seq:
            raise RNNCValueError(f"lstm_states: {features.shape[0]} "
                                 f"observations do not split into sequences "
                                 f"of {n_seq} columns")
        x = features.reshape((n_seq, -1, I)).transpose(0, 1)
        if episode_starts.numel() != features.shape[0]:
            raise RNNCValueError(f"episode_starts must have one entry per "
                                 f"observation ({features.shape[0]}), got "
                                 f"{list(episode_starts.shape)}")
        starts = episode_starts.reshape((n_seq, -1)).transpose(0, 1)
        if not torch.all((starts == 0) | (starts == 1)):
            raise RNNCError("episode_starts must be 0 or 1: a start resets "
                            "the LSTM state to zero")
        # A start zeroes the state entering its step: sb3-contrib's
        # multiplication by 1 - start, so the gradient into the states is
        # the same.
        keep = (starts[0] == 0).to(x.dtype).view(1, n_seq, 1)
        if lstm._serves_every_shape(x.device):
            y, (h_n, c_n) = lstm(x, (keep * h0, keep * c0),
                                 is_init=starts != 0)
            return y.transpose(0, 1).reshape(-1, H), (h_n, c_n)
        return self._padded_sequence(x, starts, keep, h0, c0, lstm)

    def _predict(self, observation, lstm_states, episode_starts,
                 deterministic=False):
        """sb3-contrib's `_predict` (under `predict`), one step of each
        environment: the state must have one column per observation,
        which sb3-contrib would otherwise run as one sequence."""
        first = next(iter(observation.values())) \
            if isinstance(observation, dict) else observation
        n_envs = first.shape[0]
        shape = (self.lstm_actor.num_layers, n_envs,
                 self.lstm_actor.hidden_size)
        if any(tuple(s.shape) != shape for s in lstm_states):
            raise RNNCValueError(
                f"predict: state must be two arrays of shape {list(shape)} "
                f"(n_lstm_layers, n_envs, lstm_hidden_size) for {n_envs} "
                f"observations, got "
                f"{' and '.join(str(list(s.shape)) for s in lstm_states)}")
        return super()._predict(observation, lstm_states, episode_starts,
                                deterministic)

    @staticmethod
    def _padded_sequence(x, starts, keep, h0, c0, lstm):
        """`_process_sequence` through a library of a static shape: the
        batch padded to powers of two in both sizes."""
        T, n_seq = x.shape[:2]
        L, H = lstm.num_layers, lstm.hidden_size
        steps, columns = _bucket(T), _bucket(n_seq)
        pad = steps - T
        device, dtype = x.device, x.dtype
        padded = torch.zeros((steps, columns, lstm.input_size),
                             device=device, dtype=dtype)
        padded[pad:, :n_seq] = x
        is_init = torch.zeros((steps, columns), dtype=torch.bool,
                              device=device)
        is_init[pad:, :n_seq] = starts != 0
        # The first real step enters from the given states.
        is_init[pad] = True
        reset = []
        for state in (h0, c0):
            at_step = torch.zeros((L, steps, columns, H), device=device,
                                  dtype=dtype)
            at_step[:, pad, :n_seq] = keep * state
            reset.append(at_step)
        y, (h_n, c_n) = lstm(padded, is_init=is_init,
                             reset_state=tuple(reset))
        output = y[pad:, :n_seq].transpose(0, 1).reshape(-1, H)
        return output, (h_n[:, :n_seq].contiguous(),
                        c_n[:, :n_seq].contiguous())


class RecurrentActorCriticCnnPolicy(RecurrentActorCriticPolicy,
                                    _policies.RecurrentActorCriticCnnPolicy):
    """sb3-contrib's `RecurrentActorCriticCnnPolicy` (NatureCNN features)
    with rnnc's LSTMs."""


class RecurrentMultiInputActorCriticPolicy(
        RecurrentActorCriticPolicy,
        _policies.RecurrentMultiInputActorCriticPolicy):
    """sb3-contrib's `RecurrentMultiInputActorCriticPolicy` (dict
    observations) with rnnc's LSTMs."""


MlpLstmPolicy = RecurrentActorCriticPolicy
CnnLstmPolicy = RecurrentActorCriticCnnPolicy
MultiInputLstmPolicy = RecurrentMultiInputActorCriticPolicy


class RecurrentPPO(sb3_contrib.RecurrentPPO):
    """sb3-contrib's `RecurrentPPO` whose policy names ("MlpLstmPolicy",
    "CnnLstmPolicy", "MultiInputLstmPolicy") and sb3-contrib's policy
    classes (a stock checkpoint's, through `load`) are rnnc's policies."""

    policy_aliases = {
        "MlpLstmPolicy": MlpLstmPolicy,
        "CnnLstmPolicy": CnnLstmPolicy,
        "MultiInputLstmPolicy": MultiInputLstmPolicy,
    }

    def _setup_model(self):
        # sb3-contrib's own policy classes (a stock checkpoint's, which
        # `load` restores before it builds the policy) are rnnc's here.
        self.policy_class = _OURS.get(self.policy_class, self.policy_class)
        super()._setup_model()


# sb3-contrib's policy classes -> rnnc's.
_OURS = {_policies.RecurrentActorCriticPolicy: RecurrentActorCriticPolicy,
         _policies.RecurrentActorCriticCnnPolicy:
             RecurrentActorCriticCnnPolicy,
         _policies.RecurrentMultiInputActorCriticPolicy:
             RecurrentMultiInputActorCriticPolicy}
