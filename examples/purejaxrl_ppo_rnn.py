"""PureJaxRL's recurrent PPO (PPO-RNN) on a partially observable gymnax
task, CartPole without its velocities, with the recurrent layer either
rnnc's (`rnnc.flax.GRU`) or Flax's `GRUCell` scanned as PureJaxRL's
`ScannedRNN` does, the whole training loop under one `jax.jit`.

    python3 examples/purejaxrl_ppo_rnn.py --rnn rnnc --timesteps 300000

Both layers compute the same function (a GRU whose state is reset to zero
where an episode starts); rnnc's runs a rollout step (T = 1) and an
update's sequences as one fused call each. Prints one JSON object: the
mean return of the episodes that ended in the first and in the last
tenth of training (one per run with --num-seeds N, N runs vmapped as
PureJaxRL vmaps them), and the wall time.

Needs jax, flax, optax and gymnax (pip install gymnax), and rnnc.
"""

import argparse
import functools
import json
import time

import flax.linen as nn
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training.train_state import TrainState

import rnnc.flax


class ScannedRNN(nn.Module):
    """PureJaxRL's ScannedRNN: Flax's GRUCell scanned over time, the state
    reset to zero where `resets` is set."""

    hidden_size: int

    @functools.partial(nn.scan, variable_broadcast="params", in_axes=0,
                       out_axes=0, split_rngs={"params": False})
    @nn.compact
    def __call__(self, h, inputs):
        x, reset = inputs
        h = jnp.where(reset[:, None], jnp.zeros_like(h), h)
        return nn.GRUCell(features=self.hidden_size)(h, x)


class FlaxGRU(nn.Module):
    """ScannedRNN with rnnc.flax.GRU's carry, `(h,)` of [1, B, H]."""

    hidden_size: int

    @nn.compact
    def __call__(self, carry, inputs):
        h, y = ScannedRNN(self.hidden_size)(carry[0][0], inputs)
        return (h[None],), y


class ActorCriticRNN(nn.Module):
    num_actions: int
    rnn: str
    hidden_size: int = 128

    def setup(self):
        self.embed = nn.Dense(self.hidden_size)
        self.core = (rnnc.flax.GRU(hidden_size=self.hidden_size)
                     if self.rnn == "rnnc" else
                     FlaxGRU(hidden_size=self.hidden_size))
        self.actor = [nn.Dense(self.hidden_size), nn.Dense(self.num_actions)]
        self.critic = [nn.Dense(self.hidden_size), nn.Dense(1)]

    def __call__(self, carry, x, resets):
        """x [T, B, obs], resets [T, B]: the new carry, the action logits
        and the values, [T, B, ...]."""
        carry, h = self.core(carry, (nn.relu(self.embed(x)), resets))
        logits = self.actor[1](nn.relu(self.actor[0](h)))
        value = self.critic[1](nn.relu(self.critic[0](h)))
        return carry, logits, value[..., 0]


def make_train(config):
    env, env_params = gymnax.make("CartPole-v1")
    num_actions = env.num_actions
    # Without the velocities: the cart's position and the pole's angle.
    observe = lambda obs: obs[..., jnp.array([0, 2])]  # noqa: E731
    E, T = config["num_envs"], config["num_steps"]
    updates = config["timesteps"] // (E * T)
    minibatch = E // config["num_minibatches"]
    net = ActorCriticRNN(num_actions, config["rnn"])
    # The GRU's zero state, (h,) of [1, E, H], for both layers.
    carry0 = lambda n: (jnp.zeros((1, n, net.hidden_size)),)  # noqa: E731

    def schedule(count):
        done = count // (config["num_minibatches"] * config["epochs"])
        return config["lr"] * (1.0 - done / updates)

    def train(key):
        key, init_key, env_key = jax.random.split(key, 3)
        params = net.init(init_key, carry0(E), jnp.zeros((1, E, 2)),
                          jnp.zeros((1, E), bool))
        state = TrainState.create(
            apply_fn=net.apply, params=params,
            tx=optax.chain(optax.clip_by_global_norm(0.5),
                           optax.adam(schedule, eps=1e-5)))
        obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(env_key, E), env_params)
        runner = (state, env_state, observe(obs), jnp.zeros(E, bool),
                  carry0(E), jnp.zeros(E), key)

        def update(runner, _):
            def rollout_step(runner, _):
                state, env_state, obs, done, carry, ret, key = runner
                key, act_key, step_key = jax.random.split(key, 3)
                new_carry, logits, value = net.apply(
                    state.params, carry, obs[None], done[None])
                action = jax.random.categorical(act_key, logits[0])
                logp = jax.nn.log_softmax(logits[0])[jnp.arange(E), action]
                obs2, env_state, reward, term, trunc, _ = jax.vmap(
                    env.step, in_axes=(0, 0, 0, None))(
                    jax.random.split(step_key, E), env_state, action,
                    env_params)
                new_done = term | trunc
                ret = ret + reward
                finished = jnp.where(new_done, ret, jnp.nan)
                step = (obs, done, action, logp, value[0], reward, finished)
                return (state, env_state, observe(obs2), new_done, new_carry,
                        jnp.where(new_done, 0.0, ret), key), step

            start_carry = runner[4]
            runner, batch = jax.lax.scan(rollout_step, runner, None, T)
            state, env_state, obs, done, carry, ret, key = runner
            (b_obs, b_done, b_action, b_logp, b_value, b_reward,
             b_finished) = batch
            _, _, last_value = net.apply(state.params, carry, obs[None],
                                         done[None])
            last_value = last_value[0]

            # An episode's end (termination or time limit) cuts the
            # advantage and the bootstrap, as PureJaxRL's: after it the
            # next value is the new episode's. `done` of a step is whether
            # an episode ended before it.
            def gae_step(carry, step):
                gae, next_value, next_done = carry
                value, reward, done = step
                cont = 1.0 - next_done
                delta = reward + config["gamma"] * next_value * cont - value
                gae = delta + config["gamma"] * config["gae_lambda"] * cont * \
                    gae
                return (gae, value, done.astype(jnp.float32)), gae
            _, advantages = jax.lax.scan(
                gae_step, (jnp.zeros(E), last_value,
                           done.astype(jnp.float32)),
                (b_value, b_reward, b_done), reverse=True)
            targets = advantages + b_value

            def epoch(state_key, _):
                state, key = state_key
                key, perm_key = jax.random.split(key)
                perm = jax.random.permutation(perm_key, E)

                def minibatch_step(state, cols):
                    def loss_fn(params):
                        _, logits, value = net.apply(
                            params, jax.tree_util.tree_map(
                                lambda c: c[:, cols], start_carry),
                            b_obs[:, cols], b_done[:, cols])
                        logp_all = jax.nn.log_softmax(logits)
                        logp = jnp.take_along_axis(
                            logp_all, b_action[:, cols, None], -1)[..., 0]
                        adv = advantages[:, cols]
                        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                        ratio = jnp.exp(logp - b_logp[:, cols])
                        clipped = jnp.clip(ratio, 1 - config["clip"],
                                           1 + config["clip"])
                        actor = -jnp.minimum(ratio * adv, clipped * adv)
                        v_old = b_value[:, cols]
                        v_clip = v_old + jnp.clip(value - v_old,
                                                  -config["clip"],
                                                  config["clip"])
                        tgt = targets[:, cols]
                        critic = 0.5 * jnp.maximum((value - tgt) ** 2,
                                                   (v_clip - tgt) ** 2)
                        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1)
                        return (actor.mean() + 0.5 * critic.mean()
                                - 0.01 * entropy.mean())
                    grads = jax.grad(loss_fn)(state.params)
                    return state.apply_gradients(grads=grads), None

                cols = perm.reshape(config["num_minibatches"], minibatch)
                state, _ = jax.lax.scan(minibatch_step, state, cols)
                return (state, key), None

            (state, key), _ = jax.lax.scan(epoch, (state, key), None,
                                           config["epochs"])
            finished = b_finished.reshape(-1)
            count = jnp.sum(~jnp.isnan(finished))
            mean = jnp.nansum(finished) / jnp.maximum(count, 1)
            runner = (state, env_state, obs, done, carry, ret, key)
            return runner, (mean, count)

        runner, metrics = jax.lax.scan(update, runner, None, updates)
        return metrics

    return train


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


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rnn", choices=("rnnc", "flax"), default="rnnc")
    parser.add_argument("--timesteps", type=positive_int, default=300_000)
    parser.add_argument("--num-envs", type=positive_int, default=8)
    parser.add_argument("--num-steps", type=positive_int, default=128)
    parser.add_argument("--num-minibatches", type=positive_int, default=4,
                        help="minibatches of whole environments per epoch "
                             "(--num-envs must be a multiple)")
    parser.add_argument("--epochs", type=positive_int, default=4)
    parser.add_argument("--lr", type=positive_float, default=2.5e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-seeds", type=positive_int, default=1,
                        help="independent runs, vmapped as PureJaxRL "
                             "vmaps them (seeds split from --seed)")
    args = parser.parse_args(argv)
    if args.num_envs % args.num_minibatches:
        parser.error("--num-envs must be a multiple of --num-minibatches "
                     "(a minibatch holds whole environments)")
    if args.timesteps < args.num_envs * args.num_steps:
        parser.error(f"--timesteps must be at least num_envs * num_steps "
                     f"= {args.num_envs * args.num_steps} (one update)")
    return args


def main(argv=None):
    args = parse_args(argv)
    config = dict(rnn=args.rnn, timesteps=args.timesteps,
                  num_envs=args.num_envs, num_steps=args.num_steps,
                  num_minibatches=args.num_minibatches, epochs=args.epochs,
                  lr=args.lr, gamma=0.99, gae_lambda=0.95, clip=0.2)
    key = jax.random.PRNGKey(args.seed)
    if args.num_seeds == 1:
        train = jax.jit(make_train(config))
    else:
        # Every run under one vmap: rnnc.flax.GRU's calls become grouped
        # calls, one per step for every run.
        train = jax.jit(jax.vmap(make_train(config)))
        key = jax.random.split(key, args.num_seeds)
    start = time.perf_counter()
    means, counts = jax.block_until_ready(train(key))
    elapsed = time.perf_counter() - start
    means, counts = np.asarray(means), np.asarray(counts)
    if args.num_seeds == 1:
        means, counts = means[None], counts[None]
    tenth = max(1, means.shape[1] // 10)

    def mean_return(sl):
        """Each run's mean return of the episodes ended in updates sl."""
        total = (means[:, sl] * counts[:, sl]).sum(axis=1)
        return [float(t / max(c, 1))
                for t, c in zip(total, counts[:, sl].sum(axis=1))]

    first, last = mean_return(slice(0, tenth)), mean_return(
        slice(-tenth, None))
    if args.num_seeds == 1:
        first, last = first[0], last[0]
    print(json.dumps({"rnn": args.rnn, "updates": means.shape[1],
                      "seeds": args.num_seeds, "first_return": first,
                      "last_return": last, "seconds": round(elapsed, 1)}))


if __name__ == "__main__":
    main()
