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

import operator

import numpy as np

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


def action_id(action) -> int:
    """One action as a Python int: a whole number (Python, NumPy, a 0-d integer array or tensor);
    a ``ValueError`` for a bool, a float or anything else. Its range is the caller's to check."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)  # what agents return, the quick way
    if isinstance(action, (bool, np.bool_)) or str(getattr(action, "dtype", "")) in ("bool", "torch.bool"):
        raise ValueError(f"an action is a whole number 0-{NUM_ACTIONS - 1} (an action id), got the bool {action!r}")
    try:
        if getattr(action, "ndim", 0):  # torch takes any one-element tensor as an index; an action is 0-d
            raise TypeError
        return operator.index(action)
    except TypeError:
        raise ValueError(f"an action is a whole number 0-{NUM_ACTIONS - 1} (an action id), got {action!r}") from None


def action_array(actions, shape: tuple) -> np.ndarray:
    """``actions`` as int64 of ``shape``; a ``ValueError`` unless they are whole numbers of that shape
    that int64 holds (a huge unsigned value is named as given, not wrapped)."""
    actions = np.asarray(actions)
    if actions.shape != shape or actions.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers of shape {shape}, got shape {actions.shape} dtype {actions.dtype}")
    if actions.dtype.kind == "u" and actions.size and actions.max() > np.iinfo(np.int64).max:
        raise ValueError(f"action {int(actions.max())} is out of range: action ids are 0-{NUM_ACTIONS - 1}")
    return actions.astype(np.int64)


def allowed(masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Bool ``(B,)``: which of ``actions`` (int ``(B,)``, one a row) their row of ``masks`` ``(B, 107)`` allows; an
    id outside 0-106 is not allowed (and indexes no column)."""
    in_range = (actions >= 0) & (actions < NUM_ACTIONS)
    return in_range & masks[np.arange(len(actions)), actions * in_range].astype(bool, copy=False)


def action_str(action: int, symbols: bool = False) -> str:
    """Human text for an action id, e.g. ``"play 5H"``, ``"rob, discard 2C"``, ``"claim"``."""
    action = action_id(action)
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
