"""Dtypes and layouts as torch.nn.LSTM/GRU take them: torch.autocast,
narrow-precision modules, non-contiguous inputs and states, and a batch of
no columns."""

import pytest
import torch

import rnnc.torch as rt
from rnnc.library import RNNCError

from helpers import (ALL_CELLS, LSTM_LIKE, assert_bf16_close,
                     episodes_loss_and_grads, inputs, loss_and_grads,
                     make_pair, rel_err, state_of)


def results(cell, out):
    """The output and final states of a module's call, flat."""
    y, state = out
    return [y, *state] if cell in LSTM_LIKE else [y, state]


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("given", [torch.float32, torch.bfloat16])
def test_autocast_bf16_returns_what_torch_nn_returns(cell, given):
    # Under CPU bf16 autocast the module runs with bf16 storage and f32
    # accumulation. Its results have the dtypes of the torch.nn module
    # whose interface it has (bf16 for an LSTM's; a GRU's follow its h0,
    # else its input, as CPU autocast leaves torch.nn.GRU's call alone and
    # casts only its GEMMs) and, as bf16 storage does, lie within 2e-2 of
    # torch.nn in float64 (about five bf16 unit roundoffs, 2^-8) in
    # outputs and every gradient, further than f32 gets (the rounding
    # happens).
    T, B, I, H, L = 8, 3, 4, 5, 2
    ours, ref = make_pair(cell, I, H, L)
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    is_init = torch.rand(T, B, generator=torch.Generator().manual_seed(5)) \
        < 0.2
    nn_cls = torch.nn.LSTM if cell in LSTM_LIKE else torch.nn.GRU
    with torch.autocast("cpu", dtype=torch.bfloat16):
        # torch.nn's LSTM autocasts through oneDNN (mkldnn_rnn_layer),
        # which cannot build a bf16 LSTM on every CPU (on AVX2 alone it
        # raises). Where it can, its results are bf16: the op is on CPU
        # autocast's lower-precision list whatever the CPU, so that is
        # what it returns on any CPU that runs it.
        try:
            want = [t.dtype for t in results(cell, nn_cls(I, H, L)(
                x.detach().to(given)))]
        except RuntimeError as e:
            if "primitive descriptor" not in str(e) or \
                    cell not in LSTM_LIKE:
                raise
            want = [torch.bfloat16] * 3
        got = [t.dtype for t in results(cell, ours(x.detach().to(given)))]
        xg = x.detach().to(given).requires_grad_()
        y, _, grads = loss_and_grads(cell, ours, xg, h0, c0, gy, ghn,
                                     is_init)
    assert got == want
    # With h0 (float32) a GRU's results have h0's dtype, as torch.nn.GRU's
    # (test_autocast_gru_results_have_torch_nns_dtypes_for_each_h0).
    assert y.dtype == (got[0] if cell in LSTM_LIKE else torch.float32)
    assert grads[0].dtype == given
    y_ref, _, grads_ref = episodes_loss_and_grads(
        cell, ref.double(), x.double(), h0.double(), c0.double(),
        gy.double(), ghn.double(), is_init)
    assert_bf16_close(y, grads, y_ref, grads_ref)
    # Outside autocast the same module computes in float32 again.
    y32, _, _ = loss_and_grads(cell, ours, x, h0, c0, gy, ghn, is_init)
    assert y32.dtype == torch.float32 and rel_err(y32.double(), y_ref) < 1e-5


@pytest.mark.parametrize("cell", [c for c in ALL_CELLS
                                  if c not in LSTM_LIKE])
def test_autocast_gru_results_have_torch_nns_dtypes_for_each_h0(cell):
    # CPU autocast casts torch.nn.GRU's GEMMs only, whose bf16 results
    # meet the hidden state: its results have h0's dtype (the input's
    # without h0) promoted with bf16. A module of its interface returns
    # the same dtypes for every input and h0 dtype autocast takes.
    T, B, I, H, L = 5, 2, 3, 4, 2
    ours, _ = make_pair(cell, I, H, L)
    nn_gru = torch.nn.GRU(I, H, L)
    floats = (torch.float32, torch.bfloat16, torch.float16)
    for given in floats:
        for h0_dtype in (None, *floats):
            x = torch.randn(T, B, I).to(given)
            h0 = None if h0_dtype is None else \
                torch.randn(L, B, H).to(h0_dtype)
            with torch.autocast("cpu", dtype=torch.bfloat16), \
                    torch.no_grad():
                want = [t.dtype for t in results(cell, nn_gru(x, h0))]
                got = [t.dtype for t in results(cell, ours(x, h0))]
                got_unbatched = [t.dtype for t in results(cell, ours(
                    x[:, 0], None if h0 is None else h0[:, 0]))]
            assert got == got_unbatched == want, (given, h0_dtype)


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_autocast_fp16_computes_in_float32(cell):
    # rnnc has no fp16 storage: under fp16 autocast it computes in float32
    # (what a float32 call gives, bit for bit) and returns what the
    # torch.nn module of its interface returns: float16 for an LSTM's, a
    # float32 input's dtype for a GRU's on the CPU.
    T, B, I, H, L = 6, 2, 3, 4, 1
    ours, _ = make_pair(cell, I, H, L)
    x = torch.randn(T, B, I)
    with torch.no_grad():
        plain = results(cell, ours(x))
        with torch.autocast("cpu", dtype=torch.float16):
            cast = results(cell, ours(x))
    want = torch.float16 if cell in LSTM_LIKE else torch.float32
    assert all(t.dtype == want for t in cast)
    assert all(torch.equal(a, b.to(want)) for a, b in zip(cast, plain))


def test_narrow_modules_are_refused_with_what_to_use():
    x = torch.randn(3, 2, 4)
    for narrow, how in ((rt.LSTM(4, 5).bfloat16(), r"\.bfloat16\(\)"),
                        (rt.GRU(4, 5).half(), r"\.half\(\)")):
        with pytest.raises(RNNCError, match=how + r"\): .*keep the module "
                                            r"float32 and call it under "
                                            r"torch.autocast, or pass "
                                            r"storage='bf16'"):
            narrow(x.to(narrow.weight_ih_l0.dtype))
    with pytest.raises(RNNCError, match="under torch.autocast"):
        rt.LSTM(4, 5, dtype=torch.bfloat16)
    with pytest.raises(RNNCError, match="input must be float32"):
        rt.LSTM(4, 5)(x.bfloat16())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with pytest.raises(RNNCError, match="autocast needs a float32 "
                                            "module, this one is "
                                            "torch.float64"):
            rt.LSTM(4, 5).double()(x.double())


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_non_contiguous_inputs_and_states_are_copied(cell, batch_first):
    # A transposed replay batch, a strided slice of features and
    # transposed states give what their contiguous copies give, bit for
    # bit, and their gradients reach the original tensors.
    T, B, I, H, L = 5, 3, 4, 6, 2
    ours, _ = make_pair(cell, I, H, L, batch_first=batch_first)
    g = torch.Generator().manual_seed(3)
    wide = torch.randn(B, T, 2 * I, generator=g) if not batch_first else \
        torch.randn(T, B, 2 * I, generator=g)
    x = wide[..., ::2].transpose(0, 1).requires_grad_()
    assert not x.is_contiguous()
    h0 = torch.randn(B, L, H, generator=g).transpose(0, 1).requires_grad_()
    c0 = torch.randn(B, L, H, generator=g).transpose(0, 1).requires_grad_()
    # is_init in the input's order, as the transpose of a contiguous one.
    is_init = torch.rand(T, B, generator=g) < 0.3
    is_init = is_init.T if batch_first else \
        is_init.T.contiguous().T
    assert not is_init.is_contiguous()
    y, loss, grads = loss_and_grads(cell, ours, x, h0, c0, torch.ones(1),
                                    torch.ones(1), is_init)
    dense = [t.detach().contiguous().requires_grad_() for t in (x, h0, c0)]
    y_d, loss_d, grads_d = loss_and_grads(cell, ours, *dense, torch.ones(1),
                                          torch.ones(1),
                                          is_init.contiguous())
    assert torch.equal(y, y_d) and torch.equal(loss, loss_d)
    assert all(torch.equal(a, b) for a, b in zip(grads, grads_d))


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_negative_views_give_their_values(cell):
    # A negative view holds its values' negations in memory (the
    # imaginary part of a conjugate is one): contiguous ones, as input,
    # states, reset states and parameters, give what their values give,
    # gradients included, not what their memory holds.
    T, B, I, H, L = 1, 1, 1, 1, 1
    ours, _ = make_pair(cell, I, H, L)
    twin, _ = make_pair(cell, I, H, L)
    g = torch.Generator().manual_seed(5)
    x, h0, c0, hr, cr = (torch.randn(s, generator=g) for s in
                         [(T, B, I)] + [(L, B, H)] * 4)
    # The public way to a contiguous negative view: a single element's
    # conjugate's imaginary part.
    x_neg = torch.complex(torch.zeros_like(x), -x).conj().imag
    assert x_neg.is_neg() and x_neg.is_contiguous()
    assert torch.equal(x_neg, x)
    for name, p in ours.named_parameters():
        # torch._neg_view: a negative view of any shape.
        view = torch._neg_view(-p.detach())
        assert view.is_neg() and view.is_contiguous()
        setattr(ours, name, torch.nn.Parameter(view))
    negs = [torch._neg_view(-t).requires_grad_() for t in (h0, c0, hr, cr)]
    plain = [t.clone().requires_grad_() for t in (h0, c0, hr, cr)]
    is_init = torch.ones(T, B, dtype=torch.bool)
    out = []
    for module, xx, (h, c, r, rc) in ((ours, x_neg, negs),
                                      (twin, x, plain)):
        y, state = module(xx, state_of(cell, h, c), is_init=is_init,
                          reset_state=state_of(cell, r, rc))
        y0, state0 = module(xx, state_of(cell, h, c))
        flat = results(cell, (y, state)) + results(cell, (y0, state0))
        loss = sum((t * (k + 1)).sum() for k, t in enumerate(flat))
        wrt = [h, r] + ([c, rc] if cell in LSTM_LIKE else []) + \
            list(module.parameters())
        out.append((flat, torch.autograd.grad(loss, wrt)))
    (got, got_grads), (want, want_grads) = out
    assert all(torch.equal(a, b) for a, b in zip(got, want))
    assert all(torch.equal(a, b) for a, b in zip(got_grads, want_grads))


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_empty_batch_returns_empty_outputs(cell, batch_first):
    # As torch.nn: outputs [T, 0, H] ([0, T, H] batch_first) and states
    # [L, 0, H]; a loss over them gives zero gradients.
    T, I, H, L = 4, 3, 5, 2
    ours, ref = make_pair(cell, I, H, L, batch_first=batch_first)
    shape = (0, T, I) if batch_first else (T, 0, I)
    x = torch.randn(shape, requires_grad=True)
    got, want = results(cell, ours(x)), results(cell, ref(x))
    assert [t.shape for t in got] == [t.shape for t in want]
    sum(t.sum() for t in got).backward()
    assert x.grad.shape == x.shape
    assert all(torch.equal(p.grad, torch.zeros_like(p))
               for p in ours.parameters())
    with torch.no_grad():
        quiet = results(cell, ours(x, state_of(cell, torch.zeros(L, 0, H),
                                               torch.zeros(L, 0, H))))
    assert [t.shape for t in quiet] == [t.shape for t in want]
    with pytest.raises(RNNCError, match="at least one step"):
        ours(torch.randn((4, 0, I) if batch_first else (0, 4, I)))


def test_autocast_inside_a_compiled_policy():
    # torch.compile(fullgraph=True) of a policy that calls the module
    # under autocast: no graph break, eager's bits and dtypes.
    lstm = rt.LSTM(4, 8, 2)
    head = torch.nn.Linear(8, 2)

    def policy(x, dones):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y, _ = lstm(x, is_init=dones)
            return head(y)

    x = torch.randn(6, 3, 4)
    dones = torch.rand(6, 3, generator=torch.Generator().manual_seed(2)) \
        < 0.2
    eager = policy(x, dones)
    compiled = torch.compile(policy, fullgraph=True)(x, dones)
    assert compiled.dtype == eager.dtype == torch.bfloat16
    assert torch.equal(compiled, eager)
