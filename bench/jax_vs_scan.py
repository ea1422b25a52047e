#!/usr/bin/env python3
"""rnnc.jax against a scanned cell in JAX, the way PureJaxRL-style code
runs a recurrent policy: `lax.scan` over a GRU or LSTM cell written as
Flax's `GRUCell`/`OptimizedLSTMCell` compute it (one fused input and one
fused recurrent matmul per step), the state reset with `jnp.where` before
each step. Both jitted, in one process, interleaved rounds; prints the
median times and their ratio for a training step (a loss of the outputs,
and its gradients with respect to the parameters, the input and the
initial state) and a rollout step (T = 1), each side's GEMM flop rate,
and ceilings for it on the device: a 1024^3 product through XLA and, on
the CPU, through the OpenBLAS rnnc's library calls. On JAX's GPU both
sides run there (rnnc.jax through its cuda target).

Usage: bench/jax_vs_scan.py [--cell gru|lstm] [--T 32 --B 64 --I 256
       --H 256] [--rollout-B 8] [--rounds 5] [--iters 20]
Run with one thread for the CPU figures the issue asks for:
  XLA_FLAGS=--xla_cpu_multi_thread_eigen=false OPENBLAS_NUM_THREADS=1 ...
"""

import argparse
import ctypes
import ctypes.util
import statistics
import time

import jax
import jax.numpy as jnp

import rnnc.jax as rj
from cli import positive_int


def scanned(cell):
    """The scanned cell: f(params, x, is_init, state) -> (y, state_n)."""
    def step(p, carry, x):
        h = carry[0]
        ai = x @ p["weight_ih_l0"].T + p["bias_ih_l0"]
        ah = h @ p["weight_hh_l0"].T + p["bias_hh_l0"]
        if cell == "lstm":
            i, f, g, o = jnp.split(ai + ah, 4, axis=-1)
            c = jax.nn.sigmoid(f) * carry[1] + \
                jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c)
        ir, iz, i_n = jnp.split(ai, 3, axis=-1)
        hr, hz, h_n = jnp.split(ah, 3, axis=-1)
        r, z = jax.nn.sigmoid(ir + hr), jax.nn.sigmoid(iz + hz)
        n = jnp.tanh(i_n + r * h_n)
        return ((1 - z) * n + z * h,)

    def run(p, x, is_init, state):
        def body(carry, inputs):
            xt, reset = inputs
            carry = tuple(jnp.where(reset[:, None], 0.0, s) for s in carry)
            carry = step(p, carry, xt)
            return carry, carry[0]
        carry, y = jax.lax.scan(body, tuple(s[0] for s in state),
                                (x, is_init))
        return y, tuple(s[None] for s in carry)
    return run


def peers(cell):
    """The two sides, f(params, x, is_init, state) -> (y, state_n)."""
    return {"rnnc.jax": lambda *a: rj.rnn(*a, cell=cell),
            "lax.scan": scanned(cell)}


def loss_and_grads(run):
    """The training step of `run`: a loss of the outputs, and its gradients
    with respect to the parameters, the input (what an encoder before the
    layer needs) and the initial state."""
    def loss(p, x, is_init, state):
        y, state_n = run(p, x, is_init, state)
        return (y ** 2).mean() + (state_n[0] ** 2).mean()
    return jax.value_and_grad(loss, argnums=(0, 1, 3))


def shape_arguments(ap, T, B, I, H, rollout_B, iters):
    """The flags both benchmarks take: the cell, the shapes and the
    rounds, with these defaults."""
    ap.add_argument("--cell", default="gru", choices=["gru", "lstm"])
    ap.add_argument("--T", type=positive_int, default=T)
    ap.add_argument("--B", type=positive_int, default=B)
    ap.add_argument("--I", type=positive_int, default=I)
    ap.add_argument("--H", type=positive_int, default=H)
    ap.add_argument("--rollout-B", type=positive_int, default=rollout_B)
    ap.add_argument("--rounds", type=positive_int, default=5)
    ap.add_argument("--iters", type=positive_int, default=iters)


def print_device():
    print(f"# jax {jax.__version__} on {jax.devices()[0].device_kind} "
          f"({jax.default_backend()})")


def timed(fn, args, iters):
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    for _ in range(iters):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - start) / iters * 1e3


def gemm_flops(cell, T, B, I, H, train):
    """The GEMM flops of a call, the same on both sides: per step one
    product with the input and one with the state in the forward, and in
    the backward their gradients with respect to the operand and to the
    weights."""
    gates = 4 if cell == "lstm" else 3
    forward = 2 * T * B * gates * H * (I + H)
    return 3 * forward if train else forward


def xla_rate(n=1024, iters=20):
    """GFLOP/s of an n^3 float32 product jitted by XLA."""
    a = jax.random.normal(jax.random.PRNGKey(2), (n, n))
    dot = jax.jit(lambda a, b: a @ b)
    ms = min(timed(dot, (a, a), iters) for _ in range(3))
    return 2 * n ** 3 / ms / 1e6


def openblas_rate(n=1024, iters=20):
    """GFLOP/s of an n^3 cblas_sgemm in the OpenBLAS rnnc's library links
    (the one already loaded into this process), or None if there is none."""
    import numpy as np
    name = ctypes.util.find_library("openblas")
    if not name:
        return None
    blas = ctypes.CDLL(name)
    a = np.ones((n, n), np.float32)
    c = np.empty_like(a)
    ptr = ctypes.c_void_p
    args = (101, 111, 111, n, n, n, ctypes.c_float(1.0),
            ptr(a.ctypes.data), n, ptr(a.ctypes.data), n,
            ctypes.c_float(0.0), ptr(c.ctypes.data), n)
    blas.cblas_sgemm(*args)
    best = None
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(iters):
            blas.cblas_sgemm(*args)
        s = (time.perf_counter() - start) / iters
        best = s if best is None else min(best, s)
    return 2 * n ** 3 / best / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shape_arguments(ap, T=32, B=64, I=256, H=256, rollout_B=8, iters=20)
    args = ap.parse_args()
    print_device()
    cell, T, B, I, H = args.cell, args.T, args.B, args.I, args.H
    states = 2 if cell == "lstm" else 1
    params = rj.init_params(jax.random.PRNGKey(0), cell, I, H, 1)
    sides = peers(cell)

    def train_step(run):
        return jax.jit(loss_and_grads(run))

    def rollout_step(run):
        return jax.jit(run)

    for name, batch, seq, make in (("train", B, T, train_step),
                                   ("rollout", args.rollout_B, 1,
                                    rollout_step)):
        key = jax.random.PRNGKey(1)
        x = jax.random.normal(key, (seq, batch, I))
        is_init = jax.random.uniform(key, (seq, batch)) < 0.05
        state = tuple(jnp.zeros((1, batch, H)) for _ in range(states))
        fns = {peer: make(run) for peer, run in sides.items()}
        # The same values from both before any timing.
        y_ours = sides["rnnc.jax"](params, x, is_init, state)[0]
        y_scan = sides["lax.scan"](params, x, is_init, state)[0]
        err = float(jnp.abs(y_ours - y_scan).max())
        times = {peer: [] for peer in fns}
        for _ in range(args.rounds):
            for peer, fn in fns.items():
                times[peer].append(timed(fn, (params, x, is_init, state),
                                         args.iters))
        med = {peer: statistics.median(t) for peer, t in times.items()}
        flops = gemm_flops(cell, seq, batch, I, H, name == "train")
        rate = {peer: flops / ms / 1e6 for peer, ms in med.items()}
        print(f"{cell} {name} T={seq} B={batch} I={I} H={H}: "
              f"rnnc.jax {med['rnnc.jax']:.3f} ms, lax.scan "
              f"{med['lax.scan']:.3f} ms, ratio "
              f"{med['rnnc.jax'] / med['lax.scan']:.2f} "
              f"(outputs agree to {err:.1e}); GEMM GFLOP/s: rnnc.jax "
              f"{rate['rnnc.jax']:.0f}, lax.scan {rate['lax.scan']:.0f}")
    line = f"ceilings, a 1024^3 float32 product: XLA {xla_rate():.0f} GFLOP/s"
    if jax.default_backend() == "cpu":
        blas = openblas_rate()
        line += ", OpenBLAS " + (f"{blas:.0f} GFLOP/s" if blas else
                                 "not found")
    print(line)


if __name__ == "__main__":
    main()
