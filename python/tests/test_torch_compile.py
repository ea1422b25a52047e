"""rnnc.torch under PyTorch's graph tools: the rnnc custom ops
(rnnc::forward, rnnc::backward, rnnc::inference) checked by
torch.library.opcheck; torch.compile(fullgraph=True) of a policy against
eager and torch.nn; torch.export; the clear error of torch.jit.trace;
the private PyTorch APIs the package uses.

Needs `rnn-compile` (RNNC_COMPILE or PATH) and PyTorch. Tiny shapes:
torch.compile's own compile time dominates.
"""

import io
import os
import re
import subprocess
import sys

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import rnnc.torch as rt
from rnnc import _abi, _autograd, _ops
from rnnc.library import Entry, RNNCError

from helpers import (ALL_CELLS, CELLS, LSTM_LIKE, inputs, loss_and_grads,
                     make_pair, rel_err, reset_inputs, state_of)

T, B, I, H, L = 4, 3, 5, 6, 2


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test compiles from scratch (no recompile limits carried over)."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


class Policy(torch.nn.Module):
    """Linear -> recurrent layer -> Linear, as an RL policy is built."""

    def __init__(self, rnn, obs=5, actions=3):
        super().__init__()
        self.encoder = torch.nn.Linear(obs, I)
        self.rnn = rnn
        self.head = torch.nn.Linear(H, actions)

    def forward(self, obs, state, is_init=None):
        if isinstance(self.rnn, rt._RNNBase):
            y, state = self.rnn(self.encoder(obs), state, is_init=is_init)
        else:
            y, state = self.rnn(self.encoder(obs), state)
        return self.head(y), state


def policy_pair(cell="lstm"):
    """A policy with rnnc's layer and one with torch.nn's, holding the same
    parameters."""
    ours_cls, ref_cls = CELLS[cell]
    torch.manual_seed(0)
    ref = Policy(ref_cls(I, H, L))
    ours = Policy(ours_cls(I, H, L))
    ours.load_state_dict(ref.state_dict())
    return ours, ref


def policy_inputs(cell, seq_len=T, seed=1):
    g = torch.Generator().manual_seed(seed)
    obs = torch.randn(seq_len, B, 5, generator=g)
    h0 = torch.randn(L, B, H, generator=g, requires_grad=True)
    c0 = torch.randn(L, B, H, generator=g, requires_grad=True)
    state = (h0, c0) if cell in LSTM_LIKE else h0
    return obs, state


def flat_state(state):
    return list(state) if isinstance(state, tuple) else [state]


def step(policy, obs, state, is_init=None):
    """A training step's results: the outputs, the final states and the
    gradients of a loss with respect to every parameter and the initial
    states."""
    out, final = policy(obs, state, is_init)
    loss = out.square().sum() + sum(s.sum() for s in flat_state(final))
    wrt = list(policy.parameters()) + flat_state(state)
    return [out.detach()] + [s.detach() for s in flat_state(final)], \
        torch.autograd.grad(loss, wrt)


def test_policy_compiles_without_graph_breaks_and_equals_eager():
    """torch.compile(fullgraph=True) of Linear -> rnnc LSTM -> Linear, with
    resets, trains and infers in one graph each; its outputs and the
    LSTM's gradients are eager's bits, the Linear layers' gradients (whose
    reductions inductor fuses its own way) within 1e-6, and all of them
    torch.nn.LSTM's within 1e-5."""
    ours, ref = policy_pair("lstm")
    obs, state = policy_inputs("lstm")
    is_init = torch.zeros(T, B, dtype=torch.bool)
    is_init[2, 1] = is_init[0, 2] = True

    for grad in (True, False):
        with torch.set_grad_enabled(grad):
            explained = torch._dynamo.explain(ours)(obs, state, is_init)
        assert explained.graph_count == 1, explained.break_reasons
        assert explained.graph_break_count == 0
    torch._dynamo.reset()

    compiled = torch.compile(ours, fullgraph=True)
    outs, grads = step(compiled, obs, state, is_init)
    eager_outs, eager_grads = step(ours, obs, state, is_init)
    for a, b in zip(outs, eager_outs):
        assert torch.equal(a, b)
    names = [n for n, _ in ours.named_parameters()] + ["h0", "c0"]
    for name, a, b in zip(names, grads, eager_grads):
        if name.startswith("rnn.") or name in ("h0", "c0"):
            assert torch.equal(a, b), name
        assert rel_err(a, b) <= 1e-6, name

    # torch.nn.LSTM, episode by episode (is_init starts a zero state).
    ref_outs, ref_grads = step(ref, obs, state)
    plain, _ = step(compiled, obs, state)
    for a, b in zip(plain, ref_outs):
        assert rel_err(a, b) < 1e-5
    assert not torch.equal(plain[0], outs[0])  # the resets mattered

    with torch.no_grad():
        out, _ = compiled(obs, state, is_init)
    assert torch.equal(out, eager_outs[0])


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_compiled_cells_equal_eager(cell):
    """Every cell in a compiled policy (the AOT graphs, without inductor's
    code generation): eager's bits. (The LSTM's policy through inductor
    is the test above.)"""
    ours, _ = policy_pair(cell)
    obs, state = policy_inputs(cell)
    compiled = torch.compile(ours, fullgraph=True, backend="aot_eager")
    outs, grads = step(compiled, obs, state)
    eager_outs, eager_grads = step(ours, obs, state)
    for a, b in zip(outs + list(grads), eager_outs + list(eager_grads)):
        assert torch.equal(a, b)


def test_compiled_new_sizes_get_their_own_graph():
    """A library is compiled for its sizes: a compiled policy called with
    other sizes (dynamo's automatic dynamic shapes) specializes a graph to
    them and gives eager's results."""
    ours, _ = policy_pair("lstm")
    compiled = torch.compile(ours, fullgraph=True, backend="aot_eager")
    for seq_len in (T, T + 2, T + 3):
        obs, state = policy_inputs("lstm", seq_len)
        outs, grads = step(compiled, obs, state)
        eager_outs, eager_grads = step(ours, obs, state)
        for a, b in zip(outs + list(grads), eager_outs + list(eager_grads)):
            assert torch.equal(a, b), seq_len


def test_compiled_dropout_draws_a_seed_per_call():
    """With dropout a compiled training call draws its seed with the
    graph's RNG (no graph break): under aot_eager, PyTorch's generator,
    so the call equals rnnc::forward run eagerly with that seed, outputs
    and gradients; the next call drops other elements."""
    lstm = rt.LSTM(I, H, L, dropout=0.4)
    compiled = torch.compile(lstm, fullgraph=True, backend="aot_eager")
    x = torch.randn(T, B, I, requires_grad=True)
    torch.manual_seed(7)
    y, _ = compiled(x)
    grads = torch.autograd.grad(y.square().sum(), [x, *lstm.parameters()])
    torch.manual_seed(7)
    seed = torch.randint(2 ** 62, (1,), dtype=torch.int64)
    key = lstm._library_key(T, B, x.device, torch.float32, "zero")
    zeros = torch.zeros(L, B, H)
    want, *_ = torch.ops.rnnc.forward(
        key, x, torch.zeros(T, B, dtype=torch.bool),
        torch.cat([seed, torch.zeros(1, dtype=torch.int64)]), [zeros, zeros],
        [], list(lstm._flat_params))
    want_grads = torch.autograd.grad(want.square().sum(),
                                     [x, *lstm.parameters()])
    assert torch.equal(y, want)
    for a, b in zip(grads, want_grads):
        assert torch.equal(a, b)
    again, _ = compiled(x)
    assert not torch.equal(again, y)


def test_compiled_second_backward_is_right_or_refused():
    """A second backward through one compiled call (retain_graph): the
    compiled backward works on a copy of the saved region, so it gives the
    first one's bits; where inductor donates the region to the backward
    (its default), PyTorch refuses retain_graph rather than reading a
    consumed region."""
    ours, _ = policy_pair("lstm")
    obs, state = policy_inputs("lstm")
    wrt = list(ours.parameters())
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        compiled = torch.compile(ours, fullgraph=True, backend=backend)
        out, _ = compiled(obs, state)
        try:
            first = torch.autograd.grad(out.sum(), wrt, retain_graph=True)
            second = torch.autograd.grad(out.sum(), wrt)
        except RuntimeError as error:
            assert backend == "inductor", error
            assert "donated" in str(error) or "inplace" in str(error)
            continue
        for a, b in zip(first, second):
            assert torch.equal(a, b), backend


def test_export_runs_the_library():
    """torch.export of a policy: under no_grad the graph calls
    rnnc::inference with the library's key (a string) and tensors only; it
    saves, loads, and runs in a process that has not loaded the library
    (the op compiles or loads it from its key), with eager's bits. With
    gradients enabled the graph calls rnnc::forward."""
    ours, _ = policy_pair("lstm")
    obs, state = policy_inputs("lstm")
    state = tuple(s.detach() for s in state)
    with torch.no_grad():
        want, _ = ours(obs, state)
        program = torch.export.export(ours, (obs, state))
    targets = {str(n.target) for n in program.graph.nodes
               if n.op == "call_function"}
    assert "rnnc.inference.default" in targets
    assert "rnnc.forward.default" not in targets
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    buffer.seek(0)
    loaded = torch.export.load(buffer)
    saved_libraries = dict(_abi._LIBRARIES)
    _abi._LIBRARIES.clear()
    try:
        with torch.no_grad():
            got, _ = loaded.module()(obs, state)
    finally:
        _abi._LIBRARIES.update(saved_libraries)
    assert torch.equal(got, want)

    program = torch.export.export(ours, (obs, state))
    targets = {str(n.target) for n in program.graph.nodes
               if n.op == "call_function"}
    assert "rnnc.forward.default" in targets
    with torch.no_grad():
        got, _ = program.module()(obs, state)
    assert torch.equal(got, want)


def op_args(cell, dtype, reset_to="zero", dropout=0.0):
    """rnnc::forward's arguments for a module of `cell` (every tensor that
    takes a gradient requires one), and its module."""
    torch.manual_seed(0)
    module = CELLS[cell][0](I, H, L, dtype=dtype, remat="none",
                            dropout=dropout)
    g = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, dtype=dtype, generator=g,
                           requires_grad=True)

    x = randn(T, B, I)
    is_init = torch.rand(T, B, generator=g) < 0.3
    states = [randn(L, B, H) for _ in module._states]
    resets = [randn(L, T, B, H) for _ in module._states] \
        if reset_to == "step" else []
    rng = torch.tensor([1234, 0]) if dropout else None
    key = module._library_key(T, B, x.device, dtype, reset_to)
    return (key, x, is_init, rng, states, resets, list(module._flat_params))


def detached(args):
    return tuple(a.detach() if isinstance(a, torch.Tensor) else
                 [p.detach() for p in a] if isinstance(a, list) else a
                 for a in args)


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("variant", ["plain", "resets"])
def test_opcheck(cell, dtype, variant):
    """torch.library.opcheck (schema, autograd registration, fake tensors,
    AOTAutograd with dynamic shapes, gradients) passes for the three ops;
    with resets that enter given states, and (float32) with dropout."""
    reset_to = "step" if variant == "resets" else "zero"
    dropout = 0.3 if variant == "resets" and dtype == torch.float32 else 0.0
    args = op_args(cell, dtype, reset_to, dropout)
    torch.library.opcheck(torch.ops.rnnc.forward.default, args)
    key, x, is_init, rng, *rest = detached(args)
    torch.library.opcheck(torch.ops.rnnc.inference.default,
                          (key, x, is_init, *rest))
    with torch.no_grad():
        y, states_n, saved = torch.ops.rnnc.forward(*args)
    g = torch.Generator().manual_seed(2)
    grad_y, *grad_states_n = [torch.randn(t.shape, dtype=dtype, generator=g)
                              for t in (y, *states_n)]
    torch.library.opcheck(torch.ops.rnnc.backward.default,
                          (*detached(args), y, saved, grad_y, grad_states_n))


def test_ops_against_torch_and_region_contract():
    """rnnc::forward and rnnc::backward called directly compute torch.nn's
    values (float64, without resets); by default the backward leaves the
    saved region as the forward returned it (it computes in a copy), and
    with consume_saved=True (the modules' calls) in the region itself,
    with the same gradients."""
    args = list(op_args("lstm", torch.float64))
    args[2] = torch.zeros(T, B, dtype=torch.bool)
    key, x, is_init, rng, (h0, c0), _, params = args
    ref = torch.nn.LSTM(I, H, L, dtype=torch.float64)
    for name, p in zip(_ops._param_names(L), params):
        getattr(ref, name).data.copy_(p.detach())
    y_ref, (h_ref, c_ref) = ref(x, (h0, c0))

    def loss(y, h_n, c_n):
        return (y * y).sum() + h_n.sum() + 2 * c_n.sum()

    grads_ref = torch.autograd.grad(loss(y_ref, h_ref, c_ref),
                                    [x, h0, c0, *ref.parameters()])
    y, (h_n, c_n), saved = torch.ops.rnnc.forward(*args)
    for a, b in ((y, y_ref), (h_n, h_ref), (c_n, c_ref)):
        assert rel_err(a, b) < 1e-12
    region = saved.clone()
    grads = torch.autograd.grad(loss(y, h_n, c_n), [x, h0, c0, *params])
    assert torch.equal(saved, region)
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g, g_ref) < 1e-12

    y, (h_n, c_n), saved = torch.ops.rnnc.forward(*args, consume_saved=True)
    region = saved.clone()
    consumed = torch.autograd.grad(loss(y, h_n, c_n), [x, h0, c0, *params])
    assert not torch.equal(saved, region)
    for a, b in zip(grads, consumed):
        assert torch.equal(a, b)


def test_fake_implementations_never_call_the_library(monkeypatch):
    """Under fake tensors the ops give the manifest's shapes (the saved
    region's size included) without calling an entry point."""
    args = op_args("gru", torch.float32)
    library = rt._library_of(args[0]).at(T, B)

    def no_call(self, *args):
        raise AssertionError(f"{self.symbol} was called")

    monkeypatch.setattr(Entry, "call", no_call)
    monkeypatch.setattr(Entry, "call_at", no_call)
    with FakeTensorMode(allow_non_fake_inputs=True):
        y, states_n, saved = torch.ops.rnnc.forward(*detached(args))
        grads = torch.ops.rnnc.backward(*detached(args), y, saved, y,
                                        states_n)
    assert y.shape == (T, B, H)
    assert [tuple(s.shape) for s in states_n] == [(L, B, H)]
    assert saved.shape == (library.saved_bytes,) and saved.dtype == \
        torch.uint8
    assert grads[0].shape == (T, B, I) and grads[1].numel() == L * B * H
    assert grads[2].numel() == 0
    assert grads[-1].numel() == sum(p.numel() for p in args[-1])
    # A module under fake tensors calls the ops (their fake
    # implementations), not the entry points.
    lstm = rt.LSTM(I, H, L)
    with FakeTensorMode(allow_non_fake_inputs=True):
        y, (h_n, c_n) = lstm(torch.empty(T, B, I))
    assert y.shape == (T, B, H) and c_n.shape == (L, B, H)


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_module_through_the_ops_gives_the_eager_bits(cell, monkeypatch):
    """The modules' eager calls run the ops' implementations without the
    dispatcher; forced through the ops (as graph tools see them), a call
    gives the same bits with resets, reset states and dropout, a second
    backward (retain_graph) gives the first one's, and a second-order
    gradient is refused."""
    T2, B2, I2, H2, L2 = 6, 3, 4, 5, 2
    x, h0, c0, gy, ghn = inputs(T2, B2, I2, H2, L2)
    is_init = torch.rand(T2, B2, generator=torch.Generator().manual_seed(3)) \
        < 0.3
    hr, cr = reset_inputs(cell, T2, B2, H2, L2, "step")
    results = {}
    for path in ("eager", "ops"):
        if path == "ops":
            monkeypatch.setattr(_autograd, "_through_ops", lambda tensors: True)
        ours, _ = make_pair(cell, I2, H2, L2, remat="chunk:2", dropout=0.3)
        torch.manual_seed(5)
        results[path] = [loss_and_grads(cell, ours, x, h0, c0, gy, ghn,
                                        is_init, hr, cr)]
        ours.eval()
        with torch.no_grad():
            results[path].append(ours(x, state_of(cell, h0, c0),
                                      is_init=is_init)[0])
        y, _ = ours(x, state_of(cell, h0, c0))
        first = torch.autograd.grad(y, [x, h0], gy, retain_graph=True)
        second = torch.autograd.grad(y, [x, h0], gy)
        assert all(torch.equal(a, b) for a, b in zip(first, second)), path
        y, _ = ours(x, state_of(cell, h0, c0))
        grad, = torch.autograd.grad((y * gy).sum(), x, create_graph=True)
        with pytest.raises(RNNCError, match="backward is not "
                                            "differentiable"):
            grad.square().sum().backward()
    (y_e, _, grads_e), infer_e = results["eager"]
    (y_o, _, grads_o), infer_o = results["ops"]
    assert torch.equal(y_e, y_o) and torch.equal(infer_e, infer_o)
    for a, b in zip(grads_e, grads_o):
        assert torch.equal(a, b)


def test_constant_result_marks_as_torch_does_without_importing_dynamo():
    """_ops marks _library_key as torch.compiler.assume_constant_result
    would, without importing torch._dynamo: the same attributes, and a
    process importing rnnc.torch has no torch._dynamo."""
    def fn():
        return 0

    def ours():
        return 0

    assert vars(torch.compiler.assume_constant_result(fn)) == \
        vars(_ops._assume_constant_result(ours)) == \
        vars(_ops._library_key)
    run = subprocess.run(
        [sys.executable, "-c", "import sys, rnnc.torch; "
         "print('torch._dynamo' in sys.modules)"],
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert run.returncode == 0 and run.stdout.strip() == "False", run.stderr


# The private PyTorch APIs rnnc uses, each checked on the PyTorch the
# tests run (their comments in the package name the versions).
PRIVATE_APIS = {"torch._C._len_torch_dispatch_stack",
                "torch.autograd._unsafe_preserve_version_counter",
                "torch._C._functorch.get_interpreter_stack"}


def test_private_pytorch_apis():
    """The package uses exactly these private PyTorch APIs, and each is
    still there: a PyTorch that drops one fails here, not in a call."""
    used = set()
    package = os.path.dirname(rt.__file__)
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            with open(os.path.join(package, name)) as f:
                text = f.read()
            used |= {m.group(0) for m in re.finditer(
                r"\btorch(?:\.[A-Za-z]\w*)*\._[A-Za-z]\w*(?:\.\w+)*", text)}
    assert used == PRIVATE_APIS
    for api in PRIVATE_APIS:
        obj = torch
        for part in api.split(".")[1:]:
            obj = getattr(obj, part)
        assert callable(obj), api
    assert isinstance(torch._C._len_torch_dispatch_stack(), int)
    t = torch.zeros(1)
    version = t._version
    with torch.autograd._unsafe_preserve_version_counter(t):
        t.add_(1)
    assert t._version == version
    # functorch's transforms as rnnc.torch tells vmap (_autograd._vmapped).
    stack = torch._C._functorch.get_interpreter_stack
    assert not stack()
    seen = []
    torch.func.vmap(torch.func.grad(
        lambda x: seen.append([i.key().name for i in stack()]) or x.sum()))(
            torch.ones(2, 3))
    assert seen == [["Vmap", "Grad"]]


@pytest.mark.filterwarnings("ignore:`torch.jit.trace:FutureWarning")
def test_jit_trace_is_refused_for_torch_compile():
    ours, _ = policy_pair("gru")
    obs, state = policy_inputs("gru")
    with pytest.raises(RNNCError, match="use torch.compile"):
        torch.jit.trace(ours, (obs, state.detach()))
