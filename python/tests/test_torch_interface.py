"""rnnc.torch's modules beyond their results against torch.nn: argument
checking and its errors, the surface code written for torch.nn.LSTM / GRU
touches (parameters, all_weights, torch.func.functional_call), constructor
options (storage, gemm_rows, wavefront) and the module classes made from
the cell table, the compiled libraries the modules load (the cache, BLAS
threads, graph replay, the ops' state buffers, rnn-compile's layer limit),
the README's training example and the import's version check.

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

from helpers import (ALL_CELLS, NN_CELLS, inputs, loss_and_grads, make_pair,
                     rel_err, state_of)


# --------------------------------------------------------------------------
# Argument checking and its errors
# --------------------------------------------------------------------------

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
    # Unbatched: the shape as given, not as a batch of one.
    with pytest.raises(RNNCError, match=r"at least one step, got shape "
                                        r"\[0, 3\]$"):
        lstm(torch.randn(0, 3))
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
# torch.nn's module surface, constructor options and module classes
# --------------------------------------------------------------------------

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


@pytest.mark.parametrize("cell", NN_CELLS)
@pytest.mark.parametrize("bias", [True, False])
def test_flat_weights_of_torch_nn(cell, bias):
    """torch.nn.RNNBase's `_flat_weights_names`, `_all_weights` and
    `_flat_weights`, which code written for nn.LSTM / nn.GRU reads, are
    torch.nn's names and the module's parameters as it holds them now:
    after an assignment and under a parametrization."""
    cls, ref_cls = getattr(rt, cell.upper()), getattr(torch.nn, cell.upper())
    ours, ref = cls(3, 4, 2, bias=bias), ref_cls(3, 4, 2, bias=bias)
    assert ours._flat_weights_names == ref._flat_weights_names
    assert ours._all_weights == ref._all_weights
    assert len(ours._flat_weights) == len(ref._flat_weights)
    assert all(p is getattr(ours, n) for n, p in
               zip(ref._flat_weights_names, ours._flat_weights))
    ours.weight_hh_l1 = torch.nn.Parameter(torch.randn(4 * ours._gates, 4))
    assert ours._flat_weights[ref._flat_weights_names.index(
        "weight_hh_l1")] is ours.weight_hh_l1
    torch.nn.utils.parametrizations.weight_norm(ours, "weight_ih_l0")
    want = ours.weight_ih_l0
    assert torch.equal(ours._flat_weights[0], want)


@pytest.mark.parametrize("cell", NN_CELLS)
def test_parameters_take_the_default_dtype(cell):
    """Without dtype=, the parameters are PyTorch's default dtype, as
    torch.nn's are: under torch.set_default_dtype(torch.float64) the
    module runs float64 inputs as torch.nn's does; a bf16 default is
    refused as dtype=torch.bfloat16 is."""
    cls, ref_cls = getattr(rt, cell.upper()), getattr(torch.nn, cell.upper())
    default = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        torch.manual_seed(0)
        ref = ref_cls(3, 4, 2)
        ours = cls(3, 4, 2)
        assert all(p.dtype == torch.float64 for p in ours.parameters())
        ours.load_state_dict(ref.state_dict())
        x = torch.randn(5, 2, 3)
        with torch.no_grad():
            assert rel_err(ours(x)[0], ref(x)[0]) < 1e-12
        torch.set_default_dtype(torch.bfloat16)
        with pytest.raises(RNNCError, match="float32 and float64, got "
                                            "torch.bfloat16"):
            cls(3, 4)
    finally:
        torch.set_default_dtype(default)


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


@pytest.mark.parametrize("cell", NN_CELLS)
def test_without_biases_as_torch_nn_is_built(cell):
    """bias=False holds what torch.nn's module holds, no buffers: built on
    the meta device and made real (to_empty, reset_parameters), loaded
    with assign=True from meta, and under functional_call(strict=True)
    it gives torch.nn's bias=False results (zero biases, whatever memory
    to_empty hands out)."""
    I, H, L = 3, 4, 2
    cls = getattr(rt, cell.upper())
    ref_cls = getattr(torch.nn, cell.upper())
    torch.manual_seed(0)
    ref = ref_cls(I, H, L, bias=False)
    x, h0, c0, _, _ = inputs(5, 2, I, H, L)
    hx = state_of(cell, h0, c0)
    with torch.no_grad():
        want = ref(x, hx)[0]
    with torch.device("meta"):
        ours = cls(I, H, L, bias=False)
    assert list(ours.named_buffers()) == list(ref.named_buffers()) == []
    ours.to_empty(device="cpu")
    ours.reset_parameters()
    ours.load_state_dict(ref.state_dict())
    with torch.no_grad():
        assert rel_err(ours(x, hx)[0], want) < 1e-5
    with torch.device("meta"):
        ours = cls(I, H, L, bias=False)
    ours.load_state_dict(ref.state_dict(), assign=True)
    with torch.no_grad():
        assert rel_err(ours(x, hx)[0], want) < 1e-5
        y, _ = torch.func.functional_call(
            ours, dict(ref.named_parameters()), (x, hx), strict=True)
    assert rel_err(y, want) < 1e-5
    # .double() through every parameter's .data: one dtype, as torch.nn.
    for p in ours.parameters():
        p.data = p.data.double()
    with torch.no_grad():
        y = ours(x.double(), state_of(cell, h0.double(), c0.double()))[0]
    assert y.dtype == torch.float64 and rel_err(y, want.double()) < 1e-5


def test_parameter_errors_name_the_parameter():
    """A parameter set to None, or of another dtype than the rest, is an
    error naming it."""
    x = torch.randn(4, 2, 3)
    lstm = rt.LSTM(3, 4, 2)
    lstm.bias_hh_l1 = None
    with pytest.raises(RNNCError, match="bias_hh_l1 is NoneType, not a "
                                        "tensor"):
        lstm(x)
    lstm = rt.LSTM(3, 4, 2)
    lstm.weight_hh_l1.data = lstm.weight_hh_l1.data.double()
    with pytest.raises(RNNCError, match=re.escape(
            "the parameters have different dtypes: weight_ih_l0 is "
            "torch.float32, weight_hh_l1 torch.float64")):
        lstm(x)


@pytest.mark.parametrize("cell", NN_CELLS)
def test_parameters_that_are_not_contiguous(cell):
    """A parameter that is a transposed or padded view runs as torch.nn
    runs it (copied for the call), and its gradient reaches it."""
    ours, ref = make_pair(cell, 3, 4, 2)
    for module in (ours, ref):
        w = module.weight_hh_l0.detach()
        module.weight_hh_l0 = torch.nn.Parameter(w.t().contiguous().t())
        padded = torch.zeros(w.shape[0], w.shape[1] + 3)
        padded[:, :w.shape[1]] = module.weight_hh_l1.detach()
        module.weight_hh_l1 = torch.nn.Parameter(padded[:, :w.shape[1]])
        assert not module.weight_hh_l0.is_contiguous()
        assert not module.weight_hh_l1.is_contiguous()
    x, h0, c0, gy, ghn = inputs(5, 2, 3, 4, 2)
    y, _, grads = loss_and_grads(cell, ours, x, h0, c0, gy, ghn)
    y_ref, _, grads_ref = loss_and_grads(cell, ref, x, h0, c0, gy, ghn)
    assert rel_err(y, y_ref) < 1e-5
    # Those of x, the states and every parameter.
    assert len(grads) == len(grads_ref)
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g, g_ref) < 1e-5


def test_layout_and_unbatched_errors_name_the_tensor():
    """A sparse input or parameter, and an unbatched input's is_init of
    another length, are errors naming them."""
    lstm = rt.LSTM(3, 4)
    x = torch.randn(5, 2, 3)
    with pytest.raises(RNNCError, match="input must be a dense \\(strided\\) "
                                        "tensor, got torch.sparse_coo"):
        lstm(x.to_sparse())
    lstm.weight_hh_l0 = torch.nn.Parameter(lstm.weight_hh_l0.detach()
                                           .to_sparse())
    with pytest.raises(RNNCError, match="weight_hh_l0 must be a dense "
                                        "\\(strided\\) tensor"):
        lstm(x)
    with pytest.raises(RNNCError, match=re.escape(
            "is_init of an unbatched (2-D) input must be 1-D [T] = [5], got "
            "shape [4]")):
        rt.LSTM(3, 4)(x[:, 0], is_init=torch.zeros(4, dtype=torch.bool))


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_packed_sequence_is_one_error_naming_it(cell):
    """torch.nn takes a PackedSequence; rnnc refuses it, with or without
    states, in one TypeError saying what to pass instead."""
    module = getattr(rt, cell.upper())(3, 4)
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.randn(5, 2, 3),
                                                     [5, 3])
    h0 = torch.zeros(1, 2, 4)
    for hx in (None, state_of(cell, h0, h0)):
        with pytest.raises(TypeError, match="rnnc does not take a "
                                            "PackedSequence: pass the "
                                            "padded tensor, and is_init"):
            module(packed, hx)


def test_states_and_masks_that_are_not_dense_are_named():
    """A sparse h0, c0, is_init or reset state, batched or unbatched, is
    an error naming it, as a sparse input is."""
    x = torch.randn(5, 2, 3)
    dense, none = torch.zeros(1, 2, 4), torch.zeros(5, 2, dtype=torch.bool)
    sparse = dense.to_sparse()
    calls = {
        "h0": lambda: rt.GRU(3, 4)(x, sparse),
        "c0": lambda: rt.LSTM(3, 4)(x, (dense, sparse)),
        "is_init": lambda: rt.GRU(3, 4)(x, is_init=none.to_sparse()),
        "h_reset": lambda: rt.GRU(3, 4)(x, is_init=none,
                                        reset_state=sparse),
        "c_reset": lambda: rt.LSTM(3, 4)(x, is_init=none,
                                         reset_state=(dense, sparse)),
    }
    unbatched = {
        "h0": lambda: rt.GRU(3, 4)(x[:, 0], sparse[:, 0]),
        "is_init": lambda: rt.GRU(3, 4)(x[:, 0], is_init=none[:, 0]
                                        .to_sparse()),
    }
    for name, call in [*calls.items(), *unbatched.items()]:
        with pytest.raises(RNNCError, match=re.escape(
                f"{name} must be a dense (strided) tensor, got "
                f"torch.sparse_coo")):
            call()


@pytest.mark.parametrize("cell", NN_CELLS)
def test_batched_gradients(cell):
    """autograd's own batched gradients (is_grads_batched, a vectorized
    jacobian), which run no vmap rule, are refused naming them and what
    batches them; torch.func.jacrev gives torch.nn's jacobian."""
    ours, ref = make_pair(cell, 3, 4, 2)
    x = torch.randn(4, 2, 3, requires_grad=True)
    with pytest.raises(RNNCError, match="is_grads_batched=True"):
        torch.autograd.grad(ours(x)[0], x, torch.randn(3, 4, 2, 4),
                            is_grads_batched=True)
    with pytest.raises(RNNCError, match="torch.func.jacrev"):
        torch.autograd.functional.jacobian(lambda a: ours(a)[0], x,
                                           vectorize=True)
    jacobian = torch.func.jacrev(lambda a: ours(a)[0])(x)
    jacobian_ref = torch.func.jacrev(lambda a: ref(a)[0])(x)
    assert rel_err(jacobian, jacobian_ref) < 1e-5


# --------------------------------------------------------------------------
# The compiled libraries
# --------------------------------------------------------------------------

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


def test_compile_cache_reuses_the_library(monkeypatch, tmp_path):
    """A cached library is loaded, not compiled again, by a process that
    has not loaded it. In one that has, the same request is answered
    without looking for the compiler; a changed compiler setting is looked
    up, and with no compiler found the cached library serves."""
    from rnnc import library
    # A cache of the test's own: it lists the directory.
    monkeypatch.setenv("RNNC_CACHE_DIR", str(tmp_path / "cache"))
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
    # A cache of the test's own: it damages an entry and lists the
    # directory.
    monkeypatch.setenv("RNNC_CACHE_DIR", str(tmp_path / "cache"))
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


# --------------------------------------------------------------------------
# The README's example and the import
# --------------------------------------------------------------------------

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
