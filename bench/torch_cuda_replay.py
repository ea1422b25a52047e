#!/usr/bin/env python3
"""rnnc.torch.LSTM's training step with and without the graph replay of the
library's calls (rnnc.torch.set_graph_replay), against torch.nn.LSTM.

What it measures (one process, --device, default cuda)
  * Per step, median of --iters after --warmup: clear the gradients, the
    forward y, (h_n, c_n) = lstm(x, (h0, c0)), the backward with fixed
    cotangents (bench/torch_step.py's train_step), on inputs that stay
    the same tensors, so that the library sees the same buffers from call
    to call when PyTorch's caching allocator hands back the same blocks.
    Each step is timed from a synchronized device to the synchronized end
    of its work (host time included: the launches are what replay saves).
      eager:   rnnc.torch, every call launching its kernels
      replay:  rnnc.torch after set_graph_replay(8): from a pointer set's
               third call on, each entry point's work is one graph launch
      torch:   torch.nn.LSTM (cuDNN on a GPU)
    and the ratios replay/eager and replay/torch.
  * Whether replay changes the results: the step's output and gradients
    with replay are compared bitwise with the eager step's.

On the CPU (--device cpu) replay does not apply (cuda libraries only): the
replay row equals the eager one. Needs rnn-compile on PATH (or
RNNC_COMPILE) and the rnnc package.

Usage: bench/torch_cuda_replay.py [--T 32 --B 64 --I 256 --H 256 --L 1]
       [--iters 20] [--warmup 3] [--device cuda]
"""

import statistics
import sys
import time

from torch_step import parse_args, train_step

args = parse_args(__doc__.split("\n")[0], device="cuda")

import torch  # noqa: E402

import rnnc.torch as rt  # noqa: E402

T, B, I, H, L = args.T, args.B, args.I, args.H, args.L
try:
    device = torch.device(args.device)
except RuntimeError:
    device = None
if device is None or device.type not in ("cpu", "cuda"):
    sys.exit(f"torch_cuda_replay: --device {args.device!r}: expected cuda, "
             "cuda:N or cpu")
if device.type == "cuda" and not torch.cuda.is_available():
    sys.exit("torch_cuda_replay: no CUDA device (use --device cpu)")


def sync():
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(fn):
    for _ in range(args.warmup):
        fn()
    times = []
    for _ in range(args.iters):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


torch.manual_seed(0)
ours = rt.LSTM(I, H, L).to(device)
ref = torch.nn.LSTM(I, H, L).to(device)
with torch.no_grad():
    for a, b in zip(ref.parameters(), ours.parameters()):
        a.copy_(b)
x = torch.randn(T, B, I, device=device, requires_grad=True)
h0 = torch.randn(L, B, H, device=device, requires_grad=True)
c0 = torch.randn(L, B, H, device=device, requires_grad=True)
cotangents = [torch.randn(T, B, H, device=device),
              torch.randn(L, B, H, device=device),
              torch.randn(L, B, H, device=device)]


def results(module):
    step = train_step(module, x, h0, c0, cotangents)
    step()
    y, _ = module(x, (h0, c0))
    return [y.detach().cpu()] + [t.grad.cpu() for t in
                                 (x, h0, c0, *module.parameters())]


rows = {}
rt.set_graph_replay(0)
rows["eager"] = median_ms(train_step(ours, x, h0, c0, cotangents))
eager_results = results(ours)
rt.set_graph_replay(8)
try:
    rows["replay"] = median_ms(train_step(ours, x, h0, c0, cotangents))
    replay_results = results(ours)
finally:
    rt.set_graph_replay(0)
rows["torch"] = median_ms(train_step(ref, x, h0, c0, cotangents))
same = all(torch.equal(a, b) for a, b in zip(eager_results, replay_results))

name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
print(f"LSTM train step, T={T} B={B} I={I} H={H} L={L}, {name}, "
      f"median of {args.iters} after {args.warmup}")
for row, ms in rows.items():
    print(f"  {row:7s} {ms:9.3f} ms")
print(f"  replay/eager {rows['replay'] / rows['eager']:.3f}  "
      f"replay/torch {rows['replay'] / rows['torch']:.3f}  "
      f"eager/torch {rows['eager'] / rows['torch']:.3f}")
print(f"  replay gives the eager step's bits: {'yes' if same else 'NO'}")
sys.exit(0 if same else 1)
