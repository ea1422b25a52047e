"""rnnc.torch's results against torch.nn.LSTM / torch.nn.GRU (the external
reference; rnnc.torch.MGU against nn.GRU on its weights mapped by MguAsGru,
rnnc.torch.CIFG against nn.LSTM on its weights mapped by CifgAsLstm):
outputs and gradients with and without resets, with reset states, with
dropout, in float64 and with bf16 storage, unbatched and without biases;
and the bits that remat policies, the wavefront, the split training
functions, repeated backwards and concurrent calls keep. The modules'
argument errors, surface and libraries: test_torch_interface.py.

Needs `rnn-compile` (RNNC_COMPILE or PATH) and PyTorch. Compiled libraries
go to a fresh cache directory per test session (conftest.py).
"""

import pytest
import torch

import rnnc.torch as rt
from rnnc.library import ENTRY_KINDS, RNNCError, compile_model

from helpers import (ALL_CELLS, CELLS, LSTM_LIKE, POLICIES, assert_bf16_close,
                     assert_same_bits, dropout_loss_and_grads, dropout_scale,
                     episodes_loss_and_grads, episodes_reference, final,
                     inputs, loss_and_grads, make_pair, next_seed, philox,
                     rel_err, reset_inputs, run_in_threads, state_of)


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
    lib = compile_model(cell, T, B, I, H, L, remat, entries=ENTRY_KINDS)
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
    with pytest.raises(ValueError, match="give is_init with it"):
        lstm(x, reset_state=(hr, cr))


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
