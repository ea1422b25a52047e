"""Drop-in `torch.nn.LSTM` / `torch.nn.GRU` with resets, compiled by rnnc;
`CIFG`, the LSTM with coupled input and forget gates (rnn.cifg), in
`torch.nn.LSTM`'s interface, and `MGU`, the minimal gated unit (rnn.mgu),
in `torch.nn.GRU`'s.

    lstm = rnnc.torch.LSTM(input_size, hidden_size, num_layers,
                           remat="chunk:4")
    y, (h_n, c_n) = lstm(x, (h0, c0), is_init=dones)

Constructor arguments, parameter names and shapes are `torch.nn.LSTM`'s
(`weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`, `bias_hh_l{k}`; the
weights only with `bias=False`);
`is_init[t, b]` (bool, `[T, B]`, or `[B, T]` with `batch_first`) starts a
new episode at step t of column b: the state entering that step is zero,
or with `reset_state` the given one (TorchRL's stored recurrent state):

    y, (h_n, c_n) = lstm(x, (h0, c0), is_init=dones,
                         reset_state=(h_reset, c_reset))

each `[L, T, B, H]` (`[L, B, T, H]` with `batch_first`), the state entering
step t of column b, or `[L, B, H]`, one per column; gradients flow into
them.
An unbatched input `[T, I]` takes states `[L, H]`, `is_init` `[T]` and
reset states `[L, T, H]` or `[L, H]`, as `torch.nn.LSTM`'s does.
`remat` picks what the forward saves for the backward: `none`, `gates`,
`chunk:K` or `budget:BYTES`; every policy gives bitwise identical results.
`storage="bf16"` (or `torch.bfloat16`) stores the saved values that are
not states in bf16 and rounds every GEMM operand to bf16 with f32
accumulation (float32 modules; states, outputs and gradients stay
float32); `None` or `torch.float32` stores them in float32.
`gemm_rows=N` sets the rows the GEMM blocks aim for (0: the target's
default), and `wavefront=True` runs the layers as a wavefront, block by
block, each on a stream of its own on CUDA (in order on the CPU, with the
same results); it needs at least two GEMM blocks (`gemm_rows` below
T x B) and holds every layer's scratch at once.
`dropout=p` drops between layers in training mode, as `torch.nn.LSTM`'s
does, with masks that the compiled code regenerates from a Philox4x32-10
key instead of storing them (rnn.dropout): each call draws its seed from
PyTorch's generator of the input's device, so `torch.manual_seed` makes
runs repeatable (a compiled graph draws it with the graph's RNG).

The first call for a (cell, shape, remat, device) compiles a library
(`rnnc.library`, cached on disk); every call runs it on the tensors'
storage. Its entry points are the custom ops rnnc::forward,
rnnc::backward and rnnc::inference (torch.library, with fake
implementations and an autograd formula), so that
`torch.compile(fullgraph=True)` and `torch.export` see one opaque call
per layer stack: the library is compiled or loaded while the graph is
traced and the graph holds its key, a string. A compiled graph is
specialized to the sequence length and batch size, as the library is.
`torch.func` transforms and `torch.jit.trace` are refused with an
`RNNCError`.

With gradients the forward entry point fills a saved region (a uint8
tensor kept in the autograd context, its size known at compile time)
and the backward entry point reads it; under `torch.no_grad()` the
inference entry point runs and nothing is saved. Tensors are float32, on
the CPU or on a CUDA device, or float64 on the CPU (`dtype=torch.float64`
or `.double()`: for gradient checks). Under `torch.autocast` a float32
module takes float32, bfloat16 or float16 inputs and states and returns
torch.nn's dtypes (see `_RNNBase._autocast`; under bf16 autocast on CUDA
bfloat16, where torch.nn's cuDNN path gives float16): bf16 autocast runs
the library with bf16 storage (`storage="bf16"`), fp16 autocast computes
in float32. bf16 and fp16 modules are refused (keep the module float32).
An input, state or `is_init` that is not contiguous in rnnc's layout is
copied once; a batch of no columns gives empty outputs, as torch.nn's
does. CUDA tensors run the library compiled for the cuda target, on
PyTorch's current stream of their device, without a synchronization,
and every buffer (the saved region and the scratch arena included) comes
from PyTorch's allocator. `set_graph_replay(calls)` opts in to graph
replay of the cuda libraries' calls: a call whose buffers (inputs,
parameters, outputs and the saved region, by address) are those of an
earlier call runs as one CUDA graph launch instead of a few launches per
time step. On the CPU the library's GEMMs
(OpenBLAS) run on `torch.get_num_threads()` threads, as PyTorch's own
operators do.
"""

import ctypes
import functools
import json
import math
import operator
import os
import re
import warnings
import weakref
from typing import Optional

import torch
from torch import nn

from . import _cells
from .library import RNNCError, _check_schedule, _used, compile_model

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

from torch._subclasses.functional_tensor import FunctionalTensor  # noqa: E402

# (__all__, with a module class per cell of the dialect: end of the file.)

# storage= as PyTorch names dtypes: torch.bfloat16 is "bf16", torch.float32
# the default (no storage of its own).
_STORAGE_DTYPES = {torch.bfloat16: "bf16", torch.float32: None}

_TORCH_DTYPES = {"bool": torch.bool, "uint8": torch.uint8,
                 "int64": torch.int64, "float32": torch.float32,
                 "float64": torch.float64}
_FLOATS = {torch.float32: "float32", torch.float64: "float64"}
# The floating types torch.autocast hands a module: converted to float32
# on the way in.
_AUTOCAST_INPUTS = (torch.float32, torch.bfloat16, torch.float16)
_NARROW_PARAMETERS = ("rnnc keeps float32 (or float64) parameters: for "
                      "bf16 compute keep the module float32 and call it "
                      "under torch.autocast, or pass storage='bf16'")


def _buffer(tensor, arg, layer_count, device):
    """The part of `tensor` that is `arg` (a layer of a `[L, ...]` stack for
    per-layer arguments), after checking dtype, shape, layout and device."""
    if arg.layer is not None:
        if tensor.dim() != len(arg.shape) + 1 or tensor.shape[0] != layer_count:
            raise RNNCError(f"{arg.name} must have shape "
                            f"{[layer_count, *arg.shape]}, got "
                            f"{list(tensor.shape)}")
        part = tensor[arg.layer]
    else:
        part = tensor
    want = _TORCH_DTYPES[arg.dtype]
    if part.dtype != want:
        raise RNNCError(f"{arg.name} must be {want}, got {part.dtype}")
    if tuple(part.shape) != arg.shape:
        raise RNNCError(f"{arg.name} must have shape {list(arg.shape)}, got "
                        f"{list(part.shape)}")
    if not part.is_contiguous():
        raise RNNCError(f"{arg.name} is not contiguous; rnnc reads tensors "
                        f"in place (call .contiguous() if a copy is meant)")
    if part.device != device:
        raise RNNCError(f"{arg.name} is on {part.device}, the input on "
                        f"{device}; rnnc needs every tensor on one device")
    return part


# The cuda library's kernels access 16-byte vectors: every buffer it is
# given must start at a multiple of 16 bytes (its entry points refuse
# others).
_CUDA_ALIGNMENT = 16
# The roles of the arguments an entry point writes.
_WRITTEN = ("output", "gradient", "saved", "scratch")


def _scratch(library, kind, device):
    """The library's scratch arena for `kind`, one per thread. On a GPU it
    is reused by later calls, which PyTorch's current stream orders after
    this one."""
    local = library._local
    arenas = getattr(local, "arenas", None)
    if arenas is None:
        arenas = local.arenas = {}
    size = library[kind].arena_bytes
    arena = arenas.get(kind)
    if arena is None or arena.numel() != size:
        arena = arenas[kind] = torch.empty(size, dtype=torch.uint8,
                                           device=device)
    return arena


# How many pointer sets each cuda library keeps graphs for
# (set_graph_replay); 0: off.
_GRAPH_REPLAY = 0


def set_graph_replay(calls):
    """Replays captured CUDA graphs of the calls of every cuda library
    rnnc.torch runs, now and later: each keeps the last `calls` sets of
    buffer addresses its entry points were called with. The second call
    with a kept set is captured into a CUDA graph and launched; later calls
    with it replay the graph, one launch in place of a few per time step,
    on a stream of the library's ordered after the current stream's
    earlier work and before its later work. Results are those of the call
    (the graph reads the buffers' current contents; dropout masks are drawn
    anew), and a call made while PyTorch captures a graph is captured as
    without replay. It pays off where the addresses repeat: static inputs
    and a caching allocator in a steady loop. 0 turns it off (the default)
    and drops the graphs. CPU tensors are not affected."""
    global _GRAPH_REPLAY
    if isinstance(calls, bool) or not isinstance(calls, int) or \
            not 0 <= calls < 2 ** 31:
        raise RNNCError(f"set_graph_replay takes a count of pointer sets "
                        f"from 0 (off) to 2**31 - 1, got {calls!r}")
    _GRAPH_REPLAY = calls
    for library in list(_LIBRARIES.values()):
        if library.target == "cuda" and library.graph_replay != calls:
            library.set_graph_replay(calls)


def _call(library, kind, tensors, layers, device):
    """Runs entry point `kind` with the buffers named in `tensors`, all on
    `device`."""
    entry = library[kind]
    pointers = []
    # Parts not aligned for the cuda kernels (a layer of a stack whose
    # layers are not multiples of 16 bytes, a view at an odd offset) run
    # through aligned copies, kept alive until the call is enqueued; those
    # the call writes are copied back.
    copies, write_back = [], []
    for arg in entry.args:
        if arg.name == "arena":
            tensor = _scratch(library, kind, device)
        else:
            tensor = tensors.get(arg.name)
            if tensor is None:
                raise RNNCError(f"internal: no buffer for {arg.name} of "
                                f"{entry.symbol}")
        part = _buffer(tensor, arg, layers, device)
        if device.type == "cuda" and part.data_ptr() % _CUDA_ALIGNMENT:
            aligned = part.clone()
            if arg.role in _WRITTEN:
                write_back.append((part, aligned))
            part = aligned
            copies.append(aligned)
        pointers.append(part.data_ptr())
    stream = None
    if device.type == "cuda":
        stream = torch.cuda.current_stream(device).cuda_stream
        if library.graph_replay != _GRAPH_REPLAY:
            library.set_graph_replay(_GRAPH_REPLAY)
    else:
        # The GEMMs use as many threads as PyTorch's CPU operators.
        library.set_blas_threads(torch.get_num_threads())
    entry.call(pointers, stream)
    # On the same stream, after the call's work.
    for part, aligned in write_back:
        part.copy_(aligned)


# --------------------------------------------------------------------------
# The library's entry points as PyTorch operators
# --------------------------------------------------------------------------
#
# Three custom ops (torch.library.custom_op, namespace rnnc) call the
# entry points; torch.compile, torch.export and opcheck see each as one
# opaque call:
#
#   rnnc::forward(key, x, is_init, rng?, h0, c0?, h_reset?, c_reset?,
#                 params[], consume_saved=False) -> (y, h_n, c_n, saved)
#   rnnc::backward(key, x, is_init, rng?, h0, c0?, h_reset?, c_reset?,
#                  params[], y, saved!, grad_y, grad_h_n, grad_c_n?)
#                  -> (grad_x, grad_h0, grad_c0, grad_h_reset, grad_c_reset,
#                      grad_params)
#   rnnc::inference(key, x, is_init, h0, c0?, h_reset?, c_reset?, params[])
#                   -> (y, h_n, c_n)
#
# `key` names the compiled library: a JSON object of compile_model's
# arguments. The module fills the registry `_LIBRARIES` (key -> loaded
# library) before it calls an op, in `_library_key`, which torch.compile
# runs once while tracing and keeps the key as a constant; an op whose key
# is not there (an exported program in a fresh process, or a library
# rnnc.library unloaded at its bound on loaded libraries) compiles or loads
# the library. The registry refers to libraries weakly, so that the bound
# holds: a pending backward finds its library again by key, from the cache
# entry its forward used. `params` are every layer's weight_ih, weight_hh,
# bias_ih, bias_hh in order (zero biases with bias=False). A GRU's or MGU's
# c_n is an empty tensor, as are the gradients of absent inputs;
# `grad_params` holds every parameter's gradient, one after the other (a
# custom op that mutates an input cannot return a list). The backward entry
# point computes in place in the saved region (the gates become their
# gradients): rnnc::backward mutates `saved` (see `_gradients` for what
# rnnc::forward's autograd formula does about it).
#
# The modules call the ops where a graph tool may be looking
# (torch.compile, torch.export, FakeTensor, make_fx: `_through_ops`);
# plain eager calls run the same implementations and the same autograd
# formula without the dispatcher's Python layers (`_Eager`), which would
# double the cost of a small training call.

_LIBRARIES = weakref.WeakValueDictionary()   # key -> Library
_KEYS = {}        # _library_key's arguments -> (key, compile_model's)


@torch.compiler.assume_constant_result
def _library_key(cell, seq_len, batch, input_size, hidden_size, layers, remat,
                 device, dtype, dropout, reset_to, storage, gemm_rows=0,
                 wavefront=False):
    """The key of the library for these arguments (torch.device, torch
    dtype), compiled or loaded (`compile_model`) and registered in
    `_LIBRARIES`. torch.compile runs it while tracing and keeps its result,
    so the compiled graph holds the key and calls no Python around it."""
    args = (cell, seq_len, batch, input_size, hidden_size, layers, remat,
            device, dtype, dropout, reset_to, storage, gemm_rows, wavefront)
    known = _KEYS.get(args)
    if known is None:
        request = _request(*args)
        known = (json.dumps(request, sort_keys=True, separators=(",", ":")),
                 request)
        if device.type == "cpu" or device.index is not None:
            _KEYS[args] = known
    key, request = known
    # Every call asks compile_model (a dictionary look-up once loaded), so
    # that a changed compiler or cache directory is seen as before.
    _LIBRARIES[key] = compile_model(**request)
    return key


def _request(cell, seq_len, batch, input_size, hidden_size, layers, remat,
             device, dtype, dropout, reset_to, storage, gemm_rows, wavefront):
    """compile_model's arguments for `_library_key`'s."""
    dtype = _FLOATS[dtype]
    if device.type == "cpu":
        request = dict(target="cpu", chip=None, device=None)
    elif device.type != "cuda":
        raise RNNCError(f"rnnc runs CPU and CUDA tensors, got {device}")
    elif dtype != "float32":
        raise RNNCError("float64 runs on the CPU only (the cuda target "
                        "computes in float32)")
    else:
        ordinal = device.index if device.index is not None else \
            torch.cuda.current_device()
        major, minor = torch.cuda.get_device_capability(ordinal)
        # PTX for sm_90 also runs on newer GPUs (the driver compiles it).
        request = dict(target="cuda", chip=f"sm_{min(major * 10 + minor, 90)}",
                       device=ordinal)
    request.update(cell=cell, seq_len=seq_len, batch=batch,
                   input_size=input_size, hidden_size=hidden_size,
                   layers=layers, remat=remat, dtype=dtype,
                   dropout=float(dropout), reset_to=reset_to, storage=storage,
                   gemm_rows=gemm_rows, wavefront=wavefront)
    return request


def _library_of(key):
    """The library a key names: registered by `_library_key`, else (an
    exported program run in a fresh process) compiled or loaded now."""
    library = _LIBRARIES.get(key)
    if library is None:
        try:
            request = json.loads(key)
        except ValueError:
            raise RNNCError(f"not an rnnc library key: {key!r}") from None
        library = _LIBRARIES[key] = compile_model(**request)
    else:
        _used(library)
    return library


_PARAM_KINDS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


@functools.lru_cache(maxsize=None)
def _param_names(layers):
    return tuple(f"{kind}_l{k}" for k in range(layers)
                 for kind in _PARAM_KINDS)


def _add_states(library, tensors, states, suffix, prefix=""):
    """Adds `states` (one per state of the library's cell, `h` first; None
    where absent) to `tensors` under their manifest names: `prefix`, the
    state's name, `suffix` (`h0`, `grad_c_reset`, ...)."""
    for name, state in zip(library.states, states):
        if state is not None:
            tensors[prefix + name + suffix] = state


def _named(library, x, is_init, rng, states, params):
    """The buffers of an entry point's inputs by manifest name; `states`
    are the two initial states and the two reset states (h0, c0, h_reset,
    c_reset for an LSTM; None where absent)."""
    if not 1 <= len(library.states) <= 2:
        raise RNNCError(f"rnnc.torch runs cells of one or two states, the "
                        f"library's has {list(library.states)}")
    if (states[1] is not None) != (len(library.states) == 2):
        raise RNNCError(f"the library's cell has the states "
                        f"{list(library.states)}, the call gives "
                        f"{1 + (states[1] is not None)}")
    tensors = {"x": x, "is_init": is_init}
    if rng is not None:
        tensors["rng"] = rng
    _add_states(library, tensors, states[:2], "0")
    _add_states(library, tensors, states[2:], "_reset")
    tensors.update(zip(_param_names(states[0].shape[0]), params))
    return tensors


def _new_outputs(x, h0, has_c):
    """y [T, B, H], h_n and c_n [L, B, H] (c_n empty without a second
    state)."""
    T, B = x.shape[0], x.shape[1]
    y = x.new_empty((T, B, h0.shape[2]))
    h_n = h0.new_empty(h0.shape)
    c_n = h0.new_empty(h0.shape) if has_c else h0.new_empty(0)
    return y, h_n, c_n


def _saved_region(library, device):
    """A saved region for the forward entry point. The bytes that no
    saved value covers (alignment padding) are zero, so that the region,
    an output of rnnc::forward, is a function of the inputs."""
    gaps = library.saved_gaps
    if device.type == "cuda" and gaps:
        return torch.zeros(library.saved_bytes, dtype=torch.uint8,
                           device=device)
    saved = torch.empty(library.saved_bytes, dtype=torch.uint8, device=device)
    if gaps:
        base = saved.data_ptr()
        for start, end in gaps:
            ctypes.memset(base + start, 0, end - start)
    return saved


def _forward_impl(key: str, x: torch.Tensor, is_init: torch.Tensor,
                  rng: Optional[torch.Tensor], h0: torch.Tensor,
                  c0: Optional[torch.Tensor], h_reset: Optional[torch.Tensor],
                  c_reset: Optional[torch.Tensor], params: list[torch.Tensor],
                  consume_saved: bool = False
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                             torch.Tensor]:
    """The forward entry point: y, h_n, c_n and the saved region (see
    `_gradients` for `consume_saved`)."""
    library = _library_of(key)
    y, h_n, c_n = _new_outputs(x, h0, c0 is not None)
    saved = _saved_region(library, x.device)
    tensors = _named(library, x, is_init, rng, (h0, c0, h_reset, c_reset),
                     params)
    tensors.update(y=y, saved=saved)
    _add_states(library, tensors, (h_n, c_n), "_n")
    _call(library, "fwd", tensors, h0.shape[0], x.device)
    return y, h_n, c_n, saved


def _backward_impl(key: str, x: torch.Tensor, is_init: torch.Tensor,
                   rng: Optional[torch.Tensor], h0: torch.Tensor,
                   c0: Optional[torch.Tensor], h_reset: Optional[torch.Tensor],
                   c_reset: Optional[torch.Tensor], params: list[torch.Tensor],
                   y: torch.Tensor, saved: torch.Tensor, grad_y: torch.Tensor,
                   grad_h_n: torch.Tensor, grad_c_n: Optional[torch.Tensor]
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                              torch.Tensor, torch.Tensor, torch.Tensor]:
    """The backward entry point: the gradients of x, h0, c0, h_reset,
    c_reset (empty where absent) and of every parameter (one tensor);
    computes in place in `saved`."""
    return _backward_run(key, x, is_init, rng, h0, c0, h_reset, c_reset,
                         params, y, saved, grad_y, grad_h_n, grad_c_n)[0]


def _backward_run(key, x, is_init, rng, h0, c0, h_reset, c_reset, params, y,
                  saved, grad_y, grad_h_n, grad_c_n):
    """rnnc::backward's implementation: its results, and the parameters'
    gradients (views of the last)."""
    library = _library_of(key)
    states = (h0, c0, h_reset, c_reset)
    tensors = _named(library, x, is_init, rng, states, params)
    tensors.update(y=y, saved=saved, grad_y=grad_y)
    _add_states(library, tensors, (grad_h_n, grad_c_n), "_n", "grad_")
    grads = _new_grads(x, states, params)
    tensors["grad_x"] = grads[0]
    # The gradients of the states that were given.
    given = [None if state is None else grad
             for state, grad in zip(states, grads[1:5])]
    _add_states(library, tensors, given[:2], "0", "grad_")
    _add_states(library, tensors, given[2:], "_reset", "grad_")
    param_grads = _param_grads(grads[-1], params)
    for name, grad in zip(_param_names(h0.shape[0]), param_grads):
        tensors["grad_" + name] = grad
    _call(library, "bwd", tensors, h0.shape[0], x.device)
    return grads, param_grads


def _inference_impl(key: str, x: torch.Tensor, is_init: torch.Tensor,
                    h0: torch.Tensor, c0: Optional[torch.Tensor],
                    h_reset: Optional[torch.Tensor],
                    c_reset: Optional[torch.Tensor],
                    params: list[torch.Tensor]
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The inference entry point: y, h_n, c_n; nothing is saved."""
    library = _library_of(key)
    y, h_n, c_n = _new_outputs(x, h0, c0 is not None)
    tensors = _named(library, x, is_init, None, (h0, c0, h_reset, c_reset),
                     params)
    tensors["y"] = y
    _add_states(library, tensors, (h_n, c_n), "_n")
    _call(library, "infer", tensors, h0.shape[0], x.device)
    return y, h_n, c_n


def _new_grads(x, states, params):
    """Empty gradients of x and the states (empty tensors where a state is
    absent) and of the parameters (one tensor)."""
    grads = [x.new_empty(x.shape)]
    for state in states:
        grads.append(x.new_empty(0) if state is None else
                     state.new_empty(state.shape))
    grads.append(x.new_empty(sum(p.numel() for p in params)))
    return tuple(grads)


def _param_grads(flat, params):
    """Each parameter's gradient: its part of `flat`, in order."""
    parts = flat.split_with_sizes([p.numel() for p in params])
    return [part.view(p.shape) for part, p in zip(parts, params)]


_forward_op = torch.library.custom_op("rnnc::forward", _forward_impl,
                                      mutates_args=())
_backward_op = torch.library.custom_op("rnnc::backward", _backward_impl,
                                       mutates_args=("saved",))
_inference_op = torch.library.custom_op("rnnc::inference", _inference_impl,
                                        mutates_args=())


@_forward_op.register_fake
def _(key, x, is_init, rng, h0, c0, h_reset, c_reset, params,
      consume_saved=False):
    # The saved region's size is the manifest's (the library is loaded,
    # not called).
    saved = x.new_empty(_library_of(key).saved_bytes, dtype=torch.uint8)
    return (*_new_outputs(x, h0, c0 is not None), saved)


@_backward_op.register_fake
def _(key, x, is_init, rng, h0, c0, h_reset, c_reset, params, y, saved,
      grad_y, grad_h_n, grad_c_n):
    return _new_grads(x, (h0, c0, h_reset, c_reset), params)


@_inference_op.register_fake
def _(key, x, is_init, h0, c0, h_reset, c_reset, params):
    return _new_outputs(x, h0, c0 is not None)


def _setup_forward(ctx, inputs, output):
    (key, x, is_init, rng, h0, c0, h_reset, c_reset, params,
     consume_saved) = inputs
    y, _, _, saved = output
    ctx.key = key
    ctx.has_c = c0 is not None
    ctx.consume_saved = consume_saved
    ctx.consumed = False
    # An output without a gradient comes as None (`cotangent` makes the
    # zeros the entry point reads): no zeros for the saved region.
    ctx.set_materialize_grads(False)
    ctx.save_for_backward(x, is_init, rng, h0, c0, h_reset, c_reset, y,
                          saved, *params)


def _gradients(ctx, grad_y, grad_h_n, grad_c_n, ops):
    """rnnc::forward's gradients by rnnc::backward (through the ops, or
    their implementations without `ops`), which computes in place in the
    saved region (the gates become their gradients): the
    gradients of x, h0, c0, h_reset, c_reset (None where absent) and the
    list of the parameters'.

    By default the backward runs on a copy of the region, which
    rnnc::forward returned unchanged. With `consume_saved=True` (the
    modules' calls: the caller drops the region) it runs in the region
    itself, and a second backward through the forward (retain_graph) runs
    the forward again first; traced into a graph (torch.compile,
    AOTAutograd), where the region is a value of the graph that its
    backward may read more than once, it runs on a copy (which inductor
    elides where the graph owns the region)."""
    (x, is_init, rng, h0, c0, h_reset, c_reset, y, saved,
     *params) = ctx.saved_tensors
    states = (h0, c0, h_reset, c_reset)
    consumed = ctx.consumed
    ctx.consumed = True

    def cotangent(grad, like):
        if grad is None:
            return torch.zeros_like(like)
        return grad.contiguous()

    cotangents = (cotangent(grad_y, y), cotangent(grad_h_n, h0),
                  cotangent(grad_c_n, c0) if ctx.has_c else None)

    def backward(region):
        """rnnc::backward's results and the parameters' gradients."""
        args = (ctx.key, x, is_init, rng, *states, params, y, region,
                *cotangents)
        if not ops:
            return _backward_run(*args)
        grads = _BACKWARD(*args)
        return grads, _param_grads(grads[-1], params)

    def run():
        if not ctx.consume_saved or isinstance(saved, FunctionalTensor):
            return backward(saved.clone())
        if consumed:
            forward = _FORWARD if ops else _forward_impl
            return backward(forward(ctx.key, x, is_init, rng, *states,
                                    params)[3])
        if not ops:
            return backward(saved)
        # The region is this node's, and `consumed` sees to it that no
        # later backward reads what rnnc::backward (a declared mutation)
        # leaves there: autograd's saved-tensor check, which would refuse
        # a second backward (retain_graph), is kept out of it.
        with torch.autograd._unsafe_preserve_version_counter(saved):
            return backward(saved)

    if torch.is_grad_enabled():
        # create_graph=True: the gradients are recorded as a function of
        # every input, so that differentiating them again is an error
        # rather than a result that silently misses terms.
        grads = _Recorded.apply(lambda: run()[0], x, *states, *params,
                                *[c for c in cotangents if c is not None])
        param_grads = _param_grads(grads[-1], params)
    else:
        grads, param_grads = run()
    grad_x, *grad_states, _ = grads
    grad_states = [None if state is None else grad
                   for state, grad in zip(states, grad_states)]
    return grad_x, grad_states, param_grads


def _backward_formula(ctx, grad_y, grad_h_n, grad_c_n, grad_saved):
    grad_x, grad_states, grad_params = _gradients(
        ctx, grad_y, grad_h_n, grad_c_n, ops=True)
    # key, x, is_init, rng, the states, the parameters, consume_saved.
    return (None, grad_x, None, None, *grad_states, grad_params, None)


_forward_op.register_autograd(_backward_formula, setup_context=_setup_forward)


def _no_inference_gradient(ctx, *grads):
    raise RNNCError("rnnc::inference computes no gradients: call the module "
                    "with gradients enabled (rnnc::forward), e.g. export it "
                    "outside torch.no_grad() to differentiate the result")


_inference_op.register_autograd(_no_inference_gradient)

_FORWARD = torch.ops.rnnc.forward.default
_BACKWARD = torch.ops.rnnc.backward.default
_INFERENCE = torch.ops.rnnc.inference.default


def _through_ops(tensors):
    """Whether a call must go through the ops: while torch.compile or
    torch.export traces, under a dispatch or torch-function mode
    (FakeTensor, make_fx, functionalization) or with tensor subclasses;
    otherwise (plain eager PyTorch) the modules call the implementations
    directly."""
    return (torch.compiler.is_compiling()
            or torch._C._len_torch_dispatch_stack() > 0
            or torch._C._is_torch_function_mode_enabled()
            or torch.overrides.has_torch_function(tensors))


class _Eager(torch.autograd.Function):
    """rnnc::forward (consume_saved=True) with its autograd formula, run
    without the dispatcher: the modules' eager calls."""

    @staticmethod
    def forward(ctx, key, x, is_init, rng, h0, c0, h_reset, c_reset,
                *params):
        params = list(params)
        outputs = _forward_impl(key, x, is_init, rng, h0, c0, h_reset,
                                c_reset, params)
        _setup_forward(ctx, (key, x, is_init, rng, h0, c0, h_reset, c_reset,
                             params, True), outputs)
        return outputs[:3]

    @staticmethod
    def backward(ctx, grad_y, grad_h_n, grad_c_n):
        grad_x, grad_states, grad_params = _gradients(
            ctx, grad_y, grad_h_n, grad_c_n, ops=False)
        # key, x, is_init, rng, the states, the parameters.
        return (None, grad_x, None, None, *grad_states, *grad_params)


class _Recorded(torch.autograd.Function):
    """The backward entry point's results as a node of a recorded graph
    (`create_graph=True`): they depend on every input and cotangent, and
    rnnc has no second-order derivative to offer."""

    @staticmethod
    def forward(ctx, run, *inputs):
        return run()

    @staticmethod
    def backward(ctx, *grads):
        raise RNNCError("rnnc's backward is not differentiable: a gradient "
                        "computed with create_graph=True cannot be "
                        "differentiated again")


# The most layers rnn-compile compiles (its --layers limit: the compiled
# program grows with the layer count).
MAX_LAYERS = 64
# rnn-compile's remat policies (none, gates, chunk:K, budget:BYTES; K and
# BYTES positive 64-bit integers), checked when a module is made.
_REMAT = re.compile(r"(none|gates|(chunk|budget):([0-9]+))")


def _check_remat(remat):
    if not isinstance(remat, str):
        raise RNNCError(f"remat must be a string, got {remat!r}")
    match = _REMAT.fullmatch(remat)
    if not match:
        raise RNNCError(f"unknown remat policy {remat!r} (expected none, "
                        f"gates, chunk:K or budget:BYTES)")
    if match.group(3) is not None and \
            not 1 <= int(match.group(3)) < 2 ** 63:
        what = "K" if match.group(2) == "chunk" else "BYTES"
        raise RNNCError(f"bad remat policy {remat!r}: {what} must be a "
                        f"positive integer")


def _device_of(device):
    """`device` as a torch.device on which rnnc can run, refused with one
    message otherwise."""
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise RNNCError(f"device {device!r} is not a device: {e}") from None
    if parsed.type not in ("cpu", "cuda"):
        raise RNNCError(f"rnnc runs on the CPU or CUDA devices, got {device}")
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


class _RNNBase(nn.Module):
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
        raise RNNCError(
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
            raise RNNCError("bidirectional layers are not supported by rnnc")
        if proj_size:
            raise RNNCError("proj_size is not supported by rnnc")
        if isinstance(dropout, bool) or not isinstance(dropout,
                                                        (int, float)) \
                or not 0 <= dropout < 1:
            raise RNNCError(f"dropout must be a probability in [0, 1), got "
                            f"{dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout applies between layers: with "
                          f"num_layers=1 and dropout={dropout} nothing is "
                          f"dropped")
        dtype = torch.float32 if dtype is None else dtype
        if dtype in (torch.bfloat16, torch.float16):
            raise RNNCError(f"rnnc supports float32 and float64, got "
                            f"{dtype}: {_NARROW_PARAMETERS}")
        if dtype not in _FLOATS:
            raise RNNCError(f"rnnc supports float32 and float64, got {dtype}")
        device = None if device is None else _device_of(device)
        for name, value in (("input_size", input_size),
                            ("hidden_size", hidden_size),
                            ("num_layers", num_layers)):
            if isinstance(value, bool) or not isinstance(value, int) or \
                    value <= 0:
                raise RNNCError(f"{name} must be a positive int, got {value!r}")
        if num_layers > MAX_LAYERS:
            raise RNNCError(f"num_layers must be at most {MAX_LAYERS}, got "
                            f"{num_layers}: the compiled program grows with "
                            f"the layer count")
        _check_remat(remat)
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
            raise RNNCError(f"storage must be None or 'bf16' (or "
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
                tensor = torch.empty(shape, dtype=dtype, device=device)
                if self.bias or name.startswith("weight"):
                    self.register_parameter(name, nn.Parameter(tensor))
                else:
                    # bias=False: the library adds zero biases (kept out of
                    # the parameters and the state dict, as torch.nn has
                    # none) and their gradients are dropped.
                    self.register_buffer(name, tensor.zero_(),
                                         persistent=False)
                self._param_names.append(name)

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    @property
    def _flat_params(self):
        return [getattr(self, name) for name in self._param_names]

    @property
    def all_weights(self):
        """`torch.nn.LSTM`'s: per layer, [weight_ih, weight_hh, bias_ih,
        bias_hh] ([weight_ih, weight_hh] with bias=False)."""
        params = self._flat_params
        kept = 4 if self.bias else 2
        return [params[4 * k:4 * k + kept] for k in range(self.num_layers)]

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
        dtype = self._flat_params[0].dtype
        if dtype in (torch.bfloat16, torch.float16):
            raise RNNCError(f"rnnc supports float32 and float64 parameters, "
                            f"got {dtype} (a module converted with "
                            f".to({dtype}) or .half()): {_NARROW_PARAMETERS}")
        if dtype not in _FLOATS:
            raise RNNCError(f"rnnc supports float32 and float64 parameters, "
                            f"got {dtype}")
        if any(p.dtype != dtype for p in self._flat_params):
            raise RNNCError("the parameters have different dtypes")
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

    def _library_key(self, seq_len, batch, device, dtype, reset_to,
                     storage=None):
        """The key of the library for a call (see `_library_key`), with
        the module's storage unless the call gives one."""
        return _library_key(self._cell, seq_len, batch, self.input_size,
                            self.hidden_size, self.num_layers, self.remat,
                            device, dtype, self._dropping, reset_to,
                            storage or self.storage, self.gemm_rows,
                            self.wavefront)

    def _library(self, seq_len, batch, device, dtype, reset_to):
        """The library for a call, compiled on first use."""
        return _library_of(self._library_key(seq_len, batch, device, dtype,
                                             reset_to))

    def _autocast(self, input):
        """(autocast's dtype, the dtype of the results) for this call, or
        (None, None) where torch.autocast is off for the input's device.
        The results' dtype is torch.nn's: autocast's on CUDA and for
        torch.nn.LSTM on the CPU, the input's for torch.nn.GRU on the CPU
        (which CPU autocast does not list; its GEMMs still run in
        autocast's dtype). The one exception is bf16 autocast on CUDA:
        torch.nn's cuDNN path casts to float16 under any CUDA autocast,
        rnnc gives bfloat16, what autocast asked for."""
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
            return cast, input.dtype
        return cast, cast

    @staticmethod
    def _converted(tensor, name, dtype, cast):
        """`tensor` in the parameters' dtype: under autocast (`cast` set)
        a float32, bfloat16 or float16 tensor is converted to float32 (a
        copy, through which gradients flow)."""
        if cast is not None and tensor.dtype in _AUTOCAST_INPUTS:
            return tensor.to(dtype)
        if tensor.dtype != dtype:
            raise RNNCError(f"{name} must be {_FLOATS[dtype]}, got "
                            f"{tensor.dtype}")
        return tensor

    def _check_input(self, input, is_init, dtype, cast):
        if not isinstance(input, torch.Tensor):
            if isinstance(input, nn.utils.rnn.PackedSequence):
                raise RNNCError("rnnc does not take a PackedSequence: pass "
                                "the padded tensor, and is_init to start "
                                "each sequence from a fresh state")
            raise RNNCError(f"input must be a tensor, got {type(input)}")
        if input.dim() != 3:
            raise RNNCError(f"input must be 3-D ([T, B, I], or [B, T, I] "
                            f"with batch_first) or 2-D [T, I] (unbatched), "
                            f"got shape {list(input.shape)}")
        if not (cast is not None and input.dtype in _AUTOCAST_INPUTS) and \
                input.dtype != dtype:
            raise RNNCError(f"input must be {_FLOATS[dtype]} (the "
                            f"parameters' dtype), got {input.dtype}")
        if input.shape[self._batch_dim ^ 1] == 0:
            raise RNNCError(f"input must have at least one step, got shape "
                            f"{list(input.shape)}")
        if input.shape[-1] != self.input_size:
            raise RNNCError(f"input has {input.shape[-1]} features, the "
                            f"layer expects input_size={self.input_size}")
        input = self._converted(input, "input", dtype, cast)
        if self.batch_first:
            input = input.transpose(0, 1)
        # The library reads [T, B, I] in place: anything else is copied
        # once (a batch_first input always is).
        input = input.contiguous()
        T, B = input.shape[0], input.shape[1]
        if is_init is None:
            is_init = torch.zeros((T, B), dtype=torch.bool,
                                  device=input.device)
        else:
            if not isinstance(is_init, torch.Tensor):
                raise RNNCError("is_init must be a bool tensor")
            if is_init.dtype != torch.bool:
                raise RNNCError(f"is_init must be torch.bool, got "
                                f"{is_init.dtype}")
            if tuple(is_init.shape) != ((B, T) if self.batch_first
                                        else (T, B)):
                order = "[B, T]" if self.batch_first else "[T, B]"
                raise RNNCError(f"is_init must have shape {order} of the "
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
            raise RNNCError(f"{name} must be a tensor")
        if tuple(state.shape) != (L, B, H):
            raise RNNCError(f"{name} must have shape [{L}, {B}, {H}] "
                            f"(num_layers, batch, hidden_size), got "
                            f"{list(state.shape)}")
        return self._converted(state, name, dtype, cast).contiguous()

    def _reset_states(self, reset_state, T, B, dtype, cast):
        """The reset states as the library takes them (time-major) and
        their form, "step" or "column"; (None, None), "zero" without."""
        names = tuple(state + "_reset" for state in self._states)
        if reset_state is None:
            return (None, None), "zero"
        if len(names) > 1:
            if not isinstance(reset_state, (tuple, list)) or \
                    len(reset_state) != len(names):
                raise RNNCError(f"reset_state of {self._what} must be a "
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
                raise RNNCError(f"{name} must be a tensor")
            state = self._converted(state, name, dtype, cast)
            if tuple(state.shape) == step:
                forms.append("step")
                if self.batch_first:
                    state = state.transpose(1, 2)
                states.append(state.contiguous())
            elif tuple(state.shape) == (L, B, H):
                forms.append("column")
                states.append(state.contiguous())
            else:
                raise RNNCError(f"{name} must have shape {order} {list(step)} "
                                f"(one state per step) or [L, B, H] "
                                f"{[L, B, H]} (one per batch column), got "
                                f"{list(state.shape)}")
        if len(set(forms)) > 1:
            raise RNNCError(f"{' and '.join(names)} must have the same form "
                            f"(both per step or both per batch column)")
        states += [None] * (2 - len(states))
        return tuple(states), forms[0]

    def _unbatched(self, input, h0, c0, is_init, reset_state):
        """A 2-D input `[T, I]` as `torch.nn.LSTM` takes it (states `[L,
        H]`, `is_init` `[T]`, reset states `[L, T, H]` or `[L, H]`, whatever
        `batch_first`), made a batch of one column."""
        col = self._batch_dim

        def column(state, name, step_dim=None):
            if state is None:
                return None
            if not isinstance(state, torch.Tensor):
                raise RNNCError(f"{name} must be a tensor")
            if step_dim is not None and state.dim() == 3:
                return state.unsqueeze(step_dim)
            if state.dim() != 2:
                shapes = "[L, H]" if step_dim is None else \
                    "[L, T, H] (per step) or [L, H]"
                raise RNNCError(f"{name} of an unbatched (2-D) input must be "
                                f"{shapes}, got shape {list(state.shape)}")
            return state.unsqueeze(1)

        if isinstance(is_init, torch.Tensor):
            if is_init.dim() != 1:
                raise RNNCError(f"is_init of an unbatched (2-D) input must "
                                f"be 1-D [T], got shape "
                                f"{list(is_init.shape)}")
            is_init = is_init.unsqueeze(col)
        if reset_state is not None:
            step_dim = 1 + col
            names = tuple(state + "_reset" for state in self._states)
            if len(names) > 1 and (
                    not isinstance(reset_state, (tuple, list)) or
                    len(reset_state) != len(names)):
                raise RNNCError(f"reset_state of {self._what} must be a "
                                f"tuple ({', '.join(names)})")
            if isinstance(reset_state, (tuple, list)):
                names = names[:len(reset_state)]
                reset_state = tuple(column(s, n, step_dim)
                                    for s, n in zip(reset_state, names))
            else:
                reset_state = column(reset_state, "h_reset", step_dim)
        return (input.unsqueeze(col), column(h0, "h0"), column(c0, "c0"),
                is_init, reset_state)

    def _run(self, input, h0, c0, is_init, reset_state=None):
        if torch.jit.is_tracing():
            raise RNNCError("torch.jit.trace cannot record rnnc's modules "
                            "(the library is chosen by the traced sizes): "
                            "use torch.compile, or torch.export to save a "
                            "program")
        if not torch.compiler.is_compiling() and \
                torch._C._functorch.peek_interpreter_stack() is not None:
            raise RNNCError("rnnc's modules do not run under torch.func "
                            "transforms (grad, vmap, jacrev, ...): the "
                            "rnnc ops have no functorch rules. Take "
                            "gradients with torch.autograd.grad or "
                            ".backward(), and batch along the batch "
                            "dimension")
        if isinstance(input, torch.Tensor) and input.dim() == 2:
            batched = self._unbatched(input, h0, c0, is_init, reset_state)
            y, *final = self._run(*batched)
            return (y.squeeze(self._batch_dim),) + tuple(s.squeeze(1)
                                                         for s in final)
        dtype = self._dtype
        cast, result = self._autocast(input)
        if cast is not None and dtype != torch.float32:
            raise RNNCError(f"torch.autocast needs a float32 module, this "
                            f"one is {dtype}")
        x, is_init = self._check_input(input, is_init, dtype, cast)
        T, B = x.shape[0], x.shape[1]
        h0 = self._state(h0, "h0", B, x.device, dtype, cast)
        if len(self._states) > 1:
            c0 = self._state(c0, self._states[1] + "0", B, x.device, dtype,
                             cast)
        resets, reset_to = self._reset_states(reset_state, T, B, dtype, cast)
        states = (h0, c0) + resets
        params = self._flat_params
        inputs = [x] + [t for t in states if t is not None] + params
        if B == 0:
            # No library runs to check each buffer's device.
            self._check_devices(x, is_init, states, params)
            y, h_n, c_n = self._empty_outputs(x, inputs)
        else:
            # Under bf16 autocast the library stores bf16 and rounds the
            # GEMM operands to bf16, accumulating in float32; under fp16
            # autocast it computes in float32 (rnnc has no fp16 storage).
            storage = "bf16" if cast == torch.bfloat16 else None
            y, h_n, c_n = self._call(x, is_init, states, params, inputs,
                                     reset_to, storage)
        if cast is not None:
            y, h_n, c_n = (t if t is None else t.to(result)
                           for t in (y, h_n, c_n))
        if self.batch_first:
            y = y.transpose(0, 1)
        return (y, h_n, c_n) if len(self._states) > 1 else (y, h_n)

    def _check_devices(self, x, is_init, states, params):
        """Every tensor of a call on the input's device, a CPU or CUDA one,
        as the library's entry points check each buffer (`_buffer`)."""
        if x.device.type not in ("cpu", "cuda"):
            raise RNNCError(f"rnnc runs CPU and CUDA tensors, got "
                            f"{x.device.type}")
        names = ("h0", "c0", "h_reset", "c_reset")
        named = [("is_init", is_init)] + list(zip(names, states)) + \
            list(zip(self._param_names, params))
        for name, t in named:
            if t is not None and t.device != x.device:
                raise RNNCError(f"{name} is on {t.device}, the input on "
                                f"{x.device}; rnnc needs every tensor on one "
                                f"device")

    def _empty_outputs(self, x, inputs):
        """The outputs of a batch of 0 columns, as torch.nn's: empty, and
        with gradients (zero) for every input that requires them."""
        T, L, H = x.shape[0], self.num_layers, self.hidden_size
        y, h_n = x.new_zeros((T, 0, H)), x.new_zeros((L, 0, H))
        c_n = x.new_zeros((L, 0, H)) if len(self._states) > 1 else None
        if torch.is_grad_enabled() and any(t.requires_grad for t in inputs):
            anchor = sum(t.sum() for t in inputs) * 0
            y, h_n = y + anchor, h_n + anchor
            c_n = None if c_n is None else c_n + anchor
        return y, h_n, c_n

    def _call(self, x, is_init, states, params, inputs, reset_to, storage):
        """The library's outputs y, h_n, c_n (None for a GRU) for
        time-major `x`."""
        T, B = x.shape[0], x.shape[1]
        # A library is compiled for its sizes: under torch.compile with
        # dynamic shapes, operator.index specializes the graph to them.
        key = self._library_key(operator.index(T), operator.index(B),
                                x.device, x.dtype, reset_to, storage)
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
                rng = torch.zeros(2, dtype=torch.int64, device=x.device)
                rng[0].random_()
        ops = _through_ops(inputs)
        if torch.is_grad_enabled() and any(t.requires_grad for t in inputs):
            if ops:
                y, h_n, c_n, _ = _FORWARD(key, x, is_init, rng, *states,
                                          params, True)
            else:
                y, h_n, c_n = _Eager.apply(key, x, is_init, rng, *states,
                                           *params)
        elif rng is not None:
            # Training mode without gradients still drops: the forward
            # entry point (the inference one drops nothing).
            with torch.no_grad():
                y, h_n, c_n, _ = (_FORWARD if ops else _forward_impl)(
                    key, x, is_init, rng, *states, params)
        else:
            y, h_n, c_n = (_INFERENCE if ops else _inference_impl)(
                key, x, is_init, *states, params)
        return y, h_n, c_n


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
      hx: (h0, c0), each [L, B, H]; zeros if None.
      is_init: bool [T, B] ([B, T] with batch_first): True at step t of
          column b starts a new episode there; its entering state is zero,
          or reset_state's.
      reset_state: (h_reset, c_reset), each [L, T, B, H] (per step,
          [L, B, T, H] with batch_first) or [L, B, H] (per column): the
          state a reset step enters; gradients flow into it.

    Returns y [T, B, H] and (h_n, c_n), each [L, B, H], as torch.nn.LSTM.
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
                raise RNNCError(f"hx of {self._what} must be a tuple (h0, "
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
    [L, B, H]). Returns y [T, B, H] and h_n [L, B, H], as torch.nn.GRU.
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
