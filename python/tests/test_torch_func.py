"""rnnc.torch's modules under torch.func: vmap of grad (per-example
gradients), grad of vmap, vmap over stacked weights (ensembles), vmap
without gradients folded into the batch, jacrev, and the clear errors of
forward-mode AD, second-order gradients and dropout under vmap. Every
value is checked against torch.nn (or the cell's float reference) run
element by element, episode by episode, in float64.

Needs `rnn-compile` (RNNC_COMPILE or PATH) and PyTorch.
"""

import pytest
import torch

import rnnc.torch as rt
from rnnc import _ops
from rnnc.library import RNNCError

from helpers import (ALL_CELLS, LSTM_LIKE, episodes_loss_and_grads,
                     episodes_reference, final, make_pair, rel_err,
                     state_of)

T, B, I, H, L, N = 5, 2, 3, 4, 2, 3
TOL = 1e-10


def pair(cell, remat="none"):
    ours, ref = make_pair(cell, I, H, L, remat=remat)
    return ours.double(), ref.double()


def elements(cell, seed=7):
    """N elements' x, h0, c0, per-step reset states hr, cr, is_init (with
    resets at t=0 and inside; B = 2) and cotangents gy, ghn, stacked along a
    leading dimension."""
    g = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(N, *shape, generator=g, dtype=torch.float64)

    is_init = torch.rand(N, T, B, generator=g) < 0.3
    # Column 0 starts with a reset (its reset state is used), column 1
    # from h0.
    is_init[:, 0, 0] = True
    is_init[:, 0, 1] = False
    return dict(x=randn(T, B, I), h0=randn(L, B, H), c0=randn(L, B, H),
                hr=randn(L, T, B, H), cr=randn(L, T, B, H), is_init=is_init,
                gy=randn(T, B, H), ghn=randn(L, B, H))


def loss_of(cell, module):
    """The loss of `module` on one element's inputs as a function of the
    parameters (a dict) and those inputs, as loss_and_grads computes it."""
    def loss(params, x, h0, c0, hr, cr, is_init, gy, ghn):
        kwargs = dict(is_init=is_init, reset_state=state_of(cell, hr, cr))
        y, state = torch.func.functional_call(
            module, params, (x, state_of(cell, h0, c0)), kwargs)
        value = (y * gy).sum() + (final(cell, state) * ghn).sum()
        if cell in LSTM_LIKE:
            value = value + (state[1] * ghn.flip(0)).sum()
        return value
    return loss


# The arguments of `loss_of`'s loss whose gradients are checked: the
# parameters, x, h0, (c0), h_reset, (c_reset).
def argnums(cell):
    return (0, 1, 2, 3, 4, 5) if cell in LSTM_LIKE else (0, 1, 2, 4)


def reference(cell, ref, e, i, params=None):
    """Element i's loss gradients by the reference, episode by episode:
    the parameters' (a dict), then x, h0, (c0), h_reset, (c_reset)."""
    if params is not None:
        with torch.no_grad():
            for name, p in ref.named_parameters():
                p.copy_(params[name])
    x, h0, c0, hr, cr = (e[k][i].clone().requires_grad_()
                         for k in ("x", "h0", "c0", "hr", "cr"))
    _, _, grads = episodes_loss_and_grads(
        cell, ref, x, h0, c0, e["gy"][i], e["ghn"][i], e["is_init"][i], hr,
        cr)
    states = 2 if cell in LSTM_LIKE else 1
    names = [n for n, _ in ref.named_parameters()]
    param_grads = dict(zip(names, grads[1 + states:1 + states + len(names)]))
    return (param_grads, grads[0], *grads[1:1 + states],
            *grads[1 + states + len(names):])


def assert_close(ours, ref):
    if isinstance(ref, dict):
        for name in ref:
            assert rel_err(ours[name], ref[name]) < TOL, name
    else:
        assert rel_err(ours, ref) < TOL


def args_of(e):
    return [e[k] for k in ("x", "h0", "c0", "hr", "cr", "is_init", "gy",
                           "ghn")]


class Calls:
    """The entry points a block calls, with their batch sizes, and the
    batch size each call's library was compiled for ("B": every size)."""

    def __init__(self, monkeypatch):
        self.calls, self.libraries = [], []
        call = _ops._call

        def spy(library, kind, tensors, layers, device):
            self.calls.append((kind, tensors["x"].shape[1]))
            self.libraries.append(library.manifest["shape"]["B"])
            return call(library, kind, tensors, layers, device)

        monkeypatch.setattr(_ops, "_call", spy)


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_vmap_of_grad_gives_each_elements_gradients(cell, monkeypatch):
    """Per-example gradients of shared weights: each element's gradients
    of the parameters, x, the states and the reset states equal the
    reference's for that element alone. The forward runs the elements as
    one call of N*B columns; the parameters' per-element gradients take
    each element's forward and backward."""
    ours, ref = pair(cell)
    e = elements(cell)
    params = {k: v.detach() for k, v in ours.named_parameters()}
    calls = Calls(monkeypatch)
    grads = torch.func.vmap(
        torch.func.grad(loss_of(cell, ours), argnums=argnums(cell)),
        in_dims=(None,) + (0,) * 8)(params, *args_of(e))
    assert calls.calls == [("fwd", N * B)] + [("fwd", B), ("bwd", B)] * N
    for i in range(N):
        expected = reference(cell, ref, e, i)
        for ours_grad, ref_grad in zip(grads, expected):
            assert_close({k: v[i] for k, v in ours_grad.items()}
                         if isinstance(ours_grad, dict) else ours_grad[i],
                         ref_grad)


# A budget's plan depends on the shape: a library per batch size.
BUDGET = "budget:1000000000"


@pytest.mark.parametrize("cell,remat", [(c, "none") for c in ALL_CELLS] +
                         [("lstm", BUDGET), ("gru", BUDGET)])
def test_vmap_of_grad_of_inputs_folds_into_the_batch(cell, remat,
                                                      monkeypatch):
    """Gradients of the inputs only (no parameter gradient per element):
    one forward and one backward of N*B columns, each element's gradients
    the reference's; under a remat budget, whose libraries have one batch
    size each, through the library of N*B columns."""
    ours, ref = pair(cell, remat)
    e = elements(cell, seed=8)
    params = {k: v.detach() for k, v in ours.named_parameters()}
    calls = Calls(monkeypatch)
    grads = torch.func.vmap(
        torch.func.grad(loss_of(cell, ours), argnums=argnums(cell)[1:]),
        in_dims=(None,) + (0,) * 8)(params, *args_of(e))
    assert calls.calls == [("fwd", N * B), ("bwd", N * B)]
    assert calls.libraries == ["B" if remat == "none" else N * B] * 2
    for i in range(N):
        expected = reference(cell, ref, e, i)[1:]
        for ours_grad, ref_grad in zip(grads, expected):
            assert_close(ours_grad[i], ref_grad)


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_grad_of_vmap_sums_over_elements(cell, monkeypatch):
    """The gradient of a loss summed over vmapped elements: one forward and
    one backward of N*B columns, the parameters' gradients the sum of the
    reference's per element."""
    ours, ref = pair(cell)
    e = elements(cell, seed=9)
    params = {k: v.detach() for k, v in ours.named_parameters()}
    per_element = torch.func.vmap(loss_of(cell, ours),
                                  in_dims=(None,) + (0,) * 8)
    calls = Calls(monkeypatch)
    grads = torch.func.grad(lambda p, *a: per_element(p, *a).sum())(
        params, *args_of(e))
    assert calls.calls == [("fwd", N * B), ("bwd", N * B)]
    expected = [reference(cell, ref, e, i)[0] for i in range(N)]
    assert_close(grads, {k: sum(g[k] for g in expected) for k in grads})


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_vmap_over_stacked_weights(cell, monkeypatch):
    """An ensemble (torch.func.stack_module_state): each member's outputs
    and gradients are the reference's with its weights, one call per
    member."""
    members = [pair(cell)[0] for _ in range(N)]
    for k, member in enumerate(members):
        torch.manual_seed(k)
        for p in member.parameters():
            torch.nn.init.uniform_(p, -0.5, 0.5)
    params, _ = torch.func.stack_module_state(members)
    params = {k: v.detach() for k, v in params.items()}
    ours, ref = pair(cell)
    e = elements(cell, seed=10)
    calls = Calls(monkeypatch)
    grads = torch.func.vmap(
        torch.func.grad(loss_of(cell, ours), argnums=argnums(cell)))(
            params, *args_of(e))
    assert calls.calls == [("fwd", B)] * N + [("bwd", B)] * N
    for i in range(N):
        expected = reference(cell, ref, e, i,
                             {k: v[i] for k, v in params.items()})
        for ours_grad, ref_grad in zip(grads, expected):
            assert_close({k: v[i] for k, v in ours_grad.items()}
                         if isinstance(ours_grad, dict) else ours_grad[i],
                         ref_grad)


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_vmap_without_gradients_folds_into_the_batch(cell, monkeypatch):
    """Inference vmapped over x, is_init and the states (shared weights) is
    one call of N*B columns, each element's outputs the reference's."""
    ours, ref = pair(cell)
    e = elements(cell, seed=11)

    def run(x, h0, c0, is_init):
        y, state = ours(x, state_of(cell, h0, c0), is_init=is_init)
        return y, final(cell, state)

    calls = Calls(monkeypatch)
    with torch.no_grad():
        y, h_n = torch.func.vmap(run)(e["x"], e["h0"], e["c0"],
                                      e["is_init"])
        for i in range(N):
            y_ref, h_ref, _ = episodes_reference(
                cell, ref, e["x"][i], e["is_init"][i], e["h0"][i],
                e["c0"][i])
            assert rel_err(y[i], y_ref) < TOL
            assert rel_err(h_n[i], h_ref) < TOL
    assert calls.calls == [("infer", N * B)]


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_jacrev_equals_the_references_jacobian(cell):
    ours, ref = pair(cell)
    x = torch.randn(3, 2, I, dtype=torch.float64)
    jac = torch.func.jacrev(lambda x: ours(x)[0])(x)
    jac_ref = torch.autograd.functional.jacobian(lambda x: ref(x)[0], x)
    assert rel_err(jac, jac_ref) < TOL


@pytest.mark.filterwarnings("ignore:`torch.jit.script:FutureWarning")
def test_unsupported_transforms_are_clear_errors():
    ours, _ = pair("lstm")
    x = torch.randn(T, B, I, dtype=torch.float64)
    with pytest.raises(RNNCError, match="forward-mode AD"):
        torch.func.jvp(lambda x: ours(x)[0], (x,), (x,))
    with pytest.raises(RNNCError, match="backward is not differentiable"):
        torch.func.grad(lambda x: torch.func.grad(
            lambda x: ours(x)[0].sum())(x).square().sum())(x)
    dropping = rt.LSTM(I, H, L, dropout=0.5).double()
    # In every randomness mode, also under grad, and with the weights
    # mapped rather than the input.
    for randomness in ("error", "same", "different"):
        with pytest.raises(RNNCError, match="dropout does not run under "
                                            "torch.func.vmap"):
            torch.func.vmap(lambda x: dropping(x)[0],
                            randomness=randomness)(
                torch.randn(N, T, B, I, dtype=torch.float64))
    with pytest.raises(RNNCError, match="dropout does not run under "
                                        "torch.func.vmap"):
        torch.func.vmap(torch.func.grad(lambda x: dropping(x)[0].sum()))(
            torch.randn(N, T, B, I, dtype=torch.float64))
    params = {k: torch.stack([v] * N) for k, v in
              dropping.named_parameters()}
    with pytest.raises(RNNCError, match="dropout does not run under "
                                        "torch.func.vmap"):
        torch.func.vmap(lambda p: torch.func.functional_call(
            dropping, p, (x,))[0])(params)
