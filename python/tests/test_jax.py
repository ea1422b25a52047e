"""rnnc.jax against a float64 reference written here: each cell's step as
PyTorch defines its gates (the MGU as the GRU with r = f and z = 1 - f,
the CIFG as the LSTM with i = 1 - f), scanned over time with lax.scan,
the state zeroed before a step where is_init is set. Outputs, final
states and the gradients of every parameter, x and the initial states."""

import functools
import json
import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rnnc.jax as rj
from helpers import ALL_CELLS, dropout_scale

from rnnc import RNNCError, _cells

jax.config.update("jax_enable_x64", True)

TOL = {jnp.float32: 1e-5, jnp.float64: 1e-12}


def sigmoid(a):
    return 1.0 / (1.0 + jnp.exp(-a))


def step(cell, p, k, x, state):
    """One step of layer k of `cell` on x [B, I] from `state`."""
    h = state[0]
    wi, wh = p[f"weight_ih_l{k}"], p[f"weight_hh_l{k}"]
    bi, bh = p[f"bias_ih_l{k}"], p[f"bias_hh_l{k}"]
    ai, ah = x @ wi.T + bi, h @ wh.T + bh
    if cell in ("lstm", "cifg"):
        c = state[1]
        a = ai + ah
        if cell == "lstm":
            i, f, g, o = jnp.split(a, 4, axis=-1)
            i = sigmoid(i)
        else:
            f, g, o = jnp.split(a, 3, axis=-1)
            i = 1.0 - sigmoid(f)
        c = sigmoid(f) * c + i * jnp.tanh(g)
        return (sigmoid(o) * jnp.tanh(c), c)
    if cell == "gru":
        ir, iz, i_n = jnp.split(ai, 3, axis=-1)
        hr, hz, h_n = jnp.split(ah, 3, axis=-1)
        r, z = sigmoid(ir + hr), sigmoid(iz + hz)
        n = jnp.tanh(i_n + r * h_n)
        return ((1.0 - z) * n + z * h,)
    assert cell == "mgu", cell
    i_f, i_n = jnp.split(ai, 2, axis=-1)
    h_f, h_n = jnp.split(ah, 2, axis=-1)
    f = sigmoid(i_f + h_f)
    n = jnp.tanh(i_n + f * h_n)
    return (f * n + (1.0 - f) * h,)


@functools.partial(jax.jit, static_argnums=(0,))
def reference(cell, p, x, is_init, state, reset_state=None, drops=()):
    """The layers one after another, each scanned over time. A reset step
    enters zero, or `reset_state`'s state: per step [L, T, B, H] or per
    column [L, B, H]. drops[k] multiplies layer k's output. Jitted: one
    program per cell and shape, rather than one dispatch per operation."""
    layers, T = state[0].shape[0], x.shape[0]
    finals = []
    for k in range(layers):
        if reset_state is None:
            entered = tuple(jnp.zeros((T,) + s.shape[1:], s.dtype)
                            for s in state)
        else:
            entered = tuple(r[k] if r.ndim == 4 else
                            jnp.broadcast_to(r[k], (T,) + r.shape[1:])
                            for r in reset_state)

        def body(carry, inputs):
            xt, reset, enter = inputs
            carry = tuple(jnp.where(reset[:, None], e, s)
                          for s, e in zip(carry, enter))
            carry = step(cell, p, k, xt, carry)
            return carry, carry[0]
        carry, x = jax.lax.scan(body, tuple(s[k] for s in state),
                                (x, is_init, entered))
        if k < len(drops):
            x = x * drops[k]
        finals.append(carry)
    return x, tuple(jnp.stack([f[i] for f in finals])
                    for i in range(len(state)))


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = np.abs(b).max()
    return np.abs(a - b).max() / (scale if scale else 1.0)


def as64(tree):
    return jax.tree_util.tree_map(lambda a: a.astype(jnp.float64), tree)


def case(cell, T, B, I, H, L, dtype, seed=0):
    keys = jax.random.split(jax.random.PRNGKey(seed), 6)
    params = rj.init_params(keys[0], cell, I, H, L, dtype)
    x = jax.random.normal(keys[1], (T, B, I), dtype)
    # Resets at t = 0, on consecutive steps, on every step of a column,
    # and nowhere in another.
    is_init = np.zeros((T, B), bool)
    is_init[0, 0] = is_init[2, 0] = is_init[3, 0] = True
    is_init[:, 1] = True
    is_init[T // 2, B - 1] = True
    states = len(_cells.BY_NAME[cell].states)
    state = tuple(jax.random.normal(keys[2 + i], (L, B, H), dtype)
                  for i in range(states))
    gy = jax.random.normal(keys[4], (T, B, H), dtype)
    gs = jax.random.normal(keys[5], (L, B, H), dtype)
    return params, x, jnp.asarray(is_init), state, gy, gs


@functools.partial(jax.jit, static_argnums=(0,))
def reference_grads(cell, params, x, is_init, state, gy, gs):
    """The float64 reference's gradients of loss_of with respect to the
    parameters, x and the initial states."""
    return jax.grad(loss_of(lambda *a: reference(cell, *a), is_init,
                            as64(gy), as64(gs)),
                    argnums=(0, 1, 2))(as64(params), as64(x), as64(state))


def loss_of(run, is_init, gy, gs):
    def loss(params, x, state):
        y, state_n = run(params, x, is_init, state)
        total = (y * gy).sum()
        for i, s in enumerate(state_n):
            total = total + (s * (gs if i == 0 else jnp.flip(gs, 0))).sum()
        return total
    return loss


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
@pytest.mark.parametrize("L", [1, 2])
@pytest.mark.parametrize("cell", ALL_CELLS)
def test_matches_the_float64_reference(cell, L, dtype):
    params, x, is_init, state, gy, gs = case(cell, 6, 4, 3, 5, L, dtype)
    y, state_n = rj.rnn(params, x, is_init, state, cell=cell)
    y_ref, state_ref = reference(cell, as64(params), as64(x), is_init,
                                 as64(state))
    assert y.dtype == dtype
    assert rel(y, y_ref) < TOL[dtype]
    for s, s_ref in zip(state_n, state_ref):
        assert rel(s, s_ref) < TOL[dtype]
    ours = jax.grad(loss_of(lambda *a: rj.rnn(*a, cell=cell), is_init, gy,
                            gs), argnums=(0, 1, 2))(params, x, state)
    ref = reference_grads(cell, params, x, is_init, state, gy, gs)
    for (path, g), g_ref in zip(
            jax.tree_util.tree_leaves_with_path(ours),
            jax.tree_util.tree_leaves(ref)):
        assert g.dtype == dtype, path
        assert rel(g, g_ref) < TOL[dtype], (path, rel(g, g_ref))


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_one_library_for_every_shape(cell, monkeypatch):
    """Outputs and gradients at shapes with T=1, B=1, T past the GEMM
    block and a large T*B, against the float64 reference; jit traces
    each shape, and one library (compiled once) runs them all."""
    from rnnc import library
    requests = []
    compile_model = library.compile_model

    def recording(**request):
        requests.append(request)
        return compile_model(**request)

    monkeypatch.setattr(library, "compile_model", recording)
    monkeypatch.setattr(rj, "_LIBRARIES", {})
    run = jax.jit(lambda *a: rj.rnn(*a, cell=cell))
    for k, (T, B) in enumerate([(1, 2), (4, 1), (70, 3), (9, 130)]):
        params, x, is_init, state, gy, gs = case(
            cell, max(T, 4), max(B, 2), 3, 5, 2, jnp.float32, seed=k)
        x, is_init, gy = x[:T, :B], is_init[:T, :B], gy[:T, :B]
        state, gs = tuple(s[:, :B] for s in state), gs[:, :B]
        y, state_n = run(params, x, is_init, state)
        y_ref, state_ref = reference(cell, as64(params), as64(x), is_init,
                                     as64(state))
        assert rel(y, y_ref) < 1e-5, (T, B)
        for s, s_ref in zip(state_n, state_ref):
            assert rel(s, s_ref) < 1e-5, (T, B)
        ours = jax.grad(loss_of(run, is_init, gy, gs),
                        argnums=(0, 1, 2))(params, x, state)
        ref = reference_grads(cell, params, x, is_init, state, gy, gs)
        for g, g_ref in zip(jax.tree_util.tree_leaves(ours),
                            jax.tree_util.tree_leaves(ref)):
            assert rel(g, g_ref) < 1e-5, (T, B)
    [request] = requests
    assert request["seq_len"] is None and request["batch"] is None


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_vmap_equals_a_loop(cell):
    """vmap over per-seed weights and inputs (as whole training runs are
    vmapped), and over inputs with shared weights: outputs, final states
    and gradients bitwise those of a Python loop of calls (vmap runs the
    entry point once per element, in one grouped call), under jit too;
    the same for two nested vmaps, mapped axes other than the first, and
    a vmap over the cotangents of one forward (one forward's saved region
    serves every backward); an axis of no elements calls nothing."""
    check_vmap_equals_a_loop(cell, lambda tree: tree)


def check_vmap_equals_a_loop(cell, place):
    """test_vmap_equals_a_loop's checks, with the arrays on the device
    `place` puts them on."""
    V, T, B, I, H, L = 3, 5, 3, 4, 6, 2
    cases = [place(case(cell, T, B, I, H, L, jnp.float32, seed=v))
             for v in range(V)]
    stack = lambda *a: jnp.stack(a)  # noqa: E731
    params, x, is_init, state, gy, gs = (
        jax.tree_util.tree_map(stack, *[c[k] for c in cases])
        for k in range(6))
    def one(p, x, is_init, state, gy, gs):
        y, state_n = rj.rnn(p, x, is_init, state, cell=cell)
        total = (y * gy).sum() + sum((s * gs).sum() for s in state_n)
        return total, (y, state_n)

    grad = jax.grad(one, argnums=(0, 1, 3), has_aux=True)
    for axes in ((0, 0, 0, 0, 0, 0), (None, 0, 0, 0, 0, 0)):
        first = jax.tree_util.tree_map(lambda a: a[0], params)
        p = params if axes[0] == 0 else first
        for run in (jax.vmap(grad, in_axes=axes),
                    jax.jit(jax.vmap(grad, in_axes=axes))):
            got = run(p, x, is_init, state, gy, gs)
            for v in range(V):
                want = grad(jax.tree_util.tree_map(lambda a: a[v], p)
                            if axes[0] == 0 else p,
                            x[v], is_init[v],
                            tuple(s[v] for s in state), gy[v], gs[v])
                for a, b in zip(jax.tree_util.tree_leaves(got),
                                jax.tree_util.tree_leaves(want)):
                    assert np.array_equal(np.asarray(a[v]), np.asarray(b))
    # Nested: W groups of V seeds.
    W = 2
    outer = lambda a: jnp.stack([a, a[::-1]][:W])  # noqa: E731
    nested = jax.jit(jax.vmap(jax.vmap(grad, in_axes=(0,) * 6),
                              in_axes=(0,) * 6))
    args = jax.tree_util.tree_map(outer, (params, x, is_init, state, gy,
                                          gs))
    got = nested(*args)
    for w in range(W):
        for v in range(V):
            pick = lambda a: a[w, v]  # noqa: E731
            want = grad(*jax.tree_util.tree_map(pick, args))
            for a, b in zip(jax.tree_util.tree_leaves(got),
                            jax.tree_util.tree_leaves(want)):
                assert np.array_equal(np.asarray(a[w, v]), np.asarray(b))
    # Mapped axes other than the first; an axis of no elements.
    args = (params, x, is_init, state, gy, gs)
    want = jax.vmap(grad)(*args)
    moved = (params, jnp.moveaxis(x, 0, 1), jnp.moveaxis(is_init, 0, 1),
             tuple(jnp.moveaxis(s, 0, 2) for s in state),
             jnp.moveaxis(gy, 0, 1), jnp.moveaxis(gs, 0, 2))
    got = jax.jit(jax.vmap(grad, in_axes=(0, 1, 1, 2, 1, 2)))(*moved)
    for a, b in zip(jax.tree_util.tree_leaves(got),
                    jax.tree_util.tree_leaves(want)):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    none = jax.vmap(grad)(*jax.tree_util.tree_map(lambda a: a[:0], args))
    for a, b in zip(jax.tree_util.tree_leaves(none),
                    jax.tree_util.tree_leaves(want)):
        assert a.shape == (0,) + b.shape[1:]
    # One forward, V backwards.
    first = lambda a: a[0]  # noqa: E731
    p0, x0, s0 = (jax.tree_util.tree_map(first, a) for a in (params, x,
                                                               state))
    _, vjp = jax.vjp(lambda p, x, s: rj.rnn(p, x, is_init[0], s,
                                             cell=cell), p0, x0, s0)
    got = jax.jit(jax.vmap(vjp))((gy, (gs,) * len(s0)))
    for v in range(V):
        want = vjp((gy[v], (gs[v],) * len(s0)))
        for a, b in zip(jax.tree_util.tree_leaves(got),
                        jax.tree_util.tree_leaves(want)):
            assert np.array_equal(np.asarray(a[v]), np.asarray(b))


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("V", [2, 3])
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_grad_through_a_scan_of_vmapped_steps(cell, V, shared):
    """A rollout differentiated through time: lax.scan over steps (T=1
    calls), each a vmap over V seeds (shared or per-seed weights), with
    the states carried. The gradients of the float64 reference in the
    same scan, also where V equals L (where a permuted state gradient
    would have the right shape)."""
    steps, B, I, H, L = 4, 2, 3, 4, 2
    cases = [case(cell, steps, B, I, H, L, jnp.float32, seed=v)
             for v in range(V)]
    stack = lambda *a: jnp.stack(a)  # noqa: E731
    params, x, is_init, state, gy, gs = (
        jax.tree_util.tree_map(stack, *[c[k] for c in cases])
        for k in range(6))
    if shared:
        params = jax.tree_util.tree_map(lambda a: a[0], params)
    # Time first: [steps, V, 1, B, ...].
    x, is_init, gy = (jnp.moveaxis(a, 1, 0)[:, :, None] for a in
                      (x, is_init, gy))

    def loss(run, params, x, state):
        def body(carry, inputs):
            xt, it = inputs
            y, carry = jax.vmap(run, in_axes=(None if shared else 0, 0, 0,
                                              0))(params, xt, it, carry)
            return carry, y
        state_n, y = jax.lax.scan(body, state, (x, is_init))
        total = (y * gy).sum()
        for s in state_n:
            total = total + (s * gs).sum()
        return total

    def ours(p, x, i, s):
        return rj.rnn(p, x, i, s, cell=cell)

    def ref(p, x, i, s):
        return reference(cell, p, x, i, s)

    got = jax.grad(functools.partial(loss, ours), argnums=(0, 1, 2))(
        params, x, state)
    want = jax.grad(functools.partial(loss, ref), argnums=(0, 1, 2))(
        as64(params), as64(x), as64(state))
    for a, b in zip(jax.tree_util.tree_leaves(got),
                    jax.tree_util.tree_leaves(want)):
        assert a.shape == b.shape
        assert rel(a, b) < 1e-5


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_dropout_masks_from_the_key(cell):
    """Dropout between layers with masks drawn from a jax.random key:
    outputs, final states and gradients against the float64 reference
    with the masks of rnn.dropout's Philox (computed here independently)
    at the seed the key gives; the same key gives the same bits (under
    jit too), another key other masks."""
    T, B, I, H, L, p = 6, 3, 4, 5, 3, 0.3
    params, x, is_init, state, gy, gs = case(cell, T, B, I, H, L,
                                             jnp.float32)
    key = jax.random.PRNGKey(7)
    words = [int(w) for w in np.asarray(rj.dropout_rng(key))]
    assert words[2:] == [0, 0] and words[1] < 2 ** 30
    seed = words[0] | words[1] << 32
    drops = [jnp.asarray(dropout_scale(T, B, H, p, k, seed).numpy(),
                         jnp.float64) for k in range(L - 1)]
    assert 0 < sum(int((d == 0).sum()) for d in drops) < (L - 1) * T * B * H
    run = lambda *a: rj.rnn(*a, cell=cell, dropout=p, rng=key)  # noqa: E731
    ref = lambda *a: reference(cell, *a, drops=drops)  # noqa: E731
    y, state_n = run(params, x, is_init, state)
    y_ref, state_ref = ref(as64(params), as64(x), is_init, as64(state))
    assert rel(y, y_ref) < 1e-5
    for s, s_ref in zip(state_n, state_ref):
        assert rel(s, s_ref) < 1e-5
    ours = jax.grad(loss_of(run, is_init, gy, gs),
                    argnums=(0, 1, 2))(params, x, state)
    want = jax.grad(loss_of(ref, is_init, as64(gy), as64(gs)),
                    argnums=(0, 1, 2))(as64(params), as64(x), as64(state))
    for g, g_ref in zip(jax.tree_util.tree_leaves(ours),
                        jax.tree_util.tree_leaves(want)):
        assert rel(g, g_ref) < 1e-5
    again, _ = jax.jit(run)(params, x, is_init, state)
    assert np.array_equal(np.asarray(again), np.asarray(y))
    # The probability as a NumPy or JAX scalar: the same call.
    want, _ = rj.rnn(params, x, is_init, state, cell=cell,
                     dropout=float(np.float32(p)), rng=key)
    for q in (np.float32(p), jnp.float32(p)):
        same, _ = rj.rnn(params, x, is_init, state, cell=cell, dropout=q,
                         rng=key)
        assert np.array_equal(np.asarray(same), np.asarray(want))
    other, _ = rj.rnn(params, x, is_init, state, cell=cell, dropout=p,
                      rng=jax.random.PRNGKey(8))
    assert not np.array_equal(np.asarray(other), np.asarray(y))


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_bf16_storage_against_the_float64_reference(cell):
    """storage="bf16" (and jnp.bfloat16): outputs and gradients within
    2e-2 of the float64 reference (about five bf16 unit roundoffs) and
    further from it than float32 storage, so the rounding happened."""
    params, x, is_init, state, gy, gs = case(cell, 6, 4, 3, 8, 2,
                                             jnp.float32)
    want = jax.grad(loss_of(lambda *a: reference(cell, *a), is_init,
                            as64(gy), as64(gs)),
                    argnums=(0, 1, 2))(as64(params), as64(x), as64(state))
    y_ref, _ = reference(cell, as64(params), as64(x), is_init, as64(state))
    worst = {}
    for storage in (None, "bf16", jnp.bfloat16):
        run = lambda *a: rj.rnn(*a, cell=cell,  # noqa: E731
                                storage=storage)
        y, _ = run(params, x, is_init, state)
        ours = jax.grad(loss_of(run, is_init, gy, gs),
                        argnums=(0, 1, 2))(params, x, state)
        errors = [rel(y, y_ref)] + [
            rel(g, g_ref) for g, g_ref in zip(
                jax.tree_util.tree_leaves(ours),
                jax.tree_util.tree_leaves(want))]
        worst[str(storage)] = max(errors)
    assert worst["None"] < 1e-5
    for storage in ("bf16", str(jnp.bfloat16)):
        assert 1e-4 < worst[storage] < 2e-2, worst


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_vmap_with_shared_weights_folds_into_the_batch(cell):
    """Inference vmapped over an axis of inputs and states with shared
    weights is one call of B times the axis' size columns (no loop in the
    lowered program), with the loop's outputs and final states (within
    float32 rounding: the GEMMs have more rows); with per-element weights
    it is one grouped call, which runs the entry point once per element
    (no loop in the lowered program either). An axis of no elements gives
    results of none (not a call of B = 0)."""
    V, T, B, I, H, L = 3, 9, 5, 4, 6, 2
    cases = [case(cell, T, B, I, H, L, jnp.float32, seed=v)
             for v in range(V)]
    stack = lambda *a: jnp.stack(a)  # noqa: E731
    params, x, is_init, state = (
        jax.tree_util.tree_map(stack, *[c[k] for c in cases])
        for k in range(4))
    shared = jax.tree_util.tree_map(lambda a: a[0], params)
    run = lambda p, x, i, s: rj.rnn(p, x, i, s, cell=cell)  # noqa: E731
    folded = jax.jit(jax.vmap(run, in_axes=(None, 0, 0, 0)))
    text = folded.lower(shared, x, is_init, state).as_text()
    assert text.count("rnnc_xla_call") == 1 and "while" not in text
    y, state_n = folded(shared, x, is_init, state)
    for v in range(V):
        y_v, state_v = run(shared, x[v], is_init[v],
                           tuple(s[v] for s in state))
        assert rel(y[v], y_v) < 1e-5
        for a, b in zip(state_n, state_v):
            assert rel(a[v], b) < 1e-5
    none = folded(shared, *jax.tree_util.tree_map(lambda a: a[:0],
                                                  (x, is_init, state)))
    assert none[0].shape == (0, T, B, H)
    grouped = jax.jit(jax.vmap(run)).lower(params, x, is_init,
                                          state).as_text()
    assert grouped.count("rnnc_xla_call") == 1 and "while" not in grouped
    assert f"groups = {V} : i64" in grouped
    assert "groups = 0 : i64" in text


SHARDED = r"""
import json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, PartitionSpec as P
import rnnc.jax as rj
cell = sys.argv[1]
T, B, I, H, L = 5, 4, 3, 6, 2
k = jax.random.split(jax.random.PRNGKey(0), 5)
params = rj.init_params(k[0], cell, I, H, L)
x = jax.random.normal(k[1], (T, B, I))
is_init = jax.random.uniform(k[2], (T, B)) < 0.3
state = tuple(jax.random.normal(key, (L, B, H)) for key in k[3:5])
state = state[:2 if cell in ("lstm", "cifg") else 1]
mesh = Mesh(np.array(jax.devices()), ("d",))
def run(p, x, state):
    return rj.rnn(p, x, is_init, state, cell=cell)
cols = P(None, "d")
sharded = jax.shard_map(
    lambda p, x, i, s: rj.rnn(p, x, i, s, cell=cell), mesh=mesh,
    in_specs=(P(), cols, cols, tuple(cols for _ in state)),
    out_specs=(cols, tuple(cols for _ in state)))
def loss(f):
    def g(p, x, state):
        y, s = f(p, x, state)
        return (y * y).sum() + sum(t.sum() for t in s)
    return g
out = {"devices": len(jax.devices())}
for name, f in (("sharded", jax.jit(lambda p, x, s: sharded(p, x, is_init, s))),
                ("one", run)):
    y, s = f(params, x, state)
    grads = jax.grad(loss(f), argnums=(0, 1, 2))(params, x, state)
    out[name] = [np.asarray(a).tolist() for a in
                 jax.tree_util.tree_leaves((y, s, grads))]
# pmap over the two halves of the batch, the weights' gradients summed.
def per_device(p, x, i, s):
    f = lambda p, x, s: rj.rnn(p, x, i, s, cell=cell)
    grads = jax.grad(loss(f), argnums=(0, 1, 2))(p, x, s)
    return f(p, x, s), (jax.lax.psum(grads[0], "d"),) + grads[1:]
halves = lambda a: jnp.stack(jnp.split(a, 2, axis=1))
join = lambda a: jnp.concatenate(list(a), axis=1)
(y, s), (gp, gx, gs) = jax.pmap(per_device, axis_name="d",
                                in_axes=(None, 0, 0, 0))(
    params, halves(x), halves(is_init), tuple(map(halves, state)))
gp = jax.tree_util.tree_map(lambda a: a[0], gp)
out["pmapped"] = [np.asarray(a).tolist() for a in jax.tree_util.tree_leaves(
    (join(y), tuple(map(join, s)), (gp, join(gx), tuple(map(join, gs)))))]
print(json.dumps(out))
"""


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_shard_map_runs_each_shard_as_its_own_call(cell):
    """Under jax.shard_map over two devices (the batch split between them,
    the weights replicated) each shard is its own call: outputs, final
    states and gradients as one call on the whole batch (the weights'
    gradients summed over the shards), in a process with two CPU devices;
    the same under jax.pmap over the two halves of the batch."""
    import json
    import os
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-c", SHARDED, cell],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ))
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["devices"] == 2
    for side in ("sharded", "pmapped"):
        assert len(out[side]) == len(out["one"])
        for a, b in zip(out[side], out["one"]):
            assert rel(np.array(a), np.array(b)) < 1e-5, side


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_equals_rnnc_torch_on_the_same_weights(cell):
    """rnnc.jax and rnnc.torch on the same weights (torch.nn's state_dict
    names), inputs and resets: the same library computes both, so
    outputs, final states and gradients are the same bits."""
    import torch
    import rnnc.torch as rt
    params, x, is_init, state, gy, gs = case(cell, 6, 4, 3, 5, 2,
                                             jnp.float32)
    module = getattr(rt, cell.upper())(3, 5, 2)
    module.load_state_dict({k: torch.from_numpy(np.array(v))
                            for k, v in params.items()})
    tx = torch.from_numpy(np.array(x)).requires_grad_()
    ts = [torch.from_numpy(np.array(s)).requires_grad_() for s in state]
    ty, tstate = module(tx, tuple(ts) if len(ts) == 2 else ts[0],
                        is_init=torch.from_numpy(np.array(is_init)))
    tstate = tstate if len(ts) == 2 else (tstate,)
    tgy, tgs = (torch.from_numpy(np.array(a)) for a in (gy, gs))
    loss = (ty * tgy).sum() + sum(
        (s * (tgs if i == 0 else tgs.flip(0))).sum()
        for i, s in enumerate(tstate))
    tgrads = torch.autograd.grad(loss, [tx, *ts, *module.parameters()])
    y, state_n = rj.rnn(params, x, is_init, state, cell=cell)
    assert np.array_equal(np.asarray(y), ty.detach().numpy())
    for a, b in zip(state_n, tstate):
        assert np.array_equal(np.asarray(a), b.detach().numpy())
    grads = jax.grad(loss_of(lambda *a: rj.rnn(*a, cell=cell), is_init, gy,
                             gs), argnums=(0, 1, 2))(params, x, state)
    want = dict(zip(["x"] + [f"s{i}" for i in range(len(ts))] +
                    [n for n, _ in module.named_parameters()], tgrads))
    assert np.array_equal(np.asarray(grads[1]), want["x"].numpy())
    for i, g in enumerate(grads[2]):
        assert np.array_equal(np.asarray(g), want[f"s{i}"].numpy())
    for name, g in grads[0].items():
        assert np.array_equal(np.asarray(g), want[name].numpy()), name


@pytest.mark.parametrize("form", ["step", "column"])
@pytest.mark.parametrize("cell", ALL_CELLS)
def test_reset_states_match_the_float64_reference(cell, form):
    """A reset step enters the given state (TorchRL's stored states), and
    the gradients flow into it."""
    dtype = jnp.float64
    params, x, is_init, state, gy, gs = case(cell, 6, 4, 3, 5, 2, dtype,
                                             seed=3)
    T, B, H = 6, 4, 5
    shape = (2, T, B, H) if form == "step" else (2, B, H)
    keys = jax.random.split(jax.random.PRNGKey(7), len(state))
    reset = tuple(jax.random.normal(key, shape, dtype) for key in keys)

    def ours(params, x, state, reset):
        return rj.rnn(params, x, is_init, state, reset_state=reset,
                      cell=cell)

    def theirs(params, x, state, reset):
        return reference(cell, params, x, is_init, state, reset)

    got = ours(params, x, state, reset)
    want = theirs(params, x, state, reset)
    for a, b in zip(jax.tree_util.tree_leaves(got),
                    jax.tree_util.tree_leaves(want)):
        assert rel(a, b) < TOL[dtype]

    def loss(run):
        def value(params, x, state, reset):
            y, state_n = run(params, x, state, reset)
            return (y * gy).sum() + (state_n[0] * gs).sum()
        return value
    g = jax.grad(loss(ours), argnums=(0, 1, 2, 3))(params, x, state, reset)
    g_ref = jax.grad(loss(theirs), argnums=(0, 1, 2, 3))(params, x, state,
                                                         reset)
    for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(g),
                            jax.tree_util.tree_leaves(g_ref)):
        assert rel(a, b) < TOL[dtype], (path, rel(a, b))
    # The reset states get a gradient where a reset step reads them.
    assert all(np.abs(np.asarray(r)).max() > 0 for r in g[3])


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_jit_and_every_remat_policy_give_the_same_bits(cell):
    params, x, is_init, state, gy, gs = case(cell, 8, 3, 4, 5, 2,
                                             jnp.float32, seed=1)
    results = []
    # One chunk: at T = 8, B = 3 every K < T runs chunks of T (see
    # helpers.POLICIES).
    for remat in ("none", "gates", "chunk:2"):
        run = lambda *a, r=remat: rj.rnn(*a, cell=cell, remat=r)  # noqa
        grad = jax.grad(loss_of(run, is_init, gy, gs), argnums=(0, 1, 2))
        for fn in (grad, jax.jit(grad)):
            results.append(jax.tree_util.tree_leaves(fn(params, x, state)))
    for other in results[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(results[0], other))


def test_calls_name_their_library():
    """Each FFI call names its library's directory beside the entry
    point's address: computations of two libraries differ by it, as they
    would where the two entry points lay at one address (in two
    processes), and the handler's errors name it."""
    params, x, is_init, state, gy, gs = case("gru", 4, 2, 3, 5, 1,
                                             jnp.float32, seed=3)
    named = {}
    for remat in ("none", "gates"):
        run = lambda *a, r=remat: rj.rnn(*a, cell="gru", remat=r)  # noqa
        grad = jax.jit(jax.grad(loss_of(run, is_init, gy, gs)))
        text = grad.lower(params, x, state).as_text()
        assert text.count("rnnc_xla_call") == 2
        named[remat] = set(re.findall(r'\blibrary = "([^"]*)"', text))
    for remat, directories in named.items():
        want = dict(cell="gru", target="cpu", remat=remat, input_size=3,
                    hidden_size=5, layers=1, dtype="float32", dropout=0.0,
                    storage=None, reset_to="zero")
        [lib] = [lib for config, lib in rj._LIBRARIES.items()
                 if want.items() <= json.loads(config).items()]
        assert directories == {os.path.abspath(lib.directory)}
    assert named["none"] != named["gates"]


def test_batch_first_and_inference_without_gradients():
    params, x, is_init, state, _, _ = case("gru", 5, 2, 3, 4, 1,
                                           jnp.float32, seed=2)
    y, (h,) = rj.rnn(params, x, is_init, state, cell="gru")
    yb, (hb,) = jax.jit(lambda *a: rj.rnn(*a, cell="gru",
                                          batch_first=True))(
        params, jnp.swapaxes(x, 0, 1), is_init.T, state)
    assert np.array_equal(np.swapaxes(np.asarray(yb), 0, 1), y)
    assert np.array_equal(hb, h)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_lowers_for_cuda_through_one_library_for_every_gpu(cell):
    """A training step lowered for CUDA here, without a GPU (as jax.export
    does for a GPU elsewhere): the forward and the backward are calls of
    the cuda handler, whose attributes hold the addresses of the entry
    points, of rnnc_context_create (the handler makes a context per
    device at its first call there) and of rnnc_last_error of one library
    compiled for the cuda target; nothing calls the cpu handler, and
    lowering made no context (it touches no GPU). Under vmap over per-seed
    weights each is one grouped call."""
    params, x, is_init, state, gy, gs = case(cell, 6, 4, 3, 5, 2,
                                             jnp.float32)
    loss = loss_of(lambda *a: rj.rnn(*a, cell=cell, platform="cuda"),
                   is_init, gy, gs)
    export = jax.export.export(
        jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2))),
        platforms=("cuda",),
        disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(
            "rnnc_xla_call_cuda")])
    text = export(params, x, state).mlir_module()
    assert "rnnc_xla_call_cuda" in text
    assert "@rnnc_xla_call(" not in text and '"rnnc_xla_call"' not in text

    def attribute(name):
        """The values of the int64 attribute `name` of every call."""
        found = re.findall(rf"\b{name} = (-?\d+) : i64", text)
        return {int(v) for v in found}

    [lib] = [lib for config, lib in rj._LIBRARIES.items()
             if json.loads(config)["target"] == "cuda" and
             json.loads(config)["cell"] == cell]
    assert lib.target == "cuda" and lib.device is None
    assert (lib.manifest["shape"]["T"], lib.manifest["shape"]["L"]) == (6, 2)
    functions = lib.manifest["functions"]

    def address(name):
        return rj._address(getattr(lib._lib, functions[name]))

    assert attribute("entry") == {rj._address(lib.entries[k]._fn)
                                  for k in ("fwd", "bwd")}
    assert set(re.findall(r'\blibrary = "([^"]*)"', text)) == {
        os.path.abspath(lib.directory)}
    assert attribute("context_create") == {address("context_create")}
    assert attribute("last_error") == {address("last_error")}
    assert attribute("groups") == {0}
    # vmapped over three seeds' weights: each call grouped, with nothing
    # staged (the cpu handler's copy).
    seeds = jax.tree_util.tree_map(lambda a: jnp.stack([a, -a, 2 * a]),
                                   (params, x, state))
    export = jax.export.export(
        jax.jit(jax.vmap(jax.value_and_grad(loss, argnums=(0, 1, 2)))),
        platforms=("cuda",),
        disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(
            "rnnc_xla_call_cuda")])
    text = export(*seeds).mlir_module()
    assert text.count("rnnc_xla_call_cuda") == 2 and "while" not in text
    assert attribute("groups") == {3} and "staging" not in text


def test_no_step_no_column_and_no_resets():
    """T = 0 or B = 0 runs nothing: y is empty and the state goes out as
    it came, its gradient the identity's; is_init None resets nothing."""
    params, x, is_init, state, _, _ = case("lstm", 4, 2, 3, 5, 2,
                                           jnp.float32)
    for T, B in ((0, 2), (4, 0)):
        s = tuple(a[:, :B] + 1 for a in state)
        y, s_n = rj.rnn(params, x[:T, :B], is_init[:T, :B], s)
        assert y.shape == (T, B, 5) and y.dtype == x.dtype
        assert all(bool((a == b).all()) for a, b in zip(s_n, s))
        grads = jax.grad(lambda s: sum(
            (a * a).sum() for a in rj.rnn(params, x[:T, :B],
                                          is_init[:T, :B], s)[1]))(s)
        assert all(bool((g == 2 * a).all()) for g, a in zip(grads, s))
    y, _ = rj.rnn(params, jnp.zeros((2, 0, 3), x.dtype), None, state,
                  batch_first=True)
    assert y.shape == (2, 0, 5)
    quiet = jnp.zeros_like(is_init)
    for a, b in zip(jax.tree_util.tree_leaves(rj.rnn(params, x, None, state)),
                    jax.tree_util.tree_leaves(rj.rnn(params, x, quiet,
                                                     state))):
        assert bool((a == b).all())


def test_bad_inputs_are_one_clear_error():
    params, x, is_init, state, _, _ = case("lstm", 4, 2, 3, 5, 1,
                                           jnp.float32)
    with pytest.raises(ValueError, match="unknown cell 'rnn'"):
        rj.rnn(params, x, is_init, state, cell="rnn")
    with pytest.raises(TypeError, match=r"tuple of 2 arrays \(h, c\)"):
        rj.rnn(params, x, is_init, state[:1], cell="lstm")
    with pytest.raises(ValueError, match="unknown cell \\['lstm'\\]"):
        rj.rnn(params, x, is_init, state, cell=["lstm"])
    with pytest.raises(ValueError, match="is_init must be bool"):
        rj.rnn(params, x, is_init.astype(jnp.int32), state)
    # Under batch_first, in the caller's layout.
    with pytest.raises(ValueError, match=re.escape(
            "is_init must be bool [B, T] = [2, 4], got bool [4, 2]")):
        rj.rnn(params, jnp.swapaxes(x, 0, 1), is_init, state,
               batch_first=True)
    with pytest.raises(ValueError, match="params must name"):
        rj.rnn({k: v for k, v in params.items() if k != "bias_hh_l0"}, x,
               is_init, state)
    # The parameters' shapes follow x's input size and the state's hidden
    # size; a call of other sizes would read past their ends.
    with pytest.raises(ValueError, match=r"weight_ih_l0 must have shape "
                                         r"\[20, 4\] .*got \[20, 3\]"):
        rj.rnn(params, jnp.concatenate([x, x[..., :1]], -1), is_init, state)
    with pytest.raises(ValueError, match=r"weight_ih_l0 must have shape "
                                         r"\[24, 3\] .*got \[20, 3\]"):
        rj.rnn(params, x, is_init, tuple(jnp.concatenate([s, s[..., :1]], -1)
                                         for s in state))
    with pytest.raises(ValueError, match=r"bias_hh_l0 must have shape "
                                         r"\[20\] .*got \[21\]"):
        rj.rnn({**params, "bias_hh_l0": jnp.zeros(21)}, x, is_init, state)
    with pytest.raises(ValueError, match="give is_init with it"):
        rj.rnn(params, x, None, state, reset_state=state)
    with pytest.raises(TypeError, match="params must be a dict"):
        rj.rnn(list(params.items()), x, is_init, state)
    with pytest.raises(ValueError, match="unknown remat policy 'foo'"):
        rj.rnn(params, x, is_init, state, remat="foo")
    with pytest.raises(ValueError, match="hidden_size must be positive"):
        rj.init_params(jax.random.PRNGKey(0), "gru", 3, 0)
    with pytest.raises(ValueError, match="num_layers must be positive"):
        rj.init_params(jax.random.PRNGKey(0), "gru", 3, 5, 0)
    with pytest.raises(TypeError, match="input_size must be an int"):
        rj.init_params(jax.random.PRNGKey(0), "gru", 3.0, 5)
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        rj.init_params(jax.random.PRNGKey(0), "gru", 3, 5, 1, jnp.float16)
    with pytest.raises(ValueError, match="storage must be None or 'bf16'"):
        rj.rnn(params, x, is_init, state, storage="fp8")
    with pytest.raises(ValueError, match="bf16 storage needs float32"):
        rj.rnn(jax.tree_util.tree_map(lambda a: a.astype(jnp.float64),
                                      params), x.astype(jnp.float64),
               is_init, tuple(s.astype(jnp.float64) for s in state),
               storage="bf16")
    with pytest.raises(ValueError, match="per step.*or.*per column"):
        rj.rnn(params, x, is_init, state,
               reset_state=tuple(s[:, :1] for s in state))
    with pytest.raises(RNNCError, match="x must be float32 or float64"):
        rj.rnn(params, x.astype(jnp.float16), is_init, state)
    with pytest.raises(ValueError, match="dropout needs rng"):
        rj.rnn(params, x, is_init, state, dropout=0.2)
    with pytest.raises(ValueError, match="give dropout > 0 with it"):
        rj.rnn(params, x, is_init, state, rng=jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=r"probability in \[0, 1\)"):
        rj.rnn(params, x, is_init, state, dropout=1.0,
               rng=jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=r"probability in \[0, 1\), got "
                                         r"'0.2'"):
        rj.rnn(params, x, is_init, state, dropout="0.2",
               rng=jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="dropout must be a concrete number"):
        jax.jit(lambda p: rj.rnn(params, x, is_init, state, dropout=p,
                                 rng=jax.random.PRNGKey(0)))(0.2)
    with pytest.raises(TypeError, match="rng must be a jax.random key"):
        rj.rnn(params, x, is_init, state, dropout=0.2, rng="seed")
    with pytest.raises(ValueError, match="runs on the platforms 'cpu', "
                                         "'cuda', got 'tpu'"):
        rj.rnn(params, x, is_init, state, platform="tpu")
    if not rj._cuda_devices():
        with pytest.raises(ValueError, match="JAX has no CUDA device here"):
            rj.rnn(params, x, is_init, state, platform="cuda")
    with pytest.raises(ValueError, match="runs float64 on the CPU only"):
        rj.rnn(as64(params), as64(x), is_init, as64(state),
               platform="cuda")
    # Second-order differentiation.
    total = lambda x: rj.rnn(params, x, is_init, state)[0].sum()  # noqa
    with pytest.raises(RNNCError, match="first derivatives only"):
        jax.grad(lambda x: jax.grad(total)(x).sum())(x)
    with pytest.raises(RNNCError, match="first derivatives only"):
        jax.hessian(total)(x)


def test_layout_and_platform_arguments_are_checked():
    """batch_first chooses the layout: a string (truthy, whatever it
    says) or a traced flag is one error naming it, not a call in the
    other layout; so is a platform that is not a name."""
    params, x, is_init, state, _, _ = case("gru", 4, 2, 3, 5, 1,
                                           jnp.float32)
    for flag in ("no", 1, None):
        with pytest.raises(TypeError, match=re.escape(
                f"batch_first must be a bool, got {flag!r}")):
            rj.rnn(params, x, is_init, state, cell="gru", batch_first=flag)
    with pytest.raises(TypeError, match="batch_first must be a bool"):
        jax.jit(lambda f: rj.rnn(params, x, is_init, state, cell="gru",
                                 batch_first=f))(True)
    with pytest.raises(TypeError, match=r"platform must be None, 'cpu' or "
                                        r"'cuda', got \['cpu'\]"):
        rj.rnn(params, x, is_init, state, cell="gru", platform=["cpu"])
    # NumPy's bool is a bool.
    y, _ = rj.rnn(params, x, is_init, state, cell="gru",
                  batch_first=np.bool_(False))
    assert y.shape == (4, 2, 5)


def test_float64_parameters_need_x64():
    """init_params(dtype=float64) without jax_enable_x64 is one error
    saying so, not float32 parameters under a float64 request (JAX's
    warning and truncation); a dtype that is not one is named."""
    key = jax.random.PRNGKey(0)
    with jax.enable_x64(False):
        with pytest.raises(ValueError, match="dtype float64 needs "
                                             "jax_enable_x64"):
            rj.init_params(key, "gru", 3, 5, 1, jnp.float64)
        assert rj.init_params(key, "gru", 3, 5)["weight_ih_l0"].dtype == \
            jnp.float32
    assert rj.init_params(key, "gru", 3, 5, 1, jnp.float64)[
        "weight_ih_l0"].dtype == jnp.float64
    with pytest.raises(ValueError, match="dtype must be float32 or float64, "
                                         "got 'lstm'"):
        rj.init_params(key, "gru", 3, 5, 1, "lstm")


def test_no_feature_is_one_error_naming_the_input():
    """A state of hidden size 0 or an x of input size 0 is refused naming
    that input (whatever T and B), not rnn-compile's error about its
    flags."""
    params, x, is_init, state, _, _ = case("gru", 4, 2, 3, 5, 1,
                                           jnp.float32)
    empty = {k: v[:0] if v.ndim == 1 else v[:0, :0] if "hh" in k else
             v[:0] for k, v in params.items()}
    for T in (4, 0):
        with pytest.raises(ValueError, match=re.escape(
                "the state's hidden size (its last axis) must be positive, "
                "got [1, 2, 0]")):
            rj.rnn(empty, x[:T], is_init[:T], (state[0][..., :0],),
                   cell="gru")
        narrow = {k: v[:, :0] if k == "weight_ih_l0" else v
                  for k, v in params.items()}
        with pytest.raises(ValueError, match=re.escape(
                f"x's input size (its last axis) must be positive, got "
                f"[{T}, 2, 0]")):
            rj.rnn(narrow, x[:T, :, :0], is_init[:T], state, cell="gru")


def test_dropout_with_one_layer_warns_that_nothing_is_dropped():
    """Dropout acts between layers, as rnnc.torch's and torch.nn's: with
    one layer nothing is dropped (the reference's output), and a warning
    says so, as rnnc.torch's does."""
    params, x, is_init, state, _, _ = case("gru", 4, 2, 3, 5, 1,
                                           jnp.float64)
    with pytest.warns(UserWarning, match="dropout applies between layers: "
                                         "with one layer and dropout=0.3 "
                                         "nothing is dropped"):
        y, _ = rj.rnn(params, x, is_init, state, cell="gru", dropout=0.3,
                      rng=jax.random.PRNGKey(0))
    want, _ = reference("gru", params, x, is_init, state)
    assert rel(y, want) < TOL[jnp.float64]
