"""The rule-based players' moves as one compiled loop over games (Numba), read from a core.

:func:`agents.baselines.rule_actions` on :func:`agents.baselines.view_from_core` is the
definition of what ``greedy`` and ``spoiler`` play. Inside the searches' rollouts they decide
every move of every simulated game, and in NumPy that costs some forty whole-batch operations a
step, two of them over every card of every game (the legal cards into five slots, the best trump
still unseen): most of ``pimc``'s time. This module gives the same moves, game by game, in one
compiled pass over the core's state, reading for each game only the player to act's own hand
and the public table, as the view does. The tests check the two equal, move for move, at every
table size and variant.

It is used when Numba imports (the ``fast`` extra); :func:`agents.baselines.core_rule_actions`
chooses. The first call compiles it (a few seconds; cached on disk afterwards).
"""

from __future__ import annotations

import numba
import numpy as np

from spoilfive_env.actions import CLAIM, DECLINE_ROB, NUM_ACTIONS, ROB_FIRST
from spoilfive_env.cards import HAND_SIZE, MAX_PLAYERS, NUM_CARDS, NUM_TRICKS, TRICKS_TO_WIN, TRUMP
from spoilfive_env.phases import PHASE_DONE, PHASE_JINK, PHASE_ROB

# The slot keys of agents.baselines._Hand: strength * 64 plus the card (weakest first, ties to the
# lower card) or plus NUM_CARDS - card (strongest first, ties to the lower card).
_KEY_SCALE = 64
_NO_LOW = 1 << 14


@numba.njit(cache=True, nogil=True)
def _pick(cards, keys, among, count, lowest):  # pragma: no cover (compiled)
    """The card of the first slot with the lowest (or highest) key among ``among``; the first
    slot's card when none is, as NumPy's argmin / argmax over the padded keys gives."""
    best_slot = 0
    best_key = _NO_LOW if lowest else -1
    for slot in range(count):
        if among[slot] and ((keys[slot] < best_key) if lowest else (keys[slot] > best_key)):
            best_slot, best_key = slot, keys[slot]
    return cards[best_slot]


@numba.njit(cache=True, nogil=True)
def _first_legal(masks, row):  # pragma: no cover (compiled)
    """The lowest legal action id of mask ``row``, as NumPy's argmax over it gives."""
    first = 0
    while not masks[row, first]:
        first += 1
    return first


@numba.njit(cache=True, nogil=True)
def _top_unseen_trump(g, me, holder, played_by, suit, strength, robber, turnup, discard):  # pragma: no cover
    """Strength of the best trump that may still be in another hand: not the player's own, not
    played, not the turn-up left on the table, not his own discard; 0 when there is none."""
    top = 0
    for c in range(NUM_CARDS):
        if suit[g, c] == TRUMP and holder[g, c] != me and played_by[g, c] < 0 and strength[g, c] > top:
            if robber[g] < 0 and c == turnup[g]:
                continue
            if robber[g] == me and discard[g] >= 0 and c == discard[g]:
                continue
            top = strength[g, c]
    return top


@numba.njit(cache=True, nogil=True)
def _rule_moves(out, games, spoil, n, masks, holder, played_by, trick_cards, led_card, leader, current, phase,
                tricks_won, trick_number, trick_pos, turnup, strength, suit, robber, discard,
                jinker):  # pragma: no cover (compiled)
    cards = np.empty(HAND_SIZE, np.int64)
    low = np.empty(HAND_SIZE, np.int64)
    high = np.empty(HAND_SIZE, np.int64)
    card_strength = np.empty(HAND_SIZE, np.int64)
    all_slots = np.ones(HAND_SIZE, np.bool_)
    beats = np.empty(HAND_SIZE, np.bool_)
    sure = np.empty(HAND_SIZE, np.bool_)
    tricks = np.zeros(MAX_PLAYERS, np.int64)
    in_trick = np.zeros(MAX_PLAYERS, np.bool_)
    for row in range(games.shape[0]):  # row: of out and masks; g: of the core
        g = games[row]
        stage = phase[g]
        if stage == PHASE_JINK:
            out[row] = CLAIM
            continue
        if stage == PHASE_DONE:
            out[row] = _first_legal(masks, row)
            continue
        # The candidate cards in five slots, by card id: the discards when robbing, else the legal plays.
        offset = ROB_FIRST if stage == PHASE_ROB else 0
        in_hand = HAND_SIZE if stage == PHASE_ROB else NUM_TRICKS - trick_number[g]  # cards held: no more are legal
        count = 0
        for card in range(NUM_CARDS):
            if masks[row, offset + card]:
                s = strength[g, card]
                cards[count], card_strength[count] = card, s
                low[count] = s * _KEY_SCALE + card
                high[count] = s * _KEY_SCALE + (NUM_CARDS - card)
                count += 1
                if count == in_hand:
                    break
        if stage == PHASE_ROB:
            if count:
                out[row] = ROB_FIRST + _pick(cards, low, all_slots, count, True)
            elif masks[row, DECLINE_ROB]:
                out[row] = DECLINE_ROB
            else:
                out[row] = _first_legal(masks, row)
            continue
        me = current[g]  # the play phase from here on
        # The card now winning the trick (agents.baselines._best_card).
        led = led_card[g]
        leading = led < 0
        led_suit = -1 if leading else suit[g, led]
        best_slot, best_score = 0, -1
        for place in range(n):  # the first highest score, as NumPy's argmax
            c = trick_cards[g, place]
            score = -1
            if c >= 0 and (suit[g, c] == TRUMP or suit[g, c] == led_suit):
                score = strength[g, c]
            if place == 0 or score > best_score:
                best_slot, best_score = place, score
        best_card = trick_cards[g, best_slot]
        best_strength = -1 if leading else best_score
        safe_best = best_card if best_card >= 0 else 0
        best_trump = (not leading) and suit[g, safe_best] == TRUMP
        best_seat = -1 if leading else (played_by[g, safe_best] - me) % n
        # Seats relative to the player to act (only the table's n places are read).
        for place in range(n):
            seat = (me + place) % n
            tricks[place] = tricks_won[g, seat]
            in_trick[place] = (seat - leader[g]) % n < trick_pos[g]
        jinker_place = (jinker[g] - me) % n if jinker[g] >= 0 else -1

        for slot in range(count):
            c = cards[slot]
            beats[slot] = (not leading) and (suit[g, c] == TRUMP or suit[g, c] == led_suit) \
                and card_strength[slot] > best_strength
        can_win = False
        for slot in range(count):
            can_win = can_win or beats[slot]
        strongest = _pick(cards, high, all_slots, count, False)
        weakest = _pick(cards, low, all_slots, count, True)
        cheapest_winner = _pick(cards, low, beats, count, True)
        strongest_winner = _pick(cards, high, beats, count, False)
        own_tricks = tricks[0]
        chance = own_tricks + in_hand >= TRICKS_TO_WIN
        if leading:
            play = strongest if chance else weakest
        else:
            play = cheapest_winner if can_win else weakest
        if spoil:
            any_leader_threat = False
            threat_winning = False
            threat_in_trick = False
            still_to_play = False
            for place in range(1, n):
                winning = (not leading) and place == best_seat
                leader_threat = tricks[place] >= 2 or place == jinker_place
                threat = leader_threat or (tricks[place] == 1 and winning)
                any_leader_threat = any_leader_threat or leader_threat
                threat_winning = threat_winning or (threat and winning)
                threat_in_trick = threat_in_trick or (threat and in_trick[place])
                still_to_play = still_to_play or (leader_threat and not in_trick[place])
            contender = own_tricks >= 2
            fellow_beating = threat_in_trick and not threat_winning
            # The best unseen trump is read only where a rule asks for it (52 cards: the cost here).
            top_unseen = 0
            if leading or (fellow_beating and not contender):
                top_unseen = _top_unseen_trump(g, me, holder, played_by, suit, strength, robber, turnup, discard)
            if leading:
                any_sure = False
                for slot in range(count):
                    sure[slot] = suit[g, cards[slot]] == TRUMP and card_strength[slot] > top_unseen
                    any_sure = any_sure or sure[slot]
                if any_sure:
                    play = _pick(cards, low, sure, count, True)
                elif any_leader_threat or contender:
                    play = strongest
                else:
                    play = weakest
            elif not contender:
                best_sure = best_trump and best_strength > top_unseen
                if fellow_beating and (best_sure or not chance):
                    play = weakest
                if threat_winning:
                    play = cheapest_winner if can_win else weakest
                if still_to_play and can_win:
                    play = strongest_winner
        out[row] = play


def rule_moves(core, masks: np.ndarray, spoil: bool, games: np.ndarray | None = None) -> np.ndarray:
    """The greedy (``spoil=False``) or spoiler move of the player to act in every game of
    ``core`` ``(B,)``, as :func:`agents.baselines.rule_actions` on its ``view_from_core``; or in
    the core's ``games`` only (int, with ``masks`` their rows), in their order."""
    masks = np.ascontiguousarray(masks, dtype=np.bool_)
    # The compiled loop reads without bounds checks: refuse what would read past the arrays. (Every game, as the
    # searches' rollouts ask at each step, is in range by construction: only the masks' shape is checked then.)
    given = games is not None
    games = np.asarray(games, np.int64) if given else np.arange(core.batch_size)
    if games.ndim != 1 or masks.shape != (len(games), NUM_ACTIONS):
        raise ValueError(f"rule_moves needs games (k,) and their masks (k, {NUM_ACTIONS}), got games of shape "
                         f"{games.shape} and masks of shape {masks.shape}")
    if given and len(games) and (games.min() < 0 or games.max() >= core.batch_size):
        raise ValueError(f"rule_moves needs games from 0 to {core.batch_size - 1} (the core's batch), got "
                         f"{games[:8].tolist()}")
    out = np.zeros(len(games), np.int64)
    _rule_moves(out, games, bool(spoil), core.num_players, masks, core.holder, core.played_by, core.trick_cards,
                core.led_card, core.leader, core.current, core.phase, core.tricks_won, core.trick_number,
                core.trick_pos, core.turnup, core.strength, core.effective_suit, core.robber, core.discard,
                core.jinker)
    return out
