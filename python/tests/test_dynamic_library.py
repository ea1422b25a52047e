"""A library for every sequence length and batch size (`rnn-compile
--dynamic`) through rnnc.library: `Library.at(T, B)` runs it at each shape
with the buffers its sizes entry points give. At every shape its outputs
match torch.nn.LSTM/GRU, and its outputs and gradients are bitwise those
of the library compiled for that shape; shapes it cannot take are one
RNNCError.

Needs `rnn-compile` (RNNC_COMPILE or PATH).
"""

import subprocess

import numpy as np
import pytest
import torch

from rnnc import _abi, library
from rnnc.library import RNNCError

I, H, L = 5, 7, 2
SHAPES = [(1, 1), (9, 5), (33, 3), (4, 64)]


def compile_library(directory, cell, shape=None):
    command = [library.find_compiler(), f"--preset={cell}",
               f"--input-size={I}", f"--hidden-size={H}", f"--layers={L}",
               "-o", str(directory)]
    command += ["--dynamic"] if shape is None else [
        f"--seq-len={shape[0]}", f"--batch={shape[1]}"]
    subprocess.run(command, check=True, capture_output=True)
    return library.load(str(directory))


@pytest.fixture(scope="module", params=["lstm", "gru"])
def cell(request):
    return request.param


@pytest.fixture(scope="module")
def dynamic(cell, tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp(f"{cell}-dynamic"), cell)


def reference(cell, seed=0):
    torch.manual_seed(seed)
    make = torch.nn.LSTM if cell == "lstm" else torch.nn.GRU
    return make(I, H, num_layers=L)


def infer_tensors(module, cell, T, B, seed=1):
    gen = torch.Generator().manual_seed(seed)
    tensors = {"x": torch.randn(T, B, I, generator=gen),
               "is_init": torch.zeros(T, B, dtype=torch.bool),
               "h0": torch.randn(L, B, H, generator=gen),
               "y": torch.empty(T, B, H),
               "h_n": torch.empty(L, B, H)}
    if cell == "lstm":
        tensors.update(c0=torch.randn(L, B, H, generator=gen),
                       c_n=torch.empty(L, B, H))
    for name, param in module.named_parameters():
        tensors[name] = param.detach().clone()
    return tensors


@pytest.mark.parametrize("shape", SHAPES)
def test_matches_torch_nn_at_every_shape(cell, dynamic, shape):
    T, B = shape
    module = reference(cell)
    tensors = infer_tensors(module, cell, T, B)
    _abi._call(dynamic.at(T, B), "infer", tensors, L, torch.device("cpu"))
    with torch.no_grad():
        state = (tensors["h0"], tensors["c0"]) if cell == "lstm" else \
            tensors["h0"]
        y, final = module(tensors["x"], state)
    torch.testing.assert_close(tensors["y"], y)
    h_n = final[0] if cell == "lstm" else final
    torch.testing.assert_close(tensors["h_n"], h_n)
    if cell == "lstm":
        torch.testing.assert_close(tensors["c_n"], final[1])


def train_tensors(library_at, cell, T, B):
    """Inputs, parameters and cotangents of the fused training entry point
    (random, seeded by the shape), with its outputs and gradients empty."""
    gen = torch.Generator().manual_seed(T * 1000 + B)
    tensors = {}
    for arg in library_at["train"].args:
        if arg.name in tensors or arg.name == "arena":
            continue
        shape = ([L] if arg.layer is not None else []) + list(arg.shape)
        if arg.dtype == "bool":
            tensors[arg.name] = torch.rand(shape, generator=gen) < 0.2
        elif arg.role in ("input", "parameter", "cotangent"):
            tensors[arg.name] = torch.randn(shape, generator=gen)
        else:
            tensors[arg.name] = torch.full(shape, float("nan"))
    return tensors


@pytest.mark.parametrize("shape", [(1, 1), (9, 5), (33, 3)])
def test_bits_of_the_library_for_that_shape(cell, dynamic, shape,
                                            tmp_path):
    T, B = shape
    static = compile_library(tmp_path / "static", cell, shape)
    results = []
    for lib in (dynamic.at(T, B), static.at(T, B)):
        tensors = train_tensors(lib, cell, T, B)
        _abi._call(lib, "train", tensors, L, torch.device("cpu"))
        results.append(tensors)
    written = [a.name for a in static["train"].args
               if a.role in ("output", "gradient")]
    assert written
    for name in written:
        assert not results[1][name].isnan().any(), name
        assert torch.equal(results[0][name], results[1][name]), name


def test_sizes_follow_the_shape(dynamic):
    small, large = dynamic.at(3, 2), dynamic.at(6, 4)
    x_small = next(a for a in small["infer"].args if a.name == "x")
    x_large = next(a for a in large["infer"].args if a.name == "x")
    assert x_small.shape == (3, 2, I) and x_large.shape == (6, 4, I)
    assert 0 < small["fwd"].saved_bytes < large["fwd"].saved_bytes
    assert small.saved_bytes == small["bwd"].saved_bytes
    assert 0 < small["train"].arena_bytes <= large["train"].arena_bytes


@pytest.mark.parametrize("T, B", [(0, 1), (1, 0), (-2, 3), (True, 2),
                                  (1.5, 2)])
def test_refuses_shapes_it_cannot_take(dynamic, T, B):
    with pytest.raises(RNNCError, match="must be a positive integer"):
        dynamic.at(T, B)


def test_shapes_are_integers_also_once_held(dynamic):
    """A shape the library already holds is checked as a new one is (a
    float or a bool equal to it is refused); NumPy integers are shapes."""
    held = dynamic.at(3, 2)
    assert dynamic.at(np.int64(3), np.int32(2)) is held
    for T, B in ((3.0, 2), (3, True)):
        with pytest.raises(RNNCError, match="must be a positive integer"):
            dynamic.at(T, B)


def test_refuses_sizes_beyond_63_bits(dynamic):
    with pytest.raises(RNNCError, match="does not fit in 63 bits"):
        dynamic.at(2 ** 40, 2 ** 40)


def test_entry_points_need_a_shape(dynamic):
    with pytest.raises(RNNCError, match=r"takes T and B: call it through "
                                        r"Library.at\(T, B\)"):
        dynamic["infer"].call([0] * len(dynamic["infer"].specs))


def test_static_library_is_its_own_shape(cell, tmp_path):
    static = compile_library(tmp_path / "static", cell, (4, 3))
    assert static.at(4, 3) is static
    assert static.at(np.int64(4), 3) is static
    with pytest.raises(RNNCError, match="T must be a positive integer"):
        static.at(4.0, 3)
    with pytest.raises(RNNCError, match=r"compiled for T, B = \(4, 3\), "
                                        r"not \(5, 3\)"):
        static.at(5, 3)
