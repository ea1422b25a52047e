"""The examples in examples/: scripts run as a user runs them (a subprocess
with the rnnc package the tests import), modules imported.

examples/cleanrl_ppo_lstm.py: recurrent PPO on a masked CartPole runs a few
updates with rnnc.torch.LSTM (one call per minibatch sequence, is_init =
the dones) and with torch.nn.LSTM (CleanRL's per-step loop multiplying the
state by 1 - done); both finish with finite losses, and from the same seed
and weights the first minibatch's loss and gradients agree.

examples/rsl_rl_rnnc.py: RnncMemory, rsl_rl's recurrent memory run by
rnnc, against torch.nn over trajectories split and padded as rsl_rl's
storage does (by rsl_rl's own function and by a restatement of it), and
rsl_rl's OnPolicyRunner training with RnncRNNModel as with RNNModel.

examples/purejaxrl_ppo_rnn.py: PureJaxRL's PPO-RNN with rnnc.flax.GRU
learns CartPole without velocities (needs jax, flax and gymnax).

Needs gymnasium and `rnn-compile` (RNNC_COMPILE or PATH); compiled
libraries go to the session's cache directory (conftest.py).
"""

import json
import math
import os
import re
import subprocess
import sys

import pytest
import torch

import rnnc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import rsl_rl_rnnc  # noqa: E402

from helpers import LSTM_LIKE, NN_CELLS, rel_err  # noqa: E402

PPO = os.path.join(ROOT, "examples", "cleanrl_ppo_lstm.py")
# Three updates of 4 environments x 32 steps, minibatches of 2 environments:
# two shapes for rnnc ([1, 4] rollout, [32, 2] update).
SMALL = ["--num-envs", "4", "--num-steps", "32", "--num-minibatches", "2",
         "--total-timesteps", str(3 * 4 * 32), "--seed", "3"]

# Float32 rounding: rnnc's GEMMs (OpenBLAS) and PyTorch's sum in different
# orders, so each step's gates can differ by a few ulps (~1e-7 relative);
# that grows over the 32-step recurrence and its backward (test_torch.py
# bounds the layer alone by 1e-5) and passes through means over 64 samples
# with no cancellation in the compared values (pg_loss, ~0 at the first
# minibatch where the ratio is 1, is left out). Observed: at most 2.4e-7.
# A reset one step late changes the loss by only 2e-5 (the value loss,
# whose targets the LSTM does not touch, dominates it) but the gradients'
# norms by 1e-3 (all together) to 1e-1 (per parameter): 1e-4 keeps a
# margin of ~400 over rounding and ~10 under that error.
RTOL = 1e-4


def example_env():
    """The environment of an example's subprocess: the rnnc package the
    tests import first on PYTHONPATH."""
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(rnnc.__file__))
    env["PYTHONPATH"] = os.pathsep.join(
        [package_root] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def run_ppo(lstm):
    result = subprocess.run(
        [sys.executable, PPO, "--lstm", lstm, "--check-first-update"] + SMALL,
        capture_output=True, text=True, env=example_env(), timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


def first_update(stdout):
    lines = [l for l in stdout.splitlines() if l.startswith("first_update: ")]
    assert len(lines) == 1, stdout
    return json.loads(lines[0][len("first_update: "):])


def update_losses(stdout):
    losses = [[float(v) for v in re.findall(
        r" (?:loss|pg_loss|v_loss|entropy)=(\S+)", line)]
        for line in stdout.splitlines() if line.startswith("update=")]
    return losses


def close_to(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def close(a, b):
    return close_to(a, b, RTOL)


@pytest.fixture(scope="module")
def ppo_runs():
    return {lstm: run_ppo(lstm) for lstm in ("rnnc", "torch")}


@pytest.mark.parametrize("lstm", ["rnnc", "torch"])
def test_ppo_runs_with_finite_losses(ppo_runs, lstm):
    losses = update_losses(ppo_runs[lstm])
    assert len(losses) == 3, ppo_runs[lstm]
    for values in losses:
        assert len(values) == 4 and all(math.isfinite(v) for v in values)
    assert "SPS=" in ppo_runs[lstm]


def test_ppo_first_update_matches_torch(ppo_runs):
    ours, ref = (first_update(ppo_runs[k]) for k in ("rnnc", "torch"))
    # The same rollout (the sampled actions, hence the environments'
    # steps, are identical), with resets inside the minibatch's sequences,
    # so that is_init is exercised.
    assert ours["rollout"] == ref["rollout"]
    assert ours["rollout"]["minibatch_resets"] > 0
    for key in ("loss", "v_loss", "entropy", "grad_norm"):
        assert close(ours[key], ref[key]), (key, ours[key], ref[key])
    assert ours["grad_norms"].keys() == ref["grad_norms"].keys()
    for name, value in ref["grad_norms"].items():
        assert close(ours["grad_norms"][name], value), \
            (name, ours["grad_norms"][name], value)


# Each bad value is one argparse error (exit 2) naming the option, before
# any environment is made or anything is compiled.
PPO_BAD_ARGS = [
    (["--num-minibatches", "0"], "--num-minibatches"),
    (["--num-envs", "0"], "--num-envs"),
    (["--num-envs", "-4", "--num-minibatches", "2"], "--num-envs"),
    (["--num-steps", "0"], "--num-steps"),
    (["--update-epochs", "0"], "--update-epochs"),
    (["--threads", "0"], "--threads"),
    (["--hidden-size", "0"], "--hidden-size"),
    (["--learning-rate", "0"], "--learning-rate"),
    (["--clip-coef=-0.2"], "--clip-coef"),
    (["--gamma", "1.5"], "--gamma"),
    (["--max-grad-norm", "0"], "--max-grad-norm"),
    (["--device", "foo"], "--device"),
    (["--device", "tpu"], "--device"),
    (["--num-envs", "6", "--num-minibatches", "4"], "--num-minibatches"),
    (["--total-timesteps", "100"], "--total-timesteps"),
]


@pytest.mark.parametrize("argv,option", PPO_BAD_ARGS,
                         ids=[" ".join(a) for a, _ in PPO_BAD_ARGS])
def test_ppo_bad_arguments_are_argparse_errors(argv, option, capsys):
    import cleanrl_ppo_lstm
    with pytest.raises(SystemExit) as exc:
        cleanrl_ppo_lstm.parse_args(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    # The usage line lists every option: the message after it names one.
    assert "error:" in err and option in err.split("error:", 1)[1], err


def test_ppo_bad_argument_from_the_command_line():
    """As a user runs it: one usage error, no traceback."""
    result = subprocess.run(
        [sys.executable, PPO, "--update-epochs", "0"],
        capture_output=True, text=True, env=example_env(), timeout=120)
    assert result.returncode == 2, result.stderr[-4000:]
    assert "--update-epochs" in result.stderr.split("error:", 1)[-1]
    assert "Traceback" not in result.stderr, result.stderr


# --------------------------------------------------------------------------
# examples/rsl_rl_rnnc.py: RnncMemory against rsl_rl's padded update
# --------------------------------------------------------------------------

def split_and_pad(x, dones):
    """rsl_rl's split_and_pad_trajectories (v5.4.2), restated: each
    environment's column [T, B, ...] is cut after every done; the
    trajectories, environment-major, are padded with zeros to T; masks
    mark their valid steps."""
    T, B = dones.shape
    columns, masks = [], []
    for b in range(B):
        ends = [t + 1 for t in range(T) if dones[t, b]]
        if not ends or ends[-1] != T:
            ends.append(T)
        start = 0
        for end in ends:
            column = torch.zeros((T,) + x.shape[2:], dtype=x.dtype)
            column[:end - start] = x[start:end, b]
            mask = torch.zeros(T, dtype=torch.bool)
            mask[:end - start] = True
            columns.append(column)
            masks.append(mask)
            start = end
    return torch.stack(columns, 1), torch.stack(masks, 1)


def trajectory_states(saved, dones):
    """The saved states [T, L, B, H] at each trajectory's first step,
    [L, N, H] in the storage's order (as its recurrent generator picks
    them)."""
    starts = torch.zeros_like(dones)
    starts[0] = True
    starts[1:] = dones[:-1]
    return saved.permute(2, 0, 1, 3)[starts.t()].transpose(0, 1).contiguous()


def rsl_rl_split_and_pad(x, dones):
    """rsl_rl's own split_and_pad_trajectories."""
    from rsl_rl.utils import split_and_pad_trajectories
    return split_and_pad_trajectories(x, dones)


# rsl_rl's memory has torch.nn's LSTM and GRU only.
@pytest.mark.parametrize("split", [split_and_pad, rsl_rl_split_and_pad],
                         ids=["restated", "rsl_rl"])
@pytest.mark.parametrize("cell", NN_CELLS)
@pytest.mark.parametrize("L", [1, 2])
def test_rsl_rl_memory_matches_padded_trajectories(cell, L, split):
    """RnncMemory's update (one call over [T, B] with is_init at every
    trajectory start and the saved states as reset states) gives what
    rsl_rl's memory computes: torch.nn's layer over the padded
    trajectories from their saved states, unpadded; outputs and parameter
    gradients. The split is restated here, or rsl_rl's where it is
    installed."""
    T, B, I, H = 12, 3, 4, 5
    torch.manual_seed(0)
    ref = (torch.nn.LSTM if cell in LSTM_LIKE else torch.nn.GRU)(I, H, L)
    memory = rsl_rl_rnnc.RnncMemory(I, H, L, cell)
    memory.rnn.load_state_dict(ref.state_dict())
    x = torch.randn(T, B, I)
    dones = torch.zeros(T, B, dtype=torch.bool)
    dones[2, 0] = dones[3, 0] = dones[T - 1, 0] = True  # consecutive, last
    dones[6, 1] = True
    saved = [torch.randn(T, L, B, H)
             for _ in range(2 if cell in LSTM_LIKE else 1)]
    hidden = [trajectory_states(s, dones) for s in saved]
    hidden = tuple(hidden) if cell in LSTM_LIKE else hidden[0]
    padded, masks = split(x, dones)
    assert masks.shape[1] == 6  # 3 + 2 + 1 trajectories

    out = memory(padded, masks, hidden)
    out_ref, _ = ref(padded, hidden)
    out_ref = rsl_rl_rnnc.unpad(out_ref, masks)
    assert out.shape == (T, B, H)
    assert rel_err(out, out_ref) < 1e-5
    g = torch.randn(T, B, H)
    grads = torch.autograd.grad((out * g).sum(), list(memory.parameters()))
    grads_ref = torch.autograd.grad((out_ref * g).sum(),
                                    list(ref.parameters()))
    for a, b in zip(grads, grads_ref):
        assert rel_err(a, b) < 1e-5


def test_rsl_rl_memory_rollout_and_reset():
    """The rollout steps from the kept state; reset(dones) zeroes the done
    environments' state, as rsl_rl's memory does."""
    I, H, B = 3, 4, 5
    torch.manual_seed(1)
    ref = torch.nn.LSTM(I, H)
    memory = rsl_rl_rnnc.RnncMemory(I, H, 1, "lstm")
    memory.rnn.load_state_dict(ref.state_dict())
    state = None
    with torch.inference_mode():
        for step in range(3):
            x = torch.randn(B, I)
            out = memory(x)
            out_ref, state = ref(x.unsqueeze(0), state)
            assert rel_err(out, out_ref) < 1e-5
            dones = torch.tensor([step == 1, False, True, False, False])
            memory.reset(dones)
            for s in state:
                s[..., dones, :] = 0.0
            for s, s_ref in zip(memory.hidden_state, state):
                assert rel_err(s, s_ref) < 1e-5
                assert not s[..., dones, :].any()



@pytest.mark.parametrize("type", ["rnn", "LSTMCell", ""])
def test_rsl_rl_memory_refuses_unknown_type(type):
    """rsl_rl builds an LSTM for any type but "gru"; RnncMemory names the
    unknown type instead."""
    with pytest.raises(ValueError, match="type must be 'lstm' or 'gru'"):
        rsl_rl_rnnc.RnncMemory(3, 4, 1, type)
    assert rsl_rl_rnnc.RnncMemory(3, 4, 1, "GRU").is_lstm is False
    assert rsl_rl_rnnc.RnncMemory(3, 4, 1, "LSTM").is_lstm is True


class ToyVecEnv:
    """rsl_rl's VecEnv interface over a partially observed toy task: each
    episode draws a target that the observation shows only at the
    episode's first step, and rewards actions near it, so the policy has to
    remember it. Episodes end at random (and at 20 steps), so the update's
    trajectories are cut inside the rollout."""

    def __init__(self, num_envs=8, num_actions=2, seed=0):
        self.num_envs, self.num_actions = num_envs, num_actions
        self.max_episode_length = 20
        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long)
        self.device, self.cfg = "cpu", {}
        self.generator = torch.Generator().manual_seed(seed)
        self.target = torch.randn(num_envs, num_actions,
                                  generator=self.generator)
        self.first = torch.ones(num_envs, dtype=torch.bool)
        self.dones = 0

    def get_observations(self):
        from tensordict import TensorDict
        policy = torch.cat([self.target * self.first[:, None],
                            self.first[:, None].float()], 1)
        return TensorDict(
            {"policy": policy,
             "privileged": torch.cat([policy, self.target], 1)},
            batch_size=[self.num_envs])

    def step(self, actions):
        reward = -((actions - self.target) ** 2).sum(1)
        self.episode_length_buf += 1
        done = ((torch.rand(self.num_envs, generator=self.generator) < 0.15)
                | (self.episode_length_buf >= self.max_episode_length))
        self.target[done] = torch.randn(int(done.sum()), self.num_actions,
                                        generator=self.generator)
        self.episode_length_buf[done] = 0
        self.first = done.clone()
        self.dones += int(done.sum())
        return (self.get_observations(), reward, done.float(),
                {"time_outs": torch.zeros(self.num_envs)})


def train_rsl_rl(class_name, rnn_type, layers):
    """Three PPO iterations of rsl_rl's OnPolicyRunner (8 environments, 24
    steps, 2 minibatches, 2 epochs) from seed 0, the actor and the critic
    of `class_name`: the losses of each update, the actor's and critic's
    parameters after them, and the runner."""
    from rsl_rl.runners import OnPolicyRunner
    model = dict(class_name=class_name, rnn_type=rnn_type,
                 rnn_hidden_dim=16, rnn_num_layers=layers, hidden_dims=[16],
                 distribution_cfg=dict(class_name="GaussianDistribution"))
    cfg = dict(num_steps_per_env=24, save_interval=100,
               obs_groups={"actor": ["policy"],
                           "critic": ["policy", "privileged"]},
               algorithm=dict(class_name="PPO", num_learning_epochs=2,
                              num_mini_batches=2),
               actor=model, critic=dict(model, distribution_cfg=None))
    torch.manual_seed(0)
    env = ToyVecEnv()
    runner = OnPolicyRunner(env, cfg, log_dir=None, device="cpu")
    losses = []
    update = runner.alg.update
    runner.alg.update = lambda: losses.append(update()) or losses[-1]
    runner.learn(3)
    assert env.dones > 0
    params = {f"{role}.{k}": v.detach().clone()
              for role in ("actor", "critic")
              for k, v in getattr(runner.alg, role).state_dict().items()}
    return losses, params, runner


@pytest.mark.parametrize("rnn_type,layers", [("lstm", 1), ("gru", 2)])
def test_rsl_rl_runner_trains_as_with_rnn_model(rnn_type, layers,
                                                tmp_path):
    """rsl_rl's own OnPolicyRunner and PPO, configured with
    "rsl_rl_rnnc:RnncRNNModel" as examples/rsl_rl.md says, train as with
    rsl_rl's RNNModel: from the same seed, the same losses at each of three
    updates and the same parameters after them (state-dict keys
    included), within float32 rounding carried through 3 x 2 x 2 gradient
    steps of Adam (observed: 4e-7 of each tensor's largest value). The
    surrogate loss, a mean of terms of both signs near 1e-3, is compared
    against the value loss's scale. Then the runner's TorchScript and ONNX
    exports step as the actor does."""
    pytest.importorskip("rsl_rl")
    ref_losses, ref_params, _ = train_rsl_rl("RNNModel", rnn_type, layers)
    losses, params, runner = train_rsl_rl("rsl_rl_rnnc:RnncRNNModel",
                                          rnn_type, layers)
    actor = runner.alg.actor
    assert isinstance(actor.rnn, rsl_rl_rnnc.RnncMemory)
    assert len(losses) == len(ref_losses) == 3
    for got, ref in zip(losses, ref_losses):
        assert got.keys() == ref.keys()
        for key in ("value", "entropy"):
            assert close_to(got[key], ref[key], 1e-5), (key, got, ref)
        assert abs(got["surrogate"] - ref["surrogate"]) \
            <= 1e-6 * abs(ref["value"]), (got, ref)
    assert params.keys() == ref_params.keys()
    for key, ref in ref_params.items():
        assert (params[key] - ref).abs().max() <= 1e-5 * ref.abs().max(), key

    # rsl_rl's exporters (as_jit()/as_onnx() copy the memory into a
    # torch.nn layer); the files step as the actor does, the ONNX one under
    # ONNX's reference evaluator (onnx comes with rsl_rl).
    runner.export_policy_to_jit(str(tmp_path))
    runner.export_policy_to_onnx(str(tmp_path))
    assert isinstance(actor.rnn, rsl_rl_rnnc.RnncMemory)
    scripted = torch.jit.load(str(tmp_path / "policy.pt"))
    from onnx.reference import ReferenceEvaluator
    evaluator = ReferenceEvaluator(str(tmp_path / "policy.onnx"))
    obs = runner.env.get_observations()
    state = [torch.zeros(layers, 1, 16).numpy()
             for _ in range(2 if rnn_type == "lstm" else 1)]
    actor.eval()
    actor.reset()
    with torch.inference_mode():
        for _ in range(2):
            ours = actor(obs)[:1]
            assert rel_err(scripted(obs["policy"][:1]), ours) < 1e-5
            actions, *state = evaluator.run(
                None, dict(zip(["obs", "h_in", "c_in"],
                               [obs["policy"][:1].numpy()] + state)))
            assert rel_err(torch.from_numpy(actions), ours) < 1e-5


def test_rsl_rl_model_refuses_unknown_rnn_type():
    """rsl_rl's RNNModel builds an LSTM for rnn_type "rnn";
    RnncRNNModel's configuration error names it."""
    pytest.importorskip("rsl_rl")
    with pytest.raises(ValueError, match="rnn_type must be .* got 'rnn'"):
        train_rsl_rl("rsl_rl_rnnc:RnncRNNModel", "rnn", 1)


@pytest.mark.parametrize("rnn_type,layers", [("lstm", 1), ("gru", 2)])
def test_rsl_rl_distillation_trains_as_with_rnn_model(rnn_type, layers):
    """rsl_rl's DistillationRunner with a recurrent student: the student
    steps one call at a time with gradients through 4 steps of its kept
    state, which reset(dones) zeroes in place between calls. With
    RnncRNNModel the behavior losses of three updates and the student's
    parameters after them are RNNModel's (a teacher MLP of random weights;
    tolerances as in the PPO test; observed 3e-7)."""
    pytest.importorskip("rsl_rl")
    from rsl_rl.runners import DistillationRunner

    def train(class_name):
        student = dict(class_name=class_name, rnn_type=rnn_type,
                       rnn_hidden_dim=16, rnn_num_layers=layers,
                       hidden_dims=[16], distribution_cfg=dict(
                           class_name="GaussianDistribution"))
        teacher = dict(class_name="MLPModel", hidden_dims=[16],
                       distribution_cfg=dict(
                           class_name="GaussianDistribution"))
        cfg = dict(num_steps_per_env=24, save_interval=100,
                   obs_groups={"student": ["policy"],
                               "teacher": ["policy", "privileged"]},
                   algorithm=dict(class_name="Distillation",
                                  num_learning_epochs=2, gradient_length=4),
                   student=student, teacher=teacher)
        torch.manual_seed(0)
        env = ToyVecEnv()
        runner = DistillationRunner(env, cfg, log_dir=None, device="cpu")
        runner.alg.teacher_loaded = True
        losses = []
        update = runner.alg.update
        runner.alg.update = lambda: losses.append(update()) or losses[-1]
        runner.learn(3)
        assert env.dones > 0
        return losses, runner.alg.student

    ref_losses, ref_student = train("RNNModel")
    losses, student = train("rsl_rl_rnnc:RnncRNNModel")
    assert isinstance(student.rnn, rsl_rl_rnnc.RnncMemory)
    assert len(losses) == len(ref_losses) == 3
    for got, ref in zip(losses, ref_losses):
        assert close_to(got["behavior"], ref["behavior"], 1e-5), (got, ref)
    params, ref_params = student.state_dict(), ref_student.state_dict()
    assert params.keys() == ref_params.keys()
    for key, ref in ref_params.items():
        assert (params[key] - ref).abs().max() <= 1e-5 * ref.abs().max(), key



JAX_PPO = os.path.join(ROOT, "examples", "purejaxrl_ppo_rnn.py")


def test_purejaxrl_ppo_rnn_learns_with_rnnc_flax_gru():
    """PureJaxRL's PPO-RNN on gymnax's CartPole without velocities, its
    whole training loop under one jit, with rnnc.flax.GRU, two runs under
    one vmap as PureJaxRL runs seeds (rnnc's calls grouped): in 100,000
    steps each run's mean return of the episodes that end in the first
    tenth of training is near a random policy's 22 (24.1 and 28.8), and
    their mean rises by more than half by the last tenth (to 46.2; one
    run, at seed 0: 25.7 to 45.5; Flax's GRUCell, two runs: 29.5 to
    58.6)."""
    pytest.importorskip("gymnax")
    pytest.importorskip("flax")
    result = subprocess.run(
        [sys.executable, JAX_PPO, "--rnn", "rnnc", "--timesteps", "100000",
         "--num-seeds", "2"],
        capture_output=True, text=True, env=example_env(), timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["rnn"] == "rnnc" and out["updates"] == 97
    assert out["seeds"] == 2 and len(set(out["first_return"])) == 2, out
    assert max(out["first_return"]) < 32, out
    assert sum(out["last_return"]) > 1.5 * sum(out["first_return"]), out



# Before: a ZeroDivisionError or a JAX shape error inside the jitted
# training, or (too few timesteps) zero updates printed as returns of 0.
JAX_PPO_BAD_ARGS = [
    (["--num-minibatches", "0"], "--num-minibatches"),
    (["--num-envs", "0"], "--num-envs"),
    (["--num-steps", "0"], "--num-steps"),
    (["--epochs", "0"], "--epochs"),
    (["--lr", "-1"], "--lr"),
    (["--num-seeds", "0"], "--num-seeds"),
    (["--num-envs", "6"], "--num-minibatches"),
    (["--timesteps", "100"], "--timesteps"),
]


@pytest.mark.parametrize("argv,option", JAX_PPO_BAD_ARGS,
                         ids=[" ".join(a) for a, _ in JAX_PPO_BAD_ARGS])
def test_purejaxrl_bad_arguments_are_argparse_errors(argv, option, capsys):
    pytest.importorskip("gymnax")
    pytest.importorskip("flax")
    import purejaxrl_ppo_rnn
    with pytest.raises(SystemExit) as exc:
        purejaxrl_ppo_rnn.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    # The usage line lists every option: the message after it names one.
    assert "error:" in err and option in err.split("error:", 1)[1], err
