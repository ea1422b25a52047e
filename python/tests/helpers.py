"""What the test modules share: the dialect's cells and each one's float
reference, the remat policies, module pairs (rnnc's and the reference
holding the same weights), inputs, losses and their gradients, episode
references, and the dropout masks' independent Philox
(test/Integration/Inputs/philox.py, shared with the lit tests)."""

import importlib.util
import os
import threading

import torch

import rnnc.torch as rt
from rnnc import _cells


def _load_philox():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "test", "Integration", "Inputs", "philox.py")
    spec = importlib.util.spec_from_file_location("philox", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


philox = _load_philox()


class _Mapped(torch.nn.Module):
    """A cell run by a torch.nn module (`_base`) on its parameters mapped
    by `_map` (the `_gates` row blocks of each parameter to the base's).
    Parameters have the cell's names and shapes (as its rnnc.torch
    module); autograd carries the gradients back through the map."""

    _base = None
    _gates = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False):
        super().__init__()
        # Not a submodule: its own parameters are replaced on every call.
        self._module = [self._base(input_size, hidden_size, num_layers,
                                   bias=bias, batch_first=batch_first)]
        for name, p in self._module[0].named_parameters():
            self.register_parameter(name, torch.nn.Parameter(
                torch.empty(hidden_size * self._gates, *p.shape[1:])))
        bound = 1.0 / hidden_size ** 0.5
        for p in self.parameters():
            torch.nn.init.uniform_(p, -bound, bound)

    def forward(self, x, hx=None):
        mapped = {name: torch.cat(self._map(*p.chunk(self._gates, 0)), 0)
                  for name, p in self.named_parameters()}
        return torch.func.functional_call(self._module[0], mapped, (x, hx))


class MguAsGru(_Mapped):
    """The minimal gated unit run by torch.nn.GRU: it is the GRU with
    r = f and z = 1 - f = sigmoid(-a_f), so the GRU's r and n rows are the
    MGU's f and n rows and its z rows the negated f rows."""

    _base = torch.nn.GRU
    _gates = 2

    @staticmethod
    def _map(f, n):
        return f, -f, n


class CifgAsLstm(_Mapped):
    """The CIFG LSTM run by torch.nn.LSTM: it is the LSTM with
    i = 1 - f = sigmoid(-a_f), so the LSTM's f, g, o rows are the CIFG's
    and its i rows the negated f rows."""

    _base = torch.nn.LSTM
    _gates = 3

    @staticmethod
    def _map(f, g, o):
        return -f, f, g, o


# The dialect's cells (python/rnnc/_cells.py, generated from the cell
# records): every test that runs over cells takes them from here, so that
# a new cell is covered by every suite, or fails where it has no reference.
ALL_CELLS = _cells.NAMES


# The cells of two states (h, c), with torch.nn.LSTM's interface.
LSTM_LIKE = tuple(c.name for c in _cells.CELLS if len(c.states) == 2)


# The cells torch.nn has itself (nn.LSTM, nn.GRU): for tests whose
# reference or peer is torch.nn's own module, or its surface.
NN_CELLS = tuple(n for n in ALL_CELLS if hasattr(torch.nn, n.upper()))


# Each cell's rnnc.torch module class and its float reference: torch.nn's
# own module, or one running the cell on torch.nn's with mapped weights.
CELLS = {name: (getattr(rt, name.upper()), reference) for name, reference in
         (("lstm", torch.nn.LSTM), ("gru", torch.nn.GRU),
          ("mgu", MguAsGru), ("cifg", CifgAsLstm))}


assert set(CELLS) == set(ALL_CELLS), (
    f"a cell of the dialect has no reference here (or one here is no "
    f"longer the dialect's): the dialect's {sorted(ALL_CELLS)}, "
    f"helpers.py's CELLS {sorted(CELLS)}")


# Every kind of remat policy. One chunk: the tests that run them all are at
# shapes (T <= 8, B = 3) whose GEMM blocks are all T steps (the default
# rows, 256 on the CPU and 16384 on CUDA), and a chunk of K steps runs
# whole blocks, so any K < T runs the same plan, chunks of T; each K is
# another compile of the library of every shape. The lit suite's
# remat-bitwise tests check K against blocks of 1, a few and T steps.
POLICIES = ["none", "gates", "chunk:2", "budget:9000"]


def rel_err(a, b):
    scale = b.abs().max().item()
    return (a - b).abs().max().item() / max(scale, 1e-30)


def make_pair(cell, I, H, L, remat="none", batch_first=False, seed=0,
              dropout=0.0, storage=None):
    """rnnc's layer (with `dropout` and `storage`) and torch.nn's (without),
    holding the same parameters."""
    ours_cls, ref_cls = CELLS[cell]
    torch.manual_seed(seed)
    ref = ref_cls(I, H, L, batch_first=batch_first)
    ours = ours_cls(I, H, L, batch_first=batch_first, remat=remat,
                    dropout=dropout, storage=storage)
    ours.load_state_dict(ref.state_dict())
    return ours, ref


def state_of(cell, h0, c0):
    return (h0, c0) if cell in LSTM_LIKE else h0


def final(cell, state):
    return state[0] if cell in LSTM_LIKE else state


def reset_wrt(cell, hr, cr):
    """The reset states whose gradients are checked: none, h_reset, or
    h_reset and c_reset for a cell of two states."""
    if hr is None:
        return []
    return [hr, cr] if cell in LSTM_LIKE else [hr]


def loss_and_grads(cell, module, x, h0, c0, gy, ghn, is_init=None, hr=None,
                   cr=None):
    """sum(y * gy) + sum(h_n * ghn) (+ c_n), and its gradients with respect
    to x, h0 (c0), every parameter and, with reset states hr (cr), theirs."""
    kwargs = {} if is_init is None else {"is_init": is_init}
    if hr is not None:
        kwargs["reset_state"] = (hr, cr) if cell in LSTM_LIKE else hr
    y, state = module(x, state_of(cell, h0, c0), **kwargs)
    loss = (y * gy).sum() + (final(cell, state) * ghn).sum()
    wrt = [x, h0]
    if cell in LSTM_LIKE:
        loss = loss + (state[1] * ghn.flip(0)).sum()
        wrt.append(c0)
    wrt += list(module.parameters()) + reset_wrt(cell, hr, cr)
    return y, loss, torch.autograd.grad(loss, wrt)


def inputs(T, B, I, H, L, batch_first=False, seed=1):
    g = torch.Generator().manual_seed(seed)
    shape = (B, T, I) if batch_first else (T, B, I)
    x = torch.randn(shape, generator=g, requires_grad=True)
    h0 = torch.randn(L, B, H, generator=g, requires_grad=True)
    c0 = torch.randn(L, B, H, generator=g, requires_grad=True)
    yshape = (B, T, H) if batch_first else (T, B, H)
    gy = torch.randn(yshape, generator=g)
    ghn = torch.randn(L, B, H, generator=g)
    return x, h0, c0, gy, ghn


def episodes_reference(cell, ref, x, is_init, h0, c0, entered=None):
    """y, h_n, c_n of a batch with resets, run episode by episode on
    torch.nn: each column is split where is_init is set, and an episode
    starting at such a step s of column b starts from zeros, or from
    `entered(s, b)` ((h, c), each [L, 1, H])."""
    T, B, _ = x.shape
    ys, hns, cns = [], [], []
    for b in range(B):
        starts = [0] + [t for t in range(1, T) if is_init[t, b]] + [T]
        h = h0[:, b:b + 1]
        c = c0[:, b:b + 1]
        col = []
        for s, e in zip(starts[:-1], starts[1:]):
            if is_init[s, b]:
                h, c = (entered(s, b) if entered else
                        (torch.zeros_like(h), torch.zeros_like(c)))
            out, state = ref(x[s:e, b:b + 1], state_of(cell, h, c))
            if cell in LSTM_LIKE:
                h, c = state
            else:
                h = state
            col.append(out)
        ys.append(torch.cat(col, 0))
        hns.append(h)
        cns.append(c)
    return torch.cat(ys, 1), torch.cat(hns, 1), torch.cat(cns, 1)


def episodes_loss_and_grads(cell, ref, x, h0, c0, gy, ghn, is_init, hr=None,
                            cr=None):
    """loss_and_grads on episodes_reference: y, the loss and its gradients
    with respect to x, h0 (c0), every parameter of `ref` and the reset
    states hr (cr), if any (time-major: [L, T, B, H] per step, [L, B, H]
    per column), from which the episodes that start with a reset start."""
    entered = None
    if hr is not None:
        def entered(s, b):
            pick = (lambda r: r[:, s, b:b + 1]) if hr.dim() == 4 else \
                (lambda r: r[:, b:b + 1])
            # A GRU's c is unused.
            return pick(hr), pick(cr if cell in LSTM_LIKE else hr)
    y_ref, h_ref, c_ref = episodes_reference(cell, ref, x, is_init, h0, c0,
                                             entered)
    loss_ref = (y_ref * gy).sum() + (h_ref * ghn).sum()
    wrt = [x, h0]
    if cell in LSTM_LIKE:
        loss_ref = loss_ref + (c_ref * ghn.flip(0)).sum()
        wrt.append(c0)
    return y_ref, loss_ref, torch.autograd.grad(
        loss_ref, wrt + list(ref.parameters()) + reset_wrt(cell, hr, cr))


def assert_same_bits(results):
    """Every policy's (y, loss, grads) in `results` are `none`'s bits."""
    y0, _, grads0 = results["none"]
    for remat, (y, _, grads) in results.items():
        assert torch.equal(y, y0), remat
        for g, g0 in zip(grads, grads0):
            assert torch.equal(g, g0), remat


def assert_bf16_close(y, grads, y_ref, grads_ref):
    """Outputs and gradients computed with bf16 storage within 2e-2 of
    float64 (about five bf16 unit roundoffs, 2^-8), and further than f32
    storage gets: the rounding happened."""
    assert rel_err(y.double(), y_ref) < 2e-2
    worst = 0.0
    for g, g_ref in zip(grads, grads_ref):
        err = rel_err(g.double(), g_ref)
        assert err < 2e-2
        worst = max(worst, err)
    assert worst > 1e-4


def reset_inputs(cell, T, B, H, L, form, batch_first=False, seed=4):
    """h_reset and c_reset (None for a cell of one state): [L, T, B, H]
    ([L, B, T, H] with batch_first) per step, [L, B, H] per column."""
    g = torch.Generator().manual_seed(seed)
    if form == "column":
        shape = (L, B, H)
    else:
        shape = (L, B, T, H) if batch_first else (L, T, B, H)
    h = torch.randn(shape, generator=g, requires_grad=True)
    c = torch.randn(shape, generator=g, requires_grad=True)
    return h, (c if cell in LSTM_LIKE else None)


def dropout_scale(T, B, H, p, layer, seed, offset=0):
    """rnn.dropout's multipliers (0 or 1 / (1 - p)) for one layer."""
    return torch.tensor([0.0 if philox.dropped(n, p, layer, seed, offset)
                         else 1.0 / (1.0 - p)
                         for n in range(T * B * H)]).view(T, B, H)


def next_seed(seed, device="cpu"):
    """The seed rnnc.torch draws for a call on `device` after
    torch.manual_seed(seed)."""
    torch.manual_seed(seed)
    return int(torch.empty((), dtype=torch.int64, device=device).random_())


def dropout_loss_and_grads(cell, ref, x, h0, c0, gy, ghn, drops):
    """loss_and_grads on single-layer torch.nn modules holding `ref`'s
    layers (in its dtype: float64 for a float64 `ref`), chained by hand
    with drops[k] multiplying layer k's output."""
    L, H = h0.shape[0], h0.shape[2]
    dtype = ref.weight_ih_l0.dtype
    layers = []
    for k in range(L):
        m = CELLS[cell][1](x.shape[2] if k == 0 else H, H, 1).to(dtype)
        m.load_state_dict({f"{name}_l0": getattr(ref, f"{name}_l{k}")
                           for name in ("weight_ih", "weight_hh", "bias_ih",
                                        "bias_hh")})
        layers.append(m)
    inp, hs, cs = x, [], []
    for k, m in enumerate(layers):
        out, state = m(inp, state_of(cell, h0[k:k + 1], c0[k:k + 1]))
        hs.append(final(cell, state))
        if cell in LSTM_LIKE:
            cs.append(state[1])
        inp = out * drops[k] if k < L - 1 else out
    loss = (inp * gy).sum() + (torch.cat(hs) * ghn).sum()
    wrt = [x, h0]
    if cell in LSTM_LIKE:
        loss = loss + (torch.cat(cs) * ghn.flip(0)).sum()
        wrt.append(c0)
    for m in layers:
        wrt += list(m.parameters())
    return inp, loss, torch.autograd.grad(loss, wrt)


def run_in_threads(run, cases, repeats=4):
    """Calls run(case) `repeats` times from a thread per case, all at once;
    checks that each thread's repeats agree bit for bit and returns each
    case's results."""
    concurrent = [None] * len(cases)
    failures = []

    def work(i):
        try:
            for _ in range(repeats):
                results = run(cases[i])
                if concurrent[i] is None:
                    concurrent[i] = results
                assert all(torch.equal(a, b)
                           for a, b in zip(results, concurrent[i]))
        except Exception as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=(i,))
               for i in range(len(cases))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    return concurrent
