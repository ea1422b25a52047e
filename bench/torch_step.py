"""What the PyTorch benchmarks of rnnc.torch share (bench/torch_module.py,
bench/torch_dropout.py, bench/torch_custom_op.py,
bench/torch_cuda_replay.py): their command line, the timing of a step, an
LSTM training step, what PyTorch's autograd saves, and the BLAS in use.

Import it after setting the environment the BLAS libraries read at load
time (parse_args does: call it before importing torch)."""

import argparse
import atexit
import ctypes
import os
import shutil
import statistics
import tempfile
import time

from cli import nonnegative_int, positive_int


def parse_args(description, types=None, **extra):
    """The shape (--T --B --I --H --L), --threads, --iters, --warmup and
    --openblas-coretype, plus `extra` (name: default, which may also
    change one of those defaults; an int is a count of at least 1, but
    --warmup may be 0; `types` names an argparse type of its own); sets the BLAS threads and the OpenBLAS core from
    them, and the rnnc cache: the caller's RNNC_CACHE_DIR where set, else
    a fresh directory removed when the process exits."""
    parser = argparse.ArgumentParser(description=description)
    defaults = {"T": 32, "B": 64, "I": 256, "H": 256, "L": 1, "threads": 1,
                "iters": 20, "warmup": 3, **extra}
    for name, default in defaults.items():
        kind = type(default)
        if kind is int:
            kind = nonnegative_int if name == "warmup" else positive_int
        kind = (types or {}).get(name, kind)
        parser.add_argument("--" + name, type=kind, default=default)
    parser.add_argument("--openblas-coretype", default="")
    args = parser.parse_args()
    if args.openblas_coretype:
        os.environ["OPENBLAS_CORETYPE"] = args.openblas_coretype
    # OpenBLAS reads its thread count when the first library loads it.
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
    if not os.environ.get("RNNC_CACHE_DIR"):
        cache = tempfile.mkdtemp(prefix="rnnc-bench-")
        atexit.register(shutil.rmtree, cache, ignore_errors=True)
        os.environ["RNNC_CACHE_DIR"] = cache
    return args


def median_ms(fn, iters, warmup):
    """Median wall time of `fn` in ms over `iters` calls after `warmup`."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def train_step(module, x, h0, c0, cotangents):
    """An LSTM training step of `module`: forward, then backward with the
    cotangents of y, h_n and c_n, from cleared gradients."""
    import torch

    def step():
        x.grad = h0.grad = c0.grad = None
        for p in module.parameters():
            p.grad = None
        y, (hn, cn) = module(x, (h0, c0))
        torch.autograd.backward([y, hn, cn], cotangents)
    return step


def autograd_saved(run, held):
    """Bytes of every tensor PyTorch's autograd saves while `run()` runs
    (counted once per storage, through saved_tensors_hooks): all of them,
    and those not in the storages of the tensors `held` (the caller's
    inputs and parameters)."""
    import torch
    storages = {}

    def pack(t):
        s = t.untyped_storage()
        storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        run()
    held = {t.untyped_storage().data_ptr() for t in held}
    return (sum(storages.values()),
            sum(n for ptr, n in storages.items() if ptr not in held))


def blas_line():
    """The OpenBLAS core rnnc runs on and PyTorch's BLAS."""
    import torch
    openblas = ctypes.CDLL("libopenblas.so.0")
    openblas.openblas_get_corename.restype = ctypes.c_char_p
    core = openblas.openblas_get_corename().decode()
    blas = torch.__config__.show().split("\n")[3].strip(" -")
    return f"rnnc: OpenBLAS core {core}; torch: {blas}"
