"""Determinisation: games built from one seat's observation plus sampled hidden hands.

The built game must be the observed game: the viewer's observation and legal mask are
unchanged, the sampled hands respect every void and robbing right the viewer has seen,
and the true hidden hands rebuild a game that plays out exactly like the real one.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from conftest import dealt_core, play_core

from agents.base import sample_legal
from spoilfive_env.actions import DECLINE_ROB, ROB_FIRST
from spoilfive_env.cards import (
    ACE,
    ACE_OF_TRUMPS,
    EFFECTIVE_SUIT,
    MAX_PLAYERS,
    NUM_RANKS,
    PRIVILEGED,
    STRENGTH,
    TRUMP,
    card_index,
    card_str,
)
from spoilfive_env.core import PHASE_ROB, SpoilFiveCore
from spoilfive_env.determinize import games_from_information, read_information, sample_hidden
from spoilfive_env.observation import CHIP_SCALE, OBS_DIM, SLICES, decode_observation
from spoilfive_env.rules import CHIPS_MAX, CHIPS_MIN, Rules

CONFIGS = [Rules(num_players=n) for n in range(2, 11)] + [
    Rules(num_players=3, conceal_ace_penalty=True),
    Rules(num_players=5, conceal_ace_penalty=True),
    Rules(num_players=4, allow_jink=False),
    Rules(num_players=4, partnerships=True),
    Rules(num_players=6, partnerships=True),
]


def relative_holders(core, games):
    """The true holders of ``games``, as seats relative to the player to act."""
    n = core.num_players
    current = core.current[games].astype(np.int64)
    holder = core.holder[games].astype(np.int64)
    return np.where(holder >= 0, (holder - current[:, None]) % n, -1)


def check_sample(obs, holders, discards, rules):
    info = read_information(obs)
    n = rules.num_players
    suits = EFFECTIVE_SUIT[info.trump]
    for seat in range(1, n):
        held = holders == seat
        # no card of a suit the seat has shown void in
        shown = info.voids[:, seat][np.arange(len(obs))[:, None], suits]
        assert not (held & shown).any(), f"seat {seat} holds a card of a suit it is void in"
    # each seat holds exactly the cards it has left to play
    for seat in range(n):
        left = 5 - (info.played_by == seat).sum(axis=1)
        assert np.array_equal((holders == seat).sum(axis=1), left)
    assert np.array_equal(holders == 0, info.hand)
    # the turn-up another seat robbed is in his hand until he plays it
    rows = np.arange(len(obs))
    robbed = np.flatnonzero((info.robber > 0) & (info.played_by[rows, info.turnup] < 0))
    assert np.array_equal(holders[robbed, info.turnup[robbed]], info.robber[robbed]), "a robber lacks the turn-up"
    # whoever declined to rob an ordinary turn-up holds the ace of trumps until he plays it
    ace = ACE_OF_TRUMPS[info.trump]
    declined = np.flatnonzero((info.declined > 0) & (info.turnup % NUM_RANKS != ACE) & (info.played_by[rows, ace] < 0))
    assert np.array_equal(holders[declined, ace[declined]], info.declined[declined]), "a decliner lacks the ace"
    # the discard: the viewer's own where he robbed (in no hand); where another seat robbed, a card out of play
    own = np.flatnonzero(info.own_discard >= 0)
    assert np.array_equal(discards[own], info.own_discard[own]), "the viewer's own discard is not returned"
    assert (holders[own, info.own_discard[own]] == -1).all(), "the viewer's own discard is dealt to a hand"
    assert (discards[info.robber < 0] == -1).all(), "a discard where nobody robbed"
    other = np.flatnonzero(info.robber > 0)
    assert (discards[other] >= 0).all(), "another seat robbed, but no discard"
    out = discards[other]
    assert not ((holders[other, out] >= 0) | (info.played_by[other, out] >= 0) | (out == info.turnup[other])).any(), \
        "another robber's discard is in a hand, played or the turn-up"
    # a plain card on a trump lead in the trick on the table: no trump but a privileged one above the lead
    for row in np.flatnonzero(info.led_card >= 0):
        trump, led = int(info.trump[row]), int(info.led_card[row])
        if suits[row, led] != TRUMP:
            continue
        bound = (suits[row] == TRUMP) & ~(PRIVILEGED[trump] & (STRENGTH[trump] > STRENGTH[trump, led]))
        for position in range(1, int(info.trick_pos[row])):
            card = int(info.trick_cards[row, position])
            if suits[row, card] != TRUMP:
                seat = (int(info.leader[row]) + position) % n
                assert not (bound & (holders[row] == seat)).any(), f"seat {seat} reneged with a trump it had to play"
    if not rules.conceal_ace_penalty:
        # a seat that has had its first-trick turn without robbing or declining lacks the ace
        rows = np.arange(len(obs))
        ace = ACE_OF_TRUMPS[info.trump]
        ace_seat = holders[rows, ace]
        open_ace = ((info.turnup % NUM_RANKS) != ACE) & (info.robber < 0) & (info.declined < 0) & (ace_seat > 0)
        after_first = info.trick_number > 0
        assert not (open_ace & after_first).any()


@pytest.mark.parametrize("rules", CONFIGS, ids=lambda r: f"n{r.num_players}"
                         + ("-conceal" if r.conceal_ace_penalty else "")
                         + ("-nojink" if not r.allow_jink else "")
                         + ("-teams" if r.partnerships else ""))
def test_built_games_match_the_observation_and_replay_exactly(rules):
    rng = np.random.default_rng(rules.num_players)
    core = SpoilFiveCore(160, rules=rules, seed=rules.num_players)
    step = 0
    while not core.done.all():
        live = np.flatnonzero(~core.done)
        obs = core.observe()[live]
        mask = core.legal_mask()[live]
        holders, discards = sample_hidden(obs, rng, rules)
        check_sample(obs, holders, discards, rules)
        built = games_from_information(obs, holders, discards, rules)
        assert np.array_equal(built.observe(0), obs)
        assert np.array_equal(built.legal_mask(), mask)
        assert (built.current == 0).all()
        if step % 4 == 0:
            # the sampled games play out without error
            while not built.done.all():
                built.step(sample_legal(built.legal_mask(), rng))
            # the true hands rebuild the real game: same masks and rewards to the end
            truth = games_from_information(obs, relative_holders(core, live), core.discard[live], rules)
            real = core.subset(live)
            seat = real.current.astype(np.int64)
            # the state that rules read and no observation shows: rebuilt as it is in the real game
            np.testing.assert_array_equal(truth.strength, real.strength)
            np.testing.assert_array_equal(truth.privileged, real.privileged)
            np.testing.assert_array_equal(truth.concealed, real.concealed)
            entitled = real.rob_seat >= 0
            np.testing.assert_array_equal(truth.rob_seat >= 0, entitled)
            np.testing.assert_array_equal(truth.rob_seat[entitled],
                                          (real.rob_seat[entitled] - seat[entitled]) % rules.num_players)
            total_real = np.zeros(len(live))
            total_built = np.zeros(len(live))
            while not real.done.all():
                going = ~real.done
                assert np.array_equal(real.legal_mask()[going], truth.legal_mask()[going])
                assert np.array_equal((real.current[going] - seat[going]) % rules.num_players,
                                      truth.current[going])
                actions = sample_legal(real.legal_mask(), rng)
                r_real, _ = real.step(actions)
                r_truth, _ = truth.step(actions)
                total_real += r_real[np.arange(len(live)), seat]
                total_built += r_truth[:, 0]
            assert truth.done.all()
            np.testing.assert_allclose(total_real, total_built)
        core.step(sample_legal(core.legal_mask(), rng))
        step += 1


def test_information_take_is_reading_the_chosen_rows():
    core = SpoilFiveCore(40, rules=Rules(num_players=5), seed=8)
    rng = np.random.default_rng(0)
    for _ in range(7):
        core.step(sample_legal(core.legal_mask(), rng))
    observations = core.observe()
    rows = np.array([3, 3, 0, 39, 17, 3])
    taken, read = read_information(observations).take(rows), read_information(observations[rows])
    for field in ("num_players", "teammates"):
        assert getattr(taken, field) == getattr(read, field)
    for name in (f.name for f in dataclasses.fields(read) if isinstance(getattr(read, f.name), np.ndarray)):
        assert np.array_equal(getattr(taken, name), getattr(read, name)), name
        assert getattr(taken, name).dtype == getattr(read, name).dtype, name


def test_game_mode_observations_round_trip():
    rules = Rules(num_players=4, num_hands=3)
    rng = np.random.default_rng(1)
    core = SpoilFiveCore(64, rules=rules, mode="game", seed=1)
    for _ in range(60):
        if core.done.all():
            break
        live = np.flatnonzero(~core.done)
        obs = core.observe()[live]
        holders, discards = sample_hidden(obs, rng, rules)
        built = games_from_information(obs, holders, discards, rules, mode="game")
        assert np.array_equal(built.observe(0), obs)
        core.step(sample_legal(core.legal_mask(), rng))


def test_a_seat_that_reneged_in_trick_1_unannounced_holds_no_concealed_ace():
    """conceal_ace_penalty: the concealing play is judged with the ace demoted (docs/rules.md)."""
    core = dealt_core(["2H KC 3D 4D 6D", "QC 2S 3S 4S 6S", "JC 8D 9D 10D 5S", "AH 10C 7S 8S 9S"], "7H", dealer=3,
                      conceal_ace_penalty=True)
    play_core(core, "2H", "QC")  # a trump lead; seat 1 answers with a plain card, unannounced
    assert core.current[0] == 2
    observations = np.repeat(core.observe(), 400, axis=0)
    holders, _ = sample_hidden(observations, np.random.default_rng(0), core.rules)
    ace_at = holders[:, card_index("AH")]  # seats relative to seat 2: seat 1 is 3
    assert not (ace_at == 3).any(), "seat 1 could not have concealed the ace and played QC"
    assert (ace_at == 1).any() and (ace_at == 2).any()  # seat 3 (not yet played) and the leader may


def test_unconstrained_cards_are_spread_evenly():
    # At the first decision of a 4-player hand every unseen card is equally likely in each
    # of the three hidden hands (5 slots each) or the stock.
    core = SpoilFiveCore(1, rules=Rules(num_players=4), seed=3)
    obs = np.repeat(core.observe(), 4000, axis=0)
    holders, _ = sample_hidden(obs, np.random.default_rng(0))
    info = read_information(obs[:1])
    unseen = ~(info.hand[0]) & (np.arange(52) != info.turnup[0])
    count = int(unseen.sum())
    # Card by card: a mean over all the unseen cards is 5 / count whatever the sampler does (5 cards a hand).
    frequency = np.stack([(holders[:, unseen] == place).mean(axis=0) for place in (1, 2, 3, -1)])
    expected = np.array([5, 5, 5, count - 15])[:, None] / count
    assert np.abs(frequency - expected).max() < 0.035  # about 5 standard deviations of 4000 draws
    assert not (holders[:, ~unseen] > 0).any()  # the viewer's cards and the turn-up are never dealt out


def test_bad_input_raises_value_error():
    core = SpoilFiveCore(2, rules=Rules(num_players=4), seed=0)
    obs = core.observe()
    holders, discards = sample_hidden(obs, np.random.default_rng(0))
    wrong = holders.copy()
    wrong[wrong == 0] = 1
    with pytest.raises(ValueError, match="^row 0: seat 0's cards in holders differ from the observed hand$"):
        games_from_information(obs, wrong)
    other = SpoilFiveCore(1, rules=Rules(num_players=3), seed=0).observe()
    with pytest.raises(ValueError, match=r"different table sizes: \[3, 4\]"):
        read_information(np.concatenate([obs, other]))
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match="rules are for 5 players but the observations come from a table of 4"):
        sample_hidden(obs, rng, Rules(num_players=5))
    assert rng.bit_generator.state == before  # refused before any draw
    with pytest.raises(ValueError, match=rf"observations must have shape \(B, {OBS_DIM}\), got \(2, 10\)"):
        read_information(obs[:, :10])


def test_a_plain_card_on_a_trump_lead_leaves_only_the_privileged_trumps_that_may_be_held_back():
    """Spades trump (9S turned). Seat 0 leads the 2S; seat 1, whose only trump is the 5S (privileged, above the
    2S), holds it back and plays the KC. No void is proven (the 5S may be in his hand), but any other trump
    would have bound him to play it: no sample for seat 2 may give seat 1 one. The three he may have held back
    (5S, JS, AH) stay open to him: his four cards are uniform among the 35 unseen ones he may hold (44 unseen, less
    the other nine trumps), so he holds one of the three in 1 - C(32, 4) / C(35, 4) = 0.313 of the samples."""
    from spoilfive_env.cards import PRIVILEGED, STRENGTH, TRUMP

    core = dealt_core(["2S 7C 8C 9C 10C", "5S KC QD 3H 4H", "6D 7D 8D 9D 10D"], "9S", dealer=2)
    play_core(core, "2S", "KC")
    assert core.legal_mask()[0, card_index("6D")] and int(core.current[0]) == 2
    holders, _ = sample_hidden(np.repeat(core.observe(), 2000, axis=0), np.random.default_rng(0))
    spades = 3
    led = card_index("2S")
    may_hold_back = PRIVILEGED[spades] & (STRENGTH[spades] > STRENGTH[spades, led])
    bound_to_play = (EFFECTIVE_SUIT[spades] == TRUMP) & ~may_hold_back
    seat_1 = 2  # two places to the left of the viewer, seat 2
    assert not ((holders == seat_1) & bound_to_play[None, :]).any()
    held_back = ((holders == seat_1) & may_hold_back[None, :]).any(axis=1).mean()
    assert abs(held_back - (1 - math.comb(32, 4) / math.comb(35, 4))) < 0.04  # 4 standard deviations of 2000 draws


def test_rules_whose_partnerships_differ_from_the_observations_or_a_value_that_is_no_number_are_refused():
    """Only the table size was checked against the rules: partnerships the observations do not show built games
    whose observe(0) differed from them; a NaN pool was read as -2**31 chips. Refused, the generator untouched."""
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    single = SpoilFiveCore(2, rules=Rules(num_players=4), seed=0).observe()
    teams = SpoilFiveCore(2, rules=Rules(num_players=4, partnerships=True), seed=0).observe()
    with pytest.raises(ValueError, match="^rules have partnerships=True but the observations mark no teammates$"):
        sample_hidden(single, rng, Rules(num_players=4, partnerships=True))
    with pytest.raises(ValueError, match="^rules have partnerships=False but the observations mark teammates$"):
        sample_hidden(teams, rng, Rules(num_players=4))
    holders, _ = sample_hidden(teams, np.random.default_rng(0), Rules(num_players=4, partnerships=True))
    np.testing.assert_array_equal(
        games_from_information(teams, holders, rules=Rules(num_players=4, partnerships=True)).observe(0), teams)
    damaged = single.copy()
    damaged[1, SLICES["pool"]] = np.nan
    with pytest.raises(ValueError, match="^row 1 is no Spoil Five observation: it holds a value that is not a finite"):
        sample_hidden(damaged, rng)
    assert rng.bit_generator.state == before


def test_sample_hidden_refuses_what_is_not_a_generator_or_rules():
    observations = SpoilFiveCore(2, seed=1).observe()
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator .* got NoneType"):
        sample_hidden(observations, None)  # was AttributeError
    with pytest.raises(ValueError, match="rules must be a spoilfive_env.rules.Rules .* got str"):
        sample_hidden(observations, np.random.default_rng(0), rules="default")


def robbed_by_another_seat():
    """One observation of a seat that saw another seat rob, sampled hidden hands and discard, and the true discard."""
    core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=3)
    rob = np.arange(ROB_FIRST, DECLINE_ROB)
    for _ in range(3):
        masks = core.legal_mask()
        robbing = masks[:, rob].any(axis=1)
        core.step(np.where(robbing, ROB_FIRST + masks[:, rob].argmax(axis=1), masks.argmax(axis=1)))
    game = int(np.flatnonzero(core.robber >= 0)[0])
    viewer = (int(core.robber[game]) + 1) % 4
    observation = core.subset([game]).observe(np.array([viewer]))
    holders, discards = sample_hidden(observation, np.random.default_rng(1))
    return observation, holders, discards


def test_games_from_information_refuses_a_discard_that_is_not_a_card_out_of_play():
    """A discard of 300 was stored as 44 (int8), 1.7 as 1, a card in a hand as the discard too, text was NumPy's
    DTypePromotionError and two discards for one row NumPy's reshape error."""
    observation, holders, discards = robbed_by_another_seat()
    held = int(np.flatnonzero(holders[0] >= 0)[0])
    for bad, says in ((np.array([300]), r"discards must be card indices 0-51 or -1, got \[300\]"),
                      (np.array([-5]), r"got \[-5\]"),
                      (np.array([2**64 - 1], np.uint64), r"got \[18446744073709551615\]"),
                      (np.array([1.7]), r"discards must be card indices 0-51 .* one per row \(1,\), got float64"),
                      (np.array([True]), "got bool"), ("x", "got <U1"),
                      (np.array([1, 2]), r"got int64 of shape \(2,\)"),
                      (np.array([held]), rf"row 0: the robber's discard {card_str(held)} is in a hand or played")):
        with pytest.raises(ValueError, match=says):
            games_from_information(observation, holders, bad)
    built = games_from_information(observation, holders, discards)
    assert int(built.discard[0]) == int(discards[0]) >= 0
    assert int(games_from_information(observation, holders, np.int64(-1)).discard[0]) == -1  # unknown


def test_observations_that_are_not_numbers_are_refused_in_words():
    """Objects were NumPy's TypeError; text and ragged lists NumPy's ValueError, naming no argument."""
    for bad in (np.array([object()] * OBS_DIM), ["x"] * OBS_DIM, [[1.0], [1.0, 2.0]]):
        with pytest.raises(ValueError, match=r"^an observation must be numbers \(float32, as observe\(\) gives them\)"):
            decode_observation(bad)
        with pytest.raises(ValueError, match=r"^observations must be numbers \(float32, as observe\(\) gives them\)"):
            sample_hidden([bad], np.random.default_rng(0))


@pytest.mark.parametrize("rules", CONFIGS[:3] + CONFIGS[9:11], ids=lambda r: f"n{r.num_players}"
                         + ("-conceal" if r.conceal_ace_penalty else ""))
def test_a_seat_that_is_not_to_act_sees_a_game_the_true_hands_rebuild_exactly(rules):
    """Another seat's turn to rob is shown to the others as play (it would name the ace's holder): from
    their observations the sampler must leave him the ace, and the true hands must rebuild his turn to rob."""
    n = rules.num_players
    rng = np.random.default_rng(n)
    core = SpoilFiveCore(60, rules=rules, seed=n + 100)
    hidden_rob_turns = aces_left_to_him = 0
    while not core.done.all():
        live = np.flatnonzero(~core.done)
        viewer = (core.current[live].astype(np.int64) + rng.integers(1, n, len(live))) % n  # never the one to act
        seats = np.zeros(core.batch_size, np.int64)
        seats[live] = viewer
        obs = core.observe(seats)[live]
        holders, discards = sample_hidden(obs, rng, rules)
        check_sample(obs, holders, discards, rules)
        assert np.array_equal(games_from_information(obs, holders, discards, rules).observe(0), obs)
        hidden = (core.phase[live] == PHASE_ROB) & (core.turnup[live] % NUM_RANKS != ACE)
        hidden_rob_turns += int(hidden.sum())
        if hidden.any():  # 20 more samples of each such row: how often is the ace left to him?
            rows = np.repeat(np.flatnonzero(hidden), 20)
            more, _ = sample_hidden(obs[rows], rng, rules)
            robbing_seat = (core.current[live][rows] - viewer[rows]) % n
            aces_left_to_him += int((more[np.arange(len(rows)), ACE_OF_TRUMPS[core.trump[live][rows]]]
                                     == robbing_seat).sum())
        true_holders = np.where(core.holder[live] >= 0, (core.holder[live] - viewer[:, None]) % n, -1)
        truth = games_from_information(obs, true_holders, core.discard[live], rules)
        real = core.subset(live)
        np.testing.assert_array_equal(truth.phase, real.phase)
        while not real.done.all():
            going = ~real.done
            assert np.array_equal(real.legal_mask()[going], truth.legal_mask()[going])
            actions = sample_legal(real.legal_mask(), rng)
            real.step(actions)
            truth.step(actions)
        core.step(sample_legal(core.legal_mask(), rng))
    assert hidden_rob_turns > 0, (hidden_rob_turns, aces_left_to_him)  # the case the test is for came up
    assert aces_left_to_him > 0, (hidden_rob_turns, aces_left_to_him)  # he may hold it: he does


def _corrupt(name):
    """An observation of the second trick's first decision, with one thing no game can show."""
    core = SpoilFiveCore(1, seed=3)
    rng = np.random.default_rng(0)
    while int(core.trick_number[0]) == 0:
        core.step(sample_legal(core.legal_mask(), rng))
    obs = core.observe()[0].copy()
    hand = np.flatnonzero(obs[SLICES["hand"]])
    played = np.flatnonzero(obs[SLICES["played"]].reshape(MAX_PLAYERS, 52).any(axis=0))
    turnup = int(np.argmax(obs[SLICES["turnup"]]))
    unseen = np.setdiff1d(np.arange(52), np.concatenate([hand, played, [turnup]]))
    at = {name: block.start for name, block in SLICES.items()}
    if name == "a card both in the hand and played":
        obs[at["hand"] + played[0]] = 1
    elif name == "a card short":
        obs[at["hand"] + hand[0]] = 0
    elif name == "a card too many":
        obs[at["hand"] + unseen[0]] = 1
    elif name == "the turn-up held by a viewer who did not rob":
        obs[at["hand"] + hand[0]] = 0
        obs[at["hand"] + turnup] = 1
    elif name == "a trump of another suit":
        obs[SLICES["trump"]] = 0
        obs[at["trump"] + (turnup // 13 + 1) % 4] = 1
    elif name == "more tricks won than played":
        obs[SLICES["tricks_won"]] = 1
    elif name == "no turn-up":
        obs[SLICES["turnup"]] = 0
    elif name == "no phase":
        obs[SLICES["phase"]] = 0
    elif name == "a later trick than the cards played":
        obs[SLICES["trick_number"]] = 0
        obs[at["trick_number"] + 3] = 1
    return obs[None]


def test_the_engine_s_extreme_chips_and_pool_read_back_as_its_counts():
    """The float32 the engine shows for CHIPS_MAX read back as 2**31, one past int32: -2147483648."""
    obs = _corrupt("nothing")
    obs[0, SLICES["pool"]] = np.float32(CHIPS_MAX / CHIP_SCALE)
    obs[0, SLICES["chips"].start:SLICES["chips"].start + 2] = (np.float32(CHIPS_MAX / CHIP_SCALE),
                                                               np.float32(CHIPS_MIN / CHIP_SCALE))
    info = read_information(obs)
    assert info.pool.tolist() == [CHIPS_MAX] and info.chips[0, :2].tolist() == [CHIPS_MAX, CHIPS_MIN]


@pytest.mark.parametrize("name, message", [
    ("a card both in the hand and played", "a card is both in the hand and played"),
    ("a card short", "the viewer holds and has played 5 cards in all"),
    ("a card too many", "the viewer has held and played more than 5 cards"),
    ("the turn-up held by a viewer who did not rob", "the turn-up is in the hand of a viewer who did not rob"),
    ("a trump of another suit", "the trump is not the turn-up's suit"),
    ("more tricks won than played", "the tricks won are not the tricks completed"),
    ("no turn-up", "the turnup block is not one-hot"),
    ("no phase", "the phase block is not one-hot"),  # was searched as robbing: "illegal action" deep inside
    ("a later trick than the cards played", "the cards played are not the completed tricks"),
])
def test_an_observation_no_game_can_show_is_refused_before_any_sample(name, message):
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match=f"row 0 is no Spoil Five observation: {message}"):
        sample_hidden(_corrupt(name), rng)
    assert rng.bit_generator.state == before  # nothing drawn
    assert sample_hidden(_corrupt("nothing"), rng)[0].shape == (1, 52)  # the untouched one is fine


def test_the_ace_of_hearts_on_a_trump_lead_follows_suit_and_bars_no_other_trump():
    """Clubs trump (9C turned). Seat 0 leads the 2C and seat 1 follows with the AH, a trump whatever the trump suit:
    he followed suit, so nothing bars his other trumps. His four cards are uniform among the 43 unseen ones but the
    AC (nobody announced it), so he holds one of the eight trumps he may not hold back (3C, 4C, 6C, 7C, 8C, 10C, QC,
    KC) in 1 - C(35, 4) / C(43, 4) = 0.576 of the samples (none if the AH were read as a plain card)."""
    core = dealt_core(["2C KH 3D 4D QD", "AH 2S 3S 4S 6S", "6D 7D 8D 10D 5S"], "9C", dealer=2)
    play_core(core, "2C", "AH")
    assert int(core.current[0]) == 2
    holders, _ = sample_hidden(np.repeat(core.observe(), 2000, axis=0), np.random.default_rng(0))
    seat_1 = 2  # two places to the left of the viewer, seat 2
    others = [card_index(c) for c in ("3C", "4C", "6C", "7C", "8C", "10C", "QC", "KC")]
    held = (holders[:, others] == seat_1).any(axis=1).mean()
    assert abs(held - (1 - math.comb(35, 4) / math.comb(43, 4))) < 0.045  # 4 standard deviations of 2000 draws


def test_where_no_deal_respects_what_was_seen_the_hidden_hands_are_dealt_regardless():
    """The last resort of the sampler: a seat that no deal can fill (here shown void in every suit, as no real
    observation shows) is dealt its cards anyway after the retries, rather than the search failing."""
    core = SpoilFiveCore(3, rules=Rules(num_players=4), seed=3)
    info = read_information(core.observe())
    info.voids[:, 1] = True
    holders, _ = sample_hidden(info, np.random.default_rng(0))
    assert ((holders == 1).sum(axis=1) == 5).all() and ((holders == 2).sum(axis=1) == 5).all()


def test_a_seat_that_answers_a_later_trump_lead_with_a_plain_card_holds_no_concealed_ace_either():
    """conceal_ace_penalty, hearts trump, the AH in nobody's hand (the stock). Nobody announced the ace, so a seat that
    held it past trick 1 concealed it, and a concealed AH loses its privilege for the rest of the hand (docs/rules.md):
    seat 1, who answers the 2H lead of trick 2 with the 2S, holds no AH. The other seats may hold it."""
    core = dealt_core(["2H KC 3D 4D 6D", "QC 2S 3S 4S 6S", "JC 8D 9D 10D 5S", "3H 10C 7S 8S 9S"], "7H", dealer=3,
                      conceal_ace_penalty=True)
    play_core(core, "KC", "QC", "JC", "10C", "2H", "2S")  # trick 1 to seat 0, who leads a trump; seat 1 plays a spade
    assert int(core.trick_number[0]) == 1 and int(core.current[0]) == 2
    holders, _ = sample_hidden(np.repeat(core.observe(), 400, axis=0), np.random.default_rng(0), core.rules)
    ace_at = holders[:, card_index("AH")]  # seats relative to seat 2: seat 1 is 3
    assert not (ace_at == 3).any(), "seat 1 could not have held back a concealed AH from the 2H"
    assert (ace_at == 1).any() and (ace_at == 2).any()
