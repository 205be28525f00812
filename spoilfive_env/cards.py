"""Cards: the canonical index, text forms and the strength tables of Spoil Five.

``card = 13 * suit + rank`` with suits in bridge order ``C=0, D=1, H=2, S=3`` and ranks
``A=0, 2=1, ..., 10=9, J=10, Q=11, K=12`` (README, "Cards and actions"). So ``AC=0``, ``AH=26``, ``5H=30``,
``KS=51``. Every other module converts to and from text only through this one.

Strength tables are indexed ``[trump_suit, card]`` so that a trick is decided by a gather
and an argmax:

=====================  =====================================================================
table                  meaning
=====================  =====================================================================
``EFFECTIVE_SUIT``     0-3 for a plain card's printed suit, ``TRUMP`` (4) for a trump
``STRENGTH``           trumps 30 (5 of trumps) down to 17; plain cards 13 (king) down to 1
``PRIVILEGED``         the three trumps that may renege: 5T, JT and AH
``ACE_OF_TRUMPS``      the card that entitles its holder to rob (AH when hearts are trump)
=====================  =====================================================================

A concealed ace of trumps (variant ``conceal_ace_penalty``) ranks ``CONCEALED_ACE_STRENGTH``,
below every other trump and above every plain card.
"""

from __future__ import annotations

import numpy as np

NUM_SUITS = 4
NUM_RANKS = 13
NUM_CARDS = 52
HAND_SIZE = 5
NUM_TRICKS = 5
TRICKS_TO_WIN = 3
MIN_PLAYERS = 2
MAX_PLAYERS = 10
MAX_DECISIONS_PER_HAND = HAND_SIZE + 2
"""The most decisions one seat makes in a hand: the rob, five cards, the jink choice."""

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
TRUMP = 4  # effective suit of every trump card
SUIT_LETTERS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANK_TEXT = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")

ACE, FIVE, TEN, JACK, QUEEN, KING = 0, 4, 9, 10, 11, 12
ACE_OF_HEARTS = 13 * HEARTS + ACE  # 26: a trump whatever suit is turned up

TOP_TRUMP_STRENGTH = 30
CONCEALED_ACE_STRENGTH = 16
NO_CARD = -1

_RANK_FROM_TEXT = {text: rank for rank, text in enumerate(RANK_TEXT)}
_RANK_FROM_TEXT["T"] = TEN
_SUIT_FROM_TEXT = {letter: suit for suit, letter in enumerate(SUIT_LETTERS)}
_SUIT_FROM_TEXT.update({symbol: suit for suit, symbol in enumerate(SUIT_SYMBOLS)})


def card_index(text: str) -> int:
    """Parse a card such as ``"5H"``, ``"10s"``, ``"TD"`` or ``"A♥"`` into its index.

    >>> card_index("5H"), card_index("AH"), card_index("KS"), card_index("10♠")
    (30, 26, 51, 48)
    """
    if not isinstance(text, str):
        raise ValueError(f"card must be a string such as '5H', got {text!r}")
    cleaned = text.strip().upper()
    rank = _RANK_FROM_TEXT.get(cleaned[:-1])
    suit = _SUIT_FROM_TEXT.get(cleaned[-1:]) if cleaned else None
    if rank is None or suit is None:
        raise ValueError(
            f"unknown card {text!r}: expected a rank (A, 2-10, T, J, Q, K) followed by a "
            f"suit (C, D, H, S or one of {SUIT_SYMBOLS}), for example '5H' or '10S'"
        )
    return NUM_RANKS * suit + rank


def card_str(card: int, symbols: bool = False) -> str:
    """Text form of a card index: ``card_str(30) == "5H"``; ``symbols=True`` gives ``"5♥"``."""
    if isinstance(card, (bool, np.bool_)) or not isinstance(card, (int, np.integer)):
        raise ValueError(f"card index must be an integer 0-51, got {card!r}")
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card index must be 0-51, got {card}")
    suit, rank = divmod(int(card), NUM_RANKS)
    return RANK_TEXT[rank] + (SUIT_SYMBOLS if symbols else SUIT_LETTERS)[suit]


def parse_cards(cards) -> list[int]:
    """Card indices from a list of strings or ints, or from one space-separated string."""
    if isinstance(cards, str):
        cards = cards.split()
    parsed = []
    for card in cards:
        if isinstance(card, str):
            parsed.append(card_index(card))
        else:
            parsed.append(int(card_index(card_str(card))))  # validates the range
    return parsed


def suit_of(card: int) -> int:
    return card // NUM_RANKS


def rank_of(card: int) -> int:
    return card % NUM_RANKS


# Orders from docs/rules.md, highest first, as rank indices within the suit.
_TRUMP_ORDER_BLACK = [FIVE, JACK, "AH", ACE, KING, QUEEN, 1, 2, 3, 5, 6, 7, 8, TEN]
_TRUMP_ORDER_DIAMONDS = [FIVE, JACK, "AH", ACE, KING, QUEEN, TEN, 8, 7, 6, 5, 3, 2, 1]
_TRUMP_ORDER_HEARTS = [FIVE, JACK, ACE, KING, QUEEN, TEN, 8, 7, 6, 5, 3, 2, 1]
_PLAIN_ORDER_BLACK = [KING, QUEEN, JACK, ACE, 1, 2, 3, 4, 5, 6, 7, 8, TEN]
_PLAIN_ORDER_DIAMONDS = [KING, QUEEN, JACK, TEN, 8, 7, 6, 5, 4, 3, 2, 1, ACE]
_PLAIN_ORDER_HEARTS = [KING, QUEEN, JACK, TEN, 8, 7, 6, 5, 4, 3, 2, 1]

TRUMP_ORDER = {
    CLUBS: _TRUMP_ORDER_BLACK,
    SPADES: _TRUMP_ORDER_BLACK,
    DIAMONDS: _TRUMP_ORDER_DIAMONDS,
    HEARTS: _TRUMP_ORDER_HEARTS,
}
PLAIN_ORDER = {
    CLUBS: _PLAIN_ORDER_BLACK,
    SPADES: _PLAIN_ORDER_BLACK,
    DIAMONDS: _PLAIN_ORDER_DIAMONDS,
    HEARTS: _PLAIN_ORDER_HEARTS,
}


def trump_order(trump: int) -> list[int]:
    """Card indices of every trump for a trump suit, highest first."""
    return [ACE_OF_HEARTS if r == "AH" else NUM_RANKS * trump + r for r in TRUMP_ORDER[trump]]


def plain_order(suit: int, trump: int) -> list[int]:
    """Card indices of the plain cards of ``suit`` (not trump), highest first."""
    if suit == trump:
        return []
    return [NUM_RANKS * suit + r for r in PLAIN_ORDER[suit]]


def _build_tables():
    effective_suit = np.zeros((NUM_SUITS, NUM_CARDS), dtype=np.int8)
    strength = np.zeros((NUM_SUITS, NUM_CARDS), dtype=np.int8)
    privileged = np.zeros((NUM_SUITS, NUM_CARDS), dtype=bool)
    for trump in range(NUM_SUITS):
        for position, card in enumerate(trump_order(trump)):
            effective_suit[trump, card] = TRUMP
            strength[trump, card] = TOP_TRUMP_STRENGTH - position
        for card in trump_order(trump)[:3]:
            privileged[trump, card] = True
        for suit in range(NUM_SUITS):
            for position, card in enumerate(plain_order(suit, trump)):
                effective_suit[trump, card] = suit
                strength[trump, card] = NUM_RANKS - position
    for table in (effective_suit, strength, privileged):
        table.flags.writeable = False
    return effective_suit, strength, privileged


EFFECTIVE_SUIT, STRENGTH, PRIVILEGED = _build_tables()
IS_TRUMP = EFFECTIVE_SUIT == TRUMP
IS_TRUMP.flags.writeable = False
ACE_OF_TRUMPS = np.array([NUM_RANKS * s + ACE for s in range(NUM_SUITS)], dtype=np.int8)
ACE_OF_TRUMPS.flags.writeable = False
