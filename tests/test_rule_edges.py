"""Rules that only the randomised tests guarded: partnerships, a carried pool, the first dealer, chips
below zero, the game's length, the hand cap, the concealed ace, the void proofs of the observation;
and one that no test guarded: who declined a rob is shown to every seat.

Each test was written because a small deliberate break of the engine (a "mutant", named in the
test's docstring), made in a mutation-testing audit, went unnoticed by every hand-worked test: it
was caught only by the randomised differential test against ``tests/reference.py`` or by the
random-play invariants, or by nothing at all. Every expectation is worked out by hand from
``shared/spec/RULES.md`` (and ``docs/rules.md`` where it records a decision), never taken from
the engine. Script language: ``conftest.py``. Unless a test says otherwise: default rules, the
dealer is the last seat, so seat 0 is eldest and leads, and the pool starts empty.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import Deal, ScriptedHand, dealt_core, make_env, play_core, random_legal

from spoilfive_env.actions import DECLINE_ROB
from spoilfive_env.cards import TRUMP, card_index
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.observation import SLICES, decode_observation
from spoilfive_env.rules import Rules

# Clubs trump (9C turned), and nobody holds a club or the ace of hearts: every trick is won by
# the highest card of the suit led, and nobody may rob.
SPOIL_4 = Deal(["KD 2H 4S 6D 6H", "2D KH 2S 7D 7H", "3D 3H KS 5D 8H", "4D 4H 3S QD 5H"], "9C")
SPOIL_4_SCRIPT = ("0:KD 1:2D 2:3D 3:4D >0 0:2H 1:KH 2:3H 3:4H >1 1:2S 2:KS 3:3S 0:4S >2 "
                  "2:5D 3:QD 0:6D 1:7D | >3 3:5H 0:6H 1:7H 2:8H")
# Tricks 1-3 go to seats 0, 2, 2: the even team takes the first three between its two players.
TEAM_THREE = Deal(["KD 2H 4S 7D JH", "2D 3H 2S 5D 9H", "3D KH KS QD 10H", "4D 4H 3S 6D 8H"], "9C")
TEAM_THREE_SCRIPT = "0:KD 1:2D 2:3D 3:4D >0 0:2H 1:3H 2:KH 3:4H >2 2:KS 3:3S 0:4S 1:2S >2 2?claim,jink"
# Spades trump (9S turned); seat 0 takes the first three tricks with 5S, JS and AH.
STRONG = Deal(["5S JS AH KS QS", "2S 2D 3D 4D 6D", "3S 2H 3H 4H 6H", "4S 2C 3C 4C 6C"], "9S")
CLAIM_SCRIPT = ("0:5S 1:2S 2:3S 3:4S >0 0:JS 1:2D 2:2H 3:2C >0 0:AH 1:3D 2:3H 3:3C >0 "
                "0?claim,jink 0:claim")


def run(deal: Deal, script: str, rules: dict | None = None, reward: str = "chips", mode: str = "hand",
        pool: int = 0) -> list[float]:
    hand = ScriptedHand(deal, rules=rules or {}, reward=reward, mode=mode, pool=pool)
    hand.run(script)
    return hand.totals.tolist()


# ---------------------------------------------------------------- partnerships (003)


@pytest.mark.parametrize("reward", ["chips", "equity"])
def test_partnerships_two_two_after_four_tricks_is_no_spoil(reward):
    """RULES.md, partnerships: "no spoils are possible with two teams except a failed jink".

    Tricks go to seats 0, 1, 2, 3: no single seat can reach three any more, but each team has
    two, so trick 5 decides: 8H (seat 2) wins it and the even team takes the pool of 4, 2 each.
    Mutant killed: the individual "nobody can reach three" spoil check applied to partnerships.
    """
    script = SPOIL_4_SCRIPT.replace("| ", "") + " >2"
    assert run(SPOIL_4, script, {"partnerships": True}, reward) == pytest.approx([1, -1, 1, -1])


def test_partnerships_first_three_tricks_between_two_partners_offer_the_jink_and_claim():
    """RULES.md, partnerships: "a team that took the first three tricks between them may jink".

    Seat 0 takes trick 1 and seat 2 tricks 2 and 3: the team has three tricks though no player
    does, so seat 2 (who won trick 3) is asked to claim or jink. Claiming shares the pool of 4.
    Mutant killed: the jink offered only to a single player holding the three tricks.
    """
    assert run(TEAM_THREE, TEAM_THREE_SCRIPT + " 2:claim", {"partnerships": True}) == [1, -1, 1, -1]


@pytest.mark.parametrize("reward", ["chips", "equity"])
def test_partnerships_jink_goes_on_when_the_partner_takes_trick_four(reward):
    """RULES.md: a jink is lost only when the other side takes trick 4 or 5.

    Seat 2 jinks; his partner seat 0 takes trick 4 with JH and seat 2 takes trick 5 with QD:
    the jink is won, not spoiled. Pool 4: 2 to each partner, and (tests/test_scenarios.py's
    reading) each opponent pays the bonus of 2 and each partner receives 2.
    Mutant killed: the jink lost whenever the jinking *seat* fails to take a trick.
    """
    script = TEAM_THREE_SCRIPT + " 2:jink 2:10H 3:8H 0:JH 1:9H >0 0:7D 1:5D 2:QD 3:6D"
    assert run(TEAM_THREE, script, {"partnerships": True}, reward) == pytest.approx([3, -3, 3, -3])


# ---------------------------------------------------------------- antes


@pytest.mark.parametrize(("reward", "expected"), [("chips", [5, 0, 0, -1]), ("equity", [4, -1, -1, -2])])
def test_a_carried_pool_takes_the_spoil_ante_not_the_ante(reward, expected):
    """RULES.md: after a spoiled hand each player adds ``spoil_ante``; docs/rules.md decision (e):
    a reset ``pool`` is such a carried-over pool. Preset dealer_feeds (``spoil_ante=0``,
    ``dealer_ante=1``) with 4 chips carried: only the dealer (seat 3) pays, 1 chip, and seat 0
    claims 4 + 1 = 5. Equity: the pool went from 4 to 0, 1 chip of it each seat's share.
    Mutant killed: an injected pool treated as a new pool (``ante`` paid by everyone).
    """
    assert run(STRONG, CLAIM_SCRIPT, {"preset": "dealer_feeds"}, reward, pool=4) == pytest.approx(expected)


# ---------------------------------------------------------------- the first dealer


def test_the_first_dealer_is_drawn_at_random_from_the_seed():
    """RULES.md: "The first dealer is drawn at random from the episode's seed". Over 400 games
    of one core every seat of four deals some first hand, and the same seed draws the same
    dealers, in a core and in the environment (``reset(seed=...)`` without a ``dealer`` option).
    Mutant killed: the first dealer always seat 0 (found only by an unrelated uniformity test).
    """
    dealers = SpoilFiveCore(400, rules=Rules(num_players=4), seed=11).dealer
    assert set(dealers.tolist()) == {0, 1, 2, 3}
    np.testing.assert_array_equal(SpoilFiveCore(400, rules=Rules(num_players=4), seed=11).dealer, dealers)
    game = make_env(4)
    drawn = []
    for seed in range(40):
        game.reset(seed=seed)
        drawn.append(int(game.core.dealer[0]))
    assert set(drawn) == {0, 1, 2, 3}
    game.reset(seed=7)
    again = int(game.core.dealer[0])
    game.reset(seed=7)
    assert int(game.core.dealer[0]) == again == drawn[7]


# ---------------------------------------------------------------- chips may go negative


def test_chips_go_negative_and_a_player_without_chips_is_dealt_in():
    """RULES.md: "Chips may go negative (a player is never dropped)". A game of two hands that
    starts with every seat at 0 chips: the antes take each to -1; seat 0 claims the pool of 4
    (chips [3, -1, -1, -1]); hand 2 is dealt to all four seats, and its antes leave
    [2, -2, -2, -2].
    Mutant killed: an ante clipped at 0 chips (caught before only by the randomised invariants).
    """
    hand = ScriptedHand(STRONG, rules={"num_hands": 2}, mode="game")
    hand.env.reset(options={**STRONG.options(), "chips": [0, 0, 0, 0]})
    core = hand.env.core
    assert core.chips[0].tolist() == [-1, -1, -1, -1] and int(core.pool[0]) == 4
    hand.run(CLAIM_SCRIPT, until_done=False)
    assert int(core.hand_index[0]) == 1
    assert core.chips[0].tolist() == [2, -2, -2, -2] and int(core.pool[0]) == 4
    assert [len(core.hand_of(0, seat)) for seat in range(4)] == [5, 5, 5, 5]


# ---------------------------------------------------------------- game length (num_hands)


def test_a_game_of_one_hand_ends_when_its_pool_is_won_and_of_two_goes_on():
    """RULES.md: "a game is 10 hands" (``num_hands``), and play goes on past it only while the
    pool is in the middle. Seat 0 claims the pool in hand 1: with ``num_hands=1`` that ends the
    game (seat 0 +3, the others -1 their ante); with ``num_hands=2`` the game goes on to hand 2,
    dealt by the seat left of the first dealer (3 -> 0).
    Mutant killed: the game ending only after ``num_hands`` + 1 hands (caught before only by
    the randomised game-mode tests).
    """
    assert run(STRONG, CLAIM_SCRIPT, {"num_hands": 1}, mode="game") == [3, -1, -1, -1]
    hand = ScriptedHand(STRONG, rules={"num_hands": 2}, mode="game")
    hand.run(CLAIM_SCRIPT, until_done=False)
    core = hand.env.core
    assert int(core.hand_index[0]) == 1 and int(core.dealer[0]) == 0
    assert hand.totals.tolist() == [3, -1, -1, -1]


# ---------------------------------------------------------------- the max_hands cap


def test_the_cap_splits_the_pool_evenly_and_the_remainder_stays_unpaid():
    """RULES.md: ``max_hands`` ends a game whose pool is never won: "the pool is then split
    evenly, the remainder stays unpaid". One hand allowed, spoiled (one trick each after four);
    antes 1 each and the dealer (seat 3) 1 more: a pool of 5, split 1 each, 1 chip unpaid.
    Mutants killed: no split at the cap; the remainder paid to the dealer.
    """
    rules = {"num_hands": 1, "max_hands": 1, "dealer_ante": 1}
    assert run(SPOIL_4, SPOIL_4_SCRIPT, rules, mode="game") == [0, 0, 0, -1]


def test_the_unpaid_remainder_at_the_cap_is_nobodys_equity():
    """RULES.md: at the ``max_hands`` cap "the remainder stays unpaid"; a game's equity reward
    counts no share of it (docs/rules.md: a game's equity sums to its chip change). The same
    capped spoiled hand as above, rewarded in equity: the pool went from 0 to an unpaid 1, so
    each seat's reward is its chip change, [0, 0, 0, -1], not a quarter chip more.
    Mutant killed: the unpaid remainder still counted as each seat's share (caught before only
    by the randomised differential test).
    """
    rules = {"num_hands": 1, "max_hands": 1, "dealer_ante": 1}
    assert run(SPOIL_4, SPOIL_4_SCRIPT, rules, reward="equity", mode="game") == pytest.approx([0, 0, 0, -1])


# ---------------------------------------------------------------- the concealed ace, per hand


def test_a_concealed_ace_is_forgotten_when_the_next_hand_is_dealt():
    """RULES.md, ``conceal_ace_penalty``: the concealed ace ranks lowest "for the hand". In game
    mode seat 1 conceals the AH (hearts trump) in hand 1; at the start of hand 2 nobody has
    concealed anything, so no seat's observation may say it concealed its ace.
    Mutant killed: the concealed flag not reset when a new hand is dealt.
    """
    games = 64
    rules = Rules(num_players=4, conceal_ace_penalty=True, num_hands=3)
    core = SpoilFiveCore(games, rules=rules, mode="game", reward="chips", seed=5, deal=False)
    hands = ["KC 2H 3D 4D 6D", "AH QC 2S 3S 4S", "JC 8D 9D 10D 5S", "10C 6S 7S 8S 9S"]
    deal = [[card_index(c) for c in hand.split()] for hand in hands]
    core.reset(hands=np.array([deal] * games), turnups=np.full(games, card_index("7H")),
               dealers=np.full(games, 3))
    core.step(np.full(games, card_index("KC")))
    core.step(np.full(games, card_index("QC")))  # seat 1 plays on without a word: the AH is concealed
    own = SLICES["own_concealed"]
    assert (core.observe(1)[:, own] == 1).all()
    rng = np.random.default_rng(0)
    while (core.hand_index == 0).any():
        core.step(random_legal(rng, core.legal_mask()), where=core.hand_index == 0)
    assert (core.hand_index == 1).all() and not core.done.any()
    assert (core.rob_seat >= 0).sum() > 10  # enough new hands with a seat entitled to rob
    for seat in range(4):
        assert not core.observe(seat)[:, own].any(), f"seat {seat} still shown a concealed ace in hand 2"


def test_the_dealers_rob_of_a_turned_up_ace_cannot_be_concealed():
    """RULES.md, ``conceal_ace_penalty``: the variant lets "the holder of the ace of trumps" play
    without announcing; when the turn-up is an ace the dealer "may rob ... Declining is allowed"
    and "decides before the eldest leads", so even with the variant on, the dealer (seat 3,
    AC turned: clubs trump) may only rob or decline, and eldest then leads any card.
    Mutant killed: the dealer's ace rob concealable like the holder's (caught before only by
    the randomised differential test).
    """
    hand = ScriptedHand(Deal(SPOIL_4.hands, "AC"), rules={"conceal_ace_penalty": True})
    hand.run("3?rob,decline 3:decline 0?*", until_done=False)


# ---------------------------------------------------------------- void proofs (observation)
# observation.py: a plain card on a trump lead proves a trump void "only when no privileged
# trump ranking above the card led can still be in that hand (unplayed, not the turn-up left
# on the table ...)". These check the proof is made when every such trump is accounted for.


def test_a_privileged_trump_already_played_cannot_be_held_back():
    """Spades trump (KS turned, AS undealt). Seat 1 trumps trick 1 with the 5S, then leads the
    JS: the only trump above the JS is the 5S, already played, so seat 2's plain card proves he
    holds no trump. Mutant killed: played cards still counted as possibly held back.
    """
    core = dealt_core(["2C 6D 7D 8D 9D", "5S JS 2H 3H 4H", "3C 4C 6C 7C 8C"], "KS", dealer=2)
    play_core(core, "2C", "5S", "3C")  # seat 1 wins with the 5S
    play_core(core, "JS", "4C")
    assert core.void[0, 2, TRUMP]
    assert decode_observation(core.observe(0)[0])["voids"][2] == ["trumps"]


def test_the_turn_up_left_on_the_table_cannot_be_held_back():
    """Spades trump, the 5S turned up and left on the table (the AS is undealt: nobody robs).
    The JS is led: the only trump above it is the turned-up 5S, so seat 1's plain card proves
    a trump void. Mutant killed: the turn-up on the table counted as possibly held back.
    """
    core = dealt_core(["JS 6D 7D 8D 9D", "2C 3C 2H 3H 4H", "4C 6C 7C 8C 10C"], "5S", dealer=2)
    play_core(core, "JS", "2H")
    assert core.void[0, 1, TRUMP]
    assert decode_observation(core.observe(0)[0])["voids"][1] == ["trumps"]


# ---------------------------------------------------------------- declining is public


def test_a_declined_rob_is_shown_to_every_seat():
    """RULES.md, robbing: declining is said aloud ("I play these", "turn it down"); only the
    ``conceal_ace_penalty`` variant lets the holder play "without announcing". So, like who
    robbed, who declined is public (docs/rules.md, decision (a): "Declining is an action too,
    and a public one"), and every seat's observation names him (seats relative to the viewer).
    Spades trump (KS turned): seat 1 holds the AS and declines at his turn in trick 1. Then a
    hand with the AC turned: the dealer (seat 3) declines before the lead.
    Mutant killed: a decline not recorded (``declined_by`` left at -1), so no seat learns it.
    """
    core = dealt_core(["2C 6D 7D 8D 9D", "AS 2H 3H 4H 6H", "3C 4C 6C 7C 8C", "10C JC QC 2D 3D"], "KS", dealer=3)
    play_core(core, "2C")
    core.step(np.array([DECLINE_ROB]))
    for viewer in range(4):
        view = decode_observation(core.observe(viewer)[0])
        assert (view["declined"], view["robber"]) == ((1 - viewer) % 4, None), f"seat {viewer}'s view"
    core = dealt_core(SPOIL_4.hands, "AC", dealer=3)
    core.step(np.array([DECLINE_ROB]))
    for viewer in range(4):
        view = decode_observation(core.observe(viewer)[0])
        assert (view["declined"], view["robber"]) == ((3 - viewer) % 4, None), f"seat {viewer}'s view"
