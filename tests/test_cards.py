"""Cards, actions and rules options: the parts of CONTRACT.md and RULES.md that are plain data."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import spoilfive_env
from spoilfive_env import actions
from spoilfive_env.cards import card_index, card_str
from spoilfive_env.rules import PRESETS, Rules

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]


# ---------------------------------------------------------------------------- cards
def test_public_helpers_are_exported():
    assert spoilfive_env.card_index("5H") == 30
    assert spoilfive_env.card_str(30) == "5H"


def test_round_trip_all_52():
    texts = [card_str(i) for i in range(52)]
    assert len(set(texts)) == 52
    for i, text in enumerate(texts):
        assert card_index(text) == i, text
    assert texts == [rank + suit for suit in "CDHS" for rank in RANKS]


@pytest.mark.parametrize(("text", "index"), [
    ("AC", 0), ("5H", 30), ("AH", 26), ("KS", 51), ("10S", 48), ("AD", 13), ("2C", 1),
    ("JD", 23), ("QH", 37), ("10C", 9),
])
def test_contract_indices(text, index):
    assert card_index(text) == index
    assert card_str(index) == text


@pytest.mark.parametrize(("text", "canonical"), [
    ("TD", "10D"), ("td", "10D"), ("Ts", "10S"), ("5h", "5H"), ("as", "AS"), ("kC", "KC"),
    ("5♥", "5H"), ("10♠", "10S"), ("A♣", "AC"), ("K♦", "KD"), ("T♥", "10H"), ("j♦", "JD"),
])
def test_other_spellings_accepted(text, canonical):
    assert card_index(text) == card_index(canonical)


@pytest.mark.parametrize("text", ["ZZ", "11H", "5X", "H5", "1H", "10", "AHH", "", "0S", "JOKER"])
def test_bad_card_strings_raise_naming_the_string(text):
    with pytest.raises(ValueError) as info:
        card_index(text)
    assert repr(text) in str(info.value) or (text and text in str(info.value)), str(info.value)


@pytest.mark.parametrize("index", [-1, 52, 100])
def test_bad_card_index_raises(index):
    with pytest.raises(ValueError, match=str(index)):
        card_str(index)


def test_parse_cards_reads_a_space_separated_string_or_a_list_of_texts_and_indices():
    """parse_cards: one string split on whitespace, or a list mixing card texts and indices (checked)."""
    from spoilfive_env.cards import parse_cards

    assert parse_cards("5H  JS\t10♠ ad") == [30, 49, 48, 13]
    assert parse_cards(["5H", 49, "T♠"]) == [30, 49, 48]
    with pytest.raises(ValueError, match="0-51"):
        parse_cards([52])


def test_suit_of_and_rank_of_split_every_index_as_its_text_says():
    """``card = 13 * suit + rank``: the helpers must agree with the text form of all 52 cards."""
    from spoilfive_env.cards import rank_of, suit_of

    for card in range(52):
        text = card_str(card)
        assert RANKS[rank_of(card)] + "CDHS"[suit_of(card)] == text


def test_strength_values_are_the_documented_scale():
    """cards.py's table: trumps 30 (5 of trumps) down one a step, plain cards 13 (king) down to 1,
    the concealed ace 16. Other code reads these numbers, not only their order."""
    from spoilfive_env.cards import CONCEALED_ACE_STRENGTH, STRENGTH, plain_order, trump_order

    assert CONCEALED_ACE_STRENGTH == 16
    for trump in range(4):
        trumps = trump_order(trump)
        assert [int(STRENGTH[trump, card]) for card in trumps] == list(range(30, 30 - len(trumps), -1))
        for suit in range(4):
            plain = plain_order(suit, trump)
            # 13 for the king down to 1 for the lowest; hearts has 12 plain cards when its ace is a trump.
            assert [int(STRENGTH[trump, card]) for card in plain] == list(range(13, 13 - len(plain), -1))


# ---------------------------------------------------------------------------- actions
def test_action_table():
    assert (actions.PLAY_FIRST, actions.ROB_FIRST, actions.DECLINE_ROB, actions.CLAIM, actions.JINK) == (
        0, 52, 104, 105, 106)
    assert actions.NUM_ACTIONS == 107


@pytest.mark.parametrize(("action", "text"), [
    (0, "play AC"), (51, "play KS"), (52, "rob, discard AC"), (52 + 30, "rob, discard 5H"),
    (103, "rob, discard KS"), (104, "decline to rob"), (105, "claim the pool"), (106, "jink (play on for all five)"),
])
def test_action_names_follow_the_action_table(action, text):
    """CONTRACT.md's action ids: 0-51 play that card, 52-103 rob discarding card id - 52, then decline, claim,
    jink; the ids at each boundary are named as the table says."""
    assert actions.action_str(action) == text


def test_allowed_refuses_ids_outside_the_table_without_reading_the_mask():
    """An id below 0 or above 106 is not allowed, even where the mask's last column (jink) is set, and
    indexes nothing (no IndexError)."""
    masks = np.ones((4, actions.NUM_ACTIONS), np.int8)
    assert actions.allowed(masks, np.array([-1, 107, 106, 0])).tolist() == [False, False, True, True]
    masks[:, 0] = 0
    assert actions.allowed(masks, np.array([0, 5, -107, 2**40])).tolist() == [False, True, False, False]


def test_play_and_rob_action_helpers_follow_the_action_table():
    """CONTRACT.md: play card c is id c, robbing with discard c is id 52 + c."""
    assert [actions.play_action(card) for card in (0, 30, 51)] == [0, 30, 51]
    assert [actions.rob_action(card) for card in (0, 30, 51)] == [52, 82, 103]
    assert actions.action_str(actions.rob_action(card_index("5H"))) == "rob, discard 5H"


def test_action_names_with_symbols_use_suit_symbols_for_plays_and_robs():
    assert actions.action_str(30, symbols=True) == "play 5♥"
    assert actions.action_str(52 + 51, symbols=True) == "rob, discard K♠"


@pytest.mark.parametrize("action", [-1, -52, 107])
def test_action_names_refuse_ids_outside_the_table_as_actions(action):
    """A negative id is no card: the error names the action and the id range, not a card index."""
    with pytest.raises(ValueError, match=rf"unknown action {action}: action ids are 0-106"):
        actions.action_str(action)


def test_action_array_refuses_bools_and_names_a_huge_unsigned_id_as_given():
    """True is no action id (it would play 2C); 2**64 - 1 as uint64 must not wrap to -1 in int64."""
    with pytest.raises(ValueError, match="actions must be integers of shape"):
        actions.action_array(np.array([True, False]), (2,))
    with pytest.raises(ValueError, match="action 18446744073709551615 is out of range: action ids are 0-106"):
        actions.action_array(np.array([2**64 - 1, 3], np.uint64), (2,))
    assert actions.action_array(np.array([106, 0], np.uint8), (2,)).tolist() == [106, 0]


# ---------------------------------------------------------------------------- rules
def test_defaults_match_rules_md():
    rules = Rules()
    assert (rules.num_players, rules.starting_chips, rules.ante, rules.spoil_ante, rules.dealer_ante,
            rules.jink_bonus, rules.allow_jink, rules.conceal_ace_penalty, rules.num_hands,
            rules.max_hands, rules.partnerships) == (4, 20, 1, 1, 0, 2, True, False, 10, 50, False)


@pytest.mark.parametrize(("preset", "values"), [
    ("default", {"ante": 1, "spoil_ante": 1, "dealer_ante": 0, "jink_bonus": 2}),
    ("hoyle", {"ante": 2, "spoil_ante": 1, "dealer_ante": 1, "jink_bonus": 1}),
    ("dealer_feeds", {"ante": 1, "spoil_ante": 0, "dealer_ante": 1, "jink_bonus": 2}),
])
def test_presets(preset, values):
    rules = Rules.preset(preset)
    assert {name: getattr(rules, name) for name in values} == values
    assert preset in PRESETS
    assert rules.num_players == 4 and rules.allow_jink and not rules.partnerships


def test_preset_overrides_and_unknown_preset():
    assert Rules.preset("hoyle", num_players=6).num_players == 6
    with pytest.raises(ValueError, match="nosuch"):
        Rules.preset("nosuch")


@pytest.mark.parametrize(("options", "words"), [
    ({"num_players": 1}, ["num_players", "1", "2", "10"]),
    ({"num_players": 11}, ["num_players", "11", "2", "10"]),
    ({"num_players": 5, "partnerships": True}, ["partnerships", "5"]),
    ({"ante": -1}, ["ante", "-1"]),
    ({"jink_bonus": -2}, ["jink_bonus", "-2"]),
    ({"bogus": 3}, ["bogus"]),
])
def test_rules_validation_says_what_is_wrong(options, words):
    with pytest.raises(ValueError) as info:
        Rules.from_options(**options)
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} missing from {message!r}"


@pytest.mark.parametrize("num_players", [4, 6])
def test_partnership_table_sizes_allowed(num_players):
    assert Rules(num_players=num_players, partnerships=True).partnerships


@pytest.mark.parametrize("num_players", [2, 3, 5, 7, 8, 9, 10])
def test_partnerships_refuse_every_other_table_size(num_players):
    """RULES.md: partnerships are 4 or 6 players in two teams (even sizes other than those too)."""
    with pytest.raises(ValueError, match=f"num_players={num_players}: partnerships need 4 or 6 players"):
        Rules(num_players=num_players, partnerships=True)


def test_preset_overrides_win_over_the_presets_own_values():
    """Rules.preset(name, **overrides): an override of an option the preset sets must be taken."""
    from spoilfive_env.rules import make_rules

    rules = Rules.preset("hoyle", ante=3, jink_bonus=4)
    assert (rules.ante, rules.spoil_ante, rules.dealer_ante, rules.jink_bonus) == (3, 1, 1, 4)
    assert make_rules(preset="dealer_feeds", dealer_ante=2).dealer_ante == 2


def test_replace_changes_the_options_given_and_keeps_the_rest():
    rules = Rules.preset("hoyle").replace(ante=5, num_players=6)
    assert (rules.ante, rules.num_players, rules.dealer_ante, rules.jink_bonus) == (5, 6, 1, 1)


def test_rules_no_single_option_can_fix_are_refused_without_blaming_max_hands_below_num_hands():
    """ante and spoil_ante both 2**25 over 100 hands overflow the pool whichever one is lowered (the
    other still adds 2**25 a player a hand), and max_hands cannot go below num_hands=100: no option
    alone is to blame, so the error names the rules, not a max_hands smaller than num_hands."""
    with pytest.raises(ValueError) as info:
        Rules(ante=2**25, spoil_ante=2**25, num_hands=100, max_hands=100)
    message = str(info.value)
    assert message.startswith("these rules are not allowed: over max_hands=100 hands"), message
    assert "may be at most" not in message


def test_rules_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().ante = 5
