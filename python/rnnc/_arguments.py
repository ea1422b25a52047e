"""How rnnc.torch's modules take a call's arguments: the input, the mask,
the states and the reset states checked against the module (shapes,
dtypes, devices; one RNNCError naming the argument) and put in the
library's layout (time-major, contiguous, float32 under torch.autocast),
and an unbatched call made a batch of one column."""

import torch
from torch import nn

from ._abi import _FLOATS
from ._errors import RNNCError, RNNCTypeError, RNNCValueError

# The floating types torch.autocast hands a module: converted to float32
# on the way in.
_AUTOCAST_INPUTS = (torch.float32, torch.bfloat16, torch.float16)


def _dense(tensor, name):
    """Refuses a tensor that is not dense (sparse, mkldnn, ...), naming
    it: the library reads strided memory."""
    if tensor.layout != torch.strided:
        raise RNNCValueError(f"{name} must be a dense (strided) tensor, got "
                             f"{tensor.layout}")


def _in_place(tensor):
    """`tensor` as the library reads it in place: contiguous, and its
    values in memory (a negative view, such as the imaginary part of a
    conjugate, holds the values' negations there, so it is resolved)."""
    # resolve_neg returns any other tensor itself (and traces, where
    # torch.compile cannot branch on is_neg()).
    return tensor.contiguous().resolve_neg()


class _CallArguments:
    """A mixin of rnnc.torch's modules (`_RNNBase`), reading their
    input_size, hidden_size, num_layers, batch_first, _states and
    _interface."""

    def _autocast(self, input, h0=None):
        """(autocast's dtype, the dtype of the results) for this call, or
        (None, None) where torch.autocast is off for the input's device.
        The results' dtype is torch.nn's: autocast's on CUDA and for
        torch.nn.LSTM on the CPU. CPU autocast does not list torch.nn.GRU
        and casts only its GEMMs, whose results meet the hidden state:
        its results have that state's dtype (h0's, else the input's, as
        its zero h0 has) promoted with autocast's (bf16 h0 gives bf16,
        float32 or fp16 float32). The one exception is bf16 autocast on
        CUDA: torch.nn's cuDNN path casts to float16 under any CUDA
        autocast, rnnc gives bfloat16, what autocast asked for."""
        if not isinstance(input, torch.Tensor):
            return None, None
        kind = input.device.type
        if kind not in ("cpu", "cuda") or not torch.is_autocast_enabled(kind):
            return None, None
        cast = torch.get_autocast_dtype(kind)
        if cast not in (torch.bfloat16, torch.float16):
            return None, None
        if self._interface is nn.GRU and kind == "cpu" and \
                input.dtype in _AUTOCAST_INPUTS:
            state = h0 if isinstance(h0, torch.Tensor) and \
                h0.dtype in _AUTOCAST_INPUTS else input
            return cast, torch.promote_types(cast, state.dtype)
        return cast, cast

    @staticmethod
    def _converted(tensor, name, dtype, cast):
        """`tensor` in the parameters' dtype: under autocast (`cast` set)
        a float32, bfloat16 or float16 tensor is converted to float32 (a
        copy, through which gradients flow)."""
        if cast is not None and tensor.dtype in _AUTOCAST_INPUTS:
            return tensor.to(dtype)
        if tensor.dtype != dtype:
            raise RNNCValueError(f"{name} must be {_FLOATS[dtype]}, got "
                            f"{tensor.dtype}")
        return tensor

    def _check_input(self, input, is_init, dtype, cast):
        if not isinstance(input, torch.Tensor):
            if isinstance(input, nn.utils.rnn.PackedSequence):
                raise RNNCTypeError("rnnc does not take a PackedSequence: pass "
                                "the padded tensor, and is_init to start "
                                "each sequence from a fresh state")
            raise RNNCTypeError(f"input must be a tensor, got {type(input)}")
        _dense(input, "input")
        if input.dim() != 3:
            raise RNNCValueError(f"input must be 3-D ([T, B, I], or [B, T, I] "
                            f"with batch_first) or 2-D [T, I] (unbatched), "
                            f"got shape {list(input.shape)}")
        if not (cast is not None and input.dtype in _AUTOCAST_INPUTS) and \
                input.dtype != dtype:
            raise RNNCValueError(f"input must be {_FLOATS[dtype]} (the "
                            f"parameters' dtype), got {input.dtype}")
        if input.shape[self._batch_dim ^ 1] == 0:
            raise RNNCValueError(f"input must have at least one step, got shape "
                            f"{list(input.shape)}")
        if input.shape[-1] != self.input_size:
            raise RNNCValueError(f"input has {input.shape[-1]} features, the "
                            f"layer expects input_size={self.input_size}")
        input = self._converted(input, "input", dtype, cast)
        if self.batch_first:
            input = input.transpose(0, 1)
        # The library reads [T, B, I] in place: anything else is copied
        # once (a batch_first input always is).
        input = _in_place(input)
        T, B = input.shape[0], input.shape[1]
        if is_init is None:
            is_init = torch.zeros((T, B), dtype=torch.bool,
                                  device=input.device)
        else:
            if not isinstance(is_init, torch.Tensor):
                raise RNNCTypeError("is_init must be a bool tensor")
            _dense(is_init, "is_init")
            if is_init.dtype != torch.bool:
                raise RNNCValueError(f"is_init must be torch.bool, got "
                                f"{is_init.dtype}")
            if tuple(is_init.shape) != ((B, T) if self.batch_first
                                        else (T, B)):
                order = "[B, T]" if self.batch_first else "[T, B]"
                raise RNNCValueError(f"is_init must have shape {order} of the "
                                f"input, got {list(is_init.shape)}")
            if self.batch_first:
                is_init = is_init.transpose(0, 1)
            is_init = is_init.contiguous()
        return input, is_init

    def _state(self, state, name, B, device, dtype, cast):
        L, H = self.num_layers, self.hidden_size
        if state is None:
            return torch.zeros((L, B, H), dtype=dtype, device=device)
        if not isinstance(state, torch.Tensor):
            raise RNNCTypeError(f"{name} must be a tensor")
        _dense(state, name)
        if tuple(state.shape) != (L, B, H):
            raise RNNCValueError(f"{name} must have shape [{L}, {B}, {H}] "
                            f"(num_layers, batch, hidden_size), got "
                            f"{list(state.shape)}")
        return _in_place(self._converted(state, name, dtype, cast))

    def _reset_states(self, reset_state, T, B, dtype, cast):
        """The reset states as the library takes them (time-major), one
        per state, and their form, "step" or "column"; [], "zero"
        without."""
        names = tuple(state + "_reset" for state in self._states)
        if reset_state is None:
            return [], "zero"
        if len(names) > 1:
            if not isinstance(reset_state, (tuple, list)) or \
                    len(reset_state) != len(names):
                raise RNNCTypeError(f"reset_state of {self._what} must be a "
                                f"tuple ({', '.join(names)})")
            given = list(reset_state)
        else:
            given = [reset_state]
        L, H = self.num_layers, self.hidden_size
        step = (L, B, T, H) if self.batch_first else (L, T, B, H)
        order = "[L, B, T, H]" if self.batch_first else "[L, T, B, H]"
        forms, states = [], []
        for name, state in zip(names, given):
            if not isinstance(state, torch.Tensor):
                raise RNNCTypeError(f"{name} must be a tensor")
            _dense(state, name)
            state = self._converted(state, name, dtype, cast)
            if tuple(state.shape) == step:
                forms.append("step")
                if self.batch_first:
                    state = state.transpose(1, 2)
                states.append(_in_place(state))
            elif tuple(state.shape) == (L, B, H):
                forms.append("column")
                states.append(_in_place(state))
            else:
                raise RNNCValueError(f"{name} must have shape {order} {list(step)} "
                                f"(one state per step) or [L, B, H] "
                                f"{[L, B, H]} (one per batch column), got "
                                f"{list(state.shape)}")
        if len(set(forms)) > 1:
            raise RNNCValueError(f"{' and '.join(names)} must have the same form "
                            f"(both per step or both per batch column)")
        return states, forms[0]

    def _unbatched(self, input, h0, c0, is_init, reset_state):
        """A 2-D input `[T, I]` as `torch.nn.LSTM` takes it (states `[L,
        H]`, `is_init` `[T]`, reset states `[L, T, H]` or `[L, H]`, whatever
        `batch_first`), made a batch of one column."""
        col = self._batch_dim
        if input.shape[0] == 0:
            raise RNNCValueError(f"input must have at least one step, got "
                                 f"shape {list(input.shape)}")

        def column(state, name, step_dim=None):
            if state is None:
                return None
            if not isinstance(state, torch.Tensor):
                raise RNNCTypeError(f"{name} must be a tensor")
            if step_dim is not None and state.dim() == 3:
                return state.unsqueeze(step_dim)
            if state.dim() != 2:
                shapes = "[L, H]" if step_dim is None else \
                    "[L, T, H] (per step) or [L, H]"
                raise RNNCValueError(f"{name} of an unbatched (2-D) input must be "
                                f"{shapes}, got shape {list(state.shape)}")
            return state.unsqueeze(1)

        if isinstance(is_init, torch.Tensor):
            if is_init.dim() != 1 or is_init.shape[0] != input.shape[0]:
                raise RNNCValueError(f"is_init of an unbatched (2-D) input must "
                                f"be 1-D [T] = [{input.shape[0]}], got shape "
                                f"{list(is_init.shape)}")
            is_init = is_init.unsqueeze(col)
        if reset_state is not None:
            step_dim = 1 + col
            names = tuple(state + "_reset" for state in self._states)
            if len(names) > 1 and (
                    not isinstance(reset_state, (tuple, list)) or
                    len(reset_state) != len(names)):
                raise RNNCTypeError(f"reset_state of {self._what} must be a "
                                f"tuple ({', '.join(names)})")
            if isinstance(reset_state, (tuple, list)):
                names = names[:len(reset_state)]
                reset_state = tuple(column(s, n, step_dim)
                                    for s, n in zip(reset_state, names))
            else:
                reset_state = column(reset_state, "h_reset", step_dim)
        return (input.unsqueeze(col), column(h0, "h0"), column(c0, "c0"),
                is_init, reset_state)

    def _check_devices(self, x, is_init, states, resets, params):
        """Every tensor of a call on the input's device, a CPU or CUDA one,
        as the library's entry points check each buffer (`_buffer`)."""
        if x.device.type not in ("cpu", "cuda"):
            raise RNNCValueError(f"rnnc runs CPU and CUDA tensors, got "
                            f"{x.device.type}")
        named = [("is_init", is_init)] + \
            [(s + "0", t) for s, t in zip(self._states, states)] + \
            [(s + "_reset", t) for s, t in zip(self._states, resets)] + \
            list(zip(self._param_names, params))
        for name, t in named:
            if t is not None and t.device != x.device:
                raise RNNCError(f"{name} is on {t.device}, the input on "
                                f"{x.device}; rnnc needs every tensor on one "
                                f"device")
