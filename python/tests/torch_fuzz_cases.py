"""Random calls of rnnc.torch's modules and the oracle that judges them.

Shared by the Hypothesis test (python/tests/test_torch_fuzz.py) and the
campaign script (tools/fuzz/fuzz-torch.py).

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
tagged objects {"@": kind, "v": value}.

`run_case` makes the module and the call and judges the result. The
contract: every call either runs and matches or raises an `RNNCError`.
  * Construction and call either succeed or raise RNNCError; any other
    exception is a finding (EXCEPTION), as is an RNNCError raised while
    handling another exception (CHAINED: two tracebacks).
  * A call that runs is compared with a float64 reference written here from
    torch.nn.LSTMCell / GRUCell step by step (a cell torch.nn does not have
    as one of them on mapped weights: the MGU as a GRUCell, the CIFG as an
    LSTMCell; see `_NN_ROWS`), which zeroes the state entering step t of
    column b where is_init[t, b] is set, or enters the given reset state.
    The reference refuses inputs that mean nothing in torch.nn's interface
    and rnnc's documented extensions (a non-tensor, a rank other than 2 or
    3, no steps, a non-floating input, states of the wrong shape, a non-bool
    is_init, reset states of the wrong form, ...): a call of rnnc that runs
    on one is a finding (ACCEPTED). Otherwise outputs must have the
    reference's structure and shapes (SHAPE), the parameters' dtype where
    every tensor has it and no autocast is on (DTYPE), and its values within
    a tolerance set by the lowest precision involved (WRONG); with training
    dropout only shapes and finiteness are checked.
  * With gradients the outputs must require grad exactly when an input or
    a parameter does (NOGRAD), and the gradients of a random cotangent with
    respect to every tensor argument and parameter must match the
    reference's (GRAD); a backward that raises is a finding (BACKWARD).
  * A call must leave its arguments and the parameters unchanged (MUTATED),
    and a second call (`repeat`, without training dropout) must give the
    same bits (REPEAT).
  * Where the reference applies without resets (no is_init, or all false),
    torch.nn.LSTM / GRU with the same constructor arguments and weights
    (mapped as the reference maps them) is called as well: its outcome is
    recorded (`Outcome.nn`), and where both run, rnnc's outputs must match
    torch.nn's in shape, in dtype (without autocast) and in values (NN).
"""

import contextlib
import json
import math
import traceback
import warnings

import numpy as np
import torch
from torch import nn

import rnnc.torch as rt
from rnnc import _cells
from rnnc.library import RNNCError

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
LOW_PRECISION = (torch.float16, torch.bfloat16)


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


# --------------------------------------------------------------------------
# The reference
# --------------------------------------------------------------------------

class Meaningless(Exception):
    """An input that means nothing in torch.nn's interface and rnnc's
    documented extensions."""


def _floating(t, name, shape=None):
    if not isinstance(t, torch.Tensor):
        raise Meaningless(f"{name} is not a tensor")
    if not t.is_floating_point():
        raise Meaningless(f"{name} is {t.dtype}")
    if t.device.type != "cpu":
        raise Meaningless(f"{name} is on {t.device}")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise Meaningless(f"{name} has shape {list(t.shape)}, not "
                          f"{list(shape)}")
    return t


def _leaf(t):
    """A float64 leaf with t's values (the reference's argument)."""
    return t.detach().to(torch.float64).requires_grad_(True)


def interpret(cell, module, bias, batch_first, x, hx, is_init, reset):
    """The call as the reference runs it: time-major float64 leaves, or
    Meaningless. Returns a dict with x [T, B, I], h0/c0 [L, B, H], is_init
    [T, B] (or None), hr/cr (step [L, T, B, H] or column [L, B, H]), the
    form, `leaves` (call tensor -> reference leaf) and `unbatched`."""
    I, H, L = module.input_size, module.hidden_size, module.num_layers
    if not isinstance(x, torch.Tensor):
        raise Meaningless("input is not a tensor")
    _floating(x, "input")
    if x.dim() not in (2, 3):
        raise Meaningless(f"input has rank {x.dim()}")
    unbatched = x.dim() == 2
    leaves = {}

    def leaf(t):
        if id(t) not in leaves:
            leaves[id(t)] = (t, _leaf(t))
        return leaves[id(t)][1]

    xr = leaf(x)
    if unbatched:
        xr = xr.unsqueeze(1)
    elif batch_first:
        xr = xr.transpose(0, 1)
    T, B, F = xr.shape
    if T == 0:
        raise Meaningless("input has no steps")
    if F != I:
        raise Meaningless(f"input has {F} features, not {I}")
    for p in module.parameters():
        _floating(p, "a parameter")
    sshape = (L, H) if unbatched else (L, B, H)

    def as_batched(t):
        return t.unsqueeze(-2) if unbatched else t

    if hx is None:
        h0 = torch.zeros(L, B, H, dtype=torch.float64)
        c0 = torch.zeros(L, B, H, dtype=torch.float64)
    elif cell in LSTM_LIKE:
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise Meaningless(f"hx of {cell} (two states) is not a pair")
        h0 = as_batched(leaf(_floating(hx[0], "h0", sshape)))
        c0 = as_batched(leaf(_floating(hx[1], "c0", sshape)))
    else:
        h0 = as_batched(leaf(_floating(hx, "h0", sshape)))
        c0 = None

    init = None
    if is_init is not None:
        if not isinstance(is_init, torch.Tensor) or \
                is_init.dtype != torch.bool or is_init.device.type != "cpu":
            raise Meaningless("is_init is not a bool tensor")
        want = (T,) if unbatched else ((B, T) if batch_first else (T, B))
        if tuple(is_init.shape) != want:
            raise Meaningless(f"is_init has shape {list(is_init.shape)}")
        init = is_init.reshape(T, 1) if unbatched else (
            is_init.t() if batch_first else is_init)

    hr = cr = None
    form = "zero"
    if reset is not None:
        if cell in LSTM_LIKE:
            if not isinstance(reset, (tuple, list)) or len(reset) != 2:
                raise Meaningless(f"reset_state of {cell} (two states) is "
                                  f"not a pair")
            given = list(reset)
        else:
            if not isinstance(reset, torch.Tensor):
                raise Meaningless("reset_state is not a tensor")
            given = [reset]
        if unbatched:
            step, column = (L, T, H), (L, H)
        else:
            step = (L, B, T, H) if batch_first else (L, T, B, H)
            column = (L, B, H)
        forms, states = set(), []
        for t in given:
            _floating(t, "a reset state")
            if tuple(t.shape) == step:
                forms.add("step")
                r = leaf(t)
                if unbatched:
                    r = r.unsqueeze(2)
                elif batch_first:
                    r = r.transpose(1, 2)
            elif tuple(t.shape) == column:
                forms.add("column")
                r = as_batched(leaf(t))
            else:
                raise Meaningless(f"a reset state has shape "
                                  f"{list(t.shape)}")
            states.append(r)
        if len(forms) != 1:
            raise Meaningless("reset states of two forms")
        form = forms.pop()
        hr = states[0]
        cr = states[1] if cell in LSTM_LIKE else None
    return dict(x=xr, h0=h0, c0=c0, is_init=init, hr=hr, cr=cr, form=form,
                leaves=leaves, unbatched=unbatched, T=T, B=B)


def reference_params(cell, module, bias):
    """float64 leaves of the module's parameters, by name (zero biases
    without bias)."""
    out = {}
    for name, p in module.named_parameters():
        out[name] = _leaf(p)
    if not bias:
        for k in range(module.num_layers):
            for kind in ("bias_ih", "bias_hh"):
                out[f"{kind}_l{k}"] = torch.zeros(
                    module._gates * module.hidden_size, dtype=torch.float64)
    return out


# Each cell's gate blocks (of H rows) as those of the torch.nn cell that
# runs it (LSTMCell for a cell of two states, GRUCell for one), applied to
# every weight and bias; None: the cell is torch.nn's own. The MGU is the
# GRU with r = f and z = 1 - f = sigmoid(-a_f): its f, n rows give r = f,
# z = -f, n. The CIFG (f, g, o) is the LSTM with i = 1 - f = sigmoid(-a_f):
# i = -f, f, g, o.
_NN_ROWS = {
    "lstm": None,
    "gru": None,
    "mgu": lambda f, n: (f, -f, n),
    "cifg": lambda f, g, o: (-f, f, g, o),
}
assert set(_NN_ROWS) == set(CELLS), (
    f"the fuzz oracle has no torch.nn form of a cell of the dialect: "
    f"_NN_ROWS in torch_fuzz_cases.py has {sorted(_NN_ROWS)}, the dialect "
    f"{sorted(CELLS)}")


def _nn_rows(cell, w):
    """A weight or bias of the cell in the rows of the torch.nn cell that
    runs it (`_NN_ROWS`)."""
    rows = _NN_ROWS[cell]
    if rows is None:
        return w
    return torch.cat(rows(*w.chunk(_cells.BY_NAME[cell].gates, 0)), 0)


def reference(cell, params, r):
    """y [T, B, H], h_n, c_n [L, B, H] in float64, step by step with
    torch.nn.LSTMCell / GRUCell (on the weights in its rows)."""
    x, init = r["x"], r["is_init"]
    T, B = r["T"], r["B"]
    L = r["h0"].shape[0]
    H = r["h0"].shape[2]
    h = list(r["h0"].unbind(0))
    two = cell in LSTM_LIKE
    c = list(r["c0"].unbind(0)) if two else None
    cells = []
    for k in range(L):
        width = x.shape[2] if k == 0 else H
        module = (nn.LSTMCell if two else nn.GRUCell)(
            width, H, dtype=torch.float64)
        weights = {kind: _nn_rows(cell, params[f"{kind}_l{k}"])
                   for kind in ("weight_ih", "weight_hh", "bias_ih",
                                "bias_hh")}
        cells.append((module, weights))
    ys = []
    for t in range(T):
        if init is not None:
            m = init[t].reshape(B, 1)
            for k in range(L):
                if r["form"] == "zero":
                    rh = torch.zeros_like(h[k])
                    rc = torch.zeros_like(h[k])
                elif r["form"] == "step":
                    rh = r["hr"][k, t]
                    rc = r["cr"][k, t] if two else None
                else:
                    rh = r["hr"][k]
                    rc = r["cr"][k] if two else None
                h[k] = torch.where(m, rh, h[k])
                if two:
                    c[k] = torch.where(m, rc, c[k])
        inp = x[t]
        for k, (module, weights) in enumerate(cells):
            if two:
                h[k], c[k] = torch.func.functional_call(
                    module, weights, (inp, (h[k], c[k])))
            else:
                h[k] = torch.func.functional_call(module, weights,
                                                  (inp, h[k]))
            inp = h[k]
        ys.append(inp)
    y = torch.stack(ys)
    return y, torch.stack(h), (torch.stack(c) if two else None)


# --------------------------------------------------------------------------
# Running and judging a case
# --------------------------------------------------------------------------

class Outcome:
    """What a case did: `status` constructed (made, not called), ran,
    refused (RNNCError: `stage` construct, call) or finding (`kind`,
    `message`); `nn` torch.nn's outcome where it was asked; `notes`."""

    def __init__(self):
        self.status = None
        self.stage = None
        self.kind = None
        self.message = None
        self.nn = None
        self.notes = []
        self.trace = None   # the traceback of an exception found
        self.checked = []   # what a call that ran was compared on

    def finding(self, kind, message):
        if self.status != "finding":
            self.status, self.kind, self.message = "finding", kind, message
            if kind in ("EXCEPTION", "BACKWARD", "CHAINED"):
                self.trace = traceback.format_exc()

    def as_dict(self):
        return {k: getattr(self, k) for k in
                ("status", "stage", "kind", "message", "nn", "notes",
                 "trace", "checked")}

    def __repr__(self):
        return json.dumps(self.as_dict())


def _one_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def _judge_exception(out, stage, e):
    """An exception of construction or call: RNNCError is a refusal, the
    rest findings."""
    if isinstance(e, RNNCError):
        context = e.__context__
        if context is not None and not e.__suppress_context__ and \
                not isinstance(context, RNNCError):
            out.finding("CHAINED", f"{stage}: {_one_line(e)} (while "
                        f"handling {_one_line(context)})")
            return
        if not str(e).strip():
            out.finding("EMPTY", f"{stage}: RNNCError without a message")
            return
        out.status, out.stage, out.message = "refused", stage, str(e)
        return
    out.finding("EXCEPTION", f"{stage}: {_one_line(e)}")


def _structure(cell, result):
    """(y, h_n, c_n) of a module's result, or a reason it has another
    structure."""
    if not isinstance(result, tuple) or len(result) != 2:
        return None, f"result is {type(result).__name__}, not a pair"
    y, state = result
    if cell in LSTM_LIKE:
        if not isinstance(state, tuple) or len(state) != 2:
            return None, "the state is not a pair (h_n, c_n)"
        return (y, *state), None
    return (y, state, None), None


def _contexts(case):
    stack = contextlib.ExitStack()
    mode = case["grad"]
    if mode == "no_grad":
        stack.enter_context(torch.no_grad())
    elif mode == "inference_mode":
        stack.enter_context(torch.inference_mode())
    if case["autocast"]:
        stack.enter_context(torch.autocast(
            "cpu", dtype=getattr(torch, case["autocast"])))
    return stack


def _convert(module, how):
    if how in ("double", "float", "half", "bfloat16"):
        return getattr(module, how)()
    if how == "meta":
        return module.to("meta")
    if how == "freeze":
        module.requires_grad_(False)
    if how == "strided_weight":
        # weight_hh_l0 with its values in a column-major layout.
        p = module.weight_hh_l0
        p.data = p.data.t().contiguous().t()
    return module


def _snapshot(values):
    return [(t, t.detach().clone()) for t in values
            if isinstance(t, torch.Tensor) and t.device.type == "cpu"]


def _changed(snapshot):
    return any(not torch.equal(t.detach(), before) for t, before in snapshot)


def _low_precision(case, module, tensors):
    """Whether bf16 or fp16 takes part: a tensor or parameter of that dtype,
    autocast, or bf16 storage."""
    dtypes = {p.dtype for p in module.parameters()}
    dtypes |= {t.dtype for t in tensors if isinstance(t, torch.Tensor)
               and t.is_floating_point()}
    return bool(dtypes & set(LOW_PRECISION)) or bool(case["autocast"]) or \
        module.storage == "bf16"


def _tolerance(case, module, tensors):
    """The largest error relative to the reference's magnitude (at least
    `floor`) that a float32 (float64, low precision) computation may have:
    (tolerance, floor); tolerance None where only shapes and finiteness
    can be checked. Large values (|x| > 100) lose float32 digits by
    cancellation in the gate sums, which the floor of 1 admits."""
    dtypes = {p.dtype for p in module.parameters()}
    dtypes |= {t.dtype for t in tensors if isinstance(t, torch.Tensor)
               and t.is_floating_point()}
    low = _low_precision(case, module, tensors)
    large = any(isinstance(t, torch.Tensor) and t.is_floating_point() and
                t.numel() and t.detach().abs().max().item() > 100
                for t in tensors)
    floor = 1.0 if large else 1e-2
    if low:
        return None if large else 4e-2, floor
    if dtypes == {torch.float64}:
        return (1e-8 if large else 1e-10), floor
    return (1e-3 if large else 1e-4), floor


def _mismatch(ours, ref, tol, floor=1e-2):
    """Why `ours` does not match `ref` (float64), or None."""
    if not isinstance(ours, torch.Tensor):
        return f"is {type(ours).__name__}, not a tensor"
    if tuple(ours.shape) != tuple(ref.shape):
        return f"has shape {list(ours.shape)}, the reference's " \
               f"{list(ref.shape)}"
    if not ours.is_floating_point():
        return f"is {ours.dtype}"
    if ours.numel() == 0:
        return None
    a = ours.detach().to(torch.float64)
    finite = torch.isfinite(ref)
    if not torch.isfinite(a[finite]).all():
        return "is not finite where the reference is"
    if tol is None:
        return None
    scale = max(ref[finite].abs().max().item() if finite.any() else 0.0,
                floor)
    err = (a[finite] - ref[finite]).abs().max().item() if finite.any() \
        else 0.0
    if not err <= tol * scale:
        return f"differs by {err:.3g} (max |ref| {scale:.3g}, tolerance " \
               f"{tol:g})"
    return None


def _nn_module(case, module, ctor):
    """torch.nn's module with rnnc's constructor arguments and weights
    (mapped into its rows: the MGU as a GRU, the CIFG as an LSTM), or the
    exception that made it fail."""
    cell = case["cell"]
    kwargs = {k: decode(v) for k, v in ctor.items()
              if k not in ("remat", "storage")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = (nn.LSTM if cell in LSTM_LIKE else nn.GRU)(**kwargs)
    ref = _convert(ref, case["convert"])
    ref.train(case["train"])
    with torch.no_grad():
        for name, p in ref.named_parameters():
            p.copy_(_nn_rows(cell, getattr(module, name)))
    return ref


def run_case(case, out=None):
    """Runs a case (see the module's docstring); returns its Outcome."""
    out = out or Outcome()
    cell, ctor = case["cell"], case["ctor"]
    kwargs = {k: decode(v) for k, v in ctor.items()}
    torch.manual_seed(case["seed"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = CLASSES[cell](**kwargs)
        module = _convert(module, case["convert"])
        module.train(case["train"])
    except Exception as e:
        _judge_exception(out, "construct", e)
        return out
    if case["call"] is None:
        out.status = "constructed"
        return out

    maker = Maker(case["seed"])
    spec = case["call"]
    x = maker.make(spec["input"])
    hx = maker.make(spec.get("hx"))
    is_init = maker.make(spec.get("is_init"))
    reset = maker.make(spec.get("reset_state"))
    call_tensors = [t for t, _ in maker.tensors]
    snapshot = _snapshot(call_tensors + list(module.parameters()))
    call_kwargs = {}
    if "is_init" in spec:
        call_kwargs["is_init"] = is_init
    if "reset_state" in spec:
        call_kwargs["reset_state"] = reset
    args = (x,) if "hx" not in spec else (x, hx)
    try:
        with _contexts(case), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = module(*args, **call_kwargs)
    except Exception as e:
        _judge_exception(out, "call", e)
        _check_nn(case, module, ctor, x, hx, is_init, None, out)
        return out
    out.status, out.stage = "ran", "call"
    if _changed(snapshot):
        out.finding("MUTATED", "the call changed an argument or a "
                    "parameter")
    if case.get("repeat") and not (module.training and module.dropout):
        try:
            with _contexts(case), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                again = module(*args, **call_kwargs)
        except Exception as e:
            out.finding("REPEAT", f"a second call raised {_one_line(e)}")
            return out
        first, _ = _structure(cell, result)
        second, _ = _structure(cell, again)
        if first and second and not all(
                a is b or (isinstance(a, torch.Tensor) and
                           isinstance(b, torch.Tensor) and
                           a.shape == b.shape and
                           torch.equal(a.detach(), b.detach()))
                for a, b in zip(first, second)):
            out.finding("REPEAT", "a second call gave other results")
    _check(case, module, ctor, x, hx, is_init, reset, result, out)
    return out


def _check(case, module, ctor, x, hx, is_init, reset, result, out):
    cell = case["cell"]
    bias = _truthy(decode(ctor.get("bias", True)))
    batch_first = _truthy(decode(ctor.get("batch_first", False)))
    outputs, why = _structure(cell, result)
    if outputs is None:
        out.finding("SHAPE", why)
        return
    try:
        r = interpret(cell, module, bias, batch_first, x, hx, is_init, reset)
    except Meaningless as e:
        out.finding("ACCEPTED", f"ran on an input without meaning: {e}")
        _check_nn(case, module, ctor, x, hx, is_init, None, out)
        return
    params = reference_params(cell, module, bias)
    with torch.enable_grad(), torch.autocast("cpu", enabled=False):
        y, h_n, c_n = reference(cell, params, r)
    if r["unbatched"]:
        y, h_n = y.squeeze(1), h_n.squeeze(1)
        c_n = c_n.squeeze(1) if c_n is not None else None
    elif batch_first:
        y = y.transpose(0, 1)
    refs = [y, h_n] + ([c_n] if cell in LSTM_LIKE else [])
    ours = list(outputs[:len(refs)])
    names = ("y", "h_n", "c_n")
    tensors = [t for t, _ in r["leaves"].values()]
    dropping = module.training and module.num_layers > 1 and \
        module.dropout > 0
    tol, floor = _tolerance(case, module, tensors)
    if dropping:
        tol = None
    for name, a, b in zip(names, ours, refs):
        why = _mismatch(a, b.detach(), tol, floor)
        if why:
            out.finding("SHAPE" if "shape" in why or "not a tensor" in why
                        else "WRONG", f"{name} {why}")
            return
    out.checked.append("values" if tol is not None else "shapes")
    if r["is_init"] is not None and r["is_init"].any():
        out.checked.append("resets")
    dtypes = {p.dtype for p in module.parameters()} | {
        t.dtype for t in tensors}
    if len(dtypes) == 1 and not case["autocast"]:
        want = dtypes.pop()
        for name, a in zip(names, ours):
            if a.dtype != want:
                out.finding("DTYPE", f"{name} is {a.dtype}, the inputs "
                            f"and parameters {want}")
                return
    comparable = r["is_init"] is None or not r["is_init"].any()
    if comparable and not dropping:
        _check_nn(case, module, ctor, x, hx, is_init, ours, out)
    # torch.nn runs the same call (its weights are rnnc's, in its rows; a
    # mapped cell's through `_NN_ROWS`): its gradients' error is a
    # yardstick for rnnc's.
    nn_call = (ctor, x, hx) if comparable and not dropping else None
    _check_gradients(case, module, params, r, ours, refs, tol, floor, out,
                     nn_call)


def _nn_gradient_errors(case, module, nn_call, r, names, cots, grads_ref):
    """torch.nn's error against the float64 reference, per gradient in
    `grads_ref`'s order (the call's leaves that require grad, then the
    parameters `names`), for the same call with the same cotangents;
    None where torch.nn cannot run it. The parameters' gradients are with
    respect to the cell's own (mapped into torch.nn's rows in the graph,
    `_NN_ROWS`), so that a mapped cell's have the reference's shapes."""
    ctor, x, hx = nn_call
    cell = case["cell"]
    clones = {id(t): t.detach().clone().requires_grad_(t.requires_grad)
              for t, _ in r["leaves"].values()}

    def same(value):
        if isinstance(value, torch.Tensor):
            return clones.get(id(value), value)
        if isinstance(value, (tuple, list)):
            return type(value)(same(v) for v in value)
        return value

    try:
        ref = _nn_module(case, module, ctor)
        args = (same(x),) if "hx" not in case["call"] else (same(x),
                                                               same(hx))
        own = {n: getattr(module, n).detach().to(
            getattr(ref, n).dtype, copy=True).requires_grad_()
            for n in names}
        mapped = {n: _nn_rows(cell, p) for n, p in own.items()}
        with _contexts(case), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outputs, _ = _structure(cell, torch.func.functional_call(
                ref, mapped, args))
            loss = sum((a * c).sum() for a, c in zip(outputs, cots)
                       if a is not None)
            wrt = [clones[id(t)] for t, _ in r["leaves"].values()
                   if t.requires_grad]
            wrt += [own[n] for n in names]
            grads = torch.autograd.grad(loss, wrt, allow_unused=True)
    except Exception:
        return None
    errors = []
    for a, b in zip(grads, grads_ref):
        if a is None or b is None or not b.numel():
            errors.append(0.0)
            continue
        errors.append((a.detach().to(torch.float64) - b.detach()).abs()
                      .max().item())
    return errors


def _check_gradients(case, module, params, r, ours, refs, tol, floor, out,
                     nn_call=None):
    wants_grad = case["grad"] == "grad" and (
        any(p.requires_grad for p in module.parameters()) or
        any(t.requires_grad for t, _ in r["leaves"].values()))
    mode = "enabled" if case["grad"] == "grad" else "disabled"
    for name, a in zip(("y", "h_n", "c_n"), ours):
        if a.requires_grad != wants_grad:
            out.finding("NOGRAD", f"{name}.requires_grad is "
                        f"{a.requires_grad} with gradients {mode} and "
                        f"{'some' if wants_grad else 'no'} input requiring "
                        f"them")
            return
    if not wants_grad:
        return
    g = torch.Generator().manual_seed(case["seed"] + 7)
    cots = [torch.randn(t.shape, generator=g, dtype=torch.float64)
            .to(a.dtype) for t, a in zip(refs, ours)]
    wrt = [t for t, _ in r["leaves"].values() if t.requires_grad]
    wrt_ref = [leaf for t, leaf in r["leaves"].values() if t.requires_grad]
    names = [n for n, p in module.named_parameters() if p.requires_grad]
    wrt += [getattr(module, n) for n in names]
    wrt_ref += [params[n] for n in names]
    try:
        with _contexts(case):
            loss = sum((a * c).sum() for a, c in zip(ours, cots))
            grads = torch.autograd.grad(loss, wrt, allow_unused=True)
    except Exception as e:
        out.finding("BACKWARD", _one_line(e))
        return
    with torch.autocast("cpu", enabled=False):
        loss_ref = sum((b * c.to(torch.float64)).sum()
                       for b, c in zip(refs, cots))
        grads_ref = torch.autograd.grad(loss_ref, wrt_ref, allow_unused=True)
    labels = ["argument %d" % i for i in range(len(wrt) - len(names))] + \
        names
    if tol is not None and _low_precision(case, module, wrt):
        # bf16 gradients carry errors of the size of the backward's
        # largest quantities, not of each gradient's own: measured at
        # T=3, B=3, I=4, H=1..3, L=1..2 under CPU bf16 autocast, torch.nn's
        # gradients are off float64 by up to 7.5% of the largest gradient
        # (rnnc's by up to 5%). The yardstick is that scale, with twice
        # torch.nn's worst.
        tol = 0.15
        floor = max([floor] + [b.detach().abs().max().item()
                               for b in grads_ref
                               if b is not None and b.numel()])
    # Large inputs (|x| > 100, floor 1): a gradient loses digits to
    # cancellation in sums of large terms, as many as torch.nn's own
    # gradient does (seen in float32: a GRU's weight_hh_l0 at |h0| = 1651
    # off float64 by 0.0078 in rnnc and in torch.nn alike). Each gradient
    # may be off by twice torch.nn's error where that exceeds the
    # tolerance.
    nn_errors = None
    if tol is not None and floor >= 1.0 and nn_call is not None and \
            not _low_precision(case, module, wrt):
        nn_errors = _nn_gradient_errors(case, module, nn_call, r, names,
                                        cots, grads_ref)
    for i, (label, t, a, b) in enumerate(zip(labels, wrt, grads,
                                             grads_ref)):
        a = torch.zeros_like(t) if a is None else a
        b = torch.zeros_like(t, dtype=torch.float64) if b is None else b
        allowed = tol
        if nn_errors is not None and b.numel():
            scale = max(b.detach().abs().max().item(), floor)
            allowed = max(tol, 2 * nn_errors[i] / scale)
        why = _mismatch(a, b.detach(), allowed, floor)
        if why:
            out.finding("GRAD", f"the gradient of {label} "
                        f"{list(t.shape)} {why}")
            return
    out.checked.append("gradients")


def _no_resets(is_init):
    """Whether is_init asks for no reset (None, or an all-false bool tensor
    on the CPU)."""
    return is_init is None or (
        isinstance(is_init, torch.Tensor) and is_init.dtype == torch.bool
        and is_init.device.type == "cpu" and not is_init.any())


def _check_nn(case, module, ctor, x, hx, is_init, ours, out):
    """Calls torch.nn with the same arguments (without resets) and records
    its outcome; where both ran, compares shapes, dtypes and values."""
    if not _no_resets(is_init):
        out.nn = "n/a"
        return
    try:
        ref = _nn_module(case, module, ctor)
    except Exception as e:
        out.nn = "construct raised " + _one_line(e)
        return
    try:
        args = (x,) if "hx" not in case["call"] else (x, hx)
        with _contexts(case), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = ref(*args)
    except Exception as e:
        out.nn = "raised " + _one_line(e)
        return
    out.nn = "ran"
    if ours is None:
        return
    theirs, why = _structure(case["cell"], result)
    tol, floor = _tolerance(case, module, [x] + list(ours))
    for name, a, b in zip(("y", "h_n", "c_n"), ours, theirs):
        if b is None:
            continue
        if tuple(a.shape) != tuple(b.shape):
            out.finding("NN", f"{name} has shape {list(a.shape)}, "
                        f"torch.nn's {list(b.shape)}")
            return
        if a.dtype != b.dtype:
            if case["autocast"]:
                out.notes.append(f"{name} is {a.dtype}, torch.nn's "
                                 f"{b.dtype} (autocast)")
            else:
                out.finding("NN", f"{name} is {a.dtype}, torch.nn's "
                            f"{b.dtype}")
                return
        why = _mismatch(a, b.detach().to(torch.float64), tol, floor)
        if why:
            out.finding("NN", f"{name} {why} (against torch.nn)")
            return
    out.checked.append("torch.nn")


def case_json(case):
    return json.dumps(case, sort_keys=True)
