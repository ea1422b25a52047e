"""Recurrent PPO on a partially observable CartPole, in the shape of
CleanRL's ppo_atari_lstm.py, with the LSTM of `rnnc.torch`.

CartPole-v1 with the velocities masked out (the agent sees the cart
position and the pole angle only, so it has to remember where they were:
the task needs the LSTM), vectorized with `gymnasium.vector.SyncVectorEnv`.

CleanRL's recurrent agent runs its LSTM one step at a time in a Python
loop and multiplies the state by (1 - done) before each step, so that an
episode that starts at step t starts from zero:

    for h, d in zip(hidden, done):
        h, state = lstm(h.unsqueeze(0), ((1 - d) * state[0],
                                         (1 - d) * state[1]))

`rnnc.torch.LSTM` takes the dones as its reset mask, `is_init` (the state
entering step t of column b is zero where is_init[t, b]), so the update
runs a whole minibatch [num_steps, envs per minibatch] in one call:

    y, state = lstm(hidden, state, is_init=done.bool())

The rollout makes the same call with one step (T = 1) per environment
step. `--lstm torch` runs the same script with `torch.nn.LSTM` and
CleanRL's loop, for comparison; both build the same weights from the same
seed. `--check-first-update` prints, once, the first minibatch's loss,
its terms and its gradient norms (before clipping) as one JSON line,
`first_update: {...}`, with a fingerprint of the rollout it was computed
on: the two variants' lines agree to float32 rounding
(python/tests/test_examples.py checks them).

    PYTHONPATH=python PATH=build/bin:$PATH \\
        python3 examples/cleanrl_ppo_lstm.py [--lstm torch]

Each update prints one line: the episodes that ended during its rollout
(count, mean and max return), the last minibatch's losses and the steps
per second so far. On the CPU one library of rnnc's serves every (T, B)
shape; on a GPU rnnc compiles a library per shape on first use (cached on
disk), and this script uses two, [1, num_envs] for the rollout and the
bootstrap value, [num_steps, num_envs / num_minibatches] for the update.

Differences from CleanRL's script: an MLP encoder in place of the
convolutions; classic-control settings (clip 0.2, learning rate 1e-3,
annealed); running normalizations of observations and rewards (see
`make_env`); and gymnasium 1.x's same-step autoreset (CleanRL's script is
written against gymnasium 0.29), which gives CleanRL's storage layout: the
observation returned with done = True is the first one of the next
episode.
"""

import argparse
import json
import random
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn, optim
from torch.distributions.categorical import Categorical


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"must be a positive integer, got {text}")
    return value


def positive_float(text):
    value = float(text)
    if not value > 0:  # NaN included
        raise argparse.ArgumentTypeError(
            f"must be a positive number, got {text}")
    return value


def unit_float(text):
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(
            f"must be in [0, 1], got {text}")
    return value


def device(text):
    try:
        dev = torch.device(text)
    except RuntimeError:
        raise argparse.ArgumentTypeError(
            f"not a torch device: {text!r} (cpu or cuda)") from None
    if dev.type not in ("cpu", "cuda"):
        raise argparse.ArgumentTypeError(
            f"must be cpu or cuda, got {text!r}")
    return text


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lstm", choices=("rnnc", "torch"), default="rnnc",
                   help="rnnc.torch.LSTM with is_init (one call per "
                        "minibatch), or torch.nn.LSTM with CleanRL's "
                        "per-step loop")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=positive_int, default=100000)
    p.add_argument("--num-envs", type=positive_int, default=8)
    p.add_argument("--num-steps", type=positive_int, default=128,
                   help="steps per environment per rollout (the update's T)")
    p.add_argument("--num-minibatches", type=positive_int, default=4,
                   help="minibatches of whole environments per epoch")
    p.add_argument("--update-epochs", type=positive_int, default=4)
    p.add_argument("--learning-rate", type=positive_float, default=1e-3)
    p.add_argument("--no-anneal-lr", dest="anneal_lr", action="store_false")
    p.add_argument("--gamma", type=unit_float, default=0.99)
    p.add_argument("--gae-lambda", type=unit_float, default=0.95)
    p.add_argument("--clip-coef", type=positive_float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=positive_float, default=0.5)
    p.add_argument("--target-kl", type=positive_float, default=None)
    p.add_argument("--hidden-size", type=positive_int, default=64)
    p.add_argument("--device", type=device, default="cpu",
                   help="cpu or cuda")
    p.add_argument("--threads", type=positive_int, default=1,
                   help="torch.set_num_threads (default 1: the layers are "
                        "small)")
    p.add_argument("--check-first-update", action="store_true",
                   help="print the first minibatch's loss and gradient "
                        "norms as JSON")
    args = p.parse_args(argv)
    if args.num_envs % args.num_minibatches:
        p.error("--num-envs must be a multiple of --num-minibatches "
                "(a minibatch holds whole environments)")
    if (torch.device(args.device).type == "cuda"
            and not torch.cuda.is_available()):
        p.error(f"--device {args.device}: CUDA is not available")
    args.batch_size = args.num_envs * args.num_steps
    args.num_iterations = args.total_timesteps // args.batch_size
    if args.num_iterations < 1:
        p.error(f"--total-timesteps must be at least num_envs * num_steps "
                f"= {args.batch_size}")
    return args


class MaskVelocity(gym.ObservationWrapper):
    """CartPole with the cart velocity and the pole's angular velocity
    removed from the observation: [x, theta]."""

    KEEP = [0, 2]

    def __init__(self, env):
        super().__init__(env)
        space = env.observation_space
        self.observation_space = gym.spaces.Box(
            space.low[self.KEEP], space.high[self.KEEP], dtype=space.dtype)

    def observation(self, observation):
        return observation[self.KEEP]


def make_env():
    """The masked CartPole, with episode statistics (of the raw rewards)
    and running normalizations of observations and rewards, as CleanRL's
    continuous-control scripts have: the masked observations are small
    (std ~0.08), and without the normalization the LSTM's features are
    too small for the policy to learn at these settings."""
    def thunk():
        env = MaskVelocity(gym.make("CartPole-v1"))
        env = gym.wrappers.RecordEpisodeStatistics(env)
        env = gym.wrappers.NormalizeObservation(env)
        return gym.wrappers.NormalizeReward(env, gamma=0.99)
    return thunk


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """CleanRL's recurrent agent with an MLP encoder; `get_states` runs the
    LSTM over time-major flattened inputs [T * B, ...] with the dones of
    the same steps."""

    def __init__(self, obs_size, num_actions, hidden_size, lstm):
        super().__init__()
        self.network = nn.Sequential(
            layer_init(nn.Linear(obs_size, hidden_size)), nn.Tanh())
        reference = nn.LSTM(hidden_size, hidden_size)
        for name, param in reference.named_parameters():
            if "bias" in name:
                nn.init.constant_(param, 0)
            elif "weight" in name:
                nn.init.orthogonal_(param, 1.0)
        self.fused = lstm == "rnnc"
        if self.fused:
            import rnnc.torch
            # The same weights; the module's own initialization draws from
            # a forked generator so that both variants go on with the same
            # random stream.
            with torch.random.fork_rng(devices=[]):
                self.lstm = rnnc.torch.LSTM(hidden_size, hidden_size)
            self.lstm.load_state_dict(reference.state_dict())
        else:
            self.lstm = reference
        self.actor = layer_init(nn.Linear(hidden_size, num_actions), std=0.01)
        self.critic = layer_init(nn.Linear(hidden_size, 1), std=1)

    def get_states(self, x, lstm_state, done):
        hidden = self.network(x)
        batch_size = lstm_state[0].shape[1]
        hidden = hidden.reshape((-1, batch_size, self.lstm.input_size))
        done = done.reshape((-1, batch_size))
        if self.fused:
            # One call over every step: a done at (t, b) starts column b's
            # new episode from zero at step t.
            new_hidden, lstm_state = self.lstm(hidden, lstm_state,
                                               is_init=done.bool())
            return new_hidden.flatten(0, 1), lstm_state
        new_hidden = []
        for h, d in zip(hidden, done):
            h, lstm_state = self.lstm(
                h.unsqueeze(0),
                ((1.0 - d).view(1, -1, 1) * lstm_state[0],
                 (1.0 - d).view(1, -1, 1) * lstm_state[1]))
            new_hidden += [h]
        return torch.flatten(torch.cat(new_hidden), 0, 1), lstm_state

    def get_value(self, x, lstm_state, done):
        hidden, _ = self.get_states(x, lstm_state, done)
        return self.critic(hidden)

    def get_action_and_value(self, x, lstm_state, done, action=None):
        hidden, lstm_state = self.get_states(x, lstm_state, done)
        logits = self.actor(hidden)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return (action, probs.log_prob(action), probs.entropy(),
                self.critic(hidden), lstm_state)


def first_update_report(agent, loss, pg_loss, v_loss, entropy_loss,
                        fingerprint):
    """The values --check-first-update prints: the loss and its terms,
    the gradients' norms (all together and per parameter, before
    clipping) and the rollout's fingerprint."""
    grads = {name: p.grad.norm().item()
             for name, p in agent.named_parameters() if p.grad is not None}
    total = torch.linalg.vector_norm(torch.stack(
        [p.grad.norm() for p in agent.parameters() if p.grad is not None]))
    return {"loss": loss.item(), "pg_loss": pg_loss.item(),
            "v_loss": v_loss.item(), "entropy": entropy_loss.item(),
            "grad_norm": total.item(), "grad_norms": grads,
            "rollout": fingerprint}


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = True
    device = torch.device(args.device)

    envs = gym.vector.SyncVectorEnv(
        [make_env() for _ in range(args.num_envs)],
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    obs_shape = envs.single_observation_space.shape
    agent = Agent(obs_shape[0], envs.single_action_space.n,
                  args.hidden_size, args.lstm).to(device)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate,
                           eps=1e-5)

    T, N = args.num_steps, args.num_envs
    obs = torch.zeros((T, N) + obs_shape, device=device)
    actions = torch.zeros((T, N), device=device)
    logprobs = torch.zeros((T, N), device=device)
    rewards = torch.zeros((T, N), device=device)
    dones = torch.zeros((T, N), device=device)
    values = torch.zeros((T, N), device=device)

    global_step = 0
    start_time = time.time()
    next_obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.tensor(next_obs, dtype=torch.float32, device=device)
    next_done = torch.zeros(N, device=device)
    L, H = agent.lstm.num_layers, agent.lstm.hidden_size
    next_lstm_state = (torch.zeros(L, N, H, device=device),
                       torch.zeros(L, N, H, device=device))
    report = None

    for iteration in range(1, args.num_iterations + 1):
        initial_lstm_state = (next_lstm_state[0].clone(),
                              next_lstm_state[1].clone())
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / args.num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        finished = []
        for step in range(T):
            global_step += N
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value, next_lstm_state = \
                    agent.get_action_and_value(next_obs, next_lstm_state,
                                               next_done)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob

            next_obs, reward, terminations, truncations, infos = envs.step(
                action.cpu().numpy())
            done = np.logical_or(terminations, truncations)
            rewards[step] = torch.tensor(reward, device=device).view(-1)
            next_obs = torch.tensor(next_obs, dtype=torch.float32,
                                    device=device)
            next_done = torch.tensor(done, dtype=torch.float32,
                                     device=device)
            # Same-step autoreset: the ended episodes' statistics are in
            # final_info.
            final = infos.get("final_info", {})
            if "episode" in final:
                finished += final["episode"]["r"][final["_episode"]].tolist()

        # GAE, bootstrapped from the value after the last step.
        with torch.no_grad():
            next_value = agent.get_value(next_obs, next_lstm_state,
                                         next_done).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(T)):
                if t == T - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * \
                    nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * \
                    args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1,) + obs_shape)
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape(-1)
        b_dones = dones.reshape(-1)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)

        # Minibatches of whole environments, each a [T, envsperbatch]
        # sequence: flat index t * N + env (time-major).
        envsperbatch = N // args.num_minibatches
        envinds = np.arange(N)
        flatinds = np.arange(args.batch_size).reshape(T, N)
        clipfracs = []
        for epoch in range(args.update_epochs):
            np.random.shuffle(envinds)
            for start in range(0, N, envsperbatch):
                mbenvinds = envinds[start:start + envsperbatch]
                mb_inds = flatinds[:, mbenvinds].ravel()

                _, newlogprob, entropy, newvalue, _ = \
                    agent.get_action_and_value(
                        b_obs[mb_inds],
                        (initial_lstm_state[0][:, mbenvinds],
                         initial_lstm_state[1][:, mbenvinds]),
                        b_dones[mb_inds],
                        b_actions.long()[mb_inds])
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()

                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > args.clip_coef)
                                  .float().mean().item()]

                mb_advantages = b_advantages[mb_inds]
                mb_advantages = (mb_advantages - mb_advantages.mean()) / \
                    (mb_advantages.std() + 1e-8)

                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(
                    ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()

                newvalue = newvalue.view(-1)
                v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                v_clipped = b_values[mb_inds] + torch.clamp(
                    newvalue - b_values[mb_inds], -args.clip_coef,
                    args.clip_coef)
                v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                v_loss = 0.5 * torch.max(v_loss_unclipped,
                                         v_loss_clipped).mean()

                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + \
                    v_loss * args.vf_coef

                optimizer.zero_grad()
                loss.backward()
                if args.check_first_update and report is None:
                    fingerprint = {
                        "actions": int(actions.sum().item()),
                        "dones": int(dones.sum().item()),
                        "rewards": float(rewards.sum().item()),
                        "obs": float(obs.double().sum().item()),
                        "minibatch_envs": mbenvinds.tolist(),
                        # Episodes that start inside the minibatch's
                        # sequences (after step 0): resets the LSTM runs.
                        "minibatch_resets": int(
                            dones[1:, mbenvinds].sum().item())}
                    report = first_update_report(
                        agent, loss, pg_loss, v_loss, entropy_loss,
                        fingerprint)
                    print("first_update: " + json.dumps(report), flush=True)
                nn.utils.clip_grad_norm_(agent.parameters(),
                                         args.max_grad_norm)
                optimizer.step()

            if args.target_kl is not None and approx_kl > args.target_kl:
                break

        sps = int(global_step / (time.time() - start_time))
        returns_text = (f"episodes={len(finished)} "
                        f"return_mean={np.mean(finished):.1f} "
                        f"return_max={np.max(finished):.0f}"
                        if finished else "episodes=0")
        print(f"update={iteration}/{args.num_iterations} "
              f"global_step={global_step} {returns_text} "
              f"loss={loss.item():.6g} pg_loss={pg_loss.item():.6g} "
              f"v_loss={v_loss.item():.6g} entropy={entropy_loss.item():.4f} "
              f"approx_kl={approx_kl.item():.3g} "
              f"clipfrac={np.mean(clipfracs):.3f} SPS={sps}", flush=True)

    envs.close()


if __name__ == "__main__":
    main()
