"""Exact uniform dealing of unseen cards (spoilfive_env.dealing), checked against enumeration.

Every deal that respects the seats' restrictions must be equally likely. Small problems are
enumerated outright, and a ten-player position at the last trick is enumerated from the
observation itself (each seat's shown voids and the ace of trumps nobody may hold), so the
check does not lean on the sampler's own reading of the observation.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import spoilfive_env.dealing as dealing
import spoilfive_env.determinize as determinize
from agents.base import sample_legal
from spoilfive_env.cards import ACE, ACE_OF_TRUMPS, EFFECTIVE_SUIT, NUM_CARDS, NUM_RANKS, card_index
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.dealing import deal_uniform, needs_exact_deal
from spoilfive_env.determinize import read_information, sample_hidden
from spoilfive_env.rules import Rules

DRAWS = 20_000


def problem(num_seats, unseen, slots, barred):
    """``(unknown, slots, forbidden)`` rows for one problem: ``barred`` maps a seat to its cards."""
    unknown = np.zeros(52, bool)
    unknown[[card_index(c) for c in unseen]] = True
    forbidden = np.zeros((num_seats, 52), bool)
    forbidden[0] = True
    for seat, cards in barred.items():
        forbidden[seat, [card_index(c) for c in cards]] = True
    return unknown, np.array(slots), forbidden


def enumerate_deals(unknown, slots, forbidden):
    """Every deal, ``(D, 52)`` seat or -1, by brute force over the orders of the unseen cards."""
    cards = np.flatnonzero(unknown)
    places = [seat for seat in range(1, len(slots)) for _ in range(slots[seat])]
    places += [-1] * (len(cards) - len(places))
    deals = {order for order in itertools.permutations(places)
             if all(seat < 0 or not forbidden[seat, card] for seat, card in zip(order, cards))}
    out = np.full((len(deals), 52), -1, np.int8)
    out[:, cards] = np.array(sorted(deals), np.int8).reshape(len(deals), len(cards))
    return out


def largest_z(drawn, deals, num_seats):
    """The largest standardised gap between how often each card went to each seat (or no hand)
    in ``drawn`` and in the uniform distribution over ``deals``."""
    worst = 0.0
    for seat in range(-1, num_seats):
        expected = (deals == seat).mean(axis=0)
        got = (drawn == seat).mean(axis=0)
        spread = np.sqrt(expected * (1 - expected) / len(drawn))
        inside = (expected > 0) & (expected < 1)
        assert np.array_equal(got[~inside], expected[~inside]), "a card went where no deal puts it"
        worst = max(worst, float((np.abs(got - expected)[inside] / spread[inside]).max(initial=0.0)))
    return worst


# The shape the audit of 2026-12-03 found biased at ten players: two seats void in different
# suits, one card each, one card left over (408 deals of 6 cards among 5 one-card seats).
TEN_PLAYER_LAST_TRICK = (6, ["JC", "3D", "9D", "2H", "2S", "6S"], [0, 1, 1, 1, 1, 1],
                         {1: ["2S", "6S"], 2: ["2H"]})
PROBLEMS = {
    "two voids, last trick": TEN_PLAYER_LAST_TRICK,
    "three restrictions, two cards each": (4, ["AC", "KC", "QD", "JD", "2H", "3H", "4S", "5S"], [0, 2, 2, 2],
                                           {1: ["AC", "KC"], 2: ["2H", "3H", "QD"], 3: ["4S"]}),
    "two seats alike and one not": (5, ["AC", "KC", "QD", "JD", "2H", "3H", "4S"], [0, 2, 2, 1, 1],
                                    {1: ["AC", "KC"], 2: ["AC", "KC"], 3: ["2H", "3H", "4S"]}),
    "nobody restricted": (3, ["AC", "KC", "QD", "JD"], [0, 2, 1], {}),
}


@pytest.mark.parametrize("name", PROBLEMS)
def test_every_deal_is_equally_likely(name):
    num_seats, unseen, slots, barred = PROBLEMS[name]
    unknown, slots, forbidden = problem(num_seats, unseen, slots, barred)
    deals = enumerate_deals(unknown, slots, forbidden)
    ok, drawn = deal_uniform(np.repeat(unknown[None], DRAWS, 0), np.repeat(slots[None], DRAWS, 0),
                             np.repeat(forbidden[None], DRAWS, 0), np.random.default_rng(1))
    assert ok.all()
    for seat in range(1, num_seats):
        assert ((drawn == seat).sum(axis=1) == slots[seat]).all()
        assert not ((drawn == seat) & forbidden[seat]).any()
    assert largest_z(drawn, deals, num_seats) < 5


def test_dealing_seat_by_seat_is_what_it_mends():
    # The test above can tell: the seat-by-seat deal it replaces for these rows fails it.
    unknown, slots, forbidden = problem(*TEN_PLAYER_LAST_TRICK)
    deals = enumerate_deals(unknown, slots, forbidden)
    ok, drawn = determinize._deal_unknown(np.repeat(unknown[None], DRAWS, 0), np.repeat(slots[None], DRAWS, 0),
                                          np.repeat(forbidden[None], DRAWS, 0), np.random.default_rng(1))
    assert ok.all() and largest_z(drawn, deals, 6) > 10


def test_only_seats_restricted_differently_need_the_exact_deal():
    alike = problem(4, ["AC", "KC", "QD", "2H"], [0, 1, 1, 1], {1: ["AC"], 2: ["AC"]})
    different = problem(4, ["AC", "KC", "QD", "2H"], [0, 1, 1, 1], {1: ["AC"], 2: ["KC"]})
    played_out = problem(4, ["AC", "KC", "QD", "2H"], [0, 0, 1, 1], {1: ["AC"], 2: ["KC"]})
    seen_card = problem(4, ["AC", "KC", "QD", "2H"], [0, 1, 1, 1], {1: ["AC"], 2: ["AC", "9S"]})
    rows = [alike, different, played_out, seen_card]
    flags = needs_exact_deal(*(np.array([r[i] for r in rows]) for i in range(3)))
    assert flags.tolist() == [False, True, False, False]


def test_nothing_to_deal_is_an_empty_deal():
    nothing = problem(3, [], [0, 0, 0], {})
    ok, drawn = deal_uniform(*(x[None] for x in nothing), np.random.default_rng(0))
    assert ok[0] and (drawn == -1).all()


class EdgeDraws:
    """A generator stand-in whose uniform numbers are ``value``: the edges a real one can give (0.0 among them)."""

    def __init__(self, value):
        self.value = value

    def random(self, size):
        return np.full(size, self.value)


def test_a_draw_never_picks_an_index_of_zero_weight_even_at_the_edges_of_the_unit_interval():
    """_draw picks index i where the running total first exceeds u * total: u = 0.0 (which Generator.random
    can return) must skip the leading zero weights, and u just below 1 must skip trailing ones."""
    weights = np.array([[0.0, 0.0, 2.0, 0.0, 1.0, 0.0], [0.0, 3.0, 0.0, 0.0, 0.0, 0.0]])
    assert dealing._draw(weights, EdgeDraws(0.0)).tolist() == [2, 1]
    assert dealing._draw(weights, EdgeDraws(np.nextafter(1.0, 0.0))).tolist() == [4, 1]
    assert dealing._draw(weights, EdgeDraws(0.5)).tolist() == [2, 1]  # 1.5 of 3: still in the first weight


def test_a_problem_without_a_deal_or_too_large_is_left_to_the_caller(monkeypatch):
    impossible = problem(3, ["AC", "KC", "QD"], [0, 2, 1], {1: ["AC", "KC"], 2: ["QD"]})
    ok, drawn = deal_uniform(*(x[None] for x in impossible), np.random.default_rng(0))
    assert not ok[0] and (drawn == -1).all()
    monkeypatch.setattr(dealing, "MAX_CELLS", 1)
    ok, _ = deal_uniform(*(x[None] for x in problem(*TEN_PLAYER_LAST_TRICK)), np.random.default_rng(0))
    assert not ok[0]


def test_rows_that_differ_only_in_how_many_cards_each_seat_needs_are_dealt_each_to_its_own_counts():
    """Rows are solved once per problem, and the counts are part of the problem: the same unseen cards and
    restrictions with other counts is another problem."""
    one_two = problem(3, ["AC", "KC", "QD", "2H"], [0, 1, 2], {1: ["AC"], 2: ["KC"]})
    two_one = problem(3, ["AC", "KC", "QD", "2H"], [0, 2, 1], {1: ["AC"], 2: ["KC"]})
    rows = [one_two, two_one] * 50
    ok, drawn = deal_uniform(*(np.array([r[i] for r in rows]) for i in range(3)), np.random.default_rng(0))
    assert ok.all()
    for row, (_, slots, _) in enumerate(rows):
        assert [(drawn[row] == seat).sum() for seat in (1, 2)] == slots[1:].tolist()


def test_seats_alike_keep_their_own_counts_and_a_restriction_far_down_the_unseen_cards_still_counts():
    """Seats 1 and 2 may not hold the AC (one group) and need 1 and 3 cards; seats 3 and 4 are barred only from
    the last two of the ten unseen cards, one each: two groups, each kept off its own card."""
    unseen = sorted(["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "KH"], key=card_index)
    unknown, slots, forbidden = problem(5, unseen, [0, 1, 3, 2, 2], {1: ["AC"], 2: ["AC"], 3: [unseen[-2]],
                                                                    4: [unseen[-1]]})
    ok, drawn = deal_uniform(np.repeat(unknown[None], 2000, 0), np.repeat(slots[None], 2000, 0),
                             np.repeat(forbidden[None], 2000, 0), np.random.default_rng(3))
    assert ok.all()
    for seat in range(1, 5):
        assert ((drawn == seat).sum(axis=1) == slots[seat]).all()
        assert not ((drawn == seat) & forbidden[seat]).any()


def test_a_problem_is_left_to_the_caller_exactly_where_its_count_tensor_passes_max_cells(monkeypatch):
    """The ten-player shape: two groups of one place each (a 2 x 2 tensor over their places) and, at most,
    three cards of one type (JC, 3D and 9D, which either may hold) to count on a last axis of 4: 16 cells."""
    unknown, slots, forbidden = (x[None] for x in problem(*TEN_PLAYER_LAST_TRICK))
    monkeypatch.setattr(dealing, "MAX_CELLS", 16)
    assert deal_uniform(unknown, slots, forbidden, np.random.default_rng(0))[0].all()
    monkeypatch.setattr(dealing, "MAX_CELLS", 15)
    assert not deal_uniform(unknown, slots, forbidden, np.random.default_rng(0))[0].any()


def barred_by_observation(info, row, unseen):
    """``(n, 52)``: the unseen cards each seat cannot hold, read from the observation alone: a
    suit it showed void in, and the ace of trumps for anyone past his first turn (no robbing)."""
    suits = EFFECTIVE_SUIT[info.trump[row]]
    barred = info.voids[row][:, suits] & unseen
    assert info.trick_number[row] > 0 and info.robber[row] < 0 and info.declined[row] < 0
    if info.turnup[row] % NUM_RANKS != ACE:
        barred[:, ACE_OF_TRUMPS[info.trump[row]]] = True
    barred[0] = True
    return barred


def test_sample_hidden_is_uniform_over_the_deals_a_ten_player_observation_allows(monkeypatch):
    n = 10
    rules = Rules(num_players=n)
    rng = np.random.default_rng(0)
    core = SpoilFiveCore(100, rules=rules, seed=7)
    chosen = None
    while chosen is None and not core.done.all():
        obs = core.observe()
        info = read_information(obs)
        # The last trick, the viewer third to play or later, nobody robbed, and two seats still to
        # play restricted differently: where a seat-by-seat deal was measurably off.
        for row in np.flatnonzero((info.trick_number == 4) & (info.trick_pos >= 2) & (info.robber < 0)
                                  & (info.declined < 0) & ~core.done):
            unseen = ~info.hand[row] & (info.played_by[row] < 0)
            unseen[info.turnup[row]] = False
            left = 5 - (info.played_by[row, :, None] == np.arange(n)).sum(axis=0)
            left[0] = 0
            barred = barred_by_observation(info, row, unseen)
            kinds = {tuple(np.flatnonzero(barred[seat] & unseen)) for seat in range(1, n) if left[seat]}
            if len(kinds - {()}) >= 2:
                chosen = row
                break
        else:
            core.step(sample_legal(core.legal_mask(), rng))
    assert chosen is not None, "seed 7 gives such a position"
    deals = enumerate_deals(unseen, left, barred)
    deals[:, info.hand[chosen]] = 0
    drawn, _ = sample_hidden(np.repeat(obs[chosen:chosen + 1], DRAWS, 0), np.random.default_rng(2), rules)
    assert largest_z(drawn, deals, n) < 5
    # Dealt seat by seat, as before the exact deal, the same position is far off (1,680 deals).
    monkeypatch.setattr(determinize, "needs_exact_deal", lambda unknown, slots, forbidden: np.zeros(len(unknown), bool))
    drawn, _ = sample_hidden(np.repeat(obs[chosen:chosen + 1], DRAWS, 0), np.random.default_rng(2), rules)
    assert largest_z(drawn, deals, n) > 10


def test_the_fast_helpers_give_what_their_plain_forms_give():
    """The sampler's speed-ups (a bincount, packed bits, argmaxes, an inverse permutation) decide the
    same as the (B, 52, n) comparisons and full argsorts they replaced: the same deals from the same
    random numbers."""
    rng = np.random.default_rng(5)
    k, n = 3000, 5
    seat_of_card = rng.integers(-1, n, (k, NUM_CARDS)).astype(np.int8)
    plain = (seat_of_card[:, :, None] == np.arange(n)).sum(axis=1)
    assert np.array_equal(determinize._per_seat_counts(seat_of_card, n), plain)

    unknown = rng.random((k, NUM_CARDS)) < 0.5
    forbidden = rng.random((k, n, NUM_CARDS)) < 0.03
    forbidden[::2, :, 40:] = False  # many rows whose seats are restricted alike
    forbidden[::3] = False
    slots = rng.integers(0, 3, (k, n))
    restricted = forbidden & unknown[:, None, :]
    code = (restricted.astype(np.uint64) << np.arange(NUM_CARDS, dtype=np.uint64)).sum(axis=2, dtype=np.uint64)
    seated = (slots > 0) & restricted.any(axis=2)
    alike = np.where(seated, code, np.iinfo(np.uint64).max).min(axis=1) == np.where(seated, code, 0).max(axis=1)
    flags = needs_exact_deal(unknown, slots, forbidden)
    assert np.array_equal(flags, seated.any(axis=1) & ~alike) and 0.05 < flags.mean() < 0.95

    score = np.where(rng.random((k, NUM_CARDS)) < 0.2, rng.random((k, NUM_CARDS)), -1.0)
    top = determinize._largest_first(score, 5)
    full = np.argsort(-score, axis=1)[:, :5]
    counted = np.take_along_axis(score, full, axis=1) >= 0  # past the allowed cards, ties at -1 in any order
    assert np.array_equal(top[counted], full[counted]) and (~counted).any()

    mask = rng.random((k, 30)) < 0.8
    keys = np.where(mask, np.random.default_rng(9).random((k, 30)), 2.0)  # the numbers _split draws
    place = np.argsort(np.argsort(keys, axis=1), axis=1)
    counts, owners = np.array([3, 5, 4]), np.array([7, 8, 9])
    expected = np.append(owners, -1)[(place[:, :, None] >= np.cumsum(counts)[None, None, :]).sum(axis=2)]
    split = dealing._split(mask, owners, counts, np.random.default_rng(9))
    assert np.array_equal(split, np.where(mask, expected, -1))
    per_row = rng.integers(0, 6, (k, 3))  # counts row by row
    expected = np.append(owners, -1)[(place[:, :, None] >= np.cumsum(per_row, axis=1)[:, None, :]).sum(axis=2)]
    split = dealing._split(mask, owners, per_row, np.random.default_rng(9))
    assert np.array_equal(split, np.where(mask, expected, -1))


def test_a_seat_by_seat_deal_says_where_a_seat_ran_out_of_cards_it_may_hold():
    """The seat-by-seat deal marks the rows it could not fill (the sampler deals those again), not a short hand:
    seat 1 may hold only the QD but needs two cards; with one card to take, it takes the QD."""
    stuck = problem(3, ["AC", "KC", "QD"], [0, 2, 1], {1: ["AC", "KC"]})
    fits = problem(3, ["AC", "KC", "QD"], [0, 1, 2], {1: ["AC", "KC"]})
    ok, filled = determinize._deal_unknown(*(np.stack([a, b]) for a, b in zip(stuck, fits, strict=True)),
                                           np.random.default_rng(0))
    assert ok.tolist() == [False, True]
    assert filled[1, card_index("QD")] == 1 and (filled[1, [card_index("AC"), card_index("KC")]] == 2).all()
