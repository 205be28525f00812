"""The vectorised Spoil Five rules core: a batch of ``B`` independent games as NumPy arrays.

Every game sits at its own point (robbing, playing, the jink choice, finished). The core
gives the player to act, the legal mask ``(B, 107)``, the observation of any seat, and
applies one action per game. No Python loop runs over games; loops over seats and tricks
do. Card strength comes from the lookup tables of :mod:`spoilfive_env.cards`. The methods here
define the rules; with Numba installed the four hot paths (the legal mask, the play of a card,
the settling of a hand, the laying out of a deal) run as the same loops compiled
(:mod:`spoilfive_env.core_kernel`; ``SPOILFIVE_CORE=auto|numba|numpy`` chooses).

>>> import numpy as np
>>> from spoilfive_env.core import SpoilFiveCore
>>> core = SpoilFiveCore(8, rules=Rules(num_players=4), seed=0)
>>> rng = np.random.default_rng(0)
>>> mask = core.legal_mask()
>>> actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
>>> rewards, done = core.step(actions)
>>> rewards.shape, done.shape
((8, 4), (8,))

State (``B`` games, ``n`` seats; ``-1`` means "none" in every seat or card field):

====================  ============  ==================================================
field                 shape, dtype  coding
====================  ============  ==================================================
``holder``            (B, 52) i8    seat holding the card in hand, -1 if not in a hand
``played_by``         (B, 52) i8    seat that played the card this hand, -1 if unplayed
``trick_cards``       (B, 10) i8    cards of the current trick by position from leader
``trick_pos``         (B,) i8       cards played to the current trick
``led_card``          (B,) i8       first card of the current trick, -1 before the lead
``leader``            (B,) i8       seat that leads / led the current trick
``current``           (B,) i8       seat to act
``phase``             (B,) i8       ROB, PLAY, JINK or DONE
``tricks_won``        (B, n) i8     tricks taken this hand by seat
``trick_number``      (B,) i8       tricks completed this hand
``trump``             (B,) i8       trump suit, from the turn-up
``turnup``            (B,) i8       the turned-up card
``dealer``            (B,) i8       seat that dealt this hand
``effective_suit``    (B, 52) i8    EFFECTIVE_SUIT[trump]: 0-3 plain suit, 4 trump
``strength``          (B, 52) i8    STRENGTH[trump], with a concealed ace demoted
``privileged``        (B, 52) bool  PRIVILEGED[trump], minus a concealed ace of hearts
``rob_seat``          (B,) i8       seat entitled to rob: dealer on an ace turn-up, else
                                    the holder of the ace of trumps; -1 if nobody
``rob_pending``       (B,) bool     that seat has not yet robbed, declined or concealed
``robber``            (B,) i8       seat that robbed (public), -1 if nobody
``declined_by``       (B,) i8       seat that declined to rob (public), -1 if nobody
``discard``           (B,) i8       the robber's discard (hidden from every seat)
``concealed``         (B,) bool     the ace holder played without announcing
``jinker``            (B,) i8       seat playing on for all five, -1 if none
``void``              (B, n, 5) b   seat has shown it holds no card of effective suit
``chips``             (B, n) i32    chips by seat
``pool``              (B,) i32      chips in the pool
``hand_index``        (B,) i16      hands completed in the current game
``spoiled_last``      (B,) bool     the previous hand was spoiled (spoil ante due)
====================  ============  ==================================================

Scoring: when a hand ends the step returns each seat's reward, either ``"chips"`` (the
chip change in the hand, antes included) or ``"equity"`` (the change in
``chips + pool / n``). ``mode="hand"``: each hand is an episode. ``mode="game"``: the core
deals the next hand itself and an episode ends when the game does.

Finished games (phase DONE) keep their final state until :meth:`SpoilFiveCore.reset`
restarts them; their mask row is all True (so a masked softmax never sees an empty row)
and :meth:`SpoilFiveCore.step` ignores their actions.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from typing import NamedTuple

import numpy as np

from . import actions as A
from .backends import LazyBackend
from .cards import (
    ACE,
    ACE_OF_TRUMPS,
    CONCEALED_ACE_STRENGTH,
    EFFECTIVE_SUIT,
    HAND_SIZE,
    MAX_PLAYERS,
    NUM_CARDS,
    NUM_RANKS,
    NUM_TRICKS,
    PRIVILEGED,
    STRENGTH,
    TRICKS_TO_WIN,
    TRUMP,
    card_str,
)
from .observation import OBS_DIM, build_observation
from .phases import PHASE_DONE, PHASE_JINK, PHASE_NAMES, PHASE_PLAY, PHASE_ROB  # noqa: F401 (re-exported)
from .rules import Rules, check_chip_headroom, is_integer

MODES = ("hand", "game")
REWARDS = ("equity", "chips")
NUM_PHASES = len(PHASE_NAMES)
NUM_EFFECTIVE_SUITS = 5

# Kinds of action, looked up from the action id in one gather.
_PLAY, _ROB, _DECLINE, _CLAIM, _JINK, _IGNORED = range(6)
_ACTION_KIND = np.full(A.NUM_ACTIONS, _PLAY, np.intp)
_ACTION_KIND[A.ROB_FIRST: A.DECLINE_ROB] = _ROB
_ACTION_KIND[A.DECLINE_ROB] = _DECLINE
_ACTION_KIND[A.CLAIM] = _CLAIM
_ACTION_KIND[A.JINK] = _JINK

# Fields copied by :meth:`SpoilFiveCore.subset` and compared by tests.
STATE_FIELDS = (
    "holder", "played_by", "trick_cards", "trick_pos", "led_card", "leader", "current",
    "phase", "tricks_won", "trick_number", "trump", "turnup", "dealer", "effective_suit",
    "strength", "privileged", "rob_seat", "rob_pending", "robber", "declined_by", "discard",
    "concealed", "jinker", "void", "chips", "pool", "hand_index", "spoiled_last",
    "chips_at_hand_start", "pool_at_hand_start", "game_over", "last_winner",
    "last_tricks", "last_jinker", "last_jink_won",
)


class CoreKernels(NamedTuple):
    """The core's hot paths, each called with the core first: :class:`SpoilFiveCore`'s NumPy methods (the
    definition) or the same from :mod:`spoilfive_env.core_kernel`'s compiled loops, as ``SPOILFIVE_CORE`` chooses."""

    legal_mask: Callable
    apply_play: Callable
    settle_hands: Callable
    lay_out_deal: Callable


class SpoilFiveCore:
    """A batch of ``batch_size`` Spoil Five games stepped together.

    Args:
        batch_size: number of independent games ``B``.
        rules: the :class:`~spoilfive_env.rules.Rules` of every game in the batch.
        mode: ``"hand"`` (an episode is one hand) or ``"game"`` (a whole game).
        reward: ``"equity"`` or ``"chips"`` (docs/rules.md, "Rewards").
        seed: seed of the core's own ``np.random.Generator``; or pass ``rng``.
        rng: an explicit generator for deals and first dealers.
        deal: when False, leave the batch unset; call :meth:`reset` with a deal.
    """

    def __init__(self, batch_size: int, *, rules: Rules | None = None, mode: str = "hand",
                 reward: str = "equity", seed: int | None = None,
                 rng: np.random.Generator | None = None, deal: bool = True):
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size={batch_size!r} is not allowed: it must be a positive integer")
        if not isinstance(mode, str) or mode not in MODES:  # (an array "in" a tuple compares elementwise)
            raise ValueError(f"mode={mode!r} is not allowed: choose one of {', '.join(MODES)}")
        if not isinstance(reward, str) or reward not in REWARDS:
            raise ValueError(f"reward={reward!r} is not allowed: choose one of {', '.join(REWARDS)}")
        if not isinstance(deal, (bool, np.bool_)):
            raise ValueError(f"deal={deal!r} is not allowed: give True (deal hands now) or False (reset() deals)")
        if rules is None:
            rules = Rules()
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a spoilfive_env.rules.Rules, got {type(rules).__name__}")
        check_fits_in_memory(int(batch_size), rules.num_players)
        if seed is not None and rng is not None:
            raise ValueError("give either seed or rng, not both")
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        if rng is None:
            rng = make_generator(seed)
        # The hot paths, compiled or NumPy (SPOILFIVE_CORE, chosen once a process): a bad value is refused here,
        # before anything is made.
        self._kernels: CoreKernels = _backend.function()
        self.rules = rules
        self.mode = mode
        self.reward_mode = reward
        self.batch_size = B = int(batch_size)
        self.num_players = n = rules.num_players
        self.rng = rng
        self._all = np.arange(B)
        self._seats = np.arange(n, dtype=np.int8)
        self._side_of_seat = rules.sides().astype(np.int8)
        self._next_seat = np.roll(self._seats, -1)  # seat to the left: one gather, no modulo

        i8 = np.int8
        self.holder = np.full((B, NUM_CARDS), -1, i8)
        self.played_by = np.full((B, NUM_CARDS), -1, i8)
        self.trick_cards = np.full((B, MAX_PLAYERS), -1, i8)
        self.trick_pos = np.zeros(B, i8)
        self.led_card = np.full(B, -1, i8)
        self.leader = np.zeros(B, i8)
        self.current = np.zeros(B, i8)
        self.phase = np.full(B, PHASE_DONE, i8)
        self.tricks_won = np.zeros((B, n), i8)
        self.trick_number = np.zeros(B, i8)
        self.trump = np.zeros(B, i8)
        self.turnup = np.full(B, -1, i8)
        self.dealer = np.zeros(B, i8)
        self.effective_suit = np.zeros((B, NUM_CARDS), i8)
        self.strength = np.zeros((B, NUM_CARDS), i8)
        self.privileged = np.zeros((B, NUM_CARDS), bool)
        self.rob_seat = np.full(B, -1, i8)
        self.rob_pending = np.zeros(B, bool)
        self.robber = np.full(B, -1, i8)
        self.declined_by = np.full(B, -1, i8)
        self.discard = np.full(B, -1, i8)
        self.concealed = np.zeros(B, bool)
        self.jinker = np.full(B, -1, i8)
        self.void = np.zeros((B, n, NUM_EFFECTIVE_SUITS), bool)
        self.chips = np.full((B, n), rules.starting_chips, np.int32)
        self.pool = np.zeros(B, np.int32)
        self.hand_index = np.zeros(B, np.int16)
        self.spoiled_last = np.zeros(B, bool)
        self.chips_at_hand_start = self.chips.copy()
        self.pool_at_hand_start = np.zeros(B, np.int32)
        self.game_over = np.zeros(B, bool)
        # Outcome of each game's most recent finished hand, for statistics.
        self.last_winner = np.full(B, -1, i8)  # seat (team in partnerships), -1 spoiled
        self.last_tricks = np.zeros((B, n), i8)
        self.last_jinker = np.full(B, -1, i8)
        self.last_jink_won = np.zeros(B, bool)
        self._mask_cache: np.ndarray | None = None
        if deal:
            self.reset()

    # ------------------------------------------------------------------ public API
    @property
    def current_player(self) -> np.ndarray:
        """Seat to act in every game, shape ``(B,)`` (a copy)."""
        return self.current.astype(np.int64)

    @property
    def done(self) -> np.ndarray:
        """Games whose episode has ended and wait for :meth:`reset`."""
        return self.phase == PHASE_DONE

    def game_winners(self, game: int) -> list[int]:
        """The seats with the most chips in ``game``: its winners once a game (``mode="game"``) is
        over (RULES.md: most chips wins; a tie names every tied seat)."""
        chips = self.chips[self._game(game)]
        return np.flatnonzero(chips == chips.max()).tolist()

    def _game(self, game) -> int:
        """``game`` as an index into this batch, or a ``ValueError`` saying what is allowed."""
        if not is_integer(game) or not 0 <= game < self.batch_size:
            raise ValueError(f"game must be an index 0-{self.batch_size - 1}, got {game!r}")
        return int(game)

    @property
    def obs_dim(self) -> int:
        return OBS_DIM

    def reset(self, where: np.ndarray | None = None, *, hands=None, turnups=None, dealers=None,
              pools=None, chips=None, seed: int | None = None) -> None:
        """Start new episodes in the games ``where`` selects (all if None).

        Args:
            where: a bool mask ``(B,)``, or integer game indices (each at most once).
            hands: ``(k, n, 5)`` card indices injecting the deal of the ``k`` selected games
                (with ``turnups`` ``(k,)``); otherwise the core's generator deals.
            turnups: ``(k,)`` card indices, with ``hands``.
            dealers: ``(k,)`` seats (or one for all); otherwise drawn from the generator.
            pools: ``(k,)`` chips carried over from a spoiled hand (so the spoil ante is paid).
            chips: ``(k, n)`` the players' chips before this hand's antes.
            seed: reseed the core's generator (after every argument has been checked).

        Every value must be an integer (NumPy integers welcome; floats and bools are refused),
        and chips and pools must leave room for the game's hands in the engine's 32-bit counters
        (:func:`~spoilfive_env.rules.check_chip_headroom`).

        Raises:
            ValueError: naming the bad value and what is allowed; then nothing has changed,
                the generator included.
        """
        idx = self._indices(where)
        k = len(idx)
        n = self.num_players
        if hands is not None or turnups is not None:
            if hands is None or turnups is None:
                raise ValueError("an injected deal needs both hands and turnups")
            hands, turnups = validate_deal(hands, turnups, n, k)
        if dealers is not None:
            dealers = self._per_game("dealers", dealers, k, 0, n)
        if pools is not None:
            pools = self._per_game("pools", pools, k, 0, None)
        if chips is not None:
            chips = np.asarray(chips)
            if chips.dtype.kind not in "iu" or chips.shape != (k, n):
                raise ValueError(f"chips must be whole numbers of chips, shape ({k}, {n}) (games, seats), "
                                 f"got {_describe_array(chips)}")
        if chips is not None or pools is not None:
            hands_ahead = self.rules.max_hands if self.mode == "game" else 1
            check_chip_headroom(self.rules, hands_ahead, chips if chips is not None else
                                np.full((k, n), self.rules.starting_chips), pools if pools is not None else [])
        rng = make_generator(seed) if seed is not None else None
        # Everything is checked: from here on nothing can fail.
        if rng is not None:
            self.rng = rng
        if k == 0:
            return
        if dealers is None:
            dealers = self.rng.integers(0, n, size=k)
        if pools is None:
            pools = np.zeros(k, np.int64)
        self._mask_cache = None
        self.chips[idx] = self.rules.starting_chips if chips is None else chips
        self.pool[idx] = pools
        self.spoiled_last[idx] = pools > 0
        self.hand_index[idx] = 0
        self.game_over[idx] = False
        self._deal(idx, dealers.astype(np.int8), hands, turnups)

    def legal_mask(self) -> np.ndarray:
        """Legal actions of the player to act, ``(B, 107)`` bool (a copy)."""
        return self._legal_mask().copy()

    def observe(self, seats: np.ndarray | int | None = None, *, games=None) -> np.ndarray:
        """Observation ``(B, OBS_DIM)`` float32 of ``seats`` (default: the player to act).

        ``games``: game indices (ints, 1-D): only those games' observations ``(len(games), OBS_DIM)``,
        in that order, as ``observe(seats)[games]`` (``seats`` still one, or one per game of the batch),
        without building the others'.
        """
        if games is not None:
            games = self._game_rows(games, "games")
        if seats is None:
            seats = self.current
        else:
            given = np.asarray(seats)
            if given.dtype.kind not in "iu":
                raise ValueError(self._seats_message(_describe_array(given)))
            try:
                seats = np.broadcast_to(given, (self.batch_size,))
            except ValueError:
                raise ValueError(self._seats_message(f"shape {given.shape}")) from None
            if seats.min() < 0 or seats.max() >= self.num_players:
                raise ValueError(self._seats_message(np.unique(seats).tolist()))
            seats = seats.astype(np.int8)
        return build_observation(self, seats, games)

    def _seats_message(self, got) -> str:
        return (f"seats must be integer seats 0-{self.num_players - 1}, one or one per game "
                f"({self.batch_size},), got {got}")

    def step(self, actions, where=None) -> tuple[np.ndarray, np.ndarray]:
        """Apply one action per game. Returns ``(rewards (B, n) float32, done (B,) bool)``.

        Args:
            actions: integer action ids, shape ``(B,)``.
            where: optional bool ``(B,)``: only the selected games move; the others are left
                untouched, their actions ignored (not validated), their rewards 0 and done False.

        Actions of finished games are ignored. An illegal action in any moving unfinished game
        raises ``ValueError`` naming the game, seat, action and the legal ones, and nothing
        changes in any game. A bad ``where`` raises ``ValueError`` and changes nothing.

        >>> core = SpoilFiveCore(2, seed=1)
        >>> before = core.subset([1])
        >>> first = np.flatnonzero(core.legal_mask()[0])[0]
        >>> _ = core.step(np.array([first, -1]), where=np.array([True, False]))
        >>> all(np.array_equal(getattr(before, f)[0], getattr(core, f)[1]) for f in STATE_FIELDS)
        True
        """
        actions = np.asarray(actions)
        if actions.shape != (self.batch_size,) or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be integers of shape ({self.batch_size},), got shape "
                f"{actions.shape} dtype {actions.dtype}"
            )
        live = self.phase != PHASE_DONE
        if where is not None:
            where = np.asarray(where)
            if where.dtype != bool or where.shape != (self.batch_size,):
                raise ValueError(
                    f"where must be a bool array of shape ({self.batch_size},) selecting the games "
                    f"to move, got shape {where.shape} dtype {where.dtype}"
                )
            live = live & where
        mask = self._legal_mask()
        in_range = (actions >= 0) & (actions < A.NUM_ACTIONS)
        clipped = actions * in_range  # np.clip costs more than this on small batches
        legal = in_range & mask[self._all, clipped]
        bad = live & ~legal
        if bad.any():
            game = int(np.flatnonzero(bad)[0])
            raise ValueError(self.illegal_action_message(game, int(actions[game])))
        return self._apply_actions(actions, clipped, live)

    def _apply_actions(self, actions, clipped, live) -> tuple[np.ndarray, np.ndarray]:
        """Apply actions already checked legal; the rules part of :meth:`step`.

        ``clipped`` holds the action ids with 0 where they were out of range, ``live`` the
        games that move. The AEC environment, which checks its one action against the mask it
        already holds, calls this directly.
        """
        self._mask_cache = None
        rewards = np.zeros((self.batch_size, self.num_players), np.float32)
        episode_done = np.zeros(self.batch_size, bool)

        kind = np.where(live, _ACTION_KIND[clipped], _IGNORED)
        present = np.bincount(kind, minlength=_IGNORED + 1).tolist()
        if present[_ROB] or present[_DECLINE]:
            robbing = (kind == _ROB) | (kind == _DECLINE)
            self._apply_rob(np.flatnonzero(robbing), actions, kind == _ROB)
        if present[_PLAY] and self.rules.conceal_ace_penalty:
            concealing = (kind == _PLAY) & (self.phase == PHASE_ROB)
            if concealing.any():
                self._apply_conceal(np.flatnonzero(concealing))
        if present[_JINK]:
            g = np.flatnonzero(kind == _JINK)
            self.jinker[g] = self.current[g]
            self.phase[g] = PHASE_PLAY
        if present[_CLAIM]:
            g = np.flatnonzero(kind == _CLAIM)
            self._end_hand(g, self._side(self.current[g]), np.zeros(len(g), bool), rewards, episode_done)
        if present[_PLAY]:
            self._kernels.apply_play(self, np.flatnonzero(kind == _PLAY), actions, rewards, episode_done)
        return rewards, episode_done

    def illegal_action_message(self, game: int, action: int) -> str:
        legal = np.flatnonzero(self._legal_mask()[game])
        described = action if not 0 <= action < A.NUM_ACTIONS else f"{action} ({A.action_str(action)})"
        return (
            f"illegal action {described} for seat {int(self.current[game])} in game {game} "
            f"(phase {PHASE_NAMES[self.phase[game]]}); legal actions: "
            + ", ".join(f"{a} ({A.action_str(a)})" for a in legal)
        )

    def subset(self, indices) -> SpoilFiveCore:
        """A new core holding copies of the games at ``indices`` (repeats allowed). Its generator is
        seeded by one draw from this core's (so a seeded core's copies deal reproducibly): this core's
        later draws shift by one. :meth:`observe` with ``games`` reads rows without a copy or a draw."""
        clone = self._copy_of_rows(self._game_rows(indices, "indices"))
        clone.rng = np.random.default_rng(self.rng.integers(2**63))
        return clone

    def hand_of(self, game: int, seat: int) -> list[int]:
        """The cards ``seat`` holds in ``game``, as card ids in order."""
        if not is_integer(seat) or not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be 0-{self.num_players - 1}, got {seat!r}")
        return np.flatnonzero(self.holder[self._game(game)] == seat).tolist()

    def describe(self, game: int = 0) -> str:
        """A one-line debugging description of one game."""
        game = self._game(game)
        if self.phase[game] == PHASE_DONE and self.turnup[game] < 0:
            return "no hand dealt yet: call reset()"
        n = self.num_players
        hands = " | ".join(" ".join(card_str(c) for c in self.hand_of(game, s)) for s in range(n))
        return (f"phase={PHASE_NAMES[self.phase[game]]} current={self.current[game]} "
                f"turnup={card_str(int(self.turnup[game]))} tricks={self.tricks_won[game].tolist()} "
                f"hands: {hands}")

    # ------------------------------------------------------------------ internals
    def _copy_of_rows(self, indices: np.ndarray) -> SpoilFiveCore:
        """A core holding copies of the games at ``indices`` (checked int64), drawing nothing. What is not of
        the games (the rules, the seat tables, the generator) it shares: :meth:`subset` gives it a generator
        of its own; the NumPy observation of some games only reads it. No constructor: it would allocate
        every state field only for them to be replaced, several times the cost of the copy at small batches."""
        clone = object.__new__(SpoilFiveCore)
        clone.__dict__.update(self.__dict__)
        clone.batch_size = len(indices)
        clone._all = np.arange(len(indices))
        for name in STATE_FIELDS:
            setattr(clone, name, getattr(self, name)[indices])  # an integer index copies
        clone._mask_cache = None if self._mask_cache is None else self._mask_cache[indices]
        return clone

    def _game_rows(self, given, name: str) -> np.ndarray:
        """``given`` as int64 game indices, 1-D, each 0 to B-1, repeats allowed (``observe``'s ``games``,
        ``subset``'s ``indices``); a ``ValueError`` naming the argument ``name`` otherwise."""
        given = np.asarray(given)
        if given.ndim != 1 or (given.size and (given.dtype.kind not in "iu" or given.min() < 0
                                               or given.max() >= self.batch_size)):
            raise ValueError(f"{name} must be integer game indices 0-{self.batch_size - 1}, "
                             f"got {_describe_array(given)}")
        return given.astype(np.int64)

    def _indices(self, where) -> np.ndarray:
        """The game indices a ``where`` selects: a bool mask ``(B,)`` or distinct integer indices."""
        if where is None:
            return self._all
        where = np.asarray(where)

        def refused(got: str) -> ValueError:
            return ValueError(f"where must be a bool mask of shape ({self.batch_size},) or distinct integer "
                              f"game indices 0-{self.batch_size - 1}, got {got}")

        if where.dtype == bool:
            if where.shape != (self.batch_size,):
                raise refused(f"a bool array of shape {where.shape}")
            return np.flatnonzero(where)
        if where.size == 0:
            return np.zeros(0, np.int64)
        if where.dtype.kind not in "iu" or where.ndim > 1:
            raise refused(_describe_array(where))
        outside = (where < 0) | (where >= self.batch_size)
        if outside.any():  # named as given (before int64, where a huge unsigned index reads -1)
            raise refused(f"game indices {where[outside].reshape(-1)[:5].tolist()}")
        where = where.astype(np.int64).reshape(-1)
        ordered = np.sort(where)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        if len(repeated):  # two deals into one game would mix their cards
            raise refused(f"game {int(repeated[0])} more than once")
        return where

    @staticmethod
    def _per_game(name, values, k, low, high):
        """``values`` as ``(k,)`` integers in ``low`` to ``high - 1`` (no upper end when None)."""
        given = np.asarray(values)

        def refused(got: str) -> ValueError:
            allowed = f"{low}-{high - 1}" if high is not None else f"{low} or more"
            return ValueError(f"{name} must be integers {allowed}, one or one per selected game ({k},), got {got}")

        if given.dtype.kind not in "iu":
            raise refused(_describe_array(given))
        try:
            values = np.broadcast_to(given, (k,))
        except ValueError:
            raise refused(f"shape {given.shape}") from None
        if k and (values.min() < low or (high is not None and values.max() >= high)):
            raise refused(str(values.tolist()))
        return values

    def _side(self, seats: np.ndarray) -> np.ndarray:
        """The scoring side of seats (:meth:`Rules.sides`)."""
        return self._side_of_seat[seats]

    def _deal(self, idx, dealers, hands=None, turnups=None):
        """Deal a new hand in games ``idx``: cards, trump tables, robbing and antes."""
        n, k = self.num_players, len(idx)
        if hands is None:
            order = self.rng.random((k, NUM_CARDS)).argsort(axis=1).astype(np.int8)
            hands = order[:, : n * HAND_SIZE].reshape(k, n, HAND_SIZE)
            turnups = order[:, n * HAND_SIZE]
        self._kernels.lay_out_deal(self, idx, dealers, hands, turnups)

    def _numpy_lay_out_deal(self, idx, dealers, hands, turnups):
        """Lay out the hands ``(k, n, 5)`` and turn-ups dealt in games ``idx``, and take the antes: the
        definition (:mod:`spoilfive_env.core_kernel` compiles the same)."""
        n, k = self.num_players, len(idx)
        self.holder[idx] = -1
        self.holder[idx[:, None], hands.reshape(k, -1)] = np.repeat(self._seats, HAND_SIZE)
        self.played_by[idx] = -1
        self.trick_cards[idx] = -1
        self.trick_pos[idx] = 0
        self.led_card[idx] = -1
        self.tricks_won[idx] = 0
        self.trick_number[idx] = 0
        trump = (turnups // NUM_RANKS).astype(np.int8)
        self.trump[idx] = trump
        self.turnup[idx] = turnups
        self.dealer[idx] = dealers
        self.effective_suit[idx] = EFFECTIVE_SUIT[trump]
        self.strength[idx] = STRENGTH[trump]
        self.privileged[idx] = PRIVILEGED[trump]
        self.robber[idx] = -1
        self.declined_by[idx] = -1
        self.discard[idx] = -1
        self.concealed[idx] = False
        self.jinker[idx] = -1
        self.void[idx] = False
        eldest = ((dealers.astype(np.int16) + 1) % n).astype(np.int8)
        self.leader[idx] = eldest
        ace_turned = (turnups % NUM_RANKS) == ACE
        ace_holder = self.holder[idx, ACE_OF_TRUMPS[trump]]
        rob_seat = np.where(ace_turned, dealers, ace_holder).astype(np.int8)
        self.rob_seat[idx] = rob_seat
        self.rob_pending[idx] = rob_seat >= 0
        self.current[idx] = np.where(ace_turned, dealers, eldest)
        self.phase[idx] = np.where(ace_turned | (rob_seat == eldest), PHASE_ROB, PHASE_PLAY)
        # Antes: a carried-over pool takes the spoil ante; the dealer adds his extra.
        rules = self.rules
        self.chips_at_hand_start[idx] = self.chips[idx]
        self.pool_at_hand_start[idx] = self.pool[idx]
        ante = np.where(self.spoiled_last[idx], rules.spoil_ante, rules.ante).astype(np.int32)
        self.chips[idx] -= ante[:, None]
        self.chips[idx, dealers] -= rules.dealer_ante
        self.pool[idx] += ante * n + rules.dealer_ante

    def _legal_mask(self) -> np.ndarray:
        if self._mask_cache is None:
            self._mask_cache = self._kernels.legal_mask(self)
        return self._mask_cache

    def _numpy_legal_mask(self) -> np.ndarray:
        """The legal mask's definition (:mod:`spoilfive_env.core_kernel` compiles the same)."""
        B = self.batch_size
        mask = np.zeros((B, A.NUM_ACTIONS), bool)
        phase = self.phase
        hand = self.holder == self.current[:, None]
        # Plays: follow the led suit or trump when holding the led suit (plain lead); on a
        # trump lead a trump is due unless every trump held is privileged above the lead.
        led = self.led_card
        following = led >= 0
        privileged = self.privileged
        concealable = None
        if self.rules.conceal_ace_penalty:
            # The ace holder may play without announcing (the dealer's ace rob is not concealable),
            # and that very play is judged with the ace already demoted (docs/rules.md): a concealed
            # ace of hearts may not be held back from a trump lead.
            concealable = (phase == PHASE_ROB) & (self.turnup % NUM_RANKS != ACE)
            if concealable.any():
                ace = ACE_OF_TRUMPS[self.trump]
                privileged = privileged.copy()
                privileged[concealable, ace[concealable]] = False
        if following.any():
            led_safe = np.where(following, led, 0)
            led_suit = self.effective_suit[self._all, led_safe]
            led_strength = self.strength[self._all, led_safe]
            in_led_suit = self.effective_suit == led_suit[:, None]
            may_renege = privileged & (self.strength > led_strength[:, None])
            # any() over 13 four-card words instead of 52 bools: the reduction is the cost here.
            bound = following & (hand & in_led_suit & ~may_renege).view(np.uint32).any(axis=1)
            allowed = in_led_suit | (self.effective_suit == TRUMP)
            plays = hand & (allowed | ~bound[:, None])  # a bound player plays the suit or a trump
        else:  # every game is to lead: any card in hand
            plays = hand
        # Each phase's own columns only when some game is in it: a small batch is often in one.
        in_phase = np.bincount(phase, minlength=NUM_PHASES).tolist()
        if in_phase[PHASE_PLAY] == B:  # every game plays a card (concealing happens in ROB)
            mask[:, : A.ROB_FIRST] = plays
        else:
            play_phase = phase == PHASE_PLAY
            if concealable is not None:
                play_phase = play_phase | concealable
            mask[:, : A.ROB_FIRST] = plays & play_phase[:, None]
        if in_phase[PHASE_ROB]:
            robbing = phase == PHASE_ROB
            mask[:, A.ROB_FIRST: A.DECLINE_ROB] = hand & robbing[:, None]
            mask[:, A.DECLINE_ROB] = robbing
        if in_phase[PHASE_JINK]:
            jinking = phase == PHASE_JINK
            mask[:, A.CLAIM] = jinking
            mask[:, A.JINK] = jinking
        if in_phase[PHASE_DONE]:
            mask[phase == PHASE_DONE] = True
        return mask

    def _apply_rob(self, g, actions, is_rob):
        seat = self.current[g]
        robs = is_rob[g]
        r = g[robs]
        if len(r):
            discard = (actions[r] - A.ROB_FIRST).astype(np.int8)
            self.holder[r, discard] = -1
            self.holder[r, self.turnup[r]] = self.current[r]
            self.discard[r] = discard
            self.robber[r] = self.current[r]
        d = g[~robs]
        self.declined_by[d] = self.current[d]
        self.rob_pending[g] = False
        self.phase[g] = PHASE_PLAY
        # The dealer's rob of an ace turn-up comes before the lead: eldest then leads.
        self.current[g] = np.where(self.turnup[g] % NUM_RANKS == ACE, self.leader[g], seat)

    def _apply_conceal(self, g):
        ace = ACE_OF_TRUMPS[self.trump[g]]
        self.concealed[g] = True
        self.rob_pending[g] = False
        self.phase[g] = PHASE_PLAY
        self.strength[g, ace] = CONCEALED_ACE_STRENGTH
        self.privileged[g, ace] = False

    def _numpy_apply_play(self, g, actions, rewards, episode_done):
        """Play the cards ``actions[g]`` in games ``g``: the definition (:mod:`spoilfive_env.core_kernel`
        compiles the same)."""
        n = self.num_players
        card = actions[g].astype(np.int8)
        seat = self.current[g]
        pos = self.trick_pos[g]
        self.holder[g, card] = -1
        self.played_by[g, card] = seat
        self.trick_cards[g, pos] = card
        leading = pos == 0
        self.led_card[g[leading]] = card[leading]
        following = ~leading
        if following.any():
            self._record_voids(g[following], card[following], seat[following])
        pos = pos + 1
        self.trick_pos[g] = pos
        self.current[g] = self._next_seat.take(seat)
        complete = pos == n
        if complete.any():
            self._complete_tricks(g[complete], rewards, episode_done)
        # The ace holder's turn in trick 1 opens with the choice to rob.
        if self.rob_pending.any():
            waiting = g[~complete]
            rob_now = waiting[self.rob_pending[waiting] & (self.current[waiting] == self.rob_seat[waiting])]
            self.phase[rob_now] = PHASE_ROB

    def _record_voids(self, g, card, seat):
        """Mark the voids a following card proves, using only public information."""
        if not len(g):
            return
        led = self.led_card[g]
        led_suit = self.effective_suit[g, led]
        card_suit = self.effective_suit[g, card]
        # Plain lead: a card neither of the suit nor a trump proves the suit is void.
        plain = (led_suit != TRUMP) & (card_suit != led_suit) & (card_suit != TRUMP)
        if plain.any():
            self.void[g[plain], seat[plain], led_suit[plain]] = True
        # Trump lead answered by a plain card: void in trumps unless a privileged trump above
        # the lead could still be held back in that hand.
        plain_on_trump = (led_suit == TRUMP) & (card_suit != TRUMP)
        if plain_on_trump.any():
            t = np.flatnonzero(plain_on_trump)
            gt, st = g[t], seat[t]
            # The public tables, not the game's own: a concealed ace is known only to its holder.
            trump = self.trump[gt]
            strength = STRENGTH[trump]
            hideable = (PRIVILEGED[trump] & (strength > strength[np.arange(len(gt)), led[t]][:, None])
                        & (self.played_by[gt] == -1))
            turnup = self.turnup[gt]
            turnup_elsewhere = self.robber[gt] != st  # on the table, or in the robber's hand
            hideable[np.arange(len(gt)), turnup] &= ~turnup_elsewhere
            proven = ~hideable.any(axis=1)
            self.void[gt[proven], st[proven], TRUMP] = True

    def _complete_tricks(self, t, rewards, episode_done):
        n = self.num_players
        cards = self.trick_cards[t, :n]
        rows = t[:, None]
        suits = self.effective_suit[rows, cards]
        counts = (suits == TRUMP) | (suits == suits[:, :1])
        score = np.where(counts, self.strength[rows, cards], 0)
        winner = ((self.leader[t] + score.argmax(axis=1)) % n).astype(np.int8)
        self.tricks_won[t, winner] += 1
        trick_number = self.trick_number[t] + 1
        self.trick_number[t] = trick_number
        self.leader[t] = winner
        self.current[t] = winner
        self.trick_pos[t] = 0
        self.led_card[t] = -1
        self.trick_cards[t] = -1

        side = self._side(winner)
        if self.rules.partnerships:
            on_side = self._side_of_seat[None, :] == side[:, None]
            side_tricks = (self.tricks_won[t] * on_side).sum(axis=1)
        else:
            side_tricks = self.tricks_won[t, winner]
        jinking = self.jinker[t] >= 0
        if jinking.any():
            jink_lost = jinking & (self._side(self.jinker[t]) != side)
            jink_won = jinking & ~jink_lost & (trick_number == NUM_TRICKS)
        else:  # the common case: nobody plays on for five
            jink_lost = jink_won = jinking
        reached = ~jinking & (side_tricks == TRICKS_TO_WIN)
        offers_jink = reached & (trick_number == TRICKS_TO_WIN) & self.rules.allow_jink
        wins = reached & ~offers_jink
        remaining = NUM_TRICKS - trick_number
        if self.rules.partnerships:
            spoiled = jink_lost
        else:
            nobody_can = (self.tricks_won[t].max(axis=1) + remaining) < TRICKS_TO_WIN
            spoiled = jink_lost | (~jinking & ~reached & nobody_can)
        if offers_jink.any():
            self.phase[t[offers_jink]] = PHASE_JINK
        ends = wins | jink_won | spoiled
        if ends.any():
            winners = np.where(spoiled, -1, side)[ends]
            self._end_hand(t[ends], winners, jink_won[ends], rewards, episode_done)

    def _end_hand(self, e, winners, jink_won, rewards, episode_done):
        """Settle finished hands in games ``e`` (pool, jink bonus, rewards), then deal the next hand or finish."""
        over = self._kernels.settle_hands(self, e, winners, jink_won, rewards, episode_done)
        going_on = e[~over]
        if len(going_on):
            next_dealer = ((self.dealer[going_on].astype(np.int16) + 1) % self.num_players).astype(np.int8)
            self._deal(going_on, next_dealer)

    def _numpy_settle_hands(self, e, winners, jink_won, rewards, episode_done) -> np.ndarray:
        """Settle the hands that ended in games ``e``, finish the games that are over and say which
        (``(len(e),)`` bool): the definition (:mod:`spoilfive_env.core_kernel` compiles the same)."""
        rules, n = self.rules, self.num_players
        won = winners >= 0
        w = e[won]
        side = winners[won]
        if rules.partnerships:
            on_side = self._side_of_seat[None, :] == side[:, None]
            team_size = n // 2
            share = self.pool[w] // team_size
            self.chips[w] += on_side * share[:, None] + np.where(
                on_side, rules.jink_bonus, -rules.jink_bonus) * jink_won[won][:, None]
            self.pool[w] -= share * team_size
        else:
            self.chips[w, side] += self.pool[w]
            self.pool[w] = 0
            bonus = rules.jink_bonus * jink_won[won]
            self.chips[w] -= bonus[:, None]
            self.chips[w, side] += bonus * n
        self.spoiled_last[e] = ~won
        self.last_winner[e] = winners
        self.last_tricks[e] = self.tricks_won[e]
        self.last_jinker[e] = self.jinker[e]
        self.last_jink_won[e] = jink_won
        self.hand_index[e] += 1

        if self.mode == "game":
            hands_played = self.hand_index[e]
            capped = ~won & (hands_played >= rules.max_hands)
            c = e[capped]
            share = self.pool[c] // n
            self.chips[c] += share[:, None]
            self.pool[c] -= share * n
            over = (won & (hands_played >= rules.num_hands)) | capped
        else:
            over = np.ones(len(e), bool)

        # In int64, as a wider pool allowed once needed; the limits now hold a hand's gain to HAND_CHIPS_MAX,
        # which the float32 reward holds exactly.
        chips_change = (self.chips[e].astype(np.int64) - self.chips_at_hand_start[e]).astype(np.float32)
        if self.reward_mode == "chips":
            rewards[e] = chips_change
        else:
            # A remainder left in the pool when a game ends is paid to nobody: it no longer
            # counts as anyone's share, so a game's equity sums to its chip change.
            pool_after = np.where(over & (self.mode == "game"), 0, self.pool[e])
            pool_change = (pool_after - self.pool_at_hand_start[e]).astype(np.float32)
            rewards[e] = chips_change + pool_change[:, None] / n
        finished = e[over]
        self.phase[finished] = PHASE_DONE
        self.game_over[finished] = True
        episode_done[finished] = True
        return over


NUMPY_KERNELS = CoreKernels(SpoilFiveCore._numpy_legal_mask, SpoilFiveCore._numpy_apply_play,
                            SpoilFiveCore._numpy_settle_hands, SpoilFiveCore._numpy_lay_out_deal)
"""The definition of the core's hot paths (``SPOILFIVE_CORE=numpy``)."""

# Chosen at the first use (a deal or a mask), and kept.
_backend = LazyBackend("SPOILFIVE_CORE", NUMPY_KERNELS, "spoilfive_env.core_kernel", "CORE_KERNELS")


def core_backend() -> str:
    """``"numba"`` or ``"numpy"``: which hot paths (mask, play, settling, deal) the cores run. ``SPOILFIVE_CORE``
    chooses: ``numba`` (:mod:`spoilfive_env.core_kernel`), ``numpy`` (the methods, the definition) or ``auto``
    (numba when it imports)."""
    return _backend.name()


def validate_deal(hands, turnups, num_players: int, num_games: int):
    """Check injected deals; returns ``(hands (k, n, 5) int8, turnups (k,) int8)``."""
    try:
        hands = np.asarray(hands)
        turnups = np.asarray(turnups).reshape(-1)
    except ValueError as error:  # ragged lists
        raise ValueError(f"hands must be {num_players} lists of {HAND_SIZE} cards per game: {error}") from None
    expected = (num_games, num_players, HAND_SIZE)
    if hands.shape != expected:
        raise ValueError(f"hands must have shape {expected} (games, seats, cards), got {hands.shape}")
    if turnups.shape != (num_games,):
        raise ValueError(f"turnups must have shape ({num_games},), got {turnups.shape}")
    for name, values in (("hands", hands), ("turnups", turnups)):
        if values.dtype.kind not in "iu":
            raise ValueError(f"{name} must be integer card indices 0-51, got {_describe_array(values)}")
    cards = np.concatenate([hands.reshape(num_games, num_players * HAND_SIZE), turnups[:, None]], axis=1)
    if cards.size and (cards.min() < 0 or cards.max() >= NUM_CARDS):
        raise ValueError(f"card indices must be 0-51, got {cards[(cards < 0) | (cards >= NUM_CARDS)][:5].tolist()}")
    sorted_cards = np.sort(cards, axis=1)
    repeated = (sorted_cards[:, 1:] == sorted_cards[:, :-1])
    if repeated.any():
        game = int(np.flatnonzero(repeated.any(axis=1))[0])
        dup = np.unique(sorted_cards[game, 1:][repeated[game]])  # each repeated card named once
        which = "the deal" if num_games == 1 else f"deal {game}"
        raise ValueError(f"{which} uses a card more than once: {', '.join(card_str(int(c)) for c in dup)}")
    return hands.astype(np.int8), turnups.astype(np.int8)


# State bytes per game, excluding the per-seat fields, and per seat (the dtypes set in __init__);
# an observation call adds OBS_DIM float32 a game.
_STATE_BYTES_PER_GAME = 6 * NUM_CARDS + MAX_PLAYERS + 64
_STATE_BYTES_PER_SEAT = 6 + 4 * 3 + 8


@cache  # asked at every core construction, and subset() builds many
def physical_memory() -> int | None:
    """Bytes of RAM of this machine, None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


def check_fits_in_memory(batch_size: int, num_players: int, name: str = "batch_size",
                         bytes_per_game: int | None = None) -> None:
    """Refuse a batch whose state and one observation would not fit in this machine's RAM
    (rather than a MemoryError or the kernel killing the process half-way through); ``name`` is
    what the caller calls the batch size (a command's flag, say). ``bytes_per_game``: what a
    caller above the core (an env, with its own buffers) measured a game to use, instead."""
    per_game = _STATE_BYTES_PER_GAME + _STATE_BYTES_PER_SEAT * num_players + 4 * OBS_DIM
    needs = "its state and one observation need"
    if bytes_per_game is not None:
        per_game, needs = int(bytes_per_game), "its games need"
    memory = physical_memory()
    if memory is not None and batch_size * per_game > memory:
        named = f"{name} {batch_size} games" if " " in name else f"{name}={batch_size}"
        raise ValueError(f"{named} is not allowed here: {needs} "
                         f"about {batch_size * per_game / 2**30:.1f} GiB, more than this machine's "
                         f"{memory / 2**30:.1f} GiB; allowed: at most {memory // per_game} games "
                         f"({per_game} bytes a game)")


def checked_seed(seed) -> int | None:
    """``seed`` as a Python int, or None; anything else refused, in the one wording every layer uses."""
    if seed is not None and not (is_integer(seed) and seed >= 0):
        raise ValueError(f"seed must be a whole number 0 or more, or None, got {seed!r}")
    return None if seed is None else int(seed)


def make_generator(seed) -> np.random.Generator:
    """A fresh ``np.random.Generator`` from ``seed`` (None: fresh entropy; else a whole number >= 0)."""
    return np.random.default_rng(checked_seed(seed))


def _describe_array(values: np.ndarray) -> str:
    """A short description of a refused array for an error message: dtype, shape, first values."""
    shown = values.reshape(-1)[:6].tolist()
    return f"{values.dtype} values of shape {values.shape}: {shown}{' ...' if values.size > 6 else ''}"
