"""The observation as one compiled loop over games (Numba), when Numba is installed.

:func:`spoilfive_env.observation.numpy_observation` is the definition of the observation, in
NumPy. This module writes the very same vector, game by game, in one compiled pass: NumPy pays
for each of its ~30 whole-batch operations and for every short inner loop (a one-hot of 4 to 10
columns), which is most of the observation's cost at every batch size. The tests check the two
equal, element for element, at every table size and variant.

It is optional: ``pip install -c .ci/constraints.txt -e ".[fast]"`` in the checkout (Numba).
``SPOILFIVE_OBSERVATION=numpy`` in the environment turns it off, ``=numba`` makes its absence an error;
the default, ``auto``, uses it when Numba imports. The first call compiles it (a second or two; cached on
disk afterwards).
"""

from __future__ import annotations

import numba
import numpy as np

from .cards import ACE, MIN_PLAYERS, NUM_CARDS, NUM_RANKS, NUM_TRICKS, TRICKS_TO_WIN
from .core import NUM_EFFECTIVE_SUITS
from .observation import _START, CHIP_SCALE, OBS_DIM
from .phases import PHASE_DONE, PHASE_PLAY, PHASE_ROB

# tricks / TRICKS_TO_WIN for 0-5 tricks, as NumPy's float64 division rounds them (a lookup: a
# division is tens of cycles)
TRICK_FRACTIONS = (np.arange(NUM_TRICKS + 1) / TRICKS_TO_WIN).astype(np.float32)
# The block starts as module constants: Numba compiles them in, so it knows every index is
# non-negative and vectorises the 52-card loops (with the starts passed in, it does not: 6x slower).
HAND, OWN_DISCARD, TURNUP, TRUMP, PLAYED = (_START[name] for name in ("hand", "own_discard", "turnup", "trump",
                                                                      "played"))
TRICK_CARDS, TRICK_SEATS, LED_CARD, TRICKS_WON = (_START[name] for name in ("trick_cards", "trick_seats",
                                                                            "led_card", "tricks_won"))
TO_ACT, LEADER, DEALER, ROBBER, DECLINED, VOIDS, JINKER = (
    _START[name] for name in ("to_act", "leader", "dealer", "robber", "declined", "voids", "jinker"))
OWN_CONCEALED, PHASE, TRICK_NUMBER, TABLE_SIZE, SEAT_PRESENT, TEAMMATES, POOL, CHIPS, HAND_PLACE = (
    _START[name] for name in ("own_concealed", "phase", "trick_number", "table_size", "seat_present",
                              "teammates", "pool", "chips", "hand_place"))


@numba.njit(cache=True, nogil=True)
def _write_observations(obs, games, seats, n, partnerships, game_mode, concealing, num_hands,
                        holder, played_by, trick_cards, led_card, leader, current, phase, tricks_won,
                        trick_number, trump, turnup, dealer, robber, declined_by, discard, concealed,
                        rob_seat, jinker, void, chips, pool, hand_index):  # pragma: no cover (compiled)
    # No integer division in the loop (it costs tens of cycles): places and seats by table.
    # relative[me, seat + 1] is the place of seat seen from me (seat -1, none, maps to place 0);
    # absolute[me, place] is the seat at that place.
    relative = np.zeros((n, n + 1), np.int64)
    absolute = np.zeros((n, n), np.int64)
    for me in range(n):
        for seat in range(n):
            relative[me, seat + 1] = (seat - me) % n
            absolute[me, seat] = (me + seat) % n
    for row in range(games.shape[0]):  # obs[row] is game games[row]'s
        g = games[row]
        me = seats[g]
        # Whole 52-card rows of comparisons, which the compiler turns into vector instructions
        # (one scattered store per played card is four times slower).
        for card in range(NUM_CARDS):
            obs[row, HAND + card] = holder[g, card] == me
        for place in range(n):
            seat, start = absolute[me, place], PLAYED + place * NUM_CARDS
            for card in range(NUM_CARDS):
                obs[row, start + card] = played_by[g, card] == seat
        if robber[g] == me and discard[g] >= 0:
            obs[row, OWN_DISCARD + discard[g]] = 1.0
        if turnup[g] >= 0:
            obs[row, TURNUP + turnup[g]] = 1.0
        if trump[g] >= 0:
            obs[row, TRUMP + trump[g]] = 1.0
        lead = relative[me, leader[g] + 1]
        for position in range(n):
            card = trick_cards[g, position]
            if card >= 0:
                obs[row, TRICK_CARDS + card] = 1.0
                place = lead + position  # below 2n: one subtraction instead of a modulo
                obs[row, TRICK_SEATS + (place - n if place >= n else place)] = 1.0
        if led_card[g] >= 0:
            obs[row, LED_CARD + led_card[g]] = 1.0
        if phase[g] != PHASE_DONE:
            obs[row, TO_ACT + relative[me, current[g] + 1]] = 1.0
        if leader[g] >= 0:
            obs[row, LEADER + lead] = 1.0
        if dealer[g] >= 0:
            obs[row, DEALER + relative[me, dealer[g] + 1]] = 1.0
        if robber[g] >= 0:
            obs[row, ROBBER + relative[me, robber[g] + 1]] = 1.0
        if declined_by[g] >= 0:
            obs[row, DECLINED + relative[me, declined_by[g] + 1]] = 1.0
        if jinker[g] >= 0:
            obs[row, JINKER + relative[me, jinker[g] + 1]] = 1.0
        shown = phase[g]
        # The ace holder's turn to rob is shown as play to the others: it would name the holder.
        if shown == PHASE_ROB and current[g] != me and turnup[g] % NUM_RANKS != ACE:
            shown = PHASE_PLAY
        obs[row, PHASE + shown] = 1.0
        obs[row, TRICK_NUMBER + trick_number[g]] = 1.0
        for place in range(n):
            seat = absolute[me, place]
            obs[row, TRICKS_WON + place] = TRICK_FRACTIONS[tricks_won[g, seat]]
            obs[row, CHIPS + place] = chips[g, seat] / CHIP_SCALE
            obs[row, SEAT_PRESENT + place] = 1.0
            if partnerships and place % 2 == 0:
                obs[row, TEAMMATES + place] = 1.0
            for suit in range(NUM_EFFECTIVE_SUITS):
                obs[row, VOIDS + place * NUM_EFFECTIVE_SUITS + suit] = void[g, seat, suit]
        obs[row, TABLE_SIZE + n - MIN_PLAYERS] = 1.0
        obs[row, POOL] = pool[g] / CHIP_SCALE
        if concealing and concealed[g] and rob_seat[g] == me:
            obs[row, OWN_CONCEALED] = 1.0
        if game_mode:
            obs[row, HAND_PLACE] = hand_index[g] / num_hands
            if hand_index[g] >= num_hands:
                obs[row, HAND_PLACE + 1] = 1.0
            obs[row, HAND_PLACE + 2] = 1.0


def build_observation(core, seats: np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
    """Observations ``(B, OBS_DIM)`` of ``seats``, equal to the NumPy definition's; with ``games`` (int64
    game indices), only those games' rows, in that order."""
    games = core._all if games is None else games
    obs = np.zeros((len(games), OBS_DIM), np.float32)
    _write_observations(obs, np.ascontiguousarray(games, dtype=np.int64), np.ascontiguousarray(seats),
                        core.num_players, core.rules.partnerships,
                        core.mode == "game", core.rules.conceal_ace_penalty, core.rules.num_hands,
                        core.holder, core.played_by, core.trick_cards, core.led_card, core.leader, core.current,
                        core.phase, core.tricks_won, core.trick_number, core.trump, core.turnup, core.dealer,
                        core.robber, core.declined_by, core.discard, core.concealed, core.rob_seat, core.jinker,
                        core.void, core.chips, core.pool, core.hand_index)
    return obs
