#!/usr/bin/env python3
"""rnnc.torch through its custom ops (rnnc::forward, rnnc::backward,
rnnc::inference) against its eager path, and a compiled policy's graphs.

What it measures (CPU, --threads BLAS threads, default 1; one process)
  * Graph breaks: torch._dynamo.explain of a policy Linear -> rnnc LSTM ->
    Linear with resets, with and without grad (graphs and breaks).
  * Per call, median of --iters after --warmup, interleaved rounds (best
    round kept), for two workloads: a rollout step (T=1, B=8, no_grad
    inference) and a training step (--T --B --I --H --L, forward and
    backward):
      eager:    the module's plain eager call (the entry points called
                directly, no dispatcher);
      ops:      the same call through the custom ops and the dispatcher
                (what graph tools and tensor subclasses see);
      compiled: torch.compile(module, fullgraph=True);
      nn.LSTM:  torch.nn.LSTM, the peer.
    The custom-op path's overhead is ops - eager.

Usage: bench/torch_custom_op.py [--T 32 --B 64 --I 256 --H 256 --L 1]
       [--threads 1] [--iters 20] [--warmup 3] [--rounds 3]
Needs rnn-compile on PATH (or RNNC_COMPILE) and the rnnc package.
"""

import sys

from torch_step import blas_line, median_ms, parse_args, train_step

args = parse_args(__doc__.split("\n")[0], rounds=3)

import torch  # noqa: E402

import rnnc.torch as rt  # noqa: E402
from rnnc import _autograd  # noqa: E402

torch.set_num_threads(args.threads)
torch.manual_seed(0)
# Where a module's call goes: through the ops while this says so.
eager_route = _autograd._through_ops


class Policy(torch.nn.Module):
    def __init__(self, obs, hidden, actions):
        super().__init__()
        self.encoder = torch.nn.Linear(obs, hidden)
        self.rnn = rt.LSTM(hidden, hidden)
        self.head = torch.nn.Linear(hidden, actions)

    def forward(self, obs, state, is_init):
        y, state = self.rnn(torch.tanh(self.encoder(obs)), state,
                            is_init=is_init)
        return self.head(y), state


def graph_breaks():
    T, B = 8, 4
    policy = Policy(6, 16, 3)
    obs = torch.randn(T, B, 6)
    state = (torch.zeros(1, B, 16), torch.zeros(1, B, 16))
    is_init = torch.zeros(T, B, dtype=torch.bool)
    is_init[3, 1] = True
    for grad in (True, False):
        with torch.set_grad_enabled(grad):
            explained = torch._dynamo.explain(policy)(obs, state, is_init)
        print(f"  {'train' if grad else 'no_grad'}: "
              f"{explained.graph_count} graph(s), "
              f"{explained.graph_break_count} graph break(s)")
    torch._dynamo.reset()


def workload(T, B, I, H, L, train):
    """The step of each path for one shape; nn.LSTM shares the weights."""
    ours = rt.LSTM(I, H, L)
    ref = torch.nn.LSTM(I, H, L)
    ref.load_state_dict(ours.state_dict())
    x = torch.randn(T, B, I, requires_grad=train)
    h0 = torch.randn(L, B, H, requires_grad=train)
    c0 = torch.randn(L, B, H, requires_grad=train)
    cotangents = [torch.randn(T, B, H), torch.randn(L, B, H),
                  torch.randn(L, B, H)]
    compiled = torch.compile(ours, fullgraph=True)

    def infer(module):
        def step():
            with torch.no_grad():
                module(x, (h0, c0))
        return step

    make = (lambda m: train_step(m, x, h0, c0, cotangents)) if train \
        else infer
    steps = {"eager": make(ours), "ops": make(ours),
             "compiled": make(compiled), "nn.LSTM": make(ref)}
    return steps


def timed(steps):
    best = {}
    for _ in range(args.rounds):
        for name, step in steps.items():
            _autograd._through_ops = (lambda tensors: True) \
                if name == "ops" else eager_route
            ms = median_ms(step, args.iters, args.warmup)
            best[name] = min(best.get(name, ms), ms)
    _autograd._through_ops = eager_route
    return best


print(blas_line())
print(f"rnnc.torch custom ops (CPU, {args.threads} thread(s), "
      f"torch {torch.__version__})")
print("graph breaks, torch._dynamo.explain of Linear -> rnnc LSTM -> "
      "Linear:")
graph_breaks()
print(f"per call, ms (median of {args.iters}, best of {args.rounds} "
      "interleaved rounds):")
print(f"{'':34} {'eager':>9} {'ops':>9} {'compiled':>9} {'nn.LSTM':>9} "
      f"{'ops-eager':>10} {'ops/eager':>9}")
for label, shape, train in (
        ("rollout T=1 B=8 I=H=64 infer", (1, 8, 64, 64, 1), False),
        (f"train T={args.T} B={args.B} I={args.I} H={args.H} L={args.L}",
         (args.T, args.B, args.I, args.H, args.L), True)):
    t = timed(workload(*shape, train))
    print(f"{label:34} {t['eager']:9.3f} {t['ops']:9.3f} "
          f"{t['compiled']:9.3f} {t['nn.LSTM']:9.3f} "
          f"{t['ops'] - t['eager']:10.3f} {t['ops'] / t['eager']:9.2f}")
sys.stdout.flush()
