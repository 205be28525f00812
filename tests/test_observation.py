"""The observation: its documented layout, decoding, and that it leaks no hidden card.

* the layout table in :mod:`spoilfive_env.observation`'s docstring matches
  ``OBSERVATION_LAYOUT``, and ``SLICES`` tile ``[0, OBS_DIM)`` exactly;
* ``decode_observation`` agrees with the core's state for random states, seats relative to
  the viewer, padding beyond the table empty; the same ``OBS_DIM`` for every table size;
* no leaks: two games whose deals differ only in cards the viewer cannot see (other seats'
  unplayed cards, the stock, the robber's discard), played with the same public actions,
  give the viewer the same observation;
* the voids block is sound: a seat marked void in an effective suit holds no card of it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import random_legal

from spoilfive_env import observation as obs_module
from spoilfive_env.actions import DECLINE_ROB, ROB_FIRST
from spoilfive_env.cards import (
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_CARDS,
    SUIT_NAMES,
    TRUMP,
    card_index,
    card_str,
)
from spoilfive_env.core import PHASE_DONE, PHASE_NAMES, PHASE_ROB, SpoilFiveCore
from spoilfive_env.observation import (
    EFFECTIVE_SUIT_NAMES,
    OBS_DIM,
    OBSERVATION_LAYOUT,
    SLICES,
    decode_observation,
)
from spoilfive_env.rules import Rules

NEVER = 10**6


def hands_of(core: SpoilFiveCore) -> np.ndarray:
    """The cards each seat holds, ``(B, n, 5)`` (every seat must hold five)."""
    B, n = core.batch_size, core.num_players
    return np.stack([np.nonzero(core.holder == s)[1].reshape(B, HAND_SIZE) for s in range(n)], axis=1)


def dealt_core(rules, hands, turnups, dealers, mode="hand"):
    core = SpoilFiveCore(len(hands), rules=rules, mode=mode, deal=False)
    core.reset(hands=np.asarray(hands), turnups=np.asarray(turnups), dealers=np.asarray(dealers))
    return core


def deal_from_text(rules, hands, turnup, dealer):
    return dealt_core(rules, [[[card_index(c) for c in hand.split()] for hand in hands]],
                      [card_index(turnup)], [dealer])


def play(core, *cards):
    for card in cards:
        core.step(np.array([card_index(card)]))


# ---------------------------------------------------------------- the documented layout


def docstring_layout():
    """``(name, size)`` rows of the table in the observation module's docstring."""
    rows = []
    for line in obs_module.__doc__.splitlines():
        match = re.match(r"^``(\w+)``\s+(\d+(?:\s*x\s*\d+)?)\s", line)
        if match:
            size = 1
            for factor in match.group(2).split("x"):
                size *= int(factor)
            rows.append((match.group(1), size))
    return rows


def test_docstring_table_matches_layout():
    assert docstring_layout() == list(OBSERVATION_LAYOUT)


def test_slices_tile_the_observation_exactly():
    covered = np.zeros(OBS_DIM, int)
    previous_stop = 0
    assert list(SLICES) == [name for name, _ in OBSERVATION_LAYOUT]
    for (_, size), block in zip(OBSERVATION_LAYOUT, SLICES.values()):
        assert block.start == previous_stop and block.stop - block.start == size and block.step is None
        covered[block] += 1
        previous_stop = block.stop
    assert previous_stop == OBS_DIM == sum(size for _, size in OBSERVATION_LAYOUT)
    assert (covered == 1).all()


@pytest.mark.parametrize("num_players", range(MIN_PLAYERS, MAX_PLAYERS + 1))
def test_same_obs_dim_for_every_table_size(num_players):
    core = SpoilFiveCore(3, rules=Rules(num_players=num_players), seed=0)
    assert core.obs_dim == OBS_DIM
    for seats in (None, 0, np.arange(3) % num_players):
        out = core.observe(seats)
        assert out.shape == (3, OBS_DIM) and out.dtype == np.float32


def test_decode_rejects_wrong_shapes_and_non_observations():
    with pytest.raises(ValueError, match=str(OBS_DIM)):
        decode_observation(np.zeros(OBS_DIM + 1, np.float32))
    with pytest.raises(ValueError, match="table_size"):
        decode_observation(np.zeros(OBS_DIM, np.float32))


def test_decode_takes_one_observation_not_a_batch_of_them():
    """One vector of shape (OBS_DIM,): a batch of one (what observe() returns for one game) is refused with the shape
    it should have, not read block by block along the wrong axis.
    Mutant killed: only the last axis's length checked (O47)."""
    batch = SpoilFiveCore(1, seed=3).observe()
    assert decode_observation(batch[0])["num_players"] == 4
    for wrong in (batch, batch[None], batch[0, :1].reshape(())):
        says = rf"an observation has shape \({OBS_DIM},\), got {re.escape(str(wrong.shape))}"
        with pytest.raises(ValueError, match=says):
            decode_observation(wrong)


# ---------------------------------------------------------------- decoding against the state


def relative(seat, viewer, n):
    return None if seat < 0 else (int(seat) - int(viewer)) % n


def check_decoded(core: SpoilFiveCore, game: int, viewer: int, vector: np.ndarray):
    n, rules = core.num_players, core.rules
    view = decode_observation(vector)
    absolute = [(viewer + k) % n for k in range(n)]
    cards = lambda mask: [card_str(int(c)) for c in np.flatnonzero(mask)]  # noqa: E731
    assert view["num_players"] == n
    assert view["hand"] == cards(core.holder[game] == viewer)
    robbed_here = core.robber[game] == viewer
    assert view["own_discard"] == (card_str(int(core.discard[game])) if robbed_here else None)
    assert view["turnup"] == card_str(int(core.turnup[game]))
    assert view["trump"] == SUIT_NAMES[core.trump[game]]
    assert view["played"] == [cards(core.played_by[game] == s) for s in absolute]
    leader = int(core.leader[game])
    trick = [((leader + p - viewer) % n, card_str(int(core.trick_cards[game, p])))
             for p in range(int(core.trick_pos[game]))]
    assert view["trick"] == trick
    led = int(core.led_card[game])
    assert view["led_card"] == (card_str(led) if led >= 0 else None)
    assert view["tricks_won"] == [int(core.tricks_won[game, s]) for s in absolute]
    done = core.phase[game] == PHASE_DONE
    assert view["to_act"] == (None if done else relative(core.current[game], viewer, n))
    assert view["leader"] == relative(core.leader[game], viewer, n)
    assert view["dealer"] == relative(core.dealer[game], viewer, n)
    assert view["robber"] == relative(core.robber[game], viewer, n)
    assert view["declined"] == relative(core.declined_by[game], viewer, n)
    assert view["jinker"] == relative(core.jinker[game], viewer, n)
    assert view["voids"] == [[EFFECTIVE_SUIT_NAMES[v] for v in np.flatnonzero(core.void[game, s])]
                             for s in absolute]
    assert view["own_concealed"] == bool(core.concealed[game] and core.rob_seat[game] == viewer)
    # Another seat's turn to rob an ordinary turn-up shows as play: it would name the ace holder.
    hidden_rob = (core.phase[game] == PHASE_ROB and core.current[game] != viewer
                  and core.turnup[game] % 13 != 0)
    assert view["phase"] == ("play" if hidden_rob else PHASE_NAMES[core.phase[game]])
    assert view["trick_number"] == int(core.trick_number[game])
    assert view["teammates"] == (list(range(0, n, 2)) if rules.partnerships else [])
    assert view["pool"] == int(core.pool[game])
    assert view["chips"] == [int(core.chips[game, s]) for s in absolute]
    game_mode = core.mode == "game"
    assert view["game_mode"] == game_mode
    if game_mode:
        assert view["hands_completed_fraction"] == pytest.approx(core.hand_index[game] / rules.num_hands)
        assert view["past_num_hands"] == bool(core.hand_index[game] >= rules.num_hands)
    # Padding beyond the table stays empty; the seats present are exactly the table.
    for name, per_seat in (("played", NUM_CARDS), ("tricks_won", 1), ("voids", 5), ("chips", 1),
                           ("trick_seats", 1), ("to_act", 1), ("leader", 1), ("dealer", 1),
                           ("robber", 1), ("declined", 1), ("jinker", 1), ("teammates", 1)):
        assert not vector[SLICES[name]][n * per_seat:].any(), f"{name} padding is not empty"
    np.testing.assert_array_equal(vector[SLICES["seat_present"]], np.arange(MAX_PLAYERS) < n)
    table = np.zeros(MAX_PLAYERS - MIN_PLAYERS + 1)
    table[n - MIN_PLAYERS] = 1
    np.testing.assert_array_equal(vector[SLICES["table_size"]], table)
    trick_seats = sorted(seat for seat, _ in trick)
    assert np.flatnonzero(vector[SLICES["trick_seats"]]).tolist() == trick_seats


ROUND_TRIP_CASES = [
    (Rules(num_players=n), "hand") for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
] + [
    (Rules(num_players=4, partnerships=True), "game"),
    (Rules(num_players=6, partnerships=True), "hand"),
    (Rules(num_players=3, conceal_ace_penalty=True), "hand"),
    (Rules.preset("hoyle", num_players=5, num_hands=2, max_hands=4), "game"),
]


@pytest.mark.parametrize("rules,mode", ROUND_TRIP_CASES,
                         ids=[f"{r.num_players}p-{m}{'-teams' if r.partnerships else ''}"
                              f"{'-conceal' if r.conceal_ace_penalty else ''}" for r, m in ROUND_TRIP_CASES])
def test_decode_round_trips_against_the_core(rules, mode):
    B = 64
    core = SpoilFiveCore(B, rules=rules, mode=mode, seed=rules.num_players)
    rng = np.random.default_rng(7)
    checked = 0
    for step in range(6 * rules.num_players + 10):
        viewers = rng.integers(0, rules.num_players, size=B)
        vectors = core.observe(viewers)
        for game in rng.choice(B, size=6, replace=False):
            check_decoded(core, int(game), int(viewers[game]), vectors[game])
            checked += 1
        # The default seat is the one to act.
        np.testing.assert_array_equal(core.observe(), core.observe(core.current))
        core.step(random_legal(rng, core.legal_mask()))
        if step % 7 == 6:
            core.reset(core.done)
    assert checked > 100


def test_the_past_num_hands_flag_is_set_from_the_game_s_last_hand_on():
    """RULES.md: a game plays num_hands hands, then on until the pool is won. From hand_index == num_hands (the
    boundary itself, in a game that goes on for a spoiled pool or has just ended) the flag is set. The round
    trips play too few moves to reach it, so one hand a game and a four-seat table (where a hand can spoil)."""
    rules = Rules(num_players=4, num_hands=1)
    core = SpoilFiveCore(64, rules=rules, mode="game", seed=4)
    rng = np.random.default_rng(4)
    flag = SLICES["hand_place"].start + 1
    at_boundary = 0
    for _ in range(60):
        core.step(random_legal(rng, core.legal_mask()), where=~core.done)
        past = (core.hand_index >= rules.num_hands).astype(np.float32)
        for seat in range(rules.num_players):
            seats = np.full(core.batch_size, seat, np.int8)
            np.testing.assert_array_equal(core.observe(seats)[:, flag], past)
            np.testing.assert_array_equal(obs_module.numpy_observation(core, seats)[:, flag], past)
        at_boundary += int((core.hand_index == rules.num_hands).sum())
    assert at_boundary > 0  # (the boundary was reached, not only passed or never met)


def test_chips_and_the_pool_are_given_in_twentieths_from_the_viewer_s_seat():
    """The layout table says chips / 20 and pool / 20. decode_observation reads them back with the same
    constant, so the round trips would not see another scale; a network trained on one would misread it.
    Mutant killed: CHIP_SCALE 10, not 20 (O01; the suite caught it only through a bound's wording)."""
    rules = Rules(num_players=4, num_hands=3)
    core = SpoilFiveCore(16, rules=rules, mode="game", seed=5)
    rng = np.random.default_rng(5)
    for _ in range(25):
        for seat in range(rules.num_players):
            vectors = core.observe(np.full(core.batch_size, seat, np.int8))
            # relative seat k is absolute seat seat + k: the viewer's own stack first
            np.testing.assert_allclose(vectors[:, SLICES["chips"]][:, :4] * 20, np.roll(core.chips, -seat, axis=1),
                                       atol=1e-4)
            np.testing.assert_allclose(vectors[:, SLICES["pool"]][:, 0] * 20, core.pool, atol=1e-4)
        core.step(random_legal(rng, core.legal_mask()), where=~core.done)
    assert len(np.unique(core.chips)) > 3 and core.pool.max() > 4  # stacks and pools that moved


def test_every_observation_lies_within_the_bounds_negative_chips_included():
    """RULES.md: chips may go negative (a player is never dropped), so the chips block's lower bound is -inf,
    not 0: an env's observation space (and the agents' check against it) must hold such a stack. Starting
    with no chips, the first ante makes every stack negative.
    Mutant killed: the chips block's lower bound 0 (O10)."""
    low, high = obs_module.observation_bounds()
    rules = Rules(num_players=3, starting_chips=0, num_hands=3)
    core = SpoilFiveCore(32, rules=rules, mode="game", seed=3)
    rng = np.random.default_rng(3)
    for _ in range(30):
        for seat in range(rules.num_players):
            vectors = core.observe(np.full(core.batch_size, seat, np.int8))
            assert ((vectors >= low) & (vectors <= high)).all()
        core.step(random_legal(rng, core.legal_mask()), where=~core.done)
    assert core.chips.min() < 0


def test_observation_is_a_fresh_array():
    core = SpoilFiveCore(4, seed=1)
    first = core.observe()
    first[:] = 99
    assert not (core.observe() == 99).any()


# ---------------------------------------------------------------- no leaks


def play_and_record(rules, batch, seed):
    """Random hands in hand mode; the deal, every action, and when each card was played/robbed."""
    core = SpoilFiveCore(batch, rules=rules, seed=seed)
    rng = np.random.default_rng(seed + 100)
    deal = (hands_of(core), core.turnup.copy(), core.dealer.copy())
    actions = []
    played_at = np.full((batch, NUM_CARDS), NEVER)
    robbed_at = np.full(batch, NEVER)
    while not core.done.all():
        action = random_legal(rng, core.legal_mask())
        live = ~core.done
        plays = np.flatnonzero(live & (action < ROB_FIRST))
        played_at[plays, action[plays]] = len(actions)
        robbed_at[live & (action >= ROB_FIRST) & (action < DECLINE_ROB)] = len(actions)
        actions.append(action)
        core.step(action)
    return core, deal, actions, played_at, robbed_at


def hidden_variant(rules, kind, batch=600, seed=0):
    """Two deals per game that differ only in what ``viewer`` cannot see up to step ``horizon``.

    ``kind``: ``"swap"`` two other seats exchange an unplayed card; ``"stock"`` another seat's
    unplayed card is exchanged with an undealt one; ``"discard"`` the robber (not the viewer)
    discards a different unplayed card. Rob actions discarding a changed card are translated.
    """
    n = rules.num_players
    rng = np.random.default_rng(seed)
    final, (hands, turnups, dealers), actions, played_at, robbed_at = play_and_record(rules, batch, seed)
    horizon = rng.integers(0, len(actions) + 1, size=batch)
    viewer = rng.integers(0, n, size=batch)
    other_hands = hands.copy()
    translate = np.tile(np.arange(NUM_CARDS), (batch, 1))  # discard card in A -> discard in B
    changed = np.zeros(batch, bool)
    for g in range(batch):
        others = [s for s in range(n) if s != viewer[g]]

        def unseen(seat, g=g):  # positions in the seat's dealt hand not played before the horizon
            return [i for i in range(HAND_SIZE) if played_at[g, hands[g, seat, i]] >= horizon[g]]

        if kind == "swap" and len(others) >= 2:
            s1, s2 = rng.choice(others, 2, replace=False)
            u1, u2 = unseen(s1), unseen(s2)
            if u1 and u2:
                i, j = rng.choice(u1), rng.choice(u2)
                x, y = hands[g, s1, i], hands[g, s2, j]
                other_hands[g, s1, i], other_hands[g, s2, j] = y, x
                translate[g, x], translate[g, y] = y, x
                changed[g] = True
        elif kind == "stock":
            s1 = rng.choice(others)
            u1 = unseen(s1)
            stock = np.setdiff1d(np.arange(NUM_CARDS), np.append(hands[g].ravel(), turnups[g]))
            if u1 and len(stock):
                i, y = rng.choice(u1), rng.choice(stock)
                translate[g, hands[g, s1, i]] = y
                other_hands[g, s1, i] = y
                changed[g] = True
        elif kind == "discard":
            robber, discard = final.robber[g], final.discard[g]
            if robber >= 0 and robber != viewer[g] and robbed_at[g] < horizon[g]:
                choices = [hands[g, robber, i] for i in unseen(robber) if hands[g, robber, i] != discard]
                if choices:
                    translate[g, discard] = rng.choice(choices)
                    changed[g] = True
    return (hands, other_hands, turnups, dealers), actions, translate, viewer, horizon, changed


def compare_views(rules, kind, seed, strict_blocks):
    """Replay both deals with the same public actions; compare the viewer's observations.

    Returns the number of observations compared. A game stops being compared when the other
    deal makes the next action illegal (the hidden change became public) or after its horizon.
    Every block must agree, the phase too (another seat's turn to rob names the ace holder).
    """
    (hands, other_hands, turnups, dealers), actions, translate, viewer, horizon, live = \
        hidden_variant(rules, kind, batch=2000 if kind == "discard" else 600, seed=seed)
    a = dealt_core(rules, hands, turnups, dealers)
    b = dealt_core(rules, other_hands, turnups, dealers)
    rows = np.arange(len(hands))
    compared = 0
    for t, action in enumerate(actions):
        live &= t <= horizon
        if not live.any():
            break
        va, vb = a.observe(viewer), b.observe(viewer)
        differs = va != vb
        bad = live & (differs & strict_blocks).any(axis=1)
        assert not bad.any(), leak_message(a, b, int(np.flatnonzero(bad)[0]), viewer, differs)
        compared += int(live.sum())
        is_rob = (action >= ROB_FIRST) & (action < DECLINE_ROB)
        other_action = np.where(is_rob, translate[rows, np.clip(action - ROB_FIRST, 0, NUM_CARDS - 1)]
                                + ROB_FIRST, action)
        mask_b = b.legal_mask()
        legal = mask_b[rows, other_action] | b.done
        live &= legal
        a.step(action)
        b.step(np.where(legal, other_action, np.argmax(mask_b, axis=1)))
    return compared


def leak_message(a, b, game, viewer, differs):
    blocks = sorted({name for name, s in SLICES.items() if differs[game, s].any()})
    return (f"seat {viewer[game]}'s observation depends on hidden cards (blocks {blocks}) in game "
            f"{game}:\n  A: {a.describe(game)}\n  B: {b.describe(game)}")


LEAK_CASES = [
    (Rules(num_players=2), "stock"), (Rules(num_players=2), "discard"),
    (Rules(num_players=3), "swap"), (Rules(num_players=3), "discard"),
    (Rules(num_players=4), "swap"), (Rules(num_players=4), "stock"),
    (Rules(num_players=5), "discard"), (Rules(num_players=6, partnerships=True), "swap"),
    (Rules(num_players=7), "stock"), (Rules(num_players=10), "swap"), (Rules(num_players=10), "discard"),
]


@pytest.mark.parametrize("rules,kind", LEAK_CASES, ids=[f"{r.num_players}p-{k}" for r, k in LEAK_CASES])
def test_hidden_cards_do_not_change_the_viewers_observation(rules, kind):
    compared = compare_views(rules, kind, seed=rules.num_players, strict_blocks=np.ones(OBS_DIM, bool))
    assert compared > 500


@pytest.mark.parametrize("kind", ["swap", "stock", "discard"])
def test_hidden_cards_with_conceal_ace_penalty(kind):
    """With the variant too, no block leaks: not the voids, not the phase."""
    strict = np.ones(OBS_DIM, bool)
    assert compare_views(Rules(num_players=4, conceal_ace_penalty=True), kind, seed=11, strict_blocks=strict) > 500


CONCEAL_HANDS = (
    "2C 2H 8S 9S 10S",  # seat 0: leads clubs, then has no trump left for trick 3
    "{x} 6H 4C 5C 6C",  # seat 1: holds the ace of trumps (AH) or, in the other deal, 7C
    "3C 8D 9D 10D 2D",
    "5H JH 4H 3D 4D",  # seat 3 (the viewer, dealer): plays 5H and JH, then leads 4H
)


def test_concealed_ace_of_hearts_does_not_leak_through_voids():
    """Seat 1 conceals the AH (hearts trump) or holds 7C instead, with the AH undealt: the
    same public plays. When seat 0 answers the 4H lead with a plain card, the viewer cannot
    tell whether the AH could still be held back, so the void proof must not differ."""
    views = []
    for x in ("AH", "7C"):
        rules = Rules(num_players=4, conceal_ace_penalty=True)
        core = deal_from_text(rules, [h.format(x=x) for h in CONCEAL_HANDS], "7H", dealer=3)
        play(core, "2C", "4C", "3C", "5H", "JH", "2H", "6H", "8D", "4H", "8S")
        views.append(core.observe(3)[0])
    np.testing.assert_array_equal(views[0][SLICES["voids"]], views[1][SLICES["voids"]])


def test_conceal_variant_phase_does_not_show_who_holds_the_ace():
    """Under conceal_ace_penalty the ace holder may play without announcing; a viewer watching
    his turn in trick 1 must not see the phase 'rob' that only the ace in his hand causes."""
    views = []
    for x in ("AH", "7C"):
        rules = Rules(num_players=4, conceal_ace_penalty=True)
        core = deal_from_text(rules, [h.format(x=x) for h in CONCEAL_HANDS], "7H", dealer=3)
        play(core, "2C")  # seat 1 to act: robbing is open to him only when he holds the AH
        views.append(core.observe(3)[0])
    np.testing.assert_array_equal(views[0], views[1])


# ---------------------------------------------------------------- voids


@pytest.mark.parametrize("rules", [Rules(num_players=n) for n in (2, 3, 4, 6, 8, 10)]
                         + [Rules(num_players=4, conceal_ace_penalty=True),
                            Rules(num_players=6, partnerships=True)],
                         ids=lambda r: f"{r.num_players}p{'-conceal' if r.conceal_ace_penalty else ''}"
                                       f"{'-teams' if r.partnerships else ''}")
def test_voids_are_sound(rules):
    """A seat marked void in an effective suit holds no card of that suit, at every step."""
    B, n = 1000, rules.num_players
    core = SpoilFiveCore(B, rules=rules, seed=n)
    rng = np.random.default_rng(n)
    marked = trump_leads = trump_voids = 0
    for _ in range(5 * n + 20):
        for seat in range(n):
            held = core.holder == seat
            for suit in range(5):
                holds = (held & (core.effective_suit == suit)).any(axis=1)
                void = core.void[:, seat, suit]
                bad = np.flatnonzero(void & holds)
                assert not len(bad), f"seat {seat} marked void in {suit} but holds one: {core.describe(bad[0])}"
                marked += int(void.sum())
                if suit == TRUMP:
                    trump_voids += int(void.sum())
        led = core.led_card.astype(np.int64)
        trump_leads += int(((led >= 0) & (core.effective_suit[np.arange(B), np.maximum(led, 0)] == TRUMP)).sum())
        core.step(random_legal(rng, core.legal_mask()))
        core.reset(core.done)
    assert marked > 1000 and trump_leads > 500 and trump_voids > 100


def test_lone_privileged_trump_held_back_is_not_a_trump_void():
    """Spades trump, 8S led: the holder of a lone JS may renege, so his plain card proves nothing."""
    rules = Rules(num_players=3)
    core = deal_from_text(rules, ["8S 2C 3C 4C 5C", "JS 2D 3D 4D 5D", "9S 6C 7C 8C 9C"], "KS", dealer=2)
    assert core.phase[0] != PHASE_ROB  # the AS is undealt: nobody may rob
    play(core, "8S")
    mask = core.legal_mask()[0]
    assert mask[card_index("2D")] and mask[card_index("JS")]  # may renege
    play(core, "2D")
    assert not core.void[0, 1, TRUMP]
    assert core.holder[0, card_index("JS")] == 1  # indeed he still holds a trump
    view = decode_observation(core.observe(0)[0])
    assert view["voids"][1] == []
    play(core, "9S")  # a non-privileged trump holder must follow trumps...
    # ... whereas a plain card on a trump lead with every privileged trump accounted for proves it.
    core = deal_from_text(rules, ["8S 2C 3C 4C 5C", "7S 2D 3D 4D 5D", "9S 6C 7C 8C 9C"], "KS", dealer=2)
    play(core, "8S")
    assert not core.legal_mask()[0][card_index("2D")]


def test_plain_card_on_a_five_of_trumps_lead_proves_a_trump_void():
    rules = Rules(num_players=3)
    core = deal_from_text(rules, ["5S 2C 3C 4C 6C", "2D 3D 4D 6D 7D", "9S 7C 8C 9C 10C"], "KS", dealer=2)
    play(core, "5S", "2D")
    assert core.void[0, 1, TRUMP]
    assert decode_observation(core.observe(2)[0])["voids"][2] == ["trumps"]  # seat 1 is 2 left of seat 2


def test_plain_lead_trumping_proves_nothing_discarding_proves_a_void():
    rules = Rules(num_players=3)
    core = deal_from_text(rules, ["2C 3C 4C 6C 7C", "KC 9S 3D 4D 6D", "QS 8H 8D 9D 10D"], "KS", dealer=2)
    play(core, "2C", "9S")  # seat 1 holds KC but may trump
    assert not core.void[0, 1].any()
    play(core, "8H")  # seat 2 holds no club: a heart proves the club void
    assert core.void[0, 2, 0] and core.void[0, 2].sum() == 1


# ---------------------------------------------------------------- the compiled observation

BACKEND_RULES = [
    *(Rules(num_players=n) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)),
    Rules(num_players=4, partnerships=True),
    Rules(num_players=6, partnerships=True),
    Rules(num_players=3, conceal_ace_penalty=True),
    Rules(num_players=5, conceal_ace_penalty=True, jink_bonus=1),
]


@pytest.mark.parametrize("mode", ["hand", "game"])
@pytest.mark.parametrize("rules", BACKEND_RULES, ids=lambda r: f"{r.num_players}p"
                         f"{'-teams' if r.partnerships else ''}{'-conceal' if r.conceal_ace_penalty else ''}")
def test_compiled_observation_equals_the_numpy_definition(rules, mode):
    """Element for element, for every seat of every game, through whole hands (robs, jinks,
    game ends and resets included)."""
    kernel = pytest.importorskip("spoilfive_env.observation_kernel")
    n = rules.num_players
    core = SpoilFiveCore(64, rules=rules, mode=mode, seed=n)
    rng = np.random.default_rng(n)
    compared = 0
    for step in range(12 * n):
        for shift in range(n):
            seats = ((core.current + shift) % n).astype(np.int8)
            whole = obs_module.numpy_observation(core, seats)
            np.testing.assert_array_equal(kernel.build_observation(core, seats), whole)
            # any order, repeats too; a few of the games and most of them
            for games in (rng.choice(core.batch_size, size=int(rng.integers(0, 20))),
                          rng.choice(core.batch_size, size=int(rng.integers(33, 80)))):
                np.testing.assert_array_equal(kernel.build_observation(core, seats, games), whole[games])
                np.testing.assert_array_equal(obs_module.numpy_observation(core, seats, games), whole[games])
            compared += core.batch_size
        core.step(random_legal(rng, core.legal_mask()))
        if step % 5 == 4:
            core.reset(core.done)
    assert compared >= 64 * 12 * n * n


@pytest.mark.parametrize("games, shown", [
    (np.array([[0, 1]]), r"shape \(1, 2\)"), (np.array([0.0, 1.0]), "float64"), (np.array([0, 8]), "8"),
    (np.array([-1]), "-1"), ([True, False], "bool")])
def test_observe_refuses_games_that_are_not_game_indices(games, shown):
    core = SpoilFiveCore(8, seed=0)
    with pytest.raises(ValueError, match=rf"games must be integer game indices 0-7, got .*{shown}"):
        core.observe(games=games)


def test_observe_of_some_games_is_their_rows_of_the_whole_batch():
    core = SpoilFiveCore(16, rules=Rules(num_players=5), seed=1)
    rng = np.random.default_rng(1)
    for _ in range(20):
        games = np.array([7, 0, 7, 15])
        np.testing.assert_array_equal(core.observe(games=games), core.observe()[games])
        np.testing.assert_array_equal(core.observe(3, games=games), core.observe(3)[games])
        assert core.observe(games=[]).shape == (0, OBS_DIM)
        core.step(random_legal(rng, core.legal_mask()))


def test_the_observation_backend_is_chosen_by_the_environment(monkeypatch):
    for choice, expected in (("numpy", "numpy"), ("NumPy ", "numpy"), ("", None), ("auto", None)):
        monkeypatch.setattr(obs_module._backend, "chosen", None)
        monkeypatch.setenv("SPOILFIVE_OBSERVATION", choice)
        backend = obs_module.observation_backend()
        assert backend == (expected or ("numba" if _numba_available() else "numpy"))
        assert core_observation_shape() == (3, OBS_DIM)
    monkeypatch.setattr(obs_module._backend, "chosen", None)
    monkeypatch.setenv("SPOILFIVE_OBSERVATION", "fortran")
    with pytest.raises(ValueError, match="SPOILFIVE_OBSERVATION='fortran' is not allowed: choose one of "
                                         "auto, numba, numpy"):
        obs_module.observation_backend()


def test_a_command_answers_a_bad_backend_variable_in_one_line(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for variable in ("SPOILFIVE_OBSERVATION", "SPOILFIVE_RULES", "SPOILFIVE_CORE"):
        env = {**os.environ, variable: "fortran", "PYTHONPATH": str(root)}
        proc = subprocess.run([sys.executable, "-m", "agents.evaluate", "--agents", "pimc,spoiler", "--deals", "2"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr[-2000:]
        assert proc.stderr.splitlines() == [  # was a traceback from where the kernel was first used, after the bar
            f"python -m agents.evaluate: error: {variable}='fortran' is not allowed: choose one of auto, numba, numpy"]


def test_numba_asked_for_but_missing_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setattr(obs_module._backend, "chosen", None)
    monkeypatch.setenv("SPOILFIVE_OBSERVATION", "numba")
    import spoilfive_env

    # As if Numba were missing: the kernel module cannot be imported.
    monkeypatch.setitem(sys.modules, "spoilfive_env.observation_kernel", None)
    monkeypatch.delattr(spoilfive_env, "observation_kernel", raising=False)
    with pytest.raises(ImportError, match=r'SPOILFIVE_OBSERVATION=numba needs Numba .*: in the spoilfive checkout, '
                                          r'pip install -c \.ci/constraints\.txt -e "\.\[fast\]"'):
        obs_module.observation_backend()
    monkeypatch.setenv("SPOILFIVE_OBSERVATION", "auto")
    assert obs_module.observation_backend() == "numpy"  # auto falls back to the definition


def test_the_observation_backend_is_kept_once_chosen_whatever_the_variable_says_later(monkeypatch):
    """Chosen at the first use and kept (backends.LazyBackend): a process never switches kernels midway, and
    a variable changed afterwards is not read again (the tests set ``chosen`` back to None to choose anew)."""
    monkeypatch.setattr(obs_module._backend, "chosen", None)
    monkeypatch.setenv("SPOILFIVE_OBSERVATION", "numpy")
    assert obs_module.observation_backend() == "numpy"
    monkeypatch.setenv("SPOILFIVE_OBSERVATION", "fortran")  # would be refused, were it read again
    assert obs_module.observation_backend() == "numpy"
    assert core_observation_shape() == (3, OBS_DIM)


def test_numba_asked_for_but_missing_is_one_line_and_exit_2_from_a_command(monkeypatch, capsys):
    """BackendMissingError is a SettingError, so run_command answers it as a bad flag (one line, status 2),
    not with a traceback from wherever the observation was first built."""
    import sys

    import spoilfive_env
    from spoilfive_env.cli import BAD_USAGE, run_command

    monkeypatch.setattr(obs_module._backend, "chosen", None)
    monkeypatch.setenv("SPOILFIVE_OBSERVATION", "numba")
    monkeypatch.setitem(sys.modules, "spoilfive_env.observation_kernel", None)  # as if Numba were missing
    monkeypatch.delattr(spoilfive_env, "observation_kernel", raising=False)
    with pytest.raises(SystemExit) as stopped:
        run_command(lambda: print(core_observation_shape()) or 0)
    captured = capsys.readouterr()
    assert stopped.value.code == BAD_USAGE and captured.out == ""
    [line] = captured.err.splitlines()
    assert ": error: SPOILFIVE_OBSERVATION=numba needs Numba" in line and "Traceback" not in captured.err


def _numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def core_observation_shape():
    return SpoilFiveCore(3, seed=0).observe().shape
