"""Random calls of rnnc.torch's modules: the fuzzer's cases and the objects
they stand for.

Shared by the Hypothesis test (python/tests/test_torch_fuzz.py) and the
campaign script (tools/fuzz/fuzz-torch.py); torch_fuzz_oracle.py runs and
judges a case (`run_case`).

A case is plain JSON data (`build_case`): the cell, the constructor's
keyword arguments (sizes, num_layers, bias, batch_first, dropout,
bidirectional, proj_size, dtype, device, remat, storage; values drawn from
sensible ones, boundary ones and nonsense), a conversion of the module
(.double(), .half(), .to("meta"), frozen parameters, a weight that is not
contiguous, ...), train or eval mode, the grad mode (grad, no_grad,
inference_mode), an optional CPU autocast, and the call's arguments as
tensor specifications (shape, dtype, layout: contiguous, transposed,
strided, expanded or at an offset; requires_grad, fill) or other objects:
input, hx, is_init, reset_state.
The draws come from a `Source`: `RandomSource` (a seeded random.Random,
the campaign) or `HypothesisSource` (Hypothesis's `data`, the test).
Special values (numpy ints, tensors, bytes, torch dtypes and devices) are
tagged objects {"@": kind, "v": value}: `decode` makes their objects, and
`Maker` the call's arguments, each tensor from its own seeded generator.
"""

import json
import math

import numpy as np
import torch
from torch import nn

import rnnc.torch as rt
from rnnc import _cells

# The dialect's cells (python/rnnc/_cells.py) and their rnnc.torch module
# classes; the cells of two states (h, c) take torch.nn.LSTM's interface,
# the others torch.nn.GRU's.
CELLS = _cells.NAMES
CLASSES = {name: getattr(rt, name.upper()) for name in CELLS}
LSTM_LIKE = tuple(c.name for c in _cells.CELLS if len(c.states) == 2)

# The sizes drawn for modules that are called: every new shape compiles a
# library, so the CI profile draws from fewer.
PROFILES = {
    "campaign": dict(T=[1, 2, 3, 4], B=[1, 2, 3, 4], I=[1, 2, 3, 4],
                     H=[1, 2, 3, 4], L=[1, 2]),
    "ci": dict(T=[3, 1], B=[2, 1], I=[2], H=[3], L=[1, 2]),
}
# Modules with more layers are made (the limit is checked) but not called.
MAX_RUN_LAYERS = 2


def tag(kind, value):
    return {"@": kind, "v": value}


NAN, INF = float("nan"), float("inf")
BAD_SIZES = [0, -1, True, False, 2.0, "3", None, tag("np.int64", 2),
             tag("tensor", 2), 2 ** 40]
BAD_LAYERS = [0, -1, 3, 64, 65, True, 2.0, None, tag("np.int64", 2)]
GOOD_REMAT = ["none", "gates", "chunk:1", "chunk:2", "budget:9000",
              "budget:100000"]
BAD_REMAT = ["chunk:0", "chunk:-1", "chunk:x", "chunk:", "chunk:99",
             "chunk:2:3", "budget:0", "budget:-1", "budget:1",
             "budget:99999999999999999999", "budget:1e9", "", "sometimes",
             "NONE", " none", "none\n", "gates\x00", "--layers=9", None, 3,
             tag("bytes", "none")]
DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32",
          "uint8", "int8", "bool", "complex64")


# --------------------------------------------------------------------------
# Sources of draws
# --------------------------------------------------------------------------

class RandomSource:
    """Draws from a seeded random.Random (the campaign)."""

    def __init__(self, rng):
        self.rng = rng

    def choice(self, values):
        return self.rng.choice(values)

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)

    def rare(self, p):
        return self.rng.random() < p


class HypothesisSource:
    """Draws from Hypothesis's `data` (st.data()): each shrinks towards the
    first value of a choice and towards False for `rare`."""

    def __init__(self, data):
        from hypothesis import strategies as st
        self.data, self.st = data, st

    def choice(self, values):
        return self.data.draw(self.st.sampled_from(values))

    def integer(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))

    def rare(self, p):
        return self.data.draw(self.st.integers(0, 999)) >= 1000 - round(
            1000 * p)


def pick(src, good, bad, p_bad):
    """One of `bad` with odds p_bad, else one of `good`."""
    return src.choice(bad) if bad and src.rare(p_bad) else src.choice(good)


# --------------------------------------------------------------------------
# Building a case
# --------------------------------------------------------------------------

def _tensor(src, shape, dtype, *, rg=None, layouts=0.12, fill=None,
            device=0.02):
    """A tensor specification: `rg` (None: drawn for floating dtypes) is
    requires_grad, `layouts` the odds of a non-contiguous (or offset)
    layout, `fill` randn / large / zeros for numbers, or a Bernoulli
    probability for bool."""
    spec = {"kind": "tensor", "shape": list(shape), "dtype": dtype}
    spec["layout"] = pick(src, ["contiguous"],
                          ["transposed", "strided", "expanded", "offset"],
                          layouts)
    floating = dtype in ("float32", "float64", "float16", "bfloat16")
    if dtype == "bool":
        spec["fill"] = src.choice([0.0, 0.25, 0.6, 1.0]) if fill is None \
            else fill
    else:
        spec["fill"] = pick(src, ["randn"], ["large", "zeros"], 0.06) \
            if fill is None else fill
    if rg is None:
        rg = floating and src.rare(0.5)
    spec["requires_grad"] = bool(rg and floating)
    spec["device"] = pick(src, ["cpu"], ["meta"], device)
    return spec


def tensor_spec(shape, dtype="float32", *, requires_grad=False,
                layout="contiguous", fill=None, device="cpu"):
    """A tensor specification written by hand (for explicit cases)."""
    if fill is None:
        fill = 0.0 if dtype == "bool" else "randn"
    return {"kind": "tensor", "shape": list(shape), "dtype": dtype,
            "layout": layout, "fill": fill, "requires_grad": requires_grad,
            "device": device}


def _perturb(src, shape):
    """A shape near `shape` that is not it."""
    shape = list(shape)
    how = src.choice(["grow", "shrink", "drop", "add", "swap"])
    if how == "drop" and shape:
        return shape[1:]
    if how == "add":
        return shape + [1]
    if how == "swap" and len(shape) >= 2 and shape[0] != shape[-1]:
        return [shape[-1]] + shape[1:-1] + [shape[0]]
    if not shape:
        return [1]
    i = src.integer(0, len(shape) - 1)
    shape[i] = shape[i] - 1 if how == "shrink" and shape[i] > 0 else \
        shape[i] + 1
    return shape


def _other_float(dtype):
    return "float64" if dtype == "float32" else "float32"


def _effective(value, default=2):
    """The size a constructor argument stands for, for shaping the call
    (an invalid one makes construction fail or the call irrelevant)."""
    if isinstance(value, bool):
        return int(value) or default
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, dict) and value.get("@") in ("np.int64", "tensor"):
        return value["v"]
    return default


def _truthy(value):
    if isinstance(value, dict):
        return True
    return bool(value)


def build_case(src, profile="campaign"):
    """A random case (JSON data) from `src`."""
    P = PROFILES[profile]
    case = {"seed": src.integer(0, 2 ** 31 - 1), "cell": src.choice(CELLS)}
    cell = case["cell"]

    I = pick(src, P["I"], BAD_SIZES, 0.04)
    H = pick(src, P["H"], BAD_SIZES, 0.04)
    L = pick(src, P["L"], BAD_LAYERS, 0.06)
    ctor = {"input_size": I, "hidden_size": H}
    if L != 1 or src.rare(0.3):
        ctor["num_layers"] = L
    optional = (
        ("bias", 0.3, [True, False], [0, 1, None, "yes"], 0.1),
        ("batch_first", 0.35, [False, True], [0, 1, None, "no"], 0.1),
        ("dropout", 0.25, [0.0, 0, 0.3],
         [1, 1.0, -0.1, NAN, INF, True, "0.1", None, tag("tensor", 0.5)],
         0.2),
        ("bidirectional", 0.04, [False], [True, 1, "no"], 0.6),
        ("proj_size", 0.04, [0], [1, 2, -1, True, None, 1.5], 0.6),
        ("dtype", 0.3, [None, tag("dtype", "float32"),
                        tag("dtype", "float64")],
         [tag("dtype", "float16"), tag("dtype", "bfloat16"),
          tag("dtype", "int32"), tag("dtype", "complex64"), "float32"],
         0.15),
        ("device", 0.2, [None, "cpu", tag("device", "cpu")],
         ["meta", "cuda", "gpu", "cpu:0", "cpu:1", "", 0, -1,
          tag("device", "meta")], 0.25),
        ("remat", 0.5, GOOD_REMAT, BAD_REMAT, 0.15),
        ("storage", 0.2, [None, "bf16"],
         ["f32", "fp16", "", "BF16", 16, "bfloat16"], 0.2),
    )
    for name, p_in, good, bad, p_bad in optional:
        if src.rare(p_in):
            ctor[name] = pick(src, good, bad, p_bad)
    case["ctor"] = ctor
    case["convert"] = pick(src, [None], ["double", "float", "half",
                                         "bfloat16", "meta", "freeze",
                                         "strided_weight"], 0.1)
    case["train"] = src.choice([True, False])
    case["grad"] = src.choice(["grad", "grad", "no_grad", "inference_mode"])
    case["autocast"] = pick(src, [None], ["bfloat16", "float16"], 0.08)
    case["repeat"] = src.rare(0.15)

    I, H, L = _effective(I), _effective(H), _effective(L, 1)
    if L > MAX_RUN_LAYERS or I > 4 or H > 4:
        case["call"] = None  # made, not called
        return case
    bf = _truthy(ctor.get("batch_first", False))
    dt = ctor.get("dtype")
    mdtype = dt["v"] if isinstance(dt, dict) else "float32"
    mdtype = {"double": "float64", "float": "float32", "half": "float16",
              "bfloat16": "bfloat16"}.get(case["convert"], mdtype)
    if mdtype not in ("float32", "float64", "float16", "bfloat16"):
        mdtype = "float32"

    # The input.
    T = pick(src, P["T"], [0], 0.04)
    B = pick(src, P["B"], [0], 0.05)
    F = pick(src, [I], [I + 1, I - 1], 0.04)
    rank = pick(src, [3, 3, 3, 3, 2], [1, 4, 0], 0.04)
    shape = {3: [B, T, F] if bf else [T, B, F], 2: [T, F], 1: [F],
             4: [2, T, B, F], 0: []}[rank]
    p_low = 0.5 if case["autocast"] else 0.06
    xdtype = pick(src, [mdtype], ["float16", "bfloat16"], p_low)
    xdtype = pick(src, [xdtype], ["int64", _other_float(mdtype), "bool",
                                  "complex64"], 0.05)
    x = _tensor(src, shape, xdtype)
    form = pick(src, ["tensor"], ["list", "none", "numpy", "packed",
                                  "scalar"], 0.04)
    if form != "tensor":
        x = {"kind": form, "of": x}
    call = {"input": x}
    unbatched = rank == 2

    def state(shape_):
        s = shape_ if not src.rare(0.06) else _perturb(src, shape_)
        d = pick(src, [mdtype], [_other_float(mdtype), "float16", "int64"],
                 0.05)
        return _tensor(src, s, d, layouts=0.08)

    # hx.
    sshape = [L, H] if unbatched else [L, B, H]
    if src.rare(0.6):
        if cell in LSTM_LIKE:
            how = pick(src, ["tuple", "tuple", "list"],
                       ["single", "len1", "len3", "none_c", "nontensor"],
                       0.1)
            if how in ("tuple", "list"):
                hx = {"kind": how, "items": [state(sshape), state(sshape)]}
            elif how == "single":
                hx = state(sshape)
            elif how == "len1":
                hx = {"kind": "tuple", "items": [state(sshape)]}
            elif how == "len3":
                hx = {"kind": "tuple", "items": [state(sshape)] * 3}
            elif how == "none_c":
                hx = {"kind": "tuple", "items": [state(sshape), None]}
            else:
                hx = {"kind": "tuple", "items": [
                    {"kind": "list", "of": state(sshape)}, state(sshape)]}
        else:
            how = pick(src, ["tensor"], ["tuple1", "list", "nontensor"],
                       0.08)
            hx = state(sshape)
            if how == "tuple1":
                hx = {"kind": "tuple", "items": [hx]}
            elif how == "list":
                hx = {"kind": "list", "items": [hx]}
            elif how == "nontensor":
                hx = {"kind": "list", "of": hx}
        call["hx"] = hx

    # is_init.
    ishape = [T] if unbatched else ([B, T] if bf else [T, B])
    if src.rare(0.55):
        if src.rare(0.12):
            how = src.choice(["dtype", "shape", "nontensor", "scalar"])
            if how == "dtype":
                init = _tensor(src, ishape, src.choice(
                    ["uint8", "int64", "float32", "int8"]), fill="zeros")
            elif how == "shape":
                init = _tensor(src, _perturb(src, ishape), "bool")
            elif how == "scalar":
                init = _tensor(src, [], "bool")
            else:
                init = {"kind": "list", "of": _tensor(src, ishape, "bool")}
        else:
            init = _tensor(src, ishape, "bool", layouts=0.2)
        call["is_init"] = init

    # reset_state.
    if src.rare(0.45 if "is_init" in call else 0.1):
        step = [L, T, H] if unbatched else ([L, B, T, H] if bf else
                                            [L, T, B, H])
        column = [L, H] if unbatched else [L, B, H]
        f1 = src.choice([step, column])
        if cell in LSTM_LIKE:
            how = pick(src, ["tuple", "list"],
                       ["single", "len1", "len3", "mixed", "nontensor"],
                       0.12)
            if how in ("tuple", "list"):
                reset = {"kind": how, "items": [state(f1), state(f1)]}
            elif how == "single":
                reset = state(f1)
            elif how == "len1":
                reset = {"kind": "tuple", "items": [state(f1)]}
            elif how == "len3":
                reset = {"kind": "tuple", "items": [state(f1)] * 3}
            elif how == "mixed":
                reset = {"kind": "tuple", "items": [state(step),
                                                    state(column)]}
            else:
                reset = {"kind": "tuple", "items": [
                    state(f1), {"kind": "list", "of": state(f1)}]}
        else:
            how = pick(src, ["tensor"], ["tuple1", "list", "nontensor"],
                       0.1)
            reset = state(f1)
            if how == "tuple1":
                reset = {"kind": "tuple", "items": [reset]}
            elif how == "list":
                reset = {"kind": "list", "items": [reset]}
            elif how == "nontensor":
                reset = {"kind": "list", "of": reset}
        call["reset_state"] = reset
    case["call"] = call
    return case


# --------------------------------------------------------------------------
# Making the objects of a case
# --------------------------------------------------------------------------

def decode(value):
    """A constructor argument's object from its JSON form."""
    if isinstance(value, dict) and "@" in value:
        kind, v = value["@"], value["v"]
        if kind == "np.int64":
            return np.int64(v)
        if kind == "tensor":
            return torch.tensor(v)
        if kind == "bytes":
            return v.encode()
        if kind == "dtype":
            return getattr(torch, v)
        if kind == "device":
            return torch.device(v)
        raise ValueError(f"unknown tag {kind}")
    return value


class Maker:
    """Makes the call's objects from their specifications, each tensor's
    values from its own seeded generator (so a case is reproducible)."""

    def __init__(self, seed):
        self.seed = seed
        self.count = 0
        self.tensors = []   # every tensor made: (tensor, spec)

    def generator(self):
        self.count += 1
        return torch.Generator().manual_seed(self.seed * 1009 + self.count)

    def tensor(self, spec):
        shape = list(spec["shape"])
        dtype = getattr(torch, spec["dtype"])
        layout = spec["layout"]
        base = list(shape)
        if layout == "transposed" and len(shape) >= 2:
            base[0], base[-1] = base[-1], base[0]
        elif layout == "strided" and shape:
            base[-1] *= 2
        elif layout == "expanded" and shape:
            base[0] = 1
        elif layout == "offset":
            base = [math.prod(shape) + 1]
        g = self.generator()
        fill = spec["fill"]
        if dtype == torch.bool:
            t = torch.rand(base, generator=g, dtype=torch.float64) < fill
        elif fill == "zeros":
            t = torch.zeros(base, dtype=torch.float64)
        else:
            t = torch.randn(base, generator=g, dtype=torch.float64)
            if fill == "large":
                t = t * 1000
        if dtype.is_floating_point or dtype.is_complex:
            t = t.to(dtype)
        elif dtype != torch.bool:
            t = (t * 3).round().to(dtype)
        if spec["requires_grad"]:
            t.requires_grad_(True)
        if layout == "transposed" and len(shape) >= 2:
            t = t.transpose(0, -1)
        elif layout == "strided" and shape:
            t = t[..., ::2]
        elif layout == "expanded" and shape:
            t = t.expand(shape)
        elif layout == "offset":
            t = t[1:].view(shape)
        if spec["device"] != "cpu":
            t = t.to(spec["device"])
        self.tensors.append((t, spec))
        return t

    def make(self, spec):
        if spec is None:
            return None
        kind = spec["kind"]
        if kind == "tensor":
            return self.tensor(spec)
        if kind in ("tuple", "list") and "items" in spec:
            items = [self.make(s) for s in spec["items"]]
            return tuple(items) if kind == "tuple" else items
        # Wrapped tensors are made on the CPU (their values are read).
        inner = self.make(dict(spec["of"], device="cpu"))
        if kind == "list":
            return inner.tolist()
        if kind == "numpy":
            return inner.detach().numpy() if inner.device.type == "cpu" and \
                inner.dtype != torch.bfloat16 else inner.tolist()
        if kind == "packed":
            if inner.dim() != 3 or 0 in inner.shape[:2]:
                return inner.tolist()
            return nn.utils.rnn.pack_padded_sequence(
                inner, [inner.shape[0]] * inner.shape[1])
        if kind == "scalar":
            return 1.0
        if kind == "none":
            return None
        raise ValueError(f"unknown spec kind {kind}")


def case_json(case):
    return json.dumps(case, sort_keys=True)
