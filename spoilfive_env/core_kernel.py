"""The core's two hot paths, the legal mask and the play of a card, as compiled loops over games (Numba).

:class:`spoilfive_env.core.SpoilFiveCore`'s NumPy methods are the definition of the rules. NumPy pays for each of
their whole-batch operations (some forty for a mask and a play) whatever the batch, which is most of a step's
cost at every batch size; this module gives the same mask and the same play game by game in one pass. A hand's
settling (:meth:`~spoilfive_env.core.SpoilFiveCore._end_hand`, antes and the next deal), robbing, concealing and
the jink choice stay in NumPy: they come once a hand. The tests step a core on each backend in lockstep, every
table size, variant and mode, and compare every state field, mask, reward and end.

It is optional, in the ``fast`` extra with the compiled observation. ``SPOILFIVE_CORE=numpy`` turns it off,
``=numba`` makes its absence an error; the default, ``auto``, uses it when Numba imports. The first call compiles
it (a few seconds; cached on disk afterwards).
"""

from __future__ import annotations

import numba
import numpy as np

from . import actions as A
from .cards import ACE, ACE_OF_TRUMPS, NUM_CARDS, NUM_RANKS, NUM_TRICKS, PRIVILEGED, STRENGTH, TRICKS_TO_WIN, TRUMP
from .phases import PHASE_DONE, PHASE_JINK, PHASE_PLAY, PHASE_ROB

ROB_FIRST, DECLINE_ROB, CLAIM, JINK = A.ROB_FIRST, A.DECLINE_ROB, A.CLAIM, A.JINK


@numba.njit(cache=True, nogil=True)
def _write_legal_mask(mask, conceal_ace_penalty, holder, current, phase, led_card, effective_suit, strength,
                      privileged, turnup, trump):  # pragma: no cover (compiled)
    for g in range(holder.shape[0]):
        row = mask[g]
        in_phase = phase[g]
        if in_phase == PHASE_DONE:  # all True, so a masked softmax never sees an empty row
            row[:] = True
            continue
        row[:] = False
        me = current[g]
        # Under conceal_ace_penalty the ace holder may play without announcing (not the dealer's rob of an ace
        # turn-up), and that play is judged with the ace already demoted: it may not be held back.
        concealable = conceal_ace_penalty and in_phase == PHASE_ROB and turnup[g] % NUM_RANKS != ACE
        demoted = ACE_OF_TRUMPS[trump[g]] if concealable else -1
        if in_phase == PHASE_PLAY or concealable:
            led = led_card[g]
            led_suit = -1
            bound = False  # holds a card of the led suit it may not hold back: must follow or trump
            if led >= 0:
                led_suit = effective_suit[g, led]
                led_strength = strength[g, led]
                for card in range(NUM_CARDS):
                    if holder[g, card] == me and effective_suit[g, card] == led_suit and not (
                            privileged[g, card] and card != demoted and strength[g, card] > led_strength):
                        bound = True
                        break
            for card in range(NUM_CARDS):
                if holder[g, card] == me and (not bound or effective_suit[g, card] == led_suit
                                              or effective_suit[g, card] == TRUMP):
                    row[card] = True
        if in_phase == PHASE_ROB:
            for card in range(NUM_CARDS):
                if holder[g, card] == me:
                    row[ROB_FIRST + card] = True
            row[DECLINE_ROB] = True
        elif in_phase == PHASE_JINK:
            row[CLAIM] = True
            row[JINK] = True


@numba.njit(cache=True, nogil=True)
def _play_cards(games, cards, ended, winners, jink_won, n, partnerships, allow_jink, side_of_seat,
                holder, played_by, trick_cards, trick_pos, led_card, leader, current, phase, tricks_won,
                trick_number, trump, turnup, effective_suit, strength, robber, rob_seat, rob_pending, jinker,
                void):  # pragma: no cover (compiled)
    for i in range(games.shape[0]):
        g = games[i]
        card = cards[i]
        seat = current[g]
        position = trick_pos[g]
        holder[g, card] = -1
        played_by[g, card] = seat
        trick_cards[g, position] = card
        if position == 0:
            led_card[g] = card
        else:  # the voids a following card proves, from public information only
            led = led_card[g]
            led_suit = effective_suit[g, led]
            card_suit = effective_suit[g, card]
            if led_suit != TRUMP and card_suit != led_suit and card_suit != TRUMP:
                void[g, seat, led_suit] = True
            elif led_suit == TRUMP and card_suit != TRUMP:
                # Void in trumps unless a privileged trump above the lead could still be held back in that hand.
                # The public tables, not the game's own: a concealed ace is known only to its holder.
                table = trump[g]
                hideable = False
                for other in range(NUM_CARDS):
                    if (PRIVILEGED[table, other] and STRENGTH[table, other] > STRENGTH[table, led]
                            and played_by[g, other] == -1 and (other != turnup[g] or robber[g] == seat)):
                        hideable = True
                        break
                if not hideable:
                    void[g, seat, TRUMP] = True
        position += 1
        trick_pos[g] = position
        current[g] = seat + 1 if seat + 1 < n else 0
        ended[i] = False
        if position < n:
            # The ace holder's turn in trick 1 opens with the choice to rob.
            if rob_pending[g] and current[g] == rob_seat[g]:
                phase[g] = PHASE_ROB
            continue

        # The trick is complete: the best trump, else the best card of the led suit (np.argmax's first best).
        lead_suit = effective_suit[g, trick_cards[g, 0]]
        best, best_score = 0, strength[g, trick_cards[g, 0]]
        for place in range(1, n):
            played = trick_cards[g, place]
            suit = effective_suit[g, played]
            score = strength[g, played] if suit == TRUMP or suit == lead_suit else 0
            if score > best_score:
                best, best_score = place, score
        winner = leader[g] + best
        if winner >= n:
            winner -= n
        tricks_won[g, winner] += 1
        tricks_done = trick_number[g] + 1
        trick_number[g] = tricks_done
        leader[g] = winner
        current[g] = winner
        trick_pos[g] = 0
        led_card[g] = -1
        trick_cards[g, :] = -1

        side = side_of_seat[winner]
        side_tricks = 0
        most_tricks = 0
        for other in range(n):
            if side_of_seat[other] == side:
                side_tricks += tricks_won[g, other]
            most_tricks = max(most_tricks, tricks_won[g, other])
        jinking = jinker[g] >= 0
        jink_lost = jinking and side_of_seat[jinker[g]] != side
        won_jink = jinking and not jink_lost and tricks_done == NUM_TRICKS
        reached = not jinking and side_tricks == TRICKS_TO_WIN
        offers_jink = reached and tricks_done == TRICKS_TO_WIN and allow_jink
        wins = reached and not offers_jink
        if partnerships:
            spoiled = jink_lost
        else:
            nobody_can = most_tricks + NUM_TRICKS - tricks_done < TRICKS_TO_WIN
            spoiled = jink_lost or (not jinking and not reached and nobody_can)
        if offers_jink:
            phase[g] = PHASE_JINK
        if wins or won_jink or spoiled:
            ended[i] = True
            winners[i] = -1 if spoiled else side
            jink_won[i] = won_jink


def legal_mask(core) -> np.ndarray:
    """The legal mask ``(B, 107)`` of ``core``'s players to act: :meth:`SpoilFiveCore._numpy_legal_mask`'s."""
    mask = np.empty((core.batch_size, A.NUM_ACTIONS), bool)
    _write_legal_mask(mask, core.rules.conceal_ace_penalty, core.holder, core.current, core.phase, core.led_card,
                      core.effective_suit, core.strength, core.privileged, core.turnup, core.trump)
    return mask


def apply_play(core, games, actions, rewards, episode_done) -> None:
    """Play the cards ``actions[games]`` (checked legal) in ``games``: :meth:`SpoilFiveCore._numpy_apply_play`'s."""
    count = len(games)
    ended = np.empty(count, bool)
    winners = np.empty(count, np.int8)
    jink_won = np.zeros(count, bool)
    rules = core.rules
    _play_cards(games, actions[games], ended, winners, jink_won, core.num_players, rules.partnerships,
                rules.allow_jink, core._side_of_seat, core.holder, core.played_by, core.trick_cards, core.trick_pos,
                core.led_card, core.leader, core.current, core.phase, core.tricks_won, core.trick_number,
                core.trump, core.turnup, core.effective_suit, core.strength, core.robber, core.rob_seat,
                core.rob_pending, core.jinker, core.void)
    if ended.any():
        core._end_hand(games[ended], winners[ended], jink_won[ended], rewards, episode_done)


CORE_KERNELS = (legal_mask, apply_play)
"""What :data:`spoilfive_env.core`'s backend takes from here: the mask, then the play."""
