#!/usr/bin/env python3
"""What `jax.vmap` over per-seed weights costs rnnc.jax, as PureJaxRL and
Craftax vmap whole training runs over seeds: each seed has its own
parameters, inputs and states. rnnc.jax's FFI call is grouped (one call
whose handler runs the entry point once per seed); the scanned cell of
bench/jax_vs_scan.py is batched by XLA, its per-step products becoming
batched products. All jitted, in one process, interleaved rounds; prints,
per number of seeds V, the median time of the vmapped training step (a
loss of the outputs and its gradients with respect to the parameters, the
input and the initial state) and rollout step, each side's time per seed,
their ratio, and rnnc.jax's grouped call against one call per seed in a
loop of XLA's program (`lax.map`), which must give the same bits.

Usage: bench/jax_vmap_seeds.py [--cell gru|lstm] [--T 128 --B 2 --I 128
       --H 128] [--rollout-B 8] [--seeds 1,4,16] [--rounds 5] [--iters 10]
The default shape is examples/purejaxrl_ppo_rnn.py's minibatch (8 envs in
4 minibatches, 128 steps, a GRU of 128). Run with one thread for the CPU:
  XLA_FLAGS=--xla_cpu_multi_thread_eigen=false OPENBLAS_NUM_THREADS=1 ...
"""

import argparse
import statistics

import jax
import jax.numpy as jnp

import rnnc.jax as rj
from cli import positive_ints
from jax_vs_scan import (loss_and_grads, peers, print_device,
                         shape_arguments, timed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shape_arguments(ap, T=128, B=2, I=128, H=128, rollout_B=8, iters=10)
    ap.add_argument("--seeds", type=positive_ints, default="1,4,16",
                    help="comma list of seed counts, each at least 1")
    args = ap.parse_args()
    print_device()
    cell, I, H = args.cell, args.I, args.H
    states = 2 if cell == "lstm" else 1
    sides = peers(cell)

    def inputs(key, v, seq, batch):
        """Per-seed parameters, inputs, resets and states, stacked on a
        leading axis of v."""
        keys = jax.random.split(key, v)
        cases = []
        for k in keys:
            kp, kx, kr = jax.random.split(k, 3)
            params = rj.init_params(kp, cell, I, H, 1)
            x = jax.random.normal(kx, (seq, batch, I))
            is_init = jax.random.uniform(kr, (seq, batch)) < 0.05
            state = tuple(jnp.zeros((1, batch, H)) for _ in range(states))
            cases.append((params, x, is_init, state))
        return jax.tree_util.tree_map(lambda *a: jnp.stack(a), *cases)

    seeds = args.seeds
    for name, seq, batch, make in (("train", args.T, args.B, loss_and_grads),
                                   ("rollout", 1, args.rollout_B,
                                    lambda run: run)):
        step = make(sides["rnnc.jax"])
        for v in seeds:
            batched = inputs(jax.random.PRNGKey(v), v, seq, batch)
            fns = {peer: jax.jit(jax.vmap(make(run)))
                   for peer, run in sides.items()}
            # One call per seed, a loop in XLA's program.
            fns["calls"] = jax.jit(lambda *a: jax.lax.map(
                lambda one: step(*one), a))
            # The same values from every side before any timing.
            outs = {peer: fn(*batched) for peer, fn in fns.items()}
            err = max(float(jnp.abs(a - b).max()) for a, b in zip(
                jax.tree_util.tree_leaves(outs["rnnc.jax"]),
                jax.tree_util.tree_leaves(outs["lax.scan"])))
            # Of a training step, the gradients: the loss is XLA's sum,
            # whose order may differ between the two programs.
            rnnc = lambda peer: jax.tree_util.tree_leaves(  # noqa: E731
                outs[peer][1] if name == "train" else outs[peer])
            same = all(bool((a == b).all())
                       for a, b in zip(rnnc("rnnc.jax"), rnnc("calls")))
            times = {peer: [] for peer in fns}
            for _ in range(args.rounds):
                for peer, fn in fns.items():
                    times[peer].append(timed(fn, batched, args.iters))
            med = {peer: statistics.median(t) for peer, t in times.items()}
            print(f"{cell} {name} T={seq} B={batch} I={I} H={H} V={v}: "
                  f"rnnc.jax {med['rnnc.jax']:.3f} ms "
                  f"({med['rnnc.jax'] / v:.3f} per seed), lax.scan "
                  f"{med['lax.scan']:.3f} ms "
                  f"({med['lax.scan'] / v:.3f} per seed), ratio "
                  f"{med['rnnc.jax'] / med['lax.scan']:.2f}; one call per "
                  f"seed {med['calls']:.3f} ms, grouped / that "
                  f"{med['rnnc.jax'] / med['calls']:.2f} (bitwise "
                  f"{'equal' if same else 'DIFFERENT'}; results agree "
                  f"with lax.scan to {err:.1e})", flush=True)


if __name__ == "__main__":
    main()
