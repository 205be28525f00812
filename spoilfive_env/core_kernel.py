"""The core's hot paths as compiled loops over games (Numba): the legal mask, the play of a card, the settling of a
finished hand and the laying out of a deal.

:class:`spoilfive_env.core.SpoilFiveCore`'s NumPy methods are the definition of the rules. NumPy pays for each of
their whole-batch operations (some forty for a mask and a play) whatever the batch, which is most of a step's
cost at every batch size; this module gives the same results game by game in one pass. Robbing, concealing and
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
from .cards import (
    ACE,
    ACE_OF_TRUMPS,
    EFFECTIVE_SUIT,
    NUM_CARDS,
    NUM_RANKS,
    NUM_TRICKS,
    PRIVILEGED,
    STRENGTH,
    TRICKS_TO_WIN,
    TRUMP,
)
from .core import CoreKernels
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
    # One type for every caller's actions and games, so that one compiled version serves them all.
    games = games.astype(np.int64, copy=False)
    cards = actions[games].astype(np.int64, copy=False)
    _play_cards(games, cards, ended, winners, jink_won, core.num_players, rules.partnerships, rules.allow_jink,
                core._side_of_seat, core.holder, core.played_by, core.trick_cards, core.trick_pos,
                core.led_card, core.leader, core.current, core.phase, core.tricks_won, core.trick_number,
                core.trump, core.turnup, core.effective_suit, core.strength, core.robber, core.rob_seat,
                core.rob_pending, core.jinker, core.void)
    if ended.any():
        core._end_hand(games[ended], winners[ended], jink_won[ended], rewards, episode_done)


@numba.njit(cache=True, nogil=True)
def _settle(games, winners, jink_won, over, rewards, episode_done, n, partnerships, jink_bonus, game_mode,
            num_hands, max_hands, chips_reward, side_of_seat, chips, pool, spoiled_last, last_winner, last_tricks,
            last_jinker, last_jink_won, hand_index, tricks_won, jinker, chips_at_hand_start, pool_at_hand_start,
            phase, game_over):  # pragma: no cover (compiled)
    team_size = n // 2
    seats = np.float32(n)
    for i in range(games.shape[0]):
        g = games[i]
        side = winners[i]
        won = side >= 0
        if won and partnerships:  # the pool shared by the winning side, the jink bonus paid by the other
            share = pool[g] // team_size
            for seat in range(n):
                on_side = side_of_seat[seat] == side
                if on_side:
                    chips[g, seat] += share
                if jink_won[i]:
                    chips[g, seat] += jink_bonus if on_side else -jink_bonus
            pool[g] -= share * team_size
        elif won:
            chips[g, side] += pool[g]
            pool[g] = 0
            if jink_won[i]:
                for seat in range(n):
                    chips[g, seat] -= jink_bonus
                chips[g, side] += jink_bonus * n
        spoiled_last[g] = not won
        last_winner[g] = side
        for seat in range(n):
            last_tricks[g, seat] = tricks_won[g, seat]
        last_jinker[g] = jinker[g]
        last_jink_won[g] = jink_won[i]
        hand_index[g] += 1
        if game_mode:
            capped = not won and hand_index[g] >= max_hands
            if capped:  # the last spoiled pool shared out, its remainder left in the pool
                share = pool[g] // n
                for seat in range(n):
                    chips[g, seat] += share
                pool[g] -= share * n
            over[i] = (won and hand_index[g] >= num_hands) or capped
        else:
            over[i] = True
        # A remainder left in the pool when a game ends is paid to nobody (equity sums to the chip change).
        pool_after = 0 if over[i] and game_mode else pool[g]
        pool_change = np.float32(pool_after - pool_at_hand_start[g]) / seats
        for seat in range(n):
            chips_change = np.float32(chips[g, seat] - chips_at_hand_start[g, seat])
            rewards[g, seat] = chips_change if chips_reward else chips_change + pool_change
        if over[i]:
            phase[g] = PHASE_DONE
            game_over[g] = True
            episode_done[g] = True


@numba.njit(cache=True, nogil=True)
def _lay_out(games, dealers, hands, turnups, n, ante, spoil_ante, dealer_ante, holder, played_by, trick_cards,
             trick_pos, led_card, tricks_won, trick_number, trump, turnup, dealer, effective_suit, strength,
             privileged, robber, declined_by, discard, concealed, jinker, void, leader, rob_seat, rob_pending,
             current, phase, chips, pool, chips_at_hand_start, pool_at_hand_start,
             spoiled_last):  # pragma: no cover (compiled)
    for i in range(games.shape[0]):
        g = games[i]
        holder[g, :] = -1
        for seat in range(n):
            for place in range(hands.shape[2]):
                holder[g, hands[i, seat, place]] = seat
        played_by[g, :] = -1
        trick_cards[g, :] = -1
        trick_pos[g] = 0
        led_card[g] = -1
        tricks_won[g, :] = 0
        trick_number[g] = 0
        card_up = turnups[i]
        suit = card_up // NUM_RANKS
        trump[g] = suit
        turnup[g] = card_up
        dealt_by = dealers[i]
        dealer[g] = dealt_by
        effective_suit[g, :] = EFFECTIVE_SUIT[suit]
        strength[g, :] = STRENGTH[suit]
        privileged[g, :] = PRIVILEGED[suit]
        robber[g] = -1
        declined_by[g] = -1
        discard[g] = -1
        concealed[g] = False
        jinker[g] = -1
        void[g] = False
        eldest = dealt_by + 1 if dealt_by + 1 < n else 0
        leader[g] = eldest
        # The dealer robs an ace turned up, before the lead; else the holder of the ace of trumps, at his turn.
        ace_turned = card_up % NUM_RANKS == ACE
        entitled = dealt_by if ace_turned else holder[g, ACE_OF_TRUMPS[suit]]
        rob_seat[g] = entitled
        rob_pending[g] = entitled >= 0
        current[g] = dealt_by if ace_turned else eldest
        phase[g] = PHASE_ROB if ace_turned or entitled == eldest else PHASE_PLAY
        # Antes: a carried-over pool takes the spoil ante; the dealer adds his extra.
        paid = spoil_ante if spoiled_last[g] else ante
        for seat in range(n):
            chips_at_hand_start[g, seat] = chips[g, seat]
            chips[g, seat] -= paid
        pool_at_hand_start[g] = pool[g]
        chips[g, dealt_by] -= dealer_ante
        pool[g] += paid * n + dealer_ante


def settle_hands(core, games, winners, jink_won, rewards, episode_done) -> np.ndarray:
    """Settle the hands that ended in ``games``: :meth:`SpoilFiveCore._numpy_settle_hands`'s."""
    over = np.empty(len(games), bool)
    rules = core.rules
    games, winners = games.astype(np.int64, copy=False), winners.astype(np.int8, copy=False)
    _settle(games, winners, jink_won, over, rewards, episode_done, core.num_players, rules.partnerships,
            rules.jink_bonus, core.mode == "game", rules.num_hands, rules.max_hands, core.reward_mode == "chips",
            core._side_of_seat, core.chips, core.pool, core.spoiled_last, core.last_winner, core.last_tricks,
            core.last_jinker, core.last_jink_won, core.hand_index, core.tricks_won, core.jinker,
            core.chips_at_hand_start, core.pool_at_hand_start, core.phase, core.game_over)
    return over


def lay_out_deal(core, games, dealers, hands, turnups) -> None:
    """Lay the dealt hands out in ``games``: :meth:`SpoilFiveCore._numpy_lay_out_deal`'s."""
    rules = core.rules
    games, dealers = games.astype(np.int64, copy=False), dealers.astype(np.int8, copy=False)
    hands, turnups = np.ascontiguousarray(hands, np.int8), np.ascontiguousarray(turnups, np.int8)
    _lay_out(games, dealers, hands, turnups, core.num_players, rules.ante, rules.spoil_ante, rules.dealer_ante,
             core.holder, core.played_by, core.trick_cards, core.trick_pos, core.led_card, core.tricks_won,
             core.trick_number, core.trump, core.turnup, core.dealer, core.effective_suit, core.strength,
             core.privileged, core.robber, core.declined_by, core.discard, core.concealed, core.jinker, core.void,
             core.leader, core.rob_seat, core.rob_pending, core.current, core.phase, core.chips, core.pool,
             core.chips_at_hand_start, core.pool_at_hand_start, core.spoiled_last)


CORE_KERNELS = CoreKernels(legal_mask, apply_play, settle_hands, lay_out_deal)
"""What :data:`spoilfive_env.core`'s backend takes from here."""
