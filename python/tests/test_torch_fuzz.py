"""rnnc.torch's argument checking fuzzed with Hypothesis, and the findings
of the campaign (tools/fuzz/fuzz-torch.py) as regression tests.

The cases are torch_fuzz_cases.py's and the oracle torch_fuzz_oracle.py's:
every call either runs and matches a float64 reference
(torch_fuzz_reference.py) written from torch.nn.LSTMCell / GRUCell
(and torch.nn.LSTM / GRU where no reset applies; the MGU and the CIFG on
mapped weights), or raises one RNNCError.
The Hypothesis test is derandomized and draws from the "ci" profile, whose
few sizes keep the number of libraries it compiles small.

Needs `rnn-compile` (RNNC_COMPILE or PATH) and PyTorch. Compiled libraries
go to a fresh cache directory per test session (conftest.py).
"""

import json

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import rnnc.torch as rt
import torch_fuzz_cases as F
import torch_fuzz_oracle as O
import torch_fuzz_reference as R
from rnnc.library import RNNCError

from helpers import CELLS


def assert_no_finding(case):
    out = O.run_case(case)
    assert out.status != "finding", (
        f"{out.kind}: {out.message}\ncase: {F.case_json(case)}\n"
        f"{out.trace or ''}")
    return out


# 250 examples take about 20 s with a fresh library cache (some 30 small
# libraries). No shrinking (an example may compile): a failure prints its
# case, which `tools/fuzz/fuzz-torch.py --replay CASE` runs again.
@settings(derandomize=True, max_examples=250, deadline=None, database=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(st.data())
def test_fuzzed_calls_run_and_match_or_raise_rnnc_error(data):
    case = F.build_case(F.HypothesisSource(data), profile="ci")
    assert_no_finding(case)


# --------------------------------------------------------------------------
# The oracle itself
# --------------------------------------------------------------------------

def call_case(cell, ctor, call, *, grad="grad", train=False, seed=0):
    return {"seed": seed, "cell": cell, "ctor": ctor, "convert": None,
            "train": train, "grad": grad, "autocast": None, "call": call}


def resets_case(cell, batch_first=False, form="step"):
    """A valid call with resets and given reset states (T=3, B=2, I=2,
    H=3, L=2), every tensor requiring grad."""
    T, B, I, H, L = 3, 2, 2, 3, 2
    spec = lambda shape: F.tensor_spec(shape, requires_grad=True)
    x = spec([B, T, I] if batch_first else [T, B, I])
    state = [L, B, H]
    if form == "step":
        reset = [L, B, T, H] if batch_first else [L, T, B, H]
    else:
        reset = state
    call = {"input": x,
            "is_init": F.tensor_spec([B, T] if batch_first else [T, B],
                                     "bool", fill=0.5)}
    if cell in F.LSTM_LIKE:
        call["hx"] = {"kind": "tuple", "items": [spec(state), spec(state)]}
        call["reset_state"] = {"kind": "tuple",
                               "items": [spec(reset), spec(reset)]}
    else:
        call["hx"] = spec(state)
        call["reset_state"] = spec(reset)
    return call_case(cell, {"input_size": I, "hidden_size": H,
                            "num_layers": L, "batch_first": batch_first},
                     call)


@pytest.mark.parametrize("cell", F.CELLS)
def test_reference_matches_torch_nn(cell):
    """The float64 reference, step by step with LSTMCell / GRUCell, is
    torch.nn.LSTM's / GRU's without resets; the MGU's and the CIFG's are
    those of helpers.py's MguAsGru and CifgAsLstm, whose row maps are
    written apart from the oracle's."""
    torch.manual_seed(0)
    T, B, I, H, L = 4, 3, 2, 3, 2
    module = F.CLASSES[cell](I, H, L).double()
    ref = CELLS[cell][1](I, H, L).double()
    ref.load_state_dict(module.state_dict())
    x = torch.randn(T, B, I, dtype=torch.float64)
    h0 = torch.randn(L, B, H, dtype=torch.float64)
    c0 = torch.randn(L, B, H, dtype=torch.float64)
    hx = (h0, c0) if cell in F.LSTM_LIKE else h0
    r = R.interpret(cell, module, True, False, x, hx, None, None)
    y, h_n, c_n = R.reference(cell, R.reference_params(cell, module, True),
                              r)
    y_ref, state = ref(x, hx)
    torch.testing.assert_close(y, y_ref, rtol=1e-12, atol=1e-12)
    if cell in F.LSTM_LIKE:
        torch.testing.assert_close(h_n, state[0], rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(c_n, state[1], rtol=1e-12, atol=1e-12)
    else:
        torch.testing.assert_close(h_n, state, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cell", F.CELLS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("form", ["step", "column"])
def test_oracle_accepts_rnnc_with_resets(cell, batch_first, form):
    out = assert_no_finding(resets_case(cell, batch_first, form))
    assert out.status == "ran"
    assert {"values", "resets", "gradients"} <= set(out.checked)


def test_oracle_catches_wrong_results(monkeypatch):
    """A module that ignores is_init, or whose gradients are off, is a
    finding."""
    case = resets_case("gru")
    forward = rt.GRU.forward

    def no_resets(self, input, hx=None, is_init=None, reset_state=None):
        return forward(self, input, hx)

    monkeypatch.setattr(rt.GRU, "forward", no_resets)
    out = O.run_case(case)
    assert (out.status, out.kind) == ("finding", "WRONG"), out

    class Scaled(torch.autograd.Function):
        @staticmethod
        def forward(ctx, y):
            return y.clone()

        @staticmethod
        def backward(ctx, g):
            return g * 1.01

    def scaled(self, *args, **kwargs):
        y, h = forward(self, *args, **kwargs)
        return Scaled.apply(y), h

    monkeypatch.setattr(rt.GRU, "forward", scaled)
    out = O.run_case(case)
    assert (out.status, out.kind) == ("finding", "GRAD"), out


# --------------------------------------------------------------------------
# Findings of the campaign
# --------------------------------------------------------------------------

@pytest.mark.parametrize("device", ["gpu", "", -1])
def test_device_torch_cannot_parse_is_refused(device):
    """A device torch.device() cannot parse is refused by name."""
    with pytest.raises(RNNCError):
        rt.LSTM(3, 4, device=device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs no CUDA")
@pytest.mark.parametrize("device", ["cuda", 0])
def test_cuda_device_without_cuda_is_refused(device):
    """A CUDA device where there is none is refused before allocating."""
    with pytest.raises(RNNCError):
        rt.GRU(3, 4, device=device)


def test_sizes_too_large_to_allocate_are_refused():
    """Parameters larger than the machine (hidden_size 2**40) are refused
    before anything is allocated."""
    with pytest.raises(RNNCError):
        rt.GRU(3, 2 ** 40)


def test_remat_with_a_nul_byte_is_refused():
    """A remat policy is checked when the module is made: one with a NUL
    byte (or anything outside rnn-compile's grammar) never reaches the
    compiler."""
    with pytest.raises(RNNCError, match="unknown remat policy"):
        rt.LSTM(4, 3, remat="gates\x00")
    with pytest.raises(RNNCError, match="K must be a positive integer"):
        rt.LSTM(4, 3, remat=f"chunk:{2 ** 63}")


def test_lstm_hx_without_a_cell_state_is_refused():
    """hx=(h0, None) is refused, as torch.nn.LSTM refuses it."""
    lstm = rt.LSTM(2, 2)
    with pytest.raises(RNNCError):
        lstm(torch.randn(4, 2, 2), (torch.randn(1, 2, 2), None))


@pytest.mark.parametrize("shape", [[], [3]])
def test_is_init_of_another_rank_with_batch_first_is_refused(shape):
    """With batch_first, an is_init of another rank is refused by its
    shape."""
    lstm = rt.LSTM(1, 4, batch_first=True)
    with pytest.raises(RNNCError):
        lstm(torch.randn(2, 3, 1), is_init=torch.zeros(shape,
                                                       dtype=torch.bool))


EMPTY_BATCH_CALLS = {
    "meta input": lambda: rt.LSTM(4, 1)(torch.randn(4, 0, 4, device="meta")),
    "meta h0": lambda: rt.LSTM(4, 1)(
        torch.randn(4, 0, 4),
        (torch.zeros(1, 0, 1, device="meta"), torch.zeros(1, 0, 1))),
    "meta h0 with gradients": lambda: rt.LSTM(1, 1, batch_first=True)(
        torch.randn(0, 4, 1, requires_grad=True),
        [torch.zeros(1, 0, 1, device="meta"), torch.zeros(1, 0, 1)]),
    "meta is_init": lambda: rt.LSTM(4, 1)(
        torch.randn(4, 0, 4),
        is_init=torch.ones(4, 0, dtype=torch.bool, device="meta")),
    "meta reset state": lambda: rt.LSTM(4, 1)(
        torch.randn(4, 0, 4), is_init=torch.ones(4, 0, dtype=torch.bool),
        reset_state=(torch.zeros(1, 4, 0, 1, device="meta"),
                     torch.zeros(1, 4, 0, 1))),
    "meta module": lambda: rt.GRU(4, 1).to("meta")(torch.randn(4, 0, 4)),
    "meta module with gradients": lambda: rt.LSTM(3, 3).to("meta")(
        torch.randn(4, 0, 3),
        (torch.randn(1, 0, 3, requires_grad=True), torch.randn(1, 0, 3))),
}


@pytest.mark.parametrize("call", EMPTY_BATCH_CALLS)
def test_empty_batch_checks_devices(call):
    """A batch of 0 columns is checked for devices as other calls are: a
    meta input, state, is_init, reset state or module is refused."""
    with pytest.raises(RNNCError):
        EMPTY_BATCH_CALLS[call]()


def test_unbatched_lstm_reset_state_of_three_is_refused():
    """An unbatched LSTM's reset_state is a pair: a third state is
    refused, not dropped."""
    lstm = rt.LSTM(2, 2)
    with pytest.raises(RNNCError):
        lstm(torch.randn(3, 2), reset_state=(torch.zeros(1, 2),) * 3)


@pytest.mark.parametrize("size", ["input_size", "hidden_size", "num_layers"])
def test_bool_sizes_are_refused_or_run(size):
    """A bool size (an int to isinstance) is refused when the module is
    made, or runs as torch.nn runs it (True is 1)."""
    ctor = {"input_size": 1, "hidden_size": 2, "num_layers": 1}
    ctor[size] = True
    case = call_case("lstm", ctor, {
        "input": F.tensor_spec([3, 2, 1], requires_grad=True)})
    assert_no_finding(case)


def test_bf16_gradients_are_judged_at_bf16_scale():
    """A tiny GRU (H=1, L=2) trained under CPU bf16 autocast: its
    parameter gradients are off float64 by about 10% of their own size,
    as torch.nn's are, and within the bf16 yardstick (the largest
    gradient's scale)."""
    case = json.loads(
        '{"autocast": "bfloat16", "call": {"input": {"device": "cpu", '
        '"dtype": "float32", "fill": "randn", "kind": "tensor", "layout": '
        '"contiguous", "requires_grad": false, "shape": [2, 3, 4]}, '
        '"is_init": {"device": "cpu", "dtype": "bool", "fill": 0.0, "kind": '
        '"tensor", "layout": "contiguous", "requires_grad": false, "shape": '
        '[2, 3]}}, "cell": "gru", "convert": null, "ctor": {"batch_first": '
        'null, "device": "cpu", "dtype": null, "hidden_size": 1, '
        '"input_size": 4, "num_layers": 2}, "grad": "grad", "repeat": '
        'false, "seed": 562937370, "train": true}')
    out = assert_no_finding(case)
    assert "gradients" in out.checked
