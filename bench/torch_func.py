"""What torch.func costs an rnnc.torch LSTM on the CPU, against the loop
over elements it replaces, each in the same process: N elements of [T, B]
sequences, one weight set (or N, stacked), one thread, median of
--iters runs. Rows:

  inference      vmap over the elements (folded into one call of N*B
                 columns) / a Python loop of rnnc calls
  grad of vmap   training on the elements' summed loss (one folded
                 forward and backward) / a loop of rnnc training calls
  vmap of grad   per-example gradients of the inputs (folded)
  per-example    per-example gradients of the parameters (the folded
                 forward, then a forward and a backward per element)
  ensemble       vmap over N stacked weight sets (a call per member)

each also against torch.nn.LSTM's loop over the same elements, without
the 5% resets (torch.nn has none).

    python3 bench/torch_func.py [--hidden 64] [--seq 16] [--batch 8] [-n 16]

Needs rnn-compile on PATH (or RNNC_COMPILE).
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

import torch  # noqa: E402

import rnnc.torch as rt  # noqa: E402
from cli import positive_int  # noqa: E402


def median_ms(run, iters):
    run()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hidden", type=positive_int, default=64)
    parser.add_argument("--seq", type=positive_int, default=16)
    parser.add_argument("--batch", type=positive_int, default=8)
    parser.add_argument("-n", type=positive_int, default=16)
    parser.add_argument("--iters", type=positive_int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    T, B, H, N = args.seq, args.batch, args.hidden, args.n
    torch.manual_seed(0)
    ours = rt.LSTM(H, H)
    ref = torch.nn.LSTM(H, H)
    ref.load_state_dict(ours.state_dict())
    xs = torch.randn(N, T, B, H)
    is_init = torch.rand(N, T, B) < 0.05
    params = {k: v.detach() for k, v in ours.named_parameters()}
    stacked = {k: v.expand(N, *v.shape).clone() for k, v in params.items()}

    def loss(module):
        def f(p, x, init):
            kwargs = {"is_init": init} if module is ours else {}
            y, _ = torch.func.functional_call(module, p, (x,), kwargs)
            return y.square().sum()
        return f

    def loop_grads(module, wrt_params):
        for i in range(N):
            x = xs[i].clone().requires_grad_()
            kwargs = {"is_init": is_init[i]} if module is ours else {}
            y, _ = module(x, **kwargs)
            wrt = list(module.parameters()) if wrt_params else [x]
            torch.autograd.grad(y.square().sum(), wrt)

    def loop_inference(module):
        with torch.no_grad():
            for i in range(N):
                kwargs = {"is_init": is_init[i]} if module is ours else {}
                module(xs[i], **kwargs)

    def summed(module):
        def f(p):
            return torch.func.vmap(loss(module), in_dims=(None, 0, 0))(
                p, xs, is_init).sum()
        return f

    rows = {
        "inference": (
            lambda: torch.func.vmap(
                lambda x, i: ours(x, is_init=i)[0])(xs, is_init),
            lambda: loop_inference(ours), lambda: loop_inference(ref)),
        "grad of vmap": (
            lambda: torch.func.grad(summed(ours))(params),
            lambda: loop_grads(ours, True), lambda: loop_grads(ref, True)),
        "vmap of grad": (
            lambda: torch.func.vmap(torch.func.grad(loss(ours), argnums=1),
                                    in_dims=(None, 0, 0))(params, xs,
                                                          is_init),
            lambda: loop_grads(ours, False), lambda: loop_grads(ref, False)),
        "per-example": (
            lambda: torch.func.vmap(torch.func.grad(loss(ours)),
                                    in_dims=(None, 0, 0))(params, xs,
                                                          is_init),
            lambda: loop_grads(ours, True), lambda: loop_grads(ref, True)),
        "ensemble": (
            lambda: torch.func.vmap(torch.func.grad(loss(ours)))(
                stacked, xs, is_init),
            lambda: loop_grads(ours, True), lambda: loop_grads(ref, True)),
    }
    with torch.no_grad():
        ours(xs[0])
    print(f"# rnnc.torch LSTM I=H={H} L=1 under torch.func, N={N} elements "
          f"of T={T} B={B}, CPU, 1 thread; torch {torch.__version__}")
    print(f"{'':>13}  {'torch.func ms':>13}  {'rnnc loop ms':>12}  "
          f"{'/ loop':>7}  {'torch.nn loop ms':>16}  {'/ torch.nn':>10}")
    for name, (func, loop, nn_loop) in rows.items():
        t_func = median_ms(func, args.iters)
        t_loop = median_ms(loop, args.iters)
        t_nn = median_ms(nn_loop, args.iters)
        print(f"{name:>13}  {t_func:13.2f}  {t_loop:12.2f}  "
              f"{t_func / t_loop:7.2f}  {t_nn:16.2f}  {t_func / t_nn:10.2f}")


if __name__ == "__main__":
    main()
