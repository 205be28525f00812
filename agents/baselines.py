"""Rule-based baselines: ``random``, ``greedy`` and ``spoiler``
    Greedy, but it plays for the table against a *threat*: another player who holds two
    tricks or is jinking (or, when following, holds one and is winning the current trick).
    It keeps its trumps for stopping: it leads the cheapest trump that nothing left can
    beat when it holds one; otherwise it leads its strongest card to stop a leader (or
    when it holds two tricks itself) and its weakest card when nobody threatens. When a
    threat is winning the trick it spends its cheapest card that beats the threat's card;
    it never overtakes a fellow player who is already beating the threat with a card
    nothing left can beat (or at all, once it cannot reach three tricks itself); when a
    threat with two tricks is still to play it plays its strongest card that takes the
    trick. With two tricks itself it follows as greedy does.

"Strength" is the rank of :data:`spoilfive_env.cards.STRENGTH` under the hand's trump
(every trump above every plain card); ties between plain cards of equal rank in different
suits go to the lower card index. Both rule-based agents are deterministic: the same
observation always gives the same action, whatever else is in the batch.

The agents read a :class:`TableView`, the few fields a rule needs, taken straight from the
observation slices for a whole batch (:func:`view_from_observations`). The same rules run
inside PIMC's rollouts on a :class:`TableView` taken from a core's state
(:func:`view_from_core`), where each simulated player still reads only his own hand and
the public table; there :func:`core_rule_actions` gives the same moves from one compiled loop
over the games when Numba is installed (:mod:`agents.rules_kernel`; ``SPOILFIVE_RULES=auto|numba|numpy``
chooses, as ``SPOILFIVE_OBSERVATION`` does for the observation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spoilfive_env.actions import CLAIM, DECLINE_ROB, ROB_FIRST
from spoilfive_env.backends import LazyBackend
from spoilfive_env.cards import (
    ACE_OF_TRUMPS,
    CONCEALED_ACE_STRENGTH,
    EFFECTIVE_SUIT,
    HAND_SIZE,
    MAX_PLAYERS,
    NUM_CARDS,
    NUM_TRICKS,
    STRENGTH,
    TRICKS_TO_WIN,
    TRUMP,
)
from spoilfive_env.observation import SLICES

from .base import Agent, checked_batch, checked_core_batch, sample_legal

PHASE_ROB, PHASE_PLAY, PHASE_JINK, PHASE_DONE = 0, 1, 2, 3
_CARDS = np.arange(NUM_CARDS)
_SLOTS = HAND_SIZE  # a hand never holds more than five cards


@dataclass
class TableView:
    """What a rule-based player reads, for a batch of ``B`` decisions; seats relative to
    the player to act (0 is himself), padded to ``MAX_PLAYERS``.

    Attributes:
        strength: ``(B, 52)`` card strength under the trump (read only; may be the core's).
        suit: ``(B, 52)`` effective suit, 0-3 plain, 4 trump (read only).
        phase: ``(B,)`` rob, play, jink or done (0-3).
        leading: ``(B,)`` bool, no card is on the current trick yet.
        led_suit: ``(B,)`` effective suit led, -1 when leading.
        best_strength: ``(B,)`` strength of the card now winning the trick, -1 when leading.
        best_trump: ``(B,)`` bool, that card is a trump.
        best_seat: ``(B,)`` relative seat that played it, -1 when leading.
        in_trick: ``(B, 10)`` bool, relative seats that have played to the current trick.
        tricks: ``(B, 10)`` tricks taken by relative seat.
        present: ``(B, 10)`` bool, relative seats that exist at this table.
        jinker: ``(B,)`` relative seat playing on for all five, -1 if none.
        hand_size: ``(B,)`` cards in the player's hand.
        top_unseen_trump: ``(B,)`` strength of the best trump that may still be in another
            player's hand (not his own, not played, not the turn-up left on the table, not
            his own discard); 0 when there is none.
    """

    strength: np.ndarray
    suit: np.ndarray
    phase: np.ndarray
    leading: np.ndarray
    led_suit: np.ndarray
    best_strength: np.ndarray
    best_trump: np.ndarray
    best_seat: np.ndarray
    in_trick: np.ndarray
    tricks: np.ndarray
    present: np.ndarray
    jinker: np.ndarray
    hand_size: np.ndarray
    top_unseen_trump: np.ndarray


def _best_card(cards: np.ndarray, strength: np.ndarray, suit: np.ndarray, led: np.ndarray):
    """The card now winning each trick, from the trick's cards ``(B, k)`` (-1 = empty slot)
    and the card led ``(B,)`` (-1 before the lead)."""
    rows = np.arange(len(led))[:, None]
    leading = led < 0
    led_suit = np.where(leading, -1, suit[rows[:, 0], np.maximum(led, 0)]).astype(np.int16)
    safe = np.maximum(cards, 0)
    card_suit = suit[rows, safe]
    counts = (cards >= 0) & ((card_suit == TRUMP) | (card_suit == led_suit[:, None]))
    score = np.where(counts, strength[rows, safe], -1)
    slot = score.argmax(axis=1)
    best_card = cards[rows[:, 0], slot]
    best_strength = np.where(leading, -1, score[rows[:, 0], slot])
    best_trump = ~leading & (card_suit[rows[:, 0], slot] == TRUMP)
    return leading, led_suit, best_card, best_strength, best_trump


def view_from_observations(observations: np.ndarray) -> TableView:
    """A :class:`TableView` decoded from observation vectors ``(B, OBS_DIM)`` by slices."""
    obs = np.asarray(observations)
    B = len(obs)
    rows = np.arange(B)
    hand = obs[:, SLICES["hand"]] > 0.5
    trump = obs[:, SLICES["trump"]].argmax(axis=1)
    strength = STRENGTH[trump]
    concealed = obs[:, SLICES["own_concealed"]][:, 0] > 0.5
    if concealed.any():
        c = np.flatnonzero(concealed)
        strength = strength.copy()
        strength[c, ACE_OF_TRUMPS[trump[c]]] = CONCEALED_ACE_STRENGTH
    suit = EFFECTIVE_SUIT[trump]
    trick = obs[:, SLICES["trick_cards"]] > 0.5
    trick_cards = np.where(trick, _CARDS, -1)
    led_block = obs[:, SLICES["led_card"]]
    led = np.where(led_block.max(axis=1) > 0.5, led_block.argmax(axis=1), -1)
    leading, led_suit, best_card, best_strength, best_trump = _best_card(trick_cards, strength, suit, led)
    played = obs[:, SLICES["played"]].reshape(B, MAX_PLAYERS, NUM_CARDS)
    best_seat = np.where(leading, -1, played[rows, :, best_card].argmax(axis=1))
    jinker_block = obs[:, SLICES["jinker"]]
    nobody_robbed = obs[:, SLICES["robber"]].max(axis=1) < 0.5
    seen = (hand | (played.max(axis=1) > 0.5) | (obs[:, SLICES["own_discard"]] > 0.5)
            | ((obs[:, SLICES["turnup"]] > 0.5) & nobody_robbed[:, None]))
    top_unseen = np.where(~seen & (suit == TRUMP), strength, 0).max(axis=1)
    return TableView(
        strength=strength,
        suit=suit,
        phase=obs[:, SLICES["phase"]].argmax(axis=1),
        leading=leading,
        led_suit=led_suit,
        best_strength=best_strength,
        best_trump=best_trump,
        best_seat=best_seat,
        in_trick=obs[:, SLICES["trick_seats"]] > 0.5,
        tricks=np.rint(obs[:, SLICES["tricks_won"]] * TRICKS_TO_WIN).astype(np.int16),
        present=obs[:, SLICES["seat_present"]] > 0.5,
        jinker=np.where(jinker_block.max(axis=1) > 0.5, jinker_block.argmax(axis=1), -1),
        hand_size=hand.sum(axis=1),
        top_unseen_trump=top_unseen.astype(np.int16),
    )


def view_from_core(core) -> TableView:
    """A :class:`TableView` of the player to act in every game of a core, from its state.

    The view holds only that player's hand size and public facts, the same as
    :func:`view_from_observations` would give, without building observations. (One
    difference, under ``conceal_ace_penalty`` only: the core's strengths already demote a
    concealed ace, which a player can only deduce.)
    """
    B, n = core.batch_size, core.num_players
    rows = np.arange(B)
    current = core.current.astype(np.int64)
    strength = core.strength
    suit = core.effective_suit
    led = core.led_card.astype(np.int64)
    trick_cards = core.trick_cards[:, :n]
    leading, led_suit, best_card, best_strength, best_trump = _best_card(trick_cards, strength, suit, led)
    best_abs = core.played_by[rows, np.maximum(best_card, 0)].astype(np.int64)
    best_seat = np.where(leading, -1, (best_abs - current) % n)
    absolute = (current[:, None] + np.arange(n)) % n
    in_trick = np.zeros((B, MAX_PLAYERS), bool)
    in_trick[:, :n] = (absolute - core.leader[:, None]) % n < core.trick_pos[:, None]
    tricks = np.zeros((B, MAX_PLAYERS), np.int16)
    tricks[:, :n] = core.tricks_won[rows[:, None], absolute]
    present = np.zeros((B, MAX_PLAYERS), bool)
    present[:, :n] = True
    jinker = np.where(core.jinker >= 0, (core.jinker - current) % n, -1)
    mine = core.holder == core.current[:, None]
    candidates = np.where(~mine & (core.played_by < 0) & (suit == TRUMP), strength, 0)
    table_turnup = np.flatnonzero(core.robber < 0)
    candidates[table_turnup, core.turnup[table_turnup]] = 0
    own_rob = np.flatnonzero((core.robber == core.current) & (core.discard >= 0))
    candidates[own_rob, core.discard[own_rob]] = 0
    return TableView(strength=strength, suit=suit, phase=core.phase.astype(np.int64),
                     leading=leading, led_suit=led_suit, best_strength=best_strength,
                     best_trump=best_trump, best_seat=best_seat, in_trick=in_trick,
                     tricks=tricks, present=present, jinker=jinker,
                     hand_size=(NUM_TRICKS - core.trick_number).astype(np.int64),
                     top_unseen_trump=candidates.max(axis=1).astype(np.int16))


def _slots(cards: np.ndarray) -> np.ndarray:
    """The card ids of a ``(B, 52)`` bool array with at most five per row, as ``(B, 5)``
    (-1 pads)."""
    B = len(cards)
    counts = cards.sum(axis=1)
    r, c = np.nonzero(cards)
    slot = np.arange(len(r)) - np.repeat(np.cumsum(counts) - counts, counts)
    out = np.full((B, _SLOTS), -1, np.int64)
    out[r, slot] = c
    return out


class _Hand:
    """Candidate cards of each row in five slots, with keys that order them by strength
    (ties to the lower card index)."""

    def __init__(self, cards: np.ndarray, view: TableView):
        self.cards = cards
        self.valid = cards >= 0
        rows = np.arange(len(cards))[:, None]
        safe = np.maximum(cards, 0)
        self.strength = view.strength[rows, safe].astype(np.int16)
        self.suit = view.suit[rows, safe]
        scaled = self.strength * np.int16(64)
        self.high = np.where(self.valid, scaled + (NUM_CARDS - safe), -1)
        self.low = np.where(self.valid, scaled + safe, np.int16(1 << 14))
        self.rows = rows[:, 0]

    def strongest(self, among: np.ndarray | None = None) -> np.ndarray:
        key = self.high if among is None else np.where(among, self.high, -1)
        return self.cards[self.rows, key.argmax(axis=1)]

    def weakest(self, among: np.ndarray | None = None) -> np.ndarray:
        key = self.low if among is None else np.where(among, self.low, np.int16(1 << 14))
        return self.cards[self.rows, key.argmin(axis=1)]


def rule_actions(view: TableView, masks: np.ndarray, spoil: bool) -> np.ndarray:
    """The greedy (``spoil=False``) or spoiler (``spoil=True``) action for every row."""
    masks = np.asarray(masks, dtype=bool)
    B = len(masks)
    phase = view.phase
    actions = np.zeros(B, np.int64)

    # Robbing: rob, discarding the weakest card; decline only if robbing is not offered.
    robbing = np.flatnonzero(phase == PHASE_ROB)
    if len(robbing):
        rob_cards = masks[robbing, ROB_FIRST:DECLINE_ROB]
        sub = TableView(**{f: getattr(view, f)[robbing] for f in view.__dataclass_fields__})
        discard = _Hand(_slots(rob_cards), sub).weakest()
        actions[robbing] = np.where(rob_cards.any(axis=1), ROB_FIRST + discard,
                                    np.where(masks[robbing, DECLINE_ROB], DECLINE_ROB,
                                             masks[robbing].argmax(axis=1)))
    # The jink choice: always claim.
    actions[phase == PHASE_JINK] = CLAIM
    done = np.flatnonzero(phase == PHASE_DONE)
    actions[done] = masks[done].argmax(axis=1)

    p = np.flatnonzero(phase == PHASE_PLAY)
    if not len(p):
        return actions
    if len(p) < B:
        view = TableView(**{f: getattr(view, f)[p] for f in view.__dataclass_fields__})
    hand = _Hand(_slots(masks[p, :NUM_CARDS]), view)
    strongest = hand.strongest()
    weakest = hand.weakest()
    # A card takes the trick when it counts (a trump, or the suit led) and outranks the best
    # card so far; every trump outranks every plain card. Leading, nothing takes.
    counts = (hand.suit == TRUMP) | (hand.suit == view.led_suit[:, None])
    beats = hand.valid & counts & (hand.strength > view.best_strength[:, None]) & ~view.leading[:, None]
    can_win = beats.any(axis=1)
    cheapest_winner = hand.weakest(beats)
    strongest_winner = hand.strongest(beats)

    own_tricks = view.tricks[:, 0]
    chance = own_tricks + view.hand_size >= TRICKS_TO_WIN
    play = np.where(view.leading, np.where(chance, strongest, weakest),
                    np.where(can_win, cheapest_winner, weakest))

    if spoil:
        seats = np.arange(MAX_PLAYERS)
        others = view.present & (seats[None, :] != 0)
        winning = (seats[None, :] == view.best_seat[:, None]) & ~view.leading[:, None]
        leader_threat = others & ((view.tricks >= 2) | (seats[None, :] == view.jinker[:, None]))
        threat = leader_threat | (others & (view.tricks == 1) & winning)
        top_unseen = view.top_unseen_trump
        sure = hand.valid & (hand.suit == TRUMP) & (hand.strength > top_unseen[:, None])
        contender = own_tricks >= 2
        # Leading: a sure trump; else the strongest card against a threat (or with two
        # tricks); else the weakest, keeping the trumps for stopping.
        lead = np.where(sure.any(axis=1), hand.weakest(sure),
                        np.where(leader_threat.any(axis=1) | contender, strongest, weakest))
        # Following, unless two tricks make it a contender itself.
        threat_winning = (threat & winning).any(axis=1)
        fellow_beating = (threat & view.in_trick).any(axis=1) & ~threat_winning
        best_sure = view.best_trump & (view.best_strength > top_unseen)
        still_to_play = (leader_threat & ~view.in_trick).any(axis=1)
        follow = play
        follow = np.where(fellow_beating & (best_sure | ~chance), weakest, follow)
        follow = np.where(threat_winning, np.where(can_win, cheapest_winner, weakest), follow)
        follow = np.where(still_to_play & can_win, strongest_winner, follow)
        follow = np.where(contender, play, follow)
        play = np.where(view.leading, lead, follow)

    actions[p] = play
    return actions


def numpy_core_rule_actions(core, masks: np.ndarray, spoil: bool, games: np.ndarray | None = None) -> np.ndarray:
    """The greedy or spoiler move of the player to act in every game of a core (or in its ``games``
    only, with ``masks`` their rows): the definition, :func:`rule_actions` on :func:`view_from_core`."""
    view = view_from_core(core)
    if games is not None:
        view = TableView(**{f: getattr(view, f)[games] for f in view.__dataclass_fields__})
    return rule_actions(view, masks, spoil=spoil)


_rules = LazyBackend("SPOILFIVE_RULES", numpy_core_rule_actions, "agents.rules_kernel", "rule_moves")


def rules_backend() -> str:
    """What :func:`core_rule_actions` runs: ``"numba"`` (:mod:`agents.rules_kernel`) or ``"numpy"``."""
    return _rules.name()


def core_rule_actions(core, masks: np.ndarray, spoil: bool, games: np.ndarray | None = None) -> np.ndarray:
    """The greedy (``spoil=False``) or spoiler move of the player to act in every game of a
    core ``(B,)``, or in its ``games`` only (``masks``: their rows), as :func:`numpy_core_rule_actions`
    gives it; the searches' rollouts call it at every step. With Numba, one compiled loop over the
    games (:mod:`agents.rules_kernel`), about five times faster for a large batch and some fifty times
    for one game; ``SPOILFIVE_RULES`` chooses (:func:`rules_backend`)."""
    return _rules.function()(core, masks, spoil, games)


class RandomAgent(Agent):
    """Uniformly random over the legal actions."""

    name = "random"

    def act_batch(self, observations, masks):
        _, masks = checked_batch(observations, masks)
        return sample_legal(masks, self.rng)

    def act_batch_core(self, core, games, masks):
        """:meth:`act_batch`'s draws (the same numbers from ``self.rng``), without building the observations it
        does not read; a subclass or an object that plays its own ``act_batch`` is asked through it."""
        if _plays_its_own_act_batch(self, RandomAgent):
            return super().act_batch_core(core, games, masks)
        games, masks = checked_core_batch(core, games, masks)
        return sample_legal(masks, self.rng)


def _plays_its_own_act_batch(agent, base: type) -> bool:
    """Whether ``agent``'s class overrides ``base.act_batch``, or the object was given an ``act_batch`` of its own,
    so that only ``act_batch`` says how it plays."""
    return type(agent).act_batch is not base.act_batch or "act_batch" in getattr(agent, "__dict__", {})


class RuleAgent(Agent):
    """A player of :func:`rule_actions`: ``greedy``, or ``spoiler`` when ``spoils``."""

    batch_invariant = True  # a pure rule of each row: no random draws
    spoils: bool

    def act_batch(self, observations, masks):
        observations, masks = checked_batch(observations, masks)
        return rule_actions(view_from_observations(observations), masks, spoil=self.spoils)

    def act_batch_core(self, core, games, masks):
        """:meth:`act_batch`'s moves, read from the core's view of the player to act (his hand and the
        public table, :func:`view_from_core`) by :func:`core_rule_actions`, without building observations.

        Under ``conceal_ace_penalty`` the core's strengths already demote an ace concealed in a hand, which a
        player can only deduce, so there the observations are built (the base class's way), as they are for a
        subclass or an object that plays its own ``act_batch``."""
        if core.rules.conceal_ace_penalty or _plays_its_own_act_batch(self, RuleAgent):
            return super().act_batch_core(core, games, masks)
        games, masks = checked_core_batch(core, games, masks)
        return core_rule_actions(core, masks, self.spoils, games)


class GreedyAgent(RuleAgent):
    """Wins tricks as cheaply as it can, sheds its weakest card otherwise, always claims."""

    name = "greedy"
    spoils = False


class SpoilerAgent(RuleAgent):
    """Greedy, and spends its cards to stop another player taking three tricks."""

    name = "spoiler"
    spoils = True

