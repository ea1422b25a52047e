#!/usr/bin/env python3
"""rnnc.torch.LSTM's per-call cost against the library called directly and
against torch.nn.LSTM, its compile times, and its saved bytes.

What it measures (CPU, --threads BLAS threads for both, default 1)
  * Per call, median of --iters after --warmup, one process:
      train:  module: y, (h_n, c_n) = lstm(x, (h0, c0)) then
                      torch.autograd.backward([y, h_n, c_n], cotangents)
              direct: rnnc_lstm_fwd + rnnc_lstm_bwd through ctypes on
                      preallocated buffers: the module's own library (that
                      of every shape, at T and B) and the buffers it
                      would pass
              torch:  the same step with torch.nn.LSTM
      infer:  the same under torch.no_grad() (direct: rnnc_lstm)
    The module's overhead is module - direct.
  * Compile: the first call of a new (shape, remat) key (rnn-compile into an
    empty cache, a temporary one whatever RNNC_CACHE_DIR says) and a call
    that finds the key in the disk cache (a fresh in-process table, as a
    new process would see it).
  * Saved bytes: the saved region of each remat policy (manifest) next to
    what PyTorch's autograd keeps for nn.LSTM's backward (every tensor the
    graph saves, counted once per storage, through saved_tensors_hooks),
    and that less the inputs and parameters (which the caller holds anyway).

Usage: bench/torch_module.py [--T 32 --B 64 --I 256 --H 256 --L 1]
       [--threads 1] [--iters 20] [--warmup 3] [--openblas-coretype CORE]
(Debian's OpenBLAS falls back to its slow Prescott kernels on CPUs newer
than it; the core in use is printed; see docs/design.md.)
Needs rnn-compile on PATH (or RNNC_COMPILE) and the rnnc package.
"""

import os
import sys
import tempfile
import time

from torch_step import (autograd_saved, blas_line, median_ms, parse_args,
                        train_step)

args = parse_args(__doc__.split("\n")[0])

import torch  # noqa: E402

import rnnc.torch as rt  # noqa: E402
from rnnc import library  # noqa: E402

torch.set_num_threads(args.threads)
T, B, I, H, L = args.T, args.B, args.I, args.H, args.L


def timed(fn):
    return median_ms(fn, args.iters, args.warmup)


torch.manual_seed(0)
ref = torch.nn.LSTM(I, H, L)
ours = rt.LSTM(I, H, L)
ours.load_state_dict(ref.state_dict())
x = torch.randn(T, B, I, requires_grad=True)
h0 = torch.randn(L, B, H, requires_grad=True)
c0 = torch.randn(L, B, H, requires_grad=True)
cot = [torch.randn(T, B, H), torch.randn(L, B, H), torch.randn(L, B, H)]

# Compile times, in an empty cache of their own.
with tempfile.TemporaryDirectory(prefix="rnnc-bench-") as empty:
    cache = os.environ["RNNC_CACHE_DIR"]
    os.environ["RNNC_CACHE_DIR"] = empty
    try:
        start = time.perf_counter()
        ours(x, (h0, c0))
        first_s = time.perf_counter() - start
        library._loaded.clear()
        library._requested.clear()
        start = time.perf_counter()
        ours(x, (h0, c0))
        cached_s = time.perf_counter() - start
    finally:
        os.environ["RNNC_CACHE_DIR"] = cache


def infer_step(module):
    def step():
        with torch.no_grad():
            module(x, (h0, c0))
    return step


# The library called directly: the one the module calls at (T, B), on the
# buffers it would pass.
lib = ours._library(T, B, x.device, x.dtype, "zero").at(T, B)
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
        ("train", train_step(ours, x, h0, c0, cot), direct_train,
         train_step(ref, x, h0, c0, cot)),
        ("infer", infer_step(ours), direct_infer, infer_step(ref))):
    # Interleaved rounds, so that drifting load hits all three alike.
    m, d, t = [], [], []
    for _ in range(3):
        m.append(timed(module_fn))
        d.append(timed(direct_fn))
        t.append(timed(torch_fn))
    rows.append((mode, min(m), min(d), min(t)))

# Saved bytes: rnnc per policy, PyTorch's autograd for nn.LSTM.
saved_rnnc = {}
for remat in ("none", "gates", "chunk:4", "chunk:8", "chunk:32"):
    saved_rnnc[remat] = library.compile_model("lstm", T, B, I, H, L,
                                              remat).saved_bytes
torch_all, torch_own = autograd_saved(lambda: ref(x, (h0, c0)),
                                     [x, h0, c0, *ref.parameters()])
print(blas_line())
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
