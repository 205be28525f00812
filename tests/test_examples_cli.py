"""The example scripts' command lines: a bad flag or value is one line on stderr and exit status 2.

Each case calls the script's ``main(argv)`` in this process (a subprocess per case would pay the
torch and Ray imports every time), from an empty folder, and checks that the refusal names the
flag and what is allowed, and comes before any work: no ``runs/`` folder (CleanRL's TensorBoard events) is made.
Sizes that depend on this machine's memory are given far beyond any machine's.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import CTRL_C_ON_TORCH, INTERRUPTED, ROOT, ctrl_c, exit_status

NEEDS = {"cleanrl_ppo": "torch.utils.tensorboard", "sb3_maskable_ppo": "sb3_contrib", "tianshou_ppo": "tianshou",
         "torchrl_ppo": "torchrl", "rllib_ppo": "ray.rllib"}
HUGE = "100000000000"

LOADED = "cannot be loaded: unknown agent 'nope': choose one of random"
TOO_WIDE = "is not allowed here: a layer of 1,000,000,000 is too wide: give widths from 1 to 16,384"
ABOVE_ZERO = "is not allowed: give a finite number above 0"
# The refusal's line holds the flag, and what is allowed: each case's text, or every text of a tuple (the sizes
# this machine's memory allows are its own).
CASES = [
    ("cleanrl_ppo", ["--opponents", "nope"], f"--opponents: opponents='nope' {LOADED}"),
    ("cleanrl_ppo", ["--exp-name", "a/b/c"], "--exp-name 'a/b/c' is not allowed: a name, not a path or nothing"),
    ("cleanrl_ppo", ["--exp-name", " run"], "--exp-name ' run' is not allowed: a name without spaces at either end, "
                                             "at most 200 characters"),
    ("cleanrl_ppo", ["--exp-name", "x" * 201], ("--exp-name 'xxx", "' is not allowed: a name without spaces at either "
                                                "end, at most 200 characters")),
    ("cleanrl_ppo", ["--exp-name", ""], "--exp-name '' is not allowed: a name, not a path or nothing"),
    ("cleanrl_ppo", ["--learning-rate", "-1"], f"--learning-rate: '-1' {ABOVE_ZERO}"),
    ("cleanrl_ppo", ["--gamma", "1.5"], "--gamma: '1.5' is not allowed: give a number from 0 to 1"),
    ("cleanrl_ppo", ["--gae-lambda", "nan"], "--gae-lambda: 'nan' is not allowed: give a finite number"),
    ("cleanrl_ppo", ["--clip-coef", "0"], f"--clip-coef: '0' {ABOVE_ZERO}"),
    ("cleanrl_ppo", ["--ent-coef", "-0.1"], "--ent-coef: '-0.1' is not allowed: give a number of at least 0"),
    ("cleanrl_ppo", ["--learning-rate", "1e308"], "'1e308' is not allowed: give a learning rate above 0, at most 1"),
    ("cleanrl_ppo", ["--clip-coef", "1e308"], "--clip-coef 1e+308 is not allowed: give at most 1,000,000"),
    ("cleanrl_ppo", ["--ent-coef", "1000001"], "--ent-coef 1000001.0 is not allowed: give at most 1,000,000"),
    ("cleanrl_ppo", ["--vf-coef", "1e308"], "--vf-coef 1e+308 is not allowed: give at most 1,000,000"),
    ("cleanrl_ppo", ["--vf-coef", "abc"], "--vf-coef: 'abc' is not a number"),
    ("cleanrl_ppo", ["--max-grad-norm", "inf"], "--max-grad-norm: 'inf' is not allowed: give a finite number"),
    ("cleanrl_ppo", ["--total-timesteps", "abc"], "--total-timesteps: 'abc' is not a whole number"),
    ("cleanrl_ppo", ["--num-minibatches", "100", "--num-envs", "2", "--num-steps", "2"],
     "--num-minibatches 100 is not allowed with --num-envs 2 x --num-steps 2 = 4 decisions a rollout: give at most 2"),
    ("cleanrl_ppo", ["--num-envs", HUGE], (f"--num-envs={HUGE} is not allowed here", "allowed: at most")),
    ("cleanrl_ppo", ["--num-envs", "1000000", "--num-steps", "1000000"],
     ("--num-envs 1000000 x --num-steps 1000000 is not allowed here", "allowed: at most")),
    ("sb3_maskable_ppo", ["--opponents", "nope"], f"--opponents: opponents='nope' {LOADED}"),
    ("sb3_maskable_ppo", ["--route", "single", "--opponents", "nope"], f"--opponents: opponents='nope' {LOADED}"),
    ("sb3_maskable_ppo", ["--self-play", "4", "--opponents", "nope"], f"--opponents: opponents='nope' {LOADED}"),
    ("sb3_maskable_ppo", ["--route", "single", "--num-envs", "4"],
     "--num-envs takes the batched route: the single route is one gymnasium.make env"),
    ("sb3_maskable_ppo", ["--num-envs", HUGE], (f"--num-envs={HUGE} is not allowed here", "allowed: at most")),
    ("sb3_maskable_ppo", ["--num-envs", "50000000"], ("--num-envs=50000000 is not allowed here", "allowed: at most")),
    ("sb3_maskable_ppo", ["--timesteps", "1.5"], "--timesteps: '1.5' is not a whole number"),
    ("tianshou_ppo", ["--hidden", "1000000000"], f"--hidden 1000000000 {TOO_WIDE}"),
    ("tianshou_ppo", ["--episodes", HUGE], (f"--episodes {HUGE} is not allowed here", "allowed: at most")),
    ("tianshou_ppo", ["--minibatch-size", "1"], "--minibatch-size 1 is not allowed: give at least 2"),
    ("tianshou_ppo", ["--lr", "0"], f"--lr: '0' {ABOVE_ZERO}"),
    ("tianshou_ppo", ["--lr", "1e308"], "--lr: '1e308' is not allowed: give a learning rate above 0, at most 1"),
    ("tianshou_ppo", ["--num-envs", "8"],
     "--num-envs needs --route vector: the pettingzoo route is self-play, one game"),
    ("tianshou_ppo", ["--step-per-collect", "512", "--opponents", "greedy"],
     "--opponents and --step-per-collect need --route vector"),
    ("tianshou_ppo", ["--route", "vector", "--episodes", "8"],
     "--episodes needs --route pettingzoo: the vector route collects --step-per-collect decisions an iteration"),
    ("tianshou_ppo", ["--route", "vector", "--opponents", "nope"], f"--opponents: opponents='nope' {LOADED}"),
    ("tianshou_ppo", ["--route", "vector", "--self-play", "3", "--opponents", "greedy"],
     "--opponents is not allowed with --self-play 3: the learner's snapshots are the opponents from the first "
     "iteration on"),
    ("tianshou_ppo", ["--route", "vector", "--num-envs", "100"],
     "--step-per-collect 8192 (the default) is not allowed with --num-envs 100: each step collects one decision from "
     "every game, so give a multiple of 100"),
    ("tianshou_ppo", ["--route", "vector", "--step-per-collect", "1000"],
     "--step-per-collect 1000 is not allowed with --num-envs 256 (the default)"),
    ("tianshou_ppo", ["--route", "vector", "--num-envs", HUGE], (f"--num-envs={HUGE} is not allowed here",
                                                                 "allowed: at most")),
    ("tianshou_ppo", ["--route", "vector", "--step-per-collect", "256" + "0" * 10],
     ("--step-per-collect 2560000000000 is not allowed here", "allowed: at most")),
    ("torchrl_ppo", ["--hidden", "1000000000"], f"--hidden 1000000000 {TOO_WIDE}"),
    ("torchrl_ppo", ["--frames-per-batch", HUGE],
     (f"--frames-per-batch {HUGE} is not allowed here", "allowed: at most")),
    ("torchrl_ppo", ["--lr", "nan"], "--lr: 'nan' is not allowed: give a finite number"),
    ("torchrl_ppo", ["--lr", "1e308"], "--lr: '1e308' is not allowed: give a learning rate above 0, at most 1"),
    ("torchrl_ppo", ["--num-envs", "8"],
     "--num-envs needs --route vector: the pettingzoo route is self-play, one game"),
    ("torchrl_ppo", ["--opponents", "spoiler", "--num-envs", "8"], "--num-envs and --opponents need --route vector"),
    ("torchrl_ppo", ["--opponents", ""], "--opponents needs --route vector"),
    ("torchrl_ppo", ["--route", "vector", "--frames-per-batch", "100"],
     "--frames-per-batch 100 is not allowed with --num-envs 256 (the default): each step collects one frame"),
    ("torchrl_ppo", ["--route", "vector", "--opponents", "nope"], f"--opponents: opponents='nope' {LOADED}"),
    ("torchrl_ppo", ["--route", "vector", "--num-envs", "100"],
     "--frames-per-batch 8192 (the default) is not allowed with --num-envs 100: each step collects one frame from "
     "every game, so give a multiple of 100"),
    ("torchrl_ppo", ["--route", "vector", "--num-envs", "64", "--frames-per-batch", "1000"],
     "--frames-per-batch 1000 is not allowed with --num-envs 64"),
    ("torchrl_ppo", ["--route", "vector", "--num-envs", HUGE], (f"--num-envs={HUGE} is not allowed here",
                                                                "allowed: at most")),
    ("torchrl_ppo", ["--route", "vector", "--frames-per-batch", "256" + "0" * 10],
     ("--frames-per-batch 2560000000000 is not allowed here", "allowed: at most")),
    ("rllib_ppo", ["--address", "127.0.0.1:1"], ("--address '127.0.0.1:1': no Ray cluster answers there",
                                                 "give the head node's HOST:PORT")),
    ("rllib_ppo", ["--address", "no-port-here"], ("--address 'no-port-here': no Ray cluster answers there",
                                                  "(it is not HOST:PORT); give the head node's HOST:PORT")),
    ("rllib_ppo", ["--num-games", HUGE], (f"--num-games={HUGE} is not allowed here", "allowed: at most")),
    ("rllib_ppo", ["--minibatch-size", "99999", "--batch-size", "10"],
     "--minibatch-size 99999 is more than --batch-size 10: give a minibatch of at most the batch"),
    ("rllib_ppo", ["--batch-size", "100", "--minibatch-size", "10"],
     ("--batch-size 100 is too small", "give at least")),
    ("rllib_ppo", ["--batch-size", HUGE], (f"--batch-size {HUGE} is not allowed here", "allowed: at most")),
    ("rllib_ppo", ["--num-cpus", HUGE], f"--num-cpus {HUGE} is not allowed: give 1 to 1,024"),
    ("rllib_ppo", ["--num-env-runners", "3"], ("--num-env-runners 3 is more than --num-cpus", "runners or more CPUs")),
    ("rllib_ppo", ["--hidden", "32", "1000000000"], f"--hidden 32 1000000000 {TOO_WIDE}"),
    ("rllib_ppo", ["--lr", "-1"], f"--lr: '-1' {ABOVE_ZERO}"),
    ("rllib_ppo", ["--lr", "1e308"], "--lr: '1e308' is not allowed: give a learning rate above 0, at most 1"),
    ("rllib_ppo", ["--opponents", "spoiler"], "--opponents needs --route opponents: the batched route is self-play"),
    ("rllib_ppo", ["--route", "pettingzoo", "--self-play", "2", "--opponents", "random"],
     "--opponents and --self-play need --route opponents: the pettingzoo route is self-play, one shared policy"),
    ("rllib_ppo", ["--route", "opponents", "--opponents", "nope"], f"--opponents: opponents='nope' {LOADED}"),
    ("rllib_ppo", ["--route", "opponents", "--self-play", "3", "--opponents", "random"],
     "--opponents is not allowed with --self-play 3: the learner's snapshots are the opponents"),
    ("rllib_ppo", ["--route", "opponents", "--num-games", HUGE], (f"--num-games={HUGE} is not allowed here",
                                                                  "allowed: at most")),
    ("rllib_ppo", ["--route", "opponents", "--batch-size", "700", "--minibatch-size", "100"],
     "--batch-size 700 is too small for 4 players, 256 game(s) an environment (opponents route) and 1 sampler(s): "
     "every learning seat of every game should act in each sample (RLlib's learner can fail on less); give at least "
     "768 (3 x games x samplers), or fewer --num-games"),
]

_loaded: dict[str, object] = {}


def example(name: str):
    """``examples/<name>.py`` imported once, registered in ``sys.modules`` (CleanRL's ``Args``
    dataclass looks its module up there)."""
    if name not in _loaded:
        pytest.importorskip(NEEDS[name])
        module_name = f"example_cli_{name}"
        spec = importlib.util.spec_from_file_location(module_name, ROOT / "examples" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        _loaded[name] = module
    return _loaded[name]


@pytest.mark.parametrize("name, argv, says", CASES, ids=[f"{n}:{' '.join(a)[:40]}" for n, a, _ in CASES])
def test_a_bad_command_line_is_one_line_and_exit_2_before_any_work(name, argv, says, tmp_path, monkeypatch, capsys):
    module = example(name)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        module.main(argv)
    error = capsys.readouterr().err
    assert stopped.value.code == 2, error
    lines = error.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0], error
    for words in (says,) if isinstance(says, str) else says:
        assert words in lines[0], (words, error)
    assert "Traceback" not in error
    assert not any(tmp_path.iterdir())  # no runs/ folder, no TensorBoard file


def test_cleanrl_takes_the_largest_coefficients_with_the_smallest_minibatches(tmp_path, monkeypatch, capsys):
    """--ent-coef 100 over minibatches of 16 ended the first update in a traceback (the entropy's gradient
    through an illegal action's logit, at float32's lowest value, overflowed to NaN); --clip-coef, --ent-coef
    and --learning-rate 1e308 too, where they are now refused (and --lr 1e308 of tianshou and torchrl)."""
    module = example("cleanrl_ppo")
    monkeypatch.chdir(tmp_path)
    argv = ["--total-timesteps", "64", "--num-envs", "4", "--num-steps", "8", "--num-minibatches", "2",
            "--eval-deals", "0", "--no-track-tensorboard", "--learning-rate", "1"]
    for coefficient in ("--ent-coef", "--clip-coef", "--vf-coef"):
        assert module.main([*argv, coefficient, str(module.MAX_COEF)]) == 0
        assert "episodic_return" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- Ctrl-C
NOTHING_SAVED = "Ctrl-C: run stopped, nothing saved (this example saves no model)"




def stopped_line(capsys) -> str:
    """The one line the Ctrl-C left on standard error."""
    error = capsys.readouterr().err
    assert "Traceback" not in error, error
    lines = error.strip().splitlines()
    assert len(lines) == 1, error
    return lines[0]


# Each example stopped by Ctrl-C in its training loop: the library call the loop makes raises it.
CTRL_C_CASES = [
    ("sb3_maskable_ppo", lambda m: (m.MaskablePPO, "learn"), ["--num-envs", "2", "--eval-deals", "0"]),
    ("tianshou_ppo", lambda m: (m.Collector, "collect"), ["--iterations", "1", "--episodes", "1", "--eval-deals", "0"]),
    ("torchrl_ppo", lambda m: (m.Collector, "__iter__"), ["--frames-per-batch", "8", "--eval-deals", "0"]),
]


@pytest.mark.parametrize("name, where, argv", CTRL_C_CASES, ids=[case[0] for case in CTRL_C_CASES])
def test_ctrl_c_in_training_is_one_line_and_exit_130(name, where, argv, tmp_path, monkeypatch, capsys):
    module = example(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(*where(module), ctrl_c)
    assert exit_status(module.main, argv) == INTERRUPTED
    assert stopped_line(capsys) == NOTHING_SAVED
    assert not any(tmp_path.iterdir())


def test_ctrl_c_in_the_evaluation_is_one_line_and_exit_130(tmp_path, monkeypatch, capsys):
    module = example("sb3_maskable_ppo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(module.MaskablePPO, "learn", lambda self, *args, **kwargs: self)
    monkeypatch.setattr(module, "check_against_baselines", ctrl_c)
    assert exit_status(module.main, ["--num-envs", "2", "--eval-deals", "5"]) == INTERRUPTED
    assert stopped_line(capsys) == NOTHING_SAVED


CLEANRL_TINY = ["--total-timesteps", "8", "--num-envs", "2", "--num-steps", "4", "--num-minibatches", "1",
                "--eval-deals", "0"]


def test_cleanrl_ctrl_c_names_the_tensorboard_folder_it_keeps(tmp_path, monkeypatch, capsys):
    module = example("cleanrl_ppo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(module.Agent, "get_action_and_value", ctrl_c)  # the first step of the first rollout
    assert exit_status(module.main, CLEANRL_TINY) == INTERRUPTED
    line = stopped_line(capsys)
    (run,) = (tmp_path / "runs").iterdir()
    assert line == (f"Ctrl-C: run stopped; its TensorBoard events are in runs/{run.name} (this example saves "
                    "no model)")
    assert any(path.name.startswith("events.out.tfevents") for path in run.iterdir())


def test_cleanrl_ctrl_c_without_tensorboard_says_nothing_was_saved(tmp_path, monkeypatch, capsys):
    module = example("cleanrl_ppo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(module.Agent, "get_action_and_value", ctrl_c)
    assert exit_status(module.main, [*CLEANRL_TINY, "--no-track-tensorboard"]) == INTERRUPTED
    assert "nothing saved" in stopped_line(capsys)
    assert not any(tmp_path.iterdir())


class FakeRay:
    """What the RLlib example asks of Ray, recorded, with no Ray started (seconds saved)."""

    def __init__(self, monkeypatch, module, *, ctrl_c_in_init=False):
        self.calls = []
        self.ctrl_c_in_init = ctrl_c_in_init
        for name in ("init", "cluster_resources", "shutdown"):
            monkeypatch.setattr(module.ray, name, getattr(self, name))
        monkeypatch.setattr(module, "build_config", lambda args: self)

    def init(self, **kwargs):
        self.calls.append("init")
        if self.ctrl_c_in_init:  # a real Ctrl-C while Ray starts: held until it has started
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            self.calls.append("started")

    def cluster_resources(self):
        return {"CPU": 2}

    def shutdown(self):
        self.calls.append("shutdown")

    def build_algo(self):
        return self

    def train(self):
        self.calls.append("train")
        raise KeyboardInterrupt


RLLIB_TINY = ["--num-games", "1", "--batch-size", "12", "--minibatch-size", "4", "--eval-deals", "0"]


def test_rllib_ctrl_c_in_training_shuts_ray_down(tmp_path, monkeypatch, capsys):
    module = example("rllib_ppo")
    monkeypatch.chdir(tmp_path)
    ray = FakeRay(monkeypatch, module)
    assert exit_status(module.main, RLLIB_TINY) == INTERRUPTED
    assert ray.calls == ["init", "train", "shutdown"]
    assert stopped_line(capsys) == "Ctrl-C: run stopped, Ray shut down, nothing saved (this example saves no model)"


def test_rllib_ctrl_c_while_ray_starts_waits_for_it_then_shuts_it_down(tmp_path, monkeypatch, capsys):
    module = example("rllib_ppo")
    monkeypatch.chdir(tmp_path)
    ray = FakeRay(monkeypatch, module, ctrl_c_in_init=True)
    assert exit_status(module.main, RLLIB_TINY) == INTERRUPTED
    assert ray.calls == ["init", "started", "shutdown"]  # Ray's processes, which ignore Ctrl-C, are not left
    assert stopped_line(capsys).startswith("Ctrl-C: run stopped, Ray shut down")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_held_delivers_a_ctrl_c_at_the_block_end_and_a_second_one_at_once():
    from spoilfive_env.cli import ctrl_c_held

    reached = []
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            reached.append("end of the block")
    assert reached == ["end of the block"]
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            reached.append("never")
    assert reached == ["end of the block"]
    with ctrl_c_held():  # no Ctrl-C: nothing raised
        reached.append("quiet")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# Ctrl-C arrives while torch is still loading: an import hook raises it exactly there.
_CTRL_C_WHILE_TORCH_LOADS = CTRL_C_ON_TORCH + """sys.argv = [{path!r}]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_ctrl_c_while_the_libraries_load_is_one_line_and_exit_130(name, tmp_path):
    pytest.importorskip(NEEDS[name])
    script = _CTRL_C_WHILE_TORCH_LOADS.format(path=str(ROOT / "examples" / f"{name}.py"))
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == INTERRUPTED, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines() == [f"{name}.py: stopped by Ctrl-C while starting up; nothing was run"]
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------------------------------------- sizes
MEMORY = 2**30


@pytest.mark.parametrize("name, flag, bytes_each", [
    ("tianshou_ppo", "--episodes", lambda m: m.MAX_DECISIONS_PER_HAND * 10 * m.TRANSITION_BYTES),
    ("torchrl_ppo", "--frames-per-batch", lambda m: 10 * m.FRAME_SEAT_BYTES),
])
def test_the_memory_check_counts_every_seat_at_the_table(name, flag, bytes_each, monkeypatch, capsys):
    """At a table of 10 the storage holds 10 seats' worth: the most it allows fits, one more is refused."""
    module = example(name)
    monkeypatch.setattr(module, "physical_memory", lambda: MEMORY)
    allowed = MEMORY // bytes_each(module)
    args = module.parse_args(["--num-players", "10", flag, str(allowed)])
    assert getattr(args, flag[2:].replace("-", "_")) == allowed
    with pytest.raises(SystemExit):
        module.parse_args(["--num-players", "10", flag, str(allowed + 1)])
    assert f"allowed: at most {allowed:,}" in capsys.readouterr().err


def test_rllib_takes_as_many_env_runners_as_local_cpus():
    # each runner takes one CPU of the local Ray: as many as there are CPUs all start
    args = example("rllib_ppo").parse_args(["--num-cpus", "2", "--num-env-runners", "2"])
    assert (args.num_cpus, args.num_env_runners) == (2, 2)


def test_cleanrl_takes_minibatches_of_exactly_the_fewest_decisions_allowed(tmp_path, monkeypatch):
    module = example("cleanrl_ppo")
    monkeypatch.chdir(tmp_path)
    # 2 games x 2 steps = 4 decisions a rollout, in 2 minibatches of MIN_MINIBATCH = 2
    args = module.parse_args(["--num-envs", "2", "--num-steps", "2", "--num-minibatches", "2"])
    assert args.num_envs * args.num_steps // args.num_minibatches == module.MIN_MINIBATCH


def test_cleanrl_s_events_folder_that_cannot_be_made_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """A file named runs where the example writes its TensorBoard events: it ended in a NotADirectoryError
    traceback; it says so in one line, before any training."""
    module = example("cleanrl_ppo")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").write_text("not a folder")
    monkeypatch.setattr(module, "train_and_evaluate", lambda *args: pytest.fail("trained without its events"))
    assert module.main(["--total-timesteps", "64", "--num-envs", "2", "--num-steps", "32", "--eval-deals", "0"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "error: cannot write the TensorBoard events to runs/" in error
    assert "(or run with --no-track-tensorboard)" in error
