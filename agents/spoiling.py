"""Cooperative-spoiling events of a tournament: who stopped a two-trick player, friendly fire.

Nobody in Spoil Five has a partner, yet once one player reaches two tricks the others all
gain from stopping him (a spoil keeps each player's share of the pool). These are the
measurements of that implicit coalition that :func:`agents.evaluate.play_tournament` records
per game and :func:`agents.evaluate.summarise` turns into figures per agent:

* ``trick_winner`` ``(G, 5)``: the seat that won each trick (-1: not played, the hand ended).
  From it, the **threat** of a hand is the first player to reach two tricks; another seat
  **stopped** him when the threat did not win the pool and that seat took at least one of
  the tricks after he reached two (:func:`stops`). A seat on two tricks after the first four still had a trick
  to win the pool with (:func:`two_tricks_with_one_to_play`); one whose second was the last had none.
* ``overtake_chances``, ``overtakes`` and ``forced_overtakes`` ``(G, n)``: **friendly fire**. A seat has the chance
  to overtake a fellow when it follows to a trick where a threat (another player on two
  tricks, or one jinking) has already played and is beaten by a third player's card, it
  holds fewer than two tricks itself, and it holds a legal card that beats that card; it
  overtakes when it plays such a card (:func:`overtake_events`, read from the core before
  the move is applied). Overtaking spends a card that the coalition may need later and
  takes nothing from the threat. A chance is **forced** where every legal card beats: about
  half the chances at `random` tables at 3 to 5 players are, and 62% at `spoiler` tables, so the share of
  the other chances taken (``friendly_fire_rate_unforced``) is what tells a player's choice.

Only public facts and the acting player's own legal cards are read, so the figures mean the
same for every kind of agent.

In partnerships (``partnerships=True``) the sides are the two teams: the threat is the first team
to hold two tricks between its partners, only the other team faces it, and a seat's fellow is its
partner (:meth:`spoilfive_env.rules.Rules.sides`).
"""

from __future__ import annotations

import numpy as np

from spoilfive_env.cards import NUM_CARDS, NUM_TRICKS, TRICKS_TO_WIN, TRUMP
from spoilfive_env.core import PHASE_PLAY

THREAT_TRICKS = TRICKS_TO_WIN - 1
"""Tricks that make a player a threat: one more wins the pool."""


def overtake_events(core, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Friendly-fire chances and overtakes of the player to act in every game of ``core``.

    Call before ``core.step(actions)``. Returns ``(chance, overtook, forced)``, bool ``(B,)``: ``forced``, a
    chance where every legal card beats (and so an overtake, whatever is played).
    """
    B, n = core.batch_size, core.num_players
    rows = np.arange(B)
    actions = np.asarray(actions, dtype=np.int64)
    following = (core.phase == PHASE_PLAY) & (core.trick_pos > 0)
    chance = np.zeros(B, bool)
    overtook = np.zeros(B, bool)
    forced = np.zeros(B, bool)
    g = np.flatnonzero(following)
    if not len(g):
        return chance, overtook, forced
    me = core.current[g].astype(np.int64)
    led = core.led_card[g].astype(np.int64)
    cards = core.trick_cards[g, :n].astype(np.int64)  # in playing order from the leader
    played = cards >= 0
    safe = np.maximum(cards, 0)
    sub = rows[: len(g)][:, None]
    strength = core.strength[g]
    suit = core.effective_suit[g]
    led_suit = suit[sub[:, 0], led]
    counts = played & ((suit[sub, safe] == TRUMP) | (suit[sub, safe] == led_suit[:, None]))
    score = np.where(counts, strength[sub, safe], -1)
    slot = score.argmax(axis=1)
    best_strength = score[sub[:, 0], slot]
    seat_of_slot = (core.leader[g].astype(np.int64)[:, None] + np.arange(n)) % n
    best_seat = seat_of_slot[sub[:, 0], slot]
    side = core.rules.sides()
    tricks = core.tricks_won[g].astype(np.int64) @ (side[:, None] == side[None, :])  # each seat's side's
    jinker = core.jinker[g].astype(np.int64)
    jinking_side = np.where(jinker >= 0, side[np.maximum(jinker, 0)], -1)
    threat = (tricks >= THREAT_TRICKS) | (side[None, :] == jinking_side[:, None])
    threat &= side[None, :] != side[me][:, None]  # never one's own side
    in_trick = np.zeros((len(g), n), bool)
    in_trick[sub, seat_of_slot] = played
    threat_beaten = (threat & in_trick).any(axis=1) & ~threat[sub[:, 0], best_seat]
    hand = core.holder[g] == me[:, None]
    card_counts = (suit == TRUMP) | (suit == led_suit[:, None])
    beating = hand & card_counts & (strength > best_strength[:, None])
    legal = core.legal_mask()[g, :NUM_CARDS]
    chance_g = threat_beaten & (tricks[sub[:, 0], me] < THREAT_TRICKS) & (beating & legal).any(axis=1)
    chosen = np.clip(actions[g], 0, NUM_CARDS - 1)
    overtook_g = chance_g & (actions[g] < NUM_CARDS) & beating[sub[:, 0], chosen]
    chance[g] = chance_g
    overtook[g] = overtook_g
    forced[g] = chance_g & ~(legal & ~beating).any(axis=1)  # in play only cards are legal
    return chance, overtook, forced


def trick_winners(core, trick_number_before: np.ndarray):
    """The tricks that the last ``core.step`` completed: ``(games, trick index, winning seat)``.

    For a core in ``mode="hand"``, as :mod:`agents.evaluate` plays: in game mode a step that ends a hand
    also deals the next, whose trick count starts again, so that hand's last trick would go unreported.

    Args:
        core: the core just stepped (a completed trick's winner leads the next one).
        trick_number_before: ``core.trick_number`` copied before the step ``(B,)``.
    """
    completed = np.flatnonzero(core.trick_number > trick_number_before)
    return completed, core.trick_number[completed].astype(np.int64) - 1, core.leader[completed].astype(np.int64)


def two_tricks_with_one_to_play(trick_winner: np.ndarray, num_players: int) -> np.ndarray:
    """``(G, n)`` bool: the seat held two tricks or more after the first four (``trick_winner`` ``(G, 5)``, -1 for
    a trick not played), so that a trick was left for it to win the pool with (``two_trick_conversion_live``)."""
    return ((trick_winner[:, : NUM_TRICKS - 1, None] == np.arange(num_players)).sum(axis=1)) >= THREAT_TRICKS


def stops(trick_winner: np.ndarray, winner: np.ndarray, num_players: int, sides: np.ndarray | None = None):
    """Who faced a two-trick player and who stopped him, per game and seat.

    Args:
        trick_winner: ``(G, 5)`` seat that won each trick, -1 for tricks not played.
        winner: ``(G,)`` the side that won the pool (the seat; the team in partnerships), -1 when spoiled.
        num_players: seats per game.
        sides: ``(n,)`` each seat's side (:meth:`Rules.sides`); default the seat itself. In partnerships
            the threat is the first team to reach two tricks between its partners, and only the other
            team faces it.

    Returns:
        ``(faced, stopped)`` bool ``(G, n)``: another side reached two tricks in the hand; and it did
        not win the pool while this seat took a trick after it reached two.
    """
    G, n = len(winner), num_players
    seats = np.arange(n)
    side_of = seats if sides is None else np.asarray(sides)
    trick_side = np.where(trick_winner >= 0, side_of[np.maximum(trick_winner, 0)], -1)
    running = (trick_side[:, :, None] == np.arange(side_of.max() + 1)).cumsum(axis=1)  # (G, 5, sides)
    reached = running >= THREAT_TRICKS
    anyone = reached.any(axis=2)  # (G, 5)
    has_threat = anyone.any(axis=1)
    first = np.where(has_threat, anyone.argmax(axis=1), NUM_TRICKS)
    rows = np.arange(G)
    threat = np.where(has_threat, reached[rows, np.minimum(first, NUM_TRICKS - 1)].argmax(axis=1), -1)
    after = np.arange(NUM_TRICKS)[None, :] > first[:, None]
    took_later = ((trick_winner[:, :, None] == seats) & after[:, :, None]).any(axis=1)
    faced = has_threat[:, None] & (side_of[None, :] != threat[:, None])
    stopped = faced & (winner != threat)[:, None] & took_later
    return faced, stopped
