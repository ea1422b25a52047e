#!/usr/bin/env python3
"""A torch.profiler trace of rnnc (rnnc.torch on CUDA tensors: the library
compiled for the cuda target, eager, on PyTorch's current stream) and of
torch.nn's cuDNN module, in one process, on the same inputs and weights.

For each batch size: an LSTM or GRU (T=32, I=H=256, L=1 by default), with
--warmup unprofiled steps of each side (rnnc's first call compiles its
library, cuDNN picks its algorithms), then --steps profiled train steps of
each (forward, backward of sum(y * grad_y) + sum(h_n * grad_h_n), under
record_function labels "rnnc B=..." and "cudnn B=..."), and writes

  OUT/profile-<cell>-b<B>.json.gz   the Chrome/Perfetto trace (ui.perfetto.dev
                                    opens it as is)
  OUT/profile-<cell>-b<B>.txt       key_averages, the top --top operators and
                                    kernels by device time (CPU time on the
                                    CPU), and each side's time per step

    python3 bench/gpu_profile.py --out DIR [--cell lstm] [--batch 4096,64]
        [--seq-len 32] [--size 256] [--layers 1] [--reset-prob 0]
        [--steps 3] [--warmup 2] [--device cuda|cpu]

--device=cpu runs the same on the CPU (CPU activities only), to test the
script without a GPU. rnnc.torch needs rnn-compile (RNNC_COMPILE or PATH;
on a GPU machine, source .gpu/unpack.sh first). With --reset-prob > 0
rnnc's step takes the reset mask and cuDNN's runs without it (the same
GEMMs; the split-and-pad peer is bench/gpu_vs_cudnn.py's).
"""

import argparse
import gzip
import os
import shutil
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

import rnnc.torch as rt  # noqa: E402
from cli import positive_int, positive_ints, probability  # noqa: E402


def profile_batch(args, B, device, activities, sort):
    """Profiles both sides at batch size B and writes the files."""
    cuda = device.type == "cuda"
    T, I, H, L = args.seq_len, args.size, args.size, args.layers
    lstm = args.cell == "lstm"
    torch.manual_seed(0)
    ref_cls = torch.nn.LSTM if lstm else torch.nn.GRU
    ours_cls = rt.LSTM if lstm else rt.GRU
    ref = ref_cls(I, H, L).to(device)
    ours = ours_cls(I, H, L).to(device)
    ours.load_state_dict(ref.state_dict())
    g = torch.Generator().manual_seed(1)
    x = torch.randn(T, B, I, generator=g).to(device).requires_grad_()
    h0 = torch.randn(L, B, H, generator=g).to(device).requires_grad_()
    c0 = torch.randn(L, B, H, generator=g).to(device).requires_grad_()
    gy = torch.randn(T, B, H, generator=g).to(device)
    ghn = torch.randn(L, B, H, generator=g).to(device)
    is_init = (torch.rand(T, B, generator=g) < args.reset_prob).to(device)
    state = (h0, c0) if lstm else h0

    def rnnc_step():
        y, s = ours(x, state, is_init=is_init)
        h_n = s[0] if lstm else s
        ((y * gy).sum() + (h_n * ghn).sum()).backward()

    def cudnn_step():
        y, s = ref(x, state)
        h_n = s[0] if lstm else s
        ((y * gy).sum() + (h_n * ghn).sum()).backward()

    def sync():
        if cuda:
            torch.cuda.synchronize()

    sides = (("rnnc", rnnc_step), ("cudnn", cudnn_step))
    t0 = time.perf_counter()
    for _ in range(args.warmup):
        for _, step in sides:
            step()
    sync()
    warm_s = time.perf_counter() - t0
    times = {name: [] for name, _ in sides}
    with profile(activities=activities) as prof:
        for _ in range(args.steps):
            for name, step in sides:
                sync()
                t = time.perf_counter()
                with record_function(f"{name} B={B}"):
                    step()
                sync()
                times[name].append((time.perf_counter() - t) * 1e3)
    stem = os.path.join(args.out, f"profile-{args.cell}-b{B}")
    prof.export_chrome_trace(stem + ".json")
    with open(stem + ".json", "rb") as f, \
            gzip.open(stem + ".json.gz", "wb") as o:
        shutil.copyfileobj(f, o)
    os.remove(stem + ".json")
    what = (f"{args.cell} T={T} B={B} I={I} H={H} L={L} reset-prob="
            f"{args.reset_prob:g} on {device}"
            + (f" ({torch.cuda.get_device_name(device)})" if cuda else "")
            + f", torch {torch.__version__}")
    lines = [f"# {what}",
             f"# warm-up ({args.warmup} step(s) each, rnnc's compile "
             f"included): {warm_s:.1f} s"]
    for name, ms in times.items():
        lines.append(f"# {name}: host-synchronized step ms over "
                     f"{args.steps}: " + ", ".join(f"{v:.2f}" for v in ms))
    lines.append(prof.key_averages().table(sort_by=sort,
                                           row_limit=args.top))
    text = "\n".join(lines)
    with open(stem + ".txt", "w") as f:
        f.write(text + "\n")
    print(text, flush=True)
    print(f"# wrote {stem}.json.gz and {stem}.txt", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--cell", choices=("lstm", "gru"), default="lstm")
    ap.add_argument("--batch", type=positive_ints, default=[4096, 64])
    ap.add_argument("--seq-len", type=positive_int, default=32)
    ap.add_argument("--size", type=positive_int, default=256, help="I = H")
    ap.add_argument("--layers", type=positive_int, default=1)
    ap.add_argument("--reset-prob", type=probability, default=0.0)
    ap.add_argument("--steps", type=positive_int, default=3)
    ap.add_argument("--warmup", type=positive_int, default=2,
                    help="unprofiled steps of each side, at least 1 (the "
                         "first call compiles)")
    ap.add_argument("--top", type=positive_int, default=25)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("gpu_profile: PyTorch has no CUDA device (--device=cpu runs "
              "the script on the CPU)", file=sys.stderr)
        sys.exit(2)
    os.makedirs(args.out, exist_ok=True)
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if cuda:
        # Equal fp32 math on both sides.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA]
                                           if cuda else [])
    sort = "cuda_time_total" if cuda else "cpu_time_total"

    for B in args.batch:
        profile_batch(args, B, device, activities, sort)
        if cuda:
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
