"""The belief probe: past states rebuilt from a sampled deal, and the likelihood of the plays."""

from __future__ import annotations

import numpy as np
import pytest

from agents import beliefs, load_agent
from agents.beliefs import PlayModel, belief_accuracy, play_log_likelihood, seat_zero_decisions, walked_back
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.determinize import sample_hidden
from spoilfive_env.rules import Rules


@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_the_true_deal_walked_back_gives_each_player_his_own_observation(num_players):
    """Walked back from the true hidden hands, every past state is the one the player saw: the
    rule-based player it was (who reads only his own observation) makes the same play there,
    with probability 1, at every step of every hand, robs included."""
    rules = Rules(num_players=num_players)
    core = SpoilFiveCore(60, rules=rules, seed=num_players)
    player = load_agent("spoiler")
    exact = PlayModel("spoiler", floor=0.0)
    plays = 0
    for decide, now, history in seat_zero_decisions(core, player):
        truth = core.holder[decide]
        discards = np.where(core.robber[decide] >= 0, core.discard[decide], -1).astype(np.int8)
        trick, whole = play_log_likelihood(exact, now, truth, discards, history, rules)
        assert np.all(whole == 0) and np.all(trick == 0)
        for rows, then, _, _ in history:  # a discard only where somebody had robbed by then
            _, back_discards = walked_back(now.take(rows), truth[rows], discards[rows], then)
            assert np.all((back_discards >= 0) == (then.robber >= 0))
        plays += sum(len(rows) for rows, *_ in history)
    assert plays > 100 * num_players  # the check saw many past plays
    assert core.robber.max() >= 0  # and hands where somebody robbed


def test_a_sampled_deal_is_less_likely_than_the_truth():
    """In sampled deals the same plays are often not the model's choice: the likelihood is informative."""
    rules = Rules(num_players=4)
    core = SpoilFiveCore(40, rules=rules, seed=7)
    exact = PlayModel("spoiler", floor=0.0)
    rng = np.random.default_rng(0)
    sampled, true = [], []
    for decide, now, history in seat_zero_decisions(core, load_agent("spoiler")):
        holders, discards = sample_hidden(now, rng, rules)
        sampled.append(play_log_likelihood(exact, now, holders, discards, history, rules)[1])
        truth_discards = np.where(core.robber[decide] >= 0, core.discard[decide], -1).astype(np.int8)
        true.append(play_log_likelihood(exact, now, core.holder[decide], truth_discards, history, rules)[1])
    sampled, true = np.concatenate(sampled), np.concatenate(true)
    assert np.all(true == 0)  # in the true deal every play was the model's choice
    assert np.all((sampled == 0) | (sampled <= beliefs.UNLIKELY))  # elsewhere a play that was not
    assert (sampled < 0).mean() > 0.3


def test_with_the_players_own_model_the_plays_tell_about_the_hands():
    result = belief_accuracy(3, "spoiler", "spoiler", games=60, samples=32, seed=1)
    assert result["decisions"] > 200 and 0.05 < result["uniform_accuracy"] < 0.2
    # Every play of the hand tells more than the current trick's, and both more than nothing.
    assert result["hand_gain"] - result["hand_gain_ci95"] > result["trick_gain"] > 0


def test_a_rule_models_likelihood_mixes_its_floor_evenly_over_the_legal_moves():
    """A rule-based model gives its own move ``1 - floor + floor / k`` and any other of the ``k`` legal moves
    ``floor / k``; a move the rules forbid there gets the least log-likelihood."""
    from agents.baselines import numpy_core_rule_actions

    core = SpoilFiveCore(40, rules=Rules(num_players=3), seed=4)
    masks = core.legal_mask()
    own = numpy_core_rule_actions(core, masks, spoil=True)
    other = np.array([np.flatnonzero(row & (np.arange(len(row)) != move))[0] for row, move in zip(masks, own)])
    legal = masks.sum(axis=1)
    model = PlayModel("spoiler", floor=0.2)
    np.testing.assert_allclose(model.log_likelihood(core, own), np.log(0.8 + 0.2 / legal))
    np.testing.assert_allclose(model.log_likelihood(core, other), np.log(0.2 / legal))
    illegal = np.array([np.flatnonzero(~row)[0] for row in masks])
    assert (model.log_likelihood(core, illegal) == beliefs.UNLIKELY).all()


def test_a_network_model_scores_every_play():
    result = belief_accuracy(3, "spoiler", "ppo-20min", games=10, samples=8, seed=2)
    assert result["model"] == "ppo-20min" and result["decisions"] > 20
    assert np.isfinite(result["hand_gain"]) and np.isfinite(result["trick_gain"])


@pytest.mark.parametrize("argv, says", [
    (["--floor", "2"], "--floor 2 is not allowed: it must be above 0 and at most 1"),
    (["--model", "pimc"], "--model: model 'pimc' is not allowed: choose spoiler or greedy, or a policy checkpoint"),
    (["--agents", "nobody"], "unknown agent 'nobody'"),
    (["--games", "0"], "--games: '0' is not allowed: give a whole number of at least 1"),
    (["--players", "11"], "2 to 10"),
    (["--games", "1000000000"], "at most 1,000,000"),
    (["--games", "1000", "--samples", "100000"], "at most 1,000,000"),
])
def test_bad_flags_are_one_line(argv, says, capsys):
    with pytest.raises(SystemExit) as stopped:
        beliefs.main(argv)
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert says in error and len(error.strip().splitlines()) == 1


def test_the_command_prints_the_figures(capsys):
    assert beliefs.main(["--agents", "spoiler", "--model", "greedy", "--games", "8", "--samples", "4", "--json"]) == 0
    import json

    result = json.loads(capsys.readouterr().out)
    assert result["agents"] == "spoiler" and result["model"] == "greedy" and result["games"] == 8
    assert result["samples"] == 4 and result["decisions"] > 0
    # the figures are the probe's own, run with the flags' values and the defaults (3 players, floor 0.05, seed 0)
    assert result == belief_accuracy(3, "spoiler", "greedy", games=8, samples=4)


def test_bad_calls_of_the_functions_say_what_is_allowed():
    with pytest.raises(ValueError, match="positive integers"):
        belief_accuracy(3, "spoiler", "spoiler", games=0)
    with pytest.raises(ValueError, match="positive integers"):
        belief_accuracy(3, "spoiler", "spoiler", samples=True)
    with pytest.raises(ValueError, match="at most 1,000,000"):
        belief_accuracy(3, "spoiler", "spoiler", games=10**9)
    with pytest.raises(ValueError, match="spoiler or greedy, or a policy checkpoint"):
        PlayModel("pimc")
    with pytest.raises(ValueError, match="from 0 to 1"):
        PlayModel("spoiler", floor=1.5)


def test_the_probe_s_figures_are_the_means_and_intervals_of_its_decisions_worked_one_by_one():
    """The probe's figures against a slow reference on the same deals and samples: for each decision, the share of
    the others' hidden cards each sampled deal puts in the right hand (seat 0's own cards are not counted), their
    plain mean, and their mean weighted by the likelihood of the plays (normalised over the decision's samples);
    the interval is 1.96 standard errors of the gains (ddof=1). A decision with no hidden card left in the others'
    hands (seat 0 playing last to the fifth trick) is left out, not scored 0."""
    rules, games, samples, seed = Rules(num_players=3), 12, 8, 3
    result = belief_accuracy(3, "spoiler", "greedy", games=games, samples=samples, seed=seed)
    core, rng, model = SpoilFiveCore(games, rules=rules, seed=seed), np.random.default_rng(seed), PlayModel("greedy")
    uniform, gains, nothing_hidden = [], {"trick": [], "hand": []}, 0
    for decide, now, history in seat_zero_decisions(core, load_agent("spoiler"), samples):
        holders, discards = sample_hidden(now, rng, rules)
        logs = play_log_likelihood(model, now, holders, discards, history, rules)
        for i, game in enumerate(decide):
            rows = range(i * samples, (i + 1) * samples)
            others = core.holder[game] > 0
            if not others.any():
                nothing_hidden += 1
                continue
            accuracy = np.array([np.mean(holders[row][others] == core.holder[game][others]) for row in rows])
            uniform.append(accuracy.mean())
            for key, log_w in zip(("trick", "hand"), logs, strict=True):
                weights = np.exp(log_w[rows] - log_w[rows].max())
                gains[key].append(np.sum(weights * accuracy) / np.sum(weights) - accuracy.mean())
    assert result["decisions"] == len(uniform) > 40 and nothing_hidden > 0
    assert result["uniform_accuracy"] == pytest.approx(np.mean(uniform))
    for key, values in gains.items():
        assert result[f"{key}_gain"] == pytest.approx(np.mean(values), abs=1e-12)
        assert result[f"{key}_gain_ci95"] == pytest.approx(1.959964 * np.std(values, ddof=1) / np.sqrt(len(values)))
    assert result["hand_gain_ci95"] > 0


def test_a_floor_of_1_is_allowed_on_the_command_line(capsys):
    """--floor is at most 1, and 1 itself (every play counted as a uniform choice) is allowed."""
    assert beliefs.main(["--agents", "spoiler", "--model", "greedy", "--games", "2", "--samples", "2", "--floor", "1",
                         "--json"]) == 0
    assert '"floor": 1.0' in capsys.readouterr().out


def test_the_history_of_a_decision_holds_only_the_other_seats_plays():
    """seat_zero_decisions gives the others' plays (seat 0's own are no evidence about the hidden hands): every
    card in a history was played, by the end of the hand, by a seat other than 0."""
    core = SpoilFiveCore(20, rules=Rules(num_players=3), seed=5)
    seen = []
    for decide, _, history in seat_zero_decisions(core, load_agent("spoiler")):
        seen += [(decide[rows], actions) for rows, _, actions, _ in history if len(rows)]
    games, cards = np.concatenate([g for g, _ in seen]), np.concatenate([a for _, a in seen])
    assert len(cards) > 100 and (core.played_by[games, cards] > 0).all()
