"""The compiled library's entry points as PyTorch operators: the registry
of loaded libraries by key, and the custom ops rnnc::forward,
rnnc::backward and rnnc::inference with their implementations and fake
implementations. Their autograd formula, and the modules' call path
(`_run`), are _autograd.py's."""

import ctypes
import functools
import json
from typing import Optional

import torch

from . import _dynamic
from ._abi import _FLOATS, _LIBRARIES, _call
from .library import RNNCError, _used, compile_model, cuda_chip

# --------------------------------------------------------------------------
# The library's entry points as PyTorch operators
# --------------------------------------------------------------------------
#
# Three custom ops (torch.library.custom_op, namespace rnnc) call the
# entry points; torch.compile, torch.export and opcheck see each as one
# opaque call:
#
#   rnnc::forward(key, x, is_init, rng?, states[], reset_states[],
#                 params[], consume_saved=False) -> (y, states_n[], saved)
#   rnnc::backward(key, x, is_init, rng?, states[], reset_states[],
#                  params[], y, saved!, grad_y, grad_states_n[])
#                  -> (grad_x, grad_states, grad_reset_states, grad_params)
#   rnnc::inference(key, x, is_init, states[], reset_states[], params[])
#                   -> (y, states_n[])
#
# `key` names the compiled library: a JSON object of compile_model's
# arguments. The module fills the registry `_LIBRARIES` (key -> loaded
# library) before it calls an op, in `_library_key`, which torch.compile
# runs once while tracing and keeps the key as a constant; an op whose key
# is not there (an exported program in a fresh process, or a library
# rnnc.library unloaded at its bound on loaded libraries) compiles or loads
# the library. The registry refers to libraries weakly, so that the bound
# holds: a pending backward finds its library again by key, from the cache
# entry its forward used. `states` are the cell's states in the manifest's
# order (h, then c for an LSTM or CIFG), each [L, B, H], so that a cell of
# any states passes; `reset_states` as many states that a reset step
# enters ([L, T, B, H] per step or [L, B, H] per column), or none (zeros).
# `params` are every layer's weight_ih, weight_hh, bias_ih, bias_hh in
# order (zero biases with bias=False). The backward's results hold each
# kind's gradients one after the other (a custom op that mutates an input
# cannot return a list): the states', the reset states' (empty without)
# and the parameters'. The backward entry point computes in place in the
# saved region (the gates become their gradients): rnnc::backward mutates
# `saved` (see `_gradients` for what rnnc::forward's autograd formula does
# about it).
#
# The modules call the ops where a graph tool may be looking
# (torch.compile, torch.export, FakeTensor, make_fx: `_through_ops`);
# eager calls and torch.func transforms run the same implementations and
# the same autograd formula without the dispatcher's Python layers
# (`_Forward`, `_Inference`), which would double the cost of a small
# training call. `_autograd._run` chooses.

_KEYS = {}        # _library_key's arguments -> (key, compile_model's)


def _assume_constant_result(fn):
    """torch.compiler.assume_constant_result, which imports TorchDynamo
    (seconds per process, also one that compiles nothing), as the
    attribute it sets; test_torch_compile.py checks that it sets only this
    one."""
    fn._dynamo_marked_constant = True
    return fn


@_assume_constant_result
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
        request = dict(target="cuda",
                       chip=cuda_chip(*torch.cuda.get_device_capability(
                           ordinal)),
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


def _library_at(key, x):
    """The library a key names, at the call's T and B (x's first two
    sizes) where it serves every shape."""
    library = _library_of(key)
    return library.at(x.shape[0], x.shape[1]) if library.dynamic else library


def _saved_bytes(key, x):
    """The bytes of the saved region of a forward at x's T and B: ints, or
    while a graph is traced with dynamic sizes, an expression in them."""
    library = _library_of(key)
    if not library.dynamic:
        return library.saved_bytes
    T, B = x.shape[0], x.shape[1]
    if isinstance(T, int) and isinstance(B, int):
        return library.at(T, B).saved_bytes
    forward = library.entries.get("fwd")
    if forward is None:
        return 0
    layout = None if forward.saved_sizes is None else \
        _dynamic.saved_layout(forward, T, B)
    if layout is None:
        # No layout in T and B: a size the traced graph learns when it
        # runs.
        return torch.library.get_ctx().new_dynamic_size()
    return layout[1]


_PARAM_KINDS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


@functools.lru_cache(maxsize=None)
def _param_names(layers):
    return tuple(f"{kind}_l{k}" for k in range(layers)
                 for kind in _PARAM_KINDS)


def _add_states(library, tensors, states, suffix, prefix=""):
    """Adds `states` (one per state of the library's cell, in the
    manifest's order) to `tensors` under their manifest names: `prefix`,
    the state's name, `suffix` (`h0`, `grad_c_reset`, ...)."""
    for name, state in zip(library.states, states):
        tensors[prefix + name + suffix] = state


def _named(library, x, is_init, rng, states, resets, params):
    """The buffers of an entry point's inputs by manifest name: `states`
    are the cell's initial states and `resets` its reset states (none:
    zeros), each in the manifest's order (h, then c for an LSTM)."""
    names = list(library.states)
    if len(states) != len(names):
        raise RNNCError(f"the library's cell has the states {names}, the "
                        f"call gives {len(states)}")
    if resets and len(resets) != len(names):
        raise RNNCError(f"the library's cell has the states {names}, the "
                        f"call gives {len(resets)} reset states")
    tensors = {"x": x, "is_init": is_init}
    if rng is not None:
        tensors["rng"] = rng
    _add_states(library, tensors, states, "0")
    _add_states(library, tensors, resets, "_reset")
    tensors.update(zip(_param_names(states[0].shape[0]), params))
    return tensors


def _new_outputs(x, states):
    """y [T, B, H] and a final state shaped as each state, [L, B, H]."""
    y = x.new_empty((x.shape[0], x.shape[1], states[0].shape[2]))
    return y, [state.new_empty(state.shape) for state in states]


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
                  rng: Optional[torch.Tensor], states: list[torch.Tensor],
                  reset_states: list[torch.Tensor], params: list[torch.Tensor],
                  consume_saved: bool = False
                  ) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
    """The forward entry point: y, the final states and the saved region
    (see `_gradients` for `consume_saved`)."""
    library = _library_at(key, x)
    y, states_n = _new_outputs(x, states)
    saved = _saved_region(library, x.device)
    tensors = _named(library, x, is_init, rng, states, reset_states, params)
    tensors.update(y=y, saved=saved)
    _add_states(library, tensors, states_n, "_n")
    _call(library, "fwd", tensors, states[0].shape[0], x.device)
    return y, states_n, saved


def _backward_impl(key: str, x: torch.Tensor, is_init: torch.Tensor,
                   rng: Optional[torch.Tensor], states: list[torch.Tensor],
                   reset_states: list[torch.Tensor],
                   params: list[torch.Tensor], y: torch.Tensor,
                   saved: torch.Tensor, grad_y: torch.Tensor,
                   grad_states_n: list[torch.Tensor]
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                              torch.Tensor]:
    """The backward entry point: the gradients of x, of the states, of
    the reset states (empty without) and of the parameters, each kind in
    one tensor; computes in place in `saved`."""
    return _backward_run(key, x, is_init, rng, states, reset_states, params,
                         y, saved, grad_y, grad_states_n)[0]


def _backward_run(key, x, is_init, rng, states, resets, params, y, saved,
                  grad_y, grad_states_n):
    """rnnc::backward's implementation: its results, and each input's
    gradient (`_parts`, views of the results)."""
    library = _library_at(key, x)
    tensors = _named(library, x, is_init, rng, states, resets, params)
    tensors.update(y=y, saved=saved, grad_y=grad_y)
    _add_states(library, tensors, grad_states_n, "_n", "grad_")
    grads = _new_grads(x, states, resets, params)
    parts = _parts(grads, states, resets, params)
    tensors["grad_x"] = parts[0]
    _add_states(library, tensors, parts[1], "0", "grad_")
    _add_states(library, tensors, parts[2], "_reset", "grad_")
    for name, grad in zip(_param_names(states[0].shape[0]), parts[3]):
        tensors["grad_" + name] = grad
    _call(library, "bwd", tensors, states[0].shape[0], x.device)
    return grads, parts


def _inference_impl(key: str, x: torch.Tensor, is_init: torch.Tensor,
                    states: list[torch.Tensor],
                    reset_states: list[torch.Tensor],
                    params: list[torch.Tensor]
                    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The inference entry point: y and the final states; nothing is
    saved."""
    library = _library_at(key, x)
    y, states_n = _new_outputs(x, states)
    tensors = _named(library, x, is_init, None, states, reset_states, params)
    tensors["y"] = y
    _add_states(library, tensors, states_n, "_n")
    _call(library, "infer", tensors, states[0].shape[0], x.device)
    return y, states_n


def _new_grads(x, states, resets, params):
    """Empty gradients of x, and of the states, the reset states and the
    parameters, each kind in one tensor."""
    def flat(tensors):
        return x.new_empty(sum(t.numel() for t in tensors))
    return x.new_empty(x.shape), flat(states), flat(resets), flat(params)


def _split(flat, like):
    """The gradient of each tensor of `like`: its part of `flat`, in
    order."""
    if not like:
        return []
    parts = flat.split_with_sizes([t.numel() for t in like])
    return [part.view(t.shape) for part, t in zip(parts, like)]


def _parts(grads, states, resets, params):
    """rnnc::backward's results as the gradient of x and the lists of the
    states', reset states' and parameters' gradients."""
    return (grads[0], _split(grads[1], states), _split(grads[2], resets),
            _split(grads[3], params))


_forward_op = torch.library.custom_op("rnnc::forward", _forward_impl,
                                      mutates_args=())
_backward_op = torch.library.custom_op("rnnc::backward", _backward_impl,
                                       mutates_args=("saved",))
_inference_op = torch.library.custom_op("rnnc::inference", _inference_impl,
                                        mutates_args=())


@_forward_op.register_fake
def _(key, x, is_init, rng, states, reset_states, params,
      consume_saved=False):
    # The saved region's size is the manifest's, or its sizes entry
    # point's (the library is loaded, not called).
    saved = x.new_empty(_saved_bytes(key, x), dtype=torch.uint8)
    return (*_new_outputs(x, states), saved)


@_backward_op.register_fake
def _(key, x, is_init, rng, states, reset_states, params, y, saved, grad_y,
      grad_states_n):
    return _new_grads(x, states, reset_states, params)


@_inference_op.register_fake
def _(key, x, is_init, states, reset_states, params):
    return _new_outputs(x, states)


_FORWARD = torch.ops.rnnc.forward.default
_BACKWARD = torch.ops.rnnc.backward.default
_INFERENCE = torch.ops.rnnc.inference.default

# The autograd formula of rnnc::forward and rnnc::inference, and the
# modules' call path (_autograd.py), registered with the ops.
from . import _autograd  # noqa: E402,F401
