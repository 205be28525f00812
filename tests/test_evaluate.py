"""Fair tournaments: the canary, determinism, the figures, and the strength ladder."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import spoilfive_env
from agents import BEST, CHECKPOINT_DIR, load_agent
from agents.base import Agent, checked_actions, sample_legal
from agents.evaluate import (
    BASELINES,
    build_agents,
    check_against_baselines,
    distinct_specs,
    evaluate,
    format_report,
    main,
    make_deals,
    paired_difference,
    play_tournament,
)
from agents.spoiling import stops
from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.cli import json_text
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.rules import Rules


@pytest.mark.parametrize("name", ["greedy", "spoiler"])
@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 7])
def test_canary_same_deterministic_agent_everywhere_is_exactly_fair(name, num_players):
    report = evaluate([name] * num_players, num_players, deals=150, seed=num_players, batch_size=256)
    for entry in report["entries"]:
        assert entry["mean_equity"] == pytest.approx(0.0, abs=1e-9)
        assert entry["pool_share"] == pytest.approx(1 / num_players, abs=1e-12)
        assert entry["fair_share"] == pytest.approx(1 / num_players)
    merged = report["agents"][name]
    assert merged["seats"] == num_players and merged["mean_equity"] == pytest.approx(0.0, abs=1e-9)


def test_canary_holds_for_a_lineup_filled_from_one_entry():
    report = evaluate(["greedy"], 4, deals=100, seed=1)
    assert report["lineup"] == ["greedy"] * 4
    assert report["agents"]["greedy"]["pool_share"] == pytest.approx(1.0)


def test_same_seed_same_figures_and_different_seed_different_deals():
    first = evaluate(["random", "greedy", "pimc:samples=2"], 3, deals=60, seed=5)
    again = evaluate(["random", "greedy", "pimc:samples=2"], 3, deals=60, seed=5)
    first.pop("seconds"), again.pop("seconds")
    # as text, so that a rate with nothing to count (NaN) compares equal to itself
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    hands_a, turnups_a, dealers_a = make_deals(4, 50, seed=1)
    hands_b, _, _ = make_deals(4, 50, seed=2)
    assert hands_a.shape == (50, 4, 5) and not np.array_equal(hands_a, hands_b)
    cards = np.concatenate([hands_a.reshape(50, -1), turnups_a[:, None]], axis=1)
    assert all(len(set(row)) == 21 for row in cards.tolist())
    assert dealers_a.min() >= 0 and dealers_a.max() < 4


def test_figures_are_consistent():
    report = evaluate(["greedy", "random"], 4, deals=300, seed=2)
    assert report["hands"] == 1200 and report["rotations"] == 4
    greedy, random = report["agents"]["greedy"], report["agents"]["random"]
    assert greedy["seats"] == 1 and random["seats"] == 3
    assert greedy["hands"] == 1200 and random["hands"] == 3600
    # equity is zero-sum over the table; pool shares add to one
    total = greedy["mean_equity"] * 1 + random["mean_equity"] * 3
    assert total == pytest.approx(0.0, abs=1e-9)
    assert greedy["pool_share"] + random["pool_share"] == pytest.approx(1.0)
    spoils = report["table"]["spoil_rate"] * report["hands"]
    assert greedy["pools_won"] + random["pools_won"] + round(spoils) == report["hands"]
    assert random["jink_successes"] <= random["jink_attempts"]
    assert greedy["jink_attempts"] == 0  # greedy always claims
    assert 0 <= report["table"]["two_trick_conversion"] <= 1
    assert "greedy" in format_report(report) and "spoil rate" in format_report(report)


def greedy_against_random(num_players: int, deals: int, seed: int, **rules):
    """``evaluate``'s report of greedy against random tables, and the per-game outcome of the same
    tournament played again from its parts (the deals, the line-up, the agents), with the line-up;
    ``rules``: options of the table (both runs)."""
    report = evaluate(["greedy", "random"], num_players, deals=deals, seed=seed, **rules)
    hands, turnups, dealers = make_deals(num_players, deals, seed)
    specs, lineup = distinct_specs(["greedy", "random"], num_players)
    outcome = play_tournament(build_agents(specs, seed), lineup, Rules(num_players=num_players, **rules), hands,
                              turnups, dealers, seed=seed)
    return report, outcome, lineup


def test_intervals_are_clustered_by_deal_as_written_by_hand():
    """Equity, chips and spoil rate: the mean of the K per-deal means, and 1.96 times their sample standard
    deviation (ddof=1) over sqrt(K), the deals (not the hands) being the independent samples."""
    deals = 200
    report, outcome, _ = greedy_against_random(4, deals, seed=3)
    greedy_seat = outcome["entry_of_seat"] == 0  # (G, n): one seat a game, each rotation's own

    def mean_and_half(per_deal):
        return per_deal.mean(), 1.959963984540054 * per_deal.std(ddof=1) / np.sqrt(deals)

    figures = report["agents"]["greedy"]
    for key, values in (("equity", outcome["equity"]), ("chips", outcome["chips"])):
        per_deal = values[greedy_seat].reshape(deals, 4).mean(axis=1)  # game = deal * 4 + rotation
        mean, half = mean_and_half(per_deal)
        assert figures[f"mean_{key}"] == pytest.approx(mean)
        assert figures[f"{key}_ci95"] == pytest.approx(half)
    spoiled = (outcome["winner"] < 0).reshape(deals, 4).mean(axis=1)
    mean, half = mean_and_half(spoiled)
    assert report["table"]["spoil_rate"] == pytest.approx(mean)
    assert report["table"]["spoil_rate_ci95"] == pytest.approx(half)


def test_ratio_figures_and_their_intervals_are_clustered_by_deal_as_written_by_hand():
    """Pool share, two-trick conversion, stop rate and friendly-fire rate of each agent: numerator and denominator
    summed over its seats per deal, the ratio of their totals, and the delta method's 95% interval with the K
    per-deal residuals r = numerator - ratio * denominator as the independent samples:
    1.96 sqrt(K / (K - 1) sum r**2) / total. The pool share's denominator is every pool won at the table."""
    deals = 200
    report, outcome, lineup = greedy_against_random(4, deals, seed=3)
    won = outcome["winner"][:, None] == np.arange(4)
    reached_two = outcome["tricks"] >= 2
    faced, stopped = stops(outcome["trick_winner"], outcome["winner"], 4)  # hand-made cases: test_leaderboard
    live = np.array([[list(row[:4]).count(seat) >= 2 for seat in range(4)] for row in outcome["trick_winner"]])
    assert (reached_two & ~live).any(), "a second trick taken on the last trick"

    def ratio_and_half(numerator, denominator):
        ratio = numerator.sum() / denominator.sum()
        residual = numerator - ratio * denominator
        return ratio, 1.959963984540054 * np.sqrt(deals / (deals - 1) * (residual ** 2).sum()) / denominator.sum()

    for index, label in enumerate(["greedy", "random"]):
        mine = lineup[outcome["entry_of_seat"]] == index  # (G, n): the seats this agent played

        def per_deal(values, mine=mine):
            return np.where(mine, values, 0).reshape(deals, -1).sum(axis=1)  # game = deal * 4 + rotation

        figures = report["agents"][label]
        for key, numerator, denominator in (
                ("pool_share", per_deal(won), won.reshape(deals, -1).sum(axis=1)),
                ("two_trick_conversion", per_deal(won & reached_two), per_deal(reached_two)),
                ("two_trick_conversion_live", per_deal(won & live), per_deal(live)),
                ("stop_rate", per_deal(stopped), per_deal(faced)),
                ("friendly_fire_rate", per_deal(outcome["overtakes"]), per_deal(outcome["overtake_chances"]))):
            ratio, half = ratio_and_half(numerator, denominator)
            assert figures[key] == pytest.approx(ratio), (label, key)
            assert figures[f"{key}_ci95"] == pytest.approx(half), (label, key)
        assert (figures["stops"], figures["threats_faced"]) == (stopped[mine].sum(), faced[mine].sum())
        assert figures["win_rate"] == pytest.approx(won[mine].sum() / mine.sum())
    assert 0 < report["agents"]["random"]["friendly_fire_rate"] < 1  # random overtakes at some chances, not all


def test_in_partnerships_a_pool_counts_as_won_in_both_partners_seats():
    """In partnerships the winner of a hand is a team (seats 0 and 2, or 1 and 3): an agent's pools won, pool share
    and two-trick pools count the hands its seat's team won (its seat on two tricks, for the last), and the share's
    denominator counts both winning seats of every pool."""
    deals = 150
    report, outcome, lineup = greedy_against_random(4, deals, seed=7, partnerships=True)
    won = outcome["winner"][:, None] == np.array([0, 1, 0, 1])  # the seat's team took the pool
    reached_two = outcome["tricks"] >= 2
    for index, label in enumerate(["greedy", "random"]):
        mine = lineup[outcome["entry_of_seat"]] == index
        figures = report["agents"][label]
        assert figures["pools_won"] == (won & mine).sum()
        assert figures["pool_share"] == pytest.approx((won & mine).sum() / won.sum())
        assert figures["two_trick_pools"] == (won & reached_two & mine).sum()
    greedy = lineup[outcome["entry_of_seat"]] == 0
    assert (won & ~reached_two & greedy).any(), "a pool its partner took while it held fewer than two tricks"


def test_jink_attempts_and_successes_are_counted_in_the_seats_of_each_agent():
    """Each hand with a jinker counts one attempt for the agent in his seat, and one success when the jink
    won; random jinks often and fails often, so the two counts must differ."""
    report, outcome, lineup = greedy_against_random(3, deals=300, seed=4)
    jinked = np.flatnonzero(outcome["jinker"] >= 0)
    agent_of_jinker = lineup[outcome["entry_of_seat"][jinked, outcome["jinker"][jinked]]]
    won = outcome["jink_won"][jinked]
    for index, label in enumerate(["greedy", "random"]):
        figures = report["agents"][label]
        assert figures["jink_attempts"] == int((agent_of_jinker == index).sum())
        assert figures["jink_successes"] == int(((agent_of_jinker == index) & won).sum())
    assert report["table"]["jink_attempts"] == len(jinked) and report["table"]["jink_successes"] == int(won.sum())
    random = report["agents"]["random"]
    assert random["jink_attempts"] > random["jink_successes"], "failed jinks to tell the two counts apart"


def test_fair_share_and_the_table_s_two_trick_conversion_as_counted_by_hand():
    """The fair share is the agent's seats over the table's (one greedy seat: 1/4, three random: 3/4); the
    table's two-trick conversion is, over every seat of every hand that reached two tricks, the share that
    went on to win the pool."""
    report, outcome, _ = greedy_against_random(4, deals=200, seed=5)
    assert report["agents"]["greedy"]["fair_share"] == 0.25 and report["agents"]["random"]["fair_share"] == 0.75
    assert [entry["fair_share"] for entry in report["entries"]] == [0.25] * 4
    reached_two = outcome["tricks"] >= 2
    won = outcome["winner"][:, None] == np.arange(4)
    assert report["table"]["two_trick_conversion"] == pytest.approx((reached_two & won).sum() / reached_two.sum())
    live = np.array([[list(row[:4]).count(seat) >= 2 for seat in range(4)] for row in outcome["trick_winner"]])
    assert report["table"]["two_trick_hands_live"] == live.sum() < reached_two.sum()
    assert report["table"]["two_trick_conversion_live"] == pytest.approx((live & won).sum() / live.sum())


def test_a_second_trick_taken_on_the_last_trick_is_no_live_two_trick_hand():
    """3 players, tricks to seats 1, 1, 0, 2, 0 (spoiled): seat 1 held two tricks with one to play, seat 0 took its
    second on the last trick, when no trick was left to win the pool with; every hand reaching two in four is."""
    from agents.spoiling import two_tricks_with_one_to_play

    winners = np.array([[1, 1, 0, 2, 0], [0, 0, 0, -1, -1], [2, 1, 0, 2, 1], [0, 1, 2, 0, 1]])
    assert two_tricks_with_one_to_play(winners, 3).tolist() == [
        [False, True, False], [True, False, False], [False, False, True], [True, False, False]]


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="do not fit"):
        evaluate(["greedy"] * 5, 4, deals=10)
    with pytest.raises(ValueError, match="deals"):
        evaluate(["greedy"], 4, deals=0)
    with pytest.raises(ValueError, match="from 1 to 1,000,000"):  # refused before any deal is drawn
        evaluate(["greedy"], 4, deals=10**20)
    with pytest.raises(ValueError, match="unknown agent"):
        evaluate(["greedy", "nobody"], 4, deals=10)


@pytest.mark.parametrize("odd, says", [
    ({"seed": -1}, "seed=-1 is not allowed: it must be a whole number of at least 0"),
    ({"seed": 1.5}, "seed=1.5 is not allowed"),  # was played as seed 1
    ({"seed": True}, "seed=True is not allowed"),
    ({"seed": None}, "seed=None is not allowed"),
    ({"rules": {"num_players": 3}}, "rules=.* is not allowed: give a Rules"),
    ({"shards": 0}, "shards=0 is not allowed"),  # was ignored without ray
    ({"shards": "2"}, "shards='2' is not allowed"),
    ({"shards": 2.5}, "shards=2.5 is not allowed"),  # a fraction of a task: refused, not rounded
    ({"shards": 4}, "shards=4 is for ray=: give ray= too"),  # was ignored without ray
])
def test_odd_seed_rules_and_shards_are_refused_in_words(odd, says):
    with pytest.raises(ValueError, match=says):
        evaluate(["greedy", "random"], 3, deals=2, **odd)


class Careless:
    """A user's agent object whose act_batch answers what ``answer(masks)`` gives."""

    name = "careless"

    def __init__(self, answer):
        self.answer = answer

    def act_batch(self, observations, masks):
        return self.answer(np.asarray(masks))


@pytest.mark.parametrize("answer, says", [
    (lambda m: m.argmax(1) + 0.9, r"returned float64 actions of shape \(\d+,\)"),  # was truncated and played
    (lambda m: m.argmax(1).astype(str), r"returned <U\d+ actions"),  # was parsed as numbers
    (lambda m: m.argmax(1)[:1], r"returned int64 actions of shape \(1,\) for \d+ rows"),  # was broadcast
    (lambda m: np.full(len(m), np.nan), "returned float64 actions"),
    (lambda m: np.zeros(len(m) + 1, np.int64), r"returned int64 actions of shape \(\d+,\)"),
    (lambda m: m.argmax(1)[:, None], r"returned int64 actions of shape \(\d+, 1\)"),
    (lambda m: None, r"returned None \(NoneType\)"),
    (lambda m: int(m.argmax(1)[0]), r"returned \d+ \(int\)"),
])
def test_an_agent_object_whose_act_batch_breaks_its_contract_is_named(answer, says, monkeypatch):
    steps = []
    original_step = SpoilFiveCore.step
    monkeypatch.setattr(SpoilFiveCore, "step", lambda core, actions: steps.append(1) or original_step(core, actions))
    with pytest.raises(ValueError, match=f"agent 'careless' {says}.*: act_batch must return one legal integer "
                                         r"action per row \(an integer array of shape"):
        evaluate([Careless(answer), "random"], 2, deals=5, seed=0)
    assert steps == []  # refused at the first move, before the core stepped it


def test_an_illegal_action_is_refused_naming_the_agent_not_a_row_of_the_core():
    with pytest.raises(ValueError, match="agent 'careless' chose action 0, which its mask does not allow, in row 0 "
                                         "of the batch it was given: act_batch must return a legal action"):
        evaluate([Careless(lambda m: (~m).argmax(1)), "random"], 3, deals=5, seed=0)


def test_integer_actions_of_any_integer_kind_are_played_as_they_are():
    report = evaluate([load_agent("greedy"), "random"], 3, deals=20, seed=4)
    for convert in (lambda a: a.astype(np.int32), lambda a: a.astype(np.uint8), lambda a: a.tolist()):
        greedy = load_agent("greedy")
        plain = greedy.act_batch
        greedy.act_batch = lambda observations, masks: convert(plain(observations, masks))  # noqa: B023
        again = evaluate([greedy, "random"], 3, deals=20, seed=4)
        assert json_text(again["agents"]) == json_text(report["agents"])  # (NaN figures: compared as text)


@pytest.mark.parametrize("call, says", [
    ({"agents": ["random"], "num_players": 4.0, "rules": Rules(4)},  # was a TypeError deep in the deals
     "num_players=4.0 is not allowed: it must be a whole number from 2 to 10"),
    ({"agents": ["random"], "num_players": True}, "num_players=True is not allowed"),
    ({"agents": None}, "agents=None is not allowed: give the lineup seat by seat as a list or tuple"),
    ({"agents": {"random": 1}}, "agents=.* is not allowed"),  # its keys were played
    ({"agents": [load_agent("random").__class__]},
     "is a class, not an agent: give an agent object \\(an instance, RandomAgent\\(...\\)\\), a registry name"),
    ({"agents": load_agent("random").__class__}, "is a class, not an agent"),
    ({"agents": ["random"], "paired_with": load_agent("random").__class__}, "is a class, not an agent"),
    ({"agents": ["random"], "ray": 0}, "ray=0 is not allowed: give None or False \\(play here\\), True"),
    ({"agents": ["random"], "ray": 123}, "ray=123 is not allowed"),  # was worded for --ray
    ({"agents": ["random"], "ray": ["a"]}, "ray=\\['a'\\] is not allowed"),
    ({"agents": ["random"], "progress": "x"}, "progress='x' is not allowed: give True or False"),
    ({"agents": ["random"], "rules": Rules(4), "preset": "hoyle"},
     "preset='hoyle' is not allowed with rules=: .*give the preset without rules="),
])
def test_odd_agents_and_arguments_are_refused_in_words_before_any_play(call, says, monkeypatch):
    import agents.evaluate as evaluate_module

    monkeypatch.setattr(evaluate_module, "play_tournament", lambda *args, **kwargs: pytest.fail("played"))
    with pytest.raises(ValueError, match=says):
        evaluate(**{"num_players": 4, "deals": 2, "seed": 0, **call})


def test_a_checkpoint_path_is_played_as_the_same_path_as_a_str():
    path = CHECKPOINT_DIR / "ppo.pt"
    as_text = evaluate([str(path), "random"], 3, deals=4, seed=1, paired_with=str(path))
    as_path = evaluate([path, "random"], 3, deals=4, seed=1, paired_with=path)  # was "is not an agent"
    assert json_text({**as_path, "seconds": 0}) == json_text({**as_text, "seconds": 0})


def test_agent_objects_and_rules_options():
    agent = load_agent("spoiler")
    report = evaluate([agent, "greedy"], 3, deals=50, seed=0, jink_bonus=1)
    assert set(report["agents"]) == {"spoiler", "greedy"}
    assert report["rules"]["jink_bonus"] == 1
    report = evaluate(["oracle", "spoiler"], 4, deals=30, seed=0)
    assert report["agents"]["oracle"]["mean_equity"] > 0


def test_check_against_baselines_reports_the_agents_own_seat_at_each_baseline_table():
    lines = []
    agent = load_agent("random", seed=3)
    agent.name = "spoiler"  # a name clashing with a baseline's: its own figures are still reported
    reports = check_against_baselines(agent, 3, deals=20, seed=5, say=lines.append)
    assert list(reports) == list(BASELINES) and len(lines) == len(BASELINES)
    for line, (baseline, report) in zip(lines, reports.items()):
        mine = report["entries"][0]
        assert mine["agent"] == report["lineup"][0] != report["lineup"][1] == report["lineup"][2]
        assert line == (f"vs 2 x {baseline}: equity/hand {mine['mean_equity']:+.3f} "
                        f"± {mine['equity_ci95']:.3f} over 60 hands")


def lower(figures):
    return figures["mean_equity"] - figures["equity_ci95"]


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_greedy_beats_random_by_five_points_of_share(num_players):
    figures = evaluate(["greedy", "random"], num_players, deals=1500, seed=10)["agents"]["greedy"]
    assert figures["pool_share"] - figures["pool_share_ci95"] > figures["fair_share"] + 0.05
    assert lower(figures) > 0


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_spoiler_beats_greedy(num_players):
    figures = evaluate(["spoiler", "greedy"], num_players, deals=1500, seed=20)["agents"]["spoiler"]
    assert lower(figures) > 0
    assert figures["pool_share"] > figures["fair_share"]


def test_pimc_beats_spoiler():
    # 32 samples (a quarter of the default) keep the test quick; over seeds 30-33 the lower
    # end of the interval ranged 0.07-0.13, so the check is far from its edge.
    spec = "pimc:samples=32"
    figures = evaluate([spec, "spoiler"], 4, deals=300, seed=30)["agents"][spec]
    assert lower(figures) > 0


def test_command_line_json_and_table():
    command = [sys.executable, "-m", "agents.evaluate", "--players", "3", "--agents", "greedy,random",
               "--deals", "40", "--seed", "1"]
    out = subprocess.run(command + ["--json"], capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    assert report["num_players"] == 3 and report["deals"] == 40 and report["seed"] == 1
    assert set(report["agents"]) == {"greedy", "random"}
    for key in ("mean_equity", "equity_ci95", "mean_chips", "chips_ci95", "pool_share",
                "pool_share_ci95", "fair_share", "jink_attempts", "jink_successes"):
        assert key in report["agents"]["greedy"]
    assert "spoil_rate" in report["table"]
    text = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert "equity / hand" in text and "spoil rate" in text
    bad = subprocess.run([sys.executable, "-m", "agents.evaluate", "--agents", "greedy,nobody", "--deals", "5"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown agent" in bad.stderr


def not_json(constant: str):
    raise AssertionError(f"{constant} is not JSON (RFC 8259): strict parsers refuse the whole report")


def test_json_of_a_figure_with_nothing_to_measure_it_on_is_null_not_nan(capsys):
    # one deal: no interval; no fellow spoiler to overtake: no friendly-fire rate. Python wrote NaN.
    assert main(["--players", "2", "--agents", "random,random", "--deals", "1", "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out, parse_constant=not_json)
    figures = report["agents"]["random"]
    assert figures["equity_ci95"] is None and figures["pool_share_ci95"] is None
    assert figures["friendly_fire_rate"] is None and figures["mean_equity"] == 0.0


def test_json_text_writes_null_for_every_float_that_is_not_a_number():
    from spoilfive_env.cli import json_text

    value = {"a": float("nan"), "b": [1.5, float("inf"), {"c": -float("inf")}], "d": (np.float64("nan"), 2), "e": "nan"}
    assert json.loads(json_text(value), parse_constant=not_json) == {
        "a": None, "b": [1.5, None, {"c": None}], "d": [None, 2], "e": "nan"}


def test_an_agent_paired_with_itself_differs_by_exactly_nothing():
    # random draws from its streams at every move: only identical streams on identical deals give 0.
    report = evaluate(["random", "spoiler"], 3, deals=120, seed=4, paired_with="random")
    paired = report["paired"]
    assert paired["agent"] == "random" and paired["rival"] == "random"
    assert paired["equity_difference"] == 0 and paired["equity_difference_ci95"] == 0
    assert paired["pool_share_difference"] == 0 and paired["pool_share_difference_ci95"] == 0
    assert paired["mean_equity"] == pytest.approx(report["agents"]["random"]["mean_equity"])
    assert "paired on the same deals, random minus random" in format_report(report)


@pytest.mark.parametrize("partnerships", [False, True])
def test_a_pairing_replays_the_two_tournaments_it_compares(partnerships):
    # In partnerships a won pool counts for both partners' seats, as the tournament's own share counts it.
    lineup = ["pimc:samples=4", "greedy", "spoiler"]
    report = evaluate(lineup, 4, deals=150, seed=6, paired_with="random", partnerships=partnerships)
    paired = report["paired"]
    alone = evaluate(lineup, 4, deals=150, seed=6, partnerships=partnerships)["agents"]["pimc:samples=4"]
    rival = evaluate(["random", *lineup[1:]], 4, deals=150, seed=6, partnerships=partnerships)["agents"]["random"]
    assert paired["mean_equity"] == pytest.approx(alone["mean_equity"])
    assert paired["pool_share"] == pytest.approx(alone["pool_share"])
    assert paired["rival_mean_equity"] == pytest.approx(rival["mean_equity"])
    assert paired["rival_pool_share"] == pytest.approx(rival["pool_share"])
    # Each side's own intervals, as its tournament alone reports them: the rival's need no second run.
    for side, figures in (("", alone), ("rival_", rival)):
        assert paired[f"{side}equity_ci95"] == pytest.approx(figures["equity_ci95"])
        assert paired[f"{side}pool_share_ci95"] == pytest.approx(figures["pool_share_ci95"])
    assert f"against {rival['pool_share']:.3f} ± {rival['pool_share_ci95']:.3f})" in format_report(report)
    assert paired["equity_difference"] == pytest.approx(alone["mean_equity"] - rival["mean_equity"])
    assert paired["pool_share_difference"] == pytest.approx(alone["pool_share"] - rival["pool_share"])
    assert paired["equity_difference"] > 0 and paired["equity_difference_ci95"] > 0


def test_the_paired_share_interval_agrees_with_a_bootstrap_over_deals():
    rules, deals, seed = Rules(num_players=3), 400, 8
    hands, turnups, dealers = make_deals(3, deals, seed)
    outcomes = []
    for first in ("greedy", "random"):
        specs, lineup = distinct_specs([first, "spoiler"], 3)
        outcomes.append(play_tournament(build_agents(specs, seed), lineup, rules, hands, turnups, dealers, seed=seed))
    entries = lineup == 0
    paired = paired_difference(*outcomes, rules, entries, deals, "greedy", "random")

    def per_deal(outcome):
        mine = entries[outcome["entry_of_seat"]]
        won = ((outcome["winner"][:, None] == np.arange(3)) & mine).reshape(deals, -1).sum(axis=1)
        return won, (outcome["winner"] >= 0).reshape(deals, -1).sum(axis=1)

    (won, pools), (rival_won, rival_pools) = per_deal(outcomes[0]), per_deal(outcomes[1])
    rng = np.random.default_rng(0)
    draws = rng.integers(0, deals, size=(4000, deals))
    differences = won[draws].sum(1) / pools[draws].sum(1) - rival_won[draws].sum(1) / rival_pools[draws].sum(1)
    share_difference = won.sum() / pools.sum() - rival_won.sum() / rival_pools.sum()
    assert paired["pool_share_difference"] == pytest.approx(share_difference)
    assert paired["pool_share_difference_ci95"] == pytest.approx(1.96 * differences.std(), rel=0.1)


class _RecordingBar:
    """Stands in for tqdm: keeps every update, so the tests see what a bar was told."""

    made: list = []

    def __init__(self, total=None, desc=None, disable=False, **_):
        self.total, self.desc, self.disable, self.updates, self.closed = total, desc, disable, [], False
        self.n = 0.0
        _RecordingBar.made.append(self)

    def update(self, amount=1):
        self.updates.append(amount)
        self.n += amount

    def close(self):
        self.closed = True


def test_the_progress_bar_counts_every_trick_once_and_changes_no_figure(monkeypatch):
    import agents.evaluate as tournament

    quiet = evaluate(["random", "spoiler"], 3, deals=300, seed=8, paired_with="greedy")
    monkeypatch.setattr(tournament, "tqdm", _RecordingBar)
    _RecordingBar.made = []
    shown = evaluate(["random", "spoiler"], 3, deals=300, seed=8, paired_with="greedy", progress=True)
    for report in (quiet, shown):
        report.pop("seconds")
    assert shown == quiet  # the bar draws no random number and changes no figure
    first, rival = _RecordingBar.made
    assert first.desc == "random, 3 players" and rival.desc == "greedy (paired), 3 players"
    for bar in (first, rival):
        assert not bar.disable and bar.closed and bar.total == 300 * 3 * 5  # five tricks a hand
        assert min(bar.updates) >= 0 and sum(bar.updates) == pytest.approx(bar.total)
        assert len(bar.updates) > 10  # moved on at every step, not once at the end


def test_the_bar_stops_at_its_total_when_thirds_of_a_trick_overshoot_it():
    import io
    import warnings

    from tqdm import TqdmWarning, tqdm

    from agents.evaluate import _advance

    steps = 0.0
    for _ in range(3000):  # one by one, as tqdm's bar.n adds them (sum() rounds exactly from Python 3.12 on)
        steps += 1 / 3
    assert steps > 1000  # what a 3-player tournament's steps add up to
    with warnings.catch_warnings():
        warnings.simplefilter("error", TqdmWarning)  # tqdm: "clamping frac to range [0, 1]"
        bar = tqdm(total=1000, file=io.StringIO(), mininterval=0)
        for _ in range(3000):
            _advance(bar, 1 / 3)
        bar.close()
    assert bar.n == 1000


def test_the_command_line_shows_the_bar_unless_quiet(capsys):
    from agents.evaluate import main

    assert main(["--players", "3", "--agents", "greedy,random", "--deals", "20", "--json"]) == 0
    shown = capsys.readouterr()
    assert "greedy, 3 players" in shown.err and "trick" in shown.err
    assert main(["--players", "3", "--agents", "greedy,random", "--deals", "20", "--json", "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == ""
    assert json.loads(quiet.out)["agents"] == json.loads(shown.out)["agents"]


@pytest.mark.parametrize("players, noted", [(4, False), (8, True), (2, True)])
def test_a_trained_network_at_a_table_size_its_run_never_saw_is_noted_not_refused(capsys, players, noted):
    """The shipped ppo trained at 3 to 6 players (its checkpoint's arguments say so): at 8 or 2 the command notes
    it on standard error, one line, and plays; at 4 it says nothing. A rule-based agent is never noted."""
    pytest.importorskip("torch")
    assert load_agent("ppo").trained_players == (3, 6) and not hasattr(load_agent("spoiler"), "trained_players")
    assert main(["--players", str(players), "--agents", "ppo,spoiler", "--deals", "2", "--quiet"]) == 0
    err = capsys.readouterr().err
    note = f"note: ppo trained at 3 to 6 players, never at {players}: it plays there all the same"
    assert err.strip() == (note if noted else "")


@pytest.mark.parametrize("args, sizes", [
    ({"min_players": 3, "max_players": 5}, (3, 5)),
    ({"min_players": 3, "max_players": 5, "init_from": "ppo"}, None),  # its start trained at other sizes too
    ({"min_players": 3, "max_players": 6, "distilled": {"players": [4, 3, 5, 6, 2]}}, None),
    ({"min_players": 3}, None), (None, None), ([3, 5], None), ({"min_players": True, "max_players": 5}, None)])
def test_a_checkpoint_tells_its_training_table_sizes_only_where_its_arguments_hold_its_whole_history(args, sizes):
    pytest.importorskip("torch")
    from agents.policy import trained_table_sizes

    assert trained_table_sizes(args) == sizes


def test_a_tournaments_deals_are_whole_deals_dealt_by_every_seat():
    """Each deal gives every seat five cards and turns up a sixth, all different; the dealer is any seat alike."""
    hands, turnups, dealers = make_deals(4, 2000, seed=3)
    assert hands.shape == (2000, 4, 5) and turnups.shape == dealers.shape == (2000,)
    cards = np.concatenate([hands.reshape(2000, 20), turnups[:, None]], axis=1)
    assert cards.min() >= 0 and cards.max() < 52
    assert all(len(set(row)) == 21 for row in cards.tolist())
    counts = np.bincount(dealers, minlength=4)
    assert len(counts) == 4 and (np.abs(counts - 500) < 90).all()  # about 4 standard deviations
    again = make_deals(4, 2000, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip((hands, turnups, dealers), again))


def test_in_rotation_r_each_seat_holds_the_entry_r_places_to_its_right():
    """Game ``deal * n + r`` seats lineup entry ``(s - r) % n`` in seat ``s``: rotation 1 moves every entry one seat
    to the left, and each entry sits in every seat once a deal."""
    rules = Rules(num_players=3)
    hands, turnups, dealers = make_deals(3, 4, seed=0)
    specs, lineup = distinct_specs(["greedy", "spoiler", "random"], 3)
    out = play_tournament(build_agents(specs, 0), lineup, rules, hands, turnups, dealers)
    entry = out["entry_of_seat"]
    assert entry.shape == (12, 3)
    np.testing.assert_array_equal(entry[:3], [[0, 1, 2], [2, 0, 1], [1, 2, 0]])
    np.testing.assert_array_equal(entry[3:], np.tile(entry[:3], (3, 1)))


def test_a_shard_that_starts_at_a_later_block_plays_it_as_the_whole_run_does():
    """play_tournament given the deals of block 1 alone (``first_block=1``, as a Ray shard is) plays them exactly as
    the whole run plays its second block: each agent's stream is seeded by the block's place in the tournament."""
    from agents.sharding import BLOCK_DEALS

    rules = Rules(num_players=3)
    hands, turnups, dealers = make_deals(3, 2 * BLOCK_DEALS, seed=4)
    specs, lineup = distinct_specs(["random", "greedy"], 3)
    whole = play_tournament(build_agents(specs, 4), lineup, rules, hands, turnups, dealers, seed=4)
    later = slice(BLOCK_DEALS, 2 * BLOCK_DEALS)
    shard = play_tournament(build_agents(specs, 4), lineup, rules, hands[later], turnups[later], dealers[later],
                            seed=4, first_block=1)
    for key, value in shard.items():
        assert np.array_equal(value, whole[key][3 * BLOCK_DEALS:]), key


def test_the_blocks_of_the_shards_hold_every_deal_once_in_order():
    """A tournament's deals cut into blocks (the last one may be short), and the blocks into shards (as many as
    asked, or one a block), cover every deal once, in order."""
    from agents.sharding import BLOCK_DEALS, num_blocks, shard_ranges

    for blocks in (1, 2, 7, 40):
        for shards in (1, 3, 8, 100):
            ranges = shard_ranges(blocks, shards)
            assert [b for first, stop in ranges for b in range(first, stop)] == list(range(blocks))
            assert len(ranges) == min(blocks, shards)
    for deals in (1, BLOCK_DEALS - 1, BLOCK_DEALS, BLOCK_DEALS + 1, 3 * BLOCK_DEALS + 17):
        assert num_blocks(deals) == -(-deals // BLOCK_DEALS)
        for shards in (1, 2, 5):
            covered = [deal for first, stop in shard_ranges(num_blocks(deals), shards)
                       for deal in range(deals)[first * BLOCK_DEALS:stop * BLOCK_DEALS]]
            assert covered == list(range(deals)), (deals, shards)


class _Ref:
    """A stand-in task's result (hashable, as Ray's object refs are)."""

    def __init__(self, value):
        self.value = value


class StandInRay:
    """The parts of Ray that :func:`agents.sharding.run_on_ray` calls, played in this process: a task runs when it
    is submitted, and ``wait`` hands back the last one first (a cluster finishes them in any order)."""

    def __init__(self, cpus: int):
        self.cpus, self.tasks = cpus, []

    def cluster_resources(self):
        return {"CPU": float(self.cpus), "GPU": 1.0, "memory": 1e9}

    def remote(self, **options):
        return lambda function: SimpleNamespace(remote=lambda *args: self._submit(function, args))

    def _submit(self, function, args):
        self.tasks.append(args)
        return _Ref(function(*args))

    def put(self, value):
        return value

    def wait(self, refs, num_returns=1):
        return refs[-num_returns:], refs[:-num_returns]

    def get(self, refs):
        return [ref.value for ref in refs]


def test_shards_played_as_tasks_merge_into_the_single_process_run_one_task_a_cpu_by_default(monkeypatch):
    """run_on_ray cuts the blocks into shards, plays each as a task from its own first block and puts the parts back
    in deal order, whatever order the tasks finish in: the outcome is the single-process one, deal for deal. With
    no ``shards`` there is one task per CPU of the cluster (not per GPU). No cluster: Ray's calls are stood in for.
    Mutants killed: the tasks' parts merged in the order they finish (S28), a shard played from block 0 (S19, S25),
    a deal played by two shards (S24), every shard given all the dealers (S30), one task whatever the CPUs (S23),
    GPUs counted as CPUs (S18)."""
    import agents.sharding
    from agents.sharding import BLOCK_DEALS, run_on_ray

    rules = Rules(num_players=3)
    hands, turnups, dealers = make_deals(3, 2 * BLOCK_DEALS + 17, seed=4)
    specs, lineup = distinct_specs(["random", "greedy"], 3)
    whole = play_tournament(build_agents(specs, 4), lineup, rules, hands, turnups, dealers, seed=4)
    for shards, tasks in ((None, 3), (2, 2)):
        ray = StandInRay(cpus=3)
        monkeypatch.setattr(agents.sharding, "connect", lambda address, option, ray=ray: ray)
        out = run_on_ray(specs, lineup, rules, hands, turnups, dealers, 4, 8192, address=True, shards=shards)
        assert len(ray.tasks) == tasks
        # each task is told the tournament's place of its first block, and gets that block's deals on
        assert [task[7] for task in ray.tasks] == ([0, 1, 2] if tasks == 3 else [0, 2])
        assert sum(len(task[4]) for task in ray.tasks) == len(turnups)
        assert out.keys() == whole.keys()
        for key, value in whole.items():
            np.testing.assert_array_equal(out[key], value, err_msg=f"{key} with shards={shards}")


def test_run_on_ray_refuses_bad_shards_before_joining_a_cluster(monkeypatch):
    """Called directly (not through evaluate, which checks too), a bad ``shards`` is refused before any Ray work.
    Mutant killed: run_on_ray's own check of shards left out (S29)."""
    import agents.sharding

    monkeypatch.setattr(agents.sharding, "connect", lambda *args, **kwargs: pytest.fail("Ray was joined"))
    rules = Rules(num_players=3)
    hands, turnups, dealers = make_deals(3, 4, seed=0)
    specs, lineup = distinct_specs(["greedy"], 3)
    for shards in (0, -1, 1.5, "2"):
        with pytest.raises(ValueError, match=f"shards={shards!r} is not allowed: it must be a positive integer"):
            agents.sharding.run_on_ray(specs, lineup, rules, hands, turnups, dealers, 0, 64, shards=shards)


def test_ray_false_plays_here_and_any_address_asks_for_a_cluster():
    """evaluate's ``ray=False`` is the same as None: play in this process (so ``shards`` is refused with it), while
    True, '' (a local cluster), 'auto' and 'HOST:PORT' ask for Ray.
    Mutant killed: ray=False taken as a cluster's address (S20)."""
    from agents.sharding import plays_on_ray

    assert not plays_on_ray(None) and not plays_on_ray(False)
    assert all(plays_on_ray(value) for value in (True, "", "auto", "127.0.0.1:6379"))
    with pytest.raises(ValueError, match="shards=2 is for ray="):
        evaluate(["greedy", "random"], 3, deals=2, ray=False, shards=2)


def test_each_agent_is_reseeded_every_256_deals_from_seed_agent_and_block():
    """README: deals are played in blocks of 256, and agent ``a`` draws in block ``b`` from a stream reseeded
    from ``SeedSequence([seed, a, b])`` (``block_seed``: its first two 32-bit words, high word first), so a
    kept report replays to the digit. An agent with its own reseed is played one block at a time: the seeds it
    is given are those of each block in turn.
    Mutants killed: blocks of 128 deals (S01), agent and block swapped in the seed (S02), the two words swapped
    (S03), the low word dropped (S04)."""
    from agents.sharding import block_seed

    seeds = []

    class Recording(OwnStream):
        def reseed(self, seed):
            super().reseed(seed)
            seeds.append(seed)

    evaluate(["greedy", Recording(0)], 2, deals=300, seed=6)  # 300 deals: blocks 0 and 1
    words = [np.random.SeedSequence([6, 1, block]).generate_state(2, np.uint32) for block in (0, 1)]
    expected = [int(high) << 32 | int(low) for high, low in words]
    assert seeds == expected == [block_seed(6, 1, 0), block_seed(6, 1, 1)]
    assert all(seed >= 2**32 and seed % 2**32 for seed in expected)  # (both words count)


class OwnStream(Agent):
    """Random moves from a stream of its own, restarted by ``reseed``: random state beyond ``rng``."""

    name = "own_stream"

    def reseed(self, seed):
        super().reseed(seed)
        self.own = np.random.default_rng(seed)

    def act_batch(self, observations, masks):
        return sample_legal(masks, self.own)


def test_an_agent_with_random_state_of_its_own_plays_each_block_from_its_own_reseed():
    """An agent whose class overrides reseed is played one block at a time, so each block's games draw from that
    block's reseed whatever the batch size: the figures of two blocks are the same in batches of one block or all."""
    from agents.sharding import BLOCK_DEALS

    reports = [evaluate([OwnStream(0), "greedy"], 2, BLOCK_DEALS + 8, seed=1, batch_size=size) for size in (1, 8192)]
    for report in reports:
        report.pop("seconds")
    assert json.dumps(reports[0], sort_keys=True) == json.dumps(reports[1], sort_keys=True)


class Watcher(Agent):
    """Plays each game's first legal action and records, for every game it is asked about, whether that game has
    ended (a cheating agent is handed the core: ``act_batch_state``)."""

    name = "watcher"
    cheats = True

    def __init__(self):
        super().__init__(0)
        self.asked_about_ended = []

    def act_batch_state(self, core, games, observations, masks):
        self.asked_about_ended += core.done[games].tolist()
        return masks.argmax(axis=1)


def test_a_game_that_has_ended_asks_no_agent_for_a_move():
    """Hands end after three, four or five tricks, so a batch holds finished games beside ones still in play. A
    finished game waits for the others and asks nobody: a random agent asked about it would spend draws of its block's
    stream, and every later game of the block would play differently.
    Mutant killed: finished games' seats still asked for a move (E36)."""
    rules = Rules(num_players=3)
    hands, turnups, dealers = make_deals(3, 12, seed=0)
    watcher = Watcher()
    out = play_tournament([watcher], np.zeros(3, np.int64), rules, hands, turnups, dealers)
    played = (out["trick_winner"] >= 0).sum(axis=1)
    assert played.min() < 5 == played.max()  # games of different lengths in the one batch
    assert len(watcher.asked_about_ended) > 0 and not any(watcher.asked_about_ended)


def test_checked_actions_hands_back_int64_whatever_integer_kind_it_was_given():
    """The tournament's and the opponents' actions are int64 (B,) as documented, from an agent's int32 or uint8."""
    masks = np.ones((3, NUM_ACTIONS), bool)
    for kind in (np.int32, np.uint8, np.int64):
        actions = checked_actions("agent 'x'", np.array([0, 105, 51], kind), masks)
        assert actions.dtype == np.int64 and actions.tolist() == [0, 105, 51]


def test_each_seat_s_chips_are_its_net_change_in_the_hand_and_its_tricks_the_tricks_it_took():
    """Default rules (RULES.md, "Chips, the pool and a game"): every seat antes 1 into the pool; the winner takes the
    pool of n, a successful jinker also 2 chips from every other seat, and a spoiled pool stays in the middle. A pool
    is won by taking three tricks (a jink: all five). The figures a user reads are counted from these two arrays."""
    rules = Rules(num_players=4)
    hands, turnups, dealers = make_deals(4, 100, seed=2)
    specs, lineup = distinct_specs(["greedy", "random"], 4)
    out = play_tournament(build_agents(specs, 2), lineup, rules, hands, turnups, dealers, seed=2)
    won = np.flatnonzero(out["winner"] >= 0)
    jinked = np.flatnonzero(out["jink_won"])
    assert 0 < len(won) < len(out["winner"]) and len(jinked)  # spoils, pools won and a jink to count
    expected = np.full(out["chips"].shape, -rules.ante)
    expected[won, out["winner"][won]] += 4 * rules.ante
    expected[jinked] -= rules.jink_bonus
    expected[jinked, out["winner"][jinked]] += 4 * rules.jink_bonus
    np.testing.assert_array_equal(out["chips"], expected)  # net of the 20 chips each seat started with
    tricks = out["tricks"]
    assert (tricks.sum(axis=1) <= 5).all()
    assert (tricks[won, out["winner"][won]] >= 3).all() and (tricks[jinked, out["winner"][jinked]] == 5).all()


class Nameless:
    """A user's agent object with no ``name``: it plays as greedy does."""

    def __init__(self):
        self.greedy = load_agent("greedy")

    def act_batch(self, observations, masks):
        return self.greedy.act_batch(observations, masks)


def test_agent_objects_of_one_name_or_of_none_are_labelled_apart():
    # The labels key the report: two agents under one label would have one agent's figures overwrite the other's.
    bots = [load_agent(spec) for spec in ("greedy", "spoiler", "random")]
    for bot in bots:
        bot.name = "bot"
    report = evaluate(bots, 3, deals=4, seed=0, paired_with=load_agent("random"))
    assert report["lineup"] == ["bot", "bot'", "bot''"] and list(report["agents"]) == report["lineup"]
    assert report["paired"]["rival"] == "random"  # a rival object goes by its own name too
    report = evaluate([Nameless(), Nameless()], 3, deals=4, seed=0)
    assert report["lineup"] == ["agent0", "agent1", "agent1"]  # the agent's index, as any label, once each


def test_a_pairing_names_the_first_agent_and_its_rival_each_in_its_own_place():
    # "agent minus rival": the labels' order is the sign of the difference a reader takes from the report.
    report = evaluate(["greedy", "random"], 3, deals=4, seed=0, paired_with="spoiler")
    assert (report["paired"]["agent"], report["paired"]["rival"]) == ("greedy", "spoiler")
    assert "paired on the same deals, greedy minus spoiler in its seats" in format_report(report)


def test_a_report_says_which_version_measured_it_and_which_agent_best_stood_for():
    # A report read later (a kept results file) must name what it measured: "best" changes from release to release.
    report = evaluate(["greedy", "random"], 3, deals=2, seed=0)
    assert report["version"] == spoilfive_env.__version__ and report["best"] == BEST != "best"


def test_each_lineup_entry_is_reported_under_its_own_agent_and_the_entries_add_up_to_it():
    report = evaluate(["random", "greedy", "random"], 3, deals=30, seed=1)
    assert [entry["agent"] for entry in report["entries"]] == report["lineup"] == ["random", "greedy", "random"]
    entries, agents = report["entries"], report["agents"]
    assert agents["random"]["pools_won"] == entries[0]["pools_won"] + entries[2]["pools_won"]
    assert agents["greedy"]["pools_won"] == entries[1]["pools_won"]
    # The table's hands are every rotation of every deal, as the report's own count.
    assert report["table"]["hands"] == report["hands"] == 30 * 3 == report["deals"] * report["rotations"]


def test_the_command_line_s_values_and_defaults_reach_the_tournament(monkeypatch):
    """What ``python -m agents.evaluate`` plays: the documented defaults (4 players, 1000 deals, seed 0, a bar) and
    each flag's value, the ``--paired-with`` agent stripped of blanks as ``--agents``' items are."""
    import agents.evaluate as evaluate_module

    class Played(Exception):
        pass

    calls = []

    def stand_in(specs, players, deals, seed, rules, batch_size, ray, shards, paired_with, progress):
        calls.append((specs, players, deals, seed, rules.num_players, paired_with, progress))
        raise Played  # nothing to play: the values are what is tested

    monkeypatch.setattr(evaluate_module, "_evaluate", stand_in)
    with pytest.raises(Played):
        main(["--agents", "greedy"])
    with pytest.raises(Played):
        main(["--agents", "greedy, random", "--players", "3", "--deals", "7", "--seed", "9",
              "--paired-with", " spoiler ", "--quiet"])
    assert calls == [(["greedy"], 4, 1000, 0, 4, None, True), (["greedy", "random"], 3, 7, 9, 3, "spoiler", False)]


def test_the_human_report_shows_each_figure_beside_its_own_interval():
    """A report made by hand: each agent's row holds its equity, chips and pool share with their own intervals and
    its own fair share (seats / n), its spoiling row its stop rate, friendly fire and friendly fire by choice with
    their intervals and counts (the chances less the forced ones by choice), and the paired line the difference
    with its own interval."""
    def figures(seats, equity, chips, share):
        return {"seats": seats, "mean_equity": equity, "equity_ci95": 0.05, "mean_chips": chips, "chips_ci95": 0.125,
                "pool_share": share, "pool_share_ci95": 0.02, "fair_share": seats / 4, "jink_successes": 1,
                "jink_attempts": 3, "stop_rate": share / 2, "stop_rate_ci95": 0.03, "threats_faced": 10 * seats,
                "friendly_fire_rate": share, "friendly_fire_rate_ci95": 0.04, "overtake_chances": 8 * seats,
                "forced_overtakes": 5 * seats, "friendly_fire_rate_unforced": 1 - share,
                "friendly_fire_rate_unforced_ci95": 0.0625}

    report = {"num_players": 4, "deals": 9, "hands": 36, "seed": 1, "seconds": 2.0, "lineup": ["a", "b", "b", "b"],
              "agents": {"a": figures(1, 0.25, -0.5, 0.375), "b": figures(3, -0.25, 0.5, 0.625)},
              "table": {"spoil_rate": 0.5, "spoil_rate_ci95": 0.1, "two_trick_conversion": 0.75,
                        "two_trick_conversion_ci95": 0.025, "two_trick_conversion_live": 0.875,
                        "two_trick_conversion_live_ci95": 0.0375},
              "paired": {"agent": "a", "rival": "c", "equity_difference": 0.125, "equity_difference_ci95": 0.0625,
                         "mean_equity": 0.25, "equity_ci95": 0.05, "rival_mean_equity": 0.125,
                         "rival_equity_ci95": 0.04, "pool_share_difference": 0.05, "pool_share_difference_ci95": 0.01,
                         "pool_share": 0.375, "pool_share_ci95": 0.02, "rival_pool_share": 0.325,
                         "rival_pool_share_ci95": 0.03}}
    lines = format_report(report).splitlines()
    rows = [line.split() for line in lines if line.split()[:1] in (["a"], ["b"])]
    assert rows == [["a", "1", "+0.250", "±", "0.050", "-0.500", "±", "0.125", "0.375", "±", "0.020", "(0.250)", "1/3"],
                    ["b", "3", "-0.250", "±", "0.050", "+0.500", "±", "0.125", "0.625", "±", "0.020", "(0.750)", "1/3"],
                    ["a", "0.188", "±", "0.030", "(10)", "0.375", "±", "0.040", "(8)", "0.625", "±", "0.062", "(3)"],
                    ["b", "0.312", "±", "0.030", "(30)", "0.625", "±", "0.040", "(24)", "0.375", "±", "0.062", "(9)"]]
    paired = next(line for line in lines if line.startswith("paired on the same deals"))
    assert "a minus c in its seats: equity / hand +0.125 ± 0.062 (+0.250 ± 0.050 against +0.125 ± 0.040)" in paired
    assert "pool share +5.0 ± 1.0 points (0.375 ± 0.020 against 0.325 ± 0.030)" in paired
    assert ("spoil rate 0.500 ± 0.100; a player who reached two tricks went on to win 75.0% ± 2.5% of the time, "
            "87.5% ± 3.8% with a trick still to play") in lines
    report["table"].update(two_trick_conversion=float("nan"), two_trick_conversion_ci95=float("nan"))
    assert ("spoil rate 0.500 ± 0.100; a player who reached two tricks went on to win - ± - of the time, "
            "87.5% ± 3.8% with a trick still to play") in format_report(report).splitlines()  # none did: no rate


def test_the_human_report_of_one_deal_shows_a_dash_for_each_interval_not_nan(capsys):
    assert main(["--players", "3", "--agents", "greedy,random", "--deals", "1", "--paired-with", "spoiler",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "+1.000 ± -" in out and "spoil rate 0.000 ± -" in out
    assert "(0.667 ± - against 0.500 ± -)" in out
