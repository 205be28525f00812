"""The vectorised core against the slow reference (tests/reference.py), deal by deal.

Both are given the same injected deals and the same actions; at every step the current
player and the exact set of legal actions must agree in every unfinished game, and when a
hand ends the per-seat rewards (``"chips"`` and ``"equity"``, one core each), the winner,
the tricks and the pool left must agree.

Uniformly random deals and play reach the rarer rules (reneging, the concealed ace, jinks)
too seldom to test them, so most deals here are loaded: the top trumps (5, jack, ace of
hearts, ace of trumps) are put into hands, often one to a hand, turn-up aces are common,
and the random policy leads trumps, robs, conceals and jinks far more often than uniform
play would. The reference counts how often each rule came into play, and the test asserts
that each did so often enough to mean something.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from conftest import random_legal
from reference import ReferenceHand, card_text, trump_order

from spoilfive_env import env
from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, ROB_FIRST
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.rules import Rules

REWARD_MODES = ("chips", "equity")


# ---------------------------------------------------------------- deals


def loaded_deals(rng: np.random.Generator, num_players: int, k: int):
    """``k`` deals that put the top trumps into hands, often a lone one to a hand."""
    n = num_players
    hands = np.zeros((k, n, 5), np.int64)
    turnups = np.zeros(k, np.int64)
    for game in range(k):
        # Hearts trump often: then the ace of hearts is the ace of trumps, the robbing card.
        trump = 2 if rng.random() < 0.4 else int(rng.integers(4))
        ace_turned = rng.random() < 0.25
        rank = 0 if ace_turned else int(rng.choice([r for r in range(1, 13) if r != 4 and r != 10]))
        turnup = 13 * trump + rank
        seats = [[] for _ in range(n)]
        if rng.random() < 0.2:  # one strong hand, to give jinks a chance of success
            top = [card for card in trump_order(trump)[:6] if card != turnup][:int(rng.integers(3, 6))]
            seats[int(rng.integers(n))].extend(top)
        else:  # spread the top trumps over distinct seats where there is room
            top = [card for card in trump_order(trump)[:4] if card != turnup]
            top = [card for card in top if rng.random() < 0.85]
            for card in top:
                free = [s for s in range(n) if not seats[s]] or [s for s in range(n) if len(seats[s]) < 5]
                seats[int(rng.choice(free))].append(card)
        rest = [card for card in range(52) if card != turnup and card not in top]
        rng.shuffle(rest)
        # Fill up, preferring plain cards so lone privileged trumps stay lone.
        trumps = set(trump_order(trump))
        plain_rest = [card for card in rest if card not in trumps]
        trump_rest = [card for card in rest if card in trumps]
        for s in range(n):
            while len(seats[s]) < 5:
                take_trump = trump_rest and (not plain_rest or rng.random() < 0.2)
                seats[s].append((trump_rest if take_trump else plain_rest).pop())
        hands[game] = seats
        turnups[game] = turnup
    return hands, turnups


def uniform_deals(rng: np.random.Generator, num_players: int, k: int):
    order = np.argsort(rng.random((k, 52)), axis=1)
    hands = order[:, : 5 * num_players].reshape(k, num_players, 5)
    return hands, order[:, 5 * num_players]


# ---------------------------------------------------------------- the random policy


def choose(rng: np.random.Generator, ref: ReferenceHand, legal: list[int], loaded: bool) -> int:
    """A random legal action; ``loaded`` makes trump leads, robs, conceals and jinks common."""
    if not loaded:
        return int(rng.choice(legal))
    if legal == [CLAIM, JINK]:
        return JINK if rng.random() < 0.6 else CLAIM
    robs = [a for a in legal if ROB_FIRST <= a < DECLINE_ROB]
    plays = [a for a in legal if a < ROB_FIRST]
    if robs:
        u = rng.random()
        if plays and u < 0.3:
            legal = plays  # conceal the ace
        elif u < 0.75:
            return int(rng.choice(robs))
        else:
            return DECLINE_ROB
    trumps = [a for a in legal if ref.is_trump(a)]
    if not ref.trick:
        if trumps and rng.random() < 0.7:
            return int(rng.choice(trumps))
    elif trumps and rng.random() < 0.3:  # play to win now and then
        return min(trumps, key=ref.trump_position)
    return int(rng.choice(legal))


# ---------------------------------------------------------------- the comparison


def deal_text(ref: ReferenceHand, rules: Rules, pool: int) -> str:
    hands = [" ".join(card_text(c) for c in h) for h in ref.initial_hands]
    return (f"rules={rules}\nhands={hands} turnup={card_text(ref.turnup)} dealer={ref.dealer} "
            f"pool={pool}\nactions={ref.history}")


def run_batch(rules: Rules, k: int, seed: int, loaded: bool) -> Counter:
    """Play ``k`` deals through two cores and ``k`` references; returns the reference counters."""
    rng = np.random.default_rng(seed)
    n = rules.num_players
    hands, turnups = (loaded_deals if loaded else uniform_deals)(rng, n, k)
    dealers = rng.integers(0, n, size=k)
    pools = np.where(rng.random(k) < 0.3, rng.integers(1, 12, size=k), 0)

    cores = {}
    for reward in REWARD_MODES:
        cores[reward] = SpoilFiveCore(k, rules=rules, reward=reward, seed=seed, deal=False)
        cores[reward].reset(hands=hands, turnups=turnups, dealers=dealers, pools=pools)
    refs = []
    for game in range(k):
        ref = ReferenceHand(rules, hands[game].tolist(), int(turnups[game]), int(dealers[game]),
                            pool=int(pools[game]))
        ref.initial_hands = [list(h) for h in hands[game].tolist()]
        refs.append(ref)

    finished = np.zeros(k, bool)
    for _ in range(5 * n + 3):
        if finished.all():
            break
        actions = np.zeros(k, np.int64)
        masks = {reward: core.legal_mask() for reward, core in cores.items()}
        players = {reward: core.current_player for reward, core in cores.items()}
        for game in np.flatnonzero(~finished):
            ref = refs[game]
            legal = ref.legal_actions()
            for reward in REWARD_MODES:
                core_legal = np.flatnonzero(masks[reward][game]).tolist()
                assert players[reward][game] == ref.current_player, (
                    f"game {game}: core says seat {players[reward][game]} acts, reference says "
                    f"{ref.current_player}\n{deal_text(ref, rules, pools[game])}")
                assert core_legal == legal, (
                    f"game {game}, seat {ref.current_player}: core legal {core_legal} != "
                    f"reference legal {legal}\n{deal_text(ref, rules, pools[game])}")
            actions[game] = choose(rng, ref, legal, loaded)
            ref.apply(actions[game])
        step_rewards = {}
        for reward, core in cores.items():
            step_rewards[reward], done = core.step(actions)
            for game in np.flatnonzero(~finished):
                assert bool(done[game]) == refs[game].done, (
                    f"game {game}: core done={bool(done[game])}, reference done={refs[game].done}\n"
                    f"{deal_text(refs[game], rules, pools[game])}")
        for game in np.flatnonzero(~finished):
            ref = refs[game]
            expected = {"chips": ref.chip_changes(), "equity": ref.equity_changes()}
            for reward, core in cores.items():
                got = step_rewards[reward][game]
                if not ref.done:
                    assert not got.any(), f"game {game}: reward {got} before the hand ended"
                    continue
                context = deal_text(ref, rules, pools[game])
                np.testing.assert_allclose(got, expected[reward], rtol=0, atol=1e-5,
                                           err_msg=f"{reward} rewards, game {game}\n{context}")
                winner = ref.winning_team if rules.partnerships else ref.winner
                assert int(core.last_winner[game]) == (-1 if winner is None else winner), context
                assert core.last_tricks[game].tolist() == ref.tricks_won, context
                assert int(core.pool[game]) == ref.pool, context
                assert core.chips[game].tolist() == ref.chips, context
        finished |= np.array([ref.done for ref in refs])
    assert finished.all(), "some hands never ended"

    counts = Counter()
    for ref in refs:
        counts.update({name: value for name, value in ref.stats.items()})
        counts["hands"] += 1
        counts["hands_with_renege_option"] += ref.stats["renege_option"] > 0
        counts["spoiled"] += ref.spoiled
        counts["jink_won"] += ref.jink_succeeded
        counts["jink_lost"] += ref.jinking and ref.spoiled
        counts["ace_turned"] += ref.turnup % 13 == 0
    return counts


# ---------------------------------------------------------------- the configurations

CONFIGS = []
for _n in range(2, 11):
    CONFIGS.append(Rules(num_players=_n))
    CONFIGS.append(Rules.preset("hoyle", num_players=_n, allow_jink=False, conceal_ace_penalty=True))
    CONFIGS.append(Rules.preset("dealer_feeds", num_players=_n, conceal_ace_penalty=True, jink_bonus=3))
for _n in (4, 6):
    CONFIGS.append(Rules(num_players=_n, partnerships=True))
    CONFIGS.append(Rules.preset("hoyle", num_players=_n, partnerships=True, conceal_ace_penalty=True))
    CONFIGS.append(Rules(num_players=_n, partnerships=True, allow_jink=False, dealer_ante=1))


def _config_id(rules: Rules) -> str:
    parts = [f"n{rules.num_players}", f"ante{rules.ante}{rules.spoil_ante}{rules.dealer_ante}"]
    parts += [name for name in ("partnerships", "conceal_ace_penalty") if getattr(rules, name)]
    parts.append("jink" if rules.allow_jink else "nojink")
    return "-".join(parts)


@pytest.mark.parametrize("rules", CONFIGS, ids=_config_id)
def test_core_matches_reference(rules):
    seed = 1000 * rules.num_players + CONFIGS.index(rules)
    k = max(240, 1200 // rules.num_players)  # small tables are cheap: more deals
    loaded = run_batch(rules, k, seed, loaded=True)
    uniform = run_batch(rules, k // 3, seed + 1, loaded=False)
    assert loaded["hands"] == k and uniform["hands"] == k // 3
    # The loaded deals must exercise the rare rules, or this test proves little.
    assert loaded["trump_lead"] >= k
    assert loaded["hands_with_renege_option"] >= 15, loaded
    assert loaded["renege_taken"] >= 5, loaded
    assert loaded["rob"] >= 40 and loaded["decline"] >= 10, loaded
    if rules.conceal_ace_penalty:
        assert loaded["conceal"] >= 10, loaded
        assert loaded["demoted_ace_of_hearts_bound"] >= 1, loaded
        # the holder's turn where the concealing play, judged with the ace demoted, is bound
        assert loaded["concealing_play_bound"] >= 3, loaded
    if rules.allow_jink:
        assert loaded["jink_offer"] >= 5 and loaded["jink"] >= 2, loaded
    if rules.num_players >= 3 and not rules.partnerships:
        assert loaded["spoiled"] + uniform["spoiled"] >= 10, (loaded, uniform)


def test_loaded_deals_reach_the_rare_rules_more_often_than_uniform_ones():
    rules = Rules(num_players=4, conceal_ace_penalty=True)
    loaded = run_batch(rules, 300, 7, loaded=True)
    uniform = run_batch(rules, 300, 7, loaded=False)
    for name in ("hands_with_renege_option", "renege_under_a_higher_trump", "forced_trump",
                 "trump_lead", "jink_won"):
        assert loaded[name] > 1.5 * uniform[name], (name, loaded, uniform)
    assert loaded["hands_with_renege_option"] >= 0.3 * loaded["hands"], loaded
    assert loaded["renege_under_a_higher_trump"] >= 20, loaded


# ---------------------------------------------------------------- whole games


GAME_CONFIGS = [
    Rules(num_players=5, num_hands=2, max_hands=4),
    Rules.preset("hoyle", num_players=3, num_hands=3, max_hands=5, conceal_ace_penalty=True),
    Rules(num_players=4, partnerships=True, num_hands=2, max_hands=3, ante=3),
    Rules(num_players=6, partnerships=True, num_hands=2, max_hands=3, jink_bonus=1),
    Rules.preset("dealer_feeds", num_players=8, num_hands=1, max_hands=3),
    Rules(num_players=2, num_hands=3, max_hands=3, allow_jink=False),
]


@pytest.mark.parametrize("rules", GAME_CONFIGS, ids=_config_id)
def test_game_mode_matches_reference_hand_by_hand(rules):
    """``mode="game"``: the core deals each next hand itself; the reference replays each one.

    Checks what one hand cannot: the deal passing left, chips and pool carried from hand to
    hand, the spoil ante after a spoil only, the end after ``num_hands`` once a pool is won,
    and the ``max_hands`` cap splitting the pool evenly with the remainder left unpaid.
    """
    k, n = 120, rules.num_players  # enough games that some reach the max_hands cap
    rng = np.random.default_rng(rules.num_players)
    cores = {reward: SpoilFiveCore(k, rules=rules, mode="game", reward=reward, seed=11)
             for reward in REWARD_MODES}

    def reference_for(game, previous=None):
        core = cores["chips"]
        hands = [core.hand_of(game, seat) for seat in range(n)]
        if previous is None:
            ref = ReferenceHand(rules, hands, int(core.turnup[game]), int(core.dealer[game]))
        else:
            assert int(core.dealer[game]) == (previous.dealer + 1) % n, "the deal passes left"
            ref = ReferenceHand(rules, hands, int(core.turnup[game]), int(core.dealer[game]),
                                pool=previous.pool, chips=previous.chips, spoiled_before=previous.spoiled)
        ref.initial_hands = hands
        return ref

    refs = [reference_for(game) for game in range(k)]
    hands_played = np.zeros(k, int)
    totals = {reward: np.zeros((k, n)) for reward in REWARD_MODES}
    finished = np.zeros(k, bool)
    caps = 0
    for _ in range(rules.max_hands * (5 * n + 3)):
        if finished.all():
            break
        np.testing.assert_array_equal(cores["chips"].holder, cores["equity"].holder)
        actions = np.zeros(k, np.int64)
        mask = cores["chips"].legal_mask()
        player = cores["chips"].current_player
        for game in np.flatnonzero(~finished):
            ref = refs[game]
            legal = ref.legal_actions()
            context = deal_text(ref, rules, ref.pool_start)
            assert player[game] == ref.current_player, context
            assert np.flatnonzero(mask[game]).tolist() == legal, context
            actions[game] = choose(rng, ref, legal, loaded=True)
            ref.apply(actions[game])
        results = {reward: core.step(actions) for reward, core in cores.items()}
        for game in np.flatnonzero(~finished):
            ref = refs[game]
            done = results["chips"][1][game]
            assert results["equity"][1][game] == done
            if not ref.done:
                assert not done and not results["chips"][0][game].any()
                continue
            context = deal_text(ref, rules, ref.pool_start)
            hands_played[game] += 1
            expected = {"chips": np.array(ref.chip_changes(), float), "equity": np.array(ref.equity_changes())}
            capped = ref.spoiled and hands_played[game] >= rules.max_hands
            if capped:  # the pool is split evenly; the remainder stays unpaid
                caps += 1
                share = ref.pool // n
                ref.chips = [c + share for c in ref.chips]
                ref.pool -= share * n
                expected["chips"] += share  # under equity a split moves nothing
            over = capped or (not ref.spoiled and hands_played[game] >= rules.num_hands)
            assert bool(done) == over, f"game over after hand {hands_played[game]}?\n{context}"
            for reward in REWARD_MODES:
                got = results[reward][0][game]
                totals[reward][game] += got
                if reward == "equity" and over and ref.pool > 0:
                    continue  # an unpaid remainder at the end: see test_game_equity_sums_to_chip_change
                np.testing.assert_allclose(got, expected[reward], atol=1e-5, err_msg=f"{reward}\n{context}")
            if over:
                finished[game] = True
                core = cores["chips"]
                assert core.chips[game].tolist() == ref.chips and int(core.pool[game]) == ref.pool, context
            else:
                refs[game] = reference_for(game, ref)
    assert finished.all()
    # Over a whole game chips rewards add up to the final chip change (CONTRACT.md); so do
    # equity ones in every game that left nothing in the pool.
    change = cores["chips"].chips.astype(float) - rules.starting_chips
    np.testing.assert_allclose(totals["chips"], change, atol=1e-4)
    empty = cores["chips"].pool == 0
    np.testing.assert_allclose(totals["equity"][empty], change[empty], atol=1e-4)
    if n > 2 and not rules.partnerships:  # spoils are common
        assert hands_played.max() > rules.num_hands, "no game went on past num_hands"
        assert caps > 0, "no game reached the max_hands cap"


def test_game_equity_sums_to_chip_change():
    # dealer_ante=1 makes the pool indivisible: 4 * 1 + 1 = 5 chips for a team of two.
    rules = Rules(num_players=4, partnerships=True, num_hands=1, max_hands=1, dealer_ante=1)
    k = 50
    core = SpoilFiveCore(k, rules=rules, mode="game", reward="equity", seed=3)
    rng = np.random.default_rng(3)
    totals = np.zeros((k, 4))
    finished = np.zeros(k, bool)
    while not finished.all():
        mask = core.legal_mask()
        rewards, done = core.step(random_legal(rng, mask))
        totals += rewards
        finished |= done
    np.testing.assert_allclose(totals, core.chips - rules.starting_chips, atol=1e-4)


def test_game_equity_from_an_injected_pool_sums_to_chip_change_less_its_share():
    """docs/rules.md: a game that starts with ``P`` chips in the pool counts each player's share ``P / n`` as his
    from the start, so his equity rewards add up to his chip change less ``P / n``; chips rewards to the change."""
    n, pool, k = 4, 6, 40
    for reward, counted in (("equity", pool / n), ("chips", 0.0)):
        game = env(num_players=n, mode="game", reward=reward, num_hands=2)
        for seed in range(k):
            game.reset(seed=seed, options={"pool": pool})
            start = game.unwrapped.rules.starting_chips  # (the reset has taken the first antes)
            totals = dict.fromkeys(game.agents, 0.0)
            for agent in game.agent_iter():
                _, reward_now, terminated, truncated, _ = game.last()
                totals[agent] += reward_now
                game.step(None if terminated or truncated else
                          int(np.flatnonzero(game.observe(agent)["action_mask"])[seed % 2 - 1]))
            change = game.core.chips[0] - start
            assert int(game.core.pool[0]) == 0 or reward == "chips"
            np.testing.assert_allclose([totals[f"player_{s}"] for s in range(n)], change - counted, atol=1e-9)
