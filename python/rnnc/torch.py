"""Drop-in `torch.nn.LSTM` / `torch.nn.GRU` with resets, compiled by rnnc;
`CIFG`, the LSTM with coupled input and forget gates (rnn.cifg), in
`torch.nn.LSTM`'s interface, and `MGU`, the minimal gated unit (rnn.mgu),
in `torch.nn.GRU`'s.

    lstm = rnnc.torch.LSTM(input_size, hidden_size, num_layers,
                           remat="chunk:4")
    y, (h_n, c_n) = lstm(x, (h0, c0), is_init=dones,
                         reset_state=(h_reset, c_reset))

`help(rnnc.torch.LSTM)` gives the arguments. The first call for a (cell,
sizes, remat, device) compiles a library (`rnnc.library`, cached on
disk): on the CPU one for every sequence length and batch size (remat
"none", "gates" or "chunk:K", no wavefront), otherwise one per (T, B);
every call runs it on the tensors' storage, on the CPU (float32, or
float64 for gradient checks) or on PyTorch's current stream of a CUDA
device, through the custom ops rnnc::forward, rnnc::backward and
rnnc::inference (_ops.py), which `torch.compile(fullgraph=True)` and
`torch.export` see as one opaque call per layer stack. With gradients the
forward fills a saved region that the backward reads; under
`torch.no_grad()` nothing is saved. `torch.autocast`, CUDA graph replay
(`set_graph_replay`), dropout's masks and what is refused: the rnnc
documentation's training.md.
"""

import math
import operator
import os
import re
import warnings

import torch
from torch import nn

from . import _cells
from ._errors import RNNCError, RNNCTypeError, RNNCValueError
from .library import (_check_schedule, check_remat, is_precompiled,
                      serves_every_shape)

# The oldest PyTorch rnnc.torch runs on (the `torch` extra of
# python/pyproject.toml): torch.library.custom_op and register_fake, and
# the functional tensors of torch.compile, as 2.4 has them. An older one
# is one error naming both versions, not a failing import below.
_TORCH_MIN = (2, 4)


def _torch_version(version):
    """(major, minor) of a PyTorch version string ("2.11.0+cu130")."""
    m = re.match(r"(\d+)\.(\d+)", str(version))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


if _torch_version(torch.__version__) < _TORCH_MIN:
    raise ImportError(f"rnnc.torch needs torch>="
                      f"{'.'.join(map(str, _TORCH_MIN))}, this is torch "
                      f"{torch.__version__}")

# The library's entry points on tensors (_abi.py) and as PyTorch operators
# with their autograd formula (_ops.py); a call's arguments checked and
# laid out for the library (_arguments.py).
from ._abi import _FLOATS, set_graph_replay  # noqa: E402
from ._arguments import _CallArguments, _in_place  # noqa: E402
from ._autograd import (_no_dropout_under_vmap, _run,  # noqa: E402
                        _tracing, _vmapped)
from ._ops import _library_key, _library_of  # noqa: E402
from ._ops import _request as _ops_request  # noqa: E402

# (__all__, with a module class per cell of the dialect: end of the file.)

# storage= as PyTorch names dtypes: torch.bfloat16 is "bf16", torch.float32
# the default (no storage of its own).
_STORAGE_DTYPES = {torch.bfloat16: "bf16", torch.float32: None}

_NARROW_PARAMETERS = ("rnnc keeps float32 (or float64) parameters: for "
                      "bf16 compute keep the module float32 and call it "
                      "under torch.autocast, or pass storage='bf16'")


# The most layers rnn-compile compiles (its --layers limit: the compiled
# program grows with the layer count).
MAX_LAYERS = 64
def _device_of(device):
    """`device` as a torch.device on which rnnc can run, refused with one
    message otherwise."""
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise RNNCTypeError(f"device {device!r} is not a device: {e}") from None
    if parsed.type not in ("cpu", "cuda"):
        raise RNNCValueError(f"rnnc runs on the CPU or CUDA devices, got {device}")
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise RNNCError(f"device {device!r}: no CUDA device is available")
    return parsed


def _memory_of(device):
    """The bytes `device` holds: the machine's memory, or the GPU's."""
    if device.type == "cuda":
        index = device.index if device.index is not None else \
            torch.cuda.current_device()
        return torch.cuda.get_device_properties(index).total_memory
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


class _RNNBase(_CallArguments, nn.Module):
    # The dialect's cell (rnn-compile's --cell); its gate count and its
    # states as the library's manifest names them, from the cell table
    # (set for each subclass); and the torch.nn module whose interface the
    # module takes (an LSTM's: hx = (h0, c0); a GRU's: hx = h0).
    _cell = None
    _gates = None
    _states = None
    _interface = None
    # Defaults for modules pickled before these options existed.
    gemm_rows = 0
    wavefront = False
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cell = _cells.BY_NAME[cls._cell]
        cls._gates, cls._states = cell.gates, cell.states

    @property
    def _what(self):
        """The module in messages: `rnnc.torch.LSTM`, ..."""
        return f"rnnc.torch.{type(self).__name__}"
    def _refuse_mask(self):
        """TorchRL's LSTMModule / GRUModule given a module that is not
        torch.nn's (`lstm=rnnc.torch.LSTM(...)`) pad the episodes of a
        batch whose resets fall inside the sequence and pass a `mask` of
        the padded steps: rnnc runs such a batch as it is, with the resets,
        through rnnc.torchrl's module of the same name."""
        torchrl_module = self._interface.__name__ + "Module"
        raise RNNCTypeError(
            f"{self._what} takes no mask: TorchRL's {torchrl_module} pads "
            f"the episodes of a batch with resets inside the sequence and "
            f"masks the padding; rnnc.torchrl.{torchrl_module} runs such a "
            f"batch with its resets instead (same keys and parameters)")
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False,
                 proj_size=0, device=None, dtype=None, remat="none",
                 storage=None, gemm_rows=0, wavefront=False):
        super().__init__()
        if bidirectional:
            raise RNNCValueError("bidirectional layers are not supported by rnnc")
        if proj_size:
            raise RNNCValueError("proj_size is not supported by rnnc")
        if isinstance(dropout, bool) or not isinstance(dropout,
                                                        (int, float)) \
                or not 0 <= dropout < 1:
            raise RNNCValueError(f"dropout must be a probability in [0, 1), got "
                            f"{dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout applies between layers: with "
                          f"num_layers=1 and dropout={dropout} nothing is "
                          f"dropped")
        # As torch.nn's: PyTorch's default dtype unless one is given.
        dtype = torch.get_default_dtype() if dtype is None else dtype
        if dtype in (torch.bfloat16, torch.float16):
            raise RNNCValueError(f"rnnc supports float32 and float64, got "
                            f"{dtype}: {_NARROW_PARAMETERS}")
        if dtype not in _FLOATS:
            raise RNNCValueError(f"rnnc supports float32 and float64, got {dtype}")
        device = None if device is None else _device_of(device)
        for name, value in (("input_size", input_size),
                            ("hidden_size", hidden_size),
                            ("num_layers", num_layers)):
            if isinstance(value, bool) or not isinstance(value, int) or \
                    value <= 0:
                raise RNNCValueError(f"{name} must be a positive int, got {value!r}")
        if num_layers > MAX_LAYERS:
            raise RNNCValueError(f"num_layers must be at most {MAX_LAYERS}, got "
                            f"{num_layers}: the compiled program grows with "
                            f"the layer count")
        check_remat(remat)
        gh = self._gates * hidden_size
        nbytes = sum(gh * ((input_size if k == 0 else hidden_size) +
                           hidden_size + 2) for k in range(num_layers)) * \
            torch.empty((), dtype=dtype).element_size()
        memory = _memory_of(device or torch.device("cpu"))
        if nbytes > memory:
            raise RNNCError(f"the parameters need {nbytes} bytes, more than "
                            f"the {memory} bytes of "
                            f"{device or torch.device('cpu')}")
        if isinstance(storage, torch.dtype):
            storage = _STORAGE_DTYPES.get(storage, storage)
        if storage not in (None, "bf16"):
            raise RNNCValueError(f"storage must be None or 'bf16' (or "
                            f"torch.bfloat16, torch.float32), got "
                            f"{storage!r}")
        _check_schedule(gemm_rows, wavefront)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = dropout
        self.bidirectional = False
        self.proj_size = 0
        self.remat = remat
        self.storage = storage
        self.gemm_rows = gemm_rows
        self.wavefront = wavefront
        self._param_names = []
        try:
            self._make_parameters(dtype, device)
        except RuntimeError as e:
            raise RNNCError(f"cannot allocate the parameters ({nbytes} "
                            f"bytes): {str(e).splitlines()[0]}") from None
        self.reset_parameters()
    def _make_parameters(self, dtype, device):
        gh = self._gates * self.hidden_size
        input_size, hidden_size = self.input_size, self.hidden_size
        for k in range(self.num_layers):
            width = input_size if k == 0 else hidden_size
            for name, shape in ((f"weight_ih_l{k}", (gh, width)),
                                (f"weight_hh_l{k}", (gh, hidden_size)),
                                (f"bias_ih_l{k}", (gh,)),
                                (f"bias_hh_l{k}", (gh,))):
                if self.bias or name.startswith("weight"):
                    self.register_parameter(name, nn.Parameter(torch.empty(
                        shape, dtype=dtype, device=device)))
                self._param_names.append(name)
        # bias=False: the library adds zero biases (`_flat_params`), which
        # are no state of the module, as torch.nn's has none.
        self._zero_biases = {}
    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    @property
    def _flat_params(self):
        """The library's parameters, four per layer (`_param_names`); with
        bias=False, zero biases of the weights' dtype and device in place
        of the biases, whose gradients are dropped."""
        if self.bias:
            return [getattr(self, name) for name in self._param_names]
        params = []
        for k in range(self.num_layers):
            w_ih = getattr(self, f"weight_ih_l{k}")
            w_hh = getattr(self, f"weight_hh_l{k}")
            zeros = self._zero_bias(w_hh)
            params += [w_ih, w_hh, zeros, zeros]
        return params

    def _zero_bias(self, weight):
        """Zeros of a bias of `weight`'s rows, dtype and device: made once
        per dtype and device, except while a graph tool looks (whose
        tensors are its own) or a CUDA graph is captured (whose
        allocations are not to outlive it)."""
        if weight is None:
            return None
        key = (weight.shape[0], weight.dtype, weight.device)
        kept = not (_tracing() or weight.device.type == "meta" or
                    weight.is_cuda and torch.cuda.is_current_stream_capturing())
        zeros = self._zero_biases.get(key) if kept else None
        if zeros is None:
            zeros = torch.zeros(key[0], dtype=key[1], device=key[2])
            if kept:
                self._zero_biases[key] = zeros
        return zeros

    @property
    def all_weights(self):
        """`torch.nn.LSTM`'s: per layer, [weight_ih, weight_hh, bias_ih,
        bias_hh] ([weight_ih, weight_hh] with bias=False)."""
        params = self._flat_params
        kept = 4 if self.bias else 2
        return [params[4 * k:4 * k + kept] for k in range(self.num_layers)]

    # torch.nn.RNNBase's attributes that code written for it reads: the
    # parameters' names, per layer (`_all_weights`) and flat
    # (`_flat_weights_names`), and the parameters themselves in that order
    # (`_flat_weights`, None for one that is missing), as the module holds
    # them now (after an assignment or under a parametrization too).
    @property
    def _flat_weights_names(self):
        return [name for name in self._param_names
                if self.bias or name.startswith("weight")]

    @property
    def _all_weights(self):
        names, kept = self._flat_weights_names, 4 if self.bias else 2
        return [names[kept * k:kept * (k + 1)]
                for k in range(self.num_layers)]

    @property
    def _flat_weights(self):
        return [getattr(self, name) if hasattr(self, name) else None
                for name in self._flat_weights_names]

    def flatten_parameters(self):
        """A no-op, as `torch.nn.LSTM`'s is off cuDNN: rnnc reads every
        parameter where it is."""
    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.storage:
            s += f", storage={self.storage!r}"
        if self.gemm_rows:
            s += f", gemm_rows={self.gemm_rows}"
        if self.wavefront:
            s += ", wavefront=True"
        return s + f", remat={self.remat!r}"

    @property
    def _dtype(self):
        """The element type of the parameters (float32 or float64; a
        module converted with .double() computes in float64)."""
        params = self._flat_params
        for name, p in zip(self._param_names, params):
            if not isinstance(p, torch.Tensor):
                raise RNNCValueError(f"{name} is {type(p).__name__}, not a "
                                     f"tensor")
        dtype = params[0].dtype
        if dtype in (torch.bfloat16, torch.float16):
            how = ".half()" if dtype == torch.float16 else ".bfloat16()"
            raise RNNCValueError(f"rnnc supports float32 and float64 "
                                 f"parameters, got {dtype} (a module "
                                 f"converted with .to({dtype}) or {how}): "
                                 f"{_NARROW_PARAMETERS}")
        if dtype not in _FLOATS:
            raise RNNCValueError(f"rnnc supports float32 and float64 "
                                 f"parameters, got {dtype}")
        for name, p in zip(self._param_names, params):
            if p.dtype != dtype:
                raise RNNCValueError(f"the parameters have different "
                                     f"dtypes: {self._param_names[0]} is "
                                     f"{dtype}, {name} {p.dtype}")
        return dtype

    @property
    def _batch_dim(self):
        """The batch dimension of the input and the output."""
        return 0 if self.batch_first else 1

    @property
    def _dropping(self):
        """The dropout the call applies: in training mode, between
        layers."""
        return self.dropout if self.training and self.num_layers > 1 else 0.0

    def _serves_every_shape(self, device, reset_to="zero"):
        """Whether one library runs the module's calls of every sequence
        length and batch size on `device` with reset states of the form
        `reset_to` ("zero", "step", "column") (see `_every_shape`).
        Otherwise each (T, B) has its own."""
        return self._every_shape(self._key_arguments(device, self._dtype,
                                                     reset_to, None))

    def _key_arguments(self, device, dtype, reset_to, storage):
        """`_library_key`'s arguments but the cell and the shape, with the
        module's storage unless the call gives one."""
        return (self.input_size, self.hidden_size, self.num_layers,
                self.remat, device, dtype, self._dropping, reset_to,
                storage or self.storage, self.gemm_rows, self.wavefront)

    def _library_key(self, seq_len, batch, device, dtype, reset_to,
                     storage=None):
        """The key of the library for a call (see `_library_key`): the
        library of every shape where it serves the module, else that of
        seq_len and batch (under torch.compile with dynamic shapes,
        operator.index specializes the graph to them)."""
        arguments = self._key_arguments(device, dtype, reset_to, storage)
        if self._every_shape(arguments):
            seq_len = batch = None
        else:
            seq_len, batch = operator.index(seq_len), operator.index(batch)
        return _library_key(self._cell, seq_len, batch, *arguments)

    def _every_shape(self, arguments):
        """Whether the library of every shape serves a call of
        `_key_arguments`: on the CPU without a wavefront, under remat
        "none", "gates" or "chunk:K", or under a budget where the cache
        holds that library (rnnc.precompile with seq_len=None, batch=None;
        it compiles about 35 times as long as the plan of one shape a call
        compiles otherwise)."""
        remat, device, wavefront = arguments[3], arguments[4], arguments[-1]
        if serves_every_shape(remat, device.type, wavefront):
            return True
        if device.type != "cpu" or wavefront or \
                not str(remat).startswith("budget:"):
            return False
        request = _ops_request(self._cell, None, None, *arguments)
        request.pop("device")
        return is_precompiled(**request)

    def _library(self, seq_len, batch, device, dtype, reset_to):
        """The library for a call, compiled on first use."""
        return _library_of(self._library_key(seq_len, batch, device, dtype,
                                             reset_to))

    def _run(self, input, h0, c0, is_init, reset_state=None):
        if torch.jit.is_tracing():
            raise RNNCError("torch.jit.trace cannot record rnnc's modules "
                            "(the library is chosen by the traced sizes): "
                            "use torch.compile, or torch.export to save a "
                            "program")
        if reset_state is not None and is_init is None:
            raise RNNCValueError("reset_state is the state a step where "
                                 "is_init is set enters: give is_init "
                                 "with it")
        if isinstance(input, torch.Tensor) and input.dim() == 2:
            batched = self._unbatched(input, h0, c0, is_init, reset_state)
            y, *final = self._run(*batched)
            return (y.squeeze(self._batch_dim),) + tuple(s.squeeze(1)
                                                         for s in final)
        dtype = self._dtype
        cast, result = self._autocast(input, h0)
        if cast is not None and dtype != torch.float32:
            raise RNNCError(f"torch.autocast needs a float32 module, this "
                            f"one is {dtype}")
        x, is_init = self._check_input(input, is_init, dtype, cast)
        T, B = x.shape[0], x.shape[1]
        states = [self._state(h0, "h0", B, x.device, dtype, cast)]
        if len(self._states) > 1:
            states.append(self._state(c0, self._states[1] + "0", B, x.device,
                                      dtype, cast))
        resets, reset_to = self._reset_states(reset_state, T, B, dtype, cast)
        # A parameter that is not contiguous (a transposed or padded view)
        # is copied, its gradient going back through the copy; a negative
        # view is resolved (`_in_place`). One that is not dense is refused
        # by name where the library binds it.
        params = [p if p.layout != torch.strided else _in_place(p)
                  for p in self._flat_params]
        inputs = [x, *states, *resets, *params]
        if B == 0:
            # No library runs to check each buffer's device.
            self._check_devices(x, is_init, states, resets, params)
            y, states_n = self._empty_outputs(x, inputs)
        else:
            # Under bf16 autocast the library stores bf16 and rounds the
            # GEMM operands to bf16, accumulating in float32; under fp16
            # autocast it computes in float32 (rnnc has no fp16 storage).
            storage = "bf16" if cast == torch.bfloat16 else None
            y, states_n = self._call(x, is_init, states, resets, params,
                                     inputs, reset_to, storage)
        if cast is not None:
            y, states_n = y.to(result), [s.to(result) for s in states_n]
        if self.batch_first:
            y = y.transpose(0, 1)
        return (y, *states_n)

    def _empty_outputs(self, x, inputs):
        """The outputs of a batch of 0 columns, as torch.nn's: empty, and
        with gradients (zero) for every input that requires them."""
        T, L, H = x.shape[0], self.num_layers, self.hidden_size
        y = x.new_zeros((T, 0, H))
        states_n = [x.new_zeros((L, 0, H)) for _ in self._states]
        if torch.is_grad_enabled() and any(t.requires_grad for t in inputs):
            anchor = sum(t.sum() for t in inputs) * 0
            y, states_n = y + anchor, [s + anchor for s in states_n]
        return y, states_n

    def _call(self, x, is_init, states, resets, params, inputs, reset_to,
              storage):
        """The library's outputs, y and the final states, for time-major
        `x`."""
        key = self._library_key(x.shape[0], x.shape[1], x.device, x.dtype,
                                reset_to, storage)
        rng = None
        if self._dropping:
            # [seed, offset]: a fresh seed per call from the generator of
            # the input's device, offset 0. Drawn in place on the device,
            # so that a captured CUDA graph draws a new seed per replay.
            if torch.compiler.is_compiling():
                # Dynamo does not trace the in-place draw: a compiled
                # graph draws its seed with the compiled graph's RNG.
                rng = torch.cat([
                    torch.randint(2 ** 62, (1,), dtype=torch.int64,
                                  device=x.device),
                    torch.zeros(1, dtype=torch.int64, device=x.device)])
            else:
                # Before the draw, which vmap refuses in its own words.
                _no_dropout_under_vmap(_vmapped())
                rng = torch.zeros(2, dtype=torch.int64, device=x.device)
                rng[0].random_()
        grad = torch.is_grad_enabled() and any(t.requires_grad
                                               for t in inputs)
        return _run(key, x, is_init, rng, states, resets, params, inputs,
                    grad)


class LSTM(_RNNBase):
    """`torch.nn.LSTM` with per-step resets and remat policies.

    Constructor: `torch.nn.LSTM`'s arguments (input_size, hidden_size,
    num_layers, bias, batch_first, dropout, device, dtype; bidirectional
    and proj_size only at their defaults), and

      remat: what the forward saves for the backward, "none", "gates",
          "chunk:K" or "budget:BYTES"; every policy gives the same bits.
      storage: None (float32) or "bf16" / torch.bfloat16: the saved
          values that are not states in bf16, GEMM operands rounded to
          bf16 with float32 accumulation.
      gemm_rows: the rows the GEMM blocks aim for (0: the target's
          default).
      wavefront: run the layers as a wavefront, block by block (on CUDA
          each on a stream of its own; the same bits).

    forward(input, hx=None, is_init=None, reset_state=None):

      input: [T, B, I] ([B, T, I] with batch_first; [T, I] unbatched).
      hx: (h0, c0), each [L, B, H] ([L, H] unbatched); zeros if None.
      is_init: bool [T, B] ([B, T] with batch_first; [T] unbatched): True
          at step t of column b starts a new episode there; its entering
          state is zero, or reset_state's.
      reset_state: (h_reset, c_reset), each [L, T, B, H] (per step,
          [L, B, T, H] with batch_first; [L, T, H] unbatched) or [L, B, H]
          (per column; [L, H] unbatched): the state a reset step enters;
          gradients flow into it.

    Returns y [T, B, H] ([B, T, H] with batch_first; [T, H] unbatched) and
    (h_n, c_n), each [L, B, H] ([L, H] unbatched), as torch.nn.LSTM. A
    PackedSequence input is refused (pass the padded tensor and is_init).
    """

    _cell = "lstm"
    _interface = nn.LSTM
    def forward(self, input, hx=None, is_init=None, reset_state=None,
                mask=None):
        """y, (h_n, c_n) of the layers on `input` (see the class). `mask`
        is refused: see `_refuse_mask`."""
        if mask is not None:
            self._refuse_mask()
        h0 = c0 = None
        if hx is not None:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2 or \
                    not all(isinstance(t, torch.Tensor) for t in hx):
                raise RNNCTypeError(f"hx of {self._what} must be a tuple (h0, "
                                f"c0) of tensors")
            h0, c0 = hx
        y, h_n, c_n = self._run(input, h0, c0, is_init, reset_state)
        return y, (h_n, c_n)


class CIFG(LSTM):
    """The LSTM with coupled input and forget gates (Greff et al., 2017),
    with `torch.nn.LSTM`'s interface and parameter names: gates f, g, o
    (weights `[3H, I]`, `[3H, H]`, biases `[3H]`), the input gate is
    1 - f: c' = f * c + (1 - f) * g, h' = o * tanh(c'). It is
    `torch.nn.LSTM` whose input gate rows are the negated forget gate
    rows. Constructor and call as `LSTM`'s."""

    _cell = "cifg"


class GRU(_RNNBase):
    """`torch.nn.GRU` with per-step resets and remat policies.

    Constructor: `torch.nn.GRU`'s arguments and rnnc's remat, storage,
    gemm_rows and wavefront (see `LSTM`).

    forward(input, hx=None, is_init=None, reset_state=None): as `LSTM`'s,
    with hx = h0 [L, B, H] and reset_state = h_reset ([L, T, B, H] or
    [L, B, H]; unbatched as `LSTM`'s). Returns y [T, B, H] and h_n
    [L, B, H] (batch_first and unbatched as `LSTM`'s), as torch.nn.GRU.
    """

    _cell = "gru"
    _interface = nn.GRU
    def forward(self, input, hx=None, is_init=None, reset_state=None,
                mask=None):
        """y, h_n of the layers on `input` (see the class). `mask` is
        refused: see `_refuse_mask`."""
        if mask is not None:
            self._refuse_mask()
        y, h_n = self._run(input, hx, None, is_init, reset_state)
        return y, h_n


class MGU(GRU):
    """The minimal gated unit, with `torch.nn.GRU`'s interface and
    parameter names: gates f, n (weights `[2H, I]`, `[2H, H]`, biases
    `[2H]`), f = sigmoid(W_if x + b_if + W_hf h + b_hf),
    n = tanh(W_in x + b_in + f * (W_hn h + b_hn)), h' = (1 - f) h + f n.
    Constructor and call as `GRU`'s."""

    _cell = "mgu"


def _module_class(cell):
    """The module class of a cell of the dialect (python/rnnc/_cells.py)
    that has none above: torch.nn.LSTM's interface for a cell of two
    states, torch.nn.GRU's for one."""
    base = LSTM if len(cell.states) == 2 else GRU
    return type(cell.name.upper(), (base,), {
        "_cell": cell.name, "__module__": __name__,
        "__doc__": f"rnn.{cell.name}, {cell.summary}, with "
                   f"`torch.nn.{base.__name__}`'s interface and parameter "
                   f"names ({cell.gates} gate blocks)."})


for _cell in _cells.CELLS:
    if _cell.name.upper() not in globals() and len(_cell.states) in (1, 2):
        globals()[_cell.name.upper()] = _module_class(_cell)

# A module class per cell of the dialect, named as the cell in upper case.
__all__ = [c.name.upper() for c in _cells.CELLS
           if c.name.upper() in globals()] + ["RNNCError", "set_graph_replay"]
