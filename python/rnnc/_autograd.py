"""The autograd formula of the rnnc custom ops (_ops.py) and the
modules' call path: rnnc::forward's backward by rnnc::backward, the same
implementations and formula as autograd.Functions with vmap rules, which
eager calls and torch.func transforms run without the dispatcher, and
`_run`, which chooses between them and the ops."""

import functools
import inspect
import json

import torch

from ._errors import RNNCError, RNNCValueError
from ._ops import (_BACKWARD, _FORWARD, _INFERENCE, _backward_impl,
                   _backward_run, _forward_impl, _forward_op,
                   _inference_impl, _inference_op, _parts, _split)


def _setup_forward(ctx, inputs, output):
    (key, x, is_init, rng, states, resets, params,
     consume_saved) = inputs
    y, _, saved = output
    ctx.key = key
    ctx.counts = (len(states), len(resets))
    # A forward traced into a graph (a dispatch mode is active: FakeTensor,
    # functionalization, make_fx) keeps its region (see `_gradients`).
    ctx.consume_saved = consume_saved and not _tracing()
    ctx.consumed = False
    # An output without a gradient comes as None (`cotangent` makes the
    # zeros the entry point reads): no zeros for the saved region.
    ctx.set_materialize_grads(False)
    ctx.save_for_backward(x, is_init, rng, y, saved, *states, *resets,
                          *params)


def _saved(ctx):
    """x, is_init, rng, y, the saved region, and the lists of the states,
    reset states and parameters a forward saved for its backward."""
    x, is_init, rng, y, saved, *rest = ctx.saved_tensors
    n, m = ctx.counts
    return x, is_init, rng, y, saved, rest[:n], rest[n:n + m], rest[n + m:]


def _gradients(ctx, grad_y, grad_states_n, ops):
    """rnnc::forward's gradients by rnnc::backward (through the ops, or
    their implementations without `ops`), which computes in place in the
    saved region (the gates become their gradients): the gradient of x
    and the lists of the states', reset states' and parameters'.

    By default the backward runs on a copy of the region, which
    rnnc::forward returned unchanged. With `consume_saved=True` (the
    modules' calls: the caller drops the region) it runs in the region
    itself, and a second backward through the forward (retain_graph) runs
    the forward again first. A forward traced into a graph (torch.compile,
    AOTAutograd, make_fx), where the region is a value of the graph that
    its backward may read more than once, keeps it (`_setup_forward`), as
    does a recorded backward (create_graph=True, torch.func), which runs
    on a copy."""
    x, is_init, rng, y, saved, states, resets, params = _saved(ctx)

    def cotangent(grad, like):
        if grad is None:
            return torch.zeros_like(like)
        return grad.contiguous()

    grad_y = cotangent(grad_y, y)
    if grad_states_n is None:
        grad_states_n = [None] * len(states)
    grad_states_n = [cotangent(g, s) for g, s in zip(grad_states_n, states)]

    def backward(region):
        args = (ctx.key, x, is_init, rng, states, resets, params, y, region,
                grad_y, grad_states_n)
        if not ops:
            return _backward_run(*args)[1]
        return _parts(_BACKWARD(*args), states, resets, params)

    def run():
        consumed, ctx.consumed = ctx.consumed, True
        if not ctx.consume_saved:
            return backward(saved.clone())
        if consumed:
            forward = _FORWARD if ops else _forward_impl
            return backward(forward(ctx.key, x, is_init, rng, states, resets,
                                    params)[2])
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

    if not torch.is_grad_enabled():
        if not ops and _wrapped([grad_y, *grad_states_n]):
            # The batched gradients of autograd's own vmap, which runs no
            # vmap rule of an autograd.Function (the ops' tracers, which
            # have no storage either, come with `ops`).
            raise RNNCError(
                "rnnc's backward takes no batched gradients "
                "(torch.autograd.grad with is_grads_batched=True, "
                "torch.autograd.functional.jacobian or hessian with "
                "vectorize=True): use torch.func.jacrev or torch.func.vmap "
                "over torch.func.vjp, which batch it, or one gradient per "
                "call")
        return run()
    # create_graph=True or a torch.func transform: the gradients are
    # recorded as a function of every input (`_Backward`), so that
    # differentiating them again is an error rather than a result that
    # silently misses terms.
    needed = ctx.needs_input_grad
    params_needed = ops or any(needed[len(needed) - len(params):])
    n, m = ctx.counts
    grads = _Backward.apply(ops, ctx.key, ctx.counts, params_needed, x,
                            is_init, rng, y, saved, grad_y, *states, *resets,
                            *grad_states_n, *params)
    return (grads[0], list(grads[1:1 + n]), list(grads[1 + n:1 + n + m]),
            _split(grads[-1], params))


def _backward_formula(ctx, grad_y, grad_states_n, grad_saved):
    grad_x, grad_states, grad_resets, grad_params = _gradients(
        ctx, grad_y, grad_states_n, ops=True)
    # key, x, is_init, rng, states, reset_states, params, consume_saved.
    return (None, grad_x, None, None, grad_states, grad_resets, grad_params,
            None)


_forward_op.register_autograd(_backward_formula, setup_context=_setup_forward)


def _no_inference_gradient(ctx, *grads):
    raise RNNCError("rnnc::inference computes no gradients: call the module "
                    "with gradients enabled (rnnc::forward), e.g. export it "
                    "outside torch.no_grad() to differentiate the result")


_inference_op.register_autograd(_no_inference_gradient)


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


def _run(key, x, is_init, rng, states, resets, params, tensors, grad):
    """y and the final states of a module's call (`tensors`: every tensor
    argument), differentiable where `grad`: through the ops where a graph
    tool looks (`_through_ops`), else through `_Forward` and `_Inference`,
    which run the ops' implementations under autograd and torch.func
    without the dispatcher; eager calls without gradients call the
    implementations themselves (an autograd.Function costs about 10 us
    more per call)."""
    if _through_ops(tensors):
        if grad:
            return _FORWARD(key, x, is_init, rng, states, resets, params,
                            True)[:2]
        if rng is not None:
            # Training mode without gradients still drops: the forward
            # entry point (the inference one drops nothing).
            with torch.no_grad():
                return _FORWARD(key, x, is_init, rng, states, resets,
                                params)[:2]
        return _INFERENCE(key, x, is_init, states, resets, params)
    counts = (len(states), len(resets))
    wrapped = not grad and _wrapped(tensors)
    if grad or wrapped and rng is not None:
        with torch.set_grad_enabled(grad):
            y, _, *states_n = _Forward.apply(key, counts, x, is_init, rng,
                                             *states, *resets, *params)
        return y, states_n
    if wrapped:
        y, *states_n = _Inference.apply(key, counts, x, is_init, *states,
                                        *resets, *params)
        return y, states_n
    if rng is not None:
        return _forward_impl(key, x, is_init, rng, states, resets,
                             params)[:2]
    return _inference_impl(key, x, is_init, states, resets, params)


# --------------------------------------------------------------------------
# Eager calls and torch.func
# --------------------------------------------------------------------------
#
# `_Forward`, `_Backward` and `_Inference` are the ops' implementations
# and autograd formula as autograd.Functions in torch.func's form
# (forward, setup_context, backward and a vmap rule), so that
# torch.func.grad, vjp and vmap, in any nesting, run them. Their tensors
# come one by one (an autograd.Function differentiates no list), after
# `counts`, the numbers of states and of reset states. Under vmap an axis
# of the inputs that the weights share is folded into the batch (one call
# of B' = N * B columns, element-major); with vmapped weights (a stacked
# ensemble) each element is its own call. A vmapped backward (vmap of
# grad, per-example gradients) needs each element's parameter gradients,
# which a folded call sums: it runs each element's forward and backward
# (2N calls after the folded forward), and folds only when no parameter
# gradient is asked for.


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
    vmapped dimension."""
    axis = _batch_axis(t, None)
    return t.unflatten(axis, (n, -1)), axis


def _folded(key, n, args, dims, columns):
    """The arguments of a vmapped call folded (`_fold`) at the positions
    `columns`, and the key of the library of their batch size."""
    folded = [_fold(a, d, n) if i in columns else a
              for i, (a, d) in enumerate(zip(args, dims))]
    return _key_at(key, folded[0].shape[1]), folded


def _unfolded(results, n, shared=()):
    """The results of a folded call and their vmapped dimensions, the
    positions `shared` as they are (no batch dimension)."""
    pairs = [(t, None) if i in shared else _unfold(t, n)
             for i, t in enumerate(results)]
    return tuple(t for t, _ in pairs), tuple(d for _, d in pairs)


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


def _vmapped():
    """Whether a torch.func.vmap is running (its interpreter is on
    functorch's stack): a module that drops draws its seed before its
    call reaches the vmap rule, and vmap refuses or batches that draw."""
    stack = torch._C._functorch.get_interpreter_stack() or ()
    return any(interpreter.key().name == "Vmap" for interpreter in stack)


def _no_dropout_under_vmap(dropping):
    """Refuses a call that drops (`dropping`) under torch.func.vmap."""
    if dropping:
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


def _lists(counts, tensors):
    """The states, reset states and parameters among `tensors`."""
    n, m = counts
    return list(tensors[:n]), list(tensors[n:n + m]), list(tensors[n + m:])


class _Forward(torch.autograd.Function):
    """rnnc::forward (consume_saved=True) with its autograd formula: the
    modules' calls with gradients outside graph tools. Arguments: key,
    counts, x, is_init, rng, the states, reset states and parameters;
    returns y, the saved region (non-differentiable) and the final
    states."""

    @staticmethod
    @_positional
    def forward(key, counts, x, is_init, rng, *tensors):
        y, states_n, saved = _forward_impl(key, x, is_init, rng,
                                           *_lists(counts, tensors))
        return (y, saved, *states_n)

    @staticmethod
    def setup_context(ctx, inputs, output):
        key, counts, x, is_init, rng, *tensors = inputs
        y, saved, *states_n = output
        _setup_forward(ctx, (key, x, is_init, rng, *_lists(counts, tensors),
                             True), (y, states_n, saved))
        ctx.mark_non_differentiable(saved)

    @staticmethod
    def backward(ctx, grad_y, grad_saved, *grad_states_n):
        grad_x, grad_states, grad_resets, grad_params = _gradients(
            ctx, grad_y, grad_states_n, ops=False)
        # key, counts, x, is_init, rng, the states, reset states and
        # parameters.
        return (None, None, grad_x, None, None, *grad_states, *grad_resets,
                *grad_params)

    @staticmethod
    def vmap(info, in_dims, key, counts, *args):
        # args: x, is_init, rng, the states, reset states, parameters.
        _no_dropout_under_vmap(args[2] is not None)
        n, dims = info.batch_size, in_dims[2:]
        columns = 3 + sum(counts)
        if any(d is not None for d in dims[columns:]):
            # A weight set per element.
            return _each(n, dims, args,
                         lambda *a: _Forward.apply(key, counts, *a))
        key, folded = _folded(key, n, args, dims,
                              {0, 1, *range(3, columns)})
        return _unfolded(_Forward.apply(key, counts, *folded), n, {1})

    jvp = staticmethod(_no_forward_mode)


class _Backward(torch.autograd.Function):
    """rnnc::backward on a copy of the saved region, recorded
    (create_graph=True, torch.func) as a function of every input: it has
    no derivative of its own, so differentiating it is an error.
    Arguments: ops, key, counts, `params_needed` (whether a vmapped call
    must give each element's parameter gradients), x, is_init, rng, y,
    saved, grad_y, the states, reset states, final states' gradients and
    parameters; returns the gradients of x, of each state and reset
    state, and of the parameters (one tensor)."""

    @staticmethod
    @_positional
    def forward(ops, key, counts, params_needed, x, is_init, rng, y, saved,
                grad_y, *tensors):
        n, m = counts
        states, resets = list(tensors[:n]), list(tensors[n:n + m])
        grad_states_n = list(tensors[n + m:2 * n + m])
        params = list(tensors[2 * n + m:])
        args = (key, x, is_init, rng, states, resets, params, y,
                saved.clone(), grad_y, grad_states_n)
        grads = _BACKWARD(*args) if ops else _backward_impl(*args)
        grad_x, grad_states, grad_resets, _ = _parts(grads, states, resets,
                                                     params)
        # Tensors of their own, not views of one another.
        return (grad_x, *[g.clone() for g in grad_states + grad_resets],
                grads[3])

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
    def vmap(info, in_dims, ops, key, counts, params_needed, *args):
        # args: x, is_init, rng, y, saved, grad_y, the states, reset
        # states, final states' gradients, parameters.
        n, dims = info.batch_size, in_dims[4:]
        states, finals = 6 + sum(counts), 6 + sum(counts) + counts[0]
        forward_columns = {0, 1, *range(6, states)}
        forward_vmapped = any(dims[i] is not None for i in forward_columns)
        own_region = dims[4] is None and forward_vmapped
        if own_region and not params_needed and \
                all(d is None for d in dims[finals:]):
            # The forward was one folded call (`_Forward.vmap`): so is the
            # backward.
            key, folded = _folded(key, n, args, dims,
                                  forward_columns | {3, 5} |
                                  set(range(states, finals)))
            grads = _Backward.apply(ops, key, counts, False, *folded)
            return _unfolded(grads, n, {len(grads) - 1})

        def element(x, is_init, rng, y, saved, grad_y, *tensors):
            if own_region:
                # The region is the folded forward's: this element's own
                # forward gives its region (and output).
                forward = tensors[:sum(counts)] + tensors[finals - 6:]
                with torch.no_grad():
                    if ops:
                        y, _, saved = _FORWARD(key, x, is_init, rng,
                                               *_lists(counts, forward))
                    else:
                        y, saved, *_ = _Forward.apply(key, counts, x,
                                                      is_init, rng, *forward)
            return _Backward.apply(ops, key, counts, True, x, is_init, rng, y,
                                   saved, grad_y, *tensors)

        return _each(n, dims, args, element)

    jvp = staticmethod(_no_forward_mode)


class _Inference(torch.autograd.Function):
    """rnnc::inference: the modules' calls without gradients under
    torch.func transforms. Arguments: key, counts, x, is_init, the states,
    reset states and parameters; returns y and the final states."""

    @staticmethod
    @_positional
    def forward(key, counts, x, is_init, *tensors):
        y, states_n = _inference_impl(key, x, is_init,
                                      *_lists(counts, tensors))
        return (y, *states_n)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, *grads):
        _no_inference_gradient(ctx)

    @staticmethod
    def vmap(info, in_dims, key, counts, *args):
        # args: x, is_init, the states, reset states, parameters.
        n, dims = info.batch_size, in_dims[2:]
        columns = 2 + sum(counts)
        if any(d is not None for d in dims[columns:]):
            return _each(n, dims, args,
                         lambda *a: _Inference.apply(key, counts, *a))
        key, folded = _folded(key, n, args, dims, set(range(columns)))
        return _unfolded(_Inference.apply(key, counts, *folded), n)

    jvp = staticmethod(_no_forward_mode)
