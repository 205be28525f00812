"""Smoke test of the benchmark command line: it runs and its JSON has the documented shape.

No timing is asserted: speed is measured by ``python -m spoilfive_env.bench``, never by a test.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
from conftest import INTERRUPTED, ctrl_c, exit_status

from spoilfive_env import bench
from spoilfive_env.actions import NUM_ACTIONS

ROOT = Path(__file__).resolve().parent.parent


def run_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spoilfive_env.bench", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_quick_json_structure():
    completed = run_bench("--quick", "--json")
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    assert report["players"] == [2, 4, 6, 10]
    assert report["batch_sizes"] == [1, 64, 1024, 4096]
    assert report["seconds_per_measurement"] == bench.QUICK_SECONDS
    assert "included" in report["note"] and "random" in report["note"]
    for key in ("spoilfive_version", "python", "numpy", "machine"):
        assert isinstance(report[key], str) and report[key]
    results = report["results"]
    core = {(r["observe"], r["num_players"], r["batch_size"]) for r in results if r["kind"] == "core"}
    assert core == {(o, n, b) for o in (False, True) for n in (2, 4, 6, 10) for b in (1, 64, 1024, 4096)}
    aec = [r for r in results if r["kind"] == "aec"]
    assert sorted(r["num_players"] for r in aec) == [2, 4, 6, 10]
    assert all(r["batch_size"] == 1 and r["hands"] >= 1 for r in aec)
    assert len(results) == len(core) + len(aec)
    for r in results:
        assert isinstance(r["decisions"], int) and r["decisions"] > 0
        assert r["seconds"] > 0
        assert r["decisions_per_second"] == pytest.approx(r["decisions"] / r["seconds"])


def test_table_output_and_options():
    completed = run_bench("--quick", "--players", "3,5", "--batch-sizes", "2,8", "--seconds", "0.01")
    assert completed.returncode == 0, completed.stderr
    text = completed.stdout
    assert "decisions per second" in text and "included" in text
    assert "B=2" in text and "B=8" in text and "AEC" in text
    rows = [line.split() for line in text.splitlines() if line.strip().split(" ")[0] in ("3", "5")]
    assert len(rows) == 2 * 2 + 2  # two core tables and the AEC table


@pytest.mark.parametrize("args,fragment", [
    (["--players", "11"], "--players: '11': table sizes must be 2-10"),
    (["--players", ","], "--players: ',': table sizes must be 2-10"),
    (["--batch-sizes", ","], "--batch-sizes: ',': give whole numbers of at least 1"),
    (["--batch-sizes", "x"], "not a comma-separated list of whole numbers"),
    (["--seconds", "0"], "give 0.01 to 3600 seconds"),
    (["--seconds", "1e300"], "give 0.01 to 3600 seconds"),
    (["--seconds", "abc"], "--seconds: 'abc' is not a number: give 0.01 to 3600 seconds"),  # argparse's own words
])
def test_bad_arguments_are_refused(args, fragment):
    completed = run_bench("--quick", *args)
    assert completed.returncode == 2 and fragment in completed.stderr and len(completed.stderr.splitlines()) == 1


# ---------------------------------------------------------------- random legal actions
def test_random_legal_actions_are_legal_and_uniform():
    rng = np.random.default_rng(5)
    games = 60_000
    mask = np.zeros((games, NUM_ACTIONS), bool)
    mask[:, [3, 50, 60, 104]] = True  # four legal actions in every game,
    mask[::2, 106] = True  # a fifth in every other game,
    mask[1::4] = True  # and every action in a quarter of the games (a finished game's row)
    actions = bench.random_legal_actions(rng, mask)
    assert actions.shape == (games,) and mask[np.arange(games), actions].all()
    counts = np.bincount(actions[1::4], minlength=NUM_ACTIONS)
    assert (counts > 0).sum() > 100  # an all-legal row can get any action, not only the first ones
    partial = np.flatnonzero(~mask.all(axis=1))
    odd = partial[partial % 2 == 1]  # four legal actions each
    seen = np.bincount(actions[odd], minlength=NUM_ACTIONS)[[3, 50, 60, 104]]
    expected = len(odd) / 4
    assert np.all(np.abs(seen - expected) < 5 * np.sqrt(expected))  # 5 sigma: uniform, not first-biased


def test_random_legal_action_of_one_mask():
    rng = np.random.default_rng(1)
    mask = np.zeros(NUM_ACTIONS, np.int8)
    mask[[7, 105]] = 1
    picks = {bench.random_legal_action(rng, mask) for _ in range(200)}
    assert picks == {7, 105}


class CountingGame:
    """An AEC game that counts what the benchmark's loop asks of it: resets, and steps with an action and
    with None (an agent leaving the finished hand)."""

    def __init__(self, game):
        self.game, self.resets, self.moves, self.leaves = game, 0, 0, 0

    def reset(self, seed=None):
        self.resets += 1
        self.game.reset(seed=seed)

    def agent_iter(self):
        return self.game.agent_iter()

    def last(self):
        return self.game.last()

    def step(self, action):
        if action is None:
            self.leaves += 1
        else:
            self.moves += 1
        self.game.step(action)


def test_the_aec_loop_counts_decisions_not_the_steps_that_leave_a_finished_hand():
    """aec_loop's decisions are the actions chosen; the step(None) of each agent leaving a finished hand is
    PettingZoo bookkeeping, not a decision. Its episodes are the hands played after the untimed warm-up reset."""
    from spoilfive_env import env

    game = CountingGame(env(num_players=3))
    decisions, episodes, elapsed = bench.aec_loop(game, seconds=0.05, seed=4)
    assert episodes >= 1 and game.resets == episodes + 1 and elapsed >= 0.05
    assert decisions == game.moves and game.leaves == 3 * episodes


# ---------------------------------------------------------------- beside the peers (no peer needed)
def test_summarize_gives_paired_ratios_median_and_range():
    summary = bench.summarize([10.0, 30.0, 20.0], [5.0, 10.0, 20.0])
    assert summary["ratios"] == [2.0, 3.0, 1.0]
    assert (summary["median"], summary["low"], summary["high"]) == (2.0, 1.0, 3.0)
    assert (summary["ours_median"], summary["peer_median"]) == (20.0, 10.0)


def _fake_comparisons():
    return (bench.Comparison("one game", "aec", "pettingzoo:fake_v0", "Fake"),
            bench.Comparison("batch", "core", "pgx:fake", "Fake batch"),
            bench.Comparison("batch obs", "core_observe", "open_spiel:fake", "Fake obs"))


def test_compare_alternates_sides_and_skips_missing_or_failing_peers(monkeypatch):
    monkeypatch.setitem(bench._WORKERS, "pgx", (("no_such_module_for_spoilfive_tests",), None))
    monkeypatch.setitem(bench._WORKERS, "pettingzoo", ((), None))
    monkeypatch.setitem(bench._WORKERS, "open_spiel", ((), None))
    calls = []

    def measure(spec, seconds, seed):
        calls.append((spec, seed))
        if spec == "open_spiel:fake":
            raise RuntimeError("ImportError: the peer would not start")
        return {"decisions_per_second": 200.0 if spec.startswith("ours") else 100.0 + seed}

    report = bench.compare(_fake_comparisons(), rounds=3, seconds=0.5, seed=10, measure=measure)
    one_game, batch, batch_obs = report["rows"]
    # Ours first in even rounds, the peer first in odd rounds; the round's seed on both sides.
    assert calls[:6] == [("ours:aec", 10), ("pettingzoo:fake_v0", 10), ("pettingzoo:fake_v0", 11),
                         ("ours:aec", 11), ("ours:aec", 12), ("pettingzoo:fake_v0", 12)]
    assert one_game["ratios"] == [200 / 110, 200 / 111, 200 / 112] and one_game["median"] == 200 / 111
    assert "not installed" in batch["skipped"] and "no_such_module_for_spoilfive_tests" in batch["skipped"]
    assert not any(spec == "pgx:fake" for spec, _ in calls)  # a missing peer is never started
    assert batch_obs["skipped"].startswith("failed:") and "would not start" in batch_obs["skipped"]
    assert report["rounds"] == 3 and report["batch_size"] == bench.PEER_BATCH
    assert report["pinned_cpu"] == bench.worker_cpu()  # every measuring process on one CPU, named

    table = bench.format_comparison(report)
    assert "| one game | 200/s | Fake | 111/s | 1.80 (1.79-1.82) |" in table
    assert "skipped: not installed" in table and "skipped: failed" in table
    assert report["date"] in table and "alternating" in table


def test_format_comparison_gives_the_observation_share_from_paired_rounds():
    assert any(c.ours == "core_observe" and c.peer == "ours:core" for c in bench.COMPARISONS)
    row = {"title": "t", "peer": bench.OBSERVATION_SHARE_PEER, "ours_kind": "core_observe", "ratios": [0.5, 0.6, 0.7],
           "median": 0.6, "low": 0.5, "high": 0.7, "ours_median": 600.0, "peer_median": 1000.0}
    report = {"date": "2026-12-01", "rounds": 3, "seconds_per_measurement": 1.0, "players": 4, "note": "n",
              "spoilfive_version": "x", "python": "3", "numpy": "2", "machine": "m", "batch_size": 4096,
              "rows": [row]}
    assert "mask + observation + step runs at 60% of mask + step" in bench.format_comparison(report)
    assert "range 50%-70%" in bench.format_comparison(report)


def test_worker_measures_ours_in_its_own_process():
    completed = run_bench("--worker", "ours:core", "--seconds", "0.05")
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["worker"] == "ours:core" and result["decisions"] > 0 and result["seconds"] >= 0.05
    unknown = run_bench("--worker", "nobody:game", "--seconds", "0.05")
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1
    assert "python -m spoilfive_env.bench: error: --worker 'nobody:game' is not allowed" in unknown.stderr


def test_peers_flag_prints_the_comparison(monkeypatch, capsys):
    seen = {}

    def fake_compare(rounds, seconds, seed, log):
        seen.update(rounds=rounds, seconds=seconds, seed=seed)
        return {"date": "2026-12-01", "rounds": rounds, "seconds_per_measurement": seconds, "players": 4,
                "note": "n", "spoilfive_version": "x", "python": "3", "numpy": "2", "machine": "m",
                "batch_size": 4096, "rows": [{"title": "t", "peer": "p", "skipped": "not installed: x"}]}

    monkeypatch.setattr(bench, "compare", fake_compare)
    assert bench.main(["--peers", "--rounds", "2", "--seconds", "0.1", "--seed", "3"]) == 0
    assert seen == {"rounds": 2, "seconds": 0.1, "seed": 3}
    assert "| t | | p | | skipped: not installed: x |" in capsys.readouterr().out


def test_profile_names_every_part():
    parts = bench.profile(batch_sizes=(1, 8), seconds=0.05, count=2)
    expected = {f"{part} B={b}" for part in ("observation", "legal mask", "step") for b in (1, 8)}
    assert set(parts) == expected | {"aec decision"}
    # The step is a difference of two timings (noise can move it), the others are timed directly.
    assert all(np.isfinite(value) for value in parts.values())
    assert all(value > 0 for name, value in parts.items() if not name.startswith("step"))


def test_docstring_examples_run():
    import doctest

    result = doctest.testmod(bench)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------- Ctrl-C: what was measured is printed, exit 130


def stopped_line(error: str) -> str:
    assert "Traceback" not in error, error
    lines = error.strip().splitlines()
    assert len(lines) == 1, error
    return lines[0]



def interrupt_core_measurement(monkeypatch, made: int):
    """``bench_core`` measures ``made`` times (1000 decisions a second), then Ctrl-C."""
    calls = []

    def bench_core(num_players, batch_size, seconds, observe, seed=0):
        if len(calls) == made:
            raise KeyboardInterrupt
        calls.append(num_players)
        return {"kind": "core", "observe": observe, "num_players": num_players, "batch_size": batch_size,
                "decisions": 1000, "steps": 10, "seconds": 1.0, "decisions_per_second": 1000.0}

    monkeypatch.setattr(bench, "bench_core", bench_core)


def test_ctrl_c_prints_the_measurements_made_then_one_line(monkeypatch, capsys):
    interrupt_core_measurement(monkeypatch, 3)  # 3 players at B=2 and B=8, 5 players at B=2; Ctrl-C at B=8
    assert exit_status(bench.main, ["--players", "3,5", "--batch-sizes", "2,8", "--seconds", "0.01"]) == INTERRUPTED
    captured = capsys.readouterr()
    assert stopped_line(captured.err) == "Ctrl-C: benchmark stopped; the measurements it had finished are above"
    table = captured.out.splitlines()
    assert "Stopped by Ctrl-C" in captured.out and "core, legal mask + step" in table
    rows = [line.split() for line in table if line.strip()[:1] in ("3", "5")]
    assert rows == [["3", "1.0k", "1.0k"], ["5", "1.0k", "-"]]
    assert "observation of the player to act" not in captured.out and "AEC" not in captured.out  # not begun

    interrupt_core_measurement(monkeypatch, 3)
    argv = ["--players", "3,5", "--batch-sizes", "2,8", "--seconds", "0.01", "--json"]
    assert exit_status(bench.main, argv) == INTERRUPTED
    report = json.loads(capsys.readouterr().out)
    assert report["interrupted"] is True
    assert [(r["num_players"], r["batch_size"]) for r in report["results"]] == [(3, 2), (3, 8), (5, 2)]


def test_ctrl_c_before_the_first_measurement_reports_nothing(monkeypatch, capsys):
    interrupt_core_measurement(monkeypatch, 0)
    assert exit_status(bench.main, ["--players", "3", "--batch-sizes", "2", "--seconds", "0.01"]) == INTERRUPTED
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "before any measurement finished, nothing to report" in stopped_line(captured.err)


def test_compare_keeps_the_rounds_finished_on_ctrl_c(monkeypatch):
    monkeypatch.setitem(bench._WORKERS, "pgx", ((), None))
    monkeypatch.setitem(bench._WORKERS, "pettingzoo", ((), None))
    monkeypatch.setitem(bench._WORKERS, "open_spiel", ((), None))
    calls = []

    def measure(spec, seconds, seed):  # Ctrl-C in the third measurement of the second comparison
        calls.append(spec)
        if len(calls) == 3 * 2 + 3:
            raise KeyboardInterrupt
        return {"decisions_per_second": 200.0 if spec.startswith("ours") else 100.0}

    with pytest.raises(bench.BenchInterrupted) as stopped:  # a KeyboardInterrupt, holding the report so far
        bench.compare(_fake_comparisons(), rounds=3, seconds=0.5, measure=measure)
    report = stopped.value.partial
    assert report["interrupted"] is True and report["rounds"] == 3
    first, second = report["rows"]  # the third comparison was never begun
    assert first["ratios"] == [2.0] * 3 and "interrupted" not in first
    assert second["ratios"] == [2.0] and second["interrupted"] == "1 of 3 rounds"
    assert "2.00 (2.00-2.00), 1 of 3 rounds (Ctrl-C) |" in bench.format_comparison(report)

    calls.clear()
    with pytest.raises(KeyboardInterrupt) as stopped:  # in the first round: nothing to keep
        bench.compare(_fake_comparisons()[1:], rounds=3, seconds=0.5,
                      measure=ctrl_c)
    assert not isinstance(stopped.value, bench.BenchInterrupted)


def test_ctrl_c_in_peers_prints_the_comparison_so_far(monkeypatch, capsys):
    monkeypatch.setitem(bench._WORKERS, "pettingzoo", ((), None))
    monkeypatch.setitem(bench._WORKERS, "pgx", ((), None))
    calls = []

    def measure(spec, seconds, seed):
        calls.append(spec)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return {"decisions_per_second": 150.0}

    real = bench.compare
    monkeypatch.setattr(bench, "compare", lambda **kwargs: real(_fake_comparisons()[:2], measure=measure, **kwargs))
    assert exit_status(bench.main, ["--peers", "--rounds", "2", "--seconds", "0.1"]) == INTERRUPTED
    captured = capsys.readouterr()
    assert "| one game | 150/s | Fake | 150/s | 1.00 (1.00-1.00), 1 of 2 rounds (Ctrl-C) |" in captured.out
    assert "Fake batch" not in captured.out
    assert stopped_line(captured.err.split("\n", 1)[1]).startswith("Ctrl-C: benchmark stopped;")  # after the log


def test_ctrl_c_in_the_profile_prints_the_parts_timed(monkeypatch, capsys):
    timed = []

    def profile_batch(batch_size, num_players, count):
        if timed:
            raise KeyboardInterrupt
        timed.append(batch_size)
        return {f"observation B={batch_size}": 1.5, f"legal mask B={batch_size}": 2.5}

    monkeypatch.setattr(bench, "_profile_batch", profile_batch)
    assert exit_status(bench.main, ["--profile"]) == INTERRUPTED
    captured = capsys.readouterr()
    assert [line.split() for line in captured.out.splitlines()] == [["observation", "B=1", "1.5", "us"],
                                                                    ["legal", "mask", "B=1", "2.5", "us"]]
    assert stopped_line(captured.err).startswith("Ctrl-C: benchmark stopped;")


def test_ctrl_c_in_a_peers_worker_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(bench, "_worker_main", ctrl_c)
    assert exit_status(bench.main, ["--worker", "ours:core", "--seconds", "0.05"]) == INTERRUPTED
    captured = capsys.readouterr()
    assert captured.out == "" and stopped_line(captured.err) == "Ctrl-C: measurement stopped, nothing reported"


# ---------------------------------------------------------------- what is counted and reported (mutation audit)
def test_the_aec_loop_deals_a_new_hand_for_every_episode(monkeypatch):
    """Each timed hand is reset with the next seed: one deal replayed over and over would time one hand's
    cards only (and cached paths), not random play."""
    from spoilfive_env import env

    seeds = []
    game = CountingGame(env(num_players=2))
    reset = game.reset
    monkeypatch.setattr(game, "reset", lambda seed=None: (seeds.append(seed), reset(seed=seed)))
    _, episodes, _ = bench.aec_loop(game, seconds=0.03, seed=7)
    assert episodes >= 2 and seeds == [7] + [7 + k for k in range(episodes)]  # the untimed warm-up reuses the first


def test_bench_core_counts_one_decision_per_game_per_step_after_the_warm_up_for_at_least_the_time_asked(monkeypatch):
    steps_taken = []

    class CountingCore(bench.SpoilFiveCore):
        def step(self, actions):
            steps_taken.append(len(actions))
            return super().step(actions)

    monkeypatch.setattr(bench, "SpoilFiveCore", CountingCore)
    result = bench.bench_core(num_players=3, batch_size=5, seconds=0.03, observe=False, seed=2)
    warm_up = 3
    # every finished game is restarted at once, so each step plays one card in each of the 5 games
    assert result["steps"] == len(steps_taken) - warm_up and result["decisions"] == 5 * result["steps"]
    assert result["seconds"] >= 0.03 and result["decisions_per_second"] == result["decisions"] / result["seconds"]


def test_a_peers_worker_measures_ours_with_the_observation_only_for_core_observe():
    with_observation = bench._ours("core_observe", bench.MIN_SECONDS, 0)
    without = bench._ours("core", bench.MIN_SECONDS, 0)
    assert (with_observation["observe"], without["observe"]) == (True, False)
    assert with_observation["batch_size"] == without["batch_size"] == bench.PEER_BATCH


def test_run_worker_gives_the_rate_as_decisions_over_seconds(monkeypatch):
    def fake_run(command, **kwargs):
        assert command[command.index("--worker") + 1] == "pgx:leduc_holdem"
        return subprocess.CompletedProcess(command, 0, stdout='{"worker": "pgx:leduc_holdem", "decisions": 300, '
                                                                '"seconds": 2.0}\n', stderr="")

    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    assert bench.run_worker("pgx:leduc_holdem", 2.0, 0)["decisions_per_second"] == 150.0


def test_the_open_spiel_peer_counts_player_decisions_not_chance_outcomes_or_hands(monkeypatch):
    """A fake ``pyspiel`` game: one chance outcome then three decisions a hand."""

    class State:
        def __init__(self):
            self.moves = 0

        def is_terminal(self):
            return self.moves == 4

        def is_chance_node(self):
            return self.moves == 0

        def chance_outcomes(self):
            return [(0, 0.5), (1, 0.5)]

        def information_state_tensor(self):
            return [0.0]

        def legal_actions(self):
            return [0, 1]

        def apply_action(self, action):
            self.moves += 1

    fake = types.SimpleNamespace(load_game=lambda name: types.SimpleNamespace(new_initial_state=State))
    monkeypatch.setitem(sys.modules, "pyspiel", fake)
    result = bench._peer_open_spiel("euchre", 0.02, 0)
    assert result["episodes"] >= 1 and result["decisions"] == 3 * result["episodes"]


def test_format_table_gives_each_table_its_own_rates_in_thousands_and_millions():
    results = [{"kind": "core", "observe": False, "num_players": 4, "batch_size": 64, "decisions_per_second": 2.5e6},
               {"kind": "core", "observe": True, "num_players": 4, "batch_size": 64, "decisions_per_second": 1.25e6},
               {"kind": "aec", "observe": True, "num_players": 4, "batch_size": 1, "decisions_per_second": 45_600.0}]
    report = {"players": [4], "batch_sizes": [64], "results": results, "seconds_per_measurement": 1.0, "note": "n",
              "spoilfive_version": "x", "python": "3", "numpy": "2", "machine": "m"}
    lines = bench.format_table(report).splitlines()
    masks, observed, aec = (lines.index(title) for title in (
        "core, legal mask + step", "core, legal mask + observation of the player to act + step",
        "AEC environment, one game (agent_iter + last() + step)"))
    assert lines[masks + 2].split() == ["4", "2.50M"]
    assert lines[observed + 2].split() == ["4", "1.25M"]  # the observation table's own rate, not the mask table's
    assert lines[aec + 2].split() == ["4", "45.6k"]


def test_profile_gives_the_aec_decision_in_cpu_microseconds(monkeypatch):
    """A stand-in AEC loop that burns a known CPU time over 10 decisions: about a tenth of it each, in us."""
    burned = {}

    def fake_loop(game, seconds, seed=0):
        start = time.process_time()
        while time.process_time() - start < 0.05:
            pass
        burned["cpu"] = time.process_time() - start
        return 10, 1, burned["cpu"]

    monkeypatch.setattr(bench, "aec_loop", fake_loop)
    parts = bench.profile(batch_sizes=(1,), seconds=0.01, count=1)
    assert parts["aec decision"] == pytest.approx(burned["cpu"] / 10 * 1e6, rel=0.5)


def test_a_pettingzoo_peer_reports_the_decisions_of_its_loop_not_its_hands(monkeypatch):
    from spoilfive_env import env

    game = CountingGame(env(num_players=2))
    monkeypatch.setitem(sys.modules, "pettingzoo.classic.fake_v0", types.SimpleNamespace(env=lambda: game))
    result = bench._peer_pettingzoo("fake_v0", 0.02, 0)
    assert result["episodes"] >= 1 and result["decisions"] == game.moves > result["episodes"]


def test_the_batch_sizes_are_checked_against_memory_at_the_largest_table(monkeypatch, capsys):
    checked = []

    def refuse(batch_size, num_players):
        checked.append((batch_size, num_players))
        raise ValueError("too large for this machine")

    monkeypatch.setattr(bench, "check_fits_in_memory", refuse)
    with pytest.raises(SystemExit):
        bench.main(["--players", "2,10,3", "--batch-sizes", "3", "--quick"])
    assert checked == [(3, 10)] and "--batch-sizes: too large for this machine" in capsys.readouterr().err


def test_summarize_gives_the_median_rates_not_the_means():
    summary = bench.summarize([1.0, 2.0, 9.0], [4.0, 1.0, 1.0])  # medians 2 and 1; means 4 and 2
    assert (summary["ours_median"], summary["peer_median"]) == (2.0, 1.0)
    assert summary["median"] == statistics.median([0.25, 2.0, 9.0])
