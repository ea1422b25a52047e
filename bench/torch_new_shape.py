"""What a sequence length and batch size not seen before costs an
rnnc.torch LSTM on the CPU: the first training call (forward and
backward) at each new (T, B) minus the median of later calls at it, with
the library of every shape (the module's default) and with a library per
shape, as the module ran before (rnn-compile on the first call, in a fresh
cache directory). One process, one thread. The first call also touches
its tensors' fresh memory (PyTorch's CPU allocator returns large blocks to
the system); `at(T, B) ms` is rnnc's own part: the library's sizes entry
points, the buffers' shapes and the saved layout at the shape.

    python3 bench/torch_new_shape.py [--hidden 64] [--shapes 1x8,32x64,...]

Needs rnn-compile on PATH (or RNNC_COMPILE).
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

import torch  # noqa: E402

import rnnc.torch as rt  # noqa: E402
from cli import positive_int, shape_list  # noqa: E402
from rnnc._dynamic import ShapedLibrary  # noqa: E402


def step(lstm, x, is_init):
    y, (h, c) = lstm(x, is_init=is_init)
    torch.autograd.grad(y.sum() + h.sum(), [x, *lstm.parameters()])


def timed(lstm, x, is_init):
    start = time.perf_counter()
    step(lstm, x, is_init)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hidden", type=positive_int, default=64)
    parser.add_argument("--shapes", type=shape_list,
                        default="1x8,32x64,17x5,100x3,64x16,3x1,250x2")
    parser.add_argument("--iters", type=positive_int, default=20)
    args = parser.parse_args()
    shapes = args.shapes
    torch.set_num_threads(1)
    H = args.hidden
    print(f"# rnnc.torch LSTM I=H={H} L=1, training call, CPU, 1 thread; "
          f"torch {torch.__version__}")
    print(f"{'T x B':>9}  {'call ms':>9}  {'new shape ms':>12}  "
          f"{'at(T, B) ms':>11}  {'per-shape library: new shape ms':>32}")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["RNNC_CACHE_DIR"] = cache
        torch.manual_seed(0)
        every = rt.LSTM(H, H)
        per_shape = rt.LSTM(H, H)
        per_shape.load_state_dict(every.state_dict())
        # Every call's library chosen as before the library of every
        # shape: that of its (T, B).
        per_shape._every_shape = lambda arguments: False
        # The library of every shape loaded (compiled) at another shape.
        warm = torch.randn(2, 2, H, requires_grad=True)
        step(every, warm, torch.zeros(2, 2, dtype=torch.bool))
        for T, B in shapes:
            x = torch.randn(T, B, H, requires_grad=True)
            is_init = torch.rand(T, B) < 0.1
            rows = []
            for lstm in (every, per_shape):
                first = timed(lstm, x, is_init)
                later = statistics.median(timed(lstm, x, is_init)
                                          for _ in range(args.iters))
                rows.append((first, later))
            (first, later), (first_ps, later_ps) = rows
            library = every._library(T, B, x.device, x.dtype, "zero")
            at = []
            for _ in range(args.iters):
                start = time.perf_counter()
                ShapedLibrary(library, T, B)
                at.append(time.perf_counter() - start)
            print(f"{T:>4} x {B:<3} {later * 1e3:9.3f}  "
                  f"{(first - later) * 1e3:12.3f}  "
                  f"{statistics.median(at) * 1e3:11.3f}  "
                  f"{(first_ps - later_ps) * 1e3:32.1f}", flush=True)


if __name__ == "__main__":
    main()
