"""The observation: one flat float32 vector of the same length for every table size.

Seats are relative to the viewer (``0`` is the viewer, ``1`` the player on his left, ...)
and padded to ``MAX_PLAYERS`` = 10, so that one network can serve every table. The vector
holds only what that seat may know. Layout (``OBSERVATION_LAYOUT``; each block has a named
slice in ``SLICES``):

==================  =======  ==========================================================
block               size     coding
==================  =======  ==========================================================
``hand``            52       1 for each card in the viewer's hand
``own_discard``     52       the card the viewer discarded when he robbed
``turnup``          52       one-hot turned-up card
``trump``           4        one-hot trump suit (C, D, H, S)
``played``          10 x 52  cards each relative seat has played this hand
``trick_cards``     52       cards in the current trick
``trick_seats``     10       relative seats that have played to the current trick
``led_card``        52       one-hot first card of the current trick
``tricks_won``      10       tricks taken by relative seat, divided by 3
``to_act``          10       one-hot relative seat to act
``leader``          10       one-hot relative seat that leads the current trick
``dealer``          10       one-hot relative seat of the dealer
``robber``          10       one-hot relative seat that robbed (holds the turn-up until
                             he plays it)
``declined``        10       one-hot relative seat that declined to rob
``voids``           10 x 5   seat has shown it holds no card of the effective suit
                             (C, D, H, S, trumps), proven from public plays only
``jinker``          10       one-hot relative seat playing on for all five
``own_concealed``   1        the viewer played to trick 1 without announcing his ace
``phase``           4        one-hot: rob, play, jink, done (another seat's turn to
                             rob an ordinary turn-up shows as play: it would name him)
``trick_number``    6        one-hot tricks completed, 0-5
``table_size``      9        one-hot number of players, 2-10
``seat_present``    10       1 for relative seats that exist at this table
``teammates``       10       1 for the viewer's team (partnerships only)
``pool``            1        chips in the pool / 20
``chips``           10       chips by relative seat / 20
``hand_place``      3        hands completed / num_hands, past num_hands, game mode
==================  =======  ==========================================================

:func:`numpy_observation` is the definition. With Numba installed (the ``fast`` extra),
:func:`build_observation` runs :mod:`spoilfive_env.observation_kernel` instead, the same vector
from one compiled loop (``SPOILFIVE_OBSERVATION=auto|numba|numpy`` chooses).

Void proofs: on a plain lead a player may trump while holding the suit, so only a card of
another plain suit proves a void; on a trump lead a plain card proves a trump void only when
no privileged trump ranking above the card led can still be in that hand (unplayed, not the
turn-up left on the table, not the turn-up held by another robber).
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np

from .backends import BACKENDS, LazyBackend
from .cards import ACE, MAX_PLAYERS, MIN_PLAYERS, NUM_CARDS, NUM_RANKS, SUIT_NAMES, TRICKS_TO_WIN, card_str
from .phases import PHASE_DONE, PHASE_NAMES, PHASE_PLAY, PHASE_ROB

OBSERVATION_VERSION = 1
CHIP_SCALE = 20.0
NUM_PHASES = len(PHASE_NAMES)
EFFECTIVE_SUIT_NAMES = (*SUIT_NAMES, "trumps")

OBSERVATION_LAYOUT: tuple[tuple[str, int], ...] = (
    ("hand", NUM_CARDS),
    ("own_discard", NUM_CARDS),
    ("turnup", NUM_CARDS),
    ("trump", 4),
    ("played", MAX_PLAYERS * NUM_CARDS),
    ("trick_cards", NUM_CARDS),
    ("trick_seats", MAX_PLAYERS),
    ("led_card", NUM_CARDS),
    ("tricks_won", MAX_PLAYERS),
    ("to_act", MAX_PLAYERS),
    ("leader", MAX_PLAYERS),
    ("dealer", MAX_PLAYERS),
    ("robber", MAX_PLAYERS),
    ("declined", MAX_PLAYERS),
    ("voids", MAX_PLAYERS * 5),
    ("jinker", MAX_PLAYERS),
    ("own_concealed", 1),
    ("phase", NUM_PHASES),
    ("trick_number", 6),
    ("table_size", MAX_PLAYERS - MIN_PLAYERS + 1),
    ("seat_present", MAX_PLAYERS),
    ("teammates", MAX_PLAYERS),
    ("pool", 1),
    ("chips", MAX_PLAYERS),
    ("hand_place", 3),
)


def _slices():
    slices, start = {}, 0
    for name, size in OBSERVATION_LAYOUT:
        slices[name] = slice(start, start + size)
        start += size
    return slices, start


SLICES, OBS_DIM = _slices()
_START = {name: s.start for name, s in SLICES.items()}


_SEAT_BLOCKS = ("to_act", "leader", "dealer", "robber", "declined", "jinker")
_VALUE_BLOCKS = ("own_discard", "turnup", "led_card", "trump", "phase", "trick_number")


@cache
def _scatter_layout(n: int, partnerships: bool, game_mode: bool) -> tuple[np.ndarray, np.ndarray, int, np.ndarray,
                                                                           np.ndarray]:
    """The rows of the one scatter at a table of ``n`` (with partnerships, in game mode).

    Returns the start column of each row's block (0 for the constant rows, which hold their
    column), a sink column, ``arange(n)`` and a table for ``% n``. The sink is the ``table_size`` column of another
    table size: always 0 at this table, so an absent value (seat or card -1) writes its 0 there.
    """
    constant = [_START["table_size"] + n - MIN_PLAYERS, *range(_START["seat_present"], _START["seat_present"] + n)]
    if partnerships:  # teams alternate, so relative seat k is a teammate when k is even
        constant += range(_START["teammates"], _START["teammates"] + n, 2)
    if game_mode:
        constant.append(_START["hand_place"] + 2)
    starts = [*(_START[name] for name in _SEAT_BLOCKS), *[_START["trick_seats"]] * n,
              *(_START[name] for name in _VALUE_BLOCKS), *[_START["trick_cards"]] * n, *[0] * len(constant)]
    sink = _START["table_size"] + (1 if n == MIN_PLAYERS else 0)
    # seat_mod.take(k) is k % n for k in -2n .. 2n-1: a gather costs a fraction of an int16 modulo.
    seat_mod = (np.arange(2 * n) % n).astype(np.int16)
    return (np.array(starts, np.int16)[:, None], np.array(constant, np.int16)[:, None], sink,
            np.arange(n, dtype=np.int16), seat_mod)


@cache
def _seats_from(n: int) -> np.ndarray:
    """``(n, n)``: row ``s`` lists the seats at relative places 0 .. n-1 of viewer ``s``."""
    seats = ((np.arange(n)[:, None] + np.arange(n)) % n).astype(np.int8)  # played_by's dtype
    seats.flags.writeable = False
    return seats


@lru_cache(maxsize=16)
def _seat_row_offsets(batch_size: int, n: int) -> np.ndarray:
    """``(B, 1)``: the first flat index of each game's row in a ``(B, n)`` per-seat array."""
    offsets = (np.arange(batch_size) * n)[:, None]
    offsets.flags.writeable = False
    return offsets


OBSERVATION_BACKENDS = BACKENDS
"""``SPOILFIVE_OBSERVATION``: ``numba`` (the compiled loop of :mod:`spoilfive_env.observation_kernel`),
``numpy`` (:func:`numpy_observation`, the definition) or ``auto`` (numba when it imports)."""


def observation_backend() -> str:
    """The builder :func:`build_observation` uses: ``"numba"`` or ``"numpy"``."""
    return _backend.name()


def observation_bounds() -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest value of each observation column (float32 ``(OBS_DIM,)`` each): the
    bounds of the envs' observation spaces, which the agents also check what they are given against."""
    low = np.zeros(OBS_DIM, np.float32)
    high = np.ones(OBS_DIM, np.float32)
    high[SLICES["tricks_won"]] = 5 / 3
    low[SLICES["chips"]] = -np.inf
    high[SLICES["chips"]] = np.inf
    high[SLICES["pool"]] = np.inf
    high[SLICES["hand_place"]] = np.inf
    return low, high


def build_observation(core, seats: np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
    """Observations ``(B, OBS_DIM)`` of ``seats`` (one seat per game) from a core's state:
    :func:`numpy_observation`, or the same vector from the compiled loop when Numba is installed
    (``SPOILFIVE_OBSERVATION``, :data:`OBSERVATION_BACKENDS`). With ``games`` (int64 game indices),
    only those games' rows, in that order (the compiled loop builds no other)."""
    return _backend.function()(core, seats, games)


def numpy_observation(core, seats: np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
    """Observations ``(B, OBS_DIM)`` of ``seats`` (one seat per game) from a core's state: the
    definition, in NumPy. With ``games``, those games' rows, built from a copy of those games: faster than
    building the whole batch and taking its rows at nearly any share of the batch (docs/performance.md).

    One scatter writes every one-hot block, the current trick (its cards and the relative
    seat at each position) and the table's constant columns, from rows of a ``(k, B)`` array:
    few operations whatever the batch size. An absent value (seat or card -1) writes its 0
    into a sink column that is 0 at this table anyway.
    """
    if games is not None:
        if not len(games):  # (a batch of 0 has no seat rows to reshape)
            return np.zeros((0, OBS_DIM), np.float32)
        return numpy_observation(core._copy_of_rows(games), seats[games])
    B, n = core.batch_size, core.num_players
    starts, constant, sink, seat_range, seat_mod = _scatter_layout(n, core.rules.partnerships, core.mode == "game")
    rows = core._all
    obs = np.zeros((B, OBS_DIM), np.float32)
    seats16 = seats.astype(np.int16)
    absolute = _seats_from(n).take(seats, axis=0)  # (B, n) seat of relative k
    # Per-seat arrays are read through one flat index: a 1-D take beats a (rows, seats) pair.
    seat_rows = absolute + _seat_row_offsets(B, n)

    # Rows: seat blocks, trick seats (n), value blocks, trick cards (n), constant columns.
    k_seat = len(_SEAT_BLOCKS)
    relative = k_seat + n  # rows holding absolute seats or trick positions, made relative below
    first_value, first_card = relative, relative + len(_VALUE_BLOCKS)
    values = np.empty((len(starts), B), np.int16)
    values[0] = np.where(core.phase != PHASE_DONE, core.current, -1)
    values[1] = core.leader
    values[2] = core.dealer
    values[3] = core.robber
    values[4] = core.declined_by
    values[5] = core.jinker
    values[k_seat: relative] = seat_range[:, None] + (core.leader - seats16)  # seat at each trick position
    values[first_value] = np.where(core.robber == seats, core.discard, -1)
    values[first_value + 1] = core.turnup
    values[first_value + 2] = core.led_card
    values[first_value + 3] = core.trump
    values[first_value + 4] = core.phase
    robbing = core.phase == PHASE_ROB
    if robbing.any():
        # The ace holder's turn to rob is shown as play to the others: it would name the holder.
        others_rob = robbing & (core.current != seats) & (core.turnup % NUM_RANKS != ACE)
        values[first_value + 4, others_rob] = PHASE_PLAY
    values[first_value + 5] = core.trick_number
    values[first_card: first_card + n] = core.trick_cards[:, :n].T
    values[first_card + n:] = constant
    present = values >= 0
    present[k_seat: relative] = present[first_card: first_card + n]
    values[:k_seat] -= seats16
    values[:relative] = seat_mod.take(values[:relative])
    values += starts
    # A flat index scatters faster than a (rows, columns) pair.
    obs.reshape(-1)[np.where(present, values, sink) + rows * OBS_DIM] = present

    obs[:, SLICES["hand"]] = core.holder == seats[:, None]
    played = obs[:, SLICES["played"]].reshape(B, MAX_PLAYERS, NUM_CARDS)
    played[:, :n] = core.played_by[:, None, :] == absolute[:, :, None]
    np.divide(core.tricks_won.reshape(-1).take(seat_rows), TRICKS_TO_WIN,
              out=obs[:, _START["tricks_won"]: _START["tricks_won"] + n])
    voids = obs[:, SLICES["voids"]].reshape(B, MAX_PLAYERS, 5)
    voids[:, :n] = core.void.reshape(B * n, -1).take(seat_rows, axis=0)
    if core.rules.conceal_ace_penalty:  # nobody conceals otherwise
        obs[:, _START["own_concealed"]] = core.concealed & (core.rob_seat == seats)
    np.divide(core.pool, CHIP_SCALE, out=obs[:, _START["pool"]])
    np.divide(core.chips.reshape(-1).take(seat_rows), CHIP_SCALE, out=obs[:, _START["chips"]: _START["chips"] + n])
    if core.mode == "game":
        place = _START["hand_place"]
        obs[:, place] = core.hand_index / core.rules.num_hands
        obs[:, place + 1] = core.hand_index >= core.rules.num_hands
    return obs


_backend = LazyBackend("SPOILFIVE_OBSERVATION", numpy_observation, "spoilfive_env.observation_kernel",
                       "build_observation")  # chosen at the first observation: the environment is read then


def as_float32(values, what: str) -> np.ndarray:
    """``values`` as a float32 array, or a ``ValueError`` naming ``what`` when they are not numbers
    (objects, text, ragged lists: NumPy's own error would be a ``TypeError`` or name no argument)."""
    try:
        return np.asarray(values, dtype=np.float32)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{what} must be numbers (float32, as observe() gives them), got {values!r:.60} "
                         f"({error})") from None


def decode_observation(observation: np.ndarray) -> dict:
    """Turn one observation vector back into a readable dict (seats relative to the viewer).

    >>> from spoilfive_env.core import SpoilFiveCore
    >>> core = SpoilFiveCore(1, seed=3)
    >>> view = decode_observation(core.observe()[0])
    >>> view["num_players"], len(view["hand"]), view["phase"]
    (4, 5, 'play')
    """
    vec = as_float32(observation, "an observation")
    if vec.shape != (OBS_DIM,):
        raise ValueError(f"an observation has shape ({OBS_DIM},), got {vec.shape}")

    def block(name):
        return vec[SLICES[name]]

    def cards(values):
        return [card_str(int(c)) for c in np.flatnonzero(values > 0.5)]

    def seat(name):
        hot = np.flatnonzero(block(name) > 0.5)
        return int(hot[0]) if len(hot) else None

    def one_card(name):
        found = cards(block(name))
        return found[0] if found else None

    table = np.flatnonzero(block("table_size") > 0.5)
    if len(table) != 1:
        raise ValueError("not a Spoil Five observation: the table_size block is not one-hot")
    n = int(table[0]) + MIN_PLAYERS
    played = block("played").reshape(MAX_PLAYERS, NUM_CARDS)
    voids = block("voids").reshape(MAX_PLAYERS, 5)
    trick_cards = set(cards(block("trick_cards")))
    trick = [(s, c) for s in range(n) for c in cards(played[s]) if c in trick_cards]
    leader = seat("leader")
    trick.sort(key=lambda item: (item[0] - leader) % n if leader is not None else item[0])
    place = block("hand_place")
    return {
        "num_players": n,
        "hand": cards(block("hand")),
        "own_discard": one_card("own_discard"),
        "turnup": one_card("turnup"),
        "trump": SUIT_NAMES[int(np.argmax(block("trump")))],
        "played": [cards(played[s]) for s in range(n)],
        "trick": trick,
        "led_card": one_card("led_card"),
        "tricks_won": [int(round(x * TRICKS_TO_WIN)) for x in block("tricks_won")[:n]],
        "to_act": seat("to_act"),
        "leader": leader,
        "dealer": seat("dealer"),
        "robber": seat("robber"),
        "declined": seat("declined"),
        "voids": [[EFFECTIVE_SUIT_NAMES[v] for v in np.flatnonzero(voids[s] > 0.5)] for s in range(n)],
        "jinker": seat("jinker"),
        "own_concealed": bool(block("own_concealed")[0] > 0.5),
        "phase": PHASE_NAMES[int(np.argmax(block("phase")))],
        "trick_number": int(np.argmax(block("trick_number"))),
        "teammates": [int(s) for s in np.flatnonzero(block("teammates") > 0.5)],
        "pool": int(round(float(block("pool")[0]) * CHIP_SCALE)),
        "chips": [int(round(x * CHIP_SCALE)) for x in block("chips")[:n]],
        "hands_completed_fraction": float(place[0]),
        "past_num_hands": bool(place[1] > 0.5),
        "game_mode": bool(place[2] > 0.5),
    }
