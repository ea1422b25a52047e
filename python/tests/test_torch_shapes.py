"""rnnc.torch's library of every shape: on the CPU, with remat "none",
"gates" or "chunk:K" and no wavefront, one library (rnn-compile
--dynamic) serves a module's calls of every sequence length and batch
size. Against torch.nn (and rnnc's libraries of one shape, which give the
same bits by construction) at many shapes; one compile for them all,
also under torch.compile(dynamic=True); the disk cache's entries.

Needs `rnn-compile` (RNNC_COMPILE or PATH) and PyTorch.
"""

import json
import os

import pytest
import torch

import rnnc
import rnnc._ops as rnnc_ops
import rnnc.torch as rt
from rnnc import _dynamic, library
from rnnc.library import RNNCError, compile_model

from helpers import (ALL_CELLS, assert_same_bits, episodes_loss_and_grads,
                     inputs, loss_and_grads, make_pair, rel_err)

# T=1, B=1, T that the GEMM block (rows 256: 64 steps of B=4, 2 of B=130)
# does not divide, and T*B large.
SHAPES = [(1, 1), (1, 9), (11, 1), (13, 4), (67, 4), (5, 130), (2, 2),
          (40, 17)]
I, H, L = 4, 5, 2


@pytest.fixture
def requests(monkeypatch):
    """The compile_model requests rnnc.torch's ops make."""
    seen = set()
    compile_model = rnnc_ops.compile_model

    def recording(**request):
        seen.add(json.dumps(request, sort_keys=True))
        return compile_model(**request)

    monkeypatch.setattr(rnnc_ops, "compile_model", recording)
    return seen


def assert_episodes(cell, ours, ref, T, B, layers, seed):
    """Outputs and every gradient of `ours` at (T, B), with resets, are
    torch.nn's (`ref`) run episode by episode."""
    x, h0, c0, gy, ghn = inputs(T, B, I, H, layers, seed=seed)
    is_init = resets(T, B, seed)
    y, _, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn, is_init)
    y_ref, _, grads_ref = episodes_loss_and_grads(cell, ref, x, h0, c0, gy,
                                                  ghn, is_init)
    assert rel_err(y, y_ref) < 1e-5, (T, B)
    for g, g_ref in zip(grads, grads_ref):
        assert g.shape == g_ref.shape
        assert rel_err(g, g_ref) < 1e-5, (T, B)


def resets(T, B, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(T, B, generator=g) < 0.25


@pytest.mark.parametrize("cell,remat", [(c, "none") for c in ALL_CELLS] +
                         [("lstm", "chunk:3"), ("gru", "chunk:3")])
def test_one_library_serves_every_shape(cell, remat, requests):
    """Outputs, states and every gradient at eight shapes, with resets,
    against torch.nn run episode by episode; one library for all of
    them, also with checkpoints every 3 steps (rounded per call to whole
    GEMM blocks)."""
    ours, ref = make_pair(cell, I, H, L, remat=remat)
    for k, (T, B) in enumerate(SHAPES):
        assert_episodes(cell, ours, ref, T, B, L, k)
    [request] = [json.loads(r) for r in requests]
    assert request["seq_len"] is None and request["batch"] is None
    assert request["cell"] == cell and request["remat"] == remat


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_same_bits_as_libraries_of_one_shape(cell):
    """At each shape, the library of every shape gives under each policy
    ("none", "gates", "chunk:2", "chunk:5", whose chunks each call rounds
    to whole GEMM blocks) the bits of libraries compiled for that shape
    alone ("none", "chunk:2"): every one issues the same GEMM calls."""
    for k, (T, B) in enumerate(SHAPES[:6]):
        x, h0, c0, gy, ghn = inputs(T, B, I, H, L, seed=k)
        is_init = resets(T, B, k)
        results = {}
        for remat, every in (("none", True), ("gates", True),
                             ("chunk:2", True), ("chunk:5", True),
                             ("none", False), ("chunk:2", False)):
            ours, _ = make_pair(cell, I, H, L, remat=remat)
            assert ours._serves_every_shape(x.device)
            if not every:
                # The library of this shape alone.
                ours._every_shape = lambda arguments: False
            results[remat if every else f"{remat} at {T}x{B}"] = \
                loss_and_grads(cell, ours, x, h0, c0, gy, ghn, is_init)
        assert_same_bits(results)


@pytest.mark.parametrize("cell", ["gru", "mgu"])
def test_nothing_saved_under_chunks(cell, requests):
    """A one-layer GRU or MGU under chunk:4 saves nothing (it replays each
    chunk from y, an output): an empty saved region at every shape, the
    results torch.nn's."""
    ours, ref = make_pair(cell, I, H, 1, remat="chunk:4")
    for k, (T, B) in enumerate([(9, 3), (1, 1), (40, 17)]):
        assert ours._library(T, B, torch.device("cpu"), torch.float32,
                             "zero").at(T, B).saved_bytes == 0
        assert_episodes(cell, ours, ref, T, B, 1, k)
    [request] = [json.loads(r) for r in requests]
    assert request["seq_len"] is None and request["remat"] == "chunk:4"


@pytest.mark.parametrize("remat", ["none", "chunk:3"])
def test_torch_compile_dynamic_compiles_once(remat, requests):
    """torch.compile(dynamic=True) of a policy (encoder, LSTM, head) called
    at ten shapes traces one graph and compiles one library; its results
    and gradients are those of the eager policy. (PyTorch specializes
    sizes 0 and 1, so the shapes start at 2.) Under chunk:3 the saved
    region's size is one the graph learns when it runs."""
    from torch._dynamo.utils import counters

    class Policy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = torch.nn.Linear(6, 16)
            self.lstm = rt.LSTM(16, 24, remat=remat)
            self.head = torch.nn.Linear(24, 3)

        def forward(self, x, is_init):
            y, (h, c) = self.lstm(torch.relu(self.encoder(x)),
                                  is_init=is_init)
            return self.head(y), h, c

    torch.manual_seed(0)
    policy = Policy()
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(policy, dynamic=True, fullgraph=True)
    shapes = [(3, 2), (5, 4), (7, 3), (2, 9), (9, 8), (2, 5), (4, 4),
              (6, 2), (8, 2), (10, 3)]
    for k, (T, B) in enumerate(shapes):
        x = torch.randn(T, B, 6)
        is_init = resets(T, B, k)
        w = torch.randn(T, B, 3)
        results = []
        for run in (compiled, policy):
            out, h, c = run(x, is_init)
            loss = (out * w).sum() + h.sum() + (c * c).sum()
            grads = torch.autograd.grad(loss, list(policy.parameters()))
            results.append((out, h, c, grads))
        (out, h, c, grads), (out_ref, h_ref, c_ref, grads_ref) = results
        for a, b in zip((out, h, c, *grads), (out_ref, h_ref, c_ref,
                                              *grads_ref)):
            assert a.shape == b.shape
            assert rel_err(a, b) < 1e-5, (T, B)
    assert counters["stats"]["unique_graphs"] == 1
    [request] = [json.loads(r) for r in requests]
    assert request["seq_len"] is None


def test_cache_entry_without_the_shape():
    """A library of every shape is its own cache entry, keyed without T
    and B: one of a static shape (an entry of the same settings before)
    is neither read for it nor replaced."""
    static = compile_model("gru", 4, 2, 3, 7, 1)
    dynamic = compile_model("gru", None, None, 3, 7, 1)
    assert not static.dynamic and dynamic.dynamic
    assert static.directory != dynamic.directory
    entries = {e["path"]: e["request"] for e in library.cache_entries()}
    assert entries[dynamic.directory]["seq_len"] is None
    assert entries[dynamic.directory]["batch"] is None
    assert entries[static.directory]["seq_len"] == 4
    with open(os.path.join(dynamic.directory, "manifest.json")) as f:
        assert json.load(f)["shape"]["T"] == "T"
    # The module's calls use the library of every shape at any (T, B).
    module = rt.GRU(3, 7)
    assert module._library(4, 2, torch.device("cpu"), torch.float32,
                           "zero").directory == dynamic.directory
    assert compile_model("gru", None, None, 3, 7, 1) is dynamic


def test_budget_library_of_every_shape(requests):
    """A budget's plan depends on the shape: a module compiles it per
    shape, unless the cache holds the budget's library of every shape
    (rnnc.precompile), which it then uses at every shape. Where a plan
    fits, the results are torch.nn's; where none does, training is refused
    naming the shape and the smallest feasible budget there, and inference
    (which saves nothing) runs."""
    ours, ref = make_pair("lstm", I, H, L, remat="budget:8000")
    assert_episodes("lstm", ours, ref, 2, 2, L, 0)
    [request] = [json.loads(r) for r in requests]
    assert (request["seq_len"], request["batch"]) == (2, 2)
    requests.clear()
    cpu = torch.device("cpu")
    assert not ours._serves_every_shape(cpu)
    rnnc.precompile([dict(cell="lstm", seq_len=None, batch=None,
                          input_size=I, hidden_size=H, layers=L,
                          remat="budget:8000")])
    # The adapters ask so before they pad; per-step reset states are
    # another library, not precompiled.
    assert ours._serves_every_shape(cpu)
    assert not ours._serves_every_shape(cpu, reset_to="step")
    for k, (T, B) in enumerate([(1, 1), (2, 2), (11, 1)]):
        assert_episodes("lstm", ours, ref, T, B, L, k)
    x = torch.randn(9, 5, I, requires_grad=True)
    with pytest.raises(RNNCError, match=r"no remat plan fits budget:8000 at "
                       r"T=9, B=5; the smallest feasible budget there is "
                       r"[0-9]+ bytes \((none|gates|chunk:[0-9]+)\)"):
        ours(x)[0].sum().backward()
    with torch.no_grad():
        assert rel_err(ours(x)[0], ref(x)[0]) < 1e-5
    [request] = [json.loads(r) for r in requests]
    assert request["seq_len"] is None and request["remat"] == "budget:8000"
    with open(os.path.join(ours._library(9, 5, torch.device("cpu"),
                                         torch.float32, "zero").directory,
                           "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["remat_plan"] == "per call"
    assert [v["plan"] for v in manifest["remat_variants"]][:3] == \
        ["none", "gates", "chunk:1"]


# A budget under which, at T=13 and B=4, `none` does not fit and `gates`
# does (I, H = 4, 5; one layer).
SAVING_NOTHING_BUDGET = {"gru": 6000, "mgu": 5000}


@pytest.mark.parametrize("cell", ["gru", "mgu"])
def test_budget_library_of_every_shape_saving_nothing(cell):
    """A GRU or MGU of one layer saves nothing beyond its outputs under
    `gates`, so that plan has an empty saved region: the budget's library
    of every shape compiles, and at each shape (`none` where it fits,
    `gates` at T=13, B=4) gives its reference's results and `none`'s
    bits."""
    remat = f"budget:{SAVING_NOTHING_BUDGET[cell]}"
    ours, ref = make_pair(cell, I, H, 1, remat=remat)
    none, _ = make_pair(cell, I, H, 1)
    [directory] = rnnc.precompile([dict(
        cell=cell, seq_len=None, batch=None, input_size=I, hidden_size=H,
        layers=1, remat=remat)])
    assert ours._serves_every_shape(torch.device("cpu"))
    with open(os.path.join(directory, "manifest.json")) as f:
        variants = {v["plan"]: v for v in json.load(f)["remat_variants"]}
    peaks = {plan: max(_dynamic.Size(c)(_dynamic.call_symbols(
        13, 4, v.get("rows") or 1, v.get("chunk"))) for c in v["peak"])
        for plan, v in variants.items() if plan in ("none", "gates")}
    assert peaks["none"] > SAVING_NOTHING_BUDGET[cell] >= peaks["gates"]
    for k, (T, B) in enumerate([(1, 1), (11, 1), (13, 4)]):
        assert_episodes(cell, ours, ref, T, B, 1, k)
        x, h0, c0, gy, ghn = inputs(T, B, I, H, 1, seed=k)
        is_init = resets(T, B, k)
        assert_same_bits({
            plan: loss_and_grads(cell, module, x, h0, c0, gy, ghn, is_init)
            for plan, module in (("none", none), ("budget", ours))})


@pytest.mark.parametrize("kwargs, match", [
    (dict(seq_len=None, batch=3), "both None"),
    (dict(seq_len=4, batch=None), "both None"),
    (dict(seq_len=None, batch=None, wavefront=True), "wavefront"),
])
def test_every_shape_refused_where_it_cannot_be(kwargs, match):
    with pytest.raises(RNNCError, match=match):
        compile_model(**dict(dict(cell="lstm", input_size=3, hidden_size=4,
                                  layers=1), **kwargs))


def test_arena_grows_to_the_largest_shape():
    """Calls at a larger shape, then a smaller one: the scratch arena is
    kept at the largest size and each call gets its first bytes; results
    as torch.nn's at both."""
    ours, ref = make_pair("lstm", I, 11, 1)
    lib = ours._library(1, 1, torch.device("cpu"), torch.float32, "zero")
    with torch.no_grad():
        for T, B in ((30, 20), (3, 2), (30, 20)):
            x = torch.randn(T, B, I)
            y, _ = ours(x)
            y_ref, _ = ref(x)
            assert rel_err(y, y_ref) < 1e-5
            arena = lib._local.arenas["infer"]
            assert arena.numel() == lib.at(30, 20)["infer"].arena_bytes
