"""rnnc.torch against torch.nn.LSTM / torch.nn.GRU (the external reference;
rnnc.torch.MGU against nn.GRU on its weights mapped by MguAsGru,
rnnc.torch.CIFG against nn.LSTM on its weights mapped by CifgAsLstm).

Needs `rnn-compile` (RNNC_COMPILE or PATH) and PyTorch. Compiled libraries
go to a fresh cache directory per test session (conftest.py).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest
import torch

import rnnc.torch as rt
from rnnc import _cells, _ops
from rnnc.library import RNNCError, compile_model

from helpers import (ALL_CELLS, CELLS, LSTM_LIKE, NN_CELLS, POLICIES,
                     assert_bf16_close, assert_same_bits, dropout_loss_and_grads,
                     dropout_scale, episodes_loss_and_grads, episodes_reference,
                     final, inputs, loss_and_grads, make_pair, next_seed,
                     philox, rel_err, reset_inputs, run_in_threads, state_of)


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("L", [1, 2, 3])
@pytest.mark.parametrize("batch_first", [False, True])
def test_matches_torch_without_resets(cell, L, batch_first):
    T, B, I, H = 7, 3, 5, 6
    ours, ref = make_pair(cell, I, H, L, batch_first=batch_first)
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L, batch_first)
    y, loss, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn)
    y_ref, loss_ref, grads_ref = loss_and_grads(cell, ref, x, h0, c0, gy,
                                                ghn)
    assert y.shape == y_ref.shape
    assert rel_err(y, y_ref) < 1e-5
    for g, g_ref in zip(grads, grads_ref):
        assert g.shape == g_ref.shape
        assert rel_err(g, g_ref) < 1e-5


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("L", [1, 2])
def test_resets_match_episodes(cell, L):
    T, B, I, H = 9, 4, 3, 5
    ours, ref = make_pair(cell, I, H, L)
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    is_init = torch.zeros(T, B, dtype=torch.bool)
    is_init[0, 1] = True              # at t = 0
    is_init[3, 0] = is_init[4, 0] = True  # consecutive
    is_init[5, 2] = True
    is_init[:, 3] = True              # every step
    y, loss, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn, is_init)

    y_ref, loss_ref, grads_ref = episodes_loss_and_grads(
        cell, ref, x, h0, c0, gy, ghn, is_init)
    assert rel_err(y, y_ref) < 1e-5
    assert abs(loss.item() - loss_ref.item()) <= 1e-5 * abs(loss_ref.item())
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g, g_ref) < 1e-5


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_policies_bitwise_equal(cell):
    T, B, I, H, L = 8, 3, 4, 5, 2
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    is_init = torch.rand(T, B, generator=torch.Generator().manual_seed(3)) \
        < 0.2
    results = {}
    for remat in POLICIES:
        ours, _ = make_pair(cell, I, H, L, remat=remat)
        results[remat] = loss_and_grads(cell, ours, x, h0, c0, gy, ghn,
                                        is_init)
    assert_same_bits(results)


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_bf16_storage_against_float64_torch(cell):
    # bf16 saved values and GEMM operands: within 2e-2 of torch.nn in
    # float64 (about five bf16 unit roundoffs, 2^-8), further than f32
    # storage gets (the rounding happens), every policy bitwise equal, and
    # no_grad gives the outputs of the training forward.
    T, B, I, H, L = 8, 3, 4, 5, 2
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    is_init = torch.rand(T, B, generator=torch.Generator().manual_seed(5)) \
        < 0.2
    results = {}
    # The GEMM operands' conversion scratch raises the smallest budget.
    for remat in POLICIES[:-1] + ["budget:14000"]:
        ours, ref = make_pair(cell, I, H, L, remat=remat, storage="bf16")
        results[remat] = loss_and_grads(cell, ours, x, h0, c0, gy, ghn,
                                        is_init)
    assert_same_bits(results)
    ref = ref.double()
    y_ref, _, grads_ref = episodes_loss_and_grads(
        cell, ref, x.double(), h0.double(), c0.double(), gy.double(),
        ghn.double(), is_init)
    y, _, grads = results["none"]
    assert_bf16_close(y, grads, y_ref, grads_ref)
    with torch.no_grad():
        y_infer, _ = ours(x, state_of(cell, h0, c0), is_init=is_init)
    assert torch.equal(y_infer, y)


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_wavefront_same_bits_and_in_the_library(cell):
    # Layers as a wavefront (on the CPU, the lanes in program order): the
    # bits of the same GEMM blocks without it, and torch.nn's results. The
    # manifest shows that the options reached the compiler.
    T, B, I, H, L = 8, 3, 4, 5, 3
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    is_init = torch.rand(T, B, generator=torch.Generator().manual_seed(7)) \
        < 0.2
    results = {}
    for name, wavefront in (("none", False), ("wavefront", True)):
        ours, ref = make_pair(cell, I, H, L)
        ours.gemm_rows, ours.wavefront = 2 * B, wavefront
        results[name] = loss_and_grads(cell, ours, x, h0, c0, gy, ghn,
                                       is_init)
        manifest = ours._library(T, B, x.device, x.dtype, "zero").manifest
        assert (manifest["gemm_rows"], manifest["wavefront"]) == \
            (2 * B, wavefront)
    assert_same_bits(results)
    y_ref, _, grads_ref = episodes_loss_and_grads(cell, ref, x, h0, c0, gy,
                                                  ghn, is_init)
    y, _, grads = results["wavefront"]
    assert rel_err(y, y_ref) < 1e-5
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g, g_ref) < 1e-5
    ours = CELLS[cell][0](I, H, L, gemm_rows=6, wavefront=True)
    assert "gemm_rows=6, wavefront=True" in repr(ours)


def test_gemm_rows_and_wavefront_errors():
    for bad in (-1, "8", True, 2.0):
        with pytest.raises(RNNCError, match="gemm_rows must be an int >= 0"):
            rt.LSTM(3, 4, gemm_rows=bad)
    with pytest.raises(RNNCError, match="wavefront must be True or False"):
        rt.GRU(3, 4, wavefront="yes")
    with pytest.raises(RNNCError, match="gemm_rows must be an int >= 0"):
        compile_model("lstm", 2, 1, 1, 1, 1, gemm_rows=-2)
    with pytest.raises(RNNCError, match="wavefront must be True or False"):
        compile_model("lstm", 2, 1, 1, 1, 1, wavefront=1)


def test_bf16_storage_errors():
    with pytest.raises(RNNCError, match="storage must be None or 'bf16'"):
        rt.LSTM(3, 4, storage="f16")
    with pytest.raises(RNNCError, match="storage must be None or 'bf16'"):
        rt.LSTM(3, 4, storage=torch.float16)
    lstm = rt.LSTM(3, 4, storage="bf16").double()
    x = torch.randn(2, 1, 3, dtype=torch.float64)
    with pytest.raises(RNNCError, match="bf16 storage needs float32"):
        lstm(x)


def poison(t):
    t.fill_(0xFF)  # every float read from it is NaN
    return t


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("remat", ["none", "gates", "chunk:2"])
def test_split_equals_fused_with_poisoned_buffers(cell, remat):
    """f_fwd then f_bwd give the fused training function's bits, with the
    saved region and the scratch arenas filled with NaN patterns before
    each call: the backward reads only what the forward wrote there."""
    T, B, I, H, L = 6, 3, 4, 5, 2
    lib = compile_model(cell, T, B, I, H, L, remat)
    g = torch.Generator().manual_seed(5)

    def tensor_for(arg):
        if arg.dtype == "bool":
            return torch.rand(arg.shape, generator=g) < 0.3
        return torch.randn(arg.shape, generator=g)

    train, fwd, bwd = lib["train"], lib["fwd"], lib["bwd"]
    values = {}
    for arg in train.args:
        key = (arg.name, arg.layer)
        if arg.role in ("input", "parameter", "cotangent"):
            values[key] = tensor_for(arg)
    for entry in (fwd, bwd):
        saved = [a for a in entry.args if a.role == "saved"]
        assert len(saved) == 1
        assert saved[0].shape == (lib.saved_bytes,)
    assert lib.saved_bytes == fwd.saved_bytes == bwd.saved_bytes
    assert lib.saved_bytes >= sum(s["bytes"] for s in fwd.saved_layout)

    def run(entry, buffers):
        ptrs = []
        for arg in entry.args:
            ptrs.append(buffers[(arg.name, arg.layer)].data_ptr())
        entry.call(ptrs)

    def outputs_for(entry, into):
        for arg in entry.args:
            key = (arg.name, arg.layer)
            if arg.role in ("output", "gradient") and key not in into:
                into[key] = poison(torch.empty(arg.nbytes,
                                               dtype=torch.uint8)).view(
                    torch.float32).view(arg.shape)
            if arg.role == "scratch":
                into[key] = poison(torch.empty(arg.nbytes, dtype=torch.uint8))

    fused = dict(values)
    outputs_for(train, fused)
    run(train, fused)

    split = dict(values)
    split[("saved", None)] = poison(torch.empty(lib.saved_bytes,
                                                dtype=torch.uint8))
    outputs_for(fwd, split)
    run(fwd, split)
    outputs_for(bwd, split)
    split[("arena", None)] = poison(torch.empty(bwd.arena_bytes,
                                                dtype=torch.uint8))
    run(bwd, split)

    compared = 0
    for arg in train.args:
        if arg.role in ("output", "gradient"):
            key = (arg.name, arg.layer)
            assert not torch.isnan(fused[key]).any(), key
            assert torch.equal(fused[key], split[key]), key
            compared += 1
    assert compared == len([a for a in train.args
                            if a.role in ("output", "gradient")])


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_no_grad_runs_inference(cell):
    T, B, I, H, L = 5, 2, 3, 4, 2
    ours, ref = make_pair(cell, I, H, L, remat="chunk:2")
    x, h0, c0, _, _ = inputs(T, B, I, H, L)
    y_grad, state_grad = ours(x, state_of(cell, h0, c0))
    with torch.no_grad():
        y, state = ours(x, state_of(cell, h0, c0))
        y_ref, _ = ref(x, state_of(cell, h0, c0))
    assert y.grad_fn is None and not y.requires_grad
    assert y_grad.grad_fn is not None
    assert rel_err(y, y_ref) < 1e-5
    assert torch.equal(y, y_grad)
    assert torch.equal(final(cell, state), final(cell, state_grad))


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_training_loop_matches_torch(cell):
    T, B, I, H, L = 10, 4, 3, 8, 2
    ours, ref = make_pair(cell, I, H, L, remat="chunk:3")
    g = torch.Generator().manual_seed(7)
    x = torch.randn(T, B, I, generator=g)
    target = torch.randn(T, B, H, generator=g)
    is_init = torch.rand(T, B, generator=g) < 0.1
    opt = torch.optim.Adam(ours.parameters(), lr=1e-2)
    opt_ref = torch.optim.Adam(ref.parameters(), lr=1e-2)
    for step in range(20):
        y, _ = ours(x, is_init=is_init)
        loss = ((y - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        y_ref, _, _ = episodes_reference(
            cell, ref, x, is_init, torch.zeros(L, B, H),
            torch.zeros(L, B, H))
        loss_ref = ((y_ref - target) ** 2).mean()
        opt_ref.zero_grad()
        loss_ref.backward()
        opt_ref.step()
        assert abs(loss.item() - loss_ref.item()) <= \
            1e-4 * abs(loss_ref.item()), step


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("remat", ["none", "chunk:2"])
def test_float64_matches_torch_and_finite_differences(cell, remat):
    """In float64 (dtype=torch.float64, or .double() of a float32 module)
    the layer agrees with torch.nn in float64 to 1e-12 with resets, and
    torch.autograd.gradcheck (central finite differences) accepts its
    gradients with respect to x and the initial states."""
    T, B, I, H, L = 5, 3, 4, 3, 2
    ours, ref = make_pair(cell, I, H, L, remat=remat)
    ours, ref = ours.double(), ref.double()
    assert rt.MGU(I, H, dtype=torch.float64).weight_ih_l0.dtype == \
        torch.float64
    x, h0, c0, gy, ghn = (t.double() for t in inputs(T, B, I, H, L))
    x, h0, c0 = (t.detach().requires_grad_() for t in (x, h0, c0))
    is_init = torch.zeros(T, B, dtype=torch.bool)
    is_init[2, 0] = is_init[0, 1] = is_init[3, 1] = True
    y, loss, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn, is_init)
    assert y.dtype == torch.float64
    y_ref, _, grads_ref = episodes_loss_and_grads(
        cell, ref, x, h0, c0, gy, ghn, is_init)
    assert rel_err(y, y_ref) < 1e-12
    for g, g_ref in zip(grads, grads_ref):
        assert g.dtype == torch.float64
        assert rel_err(g, g_ref) < 1e-12

    def outputs(x, *states):
        y, state = ours(x, tuple(states) if cell in LSTM_LIKE else states[0],
                        is_init=is_init)
        return (y, *state) if cell in LSTM_LIKE else (y, state)

    states = (h0, c0) if cell in LSTM_LIKE else (h0,)
    assert torch.autograd.gradcheck(outputs, (x, *states), eps=1e-6,
                                    atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("remat", ["none", "gates", "chunk:2"])
def test_repeated_backward_gives_the_same_bits(cell, remat):
    """The backward computes in place in the saved region; a second
    backward through the same forward (retain_graph=True) runs the forward
    again first and gives the first one's bits."""
    T, B, I, H, L = 6, 3, 4, 5, 2
    ours, _ = make_pair(cell, I, H, L, remat=remat)
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    y, state = ours(x, state_of(cell, h0, c0))
    outs = (y, final(cell, state))
    wrt = [x, h0, *ours.parameters()]
    first = torch.autograd.grad(outs, wrt, (gy, ghn), retain_graph=True)
    second = torch.autograd.grad(outs, wrt, (gy, ghn), retain_graph=True)
    third = torch.autograd.grad(outs, wrt, (gy, ghn))
    for a, b, c in zip(first, second, third):
        assert torch.equal(a, b) and torch.equal(a, c)


def test_calls_from_many_threads_give_the_sequential_bits():
    """One module called from 8 threads at once (each thread has its own
    scratch arena; the runtime's shared state is locked) gives every
    call's sequential outputs and gradients, bit for bit."""
    T, B, I, H, L = 7, 5, 6, 8, 2
    ours, _ = make_pair("lstm", I, H, L, remat="chunk:2")
    resets = torch.Generator().manual_seed(3)
    cases = []
    for seed in range(8):
        x, h0, c0, gy, ghn = inputs(T, B, I, H, L, seed=10 + seed)
        is_init = torch.rand(T, B, generator=resets) < 0.2
        cases.append((x, h0, c0, gy, is_init))

    def run(case):
        x, h0, c0, gy, is_init = case
        y, _ = ours(x, (h0, c0), is_init=is_init)
        grads = torch.autograd.grad(y, [x, h0, c0, *ours.parameters()], gy)
        return [y.detach(), *grads]

    sequential = [run(case) for case in cases]
    for want, got in zip(sequential, run_in_threads(run, cases)):
        assert all(torch.equal(a, b) for a, b in zip(want, got))




@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input_as_torch_takes_it(cell, batch_first):
    """A 2-D input [T, I] with states [L, H], as torch.nn takes it: the
    outputs and gradients of torch.nn's unbatched call; with resets, the
    bits of the same call as a batch of one column."""
    T, I, H, L = 6, 4, 5, 2
    ours, ref = make_pair(cell, I, H, L, batch_first=batch_first)
    x, h0, c0, gy, ghn = inputs(T, 1, I, H, L)
    x, gy = x.detach()[:, 0].requires_grad_(), gy[:, 0]
    h0, c0, ghn = (t.detach()[:, 0].requires_grad_() for t in (h0, c0, ghn))
    y, loss, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn)
    y_ref, _, grads_ref = loss_and_grads(cell, ref, x, h0, c0, gy, ghn)
    assert y.shape == y_ref.shape == (T, H)
    assert rel_err(y, y_ref) < 1e-5
    for g, g_ref in zip(grads, grads_ref):
        assert g.shape == g_ref.shape
        assert rel_err(g, g_ref) < 1e-5

    is_init = torch.zeros(T, dtype=torch.bool)
    is_init[2] = is_init[4] = True
    hr, cr = reset_inputs(cell, T, 1, H, L, "step")
    hr, cr = (None if r is None else r.detach()[:, :, 0].requires_grad_()
              for r in (hr, cr))
    y, _, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn, is_init,
                                 hr, cr)
    col = 0 if batch_first else 1
    as_batch = [x.unsqueeze(col), h0.unsqueeze(1), c0.unsqueeze(1),
                gy.unsqueeze(col), ghn.unsqueeze(1), is_init.unsqueeze(col),
                hr.unsqueeze(col + 1)]
    as_batch.append(None if cr is None else cr.unsqueeze(col + 1))
    y_one, _, grads_one = loss_and_grads(cell, ours, *as_batch)
    assert torch.equal(y, y_one.squeeze(col))
    for g, g_one in zip(grads, grads_one):
        assert torch.equal(g, g_one.reshape(g.shape))
    with pytest.raises(RNNCError, match=r"h0 of an unbatched \(2-D\) input "
                                        r"must be \[L, H\], got shape "
                                        r"\[2, 1, 5\]"):
        ours(x, state_of(cell, h0.unsqueeze(1), c0.unsqueeze(1)))
    with pytest.raises(RNNCError, match=r"is_init of an unbatched \(2-D\) "
                                        r"input must be 1-D \[T\]"):
        ours(x, is_init=is_init.unsqueeze(1))
    with pytest.raises(RNNCError, match=r"h_reset of an unbatched \(2-D\) "
                                        r"input must be \[L, T, H\] \(per "
                                        r"step\) or \[L, H\]"):
        ours(x, is_init=is_init, reset_state=state_of(
            cell, hr.unsqueeze(0), None if cr is None else cr.unsqueeze(0)))


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_without_biases(cell):
    """bias=False: torch.nn's parameters (weights only, loadable from its
    state dict), and the outputs and gradients of torch.nn's own bias=False
    layer."""
    T, B, I, H, L = 6, 3, 4, 5, 2
    ours_cls, ref_cls = CELLS[cell]
    torch.manual_seed(0)
    ref = ref_cls(I, H, L, bias=False)
    ours = ours_cls(I, H, L, bias=False, remat="chunk:2")
    assert [n for n, _ in ours.named_parameters()] == \
        [n for n, _ in ref.named_parameters()]
    ours.load_state_dict(ref.state_dict())
    assert "bias=False" in repr(ours)
    assert [len(layer) for layer in ours.all_weights] == [2] * L
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    y, _, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn)
    y_ref, _, grads_ref = loss_and_grads(cell, ref, x, h0, c0, gy, ghn)
    assert rel_err(y, y_ref) < 1e-5
    assert len(grads) == len(grads_ref)
    for g, g_ref in zip(grads, grads_ref):
        assert g.shape == g_ref.shape
        assert rel_err(g, g_ref) < 1e-5


@pytest.mark.parametrize("cell", NN_CELLS)
def test_module_surface_of_torch_nn(cell):
    """What code written for torch.nn.LSTM/GRU touches besides the call:
    parameter names and shapes in order, all_weights, flatten_parameters."""
    ours, ref = make_pair(cell, 3, 4, 2)
    assert [(n, p.shape) for n, p in ours.named_parameters()] == \
        [(n, p.shape) for n, p in ref.named_parameters()]
    assert [[p.shape for p in layer] for layer in ours.all_weights] == \
        [[p.shape for p in layer] for layer in ref.all_weights]
    assert all(a is b for layer, names in zip(ours.all_weights,
                                              ref._all_weights)
               for a, b in zip(layer, (getattr(ours, n) for n in names)))
    ours.flatten_parameters()
    x = torch.randn(5, 2, 3)
    with torch.no_grad():
        assert rel_err(ours(x)[0], ref(x)[0]) < 1e-5


def test_set_graph_replay_takes_a_count():
    """set_graph_replay takes a count of pointer sets; a CPU library has no
    graphs to replay and says so when asked directly."""
    for bad in (-1, True, 1.5, "4", 2 ** 31):
        with pytest.raises(RNNCError, match="set_graph_replay takes a count "
                                            "of pointer sets"):
            rt.set_graph_replay(bad)
    lstm = rt.LSTM(3, 4)
    x = torch.randn(5, 2, 3)
    with torch.no_grad():
        y_off, _ = lstm(x)
    try:
        rt.set_graph_replay(4)
        with torch.no_grad():
            y_on, _ = lstm(x)
    finally:
        rt.set_graph_replay(0)
    assert torch.equal(y_on, y_off)
    library = lstm._library(5, 2, x.device, torch.float32, "zero")
    with pytest.raises(RNNCError, match="graph replay needs a library for "
                                        "the cuda target; .* is for cpu"):
        library.set_graph_replay(4)


def test_errors_are_one_clear_exception():
    lstm = rt.LSTM(3, 4)
    x = torch.randn(5, 2, 3)
    with pytest.raises(RNNCError, match="float32"):
        lstm(x.double())
    with pytest.raises(RNNCError, match="input_size=3"):
        lstm(torch.randn(5, 2, 4))
    with pytest.raises(RNNCError, match="is_init must have shape"):
        lstm(x, is_init=torch.zeros(2, 5, dtype=torch.bool))
    with pytest.raises(RNNCError, match="is_init must be torch.bool"):
        lstm(x, is_init=torch.zeros(5, 2))
    with pytest.raises(RNNCError, match=r"h0 must have shape \[1, 2, 4\]"):
        lstm(x, (torch.zeros(1, 3, 4), torch.zeros(1, 3, 4)))
    with pytest.raises(RNNCError, match=r"dropout must be a probability in "
                                        r"\[0, 1\), got 1"):
        rt.LSTM(3, 4, 2, dropout=1)
    with pytest.warns(UserWarning, match="num_layers=1"):
        rt.LSTM(3, 4, dropout=0.5)
    with pytest.raises(RNNCError, match="float32 and float64, got torch.float16"):
        rt.GRU(3, 4, dtype=torch.float16)
    with pytest.raises(RNNCError, match="remat"):
        rt.LSTM(3, 4, remat="sometimes")(x)
    with pytest.raises(RNNCError, match="CPU or CUDA devices, got meta"):
        rt.LSTM(3, 4, device="meta")
    with pytest.raises(RNNCError, match="CPU and CUDA tensors, got meta"):
        lstm.to("meta")(torch.randn(5, 2, 3, device="meta"))
    with pytest.raises(RNNCError, match=r"at least one step, got shape "
                                        r"\[0, 2, 3\]"):
        lstm(torch.randn(0, 2, 3))
    with pytest.raises(RNNCError, match=r"or 2-D \[T, I\] \(unbatched\), "
                                        r"got shape \[5\]"):
        lstm(torch.randn(5))
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, [5, 3])
    with pytest.raises(RNNCError, match="does not take a PackedSequence"):
        lstm(packed)
    # The backward is not itself differentiable: a second-order gradient
    # (a gradient penalty) is refused rather than silently missing terms.
    xg = torch.randn(5, 2, 3, requires_grad=True)
    penalized = rt.LSTM(3, 4)
    plain, = torch.autograd.grad(penalized(xg)[0].sum(), xg)
    grad, = torch.autograd.grad(penalized(xg)[0].sum(), xg,
                                create_graph=True)
    assert grad.requires_grad and torch.equal(grad.detach(), plain)
    with pytest.raises(RNNCError, match="backward is not differentiable"):
        grad.square().sum().backward()


def test_state_buffers_are_named_by_the_manifest():
    """The ops name the state buffers by the library's manifest (`states`)
    and refuse a call whose states do not match its cell."""
    x, is_init = torch.randn(5, 2, 3), torch.zeros(5, 2, dtype=torch.bool)
    h0 = torch.randn(1, 2, 4)
    for cls, states in ((rt.CIFG, ["h", "c"]), (rt.MGU, ["h"])):
        module = cls(3, 4)
        key = module._library_key(5, 2, x.device, x.dtype, "zero")
        assert rt._library_of(key).states == tuple(states)
        params = module._flat_params
        given = [h0] if len(states) == 2 else [h0, torch.randn(1, 2, 4)]
        with pytest.raises(RNNCError, match=re.escape(
                f"the library's cell has the states {states}, the call "
                f"gives {len(given)}")):
            _ops._inference_impl(key, x, is_init, given, [], params)


def test_layer_limit_is_rnn_compiles():
    """More layers than rnn-compile compiles is refused when the module is
    made, with rnn-compile's own limit."""
    limit = rt.MAX_LAYERS
    with pytest.raises(RNNCError, match=f"num_layers must be at most {limit}, "
                                        f"got {limit + 1}"):
        rt.GRU(3, 4, num_layers=limit + 1)
    assert rt.LSTM(3, 4, num_layers=limit).num_layers == limit
    compiler = os.environ.get("RNNC_COMPILE") or shutil.which("rnn-compile")
    r = subprocess.run([compiler, "--preset=gru", f"--layers={limit + 1}",
                        "-o", os.devnull], capture_output=True, text=True)
    assert r.returncode == 2
    assert f"--layers must be at most {limit}, got {limit + 1}" in r.stderr


# --------------------------------------------------------------------------
# Resets that enter given states
# --------------------------------------------------------------------------


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("form", ["step", "column"])
@pytest.mark.parametrize("remat", ["none", "chunk:2"])
def test_reset_states_match_episodes(cell, form, remat):
    """Each episode that starts with a reset starts from the given state
    (torch.nn run episode by episode); gradients reach the reset states."""
    T, B, I, H, L = 9, 4, 3, 5, 2
    ours, ref = make_pair(cell, I, H, L, remat=remat)
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    hr, cr = reset_inputs(cell, T, B, H, L, form)
    is_init = torch.zeros(T, B, dtype=torch.bool)
    is_init[0, 1] = True
    is_init[3, 0] = is_init[4, 0] = True
    is_init[6, 2] = True
    is_init[:, 3] = True
    y, loss, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn, is_init,
                                    hr, cr)
    y_ref, _, grads_ref = episodes_loss_and_grads(cell, ref, x, h0, c0, gy,
                                                  ghn, is_init, hr, cr)
    assert rel_err(y, y_ref) < 1e-5
    for g, g_ref in zip(grads, grads_ref):
        assert g.shape == g_ref.shape
        assert rel_err(g, g_ref) < 1e-5
    # The reset states' gradients: nonzero exactly where resets happen.
    for g in grads[-(2 if cell in LSTM_LIKE else 1):]:
        nonzero = g.abs().amax(-1) > 0
        want = is_init if form == "step" else is_init.any(0)
        assert torch.equal(nonzero, want.expand_as(nonzero))


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("form", ["step", "column"])
def test_reset_states_policies_bitwise_and_batch_first(cell, form):
    T, B, I, H, L = 8, 3, 4, 5, 2
    is_init = torch.rand(T, B, generator=torch.Generator().manual_seed(3)) \
        < 0.3
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    hr, cr = reset_inputs(cell, T, B, H, L, form)
    results = {}
    # The reset states' gradients are results too: a larger budget.
    for remat in POLICIES[:-1] + ["budget:12000"]:
        ours, _ = make_pair(cell, I, H, L, remat=remat)
        results[remat] = loss_and_grads(cell, ours, x, h0, c0, gy, ghn,
                                              is_init, hr, cr)
    assert_same_bits(results)

    # Batch-first: the same values transposed give the same bits,
    # transposed (x, y, a per-step reset state and their gradients).
    def leaf(t, *dims):
        t = t.detach()
        return (t.transpose(*dims) if dims else t).contiguous() \
            .requires_grad_()

    step = form == "step"
    bf = (leaf(x, 0, 1), leaf(h0), leaf(c0), gy.transpose(0, 1).contiguous(),
          ghn, is_init.T.contiguous(),
          leaf(hr, 1, 2) if step else leaf(hr),
          None if cr is None else leaf(cr, 1, 2) if step else leaf(cr))
    ours, _ = make_pair(cell, I, H, L, batch_first=True)
    y, _, grads = loss_and_grads(cell, ours, *bf)
    y0, _, grads0 = results["none"]
    assert torch.equal(y.transpose(0, 1), y0)
    assert torch.equal(grads[0].transpose(0, 1), grads0[0])
    for g, g0 in zip(grads[1:], grads0[1:]):
        if step and g.dim() == 4:
            g = g.transpose(1, 2)
        assert torch.equal(g, g0)


def test_reset_states_no_grad_and_errors():
    T, B, I, H, L = 5, 2, 3, 4, 2
    lstm = rt.LSTM(I, H, L)
    x = torch.randn(T, B, I)
    is_init = torch.zeros(T, B, dtype=torch.bool)
    is_init[2, 1] = True
    hr, cr = torch.randn(L, B, H), torch.randn(L, B, H)
    with torch.no_grad():
        y, _ = lstm(x, is_init=is_init, reset_state=(hr, cr))
    y_grad, _ = lstm(x.requires_grad_(), is_init=is_init,
                     reset_state=(hr, cr))
    assert torch.equal(y, y_grad.detach())
    with pytest.raises(RNNCError, match=r"tuple \(h_reset, c_reset\)"):
        lstm(x, is_init=is_init, reset_state=hr)
    with pytest.raises(RNNCError, match=r"h_reset must have shape \[L, T, B, "
                                        r"H\] \[2, 5, 2, 4\]"):
        lstm(x, is_init=is_init, reset_state=(hr[:1], cr))
    with pytest.raises(RNNCError, match="the same form"):
        lstm(x, is_init=is_init,
             reset_state=(hr, torch.randn(L, T, B, H)))
    with pytest.raises(RNNCError, match="c_reset must be float32"):
        lstm(x, is_init=is_init, reset_state=(hr, cr.double()))
    with pytest.raises(RNNCError, match="h_reset must be a tensor"):
        rt.GRU(I, H, L)(x, is_init=is_init, reset_state=[hr])


# --------------------------------------------------------------------------
# Dropout between layers
# --------------------------------------------------------------------------

def test_philox_reproduces_random123():
    assert philox.check_known_answers() == []


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("remat", ["none", "chunk:2"])
def test_dropout_matches_torch_with_the_same_masks(cell, remat):
    """Outputs and every gradient of a 3-layer stack with dropout match
    torch.nn layers chained with the masks of an independent Philox, for
    the seed the call draws from PyTorch's generator."""
    T, B, I, H, L, p = 7, 3, 5, 6, 3, 0.4
    ours, ref = make_pair(cell, I, H, L, remat=remat, dropout=p)
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    seed = next_seed(11)
    drops = [dropout_scale(T, B, H, p, k, seed) for k in range(L - 1)]
    dropped = sum(int((d == 0).sum()) for d in drops)
    assert 0 < dropped < (L - 1) * T * B * H
    torch.manual_seed(11)
    y, loss, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn)
    y_ref, loss_ref, grads_ref = dropout_loss_and_grads(
        cell, ref, x, h0, c0, gy, ghn, drops)
    assert rel_err(y, y_ref) < 1e-5
    assert abs(loss.item() - loss_ref.item()) <= 1e-5 * abs(loss_ref.item())
    assert len(grads) == len(grads_ref)
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g, g_ref) < 1e-5


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_dropout_policies_bitwise_and_modes(cell):
    """With dropout every policy gives the bits of `none` for the same
    seed; another seed gives other masks; training mode drops without
    gradients too (the same bits as with them); eval mode drops nothing."""
    T, B, I, H, L = 8, 3, 4, 5, 2
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    results = {}
    for remat in POLICIES:
        ours, ref = make_pair(cell, I, H, L, remat=remat, dropout=0.3)
        torch.manual_seed(21)
        results[remat] = loss_and_grads(cell, ours, x, h0, c0, gy, ghn)
    assert_same_bits(results)
    y0 = results["none"][0]
    torch.manual_seed(22)
    y_other, _ = ours(x, state_of(cell, h0, c0))
    assert not torch.equal(y_other, y0)
    with torch.no_grad():
        torch.manual_seed(21)
        y_nograd, _ = ours(x, state_of(cell, h0, c0))
        assert torch.equal(y_nograd, y0)
        ours.eval()
        y_eval, _ = ours(x, state_of(cell, h0, c0))
        y_ref, _ = ref(x, state_of(cell, h0, c0))
    assert rel_err(y_eval, y_ref) < 1e-5
    y_eval_grad, _ = ours(x, state_of(cell, h0, c0))
    assert torch.equal(y_eval_grad, y_eval)


def test_compile_cache_reuses_the_library(monkeypatch):
    """A cached library is loaded, not compiled again, by a process that
    has not loaded it. In one that has, the same request is answered
    without looking for the compiler; a changed compiler setting is looked
    up, and with no compiler found the cached library serves."""
    from rnnc import library
    lib = compile_model("gru", 4, 2, 3, 3, 1, "none")
    manifest = os.path.join(lib.directory, "manifest.json")
    stamp = os.stat(manifest).st_mtime_ns
    monkeypatch.setattr(library, "_loaded", type(library._loaded)())
    monkeypatch.setattr(library, "_requested", {})
    monkeypatch.setattr(subprocess, "run", None)
    again = compile_model("gru", 4, 2, 3, 3, 1, "none")
    assert again.directory == lib.directory
    assert os.stat(manifest).st_mtime_ns == stamp
    assert not [n for n in os.listdir(os.path.dirname(lib.directory))
                if ".tmp-" in n or ".old-" in n]

    def no_lookup():
        raise AssertionError("the compiler was looked up")

    find_compiler = library.find_compiler
    monkeypatch.setattr(library, "find_compiler", no_lookup)
    assert compile_model("gru", 4, 2, 3, 3, 1, "none") is again
    monkeypatch.setenv("RNNC_COMPILE", "/nonexistent/rnn-compile")
    with pytest.raises(AssertionError, match="looked up"):
        compile_model("gru", 4, 2, 3, 3, 1, "none")
    monkeypatch.setattr(library, "find_compiler", find_compiler)
    assert compile_model("gru", 4, 2, 3, 3, 1, "none").directory == \
        lib.directory


def test_gemm_threads_follow_torch():
    """The library's OpenBLAS runs on torch.get_num_threads() threads (an
    actor process with torch.set_num_threads(1) does not get one BLAS
    thread per core), and its results do not depend on the count."""
    lstm = rt.LSTM(3, 4)
    x = torch.randn(5, 2, 3)
    library = compile_model("lstm", 5, 2, 3, 4, 1, "none")
    before = torch.get_num_threads()
    try:
        outputs = []
        for count in (1, 2, 1):
            torch.set_num_threads(count)
            with torch.no_grad():
                outputs.append(lstm(x)[0])
            assert library.blas_threads() == count
    finally:
        torch.set_num_threads(before)
    assert torch.equal(outputs[0], outputs[1])


def test_damaged_cache_entry_is_named(monkeypatch, tmp_path):
    """A cache entry damaged outside rnnc (the compile itself publishes
    atomically) is compiled again; without a compiler to do it, it is an
    error naming the entry and how to remove it."""
    from rnnc import library
    lib = compile_model("mgu", 3, 2, 3, 3, 1, "none")
    monkeypatch.setattr(library, "_loaded", type(library._loaded)())
    monkeypatch.setattr(library, "_requested", {})
    # No per-user temporary cache holds another copy.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    manifest = os.path.join(lib.directory, "manifest.json")
    with open(manifest, "w") as f:
        f.write("{")
    with monkeypatch.context() as m:
        m.setenv("RNNC_COMPILE", "/nonexistent/rnn-compile")
        with pytest.raises(RNNCError, match=(
                r"the cache entry " + re.escape(lib.directory) +
                r" is damaged \(cannot read .*manifest.json.*\) and cannot "
                r"be compiled again here: rnn-compile not found.*; remove "
                r"it \(rm -r " + re.escape(lib.directory))):
            compile_model("mgu", 3, 2, 3, 3, 1, "none")
    # With the compiler, it is compiled again in place.
    again = compile_model("mgu", 3, 2, 3, 3, 1, "none")
    assert again.directory == lib.directory
    assert again.saved_bytes == lib.saved_bytes
    assert library._inspect(lib.directory) is None
    assert not [n for n in os.listdir(os.path.dirname(lib.directory))
                if ".tmp-" in n or ".old-" in n]


def test_readme_example_trains():
    """The README's training example runs as written and its last step
    computed a finite loss and non-zero gradients."""
    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    with open(readme) as f:
        text = f.read()
    start = text.index("```python\nimport torch, rnnc.torch")
    code = text[start + len("```python\n"):text.index("```\n", start + 10)]
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    lstm = namespace["lstm"]
    assert namespace["step"] == 9
    assert torch.isfinite(namespace["loss"]).item()
    assert lstm.weight_hh_l1.grad is not None
    assert lstm.weight_hh_l1.grad.abs().sum() > 0


def test_import_names_the_torch_it_needs():
    """rnnc.torch under a PyTorch older than the one it needs is one
    ImportError naming both versions, not a failing import of a PyTorch
    module further down."""
    code = ("import torch\n"
            "torch.__version__ = '2.3.1'\n"
            "try:\n"
            "    import rnnc.torch\n"
            "except ImportError as e:\n"
            "    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == ("ImportError rnnc.torch needs torch>=2.4, "
                                  "this is torch 2.3.1"), out.stderr


def test_storage_as_torch_dtypes():
    """storage=torch.bfloat16 is storage="bf16" and torch.float32 the
    default: the same module and the same bits."""
    T, B, I, H, L = 5, 3, 4, 6, 2
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    results = {}
    for storage in ("bf16", torch.bfloat16, None, torch.float32):
        ours, _ = make_pair("lstm", I, H, L, storage=storage)
        results[str(storage)] = loss_and_grads("lstm", ours, x, h0, c0, gy,
                                               ghn)
        assert ours.storage == ("bf16" if storage in ("bf16", torch.bfloat16)
                                else None)
    for a, b in (("bf16", "torch.bfloat16"), ("None", "torch.float32")):
        (ya, _, ga), (yb, _, gb) = results[a], results[b]
        assert torch.equal(ya, yb)
        assert all(torch.equal(p, q) for p, q in zip(ga, gb))
    # bf16 storage rounds: not the float32 bits.
    assert not torch.equal(results["bf16"][0], results["None"][0])


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_module_class_of_a_cell(cell):
    """The class rnnc.torch makes for a cell of the table that has none
    (_module_class) is the cell's module: its gates, states and
    torch.nn interface from the table, and the bits of the class written
    for it."""
    made = rt._module_class(_cells.BY_NAME[cell])
    written = getattr(rt, cell.upper())
    assert made.__name__ == written.__name__
    assert (made._gates, made._states, made._interface) == \
        (written._gates, written._states, written._interface)
    T, B, I, H, L = 4, 2, 3, 5, 2
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    ours, _ = make_pair(cell, I, H, L)
    twin = made(I, H, L)
    twin.load_state_dict(ours.state_dict())
    want = loss_and_grads(cell, ours, x, h0, c0, gy, ghn)
    got = loss_and_grads(cell, twin, x, h0, c0, gy, ghn)
    assert torch.equal(got[0], want[0])
    assert all(torch.equal(a, b) for a, b in zip(got[2], want[2]))


def test_argument_errors_are_value_and_type_errors():
    """A bad argument is the ValueError or TypeError PyTorch raises for
    one (and an RNNCError): a wrong type, an unknown policy, a bad shape."""
    with pytest.raises(TypeError, match="remat must be a string"):
        rt.LSTM(3, 4, remat=4)
    with pytest.raises(ValueError, match="unknown remat policy"):
        rt.GRU(3, 4, remat="all")
    with pytest.raises(ValueError, match="dropout must be a probability"):
        rt.LSTM(3, 4, 2, dropout=1.5)
    lstm = rt.LSTM(3, 4)
    with pytest.raises(ValueError, match="input has 5 features"):
        lstm(torch.randn(2, 1, 5))
    with pytest.raises(TypeError, match="is_init must be a bool tensor"):
        lstm(torch.randn(2, 1, 3), is_init=[[True], [False]])
    with pytest.raises(RNNCError):
        lstm(torch.randn(2, 1, 3), is_init=torch.zeros(3, 1, dtype=torch.bool))


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_functional_call_takes_the_given_parameters(cell):
    """torch.func.functional_call runs the module on a parameter dict (as
    ensembles and meta-learning do): the reference's outputs on the same
    dict, and the gradients go to the dict's tensors."""
    ours, ref = make_pair(cell, 3, 4, 2)
    x, h0, c0, gy, ghn = inputs(5, 2, 3, 4, 2)
    params = {name: torch.randn_like(p, requires_grad=True)
              for name, p in ours.named_parameters()}
    hx = state_of(cell, h0, c0)
    y, _ = torch.func.functional_call(ours, params, (x, hx))
    y_ref, _ = torch.func.functional_call(ref, params, (x, hx))
    assert rel_err(y, y_ref) < 1e-5
    grads = torch.autograd.grad((y * gy).sum(), list(params.values()))
    grads_ref = torch.autograd.grad((y_ref * gy).sum(),
                                    list(params.values()))
    for name, g, g_ref in zip(params, grads, grads_ref):
        assert rel_err(g, g_ref) < 1e-5, name
