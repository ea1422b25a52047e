"""rnnc.jax on CUDA: the library compiled for the cuda target, called
through the cuda FFI handler on XLA's buffers and stream, against the
float64 reference of test_jax.py (on the CPU), and against itself across
remat policies, jit, a rollout under lax.scan and bf16 storage.

These tests need JAX with CUDA devices; without them the module is
skipped as a whole with its reason, and gpu/call2.sh runs it on a GPU
machine. With RNNC_TEST_CUDA_AS_CPU=1 (`./dev.sh test`, so CI) it runs on
the CPU in place of the GPU (platform "cpu", the same references), so
that breakage of the test code itself shows without a GPU. How a call
for CUDA is lowered (the handler, its attributes, the library of the
cuda target loaded per GPU) is checked without a GPU in test_jax.py.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rnnc.jax as rj
from helpers import ALL_CELLS
from test_jax import (as64, case, check_vmap_equals_a_loop, loss_of,
                      reference, reference_grads, rel)

AS_CPU = os.environ.get("RNNC_TEST_CUDA_AS_CPU") == "1"
if AS_CPU:
    PLATFORM = "cpu"
    DEVICE = jax.devices("cpu")[0]
else:
    PLATFORM = "cuda"
    pytestmark = pytest.mark.skipif(not rj._cuda_devices(),
                                    reason="no CUDA device in JAX")
    DEVICE = rj._cuda_devices()[0] if rj._cuda_devices() else None

# The cuda target's kernels compute exp and tanh with polynomials of
# float32 accuracy; the reference is float64.
TOL = 1e-5


def on_device(tree):
    return jax.device_put(tree, DEVICE)


def run(cell, **options):
    return lambda *a: rj.rnn(*a, cell=cell, **options)


@pytest.mark.parametrize("L", [1, 2])
@pytest.mark.parametrize("cell", ALL_CELLS)
def test_matches_the_float64_reference(cell, L):
    """Outputs, final states and every gradient, jitted, on the device,
    against the float64 reference."""
    params, x, is_init, state, gy, gs = on_device(
        case(cell, 6, 4, 3, 5, L, jnp.float32))
    y, state_n = jax.jit(run(cell))(params, x, is_init, state)
    assert next(iter(y.devices())).platform == DEVICE.platform
    y_ref, state_ref = reference(cell, as64(params), as64(x), is_init,
                                 as64(state))
    assert rel(y, y_ref) < TOL
    for s, s_ref in zip(state_n, state_ref):
        assert rel(s, s_ref) < TOL
    ours = jax.jit(jax.grad(loss_of(run(cell), is_init, gy, gs),
                            argnums=(0, 1, 2)))(params, x, state)
    ref = reference_grads(cell, params, x, is_init, state, gy, gs)
    for (path, g), g_ref in zip(jax.tree_util.tree_leaves_with_path(ours),
                                jax.tree_util.tree_leaves(ref)):
        assert g.dtype == jnp.float32, path
        assert rel(g, g_ref) < TOL, (path, rel(g, g_ref))


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_every_remat_policy_gives_the_same_bits(cell):
    """Gradients bitwise equal across remat policies, eager and jitted,
    platform given and found from the arrays."""
    params, x, is_init, state, gy, gs = on_device(
        case(cell, 8, 3, 4, 5, 2, jnp.float32, seed=1))
    results = []
    # One chunk: at T = 8, B = 3 every K < T runs chunks of T (see
    # helpers.POLICIES).
    for remat in ("none", "gates", "chunk:2"):
        for options in ({}, {"platform": PLATFORM}):
            grad = jax.grad(loss_of(run(cell, remat=remat, **options),
                                    is_init, gy, gs), argnums=(0, 1, 2))
            for fn in (grad, jax.jit(grad)):
                results.append(jax.tree_util.tree_leaves(
                    fn(params, x, state)))
    for other in results[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(results[0], other))


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_a_rollout_under_scan_equals_one_call(cell):
    """T calls at T = 1 inside a jitted lax.scan (a rollout, the state
    carried) give the outputs of one call over the T steps."""
    params, x, is_init, state, _, _ = on_device(
        case(cell, 7, 3, 4, 5, 2, jnp.float32, seed=2))

    @jax.jit
    def rollout(params, x, is_init, state):
        def body(carry, inputs):
            xt, reset = inputs
            y, carry = rj.rnn(params, xt[None], reset[None], carry,
                              cell=cell)
            return carry, y[0]
        carry, y = jax.lax.scan(body, state, (x, is_init))
        return y, carry

    y, state_n = rollout(params, x, is_init, state)
    y_one, state_one = rj.rnn(params, x, is_init, state, cell=cell)
    assert rel(y, y_one) < TOL
    for s, s_one in zip(state_n, state_one):
        assert rel(s, s_one) < TOL


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_vmap_over_seeds_equals_a_loop(cell):
    """vmap over per-seed weights (one grouped call, which enqueues the
    entry point once per seed), nested vmaps and a vmap over cotangents:
    bitwise a loop of calls, as test_jax.py checks on the CPU."""
    check_vmap_equals_a_loop(cell, on_device)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_bf16_storage_against_the_float64_reference(cell):
    params, x, is_init, state, gy, gs = on_device(
        case(cell, 6, 4, 3, 5, 2, jnp.float32, seed=3))
    options = dict(storage="bf16")
    y, _ = rj.rnn(params, x, is_init, state, cell=cell, **options)
    y_ref, _ = reference(cell, as64(params), as64(x), is_init, as64(state))
    assert rel(y, y_ref) < 2e-2
    ours = jax.grad(loss_of(run(cell, **options), is_init, gy, gs),
                    argnums=(0, 1, 2))(params, x, state)
    ref = reference_grads(cell, params, x, is_init, state, gy, gs)
    for g, g_ref in zip(jax.tree_util.tree_leaves(ours),
                        jax.tree_util.tree_leaves(ref)):
        assert rel(g, g_ref) < 2e-2


@pytest.mark.skipif(AS_CPU or len(rj._cuda_devices()) < 2,
                    reason="needs a real GPU, two CUDA devices")
def test_each_gpu_runs_the_library_with_its_own_context():
    """The same jitted call on two GPUs: each runs the one library with a
    context of its device (the handler picks it by XLA's device ordinal),
    with the same bits."""
    first, second = rj._cuda_devices()[:2]
    args = case("lstm", 5, 2, 3, 4, 1, jnp.float32, seed=4)[:4]
    f = jax.jit(run("lstm"))
    a = f(*jax.device_put(args, first))
    b = f(*jax.device_put(args, second))
    assert next(iter(b[0].devices())) == second
    for u, v in zip(jax.tree_util.tree_leaves(a),
                    jax.tree_util.tree_leaves(b)):
        assert np.array_equal(np.asarray(u), np.asarray(v))
