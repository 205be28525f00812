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


def test_rules_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().ante = 5
