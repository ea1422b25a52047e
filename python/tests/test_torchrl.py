"""rnnc.torchrl.LSTMModule / GRUModule against TorchRL's own modules
(torchrl.modules.LSTMModule / GRUModule, the reference), holding the same
weights: outputs, ("next", ...) states and every gradient in recurrent
mode (TorchRL's pad and scan backends) and sequential mode, a collector
rollout feeding ClipPPOLoss, state dicts both ways, and the arguments
refused with an RNNCError.

Needs `rnn-compile` (RNNC_COMPILE or PATH), PyTorch, tensordict and torchrl;
the collector test needs gymnasium.
"""

import math

import re

import pytest
import torch

pytest.importorskip("torchrl")

from tensordict import TensorDict  # noqa: E402
from torchrl.modules import GRUModule as RefGRU  # noqa: E402
from torchrl.modules import LSTMModule as RefLSTM  # noqa: E402
from torchrl.modules import set_recurrent_mode  # noqa: E402

import rnnc  # noqa: E402
import rnnc.torch as rt  # noqa: E402
import rnnc.torchrl as rr  # noqa: E402
from rnnc.library import RNNCError  # noqa: E402

from helpers import NN_CELLS  # noqa: E402

B, T, I, H = 6, 9, 3, 5
TOL = {torch.float32: 1e-5, torch.float64: 1e-12}
# rnnc.torchrl's module and TorchRL's for each cell torch.nn has (TorchRL's
# modules run torch.nn's LSTM and GRU).
CLASSES = {"lstm": (rr.LSTMModule, RefLSTM), "gru": (rr.GRUModule, RefGRU)}


@pytest.fixture(autouse=True, scope="module")
def dynamo_config():
    """TorchRL's scan backend (hoptorch) sets dynamo's
    capture_scalar_outputs for the process: put it back for later
    modules."""
    saved = torch._dynamo.config.capture_scalar_outputs
    yield
    torch._dynamo.config.capture_scalar_outputs = saved


def rel_err(a, b):
    """max |a - b| relative to max |b| (exactly 0 when b is all zero and
    a equals it)."""
    diff = (a - b).abs().max().item()
    scale = b.abs().max().item()
    return diff / scale if scale else diff


def make_pair(cell, L, dtype, backend="pad", seed=0, **kwargs):
    """rnnc's module and TorchRL's, holding the same weights (TorchRL's
    initialization, loaded into rnnc's)."""
    ours_cls, ref_cls = CLASSES[cell]
    torch.manual_seed(seed)
    ref = ref_cls(I, H, L, in_key="x", out_key="y",
                  recurrent_backend=backend, **kwargs)
    ours = ours_cls(I, H, L, in_key="x", out_key="y", **kwargs)
    ours.load_state_dict(ref.state_dict())
    if dtype == torch.float64:
        ref.double()
        ours.double()
    return ours, ref


def state_keys(module):
    return module.in_keys[1:-1]


def make_data(module, batch, is_init, dtype, seed=1, states=True):
    """A tensordict of shape `batch` (time last) with input, stored states
    (the gradient leaves) and `is_init` ([*batch, 1])."""
    g = torch.Generator().manual_seed(seed)
    L = module.lstm.num_layers if hasattr(module, "lstm") else \
        module.gru.num_layers
    fields = {"x": torch.randn(*batch, I, generator=g, dtype=dtype),
              "is_init": is_init.reshape(*batch, 1)}
    if states:
        for key in state_keys(module):
            fields[key] = torch.randn(*batch, L, H, generator=g, dtype=dtype)
    data = TensorDict(fields, batch)
    for key in ["x"] + (state_keys(module) if states else []):
        data[key].requires_grad_(True)
    return data


def run(module, data, recurrent, seed=2):
    """The module's outputs (value, next states) on a shallow copy of
    `data`, and the gradients of sum(w * output) (fixed random w) with
    respect to its parameters ({name: gradient}) and to the input and the
    stored states of `data` (a list)."""
    with set_recurrent_mode(recurrent):
        out = module(data.clone(False))
    outs = [out["y"]] + [out[key] for key in module.out_keys[1:]]
    g = torch.Generator().manual_seed(seed)
    loss = sum((o * torch.randn(o.shape, generator=g, dtype=o.dtype)).sum()
               for o in outs)
    names = [n for n, _ in module.named_parameters()]
    leaves = [data[k] for k in ["x"] + state_keys(module)
              if k in data.keys()]
    grads = torch.autograd.grad(loss, list(module.parameters()) + leaves)
    return outs, dict(zip(names, grads)), list(grads[len(names):])


def compare(ours, ref, data, recurrent):
    """Runs both on `data` with the same loss; asserts every output and
    gradient within the dtype's tolerance; returns the worst errors."""
    tol = TOL[data["x"].dtype]
    outs, grads, leaves = run(ours, data, recurrent)
    outs_ref, grads_ref, leaves_ref = run(ref, data, recurrent)
    worst = {"out": 0.0, "next": 0.0, "grad": 0.0}
    for k, (a, b) in enumerate(zip(outs, outs_ref)):
        assert a.shape == b.shape
        err = rel_err(a, b)
        kind = "out" if k == 0 else "next"
        worst[kind] = max(worst[kind], err)
        assert err < tol, (kind, k, err)
    assert grads.keys() == grads_ref.keys()
    pairs = [(name, grads[name], grads_ref[name]) for name in grads]
    pairs += [(f"leaf {k}", a, b)
              for k, (a, b) in enumerate(zip(leaves, leaves_ref))]
    assert len(leaves) == len(leaves_ref)
    for name, a, b in pairs:
        assert a.shape == b.shape
        err = rel_err(a, b)
        worst["grad"] = max(worst["grad"], err)
        assert err < tol, (name, err)
    return worst


def pattern(name):
    """is_init [B, T] for a reset pattern; "mixed" has one per column."""
    is_init = torch.zeros(B, T, dtype=torch.bool)
    if name == "t0":
        is_init[:, 0] = True
    elif name == "consecutive":
        is_init[0, 2:5] = True
        is_init[1, 0:2] = True
        is_init[2, T - 2:] = True
        is_init[3, [0, 4, 5, 6]] = True
        is_init[4, [1, 2, 7, 8]] = True
    elif name == "every":
        is_init[:] = True
    elif name == "random":
        g = torch.Generator().manual_seed(3)
        is_init = torch.rand(B, T, generator=g) < 0.3
    elif name == "mixed":
        for b, each in enumerate(["t0", "consecutive", "every", "none",
                                  "random", "random"]):
            is_init[b] = pattern(each)[b]
    else:
        assert name == "none"
    return is_init


PATTERNS = ["t0", "consecutive", "every", "none", "random", "mixed"]
DTYPES = pytest.mark.parametrize("dtype", [torch.float32, torch.float64],
                                 ids=["f32", "f64"])


# --------------------------------------------------------------------------
# Recurrent mode
# --------------------------------------------------------------------------

@DTYPES
@pytest.mark.parametrize("L", [1, 2])
@pytest.mark.parametrize("cell", NN_CELLS)
@pytest.mark.parametrize("resets", PATTERNS)
def test_recurrent_matches_torchrl_pad(resets, cell, L, dtype):
    """Against TorchRL's default backend, which splits the columns into
    trajectories and pads them."""
    ours, ref = make_pair(cell, L, dtype, "pad")
    data = make_data(ours, (B, T), pattern(resets), dtype)
    compare(ours, ref, data, recurrent=True)


@DTYPES
@pytest.mark.parametrize("L", [1, 2])
@pytest.mark.parametrize("cell", NN_CELLS)
def test_recurrent_matches_torchrl_scan(cell, L, dtype):
    """Against TorchRL's scan backend (torch's scan operator through
    hoptorch, run eagerly), on a batch with every reset pattern, one per
    column (each scan call is traced anew: seconds)."""
    ours, ref = make_pair(cell, L, dtype, "scan")
    data = make_data(ours, (B, T), pattern("mixed"), dtype)
    compare(ours, ref, data, recurrent=True)


@pytest.mark.parametrize("cell", NN_CELLS)
@pytest.mark.parametrize("batch", [(T,), (2, 3, T)], ids=["1d", "3d"])
def test_recurrent_batch_shapes(cell, batch):
    """A tensordict without a batch dimension ([T]) or with several
    ([2, 3, T]: flattened into columns)."""
    ours, ref = make_pair(cell, 2, torch.float64)
    g = torch.Generator().manual_seed(4)
    is_init = torch.rand(*batch, generator=g) < 0.3
    data = make_data(ours, batch, is_init, torch.float64)
    compare(ours, ref, data, recurrent=True)


@pytest.mark.parametrize("recurrent", [True, False],
                         ids=["recurrent", "sequential"])
@pytest.mark.parametrize("cell", NN_CELLS)
def test_is_init_without_its_trailing_one(cell, recurrent):
    """is_init of the tensordict's batch shape, without TorchRL's trailing
    1, gives what [*batch, 1] gives, as in TorchRL; so does a uint8 mask
    (nonzero starts a trajectory), which TorchRL's sequential mode takes."""
    ours, ref = make_pair(cell, 2, torch.float64)
    data = make_data(ours, (B, T), pattern("mixed"), torch.float64)
    flat = data.clone(False)
    flat["is_init"] = data["is_init"].reshape(B, T)
    worst = compare(ours, ref, flat, recurrent)
    assert worst == compare(ours, ref, data, recurrent)
    if not recurrent:
        as_bytes = data.clone(False)
        as_bytes["is_init"] = data["is_init"].to(torch.uint8)
        assert worst == compare(ours, ref, as_bytes, recurrent)


@pytest.mark.parametrize("cell", NN_CELLS)
def test_recurrent_without_stored_states(cell):
    """No recurrent states in the tensordict: both start from zeros."""
    ours, ref = make_pair(cell, 2, torch.float64)
    data = make_data(ours, (B, T), pattern("mixed"), torch.float64,
                     states=False)
    compare(ours, ref, data, recurrent=True)


@pytest.mark.parametrize("cell", NN_CELLS)
def test_default_recurrent_mode(cell):
    """default_recurrent_mode=True without the context manager; the
    context manager still overrides it."""
    ours, ref = make_pair(cell, 1, torch.float64,
                          default_recurrent_mode=True)
    assert ours.recurrent_mode and ref.recurrent_mode
    data = make_data(ours, (B, T), pattern("mixed"), torch.float64)
    with torch.no_grad():
        out, out_ref = ours(data.clone(False)), ref(data.clone(False))
    assert rel_err(out["y"], out_ref["y"]) < 1e-12
    for key in ours.out_keys[1:]:
        assert rel_err(out[key], out_ref[key]) < 1e-12
    with set_recurrent_mode(False):
        assert not ours.recurrent_mode and not ref.recurrent_mode


@pytest.mark.parametrize("cell", NN_CELLS)
def test_dropout_in_eval_mode(cell):
    """dropout between layers is the identity in eval mode, as TorchRL's."""
    ours, ref = make_pair(cell, 2, torch.float64, dropout=0.3)
    ours.eval()
    ref.eval()
    data = make_data(ours, (B, T), pattern("mixed"), torch.float64)
    compare(ours, ref, data, recurrent=True)


def interior_lengths(is_init):
    """The lengths of the trajectories of `is_init` [B, T] that end before
    the last step, counted here from the flags."""
    lengths = []
    for row in is_init.tolist():
        starts = [0] + [t for t in range(1, len(row)) if row[t]]
        lengths += [b - a for a, b in zip(starts, starts[1:])]
    return lengths


@pytest.mark.parametrize("remat, precompiled",
                         [("none", False), ("budget:1000000000", False),
                          # Another budget: the per-shape case's library of
                          # every shape stays uncompiled.
                          ("budget:999999999", True)],
                         ids=["every_shape", "per_shape",
                              "budget_every_shape"])
def test_extra_calls(monkeypatch, remat, precompiled):
    """The trajectory-end states of the N trajectories that end inside the
    sequence cost one more call per group of lengths (1, 2, 3-4, 5-8),
    as long as the group's longest, where one library serves every shape
    (remat "none", or a budget whose library of every shape
    rnnc.precompile has built); with a library per shape (a remat budget
    otherwise), ceil(N / B) more calls of the first call's shape."""
    ours, ref = make_pair("lstm", 1, torch.float64)
    if remat != "none":
        ours = rr.LSTMModule(I, H, 1, in_key="x", out_key="y", remat=remat)
        ours.load_state_dict(ref.state_dict())
        ours.double()
    if precompiled:
        # The calls' reset states are per step.
        rnnc.precompile([dict(cell="lstm", seq_len=None, batch=None,
                              input_size=I, hidden_size=H, layers=1,
                              remat=remat, dtype="float64",
                              reset_to="step")])
    shapes = []
    forward = ours.lstm.forward

    def record(x, *args, **kwargs):
        shapes.append(tuple(x.shape))
        return forward(x, *args, **kwargs)

    monkeypatch.setattr(ours.lstm, "forward", record)
    for name in PATTERNS:
        is_init = pattern(name)
        inside = int(is_init[:, 1:].sum())
        shapes.clear()
        with set_recurrent_mode(True), torch.no_grad():
            ours(make_data(ours, (B, T), is_init, torch.float64))
        lengths = interior_lengths(is_init)
        assert len(lengths) == inside
        if remat != "none" and not precompiled:
            assert shapes == [(B, T, I)] * (1 + math.ceil(inside / B)), name
        else:
            groups = {}
            for n in lengths:
                groups.setdefault((n - 1).bit_length(), []).append(n)
            assert shapes == [(B, T, I)] + [
                (len(group), max(group), I)
                for _, group in sorted(groups.items())], name
    # Both give TorchRL's results.
    compare(ours, ref, make_data(ours, (B, T), pattern("mixed"),
                                 torch.float64), recurrent=True)


# --------------------------------------------------------------------------
# Sequential mode
# --------------------------------------------------------------------------

@DTYPES
@pytest.mark.parametrize("L", [1, 2])
@pytest.mark.parametrize("cell", NN_CELLS)
def test_sequential_step_matches_torchrl(cell, L, dtype):
    """One rollout step ([B], T=1): stored states zeroed where is_init."""
    ours, ref = make_pair(cell, L, dtype)
    is_init = torch.tensor([True, False, True, False, False, True])
    data = make_data(ours, (B,), is_init, dtype)
    compare(ours, ref, data, recurrent=False)


@pytest.mark.parametrize("cell", NN_CELLS)
def test_sequential_rollout_matches_torchrl(cell):
    """A few steps of a [2, 3] batch, each module fed its own next states,
    as a collector does."""
    ours, ref = make_pair(cell, 2, torch.float64)
    g = torch.Generator().manual_seed(5)
    data = make_data(ours, (2, 3), torch.ones(2, 3, dtype=torch.bool),
                     torch.float64, states=False)
    states = {m: None for m in (ours, ref)}
    for step in range(4):
        data["x"] = torch.randn(2, 3, I, generator=g, dtype=torch.float64)
        data["is_init"] = (torch.rand(2, 3, 1, generator=g) < 0.3) | \
            (step == 0)
        outs = {}
        for m in (ours, ref):
            td = data.clone(False)
            if states[m] is not None:
                td.update(states[m])
            with torch.no_grad():
                out = m(td)
            outs[m] = out
            states[m] = {k: out["next", k] for k in state_keys(m)}
        assert rel_err(outs[ours]["y"], outs[ref]["y"]) < 1e-12
        for key in state_keys(ours):
            assert rel_err(outs[ours]["next", key],
                           outs[ref]["next", key]) < 1e-12


# --------------------------------------------------------------------------
# Collector and PPO loss
# --------------------------------------------------------------------------

def make_agent(module_cls):
    """An actor (LSTM, linear head, one-hot categorical) and a critic
    sharing its LSTM, for CartPole."""
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torchrl.modules import (OneHotCategorical, ProbabilisticActor,
                                 ValueOperator)
    torch.manual_seed(6)
    lstm = module_cls(input_size=4, hidden_size=8, in_key="observation",
                      out_key="embed")
    head = TensorDictModule(torch.nn.Linear(8, 2), in_keys=["embed"],
                            out_keys=["logits"])
    actor = ProbabilisticActor(TensorDictSequential(lstm, head),
                               in_keys=["logits"], out_keys=["action"],
                               distribution_class=OneHotCategorical,
                               return_log_prob=True)
    critic = TensorDictSequential(
        lstm, ValueOperator(torch.nn.Linear(8, 1), in_keys=["embed"]))
    return lstm, actor, critic


def test_collector_rollout_feeds_ppo_loss():
    """A rollout collected with rnnc's module (sequential mode) equals
    TorchRL's module's steps on it; ClipPPOLoss in recurrent mode over
    trajectories that end inside the batch is finite and its gradients
    equal those of the same loss with TorchRL's module holding the same
    weights."""
    pytest.importorskip("gymnasium")
    import torchrl.collectors as collectors
    from torchrl.envs import (Compose, GymEnv, InitTracker, StepCounter,
                              TransformedEnv)
    from torchrl.objectives import ClipPPOLoss

    Collector = getattr(collectors, "SyncDataCollector", None) or \
        collectors.Collector
    lstm, actor, critic = make_agent(rr.LSTMModule)
    env = TransformedEnv(GymEnv("CartPole-v1"), Compose(
        InitTracker(), StepCounter(max_steps=4),
        lstm.make_tensordict_primer()))
    env.set_seed(0)
    collector = Collector(env, actor, frames_per_batch=12, total_frames=12)
    data = next(iter(collector))
    collector.shutdown()
    is_init = data["is_init"].squeeze(-1)
    assert is_init[1:].any(), "no trajectory ends inside the batch"

    ref_lstm, ref_actor, ref_critic = make_agent(RefLSTM)
    ref_actor.load_state_dict(actor.state_dict())
    ref_critic.load_state_dict(critic.state_dict())

    # Each collected step, replayed by TorchRL's module from its stored
    # states.
    with set_recurrent_mode(False), torch.no_grad():
        replay = ref_lstm(data.select("observation", "is_init",
                                      *ref_lstm.in_keys[1:-1]).clone())
    assert rel_err(data["embed"], replay["embed"]) < 1e-5
    for key in ref_lstm.out_keys[1:]:
        assert rel_err(data[key], replay[key]) < 1e-5

    g = torch.Generator().manual_seed(7)
    data["advantage"] = torch.randn(12, 1, generator=g)
    data["value_target"] = torch.randn(12, 1, generator=g)
    results = []
    for a, c in ((actor, critic), (ref_actor, ref_critic)):
        loss_module = ClipPPOLoss(a, c)
        with set_recurrent_mode(True):
            out = loss_module(data.clone())
        loss = out["loss_objective"] + out["loss_critic"] + \
            out["loss_entropy"]
        assert torch.isfinite(loss)
        names = [n for n, _ in loss_module.named_parameters()]
        grads = torch.autograd.grad(loss, list(loss_module.parameters()))
        results.append((loss, dict(zip(names, grads))))
    (loss, grads), (loss_ref, grads_ref) = results
    assert rel_err(loss, loss_ref) < 1e-5
    assert grads.keys() == grads_ref.keys()
    assert any(".lstm.weight_hh_l0" in name for name in grads)
    for name in grads:
        assert rel_err(grads[name], grads_ref[name]) < 1e-5, name


# --------------------------------------------------------------------------
# Parameters, state dicts, primer
# --------------------------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("cell", NN_CELLS)
def test_state_dict_loads_both_ways(cell, bias):
    ours_cls, ref_cls = CLASSES[cell]
    torch.manual_seed(8)
    ref = ref_cls(I, H, 2, bias=bias, in_key="x", out_key="y")
    ours = ours_cls(I, H, 2, bias=bias, in_key="x", out_key="y")
    assert ours.state_dict().keys() == ref.state_dict().keys()
    ours.load_state_dict(ref.state_dict())
    for (name, p), (name_ref, p_ref) in zip(ours.named_parameters(),
                                            ref.named_parameters()):
        assert name == name_ref and torch.equal(p, p_ref)
    torch.manual_seed(9)
    other = ours_cls(I, H, 2, bias=bias, in_key="x", out_key="y")
    ref.load_state_dict(other.state_dict())
    for p, p_ref in zip(other.parameters(), ref.parameters()):
        assert torch.equal(p, p_ref)


@pytest.mark.parametrize("cell", NN_CELLS)
def test_module_argument(cell):
    """lstm= / gru= take an rnnc.torch module (batch_first), kept as the
    module's layers, with TorchRL's parameter names."""
    rnn = getattr(rt, cell.upper())(I, H, 2, batch_first=True)
    ours = CLASSES[cell][0](**{cell: rnn}, in_key="x", out_key="y")
    assert getattr(ours, cell) is rnn
    ref = CLASSES[cell][1](I, H, 2, in_key="x", out_key="y")
    ref.load_state_dict(ours.state_dict())


@pytest.mark.parametrize("cell", NN_CELLS)
def test_torchrl_module_with_ours_points_to_the_adapter(cell):
    """TorchRL's own module given an rnnc.torch module runs a batch whose
    resets fall inside the sequence by padding the episodes and passing a
    `mask`, which rnnc's module refuses with one error naming the adapter
    that runs such a batch (not an unexpected keyword argument)."""
    rnn = getattr(rt, cell.upper())(I, H, 1, batch_first=True)
    theirs = CLASSES[cell][1](**{cell: rnn}, in_key="x", out_key="y",
                              default_recurrent_mode=True)
    B, T = 3, 5
    is_init = torch.zeros(B, T, 1, dtype=torch.bool)
    is_init[:, 0] = True
    is_init[1, 2] = True
    td = TensorDict({"x": torch.randn(B, T, I), "is_init": is_init}, [B, T])
    name = CLASSES[cell][0].__name__
    with pytest.raises(RNNCError, match=f"takes no mask.*rnnc.torchrl.{name} "
                                        f"runs such a batch"):
        theirs(td)


@pytest.mark.parametrize("cell", NN_CELLS)
def test_settings_read_as_torchrl_keeps_them(cell):
    """The settings TorchRL's module keeps as attributes read the same on
    rnnc's, for code that inspects them."""
    ours, ref = make_pair(cell, 1, torch.float32)
    for name in ("recurrent_backend", "recurrent_compute_dtype",
                 "recurrent_recompute", "recurrent_matmul_precision"):
        assert getattr(ours, name) == getattr(ref, name), name


@pytest.mark.parametrize("cell", NN_CELLS)
def test_primer_matches_torchrl(cell):
    ours, ref = make_pair(cell, 2, torch.float32)
    primer, primer_ref = ours.make_tensordict_primer(), \
        ref.make_tensordict_primer()
    assert type(primer) is type(primer_ref)
    assert primer.primers == primer_ref.primers
    assert ours.in_keys == ref.in_keys and ours.out_keys == ref.out_keys
    # A float64 module's states are float64, as its calls take them.
    wide = make_pair(cell, 2, torch.float64)[0].make_tensordict_primer()
    assert {spec.dtype for spec in wide.primers.values()} == {torch.float64}


# --------------------------------------------------------------------------
# Refused arguments
# --------------------------------------------------------------------------

KEYS = {"in_key": "x", "out_key": "y"}
REFUSED = {
    "batch_first": (lambda: rr.LSTMModule(I, H, batch_first=False, **KEYS),
                    "batch_first"),
    "proj_size": (lambda: rr.LSTMModule(I, H, proj_size=2, **KEYS),
                  "proj_size"),
    "bidirectional": (lambda: rr.GRUModule(I, H, bidirectional=True, **KEYS),
                      "bidirectional"),
    "python_based": (lambda: rr.LSTMModule(I, H, python_based=True, **KEYS),
                     "python_based"),
    "triton": (lambda: rr.LSTMModule(I, H, recurrent_backend="triton",
                                     **KEYS), "recurrent_backend"),
    "backend": (lambda: rr.GRUModule(I, H, recurrent_backend="loop",
                                     **KEYS), "recurrent_backend"),
    "recompute": (lambda: rr.LSTMModule(I, H, recurrent_backend="scan",
                                        recurrent_recompute="full", **KEYS),
                  "recurrent_recompute"),
    "compute_dtype": (lambda: rr.GRUModule(
        I, H, recurrent_compute_dtype=torch.bfloat16, **KEYS),
        "recurrent_compute_dtype"),
    "matmul_precision": (lambda: rr.LSTMModule(
        I, H, recurrent_matmul_precision="tf32", **KEYS),
        "recurrent_matmul_precision"),
    "dtype": (lambda: rr.LSTMModule(I, H, dtype=torch.float16, **KEYS),
              "float16"),
    "no_hidden_size": (lambda: rr.LSTMModule(I, **KEYS), "hidden_size"),
    "no_input_size": (lambda: rr.GRUModule(hidden_size=H, **KEYS),
                      "input_size"),
    "torch_lstm": (lambda: rr.LSTMModule(
        lstm=torch.nn.LSTM(I, H, batch_first=True), **KEYS), "rnnc.torch"),
    "lstm_as_gru": (lambda: rr.GRUModule(
        gru=rt.LSTM(I, H, batch_first=True), **KEYS), "rnnc.torch.GRU"),
    "module_time_major": (lambda: rr.LSTMModule(
        lstm=rt.LSTM(I, H), **KEYS), "batch_first"),
    "module_and_sizes": (lambda: rr.GRUModule(
        hidden_size=H, gru=rt.GRU(I, H, batch_first=True), **KEYS),
        "hidden_size"),
    "in_key_and_in_keys": (lambda: rr.LSTMModule(
        I, H, in_key="x", in_keys=["x", "h", "c"], out_key="y"), "in_key"),
    "no_out_key": (lambda: rr.LSTMModule(I, H, in_key="x"), "out_key"),
    "in_keys_length": (lambda: rr.LSTMModule(
        I, H, in_keys=["x", "h"], out_key="y"), "in_keys"),
    "out_keys_length": (lambda: rr.GRUModule(
        I, H, in_key="x", out_keys=["y"]), "out_keys"),
    # TorchRL's module takes bool() of it: "sequential" would be the
    # recurrent mode.
    "recurrent_mode_string": (lambda: rr.LSTMModule(
        I, H, default_recurrent_mode="sequential", **KEYS),
        "default_recurrent_mode='sequential'"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_argument(case):
    make, match = REFUSED[case]
    with pytest.raises(RNNCError, match=match):
        make()


def test_set_recurrent_mode_method_refused():
    """Removed in TorchRL 0.8; the context manager sets the mode."""
    ours = rr.LSTMModule(I, H, **KEYS)
    with pytest.raises(RNNCError, match="set_recurrent_mode"):
        ours.set_recurrent_mode(True)
    with pytest.raises(RNNCError, match="set_recurrent_mode"):
        ours.recurrent_mode = True


def test_recurrent_mode_needs_time_dimension():
    ours = rr.GRUModule(I, H, **KEYS)
    data = TensorDict({"x": torch.randn(I),
                       "is_init": torch.zeros(1, dtype=torch.bool)}, [])
    with set_recurrent_mode(True), pytest.raises(RNNCError, match="0-d"):
        ours(data)


def test_input_and_state_shapes_are_named():
    """An input of other features, or stored states without their layer
    dimension, are errors naming the key and the shape it must have, in
    both modes."""
    ours = rr.LSTMModule(I, H, num_layers=2, **KEYS)
    data = make_data(ours, (B, T), pattern("random"), torch.float32)
    wide = data.clone()
    wide["x"] = torch.randn(B, T, 2, I)
    flat = data.clone()
    flat["recurrent_state_h"] = torch.randn(B, T, H)
    for recurrent in (True, False):
        with set_recurrent_mode(recurrent):
            with pytest.raises(RNNCError, match=re.escape(
                    f"x must be the tensordict's batch shape {[B, T]} and "
                    f"input_size={I} features, got {[B, T, 2, I]}")):
                ours(wide.clone())
            with pytest.raises(RNNCError, match=re.escape(
                    f"recurrent_state_h must be the tensordict's batch "
                    f"shape {[B, T]} and [num_layers, hidden_size] = "
                    f"{[2, H]}, got {[B, T, H]}")):
                ours(flat.clone())


@pytest.mark.parametrize("cell", NN_CELLS)
def test_input_and_state_dtypes_are_named(cell):
    """An input or a stored state of another dtype than the parameters'
    is an error naming its key, in both modes (the layers' own error
    names their arguments, h0 and input, which the tensordict has not)."""
    ours = CLASSES[cell][0](I, H, num_layers=2, **KEYS)
    data = make_data(ours, (B, T), pattern("random"), torch.float32)
    key = state_keys(ours)[-1]
    wide = data.clone()
    wide[key] = wide[key].double()
    ints = data.clone()
    ints["x"] = torch.zeros(B, T, I, dtype=torch.long)
    for recurrent in (True, False):
        with set_recurrent_mode(recurrent):
            with pytest.raises(RNNCError, match=re.escape(
                    f"{key} must be float32 (the parameters' dtype), got "
                    f"torch.float64")):
                ours(wide.clone())
            with pytest.raises(RNNCError, match=re.escape(
                    "x must be float32 (the parameters' dtype), got "
                    "torch.int64")):
                ours(ints.clone())


@pytest.mark.parametrize("cell", NN_CELLS)
def test_input_and_state_devices_are_named(cell):
    """An input or a stored state on another device than the parameters'
    is an error naming its key and both devices, in both modes (a meta
    tensor stands in for another device on a machine without a GPU)."""
    ours = CLASSES[cell][0](I, H, num_layers=2, **KEYS)
    data = make_data(ours, (B, T), pattern("random"), torch.float32)
    key = state_keys(ours)[-1]
    for name in ("x", key):
        moved = data.clone()
        moved[name] = torch.empty(moved[name].shape, device="meta")
        for recurrent in (True, False):
            with set_recurrent_mode(recurrent), pytest.raises(
                    RNNCError, match=re.escape(
                        f"{name} is on meta, the parameters on cpu")):
                ours(moved.clone())


def test_one_state_missing_refused():
    ours = rr.LSTMModule(I, H, **KEYS)
    data = make_data(ours, (B, T), pattern("random"), torch.float32)
    del data["recurrent_state_c"]
    with set_recurrent_mode(True), pytest.raises(RNNCError,
                                                 match="recurrent_state_c"):
        ours(data)


def test_primer_needs_matching_keys():
    ours = rr.GRUModule(I, H, in_keys=["x", "h"], out_keys=["y", "h_out"])
    with pytest.raises(RNNCError, match="make_tensordict_primer"):
        ours.make_tensordict_primer()


def test_make_cudnn_based_refused():
    ours = rr.LSTMModule(I, H, **KEYS)
    with pytest.raises(RNNCError, match="make_cudnn_based"):
        ours.make_cudnn_based()
    with pytest.raises(RNNCError, match="make_python_based"):
        ours.make_python_based()
