"""Self-play training and the trained policy: a CI smoke run that must already beat
``random``, what a run says at its start and end, Ctrl-C, resuming (``--time-limit`` counts
the new session only), checkpoint round trips and refusals, the masked distribution, GAE
along each seat's trajectory, and the canonical card encoding.

The smoke run is one subprocess of ``train.py`` capped at about 1.5 minutes; the whole file
takes about 3 minutes on 2 cores.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import CTRL_C_ON_TORCH, edited_checkpoint, interrupt_training, load_script, random_legal

from agents import CHECKPOINT_DIR, load_agent, shipped_checkpoints  # noqa: E402
from agents.evaluate import evaluate  # noqa: E402
from agents.policy import (  # noqa: E402
    CANONICAL_GATHER,
    CANONICAL_SLOTS,
    CheckpointError,
    MaskedCategorical,
    PolicyAgent,
    PolicyNet,
    load_checkpoint,
    load_policy_agent,
    save_checkpoint,
    trump_of,
)
from spoilfive_env.cards import ACE_OF_HEARTS, card_index  # noqa: E402
from spoilfive_env.core import SpoilFiveCore  # noqa: E402
from spoilfive_env.observation import OBS_DIM, OBSERVATION_VERSION, SLICES  # noqa: E402
from spoilfive_env.rules import Rules  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMOKE_DECISIONS = 1_600_000


def load_train_module():
    return load_script("train.py", "train_module")


def train_env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def run_train(*args, timeout=300):
    return subprocess.run([sys.executable, str(ROOT / "train.py"), *args], cwd=ROOT, env=train_env(),
                          capture_output=True, text=True, timeout=timeout)


def progress_rows(run: Path) -> list[dict]:
    with open(run / "progress.csv") as f:
        return list(csv.DictReader(f))


def batch_of_observations(sizes=(2, 3, 4, 6, 10), games=64, seed=0):
    """Observations and masks from the middle of hands at several table sizes."""
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    for n in sizes:
        core = SpoilFiveCore(games, rules=Rules(num_players=n), seed=seed + n)
        for _ in range(rng.integers(0, 2 * n)):
            mask = core.legal_mask()
            core.step(random_legal(rng, mask))
            if core.done.any():
                core.reset(core.done)
        observations.append(core.observe())
        masks.append(core.legal_mask())
    return np.concatenate(observations), np.concatenate(masks)


# ---------------------------------------------------------------------- the smoke run
SMOKE_ARGS = ("--run-name", "smoke", "--seed", "3", "--total-decisions", str(SMOKE_DECISIONS),
              "--time-limit", "1.5", "--num-games", "2048", "--snapshot-every", "4", "--save-every", "4",
              "--eval-every", "8", "--eval-deals", "50", "--eval-players", "4", "--final-eval-deals", "100",
              "--torch-threads", "1", "--no-progress-bar")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    proc = run_train("--runs-dir", str(runs), *SMOKE_ARGS)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return SimpleNamespace(run=runs / "smoke", stdout=proc.stdout, stderr=proc.stderr)


@pytest.fixture(scope="module")
def smoke_run(smoke):
    return smoke.run


def test_a_run_announces_itself_and_ends_in_plain_words(smoke):
    lines = smoke.stdout.splitlines()
    start, end = "\n".join(lines[:8]), "\n".join(lines[-8:])
    assert f"Training run {smoke.run} (new" in start
    assert "device cpu" in start and "precision" in start and "torch threads" in start
    assert "2,048 games" in start and "at each of 3, 4, 5, 6 players" in start
    assert "stops at 1,600,000 decisions or after 1.5 minutes, whichever comes first" in start
    assert f"The agent: {smoke.run / 'agent.pt'}" in end
    assert "evaluate it: python -m agents.evaluate" in end and f"{smoke.run / 'agent.pt'},spoiler" in end
    assert "play it:     python -m spoilfive_env.play" in end
    assert "resume it:   python train.py" in end and "--run-name smoke --resume" in end
    assert "players, one policy seat against spoilers" in smoke.stdout  # the final check, in words
    assert "{" not in smoke.stdout  # the JSON only with --json
    assert "Traceback" not in smoke.stderr


def test_smoke_run_writes_everything(smoke_run):
    for name in ("checkpoint.pt", "agent.pt", "progress.csv", "summary.json", "args.json",
                 "learning_curve.png", "snapshots/iter_000000.pt", "snapshots/iter_000004.pt"):
        assert (smoke_run / name).is_file(), name
    assert list(smoke_run.glob("events.out.tfevents.*"))
    rows = progress_rows(smoke_run)
    assert len(rows) >= 8
    assert any(row["eval_4p_share"] for row in rows[:-1])  # periodic evaluations
    iterations = [int(row["iteration"]) for row in rows]
    assert iterations == list(range(1, len(rows) + 1))  # one row per iteration: the final check joins the last
    assert rows[-1]["eval_4p_share"] and rows[-1]["decisions_per_s"]
    summary = json.loads((smoke_run / "summary.json").read_text())
    assert summary["progress"]["decisions"] > 0
    assert set(summary["time_fractions"]) >= {"env", "policy", "update"}
    _, data = load_checkpoint(smoke_run / "agent.pt")
    assert "optimizer" not in data and data["args"]["seed"] == 3
    assert data["observation_version"] == OBSERVATION_VERSION


def test_smoke_run_beats_random(smoke_run):
    """After at most ~1.5 minutes of training the policy wins more than its fair share of
    pools at a table of randoms, with the 95% interval above the fair share."""
    agent = load_agent(str(smoke_run / "agent.pt"), seed=0)
    report = evaluate([agent, "random"], num_players=4, deals=1000, seed=123)
    me = report["agents"][report["lineup"][0]]
    assert me["pool_share"] - me["pool_share_ci95"] > me["fair_share"], me
    assert me["mean_equity"] - me["equity_ci95"] > 0, me


def test_resume_continues_the_run(smoke_run, tmp_path):
    import shutil

    run = tmp_path / "smoke"
    shutil.copytree(smoke_run, run)
    before = json.loads((run / "summary.json").read_text())["progress"]
    refused = run_train("--runs-dir", str(tmp_path), "--run-name", "smoke", "--seed", "3", "--no-progress-bar")
    assert refused.returncode != 0 and "--resume" in refused.stderr
    proc = run_train("--runs-dir", str(tmp_path), "--run-name", "smoke", "--resume", "--time-limit", "0",
                     "--total-decisions", str(before["decisions"] + 100_000), "--final-eval-deals", "0",
                     "--eval-every", "0", "--no-progress-bar", "--torch-threads", "1", "--json")
    assert proc.returncode == 0, proc.stderr[-4000:]
    after = json.loads(proc.stdout)["progress"]  # --json: standard output is the summary alone
    assert after == json.loads((run / "summary.json").read_text())["progress"]
    assert "Resuming run" in proc.stderr and "resume it:" in proc.stderr
    # The run was copied here from another --runs-dir: it is watched where it is now, not where it was made.
    watch = next(line for line in proc.stderr.splitlines() if "watch it:" in line)
    assert watch.endswith(f"--logdir {tmp_path}") and str(smoke_run.parent) not in watch, watch
    assert after["iteration"] > before["iteration"] and after["decisions"] > before["decisions"]
    _, data = load_checkpoint(run / "checkpoint.pt")
    assert data["args"]["num_games"] == 2048  # the run's own arguments came back
    iterations = [int(row["iteration"]) for row in progress_rows(run)]
    assert iterations == list(range(1, after["iteration"] + 1))
    done = run_train("--runs-dir", str(tmp_path), "--run-name", "smoke", "--resume", "--no-progress-bar")
    assert done.returncode == 2 and "already has" in done.stderr and "--total-decisions" in done.stderr


# Ctrl-C arrives while torch is still loading: an import hook raises it exactly there.
_CTRL_C_DURING_IMPORT = CTRL_C_ON_TORCH + """sys.argv = ["train.py", "--time-limit", "1"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_ctrl_c_while_torch_loads_is_one_line_and_exit_130(tmp_path):
    proc = subprocess.run([sys.executable, "-c", _CTRL_C_DURING_IMPORT], cwd=ROOT, env=train_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines() == ["train.py: stopped by Ctrl-C while starting up; nothing was run"]
    assert proc.stdout == ""


@pytest.mark.parametrize(("missing", "hint"), [
    (["torch"], ['pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu',
                 'pip install -c .ci/constraints.txt -e ".[train]"']),
    # spoilfive's own dependencies missing too: the hint cannot come from spoilfive_env, which needs gymnasium
    (["torch", "gymnasium"], ['install spoilfive from its checkout first']),
])
def test_without_torch_train_py_says_how_to_install_it_in_one_line(tmp_path, missing, hint):
    script = ("import runpy, sys\n"
              + "".join(f"sys.modules[{name!r}] = None  # as if it were not installed\n" for name in missing)
              + f"sys.argv = ['train.py', '--runs-dir', {str(tmp_path)!r}]\n"
              "runpy.run_path('train.py', run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=train_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("train.py: error: training needs torch, which is not installed")
    assert all(words in proc.stderr for words in hint), proc.stderr
    assert not list(tmp_path.iterdir())


def test_a_bad_backend_variable_is_refused_before_the_run_folder_is_made(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "train.py"), "--runs-dir", str(tmp_path / "runs")], cwd=ROOT,
                          env={**train_env(), "SPOILFIVE_RULES": "cuda"}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines() == [
        "train.py: error: SPOILFIVE_RULES='cuda' is not allowed: choose one of auto, numba, numpy"]
    assert not (tmp_path / "runs").exists()


# ---------------------------------------------------------------------- Ctrl-C and --time-limit on resume
TINY_ARGS = ("--run-name", "tiny", "--num-games", "64", "--min-players", "3", "--max-players", "4",
             "--hidden", "32", "--minibatch-size", "256", "--eval-every", "0", "--eval-players", "3",
             "--final-eval-deals", "20", "--torch-threads", "1", "--no-progress-bar")


def test_sigterm_saves_a_resumable_checkpoint_as_ctrl_c_does_and_exits_143(tmp_path):
    """kill, docker stop, timeout and a cluster's pre-emption send SIGTERM: the run stops at the next safe point
    and saves, before its first --save-every (25) came round, instead of dying with all of it lost."""
    run = tmp_path / "tiny"
    returncode, stdout, stderr = interrupt_training(["--runs-dir", tmp_path, *TINY_ARGS, "--total-decisions",
                                                     "100000000"], run, iterations=1, env=train_env(),
                                                    signum=signal.SIGTERM)
    assert returncode == 128 + signal.SIGTERM, stderr[-3000:]
    assert "Traceback" not in stderr and "SIGTERM: stopping at the next safe point" in stderr
    assert "Stopped by SIGTERM" in stdout and "--run-name tiny --resume" in stdout
    summary = json.loads((run / "summary.json").read_text())
    assert summary["interrupted"] and summary["stopped_by"] == "SIGTERM" and "final_eval" not in summary
    _, data = load_checkpoint(run / "checkpoint.pt")
    assert data["progress"]["iteration"] >= 1 and "optimizer" in data


def test_ctrl_c_saves_a_resumable_checkpoint_and_resume_gets_more_minutes(tmp_path):
    run = tmp_path / "tiny"
    returncode, stdout, stderr = interrupt_training(["--runs-dir", tmp_path, *TINY_ARGS, "--total-decisions",
                                                     "100000000"], run, iterations=3, env=train_env())
    assert returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "Ctrl-C: stopping" in stderr
    assert "Stopped by Ctrl-C" in stdout and "--run-name tiny --resume" in stdout
    for name in ("checkpoint.pt", "agent.pt", "learning_curve.png", "summary.json"):
        assert (run / name).is_file(), name  # saved before the first --save-every (25) came round
    _, data = load_checkpoint(run / "checkpoint.pt")
    before = data["progress"]
    assert before["iteration"] >= 3 and "optimizer" in data
    assert [int(r["iteration"]) for r in progress_rows(run)] == list(range(1, before["iteration"] + 1))

    # --time-limit on resume is this session's minutes: less than the run has already taken
    # would have meant zero iterations if it counted the earlier session too.
    minutes = before["seconds"] / 60 / 2
    proc = run_train("--runs-dir", str(tmp_path), "--run-name", "tiny", "--resume", "--time-limit", f"{minutes:.6f}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"after {float(f'{minutes:.6f}'):g} more minutes" in proc.stdout
    _, data = load_checkpoint(run / "checkpoint.pt")
    after = data["progress"]
    assert after["iteration"] > before["iteration"] and after["seconds"] > before["seconds"]
    rows = progress_rows(run)
    assert [int(r["iteration"]) for r in rows] == list(range(1, after["iteration"] + 1))
    assert rows[-1]["eval_3p_share"]  # the final check sits in the last iteration's row


def test_help_comes_from_the_args_docstrings(capsys):
    train = load_train_module()
    with pytest.raises(SystemExit):
        train.parse_args(["--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps help lines
    assert "--critic" in out and "omniscient (it also sees every hand" in out
    assert "--no-anneal-lr" in out
    args = train.parse_args(["--num-games", "8", "--no-anneal-lr"])
    assert args.num_games == 8 and args.anneal_lr is False


# ---------------------------------------------------------------------- checkpoints
def test_checkpoint_round_trip(tmp_path):
    torch.manual_seed(0)
    net = PolicyNet(hidden=(32, 16), critic="omniscient")
    path = tmp_path / "p.pt"
    save_checkpoint(path, net, {"seed": 5, "critic": "omniscient"}, {"iteration": 7})
    observations, masks = batch_of_observations()
    expected = PolicyAgent(net).act_batch(observations, masks)
    for agent in (load_policy_agent(path), load_agent(str(path)), load_agent(path)):
        assert np.array_equal(agent.act_batch(observations, masks), expected)
        assert masks[np.arange(len(masks)), expected].all()
    loaded, data = load_checkpoint(path)
    assert data["args"]["seed"] == 5 and data["progress"]["iteration"] == 7
    for key, value in net.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value)
    one = {"observation": observations[3], "action_mask": masks[3].astype(np.int8)}
    assert load_agent(str(path)).act(one) == expected[3]


def test_shipped_checkpoints_load_by_name():
    """The three networks the README names are shipped; each name loads the net of its own file."""
    names = shipped_checkpoints()
    assert {"ppo", "ppo-20min", "ppo-vs-pimc"} <= set(names), names
    observations, masks = batch_of_observations(seed=4)
    for name in names:
        agent = load_agent(name, seed=0)
        assert agent.name == name
        actions = agent.act_batch(observations, masks)
        assert masks[np.arange(len(masks)), actions].all()
        net, _ = load_checkpoint(CHECKPOINT_DIR / f"{name}.pt")
        np.testing.assert_array_equal(actions, PolicyAgent(net).act_batch(observations, masks), err_msg=name)


@pytest.mark.parametrize("changes, words", [
    ({"observation_version": OBSERVATION_VERSION + 1}, "observation layout version"),
    ({"obs_dim": OBS_DIM - 1}, f"this spoilfive_env has {OBS_DIM}"),
    ({"num_actions": 106}, "actions"),
    ({"format_version": 99}, "format version"),
    ({"format": "something-else"}, "not a spoilfive policy checkpoint"),
    ({"model": {"hidden": [64], "critic": "omniscient", "encoding": "canonical"}}, "do not fit"),
    ({"model": {"hidden": [16], "critic": "local", "encoding": "canonical"}}, "do not fit"),
])
def test_a_checkpoint_that_does_not_fit_is_refused(tmp_path, changes, words):
    path = edited_checkpoint(tmp_path, critic="omniscient", **changes)
    with pytest.raises(CheckpointError, match=words):
        load_policy_agent(path)
    with pytest.raises(ValueError, match=words):  # load_agent passes the reason on
        load_agent(str(path))


def test_files_that_are_no_checkpoint_are_refused(tmp_path):
    text = tmp_path / "notes.pt"
    text.write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="not a readable torch checkpoint"):
        load_policy_agent(text)
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, other)
    with pytest.raises(CheckpointError, match="not a spoilfive policy checkpoint"):
        load_policy_agent(other)
    with pytest.raises(CheckpointError, match="no checkpoint file"):
        load_policy_agent(tmp_path / "missing.pt")


# ---------------------------------------------------------------------- the policy
def test_masked_categorical_only_ever_picks_legal_actions():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(4000, 107, generator=gen) * 5
    mask = torch.rand(4000, 107, generator=gen) < 0.05
    mask[torch.arange(4000), torch.randint(0, 107, (4000,), generator=gen)] = True
    logits[~mask] += 1000.0  # illegal actions are the most tempting ones
    dist = MaskedCategorical(logits, mask)
    for _ in range(5):
        assert mask.gather(1, dist.sample(gen)[:, None]).all()
    assert mask.gather(1, dist.mode()[:, None]).all()
    assert torch.isfinite(dist.log_prob(dist.sample(gen))).all()
    single = mask.sum(1) == 1
    assert single.any()
    assert torch.allclose(dist.entropy()[single], torch.zeros(int(single.sum())), atol=1e-6)
    assert (dist.entropy() >= -1e-6).all()
    probs = dist.log_probs.exp()
    assert torch.allclose(probs.sum(1), torch.ones(4000), atol=1e-5)
    assert (probs[~mask] == 0).all()


def test_sampling_draws_each_legal_action_as_often_as_its_probability():
    """MaskedCategorical.sample and a sampling PolicyAgent (greedy=False) draw, not take the most probable
    action: over 4000 copies of one decision each legal action comes about as often as its probability."""
    observations, masks = batch_of_observations(sizes=(4,), seed=5)
    row = int(np.flatnonzero(masks.sum(axis=1) >= 3)[0])
    observations, masks = np.repeat(observations[row: row + 1], 4000, 0), np.repeat(masks[row: row + 1], 4000, 0)
    torch.manual_seed(4)
    net = PolicyNet(hidden=(16,))
    with torch.no_grad():
        net.actor_head.bias.copy_(torch.linspace(-1, 1, 107))  # unequal chances
    agent = PolicyAgent(net, seed=0, greedy=False)
    probabilities = np.exp(agent.log_probs(observations[:1], masks[:1])[0].astype(np.float64))
    dist = MaskedCategorical(net.logits(torch.from_numpy(observations)).detach(), torch.from_numpy(masks))
    for actions in (agent.act_batch(observations, masks), dist.sample(torch.Generator().manual_seed(1)).numpy()):
        counts = np.bincount(actions, minlength=107) / len(actions)
        assert np.all(counts[~masks[0]] == 0)
        assert np.abs(counts - probabilities).max() < 0.03, (counts[masks[0]], probabilities[masks[0]])


@pytest.mark.parametrize("greedy", [True, False])
def test_policy_agent_plays_whole_hands_legally_at_every_table_size(greedy):
    torch.manual_seed(1)
    agent = PolicyAgent(PolicyNet(hidden=(32,), critic="local"), seed=0, greedy=greedy)
    for n in range(2, 11):
        core = SpoilFiveCore(128, rules=Rules(num_players=n), seed=n)
        while not core.done.all():
            core.step(agent.act_batch(core.observe(), core.legal_mask()))  # raises on an illegal action


def test_a_greedy_policy_agent_leaves_forced_moves_to_the_mask_and_a_sampling_one_asks_the_network_for_all():
    torch.manual_seed(2)
    net = PolicyNet(hidden=(32,), critic="local")
    core = SpoilFiveCore(600, rules=Rules(num_players=4), seed=3)
    for _ in range(9):  # into the tricks, where some moves are forced
        core.step(random_legal(np.random.default_rng(0), core.legal_mask()))
    observations, masks = core.observe(), core.legal_mask()
    forced = masks.sum(axis=1) == 1
    assert 0 < forced.sum() < len(masks)
    with torch.inference_mode():
        expected = MaskedCategorical(net.logits(torch.as_tensor(observations)), torch.as_tensor(masks)).mode().numpy()
    asked = []
    logits = net.logits
    net.logits = lambda obs, trump=None: asked.append(len(obs)) or logits(obs, trump)
    greedy = PolicyAgent(net, seed=0)
    assert np.array_equal(greedy.act_batch(observations, masks), expected)
    assert asked == [int((~forced).sum())]
    assert np.array_equal(greedy.act_batch(observations[forced], masks[forced]), masks[forced].argmax(axis=1))
    assert asked == [int((~forced).sum())]  # a batch of forced moves never reaches the network
    PolicyAgent(net, seed=0, greedy=False).act_batch(observations, masks)
    assert asked[-1] == len(masks)


def test_the_first_layer_keeps_its_permuted_weights_only_while_frozen_weights_are_unchanged():
    torch.manual_seed(3)
    core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=4)
    obs = torch.as_tensor(core.observe())
    net = PolicyNet(hidden=(32,), critic="local")
    optimizer = torch.optim.Adam(net.parameters(), lr=0.5, fused=True)  # train.py's: it bumps no version
    with torch.inference_mode():
        before = net.logits(obs)
    net.logits(obs).square().mean().backward()
    optimizer.step()
    fresh = PolicyNet(hidden=(32,), critic="local")
    fresh.load_state_dict(net.state_dict())
    with torch.inference_mode():  # a trainable network's rollout after a step acts with the new weights
        after = net.logits(obs)
        assert torch.equal(after, fresh.logits(obs)) and not torch.equal(after, before)

    frozen = fresh.requires_grad_(False)  # as load_policy_agent's: kept from the first batch on
    with torch.inference_mode():
        frozen.logits(obs)
        kept = frozen.actor_first._kept[2]
        frozen.logits(obs[:5])
        assert frozen.actor_first._kept[2] is kept
    frozen.load_state_dict(PolicyNet(hidden=(32,), critic="local").state_dict())  # a copy bumps the version
    other = PolicyNet(hidden=(32,), critic="local")
    other.load_state_dict(frozen.state_dict())
    with torch.inference_mode():
        assert torch.equal(frozen.logits(obs), other.logits(obs)) and frozen.actor_first._kept[2] is not kept
    assert not load_policy_agent("ppo").net.actor_first.linear.weight.requires_grad


@pytest.mark.parametrize("encoding", ["canonical", "raw"])
def test_the_sparse_product_of_training_is_the_dense_one_up_to_rounding(encoding):
    rows = []
    for n in (2, 4, 7):
        core = SpoilFiveCore(40, rules=Rules(num_players=n), seed=n)
        for _ in range(2 * n):  # into the hand: played cards, voids, tricks
            rows.append(core.observe())
            core.step(random_legal(np.random.default_rng(n), core.legal_mask()))
    obs = torch.as_tensor(np.concatenate(rows + [np.zeros((1, OBS_DIM), np.float32)]))  # and a row of zeros
    assert ((obs != 0) & (obs != 1)).any()  # values that are not 0 or 1 (the pool, chips) weigh their columns
    torch.manual_seed(5)
    net = PolicyNet(hidden=(64, 32), critic="local", encoding=encoding)
    upstream = torch.randn(len(obs))
    found = {}
    for sparse in (False, True):
        net.zero_grad()
        net.use_sparse_inputs(sparse)
        logits, value = net.logits(obs), net.value(obs)
        (logits.sum(dim=1) * upstream + value).sum().backward()
        found[sparse] = (logits.detach(), value.detach(), net.actor_first.linear.weight.grad.clone(),
                         net.critic_first.linear.weight.grad.clone())
    for dense, sparse in zip(found[False], found[True], strict=True):
        assert torch.allclose(dense, sparse, rtol=1e-4, atol=1e-4 * float(dense.abs().max()))
    assert not torch.equal(found[False][2], found[True][2])  # the sparse sum really ran
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):  # bf16: the dense product, as fast there
        assert torch.equal(net.use_sparse_inputs(True).logits(obs), net.use_sparse_inputs(False).logits(obs))
    net.use_sparse_inputs(True)
    assert net.actor_first.sparse_inputs and not PolicyNet().actor_first.sparse_inputs  # acting stays dense


def test_training_networks_read_sparse_inputs_and_its_checks_play_dense(monkeypatch):
    from spoilfive_integrations.selfplay import policy_net

    train = load_train_module()
    net = policy_net({"hidden": "32", "critic": "local", "encoding": "canonical"})
    assert net.actor_first.sparse_inputs and net.critic_first.sparse_inputs
    played = []
    monkeypatch.setattr("agents.evaluate.evaluate", lambda agents, **kwargs: played.append(agents[0].net) or {
        "agents": {"policy": dict.fromkeys(("pool_share", "pool_share_ci95", "fair_share", "mean_equity",
                                            "equity_ci95"), 0.0)}, "table": {"spoil_rate": 0.0}})
    train.evaluate_against_spoilers(net, [3], 4, 0, torch.device("cpu"))
    assert not played[0].actor_first.sparse_inputs and not played[0].critic_first.sparse_inputs
    assert net.actor_first.sparse_inputs  # the training network itself is left as it was


def test_seat_gae_matches_a_per_trajectory_reference():
    train = load_train_module()
    rng = np.random.default_rng(0)
    # Random trajectories interleaved over steps (a trajectory acts at most once a step);
    # each row's successor is that trajectory's row at its next step.
    steps, per_step = 12, 30
    offsets, owner = [0], []
    for _ in range(steps):
        owner.extend(rng.choice(40, size=per_step, replace=False).tolist())
        offsets.append(len(owner))
    owner = np.array(owner)
    next_row = np.full(len(owner), -1)
    last = {}
    for row in range(len(owner)):
        if owner[row] in last:
            next_row[last[owner[row]]] = row
        last[owner[row]] = row
    values = rng.normal(size=len(owner)).astype(np.float32)
    reward = np.where(next_row < 0, rng.normal(size=len(owner)), 0).astype(np.float32)
    gamma, lam = 0.97, 0.9
    got = train.seat_gae(values, reward, next_row, offsets, gamma, lam)

    def reference(row):  # the textbook recursion along one trajectory
        following = next_row[row]
        if following < 0:
            return reward[row] - values[row]
        delta = reward[row] + gamma * values[following] - values[row]
        return delta + gamma * lam * reference(following)

    assert np.allclose(got, [reference(r) for r in range(len(owner))], atol=1e-5)


def test_canonical_encoding_puts_each_card_in_its_trump_frame():
    for trump in range(4):
        slots = CANONICAL_SLOTS[trump]
        assert sorted(slots.tolist()) == sorted(set(slots.tolist())) and len(slots) == 52
        assert slots[13 * trump + 4] == 0  # the five of trumps is the top trump
        assert slots[13 * trump + 10] == 1  # then the jack
        assert slots[ACE_OF_HEARTS] == 2
        assert slots[13 * trump] in (2, 3)  # the ace of trumps (the ace of hearts itself in hearts)
    assert CANONICAL_SLOTS[2, card_index("KH")] == 4 and CANONICAL_SLOTS[0, card_index("KC")] == 4
    # The layer on the plain observation equals a Linear on the explicitly encoded one.
    observations, _ = batch_of_observations(seed=2)
    obs = torch.from_numpy(observations)
    core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=6)  # the frame is the hand's own trump
    assert np.array_equal(trump_of(torch.from_numpy(core.observe())).numpy(), core.trump) and len(set(core.trump)) == 4
    net = PolicyNet(hidden=(24,), encoding="canonical")
    layer = net.actor_first
    padded = torch.cat([obs, torch.zeros(len(obs), 1)], 1)
    encoded = padded.gather(1, torch.from_numpy(CANONICAL_GATHER)[trump_of(obs)])
    assert torch.equal(layer.encode(obs), encoded)  # what the GPU path multiplies
    assert torch.allclose(layer(obs), layer.linear(encoded), atol=1e-5)
    # Each hand card sits in its canonical slot of the encoded hand block.
    trumps = trump_of(obs).numpy()
    hand = observations[:, SLICES["hand"]]
    for row in range(0, len(obs), 37):
        cards = np.flatnonzero(hand[row])
        expected = np.zeros(53)
        expected[CANONICAL_SLOTS[trumps[row], cards]] = 1
        assert np.array_equal(encoded[row, :53].numpy(), expected)


def test_canonical_plain_suits_and_void_flags_follow_the_trump_in_club_diamond_heart_spade_order():
    # Spades trump: the plain suits are clubs, diamonds, hearts; each suit's king is its top plain card.
    for trump, plain in ((3, "CDH"), (1, "HSC"), (0, "DHS"), (2, "SCD")):
        for j, suit in enumerate(plain):
            assert CANONICAL_SLOTS[trump, card_index("K" + suit)] == 14 + 13 * j, (trump, suit)
    # A plain suit without its ace (hearts: the ace of hearts is always a trump) leaves its lowest slot empty.
    assert 14 + 13 * 1 + 12 not in CANONICAL_SLOTS[0].tolist()  # clubs trump: hearts are the second plain suit
    assert CANONICAL_SLOTS[0, card_index("2H")] == 14 + 13 * 1 + 11  # red plain suits: the two is the lowest
    # The void flags (C, D, H, S, trumps of each seat) become trumps, then the plain suits in the same order;
    # the flag of the trump's printed suit, which no card belongs to, is dropped.
    voids = SLICES["voids"].start
    for trump, plain in ((3, (0, 1, 2)), (1, (2, 3, 0))):
        gather = CANONICAL_GATHER[trump].tolist()
        for seat in (0, 9):
            flags = voids + 5 * seat
            at = gather.index(flags + 4)
            assert gather[at: at + 4] == [flags + 4, *(flags + s for s in plain)]
            assert flags + trump not in gather


@pytest.mark.parametrize("critic", ["local", "omniscient"])
def test_actor_and_critic_read_the_observation_and_every_hand_in_the_trump_s_frame(critic):
    """The actor's logits and the critic's value equal their layers on the explicitly encoded observation
    (CANONICAL_GATHER of each row's trump) and, for the omniscient critic, on each card's holder moved to its
    canonical slot of that trump (CANONICAL_SLOTS; the empty slots held by nobody)."""
    from agents.policy import all_hands

    torch.manual_seed(5)
    net = PolicyNet(hidden=(24, 8), critic=critic)
    observations, _ = batch_of_observations(seed=4)
    obs = torch.from_numpy(observations)
    trumps = trump_of(obs)
    assert len(set(trumps.tolist())) == 4
    encoded = torch.cat([obs, torch.zeros(len(obs), 1)], 1).gather(1, torch.from_numpy(CANONICAL_GATHER)[trumps])
    holder = torch.randint(-1, 4, (len(obs), 52), dtype=torch.int8)
    slots = torch.from_numpy(CANONICAL_SLOTS)[trumps]
    canonical = torch.full((len(obs), 53), -1, dtype=torch.long).scatter_(1, slots, holder.long())
    with torch.no_grad():
        logits = net.actor_head(net.actor_body(net.actor_first.linear(encoded)))
        first = net.critic_first.linear(encoded)
        if critic == "omniscient":
            first = first + net.critic_hands(all_hands(canonical, first.dtype))
        value = net.critic_head(net.critic_body(first))[:, 0]
        held = holder if critic == "omniscient" else None
        assert torch.allclose(net.logits(obs), logits, atol=1e-5)
        assert torch.allclose(net.value(obs, held), value, atol=1e-5)
        dist, evaluated = net.evaluate(obs, torch.ones(len(obs), 107, dtype=torch.bool), held)
        assert torch.allclose(evaluated, value, atol=1e-5)
        assert torch.allclose(dist.log_probs, torch.log_softmax(logits, 1), atol=1e-5)


def test_omniscient_critic_reads_every_hand():
    torch.manual_seed(0)
    net = PolicyNet(hidden=(16,), critic="omniscient")
    observations, _ = batch_of_observations(seed=3)
    obs = torch.from_numpy(observations)
    holder = torch.randint(-1, 3, (len(obs), 52), dtype=torch.int8)
    value = net.value(obs, holder)
    assert value.shape == (len(obs),) and torch.isfinite(value).all()
    assert not torch.allclose(value, net.value(obs, torch.full_like(holder, -1)))
    with pytest.raises(ValueError, match="holder_relative"):
        net.value(obs)
    local = PolicyNet(hidden=(16,), critic="local")
    assert local.value(obs).shape == (len(obs),)


# ---------------------------------------------------------------------- the league's opponent tables
def league_rollout(weights: dict, **settings):
    """A rollout at 3 and 4 players whose league draws the table kinds of ``weights``; a small one (8 games: 4
    of 3 players, 4 of 4; a 16-unit network) unless ``settings`` (train.py's ``Args``) say otherwise."""
    import dataclasses

    from spoilfive_integrations.selfplay import TABLE_KINDS, SelfPlayRollout

    train = load_train_module()
    args = dataclasses.asdict(train.Args(**{"num_games": 8, "min_players": 3, "max_players": 4, "hidden": "16",
                                            **settings}))
    league = np.array([weights.get(kind, 0.0) for kind in TABLE_KINDS])
    return SelfPlayRollout(args, league / league.sum())


def opponent_rollout(opponent: str, weights: dict):
    return league_rollout(weights, num_games=32, hidden="256,256", opponent=opponent)  # train.py's default network


def test_opponent_tables_are_played_by_the_named_agent_alone(monkeypatch):
    from agents.base import Agent
    from spoilfive_integrations.selfplay import GREEDY, OPPONENT, RANDOM, SPOILER

    rollout = opponent_rollout("ppo-20min", {"opponent": 1.0})
    played = []

    class Spy(Agent):  # the named agent, watched: every opponent seat's move must come from it
        def act_batch(self, observations, masks):
            actions = inner.act_batch(observations, masks)
            assert masks[np.arange(len(actions)), actions].all()
            played.append(len(actions))
            return actions

    inner = rollout.baselines[OPPONENT]
    assert inner.name == "ppo-20min"
    rollout.baselines[OPPONENT] = Spy()
    for kind in (SPOILER, GREEDY, RANDOM):  # no other kind of table may be drawn
        monkeypatch.setattr(rollout.baselines[kind], "act_batch", lambda *a: pytest.fail("a baseline played"))
    batch = rollout.collect(1)
    assert sum(played) > 100
    assert batch.stats["hands"] == 32 and batch.stats["self_hands"] == 0  # every hand an opponent table
    assert batch.stats["eq_n_5"] >= 32 and all(batch.stats[f"eq_n_{k}"] == 0 for k in range(1, 5))


def test_a_finished_hand_credits_each_seat_its_own_result_on_its_last_decision(monkeypatch):
    """The hand's result is rigged to name the seat: seat s gets 1 + its place after the dealer. Every row
    of the current policy then either links to a later row of the same seat in the same hand, or is that
    seat's last and carries exactly its own figure, read back from the row's observation (the dealer's
    seat relative to the viewer). Two hands a game: a new hand's first row links to nothing earlier."""
    import dataclasses

    from spoilfive_env.core import SpoilFiveCore
    from spoilfive_integrations.selfplay import TABLE_KINDS, SelfPlayRollout

    step = SpoilFiveCore.step

    def rigged(self, actions, *args, **kwargs):
        dealer = self.dealer.astype(np.int64)  # (a copy) the dealer of the hand being played
        rewards, done = step(self, actions, *args, **kwargs)
        place = (np.arange(rewards.shape[1])[None, :] - dealer[:, None]) % rewards.shape[1]
        return np.where(done[:, None], 1.0 + place, 0.0).astype(np.float32), done

    monkeypatch.setattr(SpoilFiveCore, "step", rigged)
    train = load_train_module()
    settings = dataclasses.asdict(train.Args(num_games=24, min_players=2, max_players=5, hands_per_game=2,
                                             hidden="16"))
    league = np.array([{"self": 1.0, "random": 1.0}.get(kind, 0.0) for kind in TABLE_KINDS])
    batch = SelfPlayRollout(settings, league / league.sum()).collect(1)
    n = batch.obs[:, SLICES["table_size"]].argmax(1) + 2
    own = 1 + (-batch.obs[:, SLICES["dealer"]].argmax(1)) % n  # the viewer's place after the dealer, plus 1
    linked = batch.next_row >= 0
    assert np.array_equal(linked, ~batch.assigned)  # a successor or the hand's result, never both
    assert (batch.mask.sum(1) > 1).all()  # rows are the decisions with a choice: forced moves are left out
    assert batch.assigned.sum() > 60 and linked.sum() > 60
    assert np.array_equal(batch.reward[batch.assigned], own[batch.assigned].astype(np.float32))
    assert (batch.reward[linked] == 0).all()
    rows = np.flatnonzero(linked)
    assert (batch.next_row[rows] > rows).all() and np.array_equal(own[batch.next_row[rows]], own[rows])


def test_workers_of_one_rollout_deal_different_hands():
    """Each of several workers seeds its rollout with its own index: two workers of the same run, with the
    same network, play different deals (one worker alone keeps the in-process seeds)."""
    import dataclasses

    from spoilfive_integrations.selfplay import TABLE_KINDS, SelfPlayRollout, rollout_seed

    train = load_train_module()
    settings = dataclasses.asdict(train.Args(num_games=8, min_players=3, max_players=3, hidden="16"))
    league = np.array([kind == "self" for kind in TABLE_KINDS], np.float64)
    net = SelfPlayRollout(settings, league).net
    hands = [SelfPlayRollout(settings, league, worker=w, workers=2, net=net).collect(1).obs[:4, SLICES["hand"]]
             for w in (0, 1)]
    assert not np.array_equal(hands[0], hands[1])
    assert rollout_seed(3, 5, 0, 1) == [3, 5] and rollout_seed(3, 5, 0, 2) != rollout_seed(3, 5, 1, 2)


def test_a_league_with_opponent_tables_needs_the_opponent():
    with pytest.raises(ValueError, match="no opponent is named"):
        opponent_rollout("", {"self": 1.0, "opponent": 1.0})


@pytest.mark.parametrize("current_seats, policy_seats", [(0.0, 12 * 1 + 12 * 1), (1.0, 0)])
def test_current_seats_is_each_seat_s_chance_of_the_policy_beside_the_one_seat_it_always_holds(
        current_seats, policy_seats, monkeypatch):
    """Random tables, 8 games of 3 hands (12 hands at each of 3 and 4 players): with current_seats 0 the policy
    holds exactly one seat of every hand (its seat-hands against random: 24); with 1 it holds every seat, and
    the random agent never plays (no hand against random: no seat-hand counts for its figure)."""
    from spoilfive_integrations.selfplay import RANDOM

    rollout = league_rollout({"random": 1.0}, current_seats=current_seats, hands_per_game=3)
    if current_seats == 1.0:
        monkeypatch.setattr(rollout.baselines[RANDOM], "act_batch", lambda *a: pytest.fail("a random seat played"))
    stats = rollout.collect(1).stats
    assert stats["hands"] == 24 and stats["self_hands"] == 0
    assert stats["eq_n_4"] == policy_seats and all(stats[f"eq_n_{kind}"] == 0 for kind in (1, 2, 3, 5))


@pytest.mark.parametrize("kind", ["spoiler", "greedy", "random"])
def test_each_baseline_s_tables_are_played_by_the_agent_of_that_name(kind, monkeypatch):
    rollout = league_rollout({kind: 1.0}, current_seats=0.0)
    played = []
    for agent in rollout.baselines.values():
        def watched(observations, masks, agent=agent, act=agent.act_batch):
            played.append(agent.name)
            return act(observations, masks)
        monkeypatch.setattr(agent, "act_batch", watched)
    rollout.collect(1)
    assert set(played) == {kind}


def test_the_snapshot_seats_are_played_by_the_snapshot_network_and_the_policy_s_by_the_weights_given(monkeypatch):
    """``collect(weights=..., snapshot=...)``: the current policy's network takes the weights and plays the
    batch's rows, and no other seat; the snapshot seats are played by a network holding the snapshot."""
    from spoilfive_integrations.selfplay import policy_net

    rollout = league_rollout({"snapshot": 1.0}, current_seats=0.0)
    settings = {"hidden": "16", "critic": "local", "encoding": "canonical"}
    torch.manual_seed(1)
    weights, snapshot = (policy_net(settings).state_dict() for _ in range(2))
    rows = {"policy": 0, "snapshot": 0}
    for name, net in (("policy", rollout.net), ("snapshot", rollout.opponent_net)):
        def counted(obs, mask, name=name, net=net, real=net.distribution):
            rows[name] += len(obs)
            assert all(torch.equal(value, (weights if name == "policy" else snapshot)[key])
                       for key, value in net.state_dict().items())
            return real(obs, mask)
        monkeypatch.setattr(net, "distribution", counted)
    batch = rollout.collect(1, weights=weights, snapshot=snapshot)
    assert rows["policy"] == len(batch) > 0 and rows["snapshot"] > 0


def test_the_games_of_each_size_are_split_over_the_workers_the_first_ones_taking_the_remainder():
    from spoilfive_integrations.selfplay import split_games

    assert split_games(22, [3, 4], 3) == [[4, 4], [4, 4], [3, 3]]  # 11 games a size: 4 + 4 + 3
    assert split_games(22, [3, 4], 1) == [[11, 11]]


def test_merged_batches_keep_each_row_s_successor_and_result():
    """Two workers' batches as one: each row's next decision is the one it had in its own batch (no trajectory
    crosses into the other), and its result and steps come along."""
    from spoilfive_integrations.selfplay import merge_batches

    rollouts = [league_rollout({"self": 1.0}), league_rollout({"self": 1.0}, seed=4)]
    batches = [rollout.collect(1) for rollout in rollouts]
    merged = merge_batches(batches)
    assert len(merged) == sum(map(len, batches)) and merged.step_offsets[-1] == len(merged)
    linked = np.flatnonzero(merged.next_row >= 0)
    assert np.array_equal(linked >= len(batches[0]), merged.next_row[linked] >= len(batches[0]))
    assert np.array_equal(merged.obs[merged.next_row[linked]],
                          np.concatenate([b.obs[b.next_row[b.next_row >= 0]] for b in batches]))
    assert np.array_equal(merged.reward, np.concatenate([b.reward for b in batches]))


def test_the_rollout_s_figures_count_the_spoiled_self_play_hands_and_the_policy_s_own_results(monkeypatch):
    """The hand's result rigged to 1 + the seat's place after the dealer (1 to n). At random tables where
    the policy holds one seat its summed results lie between 1 and 4 a hand (not the whole table's); at
    self-play tables the spoiled hands counted are those the engine ends with no winner."""
    step = SpoilFiveCore.step
    spoiled = []

    def rigged(self, actions, *args, **kwargs):
        dealer = self.dealer.astype(np.int64)
        rewards, done = step(self, actions, *args, **kwargs)
        spoiled.append(int((done & (self.last_winner == -1)).sum()))
        place = (np.arange(rewards.shape[1])[None, :] - dealer[:, None]) % rewards.shape[1]
        return np.where(done[:, None], 1.0 + place, 0.0).astype(np.float32), done

    monkeypatch.setattr(SpoilFiveCore, "step", rigged)
    stats = league_rollout({"random": 1.0}, current_seats=0.0, hands_per_game=3).collect(1).stats
    assert stats["eq_n_4"] == 24 and 24 <= stats["eq_sum_4"] <= 4 * 24
    spoiled.clear()
    stats = league_rollout({"self": 1.0}, hands_per_game=3).collect(1).stats
    assert stats["self_hands"] == 24 and stats["self_spoils"] == sum(spoiled) > 0


def test_the_rollout_counts_every_decision_at_its_tables_forced_ones_and_other_seats_included(monkeypatch):
    """``decisions`` (what --total-decisions budgets) counts every move of every live game, not the policy's rows."""
    from spoilfive_env.core import PHASE_DONE

    step, moves = SpoilFiveCore.step, []

    def counting(self, actions, *args, **kwargs):
        moves.append(int((self.phase != PHASE_DONE).sum()))
        return step(self, actions, *args, **kwargs)

    monkeypatch.setattr(SpoilFiveCore, "step", counting)
    batch = league_rollout({"random": 1.0}, current_seats=0.0).collect(1)
    assert batch.decisions == sum(moves) > 2 * len(batch)


def test_the_omniscient_critic_s_holders_are_relative_to_the_deciding_seat():
    """Each row's holder of every card counts seats from the row's own seat: 0 is exactly its own hand."""
    batch = league_rollout({"self": 1.0}, critic="omniscient").collect(1)
    holder = batch.holder
    assert holder is not None and holder.shape == (len(batch), 52) and len(batch) > 50
    np.testing.assert_array_equal(holder == 0, batch.obs[:, SLICES["hand"]] > 0)
    n = batch.obs[:, SLICES["table_size"]].argmax(1) + 2
    assert (holder < n[:, None]).all() and (holder >= -1).all()


def test_a_rollout_stopped_half_way_leaves_nothing_behind_for_the_next():
    """A rollout is a pure function of the weights and (seed, iteration): one dropped by ``stop`` half-way leaves
    no open trajectory behind, so the next collect links and credits its rows as a fresh one."""
    rollout = league_rollout({"self": 1.0})
    first = rollout.collect(1)
    first = {key: np.array(getattr(first, key)) for key in ("action", "next_row", "reward", "assigned")}
    polls = iter(range(100))

    class StopAtTheFourthStep:
        @property
        def requested(self):
            return next(polls) >= 3

    assert rollout.collect(2, stop=StopAtTheFourthStep()) is None  # (another iteration: other deals)
    again = rollout.collect(1)
    for key, value in first.items():
        np.testing.assert_array_equal(getattr(again, key), value, err_msg=key)


def test_each_table_size_deals_from_its_own_stream():
    """The cores of the table sizes draw their deals from independent streams: the 3-player games' hands are not
    the first cards of the same games' decks at 4 players (one shared stream deals them so, every time)."""
    from spoilfive_integrations.selfplay import rollout_seed

    rollout = league_rollout({"self": 1.0})
    rollout.tables.start_rollout(rollout_seed(0, 1, 0, 1))
    three, four = rollout.tables.cores
    assert (three.num_players, four.num_players) == (3, 4)
    assert ((three.holder >= 0) & (four.holder < 0)).any(axis=1).all()


SHORT_RUN = ("--total-decisions", "2000", "--num-games", "16", "--eval-every", "0", "--final-eval-deals", "0",
             "--no-progress-bar", "--torch-threads", "1")
"""A run of train.py in this process that ends within seconds, with no evaluation."""
SMALL_TABLES = ("--min-players", "3", "--max-players", "4", "--hidden", "32", "--eval-players", "3")


def test_the_commands_a_run_prints_work_where_its_name_and_folder_start_with_a_dash(tmp_path, monkeypatch, capsys):
    """Given after its flag, a value that starts with '-' reads as an option ("--run-name -1-s0" is refused), so the
    commands the run prints for later give such values as --flag=value."""
    import shlex

    from agents.evaluate import main as evaluate_main

    train = load_train_module()
    monkeypatch.chdir(tmp_path)
    train.main(["--runs-dir=-runs", "--exp-name", "-1", "--seed", "0", *SHORT_RUN])
    printed = {line.split(":", 1)[0].strip(): line.split(":", 1)[1] for line in capsys.readouterr().out.splitlines()
               if line.startswith("  ") and ":" in line}
    resume = shlex.split(printed["resume it"].split("[")[0])
    assert resume[:2] == ["python", "train.py"]
    args = train.parse_args(resume[2:])
    assert (args.runs_dir, args.run_name, args.resume) == ("-runs", "-1-s0", True)
    assert shlex.split(printed["watch it"]) == ["tensorboard", "--logdir=-runs"]
    assert shlex.split(printed["play it"])[-1] == "--opponents=-runs/-1-s0/agent.pt"
    evaluate = shlex.split(printed["evaluate it"])
    assert evaluate[:3] == ["python", "-m", "agents.evaluate"]
    evaluate_main([*evaluate[3:], "--deals", "2", "--json"])  # the last --deals counts: two deals, not 2,000
    report = json.loads(capsys.readouterr().out)
    assert report["lineup"] == ["-runs/-1-s0/agent.pt", "spoiler", "spoiler", "spoiler"] and report["deals"] == 2


def test_init_from_starts_a_new_run_from_the_checkpoints_network(tmp_path):
    from agents.policy import load_checkpoint, resolve_checkpoint

    train = load_train_module()
    tiny = ["--runs-dir", str(tmp_path), *SHORT_RUN, "--learning-rate", "1e-12"]
    train.main([*tiny, "--run-name", "from-ppo-20min", "--init-from", "ppo-20min"])
    train.main([*tiny, "--run-name", "fresh"])
    start, _ = load_checkpoint(resolve_checkpoint("ppo-20min"))
    (tuned, saved), (fresh, _) = (load_checkpoint(tmp_path / name / "agent.pt") for name in ("from-ppo-20min", "fresh"))
    assert saved["args"]["hidden"] == ",".join(map(str, start.hidden)) and saved["args"]["init_from"] == "ppo-20min"
    for (name, a), b in zip(start.state_dict().items(), tuned.state_dict().values(), strict=True):
        assert torch.allclose(a, b, atol=1e-6), name  # a learning rate of 1e-12 leaves the weights where they began
    assert not all(torch.allclose(a, c, atol=1e-3) for a, c in zip(start.state_dict().values(),
                                                                     fresh.state_dict().values()))


def test_a_run_folder_that_does_not_fit_is_refused_in_one_line_and_left_as_it_was(tmp_path, capsys):
    train = load_train_module()
    new = ["--runs-dir", str(tmp_path), "--run-name", "run", *SHORT_RUN, *SMALL_TABLES]
    resume = ["--runs-dir", str(tmp_path), "--run-name", "run", "--resume", "--total-decisions", "4000"]
    train.main(new)
    run = tmp_path / "run"

    def refused(argv, words):
        before = {path: path.read_bytes() for path in run.rglob("*") if path.is_file()}
        capsys.readouterr()
        with pytest.raises(SystemExit) as stop:
            train.main(argv)
        error = capsys.readouterr().err
        assert stop.value.code == 2 and error.count("\n") == 1 and words in error, error
        assert {path: path.read_bytes() for path in run.rglob("*") if path.is_file()} == before  # nothing lost

    table, checkpoint = (run / "progress.csv").read_bytes(), (run / "checkpoint.pt").read_bytes()
    for damaged in (table + b"garbage,row\n", b"\xe9\xff" * 50):
        (run / "progress.csv").write_bytes(damaged)
        refused(resume, "progress.csv is not a progress table train.py wrote")
    (run / "progress.csv").write_bytes(table)
    data = torch.load(run / "checkpoint.pt", weights_only=True)
    data["args"]["hidden"] = "64"  # an edited file: its arguments describe another network than its weights
    torch.save(data, run / "checkpoint.pt")
    refused(resume, "does not fit its own arguments: they give --hidden 64, its network has --hidden 32")
    (run / "checkpoint.pt").write_bytes(checkpoint)
    snapshot = run / "snapshots" / "iter_000000.pt"
    kept_snapshot = snapshot.read_bytes()
    snapshot.write_bytes(kept_snapshot[: len(kept_snapshot) // 2])  # a league snapshot, damaged
    refused(resume, "league snapshot " + str(snapshot) + " is not a readable torch checkpoint")
    train.main(["wide" if word == "run" else "48" if word == "32" else word for word in new])
    (tmp_path / "wide" / "snapshots" / "iter_000000.pt").replace(snapshot)  # another run's, of another width
    refused(resume, "iter_000000.pt is of another network: it has --hidden 48, the run's network --hidden 32")
    snapshot.write_bytes(kept_snapshot)
    (run / "checkpoint.pt").unlink()  # the agent kept, its larger resumable checkpoint deleted
    refused(new, "already holds a run's agent.pt")
    (run / "agent.pt").replace(tmp_path / "agent.pt")  # only the snapshots of a run stopped before its first save
    refused(new, "already holds league snapshots of an earlier run")
    (tmp_path / "agent.pt").replace(run / "agent.pt")
    (run / "checkpoint.pt").write_bytes(checkpoint)
    refused(new, "already holds a run: pass --resume")


def drop(table, key):
    del table[key]


# Edits of a run's checkpoint.pt that --resume must refuse before any work, and what the refusal says.
MALFORMED_CHECKPOINTS = {
    "hidden an int": (lambda c: c["args"].update(hidden=8), "its saved --hidden is 8, not text"),
    "eval players an int": (lambda c: c["args"].update(eval_players=3), "its saved --eval-players is 3, not text"),
    "league None": (lambda c: c["args"].update(league=None), "its saved --league is None, not text"),
    "learning rate text": (lambda c: c["args"].update(learning_rate="abc"),
                           "its saved --learning-rate is 'abc', not a number"),
    "min players text": (lambda c: c["args"].update(min_players="3"),
                         "its saved --min-players is '3', not a whole number"),
    "seed a bool": (lambda c: c["args"].update(seed=True), "its saved --seed is True, not a whole number"),
    "run name an int": (lambda c: c["args"].update(run_name=5), "its saved --run-name is 5, not text"),
    "ship as an int": (lambda c: c["args"].update(ship_as=7), "its saved --ship-as is 7, not text"),
    "anneal lr text": (lambda c: c["args"].update(anneal_lr="no"), "its saved --anneal-lr is 'no', not True or False"),
    "league blank item": (lambda c: c["args"].update(league="self=1,,greedy=1"),
                          "--league 'self=1,,greedy=1': an empty item"),
    "no progress": (lambda c: drop(c, "progress"), "(no progress)"),
    "progress text": (lambda c: c.update(progress="abc"), "its progress is a str, not a dict of counts"),
    "decisions text": (lambda c: c["progress"].update(decisions="abc"), "its progress decisions is 'abc', not a"),
    "decisions negative": (lambda c: c["progress"].update(decisions=-100),
                           "its progress decisions is -100, not a whole number of at least 0"),
    "seconds nan": (lambda c: c["progress"].update(seconds=float("nan")), "its progress seconds is nan"),
    "progress unknown": (lambda c: c["progress"].update(extra=torch.zeros(1)), "its progress holds 'extra'"),
    "snapshot equity nan": (lambda c: c["progress"].update(snapshot_equity={"iter_000000.pt": float("nan")}),
                            "snapshot_equity does not map snapshot file names to finite numbers"),
    "optimizer empty": (lambda c: c.update(optimizer={}), "its optimizer state is not a dict of state"),
    "optimizer text": (lambda c: c.update(optimizer="abc"), "its optimizer state is not a dict"),
    "no param groups": (lambda c: c["optimizer"].update(param_groups=[]),
                        "its optimizer state does not load (ValueError: loaded state dict has a different number"),
    "learning rate of the optimizer": (lambda c: c["optimizer"]["param_groups"][0].update(lr="abc"),
                                       "its optimizer's learning rate is 'abc'"),
    "betas": (lambda c: c["optimizer"]["param_groups"][0].update(betas=(0.9, 2.0)),
              "its optimizer's betas is (0.9, 2.0), where train.py's Adam has (0.9, 0.999)"),
    "adam state without moments": (lambda c: c["optimizer"].update(state={0: {"step": torch.tensor(1.0)}}),
                                   "the optimizer state of parameter 0 holds step, not exp_avg, exp_avg_sq, step"),
    "moment of another shape": (lambda c: c["optimizer"]["state"][0].update(exp_avg=torch.zeros(3)),
                                "the optimizer's exp_avg of parameter 0 is not a finite float tensor of shape (32,"),
    "moment nan": (lambda c: c["optimizer"]["state"][1]["exp_avg_sq"].fill_(float("nan")),
                   "the optimizer's exp_avg_sq of parameter 1 is not a finite float tensor"),
    "step text": (lambda c: c["optimizer"]["state"][0].update(step="abc"),
                  "its optimizer state is not a dict of state (tensors by parameter)"),
    "step of two": (lambda c: c["optimizer"]["state"][0].update(step=torch.ones(2)),
                    "the optimizer step of parameter 0 is tensor([1., 1.]), not one finite count"),
}


def test_a_checkpoint_whose_arguments_progress_or_optimizer_are_malformed_is_refused_before_any_work(tmp_path,
                                                                                                     capsys):
    """Each edit ended in a traceback (the optimizer's only once the run had started), or was trained on:
    anneal_lr "no" annealed, decisions -100 trained 100 decisions more."""
    train = load_train_module()
    train.main(["--runs-dir", str(tmp_path), "--run-name", "run", *SHORT_RUN, *SMALL_TABLES])
    capsys.readouterr()
    run = tmp_path / "run"
    checkpoint = run / "checkpoint.pt"
    net, valid = load_checkpoint(checkpoint)
    assert train.resume_problem(valid, net) is None  # what train.py writes resumes (tests/test_train_interrupt.py)
    before = {path: path.read_bytes() for path in run.rglob("*") if path.is_file()}
    for case, (edit, words) in MALFORMED_CHECKPOINTS.items():
        data = torch.load(checkpoint, weights_only=True)
        edit(data)
        torch.save(data, checkpoint)
        edited = checkpoint.read_bytes()
        with pytest.raises(SystemExit) as stop:
            train.main(["--runs-dir", str(tmp_path), "--run-name", "run", "--resume", "--total-decisions", "4000"])
        captured = capsys.readouterr()
        assert stop.value.code == 2 and captured.out == "", case
        assert captured.err.count("\n") == 1 and words in captured.err, (case, captured.err)
        assert "is not a resumable checkpoint" in captured.err or case == "league blank item", (case, captured.err)
        assert checkpoint.read_bytes() == edited, case
        checkpoint.write_bytes(before[checkpoint])
        assert {path: path.read_bytes() for path in run.rglob("*") if path.is_file()} == before, case


def test_policy_agent_log_probs_are_its_distribution_over_the_legal_actions():
    agent = load_agent("ppo-20min")
    observations, masks = batch_of_observations()
    log_p = agent.log_probs(observations, masks)
    probabilities = np.exp(log_p.astype(np.float64))
    assert np.allclose(probabilities.sum(axis=1), 1, atol=1e-5) and np.all(probabilities[~masks] == 0)
    assert np.array_equal(log_p.argmax(axis=1), agent.act_batch(observations, masks))  # greedy: the most probable


def test_league_weights_are_probabilities_even_when_huge_and_refused_when_meaningless():
    train = load_train_module()
    league = train.parse_weights("self=1e308,random=1e308")  # their sum would overflow to inf
    assert np.isfinite(league).all() and league.sum() == pytest.approx(1.0)
    assert league[train.TABLE_KINDS.index("self")] == pytest.approx(0.5)
    for text in ("self=0", "self=-1,random=2", "self=inf", "self=nan"):
        with pytest.raises(ValueError, match="non-negative and not all zero"):
            train.parse_weights(text)


def test_pfsp_draws_the_snapshots_the_policy_does_worst_against_most_often():
    train = load_train_module()
    chances = train.pfsp_probabilities([0.3, 0.0, -0.2], temperature=0.1)
    assert chances.sum() == pytest.approx(1.0) and chances[2] > chances[1] > chances[0]
    assert chances[2] / chances[1] == pytest.approx(np.exp(2.0))  # exp(-E / T) between any two
    assert np.allclose(train.pfsp_probabilities([0.3, 0.0, -0.2], temperature=1e9), 1 / 3)  # hot: uniform
    assert np.isfinite(train.pfsp_probabilities([-1e6, 1e6], temperature=1e-3)).all()  # no overflow

    snapshots = [Path(f"iter_{i:06d}.pt") for i in (0, 20, 40)]
    args = train.Args(snapshot_sampling="pfsp", seed=3)
    # a snapshot not played yet counts as even (0): beside two the policy beats, it is drawn almost always
    drawn = [train.draw_snapshot(snapshots, i, args, {"iter_000000.pt": 0.5, "iter_000020.pt": 0.5}).name
             for i in range(1, 201)]
    assert drawn.count("iter_000040.pt") >= 190
    uniform = train.Args(seed=3)  # the uniform draw is the one train.py always made
    for iteration in range(1, 30):
        expected = snapshots[np.random.default_rng([3, iteration, 7]).integers(3)]
        assert train.draw_snapshot(snapshots, iteration, uniform, {"iter_000040.pt": -9.0}) == expected


# ---------------------------------------------------------------------- the PPO update, term by term
PPO_RUN = ("--num-games", "32", "--min-players", "3", "--max-players", "4", "--hidden", "16",
           "--minibatch-size", "1000000", "--update-epochs", "2", "--total-decisions", "1", "--eval-every", "0",
           "--eval-players", "3", "--final-eval-deals", "0", "--torch-threads", "1", "--no-progress-bar",
           "--precision", "fp32", "--gamma", "0.9", "--gae-lambda", "0.8", "--clip-coef", "0.01",
           "--ent-coef", "0.05", "--vf-coef", "0.7", "--learning-rate", "0.01", "--no-anneal-lr")


def total_norm(gradients) -> float:
    """The 2-norm of all the gradients together (None for a parameter the loss does not reach), as clip_grad_norm_
    measures it."""
    return float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in gradients
                                                       if g is not None])))


PPO_CASES = {"textbook": (), "clipped value loss": ("--clip-vloss",), "raw advantages": ("--no-norm-adv",),
             "two minibatches": ("--minibatch-size", "170")}


@pytest.mark.parametrize("case", PPO_CASES)
def test_each_ppo_gradient_is_that_of_the_textbook_clipped_loss(case, tmp_path, monkeypatch):
    """One iteration, minibatches of consecutive rows (in row order), two epochs: at each step the gradient
    train.py takes is that of the loss written out here by hand from the rollout's rows and the network's own
    values before the update. GAE along each seat's rows with --gamma/--gae-lambda; advantages normalised within
    each minibatch (not with --no-norm-adv); the clipped surrogate (the second epoch's ratios leave
    [1 - 0.01, 1 + 0.01]); minus --ent-coef times the entropy over the legal actions; plus --vf-coef times half the
    squared error to the returns (advantage plus value), with --clip-vloss the larger of that and the error of
    the value clipped to within 0.01 of the old one. The gradient is then clipped to --max-grad-norm, and the
    iteration's row of progress.csv logs the last step's losses."""
    from spoilfive_integrations.selfplay import SelfPlayRollout

    train = load_train_module()
    options = PPO_CASES[case]
    seen = {}
    collect, evaluate, seat_gae = SelfPlayRollout.collect, PolicyNet.evaluate, train.seat_gae
    clip_grad_norm = torch.nn.utils.clip_grad_norm_

    def spy_collect(self, *args, **kwargs):
        seen["batch"] = collect(self, *args, **kwargs)
        return seen["batch"]

    def spy_evaluate(self, *args):
        seen["net"], seen["inputs"] = self, args
        return evaluate(self, *args)

    def spy_gae(values, *args):
        seen["values"] = np.array(values, np.float64)
        return seat_gae(values, *args)

    steps, logged = [], []

    def check_gradient(parameters, max_norm, *args, **kwargs):
        parameters = list(parameters)
        batch, net = seen["batch"], seen["net"]
        if not steps:  # before the first step: the values of the network that played the rollout
            with torch.no_grad():
                seen["own_values"] = net.value(batch.obs_tensor(torch.device("cpu"))).double().numpy()
            assert np.allclose(seen["own_values"], seen["values"], atol=1e-5)
        # advantages by hand: rows in reverse order, every successor being a later row
        values, next_row, reward = seen["own_values"], batch.next_row, batch.reward.astype(np.float64)
        adv = np.zeros(len(values))
        for row in range(len(values) - 1, -1, -1):
            following = next_row[row]
            if following < 0:
                adv[row] = reward[row] - values[row]
            else:
                adv[row] = (reward[row] + 0.9 * values[following] - values[row]) + 0.9 * 0.8 * adv[following]
        seen["advantages"] = adv.copy()
        size = len(seen["inputs"][0])  # this minibatch: the rows that follow the last one's (row order)
        start = sum(step["rows"] for step in steps) % len(values)
        rows = slice(start, start + size)
        adv, old_values = adv[rows], torch.tensor(values[rows], dtype=torch.float32)
        returns = torch.tensor(adv, dtype=torch.float32) + old_values
        if "--no-norm-adv" not in options:
            adv = (adv - adv.mean()) / (adv.std(ddof=1) + 1e-8)
        adv = torch.tensor(adv, dtype=torch.float32)
        dist, new_value = evaluate(net, *seen["inputs"])
        log_probs = dist.log_probs
        mask = seen["inputs"][1]
        new_logp = log_probs.gather(1, torch.from_numpy(batch.action[rows]).long()[:, None])[:, 0]
        logratio = new_logp - torch.from_numpy(batch.logp[rows])
        ratio = torch.exp(logratio)
        surrogate = torch.minimum(adv * ratio, adv * ratio.clamp(0.99, 1.01))
        entropy = -torch.where(mask, log_probs.exp() * log_probs, torch.zeros_like(log_probs)).sum(1)
        value_error = (new_value - returns) ** 2
        if "--clip-vloss" in options:
            clipped = old_values + (new_value - old_values).clamp(-0.01, 0.01)
            value_error = torch.maximum(value_error, (clipped - returns) ** 2)
        loss = -surrogate.mean() - 0.05 * entropy.mean() + 0.7 * 0.5 * value_error.mean()
        expected = torch.autograd.grad(loss, parameters, allow_unused=True)
        matches = [torch.allclose(got, torch.zeros_like(got) if want is None else want, rtol=1e-3, atol=1e-6)
                   for got, want in zip((p.grad for p in parameters), expected, strict=True)]
        clip_fraction = float(((ratio - 1).abs() > 0.01).float().mean())
        logged.append({"policy_loss": -surrogate.mean().item(), "value_loss": 0.5 * value_error.mean().item(),
                       "entropy": entropy.mean().item(), "approx_kl": ((ratio - 1) - logratio).mean().item()})
        norm_before = total_norm(expected)
        result = clip_grad_norm(parameters, max_norm, *args, **kwargs)
        norm_after = total_norm(p.grad for p in parameters)
        clipped_to = min(norm_before, 0.5)  # --max-grad-norm's default
        steps.append({"matches": all(matches), "clip_fraction": clip_fraction, "rows": size,  # checked after main
                      "clipped": abs(norm_after - clipped_to) < 1e-3 * clipped_to})
        return result

    monkeypatch.setattr(SelfPlayRollout, "collect", spy_collect)
    monkeypatch.setattr(PolicyNet, "evaluate", spy_evaluate)
    monkeypatch.setattr(train, "seat_gae", spy_gae)
    monkeypatch.setattr(torch, "randperm", lambda n, **kwargs: torch.arange(n))  # the rows in their order
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", check_gradient)
    summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "ppo", *PPO_RUN, *options])
    parts = 2 if case == "two minibatches" else 1
    assert summary["progress"]["iteration"] == 1 and len(steps) == 2 * parts
    assert [step["matches"] for step in steps] == [True] * 2 * parts  # each step's gradient is the textbook loss's
    assert [step["clipped"] for step in steps] == [True] * 2 * parts  # then clipped to --max-grad-norm
    # the last epoch's clipping binds on some rows, not all
    assert steps[0]["clip_fraction"] == 0 and 0.05 < steps[-1]["clip_fraction"] < 0.95
    row = progress_rows(tmp_path / "ppo")[0]
    for name, value in logged[-1].items():  # the last step's
        assert float(row[name]) == pytest.approx(value, rel=1e-3, abs=1e-6), name
    assert float(row["clipfrac"]) == pytest.approx(np.mean([step["clip_fraction"] for step in steps]))
    returns = seen["advantages"] + seen["own_values"]
    assert float(row["explained_variance"]) == pytest.approx(1 - np.var(seen["advantages"]) / np.var(returns), rel=1e-3)


@pytest.mark.parametrize(("target_kl", "steps"), [("1e-12", 2), ("1e9", 6)])
def test_target_kl_stops_the_epochs_once_the_approximate_kl_passes_it(target_kl, steps, tmp_path, monkeypatch):
    """Two minibatches, three epochs: past a tiny --target-kl (the first epoch's second minibatch already moved)
    the update stops after its first epoch; below a huge one it takes all six steps."""
    train = load_train_module()
    taken, clip_grad_norm = [], torch.nn.utils.clip_grad_norm_
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", lambda *args: taken.append(1) or clip_grad_norm(*args))
    train.main(["--runs-dir", str(tmp_path), "--run-name", "kl", *PPO_RUN, "--minibatch-size", "170",
                "--update-epochs", "3", "--target-kl", target_kl])
    assert len(taken) == steps


def clock_of_25_seconds_an_iteration(train, monkeypatch) -> None:
    """``time.time()`` stands still but for 25 seconds added once an iteration, after its learning rate is set
    (at ``seat_gae``): minutes and rates that do not hang on the machine's speed."""
    import time

    now, seat_gae = [time.time()], train.seat_gae

    def an_iteration(*args):
        now[0] += 25.0
        return seat_gae(*args)

    monkeypatch.setattr(time, "time", lambda: now[0])
    monkeypatch.setattr(train, "seat_gae", an_iteration)


@pytest.mark.parametrize("time_limit", [None, 0.85])
def test_the_learning_rate_anneals_linearly_over_the_decisions_or_the_minutes_to_a_floor(time_limit, tmp_path,
                                                                                        monkeypatch):
    """Each iteration's learning rate is --learning-rate times what is left of the run before it: of
    --total-decisions, or with --time-limit of this session's minutes if less, never under 5%. A clock that moves
    25 seconds an iteration: under --time-limit 0.85 (51 s) the third iteration has 1 s of 51 left (the floor)."""
    train = load_train_module()
    clock_of_25_seconds_an_iteration(train, monkeypatch)
    limit = ("--time-limit", str(time_limit)) if time_limit else ()
    train.main(["--runs-dir", str(tmp_path), "--run-name", "lr", *PPO_RUN, "--anneal-lr", "--total-decisions", "1500",
                *limit])
    rows = progress_rows(tmp_path / "lr")
    assert len(rows) == 3
    before = 0
    for iteration, row in enumerate(rows):
        left = 1 - before / 1500
        if time_limit:
            left = min(left, 1 - 25 * iteration / (60 * time_limit))
        assert float(row["learning_rate"]) == pytest.approx(0.01 * max(left, 0.05)), iteration
        before = int(row["decisions"])
    assert (float(rows[-1]["learning_rate"]) == pytest.approx(0.0005)) == bool(time_limit)


def test_the_snapshot_tables_play_the_drawn_snapshot_not_the_current_weights(tmp_path, monkeypatch):
    """Every iteration's rollout gets the weights of the snapshot file it drew (here the only one, the first
    iteration's), not the network being trained, which has moved on by the second iteration."""
    from spoilfive_integrations.selfplay import SelfPlayRollout

    train = load_train_module()
    given, collect = [], SelfPlayRollout.collect

    def spy_collect(self, iteration, snapshot=None, **kwargs):
        given.append({key: value.clone() for key, value in snapshot.items()})
        return collect(self, iteration, snapshot=snapshot, **kwargs)

    monkeypatch.setattr(SelfPlayRollout, "collect", spy_collect)
    train.main(["--runs-dir", str(tmp_path), "--run-name", "snap", *PPO_RUN, "--total-decisions", "1200"])
    snapshots = sorted((tmp_path / "snap" / "snapshots").glob("*.pt"))
    assert [path.name for path in snapshots] == ["iter_000000.pt"] and len(given) >= 2
    first = torch.load(snapshots[0], weights_only=True)["state_dict"]
    current = load_checkpoint(tmp_path / "snap" / "agent.pt")[0].state_dict()
    assert not all(torch.equal(current[key], value) for key, value in first.items())  # training moved on
    for snapshot in given:
        assert snapshot.keys() == first.keys() and all(torch.equal(snapshot[key], first[key]) for key in first)


def test_each_iterations_update_shuffles_its_minibatches_by_its_own_seed(tmp_path, monkeypatch):
    """The update's minibatch order is drawn from --seed times 1_000_003 plus the iteration: every epoch
    of one iteration from that seed, the next iteration from the next one."""
    train = load_train_module()
    seeds, randperm = [], torch.randperm

    def spy(n, *args, generator=None, **kwargs):
        seeds.append(None if generator is None else generator.initial_seed())
        return randperm(n, *args, generator=generator, **kwargs)

    monkeypatch.setattr(torch, "randperm", spy)
    summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "seeds", *PPO_RUN, "--seed", "5",
                          "--total-decisions", "1200"])
    iterations = summary["progress"]["iteration"]
    assert iterations >= 2
    assert seeds == [5 * 1_000_003 + i for i in range(1, iterations + 1) for _epoch in range(2)]


def test_the_time_limit_is_in_minutes_of_this_session(tmp_path, monkeypatch):
    """A clock that moves 25 seconds an iteration: --time-limit 1 (60 s) stops the run after the third
    iteration (25, 50, 75 s), far short of --total-decisions."""
    train = load_train_module()
    clock_of_25_seconds_an_iteration(train, monkeypatch)
    summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "minute", *PPO_RUN,
                          "--total-decisions", "20000", "--time-limit", "1"])
    assert summary["progress"]["iteration"] == 3 and summary["progress"]["decisions"] < 20000


def test_an_error_inside_the_training_loop_gives_back_the_ctrl_c_handler(tmp_path, monkeypatch):
    """The loop installs its own Ctrl-C handler (stop at the next safe point); an error in an iteration
    must leave Python's handler as it was (the autouse ``sigint_handler_restored`` fails the test if not)."""
    import signal

    train = load_train_module()
    before = signal.getsignal(signal.SIGINT)

    def broken(*args):
        assert signal.getsignal(signal.SIGINT) is not before  # inside the loop: training's own handler
        raise RuntimeError("an error in the update")

    monkeypatch.setattr(train, "seat_gae", broken)
    with pytest.raises(RuntimeError, match="an error in the update"):
        train.main(["--runs-dir", str(tmp_path), "--run-name", "broken", *PPO_RUN, "--total-decisions", "2000"])
    assert signal.getsignal(signal.SIGINT) is before


# ---------------------------------------------------------------------- what a run logs, keeps and leaves behind
def test_each_row_of_progress_csv_holds_its_own_rollout_s_counts_and_figures(tmp_path, monkeypatch):
    """A row's counts add up its rollouts' (trained: the policy's rows only, decisions: every seat's), its
    figures are its own rollout's (the self-play spoil rate over self-play hands, each kind's equity over that
    kind's hands), and only the kinds of the given --league appear."""
    from spoilfive_integrations.selfplay import SelfPlayRollout

    train = load_train_module()
    batches, collect = [], SelfPlayRollout.collect

    def spy_collect(self, *args, **kwargs):
        batches.append(collect(self, *args, **kwargs))
        return batches[-1]

    monkeypatch.setattr(SelfPlayRollout, "collect", spy_collect)
    train.main(["--runs-dir", str(tmp_path), "--run-name", "rows", *PPO_RUN, "--total-decisions", "1500",
                "--league", "self=1,spoiler=1,greedy=1"])
    rows, kinds = progress_rows(tmp_path / "rows"), train.TABLE_KINDS
    assert len(rows) == len(batches) >= 2
    decisions = trained = 0
    for row, batch in zip(rows, batches, strict=True):
        decisions, trained, stats = decisions + batch.decisions, trained + len(batch), batch.stats
        assert (int(row["decisions"]), int(row["trained"]), int(row["hands"])) == (decisions, trained, stats["hands"])
        assert batch.decisions > len(batch)  # forced moves and the baselines' seats: the two counts differ
        assert float(row["self_spoil_rate"]) == pytest.approx(stats["self_spoils"] / stats["self_hands"])
        for kind in ("spoiler", "greedy"):
            kid = kinds.index(kind)
            assert float(row[f"equity_vs_{kind}"]) == pytest.approx(stats[f"eq_sum_{kid}"] / stats[f"eq_n_{kid}"])
        assert row["equity_vs_snapshot"] == row["equity_vs_random"] == ""  # no such tables in this league
        # both rates divide by the same iteration's seconds, so they stand as the counts do
        ratio = int(row["decisions_per_s"]) / int(row["trained_per_s"])
        assert ratio == pytest.approx(batch.decisions / len(batch), rel=0.01)


def test_tensorboard_the_csv_and_summary_json_agree_with_the_evaluations_and_the_rows(tmp_path, monkeypatch):
    """Every TensorBoard scalar of an iteration is that iteration's CSV figure, at the step of its decisions;
    the evaluations every --eval-every iterations land in their own rows (the final check in the last one) with
    their own intervals, and TensorBoard's share is above the fair share; summary.json is the returned summary."""
    from torch.utils.tensorboard import SummaryWriter

    train = load_train_module()
    scalars, add_scalar = {}, SummaryWriter.add_scalar
    evaluations, evaluate_against_spoilers = [], train.evaluate_against_spoilers

    def spy_scalar(self, tag, value, step=None, *args, **kwargs):
        scalars[tag, step] = value
        return add_scalar(self, tag, value, step, *args, **kwargs)

    def spy_evaluate(*args):
        evaluations.append(evaluate_against_spoilers(*args))
        return evaluations[-1]

    monkeypatch.setattr(SummaryWriter, "add_scalar", spy_scalar)
    monkeypatch.setattr(train, "evaluate_against_spoilers", spy_evaluate)
    run = tmp_path / "logged"
    summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "logged", *PPO_RUN, "--total-decisions", "2500",
                          "--eval-every", "2", "--eval-deals", "2", "--final-eval-deals", "2"])
    assert json.loads((run / "summary.json").read_text()) == json.loads(train.json_text(summary))
    assert summary["decisions_per_s"] == round(summary["progress"]["decisions"] / summary["progress"]["seconds"])
    assert "optimizer" not in load_checkpoint(run / "agent.pt")[1]  # the agent alone; checkpoint.pt resumes
    rows = progress_rows(run)
    assert len(rows) >= 5  # evaluations after iterations 2 and 4 at least, and the final check after the last
    evaluated = [int(row["iteration"]) for row in rows if row["eval_3p_share"]]
    assert evaluated == [*range(2, len(rows), 2), len(rows)]
    assert len(evaluations) == len(evaluated)
    for iteration, results in zip(evaluated, evaluations, strict=True):
        row, figures = rows[iteration - 1], results[3]
        step = int(row["decisions"])
        assert (float(row["eval_3p_share"]), float(row["eval_3p_share_ci"]), float(row["eval_3p_equity"]),
                float(row["eval_3p_equity_ci"])) == (figures["pool_share"], figures["pool_share_ci95"],
                                                     figures["equity"], figures["equity_ci95"])
        assert figures["pool_share_ci95"] != figures["equity_ci95"]
        share = scalars["eval/share_above_fair_3p", step]
        assert share == pytest.approx(figures["pool_share"] - 1 / 3) and figures["fair_share"] == pytest.approx(1 / 3)
        assert scalars["eval/equity_3p", step] == figures["equity"]
    for row in rows:
        step = int(row["decisions"])
        assert scalars["charts/decisions_per_s", step] == int(row["decisions_per_s"])
        assert scalars["charts/trained_decisions_per_s", step] == int(row["trained_per_s"])
        for name in ("value_loss", "policy_loss", "entropy", "approx_kl", "clipfrac"):
            assert scalars[f"losses/{name}", step] == pytest.approx(float(row[name])), name


def test_a_resumed_run_counts_the_minutes_of_its_session_and_the_seconds_and_decisions_of_the_whole_run(
        tmp_path, monkeypatch, capsys):
    """A clock that moves 25 seconds an iteration: each session under --time-limit 1 plays three iterations; the
    run's clock goes on from the first session's 75 seconds; the learning rate anneals from what the first
    session left over the second's minute; the end words count this session's decisions; the progress bar
    starts at the decisions done and ends where the time limit will fall; a run at its --total-decisions
    exactly is finished."""
    import tqdm

    train = load_train_module()
    clock_of_25_seconds_an_iteration(train, monkeypatch)
    bars = []

    class RecordedBar(tqdm.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, file=io.StringIO(), **kwargs)
            self.totals, self.started = [], self.n
            bars.append(self)

        def update(self, n=1):
            self.totals.append(self.total)
            return super().update(n)

    monkeypatch.setattr(tqdm, "tqdm", RecordedBar)
    total = 30_000
    run = ["--runs-dir", str(tmp_path), "--run-name", "clock"]
    argv = [*run, *PPO_RUN, "--anneal-lr", "--progress-bar", "--total-decisions", str(total), "--time-limit", "1"]
    first = train.main(argv)["progress"]
    assert (first["iteration"], first["seconds"]) == (3, 75.0)
    # the first bar: after 25 s of the minute, the decisions so far at this rate over all 60 s
    assert bars[0].started == 0 and bars[0].totals[0] == pytest.approx(int(progress_rows(tmp_path / "clock")[0]
                                                                          ["decisions"]) * 60 / 25, abs=1)
    capsys.readouterr()
    second = train.main([*run, "--resume", "--time-limit", "1"])["progress"]
    assert (second["iteration"], second["seconds"]) == (6, 150.0)
    assert bars[1].started == first["decisions"]
    words = capsys.readouterr().out
    assert f"Finished at iteration 6: {second['decisions'] - first['decisions']:,} decisions in 1.2 min this " \
           f"session" in words
    rows = progress_rows(tmp_path / "clock")
    left = 1 - first["decisions"] / total  # what the first session left of the run
    for minutes, (before, row) in enumerate(zip(rows[2:5], rows[3:6])):
        expected = min(1 - int(before["decisions"]) / total, left * (1 - 25 * minutes / 60))
        assert float(row["learning_rate"]) == pytest.approx(0.01 * max(expected, 0.05)), row["iteration"]
    with pytest.raises(SystemExit):
        train.main([*run, "--resume", "--total-decisions", str(second["decisions"])])
    assert "already has" in capsys.readouterr().err


def test_a_header_only_progress_table_draws_no_learning_curve(tmp_path):
    train = load_train_module()
    table, curve = tmp_path / "progress.csv", tmp_path / "learning_curve.png"
    table.write_text("iteration,decisions,eval_3p_share\n")
    assert train.plot_learning_curve(table, curve) is False and not curve.exists()


def test_the_snapshot_each_row_names_is_the_one_drawn_played_and_weighed_by_pfsp(tmp_path, monkeypatch):
    """With a snapshot every iteration and PFSP, each iteration's snapshot tables play the file its row names
    (older ones too, not always the newest), and each snapshot's figure is the running mean of its rows' equity
    (the first row's figure itself, then half way towards each later one)."""
    from spoilfive_integrations.selfplay import SelfPlayRollout

    train = load_train_module()
    given, collect = [], SelfPlayRollout.collect

    def spy_collect(self, iteration, snapshot=None, **kwargs):
        given.append(snapshot)
        return collect(self, iteration, snapshot=snapshot, **kwargs)

    monkeypatch.setattr(SelfPlayRollout, "collect", spy_collect)
    run = tmp_path / "pfsp"
    train.main(["--runs-dir", str(tmp_path), "--run-name", "pfsp", *PPO_RUN, "--total-decisions", "4000",
                "--snapshot-every", "1", "--snapshot-sampling", "pfsp", "--league", "self=1,snapshot=3"])
    rows = progress_rows(run)
    assert len(rows) == len(given) >= 4
    assert any(int(row["snapshot"]) < int(row["iteration"]) - 1 for row in rows)  # not only the newest is drawn
    figures = {}
    for row, snapshot in zip(rows, given, strict=True):
        name = f"iter_{int(row['snapshot']):06d}.pt"
        played = torch.load(run / "snapshots" / name, weights_only=True)["state_dict"]
        assert all(torch.equal(snapshot[key], played[key]) for key in played), row["iteration"]
        equity = float(row["equity_vs_snapshot"])
        earlier = figures.get(name, equity)
        figures[name] = earlier + (equity - earlier) / 2
    _, data = load_checkpoint(run / "checkpoint.pt")
    assert data["progress"]["snapshot_equity"] == pytest.approx(figures)


def test_init_from_takes_the_checkpoint_s_network_shape_when_none_is_given(tmp_path):
    """Only a --hidden, --critic or --encoding given by hand must fit the checkpoint; the defaults (256,256 and
    local) are not given, so a run starts from a narrow omniscient network without naming its shape."""
    train = load_train_module()
    runs = ["--runs-dir", str(tmp_path), *SHORT_RUN, "--min-players", "3", "--max-players", "4", "--eval-players", "3"]
    train.main([*runs, "--run-name", "narrow", "--hidden", "24", "--critic", "omniscient"])
    train.main([*runs, "--run-name", "tuned", "--init-from", str(tmp_path / "narrow" / "agent.pt")])
    net, data = load_checkpoint(tmp_path / "tuned" / "agent.pt")
    assert (data["args"]["hidden"], data["args"]["critic"]) == ("24", "omniscient")
    assert tuple(net.hidden) == (24,) and net.critic_kind == "omniscient"


@pytest.mark.parametrize("minibatch_size", ["1", "2"])
def test_a_one_row_minibatch_leaves_the_network_finite(tmp_path, minibatch_size):
    """--minibatch-size 1 or 2 gives one-row minibatches (an odd rollout at 2), whose advantage has no standard
    deviation: normalised by it (NaN), every weight became NaN and the run still said it finished (found by a
    review). One row is left unnormalised; the run's agent loads and its losses are numbers."""
    train = load_train_module()
    threads = torch.get_num_threads()
    try:
        summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "tiny", "--num-games", "16", "--hidden", "32",
                              "--minibatch-size", minibatch_size, "--total-decisions", "300", "--eval-every", "0",
                              "--final-eval-deals", "0", "--torch-threads", "1", "--no-progress-bar"])
    finally:
        torch.set_num_threads(threads)
    assert not summary["interrupted"]
    load_agent(str(tmp_path / "tiny" / "agent.pt"))  # refuses weights that hold NaN
    with open(tmp_path / "tiny" / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(np.isfinite(float(row[name])) for row in rows for name in ("value_loss", "policy_loss"))


def test_equity_against_a_table_kind_counts_only_tables_that_seated_one_of_its_players(tmp_path):
    """At an opponent table every seat may be drawn the current policy (--current-seats): such a table holds no
    opponent, and its zero-sum hands pulled equity_vs_<kind>, the figure pfsp draws by, towards 0 (37% of the
    hands behind equity_vs_spoiler at 3 players with the default 0.5; found by a review). With every seat drawn
    the policy, no hand is against spoiler, and there is no figure."""
    train = load_train_module()
    threads = torch.get_num_threads()
    rows = {}
    try:
        for current in ("1", "0.5"):
            train.main(["--runs-dir", str(tmp_path), "--run-name", f"c{current}", "--num-games", "16", "--hidden", "32",
                        "--league", "spoiler=1", "--current-seats", current, "--total-decisions", "600",
                        "--eval-every", "0", "--final-eval-deals", "0", "--torch-threads", "1", "--no-progress-bar"])
            with open(tmp_path / f"c{current}" / "progress.csv", newline="") as f:
                rows[current] = list(csv.DictReader(f))
    finally:
        torch.set_num_threads(threads)
    assert rows["1"] and all(not row.get("equity_vs_spoiler") for row in rows["1"])
    assert all(row["equity_vs_spoiler"] for row in rows["0.5"])


def test_files_kept_beside_the_league_s_snapshots_are_left_alone_and_the_league_is_in_iteration_order(tmp_path,
                                                                                                    monkeypatch):
    """A user's copy in snapshots/ (``iter_best.pt``, even one that is no checkpoint) is not a league snapshot: a
    run resumes beside it (it stopped the resume with a ValueError on the name) and never draws it; the league is
    ordered by iteration, past six digits too."""
    train = load_train_module()
    run = ["--runs-dir", str(tmp_path), "--run-name", "kept", *PPO_RUN]
    train.main([*run, "--total-decisions", "1200"])
    folder = tmp_path / "kept" / "snapshots"
    (folder / "iter_best.pt").write_bytes(b"not a checkpoint")
    (folder / "iter_000000.pt.bak").write_bytes((folder / "iter_000000.pt").read_bytes())
    drawn, draw = [], train.draw_snapshot
    monkeypatch.setattr(train, "draw_snapshot", lambda snapshots, *rest: drawn.append(list(snapshots)) or draw(
        snapshots, *rest))
    done = load_checkpoint(tmp_path / "kept" / "agent.pt")[1]["progress"]["decisions"]
    train.main(["--runs-dir", str(tmp_path), "--run-name", "kept", "--resume", "--total-decisions", str(done + 1200),
                "--no-progress-bar", "--torch-threads", "1"])
    assert drawn and all([path.name for path in league] == ["iter_000000.pt"] for league in drawn)
    assert (folder / "iter_best.pt").read_bytes() == b"not a checkpoint"
    for name in ("iter_1000000.pt", "iter_999999.pt", "iter_000007.pt"):
        (folder / name).write_bytes(b"")
    assert [train.snapshot_iteration(path) for path in train.league_snapshots(folder)] == [0, 7, 999999, 1000000]
    assert [path.name for path in train.league_snapshots(folder, up_to=7)] == ["iter_000000.pt", "iter_000007.pt"]
