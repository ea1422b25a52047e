"""The fuzz oracle: runs a case of torch_fuzz_cases.py and judges the
result.

`run_case` makes the module and the call and judges the result. The
contract: every call either runs and matches or raises an `RNNCError`.
  * Construction and call either succeed or raise RNNCError; any other
    exception is a finding (EXCEPTION), as is an RNNCError raised while
    handling another exception (CHAINED: two tracebacks).
  * A call that runs is compared with a float64 reference written from
    torch.nn.LSTMCell / GRUCell step by step (torch_fuzz_reference.py: a
    cell torch.nn does not have as one of them on mapped weights, the MGU
    as a GRUCell, the CIFG as an LSTMCell), which zeroes the state
    entering step t of column b where is_init[t, b] is set, or enters the
    given reset state.
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
import traceback
import warnings

import torch
from torch import nn

from rnnc.library import RNNCError

from torch_fuzz_cases import CLASSES, LSTM_LIKE, Maker, _truthy, decode
from torch_fuzz_reference import (Meaningless, _nn_rows, interpret,
                                  reference, reference_params)


LOW_PRECISION = (torch.float16, torch.bfloat16)


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
