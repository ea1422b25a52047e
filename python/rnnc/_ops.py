"""The compiled library's entry points as PyTorch operators: the registry
of loaded libraries by key, the custom ops rnnc::forward, rnnc::backward
and rnnc::inference with their fake implementations and autograd formula,
and the same implementations and formula as autograd.Functions with vmap
rules, which eager calls and torch.func transforms run without the
dispatcher (see the comments below). rnnc.torch's modules call them
through `_run`."""

import ctypes
import functools
import inspect
import json
from typing import Optional

import torch

from . import _dynamic
from ._abi import _FLOATS, _LIBRARIES, _call
from ._errors import RNNCValueError
from .library import RNNCError, _used, compile_model

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
# eager calls and torch.func transforms run the same implementations and
# the same autograd formula without the dispatcher's Python layers
# (`_Forward`, `_Inference`), which would double the cost of a small
# training call. `_run` chooses.

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
    if forward.saved_sizes is None:
        # No layout in T and B: a size the traced graph learns when it
        # runs.
        return torch.library.get_ctx().new_dynamic_size()
    return _dynamic.saved_layout(forward, T, B)[1]


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
    library = _library_at(key, x)
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
    library = _library_at(key, x)
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
    library = _library_at(key, x)
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
    # The saved region's size is the manifest's, or its sizes entry
    # point's (the library is loaded, not called).
    saved = x.new_empty(_saved_bytes(key, x), dtype=torch.uint8)
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
    # A forward traced into a graph (a dispatch mode is active: FakeTensor,
    # functionalization, make_fx) keeps its region (see `_gradients`).
    ctx.consume_saved = consume_saved and not _tracing()
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
    the forward again first. A forward traced into a graph (torch.compile,
    AOTAutograd, make_fx), where the region is a value of the graph that
    its backward may read more than once, keeps it (`_setup_forward`), as
    does a recorded backward (create_graph=True, torch.func), which runs
    on a copy."""
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
        if not ctx.consume_saved:
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
        # a second backward (retain_graph), is kept out of it. Private
        # PyTorch API, checked on PyTorch 2.15
        # (test_torch_compile.py::test_private_pytorch_apis).
        with torch.autograd._unsafe_preserve_version_counter(saved):
            return backward(saved)

    if torch.is_grad_enabled():
        # create_graph=True or a torch.func transform: the gradients are
        # recorded as a function of every input (`_Backward`), so that
        # differentiating them again is an error rather than a result
        # that silently misses terms.
        needed = ctx.needs_input_grad
        params_needed = ops or any(needed[len(needed) - len(params):])
        grads = _Backward.apply(ops, ctx.key, x, is_init, rng, *states, y,
                                saved, *cotangents, params_needed, *params)
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


def _tracing():
    """Whether a graph tool is looking: torch.compile or torch.export
    traces, or a dispatch mode (FakeTensor, functionalization, make_fx) is
    active. `torch._C._len_torch_dispatch_stack` is private PyTorch API,
    checked on PyTorch 2.15
    (test_torch_compile.py::test_private_pytorch_apis)."""
    return (torch.compiler.is_compiling()
            or torch._C._len_torch_dispatch_stack() > 0)


# The tensor types the modules' eager calls hand the library directly.
_PLAIN = (torch.Tensor, torch.nn.Parameter)


def _through_ops(tensors):
    """Whether a call must go through the ops: while a graph tool looks
    (`_tracing`) or with tensor subclasses (FakeTensor, FunctionalTensor,
    a __torch_function__ override)."""
    return (_tracing() or torch.overrides.has_torch_function(tensors)
            or any(type(t) not in _PLAIN for t in tensors))


def _wrapped(tensors):
    """Whether a tensor is a torch.func transform's wrapper (vmap's,
    grad's), which has no storage, hence no data pointer, of its own."""
    for t in tensors:
        try:
            t.data_ptr()
        except RuntimeError:
            return True
    return False


def _run(key, x, is_init, rng, states, params, tensors, grad):
    """y, h_n, c_n of a module's call (`tensors`: every tensor argument),
    differentiable where `grad`: through the ops where a graph tool looks
    (`_through_ops`), else through `_Forward` and `_Inference`, which run
    the ops' implementations under autograd and torch.func without the
    dispatcher; eager calls without gradients call the implementations
    themselves (an autograd.Function costs about 10 us more per call)."""
    if _through_ops(tensors):
        if grad:
            return _FORWARD(key, x, is_init, rng, *states, params, True)[:3]
        if rng is not None:
            # Training mode without gradients still drops: the forward
            # entry point (the inference one drops nothing).
            with torch.no_grad():
                return _FORWARD(key, x, is_init, rng, *states, params)[:3]
        return _INFERENCE(key, x, is_init, *states, params)
    if grad:
        return _Forward.apply(key, x, is_init, rng, *states, *params)[:3]
    if _wrapped(tensors):
        if rng is not None:
            with torch.no_grad():
                return _Forward.apply(key, x, is_init, rng, *states,
                                      *params)[:3]
        return _Inference.apply(key, x, is_init, *states, *params)
    if rng is not None:
        return _forward_impl(key, x, is_init, rng, *states, params)[:3]
    return _inference_impl(key, x, is_init, *states, params)


# --------------------------------------------------------------------------
# Eager calls and torch.func
# --------------------------------------------------------------------------
#
# `_Forward`, `_Backward` and `_Inference` are the ops' implementations
# and autograd formula as autograd.Functions in torch.func's form
# (forward, setup_context, backward and a vmap rule), so that
# torch.func.grad, vjp and vmap, in any nesting, run them. Under vmap an
# axis of the inputs that the weights share is folded into the batch (one
# call of B' = N * B columns, element-major); with vmapped weights (a
# stacked ensemble) each element is its own call. A vmapped backward
# (vmap of grad, per-example gradients) needs each element's parameter
# gradients, which a folded call sums: it runs each element's forward and
# backward (2N calls after the folded forward), and folds only when no
# parameter gradient is asked for.

# The arguments of `_Forward` that have a batch dimension, by position
# after `key`: x, is_init, (rng), h0, c0, h_reset, c_reset.
_COLUMNS = (0, 1, 3, 4, 5, 6)


def _batch_axis(t, bdim):
    """The batch (B) dimension of an entry point's tensor with vmapped
    dimension `bdim`: 2 for [L, T, B, H] (per-step reset states), else 1
    ([T, B, ...], [L, B, H])."""
    return 2 if t.dim() - (bdim is not None) == 4 else 1


def _fold(t, bdim, n):
    """An argument of a call vmapped over n elements (`bdim`: its vmapped
    dimension, None where the elements share it) as one call's: the
    elements side by side along the batch dimension, element-major."""
    if t is None:
        return None
    axis = _batch_axis(t, bdim)
    if bdim is None:
        t = t.unsqueeze(axis).expand(*t.shape[:axis], n, *t.shape[axis:])
    else:
        t = t.movedim(bdim, axis)
    return t.flatten(axis, axis + 1).contiguous()


def _unfold(t, n):
    """A result of a folded call split into its n elements, with its
    vmapped dimension; an absent one (empty) is shared."""
    if t.dim() == 1:
        return t, None
    axis = _batch_axis(t, None)
    return t.unflatten(axis, (n, -1)), axis


def _element(t, bdim, i):
    """Element i of a vmapped argument (itself where shared)."""
    if t is None or bdim is None or not isinstance(t, torch.Tensor):
        return t
    return t.select(bdim, i).contiguous()


def _each(n, in_dims, args, call):
    """`call` once per element of a vmapped call, its results stacked:
    the results and their vmapped dimensions."""
    results = [call(*(_element(a, d, i) for a, d in zip(args, in_dims)))
               for i in range(n)]
    stacked = tuple(torch.stack(r) for r in zip(*results))
    return stacked, (0,) * len(stacked)


def _key_at(key, batch):
    """The key of the library `key` names at another batch size (itself
    for a library of every shape)."""
    request = json.loads(key)
    if request.get("batch") is None:
        return key
    request["batch"] = batch
    return json.dumps(request, sort_keys=True, separators=(",", ":"))


def _no_dropout_under_vmap(rng):
    if rng is not None:
        raise RNNCValueError("rnnc's dropout does not run under "
                             "torch.func.vmap (its masks are drawn per "
                             "call): vmap the module in eval() or with "
                             "dropout=0")


def _no_forward_mode(*args):
    raise RNNCValueError("rnnc computes reverse-mode gradients only: "
                         "forward-mode AD (torch.func.jvp, jacfwd, "
                         "torch.autograd.forward_ad) is not supported; "
                         "use vjp, grad or jacrev")


def _positional(forward):
    """`forward` as a function of positional arguments with its signature
    at hand: autograd.Function.apply binds a call's arguments to the
    forward's signature (for setup_context), which inspect computes anew
    on every call unless the function carries it."""
    @functools.wraps(forward)
    def positional(*args):
        return forward(*args)
    positional.__signature__ = inspect.signature(positional)
    return positional


class _Forward(torch.autograd.Function):
    """rnnc::forward (consume_saved=True) with its autograd formula: the
    modules' calls with gradients outside graph tools. Returns y, h_n, c_n
    and the saved region (non-differentiable)."""

    @staticmethod
    @_positional
    def forward(key, x, is_init, rng, h0, c0, h_reset, c_reset, *params):
        return _forward_impl(key, x, is_init, rng, h0, c0, h_reset, c_reset,
                             list(params))

    @staticmethod
    def setup_context(ctx, inputs, output):
        key, x, is_init, rng, h0, c0, h_reset, c_reset, *params = inputs
        _setup_forward(ctx, (key, x, is_init, rng, h0, c0, h_reset, c_reset,
                             params, True), output)
        ctx.mark_non_differentiable(output[3])

    @staticmethod
    def backward(ctx, grad_y, grad_h_n, grad_c_n, grad_saved):
        grad_x, grad_states, grad_params = _gradients(
            ctx, grad_y, grad_h_n, grad_c_n, ops=False)
        # key, x, is_init, rng, the states, the parameters.
        return (None, grad_x, None, None, *grad_states, *grad_params)

    @staticmethod
    def vmap(info, in_dims, key, *args):
        _no_dropout_under_vmap(args[2])
        n, dims = info.batch_size, in_dims[1:]
        if any(d is not None for d in dims[7:]):
            # A weight set per element.
            return _each(n, dims, args,
                         lambda *a: _Forward.apply(key, *a))
        folded = [_fold(args[i], dims[i], n) if i in _COLUMNS else args[i]
                  for i in range(len(args))]
        y, h_n, c_n, saved = _Forward.apply(
            _key_at(key, folded[0].shape[1]), *folded)
        (y, y_dim), (h_n, h_dim), (c_n, c_dim) = (
            _unfold(t, n) for t in (y, h_n, c_n))
        return (y, h_n, c_n, saved), (y_dim, h_dim, c_dim, None)

    jvp = staticmethod(_no_forward_mode)


class _Backward(torch.autograd.Function):
    """rnnc::backward on a copy of the saved region, recorded
    (create_graph=True, torch.func) as a function of every input: it has
    no derivative of its own, so differentiating it is an error.
    `params_needed`: whether a vmapped call must give each element's
    parameter gradients (see above)."""

    @staticmethod
    @_positional
    def forward(ops, key, x, is_init, rng, h0, c0, h_reset, c_reset, y,
                saved, grad_y, grad_h_n, grad_c_n, params_needed, *params):
        args = (key, x, is_init, rng, h0, c0, h_reset, c_reset, list(params),
                y, saved.clone(), grad_y, grad_h_n, grad_c_n)
        return _BACKWARD(*args) if ops else _backward_impl(*args)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, *grads):
        raise RNNCError("rnnc's backward is not differentiable: a gradient "
                        "computed with create_graph=True (or a nested "
                        "torch.func transform) cannot be differentiated "
                        "again")

    @staticmethod
    def vmap(info, in_dims, ops, key, *args):
        n, dims = info.batch_size, in_dims[2:]
        # args: x, is_init, rng, h0, c0, h_reset, c_reset, y, saved,
        # grad_y, grad_h_n, grad_c_n, params_needed, *params.
        params_needed, params = args[12], args[13:]
        forward_vmapped = any(dims[i] is not None for i in _COLUMNS)
        if dims[8] is None and forward_vmapped and not params_needed and \
                all(d is None for d in dims[13:]):
            # The forward was one folded call (`_Forward.vmap`): so is the
            # backward.
            folded = [a if i in (2, 8) or i >= 12 else _fold(a, dims[i], n)
                      for i, a in enumerate(args)]
            grads = _Backward.apply(ops, _key_at(key, folded[0].shape[1]),
                                    *folded)
            unfolded = [_unfold(t, n) for t in grads[:-1]]
            return (tuple(t for t, _ in unfolded) + grads[-1:],
                    tuple(d for _, d in unfolded) + (None,))

        def element(x, is_init, rng, h0, c0, h_reset, c_reset, y, saved,
                    grad_y, grad_h_n, grad_c_n, params_needed, *params):
            if forward_vmapped and dims[8] is None:
                # The region is the folded forward's: this element's own
                # forward gives its region (and output).
                with torch.no_grad():
                    forward = _FORWARD if ops else _Forward.apply
                    y, _, _, saved = forward(
                        key, x, is_init, rng, h0, c0, h_reset, c_reset,
                        *([list(params)] if ops else params))
            return _Backward.apply(ops, key, x, is_init, rng, h0, c0,
                                   h_reset, c_reset, y, saved, grad_y,
                                   grad_h_n, grad_c_n, True, *params)

        return _each(n, dims, args, element)

    jvp = staticmethod(_no_forward_mode)


class _Inference(torch.autograd.Function):
    """rnnc::inference: the modules' calls without gradients outside graph
    tools (y, h_n, c_n)."""

    @staticmethod
    @_positional
    def forward(key, x, is_init, h0, c0, h_reset, c_reset, *params):
        return _inference_impl(key, x, is_init, h0, c0, h_reset, c_reset,
                               list(params))

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, *grads):
        _no_inference_gradient(ctx)

    @staticmethod
    def vmap(info, in_dims, key, *args):
        n, dims = info.batch_size, in_dims[1:]
        if any(d is not None for d in dims[6:]):
            return _each(n, dims, args,
                         lambda *a: _Inference.apply(key, *a))
        # x, is_init, h0, c0, h_reset, c_reset have a batch dimension.
        folded = [_fold(a, d, n) if i < 6 else a
                  for i, (a, d) in enumerate(zip(args, dims))]
        outputs = _Inference.apply(_key_at(key, folded[0].shape[1]),
                                   *folded)
        unfolded = [_unfold(t, n) for t in outputs]
        return (tuple(t for t, _ in unfolded),
                tuple(d for _, d in unfolded))

    jvp = staticmethod(_no_forward_mode)
