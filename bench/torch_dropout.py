#!/usr/bin/env python3
"""What dropout between layers costs: rnnc.torch.LSTM against torch.nn.LSTM,
each with dropout=0 and dropout=P, in one process.

  * Train step (forward + backward with all cotangents), median of --iters
    after --warmup, best of 3 interleaved rounds, CPU, --threads BLAS
    threads for both.
  * Saved for backward: rnnc's saved region (manifest) and every tensor
    PyTorch's autograd keeps for nn.LSTM (counted once per storage, through
    saved_tensors_hooks), less the inputs and parameters.

rnnc regenerates its masks from Philox in the backward (nothing stored but
the dropped sequence each upper layer reads); nn.LSTM keeps its masks.

Usage: bench/torch_dropout.py [--T 32 --B 64 --I 256 --H 256 --L 2]
       [--p 0.3] [--threads 1] [--iters 20] [--warmup 3]
       [--openblas-coretype CORE]
(Debian's OpenBLAS falls back to its slow Prescott kernels on CPUs newer
than it; the core in use is printed; see docs/design.md.)
Needs rnn-compile on PATH (or RNNC_COMPILE) and the rnnc package.
"""

import argparse

from cli import int_at_least
from torch_step import (autograd_saved, blas_line, median_ms, parse_args,
                        train_step)


def dropout(text):
    """--p: a probability strictly between 0 and 1."""
    try:
        p = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    if not 0.0 < p < 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return p


args = parse_args(__doc__.split("\n")[0],
                  types={"p": dropout, "L": int_at_least(2)}, L=2, p=0.3)

import torch  # noqa: E402

import rnnc.torch as rt  # noqa: E402
from rnnc import library  # noqa: E402

torch.set_num_threads(args.threads)
T, B, I, H, L = args.T, args.B, args.I, args.H, args.L
torch.manual_seed(0)
x = torch.randn(T, B, I, requires_grad=True)
h0 = torch.randn(L, B, H, requires_grad=True)
c0 = torch.randn(L, B, H, requires_grad=True)
cot = [torch.randn(T, B, H), torch.randn(L, B, H), torch.randn(L, B, H)]


modules = {}
for p in (0.0, args.p):
    ref = torch.nn.LSTM(I, H, L, dropout=p)
    ours = rt.LSTM(I, H, L, dropout=p)
    ours.load_state_dict(ref.state_dict())
    modules[p] = (ours, ref)
    train_step(ours, x, h0, c0, cot)()  # compiles

rows = {}
for _ in range(3):
    for p, (ours, ref) in modules.items():
        r = rows.setdefault(p, ([], []))
        for i, module in enumerate((ours, ref)):
            r[i].append(median_ms(train_step(module, x, h0, c0, cot),
                                  args.iters, args.warmup))

print(blas_line())
print(f"rnnc.torch.LSTM vs torch.nn.LSTM with dropout between layers (CPU, "
      f"{args.threads} thread(s), torch {torch.__version__}, T={T} B={B} "
      f"I={I} H={H} L={L}; train step, median of {args.iters}, best of 3 "
      f"interleaved rounds)")
print(f"{'dropout':>8} {'rnnc ms':>9} {'nn ms':>9} {'rnnc/nn':>8} "
      f"{'rnnc saved':>12} {'nn saved':>12}")
for p, (ours, ref) in modules.items():
    saved = library.compile_model("lstm", T, B, I, H, L, "none",
                                  dropout=p).saved_bytes
    r, t = min(rows[p][0]), min(rows[p][1])
    _, torch_own = autograd_saved(lambda: ref(x, (h0, c0)),
                                  [x, h0, c0, *ref.parameters()])
    print(f"{p:8.2f} {r:9.3f} {t:9.3f} {r / t:8.2f} {saved:12,d} "
          f"{torch_own:12,d}")
base, drop = min(rows[0.0][0]), min(rows[args.p][0])
base_nn, drop_nn = min(rows[0.0][1]), min(rows[args.p][1])
print(f"dropout's cost: rnnc {drop - base:+.3f} ms ({drop / base - 1:+.1%}), "
      f"nn.LSTM {drop_nn - base_nn:+.3f} ms "
      f"({drop_nn / base_nn - 1:+.1%})")
