"""The one action table of Spoil Five: ``Discrete(107)`` for every player and phase.

=========  ==========================================
ids        meaning
=========  ==========================================
0-51       play card ``id``
52-103     rob: discard card ``id - 52``, take the turn-up
104        decline to rob
105        claim the pool after winning the first three tricks
106        jink: play on for all five
=========  ==========================================
"""

from __future__ import annotations

from .cards import NUM_CARDS, card_str

PLAY_FIRST = 0
ROB_FIRST = NUM_CARDS  # 52
DECLINE_ROB = 2 * NUM_CARDS  # 104
CLAIM = DECLINE_ROB + 1  # 105
JINK = DECLINE_ROB + 2  # 106
NUM_ACTIONS = JINK + 1  # 107


def play_action(card: int) -> int:
    return PLAY_FIRST + int(card)


def rob_action(discard: int) -> int:
    return ROB_FIRST + int(discard)


def action_str(action: int, symbols: bool = False) -> str:
    """Human text for an action id, e.g. ``"play 5H"``, ``"rob, discard 2C"``, ``"claim"``."""
    action = int(action)
    if 0 <= action < ROB_FIRST:
        return f"play {card_str(action, symbols)}"
    if ROB_FIRST <= action < DECLINE_ROB:
        return f"rob, discard {card_str(action - ROB_FIRST, symbols)}"
    if action == DECLINE_ROB:
        return "decline to rob"
    if action == CLAIM:
        return "claim the pool"
    if action == JINK:
        return "jink (play on for all five)"
    raise ValueError(f"unknown action {action}: action ids are 0-{NUM_ACTIONS - 1}")
