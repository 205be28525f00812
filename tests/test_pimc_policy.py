"""``pimc_ppo`` (search with the trained policy's rollouts) and ``load_agent("best")``."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

pytest.importorskip("torch")

import agents  # noqa: E402
from agents import BEST, load_agent  # noqa: E402
from agents.pimc_policy import PolicyPIMCAgent  # noqa: E402
from spoilfive_env.actions import CLAIM, JINK  # noqa: E402
from spoilfive_env.core import PHASE_JINK, PHASE_PLAY, SpoilFiveCore  # noqa: E402
from spoilfive_env.observation import SLICES  # noqa: E402
from spoilfive_env.rules import Rules  # noqa: E402


def play_hands(agent, num_players, games=8, seed=0):
    """Play whole hands with ``agent`` in every seat; return every (mask, action) pair seen."""
    rules = Rules(num_players=num_players)
    agent.bind(rules)
    core = SpoilFiveCore(games, rules=rules, seed=seed)
    seen = []
    while not core.done.all():
        live = np.flatnonzero(~core.done)
        masks = core.legal_mask()
        actions = np.zeros(games, np.int64)
        actions[live] = agent.act_batch(core.observe()[live], masks[live])
        seen.append((masks[live], actions[live]))
        core.step(actions, where=~core.done)
    return seen


@pytest.mark.parametrize("num_players, others", [(2, "policy"), (4, "spoiler"), (7, "greedy"), (3, "ppo-20min")])
def test_only_legal_actions(num_players, others):
    agent = load_agent(f"pimc_ppo:samples=2:others={others}", seed=1)
    for masks, actions in play_hands(agent, num_players):
        assert masks[np.arange(len(actions)), actions].all()


def test_the_same_seed_plays_the_same():
    first = [a for _, a in play_hands(load_agent("pimc_ppo:samples=3:prior=0.1", seed=5), 3, seed=2)]
    again = [a for _, a in play_hands(load_agent("pimc_ppo:samples=3:prior=0.1", seed=5), 3, seed=2)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))


def test_best_is_the_named_strongest_agent():
    best = load_agent("best", seed=0)
    name, *options = BEST.split(":")
    assert best.name == name == load_agent(BEST).name
    assert isinstance(best, PolicyPIMCAgent) and best.policy.name == agents.POLICY_SEARCH[name]
    for key, value in (option.split("=") for option in options):  # each of best's options is applied
        applied = getattr(best, key)
        if key == "belief":  # a belief is loaded by its name
            assert applied.name == value
        else:
            assert applied == type(applied)(value), key
    assert load_agent("best:samples=4").samples == 4  # the caller's options come after best's own
    assert load_agent("best", samples=8).samples == 8  # keyword options too (they were overwritten)
    assert load_agent("best", loss_weight=0.5, samples=8).loss_weight == 0.5


def test_a_checkpoint_as_others_plays_every_seat_but_the_searchers():
    core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=9)
    core.step(np.argmax(core.legal_mask(), axis=1))  # the seat to act now differs between games
    agent = load_agent("pimc_ppo:others=ppo-20min")
    assert agent.others == "ppo-20min" and agent.rollout == "ppo+ppo-20min"
    assert PolicyPIMCAgent(others=load_agent("ppo-20min")).rollout == "ppo+ppo-20min"  # an agent given: its name
    masks, observations, searcher = core.legal_mask(), core.observe(), core.current == 0
    assert searcher.any() and not searcher.all()
    by_others = load_agent("ppo-20min").act_batch(observations, masks)
    by_own = load_agent("ppo").act_batch(observations, masks)
    expected = np.where(searcher, by_own, by_others)
    assert (by_own != by_others)[~searcher].any()
    np.testing.assert_array_equal(agent._policy_actions(core, masks, agent.rng), expected)


@pytest.mark.parametrize("others, spoil", [("spoiler", True), ("greedy", False)])
def test_a_rule_model_of_the_others_leaves_the_searchers_games_to_the_policy(others, spoil):
    from agents.baselines import core_rule_actions

    core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=9)
    core.step(np.argmax(core.legal_mask(), axis=1))  # the seat to act now differs between games
    agent = load_agent(f"pimc_ppo:others={others}")
    masks, searcher = core.legal_mask(), core.current == 0
    assert searcher.any() and not searcher.all()
    # The searcher's moves: the policy on his observation, as if the whole batch had been observed.
    by_policy = load_agent("ppo").act_batch(core.observe(), masks)
    expected = np.where(searcher, by_policy, core_rule_actions(core, masks, spoil))
    np.testing.assert_array_equal(agent._policy_actions(core, masks, agent.rng), expected)
    everyone_searcher = core.subset(np.flatnonzero(searcher))  # every game the searcher's: no subset taken
    np.testing.assert_array_equal(agent._policy_actions(everyone_searcher, everyone_searcher.legal_mask(), agent.rng),
                                  by_policy[searcher])


def test_a_checkpoint_path_as_the_policy_option(tmp_path):
    # The spec ends in ".pt" but names a search agent: the path is its policy, not the agent.
    path = tmp_path / "policy.pt"
    path.write_bytes(agents.CHECKPOINT_DIR.joinpath("ppo.pt").read_bytes())
    agent = load_agent(f"pimc_ppo:samples=2:policy={path}", seed=0)
    assert isinstance(agent, PolicyPIMCAgent) and agent.samples == 2 and agent.policy.name == str(path)
    with pytest.raises(ValueError, match="no checkpoint file"):
        load_agent(f"pimc_ppo:policy={tmp_path / 'missing.pt'}")


def test_bad_options_say_what_is_allowed():
    with pytest.raises(ValueError, match="others='x' is not allowed: choose one of policy, spoiler, greedy, "
                                         "or a policy checkpoint .*no checkpoint file"):
        load_agent("pimc_ppo:others=x")
    with pytest.raises(ValueError, match="prior=-1"):
        load_agent("pimc_ppo:prior=-1")
    with pytest.raises(ValueError, match="samples=0"):
        load_agent("pimc_ppo:samples=0")
    with pytest.raises(ValueError, match="bad options"):
        load_agent("pimc_ppo:depth=2")


def hands_near_the_end(num_players, tricks_left, games=16, seed=3):
    """Cores of ``games`` hands played by ``spoiler`` until ``tricks_left`` tricks remain."""
    from agents.baselines import rule_actions, view_from_core

    core = SpoilFiveCore(games, rules=Rules(num_players=num_players), seed=seed)
    core.mode, core.reward_mode = "hand", "equity"
    cards_left = lambda: (core.holder == core.current[:, None]).sum(axis=1)  # noqa: E731
    while True:
        moving = ~core.done & ((cards_left() > tricks_left) | (core.phase != PHASE_PLAY))
        if not moving.any():
            return core.subset(np.flatnonzero(~core.done))
        core.step(rule_actions(view_from_core(core), core.legal_mask(), spoil=True), where=moving)


@pytest.mark.parametrize("num_players", [3, 4])
def test_max_n_is_the_best_line_for_the_player_to_move(num_players):
    from agents.pimc import max_n_values

    core = hands_near_the_end(num_players, tricks_left=2)
    assert core.batch_size > 0
    values = max_n_values(core)
    masks = core.legal_mask()
    for g in range(core.batch_size):
        lines = []
        for action in np.flatnonzero(masks[g]):
            child = core.subset([g])
            rewards, _ = child.step(np.array([action]))
            lines.append(rewards[0] + max_n_values(child)[0])
        mover = int(core.current[g])
        best = max(lines, key=lambda line: line[mover])
        assert values[g, mover] == pytest.approx(best[mover])


def test_max_n_on_the_last_trick_is_the_forced_play_out():
    from agents.pimc import max_n_values

    core = hands_near_the_end(4, tricks_left=1)
    values = max_n_values(core)
    total = np.zeros_like(values)
    while not core.done.all():
        masks = core.legal_mask()
        assert (masks[~core.done].sum(axis=1) == 1).all()
        rewards, _ = core.step(masks.argmax(axis=1), where=~core.done)
        total += rewards
    np.testing.assert_allclose(values, total)


def test_exact_tricks_plays_legal_moves_and_is_checked():
    agent = load_agent("pimc_ppo:samples=3:exact_tricks=2", seed=2)
    for masks, actions in play_hands(agent, 4, games=6):
        assert masks[np.arange(len(actions)), actions].all()
    with pytest.raises(ValueError, match="exact_tricks=9 is not allowed"):
        load_agent("pimc_ppo:exact_tricks=9")


@pytest.mark.parametrize("tricks_left, solved_exactly", [(2, True), (3, False)])
def test_exact_tricks_solves_the_decisions_with_that_many_cards_in_hand_and_no_more(tricks_left, solved_exactly,
                                                                                     monkeypatch):
    """``exact_tricks=2``: every sampled deal of a decision with two cards in hand is valued by its full game tree,
    one with three cards by rollouts alone."""
    import agents.pimc_policy as pimc_policy

    core = hands_near_the_end(4, tricks_left=tricks_left)
    observations, masks = core.observe(), core.legal_mask()
    searched = np.flatnonzero(masks.sum(axis=1) > 1)
    assert len(searched) and (observations[searched][:, SLICES["hand"]].sum(axis=1) == tricks_left).all()
    solved, exact = [], pimc_policy.exact_action_values
    monkeypatch.setattr(pimc_policy, "exact_action_values",
                        lambda games, masks: solved.append(games.batch_size) or exact(games, masks))
    agent = load_agent("pimc_ppo:samples=3:exact_tricks=2", seed=0)
    agent.bind(core.rules)
    agent.act_batch(observations[searched], masks[searched])
    assert sum(solved) == (3 * len(searched) if solved_exactly else 0)


def test_a_prior_large_enough_to_decide_alone_plays_the_policys_likeliest_move():
    """``prior`` adds the policy's log-probability of each move to its value: at the largest prior the search plays
    the move the policy finds likeliest (not its least likely one)."""
    core = SpoilFiveCore(32, rules=Rules(num_players=4), seed=7)
    observations, masks = core.observe(), core.legal_mask()
    agent = load_agent("pimc_ppo:samples=2:prior=1000000", seed=0)
    agent.bind(core.rules)
    assert (masks.sum(axis=1) > 1).sum() > 20
    np.testing.assert_array_equal(agent.act_batch(observations, masks),
                                  agent.policy.log_probs(observations, masks).argmax(axis=1))


def test_before_search_from_trick_the_policy_plays_alone():
    late = load_agent("pimc_ppo:samples=4:search_from_trick=5", seed=0)
    always = load_agent("pimc_ppo:samples=4", seed=0)
    core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=7)
    late.bind(core.rules)
    always.bind(core.rules)
    observations, masks = core.observe(), core.legal_mask()
    own = late.policy.act_batch(observations, masks)
    np.testing.assert_array_equal(late.act_batch(observations, masks), own)  # first trick: no search
    assert (always.act_batch(observations, masks) != own).any()  # the search changes some of them
    with pytest.raises(ValueError, match="search_from_trick=0 is not allowed"):
        load_agent("pimc_ppo:search_from_trick=0")


def decisions_through_the_hand(num_players=3, games=48, seed=5):
    """Observations and masks of decisions with a choice, spread from the robbing to the last trick."""
    from agents.baselines import rule_actions, view_from_core

    core = SpoilFiveCore(games, rules=Rules(num_players=num_players), seed=seed)
    stop_after = np.random.default_rng(seed).integers(0, 4 * num_players, size=games)
    observations, masks = [], []
    for step in range(5 * num_players + 4):
        legal = core.legal_mask()
        here = ~core.done & (stop_after == step) & (legal.sum(axis=1) > 1)
        observations.append(core.observe()[here])
        masks.append(legal[here])
        core.step(rule_actions(view_from_core(core), legal, spoil=True), where=~core.done)
    return core.rules, np.concatenate(observations), np.concatenate(masks)


def test_inner_search_plays_only_the_searchers_next_turn(monkeypatch):
    rules, observations, masks = decisions_through_the_hand()
    held = observations[:, SLICES["hand"]].sum(axis=1)
    assert len(np.unique(held)) >= 4  # decisions from several tricks
    recursive = load_agent("pimc_ppo:samples=4:inner_samples=3", seed=6)
    plain = load_agent("pimc_ppo:samples=4", seed=6)
    for agent in (recursive, plain):
        agent.bind(rules)
    asked = []  # (cards the decision searched holds, cards the searcher holds where the inner search is asked)
    policy_moves = recursive.policy.act_batch
    wasted = []  # rollout moves the policy was asked for where the inner search plays

    def answer_as_the_policy(inner_observations, inner_masks):
        assert (inner_masks.sum(axis=1) > 1).all()
        asked.append((recursive._next_turn_cards, inner_observations[:, SLICES["hand"]].sum(axis=1)))
        return policy_moves(inner_observations, inner_masks)

    def rollout_policy(rollout_observations, rollout_masks):
        if recursive._next_turn_cards is not None:  # in the recursive search's rollouts
            low, high = recursive._next_turn_cards
            cards = rollout_observations[:, SLICES["hand"]].sum(axis=1)
            wasted.append(int(((cards >= low) & (cards <= high) & (rollout_masks.sum(axis=1) > 1)).sum()))
        return policy_moves(rollout_observations, rollout_masks)

    monkeypatch.setattr(recursive._inner, "act_batch", answer_as_the_policy)
    monkeypatch.setattr(recursive.policy, "act_batch", rollout_policy)
    # An inner search that answers as the policy does leaves the plain search's choices, draw for draw
    # (the recursive search draws its deals group by group of cards held, fewest first).
    expected = np.empty(len(masks), np.int64)
    for cards in np.unique(held):
        group = np.flatnonzero(held == cards)
        expected[group] = plain.act_batch(observations[group], masks[group])
    np.testing.assert_array_equal(recursive.act_batch(observations, masks), expected)
    assert len(asked) >= 3 and recursive._next_turn_cards is None
    assert wasted and sum(wasted) == 0  # the inner search's turns are not also asked of the policy
    for (low, high), cards in asked:
        assert ((cards >= low) & (cards <= high)).all() and high - low == 2
    searched = {int(low) + 1 for (low, _), _ in asked}
    assert searched <= set(np.rint(held).astype(int)) and len(searched) >= 3


def test_a_recursive_search_plays_legal_moves_and_is_checked():
    agent = load_agent("pimc_ppo:samples=2:inner_samples=2:loss_weight=2", seed=2)
    assert agent._inner.samples == 2 and agent._inner.loss_weight == 2 and agent._inner.policy is agent.policy
    first = play_hands(agent, 4, games=4)
    for masks, actions in first:
        assert masks[np.arange(len(actions)), actions].all()
    again = play_hands(load_agent("pimc_ppo:samples=2:inner_samples=2:loss_weight=2", seed=2), 4, games=4)
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(first, again, strict=True))
    assert load_agent("pimc_ppo")._inner is None
    for bad in (-1, 1.5, True, 20000):
        with pytest.raises(ValueError, match=f"inner_samples={bad!r} is not allowed: it must be a whole number"):
            PolicyPIMCAgent(inner_samples=bad)


def values_seen_by_choose(agent, observations, masks, monkeypatch):
    """The per-sample values the search hands to ``_choose``, and the actions it returns."""
    seen = []
    choose = type(agent)._choose

    def spy(self, repeat, game, action, values, fallback, decisions):
        seen.append(values.copy())
        return choose(self, repeat, game, action, values, fallback, decisions)

    monkeypatch.setattr(type(agent), "_choose", spy)
    actions = agent.act_batch(observations, masks)
    monkeypatch.undo()
    return np.concatenate(seen), actions


@pytest.mark.parametrize("weighted", ["win_weight", "loss_weight"])
@pytest.mark.parametrize("exact_tricks, tricks_left", [(0, 5), (2, 2)])
def test_outcome_weights_scale_only_their_outcome(exact_tricks, tricks_left, weighted, monkeypatch):
    if tricks_left == 5:
        core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=7)
    else:
        core = hands_near_the_end(4, tricks_left=tricks_left, games=64)
    observations, masks = core.observe(), core.legal_mask()
    runs = {}
    for weight in (0, 1.5):
        agent = load_agent(f"pimc_ppo:samples=6:exact_tricks={exact_tricks}:{weighted}={weight}", seed=4)
        agent.bind(core.rules)
        runs[weight] = values_seen_by_choose(agent, observations, masks, monkeypatch)
    plain, tilted = runs[0][0], runs[1.5][0]
    assert (plain > 0).any() and (plain < 0).any()  # wins and losses both met
    scaled = plain > 0 if weighted == "win_weight" else plain < 0
    np.testing.assert_allclose(tilted, np.where(scaled, 2.5 * plain, plain))


@pytest.mark.parametrize("weighted, fallback, tilted_choice", [
    ("win_weight", 9, 3),   # the weight takes the line where the searcher wins
    ("loss_weight", 3, 9),  # the weight takes the line that stops the others
])
def test_outcome_weights_break_a_tie_toward_their_outcome(weighted, fallback, tilted_choice):
    # One decision, four samples: action 3 wins one pool of 4 chips and loses three (mean 0),
    # action 9 spoils every hand (mean 0); with no weight the fallback wins the tie.
    pool, players = 4.0, 4
    win, loss = pool * (players - 1) / players, -pool / players
    repeat = np.zeros(8, np.int64)
    game = np.arange(8)
    action = np.repeat([3, 9], 4)
    values = np.array([win, loss, loss, loss, 0, 0, 0, 0])
    chosen = {}
    for weight in (0, 0.5):
        agent = PolicyPIMCAgent(**{weighted: weight})
        chosen[weight] = agent._choose(repeat, game, action, agent._tilted(values), np.array([fallback]), 1)[0]
    assert chosen == {0: fallback, 0.5: tilted_choice}


@pytest.mark.parametrize("weighted", ["win_weight", "loss_weight"])
def test_outcome_weights_zero_are_the_default_and_parse(weighted):
    core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=7)
    observations, masks = core.observe(), core.legal_mask()
    actions = []
    for spec in ("pimc_ppo:samples=8", f"pimc_ppo:samples=8:{weighted}=0"):
        agent = load_agent(spec, seed=3)
        agent.bind(core.rules)
        actions.append(agent.act_batch(observations, masks))
    np.testing.assert_array_equal(actions[1], actions[0])
    assert getattr(load_agent(f"pimc_ppo:{weighted}=1"), weighted) == 1.0
    assert getattr(load_agent(f"best:{weighted}=0.5"), weighted) == 0.5


@pytest.mark.parametrize("weighted", ["win_weight", "loss_weight"])
@pytest.mark.parametrize("bad", [-1, True, "x", float("nan"), float("inf"), 10**400])
def test_bad_outcome_weight_says_what_is_allowed(bad, weighted):
    with pytest.raises(ValueError, match=f"{weighted}={bad!r} is not allowed: it must be a finite number"):
        PolicyPIMCAgent(**{weighted: bad})


def test_a_weight_too_large_for_the_search_is_refused():
    """prior=inf passed its check, and prior, win_weight or loss_weight of 1e308 carried the search's
    values to -inf or NaN everywhere: the agent then returned action 0, an illegal one (a traceback)."""
    policy = load_agent("ppo")  # loaded once: the check comes after the policy is
    for weighted in ("win_weight", "loss_weight", "prior"):
        for bad in (float("inf"), 1e308, 1_000_001):
            with pytest.raises(ValueError, match=re.escape(f"{weighted}={bad!r} is not allowed: it must be a finite "
                                                           "number from 0 to 1,000,000")):
                PolicyPIMCAgent(policy=policy, **{weighted: bad})
        assert getattr(PolicyPIMCAgent(policy=policy, **{weighted: 1_000_000}), weighted) == 1e6


def jink_choices(num_players=2, games=256, seed=11):
    """Observations and masks of the jink choices met when ``spoiler`` plays ``games`` hands."""
    from agents.baselines import rule_actions, view_from_core

    core = SpoilFiveCore(games, rules=Rules(num_players=num_players), seed=seed)
    core.mode, core.reward_mode = "hand", "equity"
    seen = []
    while not core.done.all():
        at_choice = np.flatnonzero(~core.done & (core.phase == PHASE_JINK))
        observations, masks = core.observe(), core.legal_mask()
        seen.append((observations[at_choice], masks[at_choice]))
        core.step(rule_actions(view_from_core(core), masks, spoil=True), where=~core.done)
    return core.rules, np.concatenate([o for o, _ in seen]), np.concatenate([m for _, m in seen])


def test_jink_confidence_claims_the_jinks_too_few_samples_win(monkeypatch):
    rules, observations, masks = jink_choices()
    assert len(observations) >= 10 and masks[:, JINK].all() and masks[:, CLAIM].all()
    runs = {}
    for confidence in (0, 0.8):
        agent = load_agent(f"pimc_ppo:samples=10:jink_confidence={confidence}", seed=2)
        agent.bind(rules)
        runs[confidence] = values_seen_by_choose(agent, observations, masks, monkeypatch)
    values, bold = runs[0]
    np.testing.assert_array_equal(runs[0.8][0], values)  # the same samples: only the choice differs
    # Values in (decision, sample, action) order; the two legal actions are CLAIM then JINK.
    jink_wins = (values.reshape(len(observations), 10, 2)[:, :, 1] > 0).mean(axis=1)
    expected = np.where((bold == JINK) & (jink_wins < 0.8), CLAIM, bold)
    np.testing.assert_array_equal(runs[0.8][1], expected)
    assert ((bold == JINK) & (expected == CLAIM)).any() and (expected == JINK).any()  # both cases met


@pytest.mark.parametrize("bad", [-0.1, 1.5, True, "x", float("nan"), 10**400])
def test_bad_jink_confidence_says_what_is_allowed(bad):
    with pytest.raises(ValueError, match=f"jink_confidence={bad!r} is not allowed: it must be a number from 0 to 1"):
        PolicyPIMCAgent(jink_confidence=bad)


@pytest.mark.parametrize("argv, says", [
    (["x"], "'x' is not a whole number"),
    (["11"], "2 to 10 players"),
    (["4", "--decisions", "0"], "--decisions: '0' is not allowed: give a whole number of at least 1"),
    (["4", "--decisions", "1000000000"], "at most 10,000"),
    (["4", "--agents", " , "], "give at least one agent"),
    (["4", "--agents", "best,pimc_ppo:inner_samples=-1"], "inner_samples=-1 is not allowed"),
    (["4", "--agents", "random,,greedy"], "--agents 'random,,greedy': an empty item"),  # blanks were dropped
    (["4", "--agents", "random,greedy,"], "--agents 'random,greedy,': an empty item"),
    (["4", "--agents", "random, greedy,random"], "give each agent once (random more than once)"),  # was timed once
    # The one game at 9 players gives no decision at its drawn point: 0 ms a decision was printed as measured.
    (["9", "--decisions", "1", "--agents", "random"], "--decisions 1: no searched decision (one with more than one "
                                                      "legal action) was met in 1 game at 9 players: give more"),
])
def test_the_timing_command_refuses_bad_flags_in_one_line(argv, says, capsys):
    from agents.pimc_policy import main

    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert says in error and len(error.strip().splitlines()) == 1


def test_the_timing_command_times_every_agent_on_the_same_decisions(capsys, monkeypatch):
    from agents.pimc_policy import main

    asked, real = {}, agents.load_agent

    def recording(spec, **options):  # each timed agent keeps the decisions it is asked
        agent = real(spec, **options)
        act_batch = agent.act_batch

        def act(observations, masks):
            asked.setdefault(spec, []).append((observations.tobytes(), masks.tobytes()))
            return act_batch(observations, masks)

        agent.act_batch = act
        return agent

    monkeypatch.setattr(agents, "load_agent", recording)
    assert main(["3", "--decisions", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # the searched ones among 3 games: more than one, so that which ones each agent is asked can differ
    assert report["players"] == 3 and 2 <= report["decisions"] <= 3
    assert set(report["cpu_ms_per_decision"]) == {"best", "pimc_ppo", "pimc"}
    assert all(ms > 0 for ms in report["cpu_ms_per_decision"].values())
    assert len(asked["pimc"]) == report["decisions"] and asked["best"] == asked["pimc_ppo"] == asked["pimc"]


def test_the_timing_command_times_the_agents_asked_for(capsys):
    from agents.pimc_policy import main

    assert main(["3", "--decisions", "2", "--agents", "pimc:samples=4, greedy", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["cpu_ms_per_decision"]) == ["pimc:samples=4", "greedy"]  # in order


def test_the_timing_command_prints_a_table_by_default(capsys):
    """A human table, as every command prints without --json (it printed JSON only)."""
    from agents.pimc_policy import main

    assert main(["3", "--decisions", "2", "--agents", "pimc:samples=4,greedy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Milliseconds a decision, one at a time on one thread:") and "at 3 players" in lines[0]
    assert lines[2].split() == ["agent", "CPU", "ms", "wall", "ms"]
    rows = [line.split() for line in lines[3:]]
    assert [row[0] for row in rows] == ["pimc:samples=4", "greedy"]
    assert all(float(cell) >= 0 for row in rows for cell in row[1:])
    assert len({len(line) for line in lines[2:]}) == 1  # the columns aligned under a long spec
