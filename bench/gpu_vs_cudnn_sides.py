"""The sides of bench/gpu_vs_cudnn.py and what measures them: the modes'
settings per side, rnn-run --target=cuda in a subprocess (run_ours) and the
bitwise comparison of two runs' outputs (first_difference), the timing and
peak memory of a torch step (time_torch), TorchRL's triton peer of one
configuration (Triton), and the script's one-line exit and progress log
(die, log).  See gpu_vs_cudnn.py's header for what each side computes and
how it is timed.
"""

import json
import statistics
import sys
import time

import numpy as np
import torch

from torch_peer import PeerError, launch
import torchrl_peer

PROG = "gpu_vs_cudnn"

MODES = ("fp32", "tf32", "bf16")
# Per mode: rnn-run's flags; TF32 for the torch peers (cuDNN, split+pack);
# TorchRL's (recurrent_matmul_precision, recurrent_compute_dtype).
RNN_RUN_FLAGS = {"fp32": [], "tf32": ["--tf32"], "bf16": ["--storage=bf16"]}
TORCH_TF32 = {"fp32": False, "tf32": True, "bf16": True}
TRITON = torchrl_peer.MODES


def die(message, code=2):
    """One line on stderr, exit `code`."""
    line = " | ".join(s.strip() for s in str(message).splitlines()
                      if s.strip())
    print(f"{PROG}: {line}", file=sys.stderr, flush=True)
    sys.exit(code)


def log(*a):
    """Progress and warnings on stderr: stdout is the table (or JSON)."""
    print(*a, file=sys.stderr, flush=True)


def stderr_line(text):
    """rnn-run's error line (it prints one); else the last line."""
    lines = [s.strip() for s in (text or "").splitlines() if s.strip()]
    if not lines:
        return "(nothing on stderr)"
    own = [s for s in lines if s.startswith("rnn-run:")]
    return own[0] if own else lines[-1]


# --------------------------------------------------------------------------
# Ours: rnn-run --target=cuda
# --------------------------------------------------------------------------

def run_ours(args, cfg, npz, mode, iters, warmup, outputs=None):
    cmd = [args.rnn_run, f"--preset={cfg['cell']}", f"--target={args.target}",
           f"--inputs={npz}", "--json", f"--iters={iters}",
           f"--warmup={warmup}", f"--remat={args.remat}",
           *args.rnn_run_flag]
    flags = RNN_RUN_FLAGS[mode]
    if args.target != "cuda":
        flags = [f for f in flags if f != "--tf32"]  # a cuda-only flag
    cmd += flags
    if outputs:
        cmd.append(f"--outputs={outputs}")
    try:
        r = launch(cmd)
    except PeerError as e:
        die(str(e))
    what = f"rnn-run --target={args.target}{''.join(' ' + f for f in flags)} " \
           f"({cfg['name']})"
    if r.returncode != 0:
        status = (f"exit {r.returncode}" if r.returncode > 0
                  else f"signal {-r.returncode}")
        die(f"{what} failed ({status}): {stderr_line(r.stderr)}")
    try:
        j = json.loads(r.stdout)
        j["step_ms"]["median"], j["peak_bytes"]["measured"]
    except (ValueError, KeyError, TypeError):
        die(f"{what} printed no usable JSON: "
            f"{(r.stdout.strip() or '(nothing)')[:200]}")
    if j.get("target") != args.target:
        die(f"{what} ran on target '{j.get('target')}', not {args.target}")
    return j


def first_difference(a_npz, b_npz):
    """None if the two .npz files hold the same arrays bit for bit, else
    the name of the first array (or a phrase) that differs."""
    with np.load(a_npz) as a, np.load(b_npz) as b:
        if sorted(a.files) != sorted(b.files):
            return "the array names"
        for k in sorted(a.files):
            x, y = a[k], b[k]
            if x.dtype != y.dtype or x.shape != y.shape or \
                    x.tobytes() != y.tobytes():
                return k
    return None


# --------------------------------------------------------------------------
# The torch peers (the steps are torch_peer.TorchStep and
# torchrl_peer.TorchRLStep)
# --------------------------------------------------------------------------

def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def time_torch(ts, iters, warmup, device):
    """(median step ms, peak bytes the step allocates); see the header.
    On the CPU (--dry-run): host time, and no peak (None)."""
    for _ in range(warmup):
        ts.step()
    if device.type != "cuda":
        ms = []
        for _ in range(iters):
            ts.clear_grads()
            t0 = time.perf_counter()
            out = ts.step()
            ms.append((time.perf_counter() - t0) * 1e3)
            del out
        return statistics.median(ms), None
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    ms, peaks = [], []
    for _ in range(iters):
        ts.clear_grads()
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        start.record()
        out = ts.step()
        end.record()
        end.synchronize()
        ms.append(start.elapsed_time(end))
        peaks.append(torch.cuda.max_memory_allocated() - base)
        del out
    return statistics.median(ms), max(peaks)


class Triton:
    """The TorchRL peer of one configuration; after a failure it reports
    None for the rest of the configuration (the reason is logged once)."""

    # The (cell, mode) pairs called so far in this process.
    modes_run = set()

    def __init__(self, backend, cell, d, device, name):
        self.name, self.error, self.step = name, None, None
        try:
            self.step = torchrl_peer.TorchRLStep(cell, d, device, backend)
        except Exception as e:
            self.fail(e)

    def fail(self, e):
        self.error = f"{type(e).__name__}: {str(e).strip()[:300]}"
        log(f"# triton peer failed on {self.name}: {self.error}")
        self.step = None
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def run(self, mode, fn):
        if self.step is None:
            return None
        key = (self.step.cell, mode)
        first = key not in Triton.modes_run
        if first:
            # The first call of a mode compiles and autotunes TorchRL's
            # kernels (minutes at H=256 with a cold cache: triton_warm.py).
            log(f"# triton peer: first {key[0]} call in mode {mode} ...")
            started = time.monotonic()
        try:
            self.step.configure(*TRITON[mode])
            result = fn(self.step)
        except Exception as e:
            self.fail(e)
            return None
        if first:
            Triton.modes_run.add(key)
            log(f"# triton peer: first {key[0]} call in mode {mode} took "
                f"{time.monotonic() - started:.1f} s")
        return result
