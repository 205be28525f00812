"""Sanity tests of the slow reference (tests/reference.py) on hand-made deals.

The reference is only worth comparing the core against if it is right itself; these tests
pin it to the worked examples of RULES.md, and check the package's card tables against the
orders the reference writes out again from RULES.md.
"""

from __future__ import annotations

import random

import pytest
from reference import ReferenceHand, card_from_text, card_text, plain_order, trump_order

from spoilfive_env import cards
from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, ROB_FIRST
from spoilfive_env.rules import Rules


def c(text):
    return card_from_text(text)


def hand_of(text):
    return [c(t) for t in text.split()]


def make(rules, hands, turnup, dealer, **kwargs):
    return ReferenceHand(rules, [hand_of(h) for h in hands], c(turnup), dealer, **kwargs)


def play(ref, *moves):
    """Apply moves given as card text ("5H"), "rob XX", "decline", "claim" or "jink"."""
    for move in moves:
        if move == "decline":
            ref.apply(DECLINE_ROB)
        elif move == "claim":
            ref.apply(CLAIM)
        elif move == "jink":
            ref.apply(JINK)
        elif move.startswith("rob "):
            ref.apply(ROB_FIRST + c(move[4:]))
        else:
            ref.apply(c(move))


def legal_cards(ref):
    return sorted(card_text(a) for a in ref.legal_actions() if a < ROB_FIRST)


# ---------------------------------------------------------------- the package's card tables


def test_card_numbering_matches_the_package():
    for card in range(52):
        assert cards.card_str(card) == card_text(card)
        assert cards.card_index(card_text(card)) == card
    assert [c("AC"), c("AH"), c("5H"), c("KS")] == [0, 26, 30, 51]


@pytest.mark.parametrize("trump", range(4))
def test_strength_tables_match_the_rules_tables(trump):
    trumps = trump_order(trump)
    assert len(trumps) == (13 if trump == cards.HEARTS else 14)
    by_strength = sorted((card for card in range(52) if cards.IS_TRUMP[trump, card]),
                         key=lambda card: -int(cards.STRENGTH[trump, card]))
    assert by_strength == trumps
    assert {card for card in range(52) if cards.PRIVILEGED[trump, card]} == set(trumps[:3])
    assert int(cards.ACE_OF_TRUMPS[trump]) == 13 * trump
    for suit in range(4):
        plain = plain_order(suit, trump)
        in_suit = [card for card in range(52) if cards.EFFECTIVE_SUIT[trump, card] == suit]
        assert sorted(in_suit, key=lambda card: -int(cards.STRENGTH[trump, card])) == plain
    # Every plain card ranks below every trump, and the concealed ace sits between them.
    weakest_trump = min(int(cards.STRENGTH[trump, card]) for card in trumps)
    strongest_plain = max(int(cards.STRENGTH[trump, card]) for card in range(52) if card not in trumps)
    assert strongest_plain < cards.CONCEALED_ACE_STRENGTH < weakest_trump


def test_order_examples():
    # "highest in red, lowest in black"
    assert plain_order(cards.SPADES, cards.HEARTS)[:5] == hand_of("KS QS JS AS 2S")
    assert plain_order(cards.DIAMONDS, cards.CLUBS)[-3:] == hand_of("3D 2D AD")
    assert c("AH") not in plain_order(cards.HEARTS, cards.CLUBS)
    assert trump_order(cards.DIAMONDS)[:4] == hand_of("5D JD AH AD")
    assert trump_order(cards.HEARTS)[:4] == hand_of("5H JH AH KH")


# ---------------------------------------------------------------- following and reneging

THREE = Rules(num_players=3)


def renege_deal(seat2="JC KS QS JS 10S", seat0="8C KD QD JD 10D", turnup="9C"):
    # Clubs trump. Seat 2 deals, seat 0 leads.
    return make(THREE, [seat0, "5C KH QH JH 10H", seat2], turnup, dealer=2)


def test_lone_privileged_trumps_may_renege_to_a_lower_trump_lead():
    ref = renege_deal()
    play(ref, "8C")
    assert legal_cards(ref) == sorted(["5C", "KH", "QH", "JH", "10H"])  # lone 5C above 8C
    play(ref, "5C")
    # The card led decides, not the 5 played on it: the lone jack may still be held back.
    assert legal_cards(ref) == sorted(["JC", "KS", "QS", "JS", "10S"])
    play(ref, "KS")
    assert ref.trick_winners == [1]
    assert ref.stats["renege_option"] == 2 and ref.stats["renege_taken"] == 1


def test_a_lower_trump_takes_the_privilege_away():
    ref = renege_deal(seat2="JC 2C QS JS 10S")
    play(ref, "8C", "5C")
    assert legal_cards(ref) == ["2C", "JC"]


def test_nobody_may_renege_when_the_five_is_led():
    ref = make(THREE, ["5C KD QD JD 10D", "JC KH QH JH 10H", "AH KS QS JS 10S"], "9C", dealer=2)
    play(ref, "5C")
    assert legal_cards(ref) == ["JC"]
    play(ref, "JC")
    assert legal_cards(ref) == ["AH"]


def test_jack_led_lone_five_may_renege_but_ace_of_hearts_may_not():
    ref = make(THREE, ["JC KD QD JD 10D", "5C KH QH JH 10H", "AH KS QS JS 10S"], "9C", dealer=2)
    play(ref, "JC")
    assert len(legal_cards(ref)) == 5
    play(ref, "KH")
    assert legal_cards(ref) == ["AH"]  # AH ranks below the jack that was led


def test_plain_lead_follow_or_trump_and_the_ace_of_hearts_is_no_heart():
    ref = make(THREE, ["KH 2D 3D 4D 6D", "AH 3S 4S 6S 7S", "2H 2C 3C 4C 6C"], "9C", dealer=2)
    play(ref, "KH")
    assert len(legal_cards(ref)) == 5  # seat 1 holds no heart: AH is a trump, not a heart
    play(ref, "3S")
    assert legal_cards(ref) == ["2C", "2H", "3C", "4C", "6C"]  # holds a heart: heart or trump
    play(ref, "2C")
    assert ref.trick_winners == [2]  # the trump wins


def test_plain_trick_goes_to_the_highest_card_of_the_suit_led():
    # Black: ace above two, ten lowest. Red: ten above two, ace lowest.
    ref = make(THREE, ["2S 7D 8D 9D 3H", "AS 2D 4H 5H 6H", "10S AD 7H 8H 9H"], "9C", dealer=2)
    play(ref, "2S", "AS", "10S")
    assert ref.trick_winners == [1]
    play(ref, "2D", "AD", "7D")
    assert ref.trick_winners == [1, 0]


# ---------------------------------------------------------------- robbing


def test_dealer_robs_an_ace_turnup_before_the_lead():
    ref = make(THREE, ["2D 3D 4D 6D 7D", "2H 3H 4H 6H 7H", "2S 3S 4S 6S 7S"], "AC", dealer=1)
    assert ref.current_player == 1 and ref.phase == "rob"
    assert ref.legal_actions() == sorted([ROB_FIRST + card for card in hand_of("2H 3H 4H 6H 7H")] + [DECLINE_ROB])
    play(ref, "rob 7H")
    assert ref.hands[1] == sorted(hand_of("2H 3H 4H 6H AC"))
    assert ref.current_player == 2 and ref.phase == "play"  # eldest leads
    assert ref.holder is None


def test_holder_robs_at_his_own_turn_then_plays():
    ref = make(THREE, ["2D 3D 4D 6D 7D", "AC 3H 4H 6H 7H", "2S 3S 4S 6S 7S"], "9C", dealer=2)
    assert ref.current_player == 0
    play(ref, "2D")
    assert ref.current_player == 1
    assert ref.legal_actions() == sorted([ROB_FIRST + card for card in ref.hands[1]] + [DECLINE_ROB])
    play(ref, "rob 3H")
    assert ref.current_player == 1 and c("9C") in ref.hands[1]
    assert legal_cards(ref) == sorted(["4H", "6H", "7H", "9C", "AC"])  # no diamond: anything


def test_holder_who_leads_robs_before_leading():
    ref = make(THREE, ["AC 3D 4D 6D 7D", "2H 3H 4H 6H 7H", "2S 3S 4S 6S 7S"], "9C", dealer=2)
    assert ref.current_player == 0 and DECLINE_ROB in ref.legal_actions()
    play(ref, "decline")
    assert ref.current_player == 0 and ref.declined_by == 0
    assert ref.legal_actions() == sorted(hand_of("AC 3D 4D 6D 7D"))


def test_conceal_ace_penalty_demotes_the_ace():
    rules = Rules(num_players=3, conceal_ace_penalty=True)
    ref = make(rules, ["2D 3C 4D 6D 7D", "AC 3H 4H 6H 7H", "10C 3S 4S 6S 7S"], "9C", dealer=2)
    play(ref, "2D")
    legal = ref.legal_actions()
    assert DECLINE_ROB in legal and ROB_FIRST + c("3H") in legal
    assert c("AC") in legal and c("3H") in legal  # no diamond: any card, unannounced
    play(ref, "AC")
    assert ref.demoted == c("AC") and ref.stats["conceal"] == 1
    play(ref, "10C")
    assert ref.trick_winners == [2]  # the 10, the lowest trump, beats the concealed ace


def test_without_the_variant_the_holder_must_rob_or_decline():
    ref = make(THREE, ["2C 3D 4D 6D 7D", "AC 3H 4H 6H 7H", "10C 3S 4S 6S 7S"], "9C", dealer=2)
    play(ref, "2C")
    assert all(action >= ROB_FIRST for action in ref.legal_actions())


def test_concealed_ace_of_hearts_loses_its_privilege():
    rules = Rules(num_players=3, conceal_ace_penalty=True)
    # Hearts trump; seat 1 holds AH (the ace of trumps) and plays another card unannounced.
    ref = make(rules, ["KC 2H 4D 6D 7D", "AH 3C 4C 6C 7C", "QC 3S 4S 6S 7S"], "9H", dealer=2)
    play(ref, "KC", "3C")
    assert ref.demoted == c("AH")
    play(ref, "QC")
    assert ref.trick_winners == [0]
    play(ref, "2H")  # a low trump led: an undemoted lone AH could be held back
    assert legal_cards(ref) == ["AH"]


# ---------------------------------------------------------------- endings and chips

JINK_HANDS = ["5S JS AH KS QS", "2C 3C 4C 6C 7C", "2D 3D 4D 6D 7D"]


def test_claim_after_three_tricks():
    ref = make(THREE, JINK_HANDS, "9S", dealer=2)
    play(ref, "5S", "2C", "2D", "JS", "3C", "3D", "AH", "4C", "4D")
    assert ref.phase == "jink" and ref.current_player == 0
    assert ref.legal_actions() == [CLAIM, JINK]
    play(ref, "claim")
    assert ref.done and ref.winner == 0 and not ref.spoiled
    assert ref.chip_changes() == [2, -1, -1]
    assert ref.equity_changes() == [2, -1, -1]


def test_jink_success_and_no_jink_offer_when_disabled():
    ref = make(THREE, JINK_HANDS, "9S", dealer=2)
    play(ref, "5S", "2C", "2D", "JS", "3C", "3D", "AH", "4C", "4D", "jink",
         "KS", "6C", "6D", "QS", "7C", "7D")
    assert ref.done and ref.winner == 0 and ref.jink_succeeded
    assert ref.chip_changes() == [6, -3, -3]
    ref = make(Rules(num_players=3, allow_jink=False), JINK_HANDS, "9S", dealer=2)
    play(ref, "5S", "2C", "2D", "JS", "3C", "3D", "AH", "4C", "4D")
    assert ref.done and ref.winner == 0


def test_failed_jink_spoils_at_once():
    ref = make(THREE, ["5S JS AH 2C QS", "KC 3C 4C 6C 7C", "2D 3D 4D 6D 7D"], "9S", dealer=2)
    play(ref, "5S", "3C", "2D", "JS", "4C", "3D", "AH", "6C", "4D", "jink", "2C", "KC", "6D")
    assert ref.done and ref.spoiled and ref.winner is None
    assert ref.chip_changes() == [-1, -1, -1]
    assert ref.equity_changes() == [0, 0, 0]
    assert ref.pool == 3


SPOIL_HANDS = ["KC 2D 3D 4D 6D", "KD 2H 3H 4H 6H", "KH 2C 3C 4C 6C", "QC 10C 7D 7H 8H"]
SPOIL_MOVES = ["KC", "6H", "6C", "10C", "2D", "KD", "4C", "7D", "2H", "KH", "7H", "3D",
               "2C", "QC", "4D", "3H"]


def test_spoiled_as_soon_as_nobody_can_reach_three():
    ref = make(Rules(num_players=4), SPOIL_HANDS, "9S", dealer=3)
    play(ref, *SPOIL_MOVES)
    assert ref.trick_winners == [0, 1, 2, 3]
    assert ref.done and ref.spoiled and len(ref.history) == 16  # trick 5 is never played
    assert ref.chip_changes() == [-1] * 4 and ref.equity_changes() == [0] * 4


def test_carried_pool_dealer_ante_and_equity():
    rules = Rules(num_players=4, ante=2, spoil_ante=1, dealer_ante=1)
    ref = make(rules, SPOIL_HANDS, "9S", dealer=3, pool=8)
    assert ref.pool == 8 + 4 + 1  # spoil_ante from everyone, dealer_ante from the dealer
    fresh = make(rules, SPOIL_HANDS, "9S", dealer=3)
    assert fresh.pool == 4 * 2 + 1
    again = make(rules, SPOIL_HANDS, "9S", dealer=3, spoiled_before=True)
    assert again.pool == 4 + 1
    play(ref, *SPOIL_MOVES)
    assert ref.chip_changes() == [-1, -1, -1, -2]
    assert ref.equity_changes() == pytest.approx([-1 + 5 / 4] * 3 + [-2 + 5 / 4])


def test_partnership_pool_is_shared_and_the_remainder_stays():
    rules = Rules(num_players=4, partnerships=True)
    ref = make(rules, SPOIL_HANDS, "9S", dealer=3, pool=1)
    play(ref, *SPOIL_MOVES)
    assert not ref.done  # 2-2 between the teams: trick 5 decides
    play(ref, "8H", "6D", "4H", "3C")  # seat 3 leads; the 8 beats the 4 in red
    assert ref.done and ref.winning_team == 1 and ref.winner is None
    assert ref.pool == 1  # 5 chips in the pool, 2 each to seats 1 and 3
    assert ref.chip_changes() == [-1, 1, -1, 1]


def test_partnership_jink_is_chosen_by_the_winner_of_trick_three():
    rules = Rules(num_players=4, partnerships=True)
    hands = ["5S 2C 3C 4C 6C", "2D 3D 4D 6D 7D", "JS AH KS QS 7C", "2H 3H 4H 6H 7H"]
    ref = make(rules, hands, "9S", dealer=3)
    play(ref, "2C", "2D", "7C", "2H")  # the 2 beats the 7 in black
    play(ref, "3C", "3D", "JS", "3H")
    play(ref, "AH", "4H", "4C", "4D")  # seat 0's lone 5 may stay back from the AH led
    assert ref.trick_winners == [0, 2, 2] and ref.phase == "jink" and ref.current_player == 2
    play(ref, "jink", "KS", "6H", "6C", "6D", "QS", "7H", "5S", "7D")
    assert ref.done and ref.jink_succeeded and ref.winning_team == 0
    assert ref.chip_changes() == [2 + 2 - 1, -1 - 2, 2 + 2 - 1, -1 - 2]


# ---------------------------------------------------------------- random play invariants


@pytest.mark.parametrize("num_players", range(2, 11))
def test_random_hands_end_and_conserve_chips(num_players):
    rng = random.Random(num_players)
    for _ in range(200):
        options = dict(num_players=num_players, allow_jink=rng.random() < 0.7,
                       conceal_ace_penalty=rng.random() < 0.5, dealer_ante=rng.randint(0, 1))
        if num_players in (4, 6):
            options["partnerships"] = rng.random() < 0.5
        rules = Rules(**options)
        deck = list(range(52))
        rng.shuffle(deck)
        hands = [deck[5 * s:5 * s + 5] for s in range(num_players)]
        pool = rng.choice([0, 0, 3, 7])
        ref = ReferenceHand(rules, hands, deck[5 * num_players], rng.randrange(num_players), pool=pool)
        steps = 0
        while not ref.done:
            legal = ref.legal_actions()
            assert legal
            ref.apply(rng.choice(legal))
            steps += 1
        assert steps <= 5 * num_players + 2
        assert sum(ref.chip_changes()) + ref.pool - pool == 0
        assert sum(ref.equity_changes()) == pytest.approx(0)
        if num_players == 2 or rules.partnerships:
            assert not ref.spoiled or ref.jinking
        if ref.spoiled:
            assert ref.winner is None and ref.winning_team is None
        with pytest.raises(ValueError):
            ReferenceHand(rules, hands, hands[0][0], 0)  # the turn-up dealt twice


def test_illegal_action_raises_and_changes_nothing():
    ref = renege_deal(seat2="JC 2C QS JS 10S")
    play(ref, "8C", "5C")
    before = (list(ref.history), [list(h) for h in ref.hands])
    with pytest.raises(ValueError, match="not legal"):
        play(ref, "QS")
    assert (ref.history, ref.hands) == before
