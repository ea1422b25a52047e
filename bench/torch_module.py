#!/usr/bin/env python3
"""rnnc.torch.LSTM's per-call cost against the library called directly and
against torch.nn.LSTM, its compile times, and its saved bytes.

What it measures (CPU, --threads BLAS threads for both, default 1)
  * Per call, median of --iters after --warmup, one process:
      train:  module: y, (h_n, c_n) = lstm(x, (h0, c0)) then
                      torch.autograd.backward([y, h_n, c_n], cotangents)
              direct: rnnc_lstm_fwd + rnnc_lstm_bwd through ctypes on
                      preallocated buffers (what the module calls)
              torch:  the same step with torch.nn.LSTM
      infer:  the same under torch.no_grad() (direct: rnnc_lstm)
    The module's overhead is module - direct.
  * Compile: the first call of a new (shape, remat) key (rnn-compile into an
    empty cache) and a call that finds the key in the disk cache (a fresh
    in-process table, as a new process would see it).
  * Saved bytes: the saved region of each remat policy (manifest) next to
    what PyTorch's autograd keeps for nn.LSTM's backward (every tensor the
    graph saves, counted once per storage, through saved_tensors_hooks),
    and that less the inputs and parameters (which the caller holds anyway).

Usage: bench/torch_module.py [--T 32 --B 64 --I 256 --H 256 --L 1]
       [--threads 1] [--iters 20] [--warmup 3] [--openblas-coretype CORE]
(Debian's OpenBLAS falls back to its slow Prescott kernels on CPUs newer
than it; the core in use is printed; see the README.)
Needs rnn-compile on PATH (or RNNC_COMPILE) and the rnnc package.
"""

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
import time

parser = argparse.ArgumentParser()
for name, default in (("T", 32), ("B", 64), ("I", 256), ("H", 256), ("L", 1),
                      ("threads", 1), ("iters", 20), ("warmup", 3)):
    parser.add_argument("--" + name, type=int, default=default)
parser.add_argument("--openblas-coretype", default="")
args = parser.parse_args()
if args.openblas_coretype:
    os.environ["OPENBLAS_CORETYPE"] = args.openblas_coretype
# OpenBLAS reads its thread count when the first library loads it.
os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
os.environ["RNNC_CACHE_DIR"] = tempfile.mkdtemp(prefix="rnnc-bench-")

import torch  # noqa: E402

import rnnc.torch as rt  # noqa: E402
from rnnc import library  # noqa: E402

torch.set_num_threads(args.threads)
T, B, I, H, L = args.T, args.B, args.I, args.H, args.L


def median_ms(fn):
    for _ in range(args.warmup):
        fn()
    times = []
    for _ in range(args.iters):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


torch.manual_seed(0)
ref = torch.nn.LSTM(I, H, L)
ours = rt.LSTM(I, H, L)
ours.load_state_dict(ref.state_dict())
x = torch.randn(T, B, I, requires_grad=True)
h0 = torch.randn(L, B, H, requires_grad=True)
c0 = torch.randn(L, B, H, requires_grad=True)
cot = [torch.randn(T, B, H), torch.randn(L, B, H), torch.randn(L, B, H)]

# Compile times.
start = time.perf_counter()
ours(x, (h0, c0))
first_s = time.perf_counter() - start
library._loaded.clear()
start = time.perf_counter()
ours(x, (h0, c0))
cached_s = time.perf_counter() - start


def train_step(module):
    def step():
        x.grad = h0.grad = c0.grad = None
        for p in module.parameters():
            p.grad = None
        y, (hn, cn) = module(x, (h0, c0))
        torch.autograd.backward([y, hn, cn], cot)
    return step


def infer_step(module):
    def step():
        with torch.no_grad():
            module(x, (h0, c0))
    return step


# The library called directly: the buffers the module would pass.
lib = library.compile_model("lstm", T, B, I, H, L, "none")
buffers = {"x": x.detach(), "is_init": torch.zeros(T, B, dtype=torch.bool),
           "h0": h0.detach(), "c0": c0.detach(),
           "y": torch.empty(T, B, H), "h_n": torch.empty(L, B, H),
           "c_n": torch.empty(L, B, H), "grad_y": cot[0],
           "grad_h_n": cot[1], "grad_c_n": cot[2],
           "grad_x": torch.empty(T, B, I), "grad_h0": torch.empty(L, B, H),
           "grad_c0": torch.empty(L, B, H),
           "saved": torch.empty(lib.saved_bytes, dtype=torch.uint8)}
for name, p in ours.named_parameters():
    buffers[name] = p.detach()
    buffers["grad_" + name] = torch.empty_like(p)
for kind in ("infer", "fwd", "bwd"):
    buffers[kind + "_arena"] = torch.empty(lib[kind].arena_bytes,
                                           dtype=torch.uint8)


def pointers(kind):
    ptrs = []
    for arg in lib[kind].args:
        name = kind + "_arena" if arg.name == "arena" else arg.name
        t = buffers[name]
        if arg.layer is not None:
            t = t[arg.layer]
        ptrs.append(t.data_ptr())
    return ptrs


direct = {kind: (lib[kind], pointers(kind)) for kind in ("infer", "fwd",
                                                         "bwd")}


def direct_train():
    for kind in ("fwd", "bwd"):
        entry, ptrs = direct[kind]
        entry.call(ptrs)


def direct_infer():
    entry, ptrs = direct["infer"]
    entry.call(ptrs)


rows = []
for mode, module_fn, direct_fn, torch_fn in (
        ("train", train_step(ours), direct_train, train_step(ref)),
        ("infer", infer_step(ours), direct_infer, infer_step(ref))):
    # Interleaved rounds, so that drifting load hits all three alike.
    m, d, t = [], [], []
    for _ in range(3):
        m.append(median_ms(module_fn))
        d.append(median_ms(direct_fn))
        t.append(median_ms(torch_fn))
    rows.append((mode, min(m), min(d), min(t)))

# Saved bytes: rnnc per policy, PyTorch's autograd for nn.LSTM.
saved_rnnc = {}
for remat in ("none", "gates", "chunk:4", "chunk:8", "chunk:32"):
    saved_rnnc[remat] = library.compile_model("lstm", T, B, I, H, L,
                                              remat).saved_bytes
storages = {}


def pack(t):
    s = t.untyped_storage()
    storages[s.data_ptr()] = (s.nbytes(), t)
    return t


with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    y, (hn, cn) = ref(x, (h0, c0))
torch_all = sum(n for n, _ in storages.values())
held = {x.untyped_storage().data_ptr(), h0.untyped_storage().data_ptr(),
        c0.untyped_storage().data_ptr()} | {
    p.untyped_storage().data_ptr() for p in ref.parameters()}
torch_own = sum(n for ptr, (n, _) in storages.items() if ptr not in held)

openblas = ctypes.CDLL("libopenblas.so.0")
openblas.openblas_get_corename.restype = ctypes.c_char_p
core = openblas.openblas_get_corename().decode()
blas = torch.__config__.show().split("\n")[3].strip(" -")
print(f"rnnc: OpenBLAS core {core}; torch: {blas}")
print(f"rnnc.torch.LSTM vs the library directly vs torch.nn.LSTM "
      f"(CPU, {args.threads} thread(s), torch {torch.__version__}, "
      f"T={T} B={B} I={I} H={H} L={L}; median of {args.iters}, best of 3 "
      f"interleaved rounds)")
print(f"{'':6} {'module ms':>10} {'direct ms':>10} {'overhead ms':>12} "
      f"{'nn.LSTM ms':>11} {'module/nn':>10}")
for mode, m, d, t in rows:
    print(f"{mode:6} {m:10.3f} {d:10.3f} {m - d:12.3f} {t:11.3f} "
          f"{m / t:10.2f}")
print(f"compile: first call {first_s:.2f} s (rnn-compile, plus the call's "
      f"forward), cached call {cached_s * 1e3:.1f} ms (library loaded from "
      f"the disk cache, plus the call's forward)")
print("saved for backward (bytes):")
for remat, n in saved_rnnc.items():
    print(f"  rnnc remat={remat:9} saved region {n:>12,}")
print(f"  nn.LSTM autograd, all saved tensors   {torch_all:>12,}")
print(f"  nn.LSTM autograd, less inputs/params  {torch_own:>12,}")
sys.stdout.flush()
