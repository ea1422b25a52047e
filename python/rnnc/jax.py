"""rnnc's recurrent layers with per-step resets for JAX, on the CPU and
CUDA GPUs.

    y, state_n = rnnc.jax.rnn(params, x, is_init, state, cell="lstm")

`params` is a dict named as the torch.nn module's `state_dict` is
(`weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0`, ... for each
layer), so that weights move between the frameworks unchanged; `x` is
`[T, B, I]`; `is_init` `[T, B]` bool starts a new episode at step t of
column b (the state entering that step is zero; None: no resets); `state` is a tuple of
`[L, B, H]` arrays, `(h,)` for the GRU and MGU, `(h, c)` for the LSTM and
CIFG; `reset_state`, in the same form, per step `[L, T, B, H]` or per
column `[L, B, H]`, is the state a reset step enters instead of zero
(gradients flow into it); the results are `y` `[T, B, H]` and the final states in the same
form. With `batch_first=True` `x` is `[B, T, I]`, `is_init` `[B, T]`, a
per-step reset state `[L, B, T, H]` and `y` `[B, T, H]`.
`init_params(key, cell, input_size, hidden_size, num_layers)` draws
parameters as PyTorch initializes them.

Each call runs the compiled library (`rnnc.library.compile_model`,
compiled when the function is traced, or loaded from the cache; on the
CPU with remat "none", "gates" or "chunk:K" one library for every sequence
length and batch size)
through an XLA FFI call on XLA's buffers: the inference entry point without
gradients (the forward entry point with dropout, which inference does not
apply); under `jax.grad` and friends the forward entry point, whose
saved region is the residual of a `jax.custom_vjp`, and the backward entry
point. `jit` and `grad` work; float32 and float64 (with
`jax_enable_x64`). `vmap` of inference over an axis with shared weights
folds it into the batch (one call of more columns) where one library
serves every shape; otherwise (per-seed weights, training, dropout,
libraries of one shape, nested vmaps) it is one grouped call, which runs the
entry point once per element of the mapped axes; under `jax.shard_map`
and `jax.pmap` each shard is its own call.
`storage="bf16"` (or jnp.bfloat16; float32 only) stores the saved values
that are not states in bf16 and rounds the GEMM operands to bf16,
accumulating in float32. With `dropout` > 0 (and more than one layer)
the outputs of every layer but the last are dropped, with masks drawn
from `rng` (a jax.random key; `dropout_rng` gives the seed), as
rnnc.torch's dropout draws them from its seed; there is no training mode:
dropout=0 for evaluation. Flax modules over it are in rnnc.flax.

The call runs where `platform` says ("cpu" or "cuda"); by default where x
is (an array on one platform), else (x traced under `jit`) on JAX's default
backend. On CUDA it runs a library of the cuda target (float32, one shape
per library), a copy loaded per local GPU, whose entry point enqueues its
work on XLA's stream of the device the call runs on, without waiting.
"""

import ctypes
import functools
import json
import os
import warnings
from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np

from . import _cells, library
from ._errors import RNNCError, RNNCTypeError, RNNCValueError

# The FFI handler of each platform (librnnc_jax.so's symbols).
_HANDLERS = {"cpu": "rnnc_xla_call", "cuda": "rnnc_xla_call_cuda"}
_registered = set()
# compile_model's arguments (as JSON) -> its library (a one-element tuple),
# kept loaded: an XLA computation holds the entry points' addresses.
_LIBRARIES = {}
_DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}
_NUMPY = {"float32": np.float32, "float64": np.float64, "bool": np.bool_,
          "uint8": np.uint8, "int64": np.int64}


def _handler_path():
    """librnnc_jax.so: $RNNC_JAX_FFI, else beside the rnn-compile in use
    (a build's lib/, or the wheel's _native/lib)."""
    path = os.environ.get("RNNC_JAX_FFI")
    if path:
        return path
    compiler = library.find_compiler()
    return os.path.join(os.path.dirname(os.path.dirname(compiler)), "lib",
                        "librnnc_jax.so")


def _register(platform):
    """Registers the FFI handler of `platform` with XLA, once; on CUDA only
    where JAX has CUDA devices (lowering for CUDA elsewhere, as jax.export
    does, needs no handler)."""
    if platform in _registered:
        return
    if platform == "cuda" and not _cuda_devices():
        return
    path = _handler_path()
    if not os.path.exists(path):
        raise RNNCError(f"rnnc.jax's FFI handler {path} does not exist: the "
                        f"build found no jaxlib when it was configured "
                        f"(or set RNNC_JAX_FFI to the library)")
    name = _HANDLERS[platform]
    handler = getattr(ctypes.CDLL(path), name, None)
    if handler is None:
        raise RNNCError(f"rnnc.jax's FFI handler {path} lacks {name}: it "
                        f"was built from an older rnnc")
    jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(handler),
                                platform="cpu" if platform == "cpu" else
                                "CUDA")
    _registered.add(platform)


def _cuda_devices():
    """JAX's local CUDA devices (none without its CUDA backend)."""
    try:
        return jax.local_devices(backend="cuda")
    except RuntimeError:
        return []


def _platform(x, platform):
    """Where a call runs, "cpu" or "cuda": `platform`, else the platform of
    x's devices (a concrete array), else JAX's default backend's."""
    if platform is None:
        try:
            kinds = {d.platform for d in x.devices()}
        except jax.errors.ConcretizationTypeError:
            kinds = set()  # Traced: no devices yet.
        platform = kinds.pop() if len(kinds) == 1 else jax.default_backend()
        if platform == "gpu" and _cuda_devices():
            platform = "cuda"
    if platform not in _HANDLERS:
        raise RNNCValueError(f"rnnc.jax runs on the platforms "
                             f"{', '.join(map(repr, _HANDLERS))}, got "
                             f"{platform!r}")
    return platform


def _target(platform):
    """compile_model's target arguments for `platform`."""
    if platform == "cpu":
        return dict(target="cpu", chip=None)
    devices = _cuda_devices()
    # With no GPU (lowering for one elsewhere), sm_90, which newer GPUs run.
    chip = library.cuda_chip(*map(int, str(
        devices[0].compute_capability).split(".")[:2])) if devices else \
        "sm_90"
    return dict(target="cuda", chip=chip)


def _library(config):
    """The library of `config`, compile_model's arguments as sorted JSON,
    compiled or loaded once per process. A cuda library serves every GPU:
    the FFI handler calls it with a context of the call's device."""
    if config not in _LIBRARIES:
        _LIBRARIES[config] = library.compile_model(**json.loads(config))
    return _LIBRARIES[config]


def _varying(array):
    """The manual mesh axes `array` varies over inside `jax.shard_map`
    (none outside it)."""
    kind = getattr(jax.typeof(array), "manual_axis_type", None)
    return frozenset(kind.varying) if kind is not None else frozenset()


def _vary(array, axes):
    """`array` typed as varying over `axes` too."""
    missing = tuple(sorted(frozenset(axes) - _varying(array)))
    return jax.lax.pcast(array, missing, to="varying") if missing else array


def _like(grad, primal):
    """The cotangent `grad` of `primal` typed as `primal` is inside
    `jax.shard_map`: summed over the axes only the gradient varies over
    (a replicated input's gradient is the sum of every shard's), varying
    over those only the input varies over."""
    extra = tuple(sorted(_varying(grad) - _varying(primal)))
    if extra:
        grad = jax.lax.psum(grad, extra)
    return _vary(grad, _varying(primal))


def _address(function):
    return ctypes.cast(function, ctypes.c_void_p).value


def _addresses(lib, kind):
    """The FFI call's attributes naming entry point `kind` of `lib`: its
    address, the library's directory (in the handler's errors, and telling
    apart computations of libraries whose entry points lie at one address,
    as in two processes), and for the cuda target the addresses of the
    library's rnnc_context_create and rnnc_last_error."""
    attributes = dict(entry=np.int64(_address(lib.entries[kind]._fn)),
                      library=os.path.abspath(lib.directory))
    if lib.target == "cuda":
        functions = lib.manifest["functions"]
        for name in ("context_create", "last_error"):
            attributes[name] = np.int64(_address(getattr(lib._lib,
                                                         functions[name])))
    return attributes


def _call(lib, kind, given, aliased=()):
    """Calls entry point `kind` of the library `lib`: `given` maps
    (name, layer) to the arrays it reads; every other buffer is a result,
    returned by (name, layer). The buffers named in `aliased` are read and
    written in place: results aliased to their operands. A library of
    every shape runs at x's T and B."""
    platform = lib.target  # "cpu" or "cuda", as the handlers' platforms.
    _register(platform)
    # The entry points' addresses are the libraries'; the buffers' shapes
    # are those at x's T and B for a library of every shape.
    attributes = _addresses(lib, kind)
    shape = (0, 0)
    if lib.dynamic:
        shape = tuple(given[("x", None)].shape[:2])
        lib = lib.at(*shape)
    operands, order, results, names = [], [], [], []
    aliases = {}
    for arg in lib.entries[kind].args:
        key = (arg.name, arg.layer)
        if key in given:
            operands.append(given[key])
            if key not in aliased:
                order.append(len(operands) - 1)
                continue
            # Written in place: a result aliased to the operand.
            aliases[len(operands) - 1] = len(results)
        order.append(-(len(results) + 1))
        results.append((jax.ShapeDtypeStruct(arg.shape, _NUMPY[arg.dtype]),
                        arg.role == "scratch"))
        names.append(key)
    attributes.update(order=np.array(order, dtype=np.int64),
                      seq_len=np.int64(shape[0]), batch=np.int64(shape[1]))
    call = _FFICall(_HANDLERS[platform], tuple(results),
                    tuple(sorted(aliases.items())), attributes)
    out = call.grouped(0, (False,) * len(operands))(*operands)
    # Inside jax.shard_map each shard is its own call: its results vary
    # over the mesh axes its operands vary over.
    axes = frozenset().union(*(_varying(o) for o in operands))
    return {name: _vary(o, axes) for name, o in zip(names, out)}


class _FFICall:
    """One FFI call of an entry point: the handler's name, the results
    (each a ShapeDtypeStruct and whether it is the scratch arena), the
    aliases (operand, result) and the attributes. Under `jax.vmap` it is a
    grouped call, one for every element of the mapped axes (nested vmaps
    included), which the handler runs as a loop of entry point calls over
    the slices of the mapped buffers; the scratch arena serves every
    group."""

    def __init__(self, handler, results, aliases, attributes):
        self.handler, self.results = handler, results
        self.aliased = dict(aliases)  # Operand -> result.
        self.attributes = attributes

    def grouped(self, groups, mapped):
        """The call of `groups` groups (0: a plain call) of which the
        operands marked in `mapped` have a leading axis of one slice per
        group, and the others serve every group; every result but the
        arena has that axis."""
        @jax.custom_batching.custom_vmap
        def call(*operands):
            return self._lower(groups, mapped, operands)

        @call.def_vmap
        def rule(size, in_batched, *operands):
            # The groups of the call become size * groups: an operand
            # mapped by either this vmap or the call has one slice for
            # each, broadcast along the axis it is not mapped on.
            total = size * max(groups, 1)
            leading = (size,) + ((groups,) if groups else ())
            if total == 0:  # No element: nothing to call.
                return [jnp.zeros(spec.shape if scratch else
                                  leading + spec.shape, spec.dtype)
                        for spec, scratch in self.results], \
                    [not scratch for _, scratch in self.results]
            merged, marks = [], []
            for k, (op, batched, inner) in enumerate(zip(operands,
                                                         in_batched, mapped)):
                if not (batched or inner or k in self.aliased):
                    merged.append(op)
                    marks.append(False)
                    continue
                if not batched:
                    op = jnp.broadcast_to(op, (size,) + op.shape)
                if groups and not inner:
                    op = jnp.broadcast_to(op[:, None], (size, groups) +
                                          op.shape[1:])
                merged.append(op.reshape((total,) + op.shape[1 + bool(
                    groups):]))
                marks.append(True)
            out = self.grouped(total, tuple(marks))(*merged)
            out = [o if scratch else o.reshape(leading + o.shape[1:])
                   for o, (_, scratch) in zip(out, self.results)]
            return out, [not scratch for _, scratch in self.results]

        return call

    def _lower(self, groups, mapped, operands):
        types, strided = [], []
        for spec, scratch in self.results:
            leading = (groups,) if groups and not scratch else ()
            types.append(jax.ShapeDtypeStruct(leading + spec.shape,
                                              spec.dtype))
        for k in self.attributes["order"]:
            strided.append(mapped[k] if k >= 0 else
                           bool(groups) and not self.results[-k - 1][1])
        cpu = self.handler == _HANDLERS["cpu"]
        staging = -1  # The result staged in; -1: none.
        if groups > 1 and cpu:
            # The cpu handler copies each group's slices of the mapped
            # operands (not those written in place) to one buffer, from
            # which the entry point reads them: its small products read
            # weights that are not in the cache slowly, and a group's were
            # last read a group ago; a copy brings them there at the
            # copy's speed, as a loop of calls in XLA's program slices
            # them.
            staged = sum(-(-op.size * op.dtype.itemsize // groups // 64)
                         * 64 for k, (op, m) in enumerate(zip(operands,
                                                              mapped))
                         if m and k not in self.aliased)
            staging = len(types)
            types.append(jax.ShapeDtypeStruct((staged,), np.uint8))
        call = jax.ffi.ffi_call(self.handler, types,
                                input_output_aliases=self.aliased or None)
        # Only the cpu handler stages.
        extra = dict(staging=np.int64(staging)) if cpu else {}
        out = call(*operands, groups=np.int64(groups),
                   strided=np.array(strided, dtype=np.int64),
                   **extra, **self.attributes)
        return out[:len(self.results)]


def _param_shapes(gates, width, H):
    """The shapes of one layer's parameters by kind, for inputs of `width`
    features."""
    return {"weight_ih": (gates * H, width), "weight_hh": (gates * H, H),
            "bias_ih": (gates * H,), "bias_hh": (gates * H,)}


def _param_names(layers):
    return [f"{kind}_l{k}" for k in range(layers)
            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]


def _split(given, states, affix, stacked):
    """Adds each layer k of the [L, ...] arrays `stacked`, one per state,
    to `given` as (affix % state, k)."""
    for name, array in zip(states, stacked):
        for k in range(array.shape[0]):
            given[(affix % name, k)] = array[k]


def _stack(lib, out, affix):
    """The per-layer results (affix % state, k), one [L, ...] array per
    state."""
    layers = lib.manifest["shape"]["L"]
    return tuple(jnp.stack([out[(affix % name, k)] for k in range(layers)])
                 for name in lib.states)


def _inputs(lib, x, is_init, state, params, reset, rng=None):
    """The arrays the entry points read, by (name, layer)."""
    given = {("x", None): x, ("is_init", None): is_init}
    if rng is not None:
        given[("rng", None)] = rng
    _split(given, lib.states, "%s0", state)
    _split(given, lib.states, "%s_reset", reset or ())
    for name, value in params.items():
        given[(name, None)] = value
    return given


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _rnn(config, params, x, is_init, state, reset, rng):
    if rng is None:
        return _inference(config)(params, x, is_init, state, reset)
    # The inference entry point drops nothing: with dropout, the forward's.
    return _forward(config, params, x, is_init, state, reset, rng)[:2]


def _infer(config, params, x, is_init, state, reset):
    """The inference entry point: y and the final states."""
    lib = _library(config)
    out = _call(lib, "infer", _inputs(lib, x, is_init, state, params,
                                       reset))
    return out[("y", None)], _stack(lib, out, "%s_n")


def _fold(array, batched, axis, size):
    """`array` of a vmapped call (mapped axis 0 where `batched`, else
    broadcast to `size` there) with the mapped axis folded into its batch
    axis `axis` (of the unmapped layout): element v's column b becomes
    column v * B + b."""
    if not batched:
        array = jnp.broadcast_to(array, (size,) + array.shape)
    array = jnp.moveaxis(array, 0, axis)
    shape = array.shape
    return array.reshape(shape[:axis] + (shape[axis] * shape[axis + 1],) +
                         shape[axis + 2:])


def _unfold(array, axis, size):
    """The inverse of `_fold`: the batch axis `axis` split into the mapped
    axis (first) and the batch."""
    shape = array.shape
    array = array.reshape(shape[:axis] + (size, shape[axis] // size) +
                          shape[axis + 1:])
    return jnp.moveaxis(array, axis, 0)


@functools.lru_cache(maxsize=None)
def _inference(config):
    """`_infer` of `config` with its vmap rule: a mapped axis with shared
    parameters is folded into the batch (one call of B times its size
    columns) where one library serves every shape; otherwise the grouped
    call (`_FFICall`)."""
    @jax.custom_batching.custom_vmap
    def infer(params, x, is_init, state, reset):
        return _infer(config, params, x, is_init, state, reset)

    @infer.def_vmap
    def rule(size, in_batched, params, x, is_init, state, reset):
        b_params, b_x, b_init, b_state, b_reset = in_batched
        every_shape = json.loads(config)["seq_len"] is None
        # (No element: the grouped call's rule calls nothing.)
        if not every_shape or size == 0 or \
                any(jax.tree_util.tree_leaves(b_params)):
            axes = jax.tree_util.tree_map(lambda b: 0 if b else None,
                                          tuple(in_batched))
            out = jax.vmap(functools.partial(_infer, config),
                           in_axes=axes)(params, x, is_init, state, reset)
            return out, jax.tree_util.tree_map(lambda _: True, out)
        folded_reset = None if reset is None else tuple(
            _fold(r, b, 2 if r.ndim - b == 4 else 1, size)
            for r, b in zip(reset, b_reset))
        y, state_n = _infer(
            config, params, _fold(x, b_x, 1, size),
            _fold(is_init, b_init, 1, size),
            tuple(_fold(s, b, 1, size) for s, b in zip(state, b_state)),
            folded_reset)
        out = (_unfold(y, 1, size),
               tuple(_unfold(s, 1, size) for s in state_n))
        return out, jax.tree_util.tree_map(lambda _: True, out)

    return infer


def _rnn_fwd(config, params, x, is_init, state, reset, rng):
    y, state_n, saved = _forward(config, params, x, is_init, state, reset,
                                 rng)
    return (y, state_n), (params, x, is_init, state, reset, rng, y, saved)


def _rnn_bwd(config, residual, cotangents):
    return _backward(config, residual, cotangents)


def _first_derivatives_only(config, primals, tangents):
    raise RNNCError("rnnc.jax computes first derivatives only: its VJP is "
                    "not differentiable, so jax.grad of jax.grad, "
                    "jax.hessian and other derivatives of a gradient are "
                    "not available")


@jax.custom_batching.custom_vmap
def _mapped_first(tree):
    """`tree`, with a vmapped array's mapped axis first, as `_inference`'s
    vmap rule leaves its results. `_rnn`'s VJP forward gives the final
    states so: JAX batches a custom_vjp under lax.scan and grad assuming
    that its primal and its forward map the same axes of their outputs,
    and permutes the state's gradient where they do not (a stack of layers
    maps axis 1)."""
    return tree


@_mapped_first.def_vmap
def _mapped_first_rule(size, in_batched, tree):
    return tree, in_batched[0]


# The entry points the VJP runs, whose derivatives are an error naming
# what rnnc does not compute (rather than JAX's about the FFI call).
@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _forward(config, params, x, is_init, state, reset, rng):
    """The forward entry point: y, the final states and the saved
    region."""
    lib = _library(config)
    out = _call(lib, "fwd", _inputs(lib, x, is_init, state, params, reset,
                                     rng))
    return _mapped_first((out[("y", None)], _stack(lib, out, "%s_n"),
                          out[("saved", None)]))


_forward.defjvp(_first_derivatives_only)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _backward(config, residual, cotangents):
    """The backward entry point's gradients of the parameters, x, the
    initial and reset states."""
    params, x, is_init, state, reset, rng, y, saved = residual
    lib = _library(config)
    given = _inputs(lib, x, is_init, state, params, reset, rng)
    grad_y, grad_states = cotangents
    given[("y", None)] = y
    given[("saved", None)] = saved
    given[("grad_y", None)] = grad_y
    _split(given, lib.states, "grad_%s_n", grad_states)
    out = _call(lib, "bwd", given, aliased={("saved", None)})
    grad_params = {name: _like(out[("grad_" + name, None)], params[name])
                   for name in params}
    grad_reset = None if reset is None else tuple(
        _like(g, r) for g, r in zip(_stack(lib, out, "grad_%s_reset"),
                                    reset))
    grad_state = tuple(_like(g, s) for g, s in
                       zip(_stack(lib, out, "grad_%s0"), state))
    return (grad_params, _like(out[("grad_x", None)], x), None, grad_state,
            grad_reset, None)



_backward.defjvp(_first_derivatives_only)


_rnn.defvjp(_rnn_fwd, _rnn_bwd)


def rnn(params, x, is_init, state, *, cell="lstm", remat="none",
        reset_state=None, storage=None, dropout=0.0, rng=None,
        batch_first=False, platform=None):
    """Runs `cell`'s layers over `x` with resets at `is_init` (see the
    module's description); returns (y, state_n)."""
    if not isinstance(cell, str) or cell not in _cells.BY_NAME:
        raise RNNCValueError(f"unknown cell {cell!r} (the cells are "
                             f"{', '.join(_cells.NAMES)})")
    if storage is not None and not isinstance(storage, str):
        try:
            if np.dtype(storage) == jnp.bfloat16:
                storage = "bf16"
        except TypeError:
            pass
    if storage not in (None, "bf16"):
        raise RNNCValueError(f"storage must be None or 'bf16' (or "
                             f"jnp.bfloat16), got {storage!r}")
    dropout = _dropout_of(dropout)
    if dropout and rng is None:
        raise RNNCValueError("dropout needs rng, a jax.random key: the "
                             "masks are drawn from it")
    if rng is not None and not dropout:
        raise RNNCValueError("rng is the key of dropout's masks: give "
                             "dropout > 0 with it, or no rng")
    seed = None if rng is None else dropout_rng(rng)
    states = _cells.BY_NAME[cell].states
    if not isinstance(state, (tuple, list)) or len(state) != len(states):
        raise RNNCTypeError(f"state of a {cell} must be a tuple of "
                            f"{len(states)} arrays ({', '.join(states)})")
    if not isinstance(params, Mapping):
        raise RNNCTypeError(f"params must be a dict of arrays named as the "
                            f"torch.nn module's state_dict, got "
                            f"{type(params).__name__}")
    library.check_remat(remat)
    # A flag that chooses the layout: a string or a traced value is none.
    if not isinstance(batch_first, (bool, np.bool_)):
        raise RNNCTypeError(f"batch_first must be a bool, got "
                            f"{batch_first!r}")
    if platform is not None and not isinstance(platform, str):
        raise RNNCTypeError(f"platform must be None, 'cpu' or 'cuda', got "
                            f"{platform!r}")
    x = jnp.asarray(x)
    if x.ndim != 3:
        raise RNNCValueError(f"x must be [T, B, I] ([B, T, I] with "
                             f"batch_first), got shape {list(x.shape)}")
    if reset_state is not None and is_init is None:
        raise RNNCValueError("reset_state is the state a step where is_init "
                             "is set enters: give is_init with it")
    # No is_init: no step resets.
    is_init = jnp.zeros(x.shape[:2], jnp.bool_) if is_init is None else \
        jnp.asarray(is_init)
    if is_init.shape != x.shape[:2] or is_init.dtype != jnp.bool_:
        layout = "[B, T]" if batch_first else "[T, B]"
        raise RNNCValueError(f"is_init must be bool {layout} = "
                             f"{list(x.shape[:2])}, got {is_init.dtype} "
                             f"{list(is_init.shape)}")
    if batch_first:
        x, is_init = jnp.swapaxes(x, 0, 1), jnp.swapaxes(is_init, 0, 1)
    dtype = _DTYPES.get(np.dtype(x.dtype))
    if dtype is None:
        raise RNNCValueError(f"x must be float32 or float64, got {x.dtype}")
    if storage and dtype != "float32":
        raise RNNCValueError(f"bf16 storage needs float32 inputs and "
                             f"parameters, got {dtype}")
    T, B, I = x.shape
    state = tuple(jnp.asarray(s) for s in state)
    L, _, H = state[0].shape if state[0].ndim == 3 else (0, 0, 0)
    for name, s in zip(states, state):
        if s.shape != (L, B, H) or s.dtype != x.dtype or L < 1:
            raise RNNCValueError(f"state {name} must be {x.dtype} [L, B, H] "
                                 f"with B = {B}, got {s.dtype} "
                                 f"{list(s.shape)}")
    # The library's sizes: no feature is no layer rnn-compile builds.
    if H < 1:
        raise RNNCValueError(f"the state's hidden size (its last axis) must "
                             f"be positive, got {list(state[0].shape)}")
    if I < 1:
        raise RNNCValueError(f"x's input size (its last axis) must be "
                             f"positive, got {list(x.shape)}")
    if dropout and L == 1:
        warnings.warn(f"dropout applies between layers: with one layer and "
                      f"dropout={dropout} nothing is dropped", stacklevel=2)
    names = _param_names(L)
    if set(params) != set(names):
        raise RNNCValueError(f"params must name {', '.join(names)}, got "
                             f"{', '.join(sorted(params))}")
    params = {name: jnp.asarray(params[name]) for name in names}
    G = _cells.BY_NAME[cell].gates
    for k in range(L):
        for kind, shape in _param_shapes(G, I if k == 0 else H, H).items():
            p = params[f"{kind}_l{k}"]
            if p.shape != shape:
                raise RNNCValueError(
                    f"{kind}_l{k} must have shape {list(shape)} (a {cell} "
                    f"of input size {I}, from x, and hidden size {H}, from "
                    f"the state), got {list(p.shape)}")
    reset, reset_to = _reset_states(reset_state, states, x.dtype, T, B, L, H,
                                    batch_first)
    for name, p in params.items():
        if p.dtype != x.dtype:
            raise RNNCValueError(f"{name} must be {x.dtype}, got {p.dtype}")
    target = _target(_platform(x, platform))
    if target["target"] == "cuda" and dtype != "float32":
        raise RNNCValueError(f"rnnc.jax runs {dtype} on the CPU only (the "
                             f"cuda target computes in float32)")
    if target["target"] == "cuda" and \
            not isinstance(x, jax.core.Tracer) and not _cuda_devices():
        # Lowering for CUDA (under jit, as jax.export does) needs no GPU;
        # a call on concrete arrays runs here and now.
        raise RNNCValueError("platform='cuda': JAX has no CUDA device here "
                             "to run the call on (lowering for CUDA under "
                             "jit, as jax.export does, needs none)")
    if T == 0 or B == 0:
        # No step or no column: nothing runs, and the state goes out as it
        # came in.
        y = jnp.zeros((B, T, H) if batch_first else (T, B, H), x.dtype)
        return y, state
    # One library serves every T and B where it can (the cpu target, remat
    # "none" or "gates"): a new shape traces anew, and compiles nothing.
    every = library.serves_every_shape(remat, target["target"], False)
    # Dropout acts between layers: one layer drops nothing.
    dropping = float(dropout) if L > 1 else 0.0
    request = dict(cell=cell, seq_len=None if every else T,
                   batch=None if every else B, input_size=I,
                   hidden_size=H, layers=L, remat=remat, dtype=dtype,
                   reset_to=reset_to, dropout=dropping, storage=storage,
                   **target)
    y, state_n = _rnn(json.dumps(request, sort_keys=True), params, x,
                      is_init, state, reset, seed if dropping else None)
    if batch_first:
        y = jnp.swapaxes(y, 0, 1)
    return y, state_n


def _dropout_of(dropout):
    """`dropout` as a float, refused unless it is a probability in [0, 1):
    a Python or NumPy real number (a concrete JAX scalar too); a traced
    one cannot choose the library."""
    if isinstance(dropout, jax.core.Tracer):
        raise RNNCValueError("dropout must be a concrete number: it is "
                             "compiled into the library (make it a static "
                             "argument of jit)")
    if np.ndim(dropout) != 0 or np.asarray(dropout).dtype.kind not in "iuf" \
            or not 0 <= float(dropout) < 1:
        raise RNNCValueError(f"dropout must be a probability in [0, 1), got "
                             f"{dropout!r}")
    return float(dropout)


def dropout_rng(key):
    """The library's `rng` argument for the key `key`: int64 [seed,
    offset], the seed the key's first 62 random bits, offset 0; as four
    uint32 words (little-endian), so that it needs no jax_enable_x64."""
    try:
        bits = jax.random.bits(key, (2,), jnp.uint32)
    except (TypeError, ValueError) as e:
        raise RNNCTypeError(f"rng must be a jax.random key, got {key!r} "
                            f"({e})") from None
    return jnp.stack([bits[0], bits[1] & jnp.uint32(0x3FFFFFFF),
                      jnp.uint32(0), jnp.uint32(0)])


def _reset_states(reset_state, states, dtype, T, B, L, H, batch_first):
    """The reset states as the library takes them (per step [L, T, B, H]
    or per column [L, B, H]) and their form; (None, "zero") without."""
    if reset_state is None:
        return None, "zero"
    if not isinstance(reset_state, (tuple, list)) or \
            len(reset_state) != len(states):
        raise RNNCTypeError(f"reset_state must be a tuple of {len(states)} "
                            f"arrays ({', '.join(states)})")
    step = (L, B, T, H) if batch_first else (L, T, B, H)
    forms, arrays = set(), []
    for name, r in zip(states, reset_state):
        r = jnp.asarray(r)
        if r.dtype != dtype:
            raise RNNCValueError(f"reset state {name} must be {dtype}, got "
                                 f"{r.dtype}")
        if r.shape == step:
            forms.add("step")
            arrays.append(jnp.swapaxes(r, 1, 2) if batch_first else r)
        elif r.shape == (L, B, H):
            forms.add("column")
            arrays.append(r)
        else:
            raise RNNCValueError(f"reset state {name} must be {list(step)} "
                                 f"(per step) or {[L, B, H]} (per column), "
                                 f"got {list(r.shape)}")
    if len(forms) > 1:
        raise RNNCValueError("the reset states must have the same form")
    return tuple(arrays), forms.pop()


def _check_param_dtype(name, dtype):
    """Refuses a parameter dtype (`name`) other than float32 and float64,
    and float64 where JAX would draw float32 in its place (without
    jax_enable_x64)."""
    try:
        parsed = np.dtype(dtype)
    except TypeError:
        parsed = None
    if parsed not in _DTYPES:
        got = str(parsed) if parsed is not None else repr(dtype)
        raise RNNCValueError(f"{name} must be float32 or float64, got {got}")
    dtype = parsed
    if jax.dtypes.canonicalize_dtype(dtype) != dtype:
        raise RNNCValueError(f"{name} {dtype} needs jax_enable_x64: "
                             f"without it JAX makes float32 arrays")


def init_params(key, cell, input_size, hidden_size, num_layers=1,
                dtype=jnp.float32):
    """Parameters of `cell`'s layers drawn from U(-1/sqrt(H), 1/sqrt(H)),
    as PyTorch initializes its recurrent layers, named as its state_dict."""
    if not isinstance(cell, str) or cell not in _cells.BY_NAME:
        raise RNNCValueError(f"unknown cell {cell!r} (the cells are "
                             f"{', '.join(_cells.NAMES)})")
    for name, size in (("input_size", input_size),
                       ("hidden_size", hidden_size),
                       ("num_layers", num_layers)):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise RNNCTypeError(f"{name} must be an int, got {size!r}")
        if size < 1:
            raise RNNCValueError(f"{name} must be positive, got {size}")
    _check_param_dtype("dtype", dtype)
    G, H = _cells.BY_NAME[cell].gates, hidden_size
    bound = 1.0 / np.sqrt(H)
    params = {}
    for k in range(num_layers):
        width = input_size if k == 0 else H
        for kind, shape in _param_shapes(G, width, H).items():
            key, sub = jax.random.split(key)
            params[f"{kind}_l{k}"] = jax.random.uniform(
                sub, shape, dtype, -bound, bound)
    return params
