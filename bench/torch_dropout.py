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
than it; the core in use is printed; see the README.)
Needs rnn-compile on PATH (or RNNC_COMPILE) and the rnnc package.
"""

import argparse
import ctypes
import os
import statistics
import tempfile
import time

parser = argparse.ArgumentParser()
for name, default in (("T", 32), ("B", 64), ("I", 256), ("H", 256), ("L", 2),
                      ("threads", 1), ("iters", 20), ("warmup", 3)):
    parser.add_argument("--" + name, type=int, default=default)
parser.add_argument("--p", type=float, default=0.3)
parser.add_argument("--openblas-coretype", default="")
args = parser.parse_args()
if args.openblas_coretype:
    os.environ["OPENBLAS_CORETYPE"] = args.openblas_coretype
os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
os.environ["RNNC_CACHE_DIR"] = tempfile.mkdtemp(prefix="rnnc-bench-")

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


def median_ms(fn):
    for _ in range(args.warmup):
        fn()
    times = []
    for _ in range(args.iters):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def train_step(module):
    def step():
        x.grad = h0.grad = c0.grad = None
        for p in module.parameters():
            p.grad = None
        y, (hn, cn) = module(x, (h0, c0))
        torch.autograd.backward([y, hn, cn], cot)
    return step


def torch_saved(module):
    storages = {}

    def pack(t):
        s = t.untyped_storage()
        storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        module(x, (h0, c0))
    held = {t.untyped_storage().data_ptr() for t in (x, h0, c0)} | {
        p.untyped_storage().data_ptr() for p in module.parameters()}
    return sum(n for ptr, n in storages.items() if ptr not in held)


modules = {}
for p in (0.0, args.p):
    ref = torch.nn.LSTM(I, H, L, dropout=p)
    ours = rt.LSTM(I, H, L, dropout=p)
    ours.load_state_dict(ref.state_dict())
    modules[p] = (ours, ref)
    train_step(ours)()  # compiles

rows = {}
for _ in range(3):
    for p, (ours, ref) in modules.items():
        r = rows.setdefault(p, ([], []))
        r[0].append(median_ms(train_step(ours)))
        r[1].append(median_ms(train_step(ref)))

openblas = ctypes.CDLL("libopenblas.so.0")
openblas.openblas_get_corename.restype = ctypes.c_char_p
print(f"rnnc: OpenBLAS core {openblas.openblas_get_corename().decode()}; "
      f"torch: {torch.__config__.show().split(chr(10))[3].strip(' -')}")
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
    print(f"{p:8.2f} {r:9.3f} {t:9.3f} {r / t:8.2f} {saved:12,d} "
          f"{torch_saved(ref):12,d}")
base, drop = min(rows[0.0][0]), min(rows[args.p][0])
base_nn, drop_nn = min(rows[0.0][1]), min(rows[args.p][1])
print(f"dropout's cost: rnnc +{drop - base:.3f} ms ({drop / base - 1:+.1%}), "
      f"nn.LSTM +{drop_nn - base_nn:.3f} ms ({drop_nn / base_nn - 1:+.1%})")
