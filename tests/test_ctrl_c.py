"""Ctrl-C in the agents' command lines: one line on standard error, exit status 130, no traceback,
and nothing finished thrown away (the first tournament of ``--paired-with``). Also the check of
memory, made once a command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CTRL_C_ON_TORCH, INTERRUPTED, ctrl_c_on_call, exit_status

import agents.evaluate as tournament
from agents.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[1]


def assert_one_line(stderr: str, *words: str) -> None:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    for word in words:
        assert word in lines[0], (word, lines[0])



def interrupt_tournament(monkeypatch, call: int) -> None:
    """Make the ``call``-th tournament :func:`agents.evaluate.play_tournament` plays end in Ctrl-C."""
    ctrl_c_on_call(monkeypatch, tournament, "play_tournament", call)


def without_time(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "seconds"}


@pytest.mark.parametrize("as_json", [True, False])
def test_ctrl_c_in_the_paired_tournament_reports_the_finished_first_one(monkeypatch, capsys, as_json):
    first = without_time(evaluate(["random", "spoiler"], 3, deals=6, seed=2))
    interrupt_tournament(monkeypatch, 2)
    argv = ["--players", "3", "--agents", "random,spoiler", "--deals", "6", "--seed", "2", "--quiet",
            "--paired-with", "greedy", *(["--json"] if as_json else [])]
    assert exit_status(tournament.main, argv) == INTERRUPTED
    captured = capsys.readouterr()
    assert_one_line(captured.err, "paired tournament with greedy was not finished", "first tournament")
    if as_json:
        report = json.loads(captured.out)
        assert "paired" not in report and report["interrupted"] == {"paired_with": "greedy"}
        assert without_time(report) == {**first, "interrupted": {"paired_with": "greedy"}}  # the same figures
    else:
        assert captured.out.startswith("Spoil Five tournament: 3 players, 6 deals")
        assert "paired with greedy: not finished (stopped by Ctrl-C)" in captured.out


def test_ctrl_c_in_the_first_tournament_of_a_pairing_reports_nothing(monkeypatch, capsys):
    interrupt_tournament(monkeypatch, 1)
    argv = ["--players", "3", "--agents", "random", "--deals", "4", "--quiet", "--paired-with", "greedy"]
    assert exit_status(tournament.main, argv) == INTERRUPTED
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.strip() == "Ctrl-C: tournament stopped, nothing reported"


def test_evaluate_hands_a_caller_the_first_tournament_of_an_interrupted_pairing(monkeypatch):
    from agents.evaluate import PairingInterrupted

    interrupt_tournament(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt) as stopped:  # a caller that does not look for it stops as on Ctrl-C
        evaluate(["random", "spoiler"], 3, deals=4, seed=1, paired_with="greedy")
    assert isinstance(stopped.value, PairingInterrupted)
    report = stopped.value.report
    assert report["interrupted"] == {"paired_with": "greedy"} and "paired" not in report
    assert report["agents"]["random"]["hands"] == 4 * 3


def test_the_memory_check_runs_once_a_command_and_in_evaluate_called_alone(monkeypatch, capsys):
    real, sizes = tournament.check_fits_in_memory, []

    def counted(batch_size, num_players, name="batch_size"):
        sizes.append(batch_size)
        return real(batch_size, num_players, name)

    monkeypatch.setattr(tournament, "check_fits_in_memory", counted)
    assert tournament.main(["--players", "3", "--agents", "random", "--deals", "4", "--quiet"]) == 0
    assert sizes == [4 * 3]
    sizes.clear()
    evaluate(["random"], 3, deals=4, seed=0)
    assert sizes == [4 * 3]
    capsys.readouterr()


def test_ctrl_c_while_loading_the_agents_is_one_line(monkeypatch, capsys):
    from agents import leaderboard

    def loading(*args, **kwargs):  # a checkpoint or a policy search imports torch: seconds
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament, "load_agent", loading)
    for main, argv in ((tournament.main, ["--agents", "ppo", "--deals", "4"]),
                       (leaderboard.main, ["--agents", "ppo,random", "--deals", "4"])):
        assert exit_status(main, argv) == INTERRUPTED
        captured = capsys.readouterr()
        assert captured.out == ""
        assert_one_line(captured.err, "Ctrl-C: stopped while loading --agents ppo, nothing was run")


def test_ctrl_c_while_the_belief_probe_loads_its_model_is_one_line(monkeypatch, capsys):
    from agents import beliefs

    def loading(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(beliefs, "PlayModel", loading)
    argv = ["--players", "3", "--agents", "pimc", "--model", "ppo", "--games", "1"]
    assert exit_status(beliefs.main, argv) == INTERRUPTED
    captured = capsys.readouterr()
    assert captured.out == "" and "--model" in captured.err
    assert_one_line(captured.err, "Ctrl-C: probe stopped")


def test_ctrl_c_while_timing_decisions_is_one_line(monkeypatch, capsys):
    pytest.importorskip("torch")
    from agents import pimc_policy

    def timing(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pimc_policy, "decision_times", timing)
    assert exit_status(pimc_policy.main, ["3", "--decisions", "1", "--agents", "pimc"]) == INTERRUPTED
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.strip() == "Ctrl-C: timing stopped, nothing reported"


# Ctrl-C arrives while torch is still loading: an import hook raises it exactly there. Imported by
# a program, the module lets the Ctrl-C through to it; run as a command, it is one line and 130.
_CTRL_C_WHILE_TORCH_LOADS = CTRL_C_ON_TORCH + """try:
    import {module}
except KeyboardInterrupt:
    print("imported: KeyboardInterrupt")
sys.argv = [{module!r}, *{argv!r}]
runpy.run_module({module!r}, run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("module, argv, says", [
    ("agents.distill", ["--out", "never.pt"], "Ctrl-C: distillation stopped while starting up, nothing was run"),
    ("agents.pimc_policy", ["3", "--decisions", "1", "--agents", "pimc"],
     "Ctrl-C: timing stopped while starting up, nothing was run"),
])
def test_ctrl_c_while_torch_loads_is_one_line_as_a_command_and_passes_through_an_import(tmp_path, module, argv,
                                                                                        says):
    script = _CTRL_C_WHILE_TORCH_LOADS.format(module=module, argv=argv)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == INTERRUPTED, proc.stderr[-3000:]
    assert proc.stdout == "imported: KeyboardInterrupt\n"  # a library user's import: the Ctrl-C is theirs
    assert proc.stderr.strip().splitlines() == [says]
    assert list(tmp_path.iterdir()) == []  # nothing was run
