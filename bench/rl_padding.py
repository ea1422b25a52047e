"""What padding cost the RL adapters, and what one library of every shape
saves: sb3-contrib's RecurrentPPO end to end, and a TorchRL loss's forward
and backward through rnnc.torchrl, each run three ways in one process:

  stock   the peer's own LSTM (sb3-contrib's torch.nn.LSTM policy; TorchRL's
          LSTMModule with its "pad" backend);
  padded  rnnc with a library per (T, B), as the adapters ran before one
          library served every shape: rnnc.sb3 pads each batch to powers of
          two in both sizes (the first real step reset to the given state),
          rnnc.torchrl runs the trajectories that end inside the sequence
          in extra calls of the first call's shape;
  dynamic rnnc's library of every shape: each batch as it comes.

Prints per run the wall time and its ratio to stock, the seconds spent in
rnn-compile and the libraries compiled (each mode has a fresh cache
directory), and the LSTMs' work: the T*B they ran over the T*B of the
batches (sb3-contrib: of its sequence batches; TorchRL: of the `[B, T]`
batch, whose trajectories that end inside it run again).

    python3 bench/rl_padding.py sb3 --hidden 256 --envs 16 --n-steps 128 \\
        --timesteps 16384
    python3 bench/rl_padding.py torchrl --hidden 256 --batch 64 --seq 32

CPU, one thread (torch and OpenBLAS), as sb3 advises for MLP policies.
Needs rnn-compile on PATH (or RNNC_COMPILE), sb3-contrib and gymnasium, or
torchrl.
"""

import argparse
import contextlib
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

import torch  # noqa: E402

import rnnc._cache as rnnc_cache  # noqa: E402
from cli import name_list, positive_int, probability  # noqa: E402

MODES = ("stock", "padded", "dynamic")


class Counters:
    """rnn-compile's runs and seconds, and the LSTMs' T*B against the
    batches' (the adapters' calls)."""

    def __init__(self):
        self.compiles = 0
        self.compile_s = 0.0
        self.real = self.run = 0
        self.shapes = set()


@contextlib.contextmanager
def counting(counters):
    """Counts rnn-compile's runs and time while the block runs."""
    compile_ = rnnc_cache._compile

    def timed(*args):
        start = time.perf_counter()
        try:
            return compile_(*args)
        finally:
            counters.compiles += 1
            counters.compile_s += time.perf_counter() - start

    rnnc_cache._compile = timed
    try:
        yield
    finally:
        rnnc_cache._compile = compile_


def per_shape(module):
    """Makes `module` (an rnnc.torch layer) run as before one library
    served every shape: a library per (T, B), and the adapters' padding.
    Both ask `_every_shape` (the library a call chooses, and through
    `_serves_every_shape` the adapters' choice)."""
    module._every_shape = lambda arguments: False


# --------------------------------------------------------------------------
# sb3-contrib
# --------------------------------------------------------------------------


def sb3_run(mode, args, counters):
    import gymnasium as gym
    import sb3_contrib
    from gymnasium import spaces
    from stable_baselines3.common.env_util import make_vec_env

    import rnnc.sb3 as rs

    class MaskVelocity(gym.ObservationWrapper):
        def __init__(self, env):
            super().__init__(env)
            low, high = env.observation_space.low, env.observation_space.high
            self.observation_space = spaces.Box(low[[0, 2]], high[[0, 2]])

        def observation(self, obs):
            return obs[[0, 2]]

    env = make_vec_env("CartPole-v1", n_envs=args.envs, seed=0,
                       wrapper_class=MaskVelocity)
    policy = "MlpLstmPolicy" if mode == "stock" else \
        rs.RecurrentActorCriticPolicy
    model = sb3_contrib.RecurrentPPO(
        policy, env, n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.epochs, seed=0, device="cpu",
        policy_kwargs=dict(lstm_hidden_size=args.hidden,
                           net_arch=dict(pi=[64], vf=[64])))
    lstms = [m for m in (model.policy.lstm_actor, model.policy.lstm_critic)
             if m is not None]
    if mode == "padded":
        for lstm in lstms:
            per_shape(lstm)
    if mode != "stock":
        process = model.policy._process_sequence

        def measured(features, lstm_states, episode_starts, lstm):
            n_seq = lstm_states[0].shape[1]
            T = features.shape[0] // n_seq
            counters.real += T * n_seq
            counters.shapes.add((T, n_seq))
            if lstm._serves_every_shape(features.device):
                counters.run += T * n_seq
            else:
                counters.run += (1 << (T - 1).bit_length()) * \
                    (1 << (n_seq - 1).bit_length())
            return process(features, lstm_states, episode_starts, lstm)

        model.policy._process_sequence = measured
    start = time.perf_counter()
    model.learn(args.timesteps)
    return time.perf_counter() - start


# --------------------------------------------------------------------------
# TorchRL
# --------------------------------------------------------------------------


def torchrl_run(mode, args, counters):
    from tensordict import TensorDict
    from torchrl.modules import LSTMModule as Stock
    from torchrl.modules import set_recurrent_mode

    import rnnc.torchrl as rr

    B, T, I, H = args.batch, args.seq, args.input, args.hidden
    torch.manual_seed(0)
    stock = Stock(I, H, 1, in_key="x", out_key="y", recurrent_backend="pad")
    if mode == "stock":
        module = stock
    else:
        module = rr.LSTMModule(I, H, 1, in_key="x", out_key="y")
        module.load_state_dict(stock.state_dict())
        if mode == "padded":
            per_shape(module.lstm)
        forward = module.lstm.forward

        def measured(x, *a, **k):
            counters.run += x.shape[0] * x.shape[1]
            counters.shapes.add(tuple(x.shape[:2]))
            return forward(x, *a, **k)

        module.lstm.forward = measured
    g = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(args.batches):
        is_init = torch.rand(B, T, 1, generator=g) < args.reset
        is_init[:, 0] = True
        data = TensorDict({
            "x": torch.randn(B, T, I, generator=g),
            "is_init": is_init,
            "recurrent_state_h": torch.zeros(B, T, 1, H),
            "recurrent_state_c": torch.zeros(B, T, 1, H)}, [B, T])
        batches.append(data)
    params = list(module.parameters())

    def step(data):
        counters.real += B * T
        with set_recurrent_mode(True):
            out = module(data.clone(False))
        loss = out["y"].square().mean() + sum(
            out[key].sum() for key in module.out_keys[1:])
        torch.autograd.grad(loss, params)

    step(batches[0])   # warm: the library loaded (compiled in the count)
    real, run = counters.real, counters.run
    start = time.perf_counter()
    for _ in range(args.repeats):
        for data in batches:
            step(data)
    elapsed = time.perf_counter() - start
    # The work of the timed calls only.
    scale = args.repeats * len(batches)
    counters.real = (counters.real - real) // scale
    counters.run = (counters.run - run) // scale
    return elapsed / scale


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("peer", choices=("sb3", "torchrl"))
    parser.add_argument("--hidden", type=positive_int, default=256)
    parser.add_argument("--modes", type=name_list(MODES),
                        default=",".join(MODES))
    # sb3-contrib
    parser.add_argument("--envs", type=positive_int, default=16)
    parser.add_argument("--n-steps", type=positive_int, default=128)
    parser.add_argument("--batch-size", type=positive_int, default=128)
    parser.add_argument("--epochs", type=positive_int, default=10)
    parser.add_argument("--timesteps", type=positive_int, default=16384)
    # TorchRL
    parser.add_argument("--batch", type=positive_int, default=64)
    parser.add_argument("--seq", type=positive_int, default=32)
    parser.add_argument("--input", type=positive_int, default=64)
    parser.add_argument("--reset", type=probability, default=0.05)
    parser.add_argument("--batches", type=positive_int, default=4)
    parser.add_argument("--repeats", type=positive_int, default=5)
    args = parser.parse_args()
    # Stock first, so that the others have its time for their ratio.
    modes = args.modes = [mode for mode in MODES if mode in args.modes]
    torch.set_num_threads(1)
    run = sb3_run if args.peer == "sb3" else torchrl_run
    print(f"# {args.peer}: " + " ".join(
        f"{k}={','.join(v) if k == 'modes' else v}"
        for k, v in sorted(vars(args).items()) if k != "peer"))
    print(f"# torch {torch.__version__}, OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    unit = "s (learn)" if args.peer == "sb3" else "ms (one update)"
    times = {}
    for mode in modes:
        counters = Counters()
        with tempfile.TemporaryDirectory() as cache:
            os.environ["RNNC_CACHE_DIR"] = cache
            with counting(counters):
                seconds = run(mode, args, counters)
        times[mode] = seconds
        ratio = f"{seconds / times['stock']:.2f}x stock" \
            if "stock" in times else ""
        shown = seconds if args.peer == "sb3" else seconds * 1e3
        line = f"{mode:8s} {shown:9.3f} {unit}  {ratio}"
        if mode != "stock":
            line += (f"  compiles {counters.compiles} "
                     f"({counters.compile_s:.1f} s)  shapes "
                     f"{len(counters.shapes)}  T*B run/real "
                     f"{counters.run / max(counters.real, 1):.2f}")
            if args.peer == "sb3":
                line += (f"  excluding compiles "
                         f"{seconds - counters.compile_s:.1f} s")
        print(line, flush=True)


if __name__ == "__main__":
    main()
