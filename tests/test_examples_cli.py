"""The example scripts' command lines: a bad flag or value is one line on stderr and exit status 2.

Each case calls the script's ``main(argv)`` in this process (a subprocess per case would pay the
torch and Ray imports every time), from an empty folder, and checks that the refusal names the
flag and comes before any work: no ``runs/`` folder (CleanRL's TensorBoard events) is made.
Sizes that depend on this machine's memory are given far beyond any machine's.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import ROOT

NEEDS = {"cleanrl_ppo": "torch.utils.tensorboard", "sb3_maskable_ppo": "sb3_contrib", "tianshou_ppo": "tianshou",
         "torchrl_ppo": "torchrl", "rllib_ppo": "ray.rllib"}
HUGE = "100000000000"

CASES = [
    ("cleanrl_ppo", ["--opponents", "nope"], "--opponents"),
    ("cleanrl_ppo", ["--exp-name", "a/b/c"], "--exp-name"),
    ("cleanrl_ppo", ["--exp-name", " run"], "--exp-name"),
    ("cleanrl_ppo", ["--exp-name", "x" * 201], "--exp-name"),
    ("cleanrl_ppo", ["--exp-name", ""], "--exp-name"),
    ("cleanrl_ppo", ["--learning-rate", "-1"], "--learning-rate"),
    ("cleanrl_ppo", ["--gamma", "1.5"], "--gamma"),
    ("cleanrl_ppo", ["--gae-lambda", "nan"], "--gae-lambda"),
    ("cleanrl_ppo", ["--clip-coef", "0"], "--clip-coef"),
    ("cleanrl_ppo", ["--ent-coef", "-0.1"], "--ent-coef"),
    ("cleanrl_ppo", ["--vf-coef", "abc"], "--vf-coef"),
    ("cleanrl_ppo", ["--max-grad-norm", "inf"], "--max-grad-norm"),
    ("cleanrl_ppo", ["--total-timesteps", "abc"], "--total-timesteps"),
    ("cleanrl_ppo", ["--num-minibatches", "100", "--num-envs", "2", "--num-steps", "2"], "--num-minibatches"),
    ("cleanrl_ppo", ["--num-envs", HUGE], "--num-envs"),
    ("cleanrl_ppo", ["--num-envs", "1000000", "--num-steps", "1000000"], "--num-envs"),
    ("sb3_maskable_ppo", ["--opponents", "nope"], "--opponents"),
    ("sb3_maskable_ppo", ["--route", "single", "--opponents", "nope"], "--opponents"),
    ("sb3_maskable_ppo", ["--self-play", "4", "--opponents", "nope"], "--opponents"),
    ("sb3_maskable_ppo", ["--num-envs", HUGE], "--num-envs"),
    ("sb3_maskable_ppo", ["--num-envs", "50000000"], "--num-envs"),
    ("sb3_maskable_ppo", ["--timesteps", "1.5"], "--timesteps"),
    ("tianshou_ppo", ["--hidden", "1000000000"], "--hidden"),
    ("tianshou_ppo", ["--episodes", HUGE], "--episodes"),
    ("tianshou_ppo", ["--minibatch-size", "1"], "--minibatch-size"),
    ("tianshou_ppo", ["--lr", "0"], "--lr"),
    ("torchrl_ppo", ["--hidden", "1000000000"], "--hidden"),
    ("torchrl_ppo", ["--frames-per-batch", HUGE], "--frames-per-batch"),
    ("torchrl_ppo", ["--lr", "nan"], "--lr"),
    ("rllib_ppo", ["--address", "127.0.0.1:1"], "--address"),
    ("rllib_ppo", ["--address", "no-port-here"], "--address"),
    ("rllib_ppo", ["--num-games", HUGE], "--num-games"),
    ("rllib_ppo", ["--minibatch-size", "99999", "--batch-size", "10"], "--minibatch-size"),
    ("rllib_ppo", ["--batch-size", "100", "--minibatch-size", "10"], "--batch-size"),
    ("rllib_ppo", ["--batch-size", HUGE], "--batch-size"),
    ("rllib_ppo", ["--num-cpus", HUGE], "--num-cpus"),
    ("rllib_ppo", ["--num-env-runners", "3"], "--num-env-runners"),
    ("rllib_ppo", ["--hidden", "32", "1000000000"], "--hidden"),
    ("rllib_ppo", ["--lr", "-1"], "--lr"),
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


@pytest.mark.parametrize("name, argv, flag", CASES, ids=[f"{n}:{' '.join(a)[:40]}" for n, a, _ in CASES])
def test_a_bad_command_line_is_one_line_and_exit_2_before_any_work(name, argv, flag, tmp_path, monkeypatch, capsys):
    module = example(name)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        module.main(argv)
    error = capsys.readouterr().err
    assert stopped.value.code == 2, error
    lines = error.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0] and flag in lines[0], error
    assert "Traceback" not in error
    assert not any(tmp_path.iterdir())  # no runs/ folder, no TensorBoard file
