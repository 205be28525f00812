"""``SpoilFiveVectorEnv``: a ``gymnasium.vector.VectorEnv`` of ``num_envs`` games in one core batch.

``gymnasium.make_vec("spoilfive/SpoilFive-v0", num_envs=B, vectorization_mode="vector_entry_point", ...)``
takes the arguments of the single-seat env (:mod:`spoilfive_integrations.gymnasium_env`) and
returns this class. Every game has one learning seat; between the learner's decisions the
opponents move in batch: each distinct opponent agent is asked once per round on the rows where
one of its seats is to act (:func:`agents.base.actions_in_core`: ``act_batch``'s moves, which
``greedy``, ``spoiler`` and ``random`` give without building observations), and the core steps only those rows
(``core.step(actions, where=rows)``). No Python loop runs over games.

=======================  ====================================================================
id                       ``"spoilfive/SpoilFive-v0"`` (``vector_entry_point``)
single observation       ``Box(OBS_DIM,) float32``: the learning seat's observation
observation              ``Box((num_envs, OBS_DIM)) float32``
single action            ``Discrete(107)`` (:mod:`spoilfive_env.actions`)
action                   ``MultiDiscrete([107] * num_envs)``
rewards ``(B,)``         the learning seat's reward (``reward="equity"`` or ``"chips"``),
                         summed over the opponents' moves that follow its action
infos                    ``"action_mask"`` ``(B, 107)`` int8, ``"seat"`` ``(B,)`` (each with the
                         ``"_action_mask"``/``"_seat"`` presence arrays of Gymnasium's vector infos),
                         ``"penalty"`` ``(B,)`` bool under ``illegal_action="penalty"``
``action_masks()``       ``(B, 107)`` bool (sb3-contrib's convention)
autoreset                ``autoreset_mode``, Gymnasium's three (default ``AutoresetMode.NEXT_STEP``):
                         ``NEXT_STEP``: a game whose episode ended is restarted by the next
                         ``step``, which ignores its action and returns reward 0, terminated
                         False and the first observation of the new episode;
                         ``SAME_STEP``: the step that ends it restarts it and returns the new
                         episode's first observation, the final one in ``infos["final_obs"]``
                         (and ``infos["final_info"]``, which holds its ``"penalty"``: the
                         rest of ``infos`` is the new episode's);
                         ``DISABLED``: it waits for ``reset(options={"reset_mask": mask})``, and
                         a ``step`` before that is refused. ``reset_mask`` restarts only the
                         games it marks, in every mode
truncation               never: a hand ends within five tricks, a game within ``max_hands``
opponent error           an opponent that raises when asked (or breaks its contract) stops the
                         step half-way: its error propagates, and every later ``step`` raises
                         ``ValueError`` until ``reset()``
=======================  ====================================================================

A row waiting for its autoreset has an all-ones mask (any action; it is ignored), the core's
convention for a finished game, so that a masked softmax over it stays finite.

>>> import numpy as np
>>> envs = SpoilFiveVectorEnv(num_envs=8, opponents="random", seat=0)
>>> observations, infos = envs.reset(seed=0)
>>> from spoilfive_env import OBS_DIM
>>> observations.shape == (8, OBS_DIM), infos["action_mask"].shape
(True, (8, 107))
>>> rng = np.random.default_rng(0)
>>> actions = np.argmax(rng.random((8, 107)) * envs.action_masks(), axis=1)
>>> observations, rewards, terminated, truncated, infos = envs.step(actions)
>>> rewards.shape, terminated.dtype
((8,), dtype('bool'))

Version history: v0, the first release.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from agents.base import stream_seed
from spoilfive_env.actions import NUM_ACTIONS, action_array, action_str, allowed
from spoilfive_env.core import PHASE_DONE, SpoilFiveCore, check_fits_in_memory, checked_seed
from spoilfive_env.env import render_table
from spoilfive_env.observation import observation_bounds
from spoilfive_env.rules import Rules, is_integer, table_rules

from .opponents import resolve_opponents

ILLEGAL_ACTION_MODES = ("raise", "penalty")
_CORE_STREAM = 0xC02E
_NEW_OPPONENTS_STREAM = 0x5E7
VECTOR_MEMORY = (22_000, 150)
"""Bytes a game and bytes a seat that :class:`SpoilFiveVectorEnv` really uses at its peak: the core's
state, its buffers and each step's temporaries, several times the core's own estimate. Measured as
peak resident memory (``ru_maxrss``) over construction, a seeded reset and 20 steps of random legal
actions, 16,384 games against the default ``"spoiler"`` opponents at 2 and 10 players (21,577 and
22,605 bytes a game), rounded up."""


def check_env_fits_in_memory(num_games: int, num_players: int, name: str,
                             memory: tuple[int, int] = VECTOR_MEMORY) -> None:
    """Refuse ``num_games`` games of an env that uses ``memory`` (its measured ``(bytes a game, bytes a
    seat)``) when they would not fit in this machine's memory; ``name`` is what the caller calls the
    number (``"num_envs"``, a command's ``"--num-envs"``)."""
    check_fits_in_memory(num_games, num_players, name=name, bytes_per_game=memory[0] + memory[1] * num_players)


def own_keywords(env_class) -> list[str]:
    """The named arguments of ``env_class``'s constructor, the ones that are not rules options."""
    parameters = list(inspect.signature(env_class.__init__).parameters.values())[1:]
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def check_env_keywords(options: Mapping, env_name: str, own, hints: Mapping | None = None) -> None:
    """Refuse a keyword that is neither a rules option nor one of the env's ``own``, naming both kinds
    (``make_rules`` alone would list only the rules options); ``hints``: a sentence for a keyword that
    belongs elsewhere (``seed`` goes to ``reset``)."""
    for key, hint in (hints or {}).items():
        if key in options:
            raise ValueError(f"{key} is not an option of {env_name}: {hint}")
    rules_options = Rules.option_names()
    unknown = sorted(map(str, set(options) - {*rules_options, "preset"}))
    if unknown:
        raise ValueError(f"unknown rules option(s) {', '.join(unknown)}: known options are {env_name}'s own "
                         f"{', '.join(own)} and the rules options "
                         f"{', '.join(name for name in rules_options if name not in own)} and preset")


def single_observation_space() -> spaces.Box:
    """``Box(OBS_DIM,) float32`` with the AEC env's bounds."""
    low, high = observation_bounds()
    return spaces.Box(low=low, high=high, dtype=np.float32)


def core_seed(seed: int) -> int:
    """Seed of the core's deals for an env seeded with ``seed`` (independent of seats and opponents)."""
    return int(np.random.SeedSequence([int(seed), _CORE_STREAM]).generate_state(1)[0])


def not_legal(core: SpoilFiveCore, actions: np.ndarray) -> np.ndarray:
    """Bool ``(B,)``: which of ``actions`` (int ``(B,)``, one per game) are not legal now, out of range included."""
    return ~allowed(core.legal_mask(), actions)


def forfeit_rewards(core: SpoilFiveCore, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """The reward of ``seats`` forfeiting their interest in the pool in ``games`` (the seeds' penalty, docs/rules.md).

    The hand is scored as if it ended now with nothing of the pool his: under ``"chips"``
    his chip change in the hand (his antes), under ``"equity"`` that minus his even share
    of the pool as the hand began. Either way it is what losing the hand to another player
    would give him, and negative whenever he has paid an ante or the pool held chips.
    """
    chips_change = core.chips[games, seats] - core.chips_at_hand_start[games, seats]
    if core.reward_mode == "chips":
        return chips_change.astype(np.float64)
    return chips_change - core.pool_at_hand_start[games] / core.rules.num_players


class LearnerBatch:
    """``B`` games, one learning seat each, the opponents moving in batch between its decisions.

    The one implementation behind both the single-seat env (``B = 1``) and the vector env.

    Args:
        num_envs: number of games ``B`` (1 or more).
        num_players: 2 to 10.
        opponents: see :mod:`spoilfive_integrations.opponents`.
        seat: the learning seat, or None to draw it at each episode start.
        illegal_action: ``"raise"`` or ``"penalty"``.
        memory: the env's ``(bytes a game, bytes a seat of a game)``, measured, for the check that
            ``num_envs`` games fit in this machine's memory.
        num_envs_name: what the caller's users call ``num_envs``, in its refusals (RLlib's ``env_config`` says
            ``num_games``).
        mode, reward, **rules: as :func:`spoilfive_env.env` takes them.

    After an opponent's move fails (it raises when asked, or breaks its contract) the games are
    half-stepped: :attr:`failure` says why, and :meth:`check_playable` refuses every step until a
    start of every game (a reset) clears it.
    """

    def __init__(self, num_envs: int = 1, *, num_players: int = 4, opponents="spoiler", seat: int | None = None,
                 illegal_action: str = "raise", mode: str = "hand", reward: str = "equity",
                 memory: tuple[int, int] = VECTOR_MEMORY, num_envs_name: str = "num_envs", **rules):
        if not is_integer(num_envs) or num_envs < 1:
            raise ValueError(f"{num_envs_name}={num_envs!r} is not allowed: it must be an integer, 1 or more")
        if not isinstance(illegal_action, str) or illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action={illegal_action!r} is not allowed: choose 'raise' or 'penalty'")
        self.rules = table_rules(num_players, **rules)
        n = self.rules.num_players
        if seat is not None and not (is_integer(seat) and 0 <= seat < n):
            raise ValueError(f"seat={seat!r} is not allowed: give a seat 0-{n - 1}, or None to draw it at each reset")
        self.fixed_seat = None if seat is None else int(seat)
        self.illegal_action = illegal_action
        self.num_envs = B = int(num_envs)
        check_env_fits_in_memory(B, n, num_envs_name, memory)
        self.core = SpoilFiveCore(B, rules=self.rules, mode=mode, reward=reward, deal=False)
        self.lineup = resolve_opponents(opponents, self.rules)
        self.seat = np.zeros(B, np.int8)
        self.over = np.ones(B, bool)  # episode ended (or never started): nothing to decide
        self.failure: str | None = None  # why the last step stopped half-way, until every game restarts
        self._all = np.arange(B)
        self._seed: int | None = None  # the last seed, whose streams new opponents made from names draw from
        self._lineups_seated = 0

    @property
    def num_players(self) -> int:
        return self.rules.num_players

    def seed(self, seed: int) -> None:
        """Restart the deals and every opponent's random stream from ``seed`` (the opponents first:
        a reseed that fails leaves the deals' generator as it was)."""
        self.lineup.reseed(seed)
        self.core.rng = np.random.default_rng(core_seed(seed))
        self._seed, self._lineups_seated = int(seed), 0

    def set_opponents(self, opponents) -> None:
        """Seat new opponents (any ``opponents`` spec) from the next decision on, in every game.

        After a seed, the agents made from names or paths draw from a stream of that seed (the k-th new lineup
        since it, a stream of its own), so a seeded run that changes its opponents repeats; agent objects keep
        their own generators. A spec that does not load is refused, and the opponents stay."""
        lineup = resolve_opponents(opponents, self.rules)
        if self._seed is not None:
            lineup.reseed(stream_seed(self._seed, _NEW_OPPONENTS_STREAM, self._lineups_seated + 1), named_only=True)
            self._lineups_seated += 1
        self.lineup = lineup

    def start(self, where: np.ndarray, seat_rng: np.random.Generator, *, play: bool = True, **deal) -> None:
        """New episodes in the games ``where`` (bool ``(B,)``): seats, deals, and (``play``) the
        opponents' moves up to the learner's first decision. ``deal``: :meth:`SpoilFiveCore.reset`'s
        injected deal (a bad one raises before anything changes)."""
        rows = np.flatnonzero(where)
        self.core.reset(rows, **deal)
        if where.all():
            self.failure = None  # every game starts afresh
        if self.fixed_seat is None:
            self.seat[rows] = seat_rng.integers(0, self.num_players, size=len(rows))
        else:
            self.seat[rows] = self.fixed_seat
        self.over[rows] = False
        if play:
            self.play_opponents(where)

    def check_playable(self) -> None:
        """A ``ValueError`` if the last step failed half-way, in an opponent's move: the learner's move was
        made and an opponent is to act, so the next action would be played in the wrong seat."""
        if self.failure is not None:
            raise ValueError(f"the last step failed in the move of {self.failure}, leaving the games half-stepped: "
                             "call reset() to start new episodes")

    def check_actions(self, actions) -> np.ndarray:
        """The learners' ``actions`` as int64 ``(B,)``; a ``ValueError`` unless they are integers of that shape."""
        return action_array(actions, (self.num_envs,))

    def illegal(self, actions: np.ndarray, where: np.ndarray, *, name_game: bool = True) -> np.ndarray:
        """Bool ``(B,)``: the learner's ``actions`` (int ``(B,)``) that are not legal in the games ``where``.

        Under ``illegal_action="raise"`` a ``ValueError`` for the first such game instead (naming
        the game when ``name_game``), before anything changes.
        """
        illegal = where & not_legal(self.core, actions)
        if self.illegal_action == "raise" and illegal.any():
            game = int(np.flatnonzero(illegal)[0])
            raise ValueError(self._illegal_message(game, int(actions[game]), f" in game {game}" if name_game else ""))
        return illegal

    def _illegal_message(self, game: int, action: int, where: str) -> str:
        described = f"{action} ({action_str(action)})" if 0 <= action < NUM_ACTIONS else f"{action}"
        return (f"illegal action {described} for the learning seat {int(self.seat[game])}{where}; legal actions: "
                + self.legal_actions_text(game))

    def legal_actions_text(self, game: int) -> str:
        """The learner's legal actions in ``game``, as ``"23 (play JD), 38 (play KH), ..."``."""
        return ", ".join(f"{a} ({action_str(a)})" for a in np.flatnonzero(self.core.legal_mask()[game]))

    def learner_step(self, actions: np.ndarray, acting: np.ndarray, penalized: np.ndarray):
        """Apply the learner's legal ``actions`` in ``acting`` games and end ``penalized`` ones.

        Returns ``(rewards (B,) float64, terminated (B,) bool)``; the opponents are not moved yet.
        """
        rewards = np.zeros(self.num_envs, np.float64)
        if acting.any():
            step_rewards, _ = self.core.step(actions, where=acting)
            rewards += step_rewards[self._all, self.seat]
        if penalized.any():
            rows = np.flatnonzero(penalized)
            rewards[rows] = forfeit_rewards(self.core, rows, self.seat[rows])
        terminated = (acting & (self.core.phase == PHASE_DONE)) | penalized
        self.over |= terminated
        return rewards, terminated

    def step_games(self, games: np.ndarray, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The learner's ``chosen`` actions in ``games`` (int arrays, one action a game, each game playing), then
        the opponents' replies there; the other games do not move.

        Returns ``(rewards (B,), terminated (B,), illegal (B,))``: the learner's rewards and episode ends in
        ``games``, and which of them were penalised (under ``illegal_action="raise"`` an illegal action is refused
        first, and nothing changes)."""
        actions = np.zeros(self.num_envs, np.int64)
        actions[games] = chosen
        where = np.zeros(self.num_envs, bool)
        where[games] = True
        illegal = self.illegal(actions, where)
        acting = where & ~illegal
        rewards, terminated = self.learner_step(actions, acting, illegal)
        rewards += self.play_opponents(acting)
        terminated |= acting & self.over
        return rewards, terminated, illegal

    def play_opponents(self, where: np.ndarray) -> np.ndarray:
        """Opponents move in the games ``where`` until the learner is to act or the episode ended.

        Returns the learner's rewards ``(B,)`` gathered meanwhile (his hand ending on their moves).
        """
        core, lineup, n = self.core, self.lineup, self.num_players
        rewards = np.zeros(self.num_envs, np.float64)
        pending = where & ~self.over & (core.phase != PHASE_DONE) & (core.current != self.seat)
        actions = np.zeros(self.num_envs, np.int64)
        while pending.any():
            masks = core.legal_mask()
            position = (core.current.astype(np.int64) - self.seat) % n
            who = lineup.agent_of_position[position]
            for index in range(len(lineup.agents)):
                rows = np.flatnonzero(pending & (who == index))
                if len(rows):
                    try:
                        actions[rows] = lineup.act(index, core, rows, masks[rows])
                    except BaseException as error:  # (Ctrl-C included: the learner's move is made either way)
                        self.failure = f"opponent {lineup.specs[index]!r} ({type(error).__name__}: {error})"
                        raise
            step_rewards, _ = core.step(actions, where=pending)
            rewards += step_rewards[self._all, self.seat]
            pending &= (core.phase != PHASE_DONE) & (core.current != self.seat)
        self.over |= where & (core.phase == PHASE_DONE)
        return rewards

    def observe(self) -> np.ndarray:
        """The learning seats' observations ``(B, OBS_DIM)`` float32."""
        return self.core.observe(self.seat)

    def masks(self, over_fill: int) -> np.ndarray:
        """The learner's legal actions ``(B, 107)`` int8; rows whose episode ended are ``over_fill``."""
        masks = self.core.legal_mask().astype(np.int8)
        masks[self.over] = over_fill
        return masks


class LearnerBatchView:
    """What an env over a :class:`LearnerBatch` (its ``batch``) shows of it: the core and the learning seats."""

    batch: LearnerBatch

    @property
    def core(self) -> SpoilFiveCore:
        """The core batch (read it; stepping it directly bypasses the opponents)."""
        return self.batch.core

    @property
    def seats(self) -> np.ndarray:
        """The learning seat of every game ``(B,)`` (a copy)."""
        return self.batch.seat.astype(np.int64)


def checked_reset(seed, options, env_name: str, takes: tuple[str, ...] = ()) -> int | None:
    """A reset's ``seed`` as a Python int (or None), after refusing a bad seed or any option but
    ``takes`` (those the caller has already taken out): Gymnasium itself takes only a Python int, and
    says so in its own error type."""
    seed = checked_seed(seed)
    if options is None or (isinstance(options, Mapping) and not options):
        return seed
    allowed = f"{env_name} takes only {', '.join(map(repr, takes))}" if takes else f"{env_name} takes none"
    if not isinstance(options, Mapping):
        raise ValueError(f"options={options!r} is not allowed: give a dict or None (reset options: {allowed})")
    raise ValueError(f"unknown reset options {', '.join(sorted(map(repr, options)))}: {allowed}")


def refuse_seed_list(seed, num_envs: int) -> None:
    """A ``ValueError`` for a list of seeds, one per game (other vector envs take one): the ``num_envs`` games of
    one core batch draw from one generator, so one int seeds them all."""
    if isinstance(seed, (list, tuple, np.ndarray)):
        raise ValueError(f"seed must be a whole number 0 or more, or None, got {seed!r}: a list of seeds, one "
                         f"per game, is not taken, since the {num_envs} games step in one core batch from "
                         "one generator; one int seeds them all and reproduces every game's deals, seats and "
                         "opponents")


def checked_autoreset_mode(autoreset_mode) -> AutoresetMode:
    """``autoreset_mode`` as an ``AutoresetMode``: the enum itself, or its value or name as text."""
    if isinstance(autoreset_mode, AutoresetMode):
        return autoreset_mode
    if isinstance(autoreset_mode, str):
        for mode in AutoresetMode:
            if autoreset_mode in (mode.value, mode.name):
                return mode
    choices = ", ".join(f"AutoresetMode.{mode.name} ({mode.value!r})" for mode in AutoresetMode)
    raise ValueError(f"autoreset_mode={autoreset_mode!r} is not allowed: choose {choices}")


def checked_reset_mask(options, num_envs: int) -> tuple[np.ndarray | None, dict | None]:
    """Split a vector reset's ``options`` into its ``reset_mask`` (bool ``(num_envs,)`` with a game
    marked, or None) and the other options, without changing the caller's dict."""
    if not isinstance(options, Mapping) or "reset_mask" not in options:
        return None, options
    rest = {key: value for key, value in options.items() if key != "reset_mask"}
    given = options["reset_mask"]
    mask = np.asarray(given) if isinstance(given, (list, tuple, np.ndarray)) else None
    if mask is None or mask.dtype != np.bool_ or mask.shape != (num_envs,):
        raise ValueError(f"options['reset_mask']={given!r} is not allowed: give a bool array of shape ({num_envs},), "
                         "True for each game to restart")
    if not mask.any():
        raise ValueError("options['reset_mask'] marks no game: mark at least one game to restart, or leave "
                         "reset_mask out to restart them all")
    return mask.copy(), rest


class SpoilFiveVectorEnv(LearnerBatchView, VectorEnv):
    """``num_envs`` Spoil Five games in one core batch, one learning seat each (see the module docstring).

    Args:
        num_envs: number of games (1 or more).
        num_players: 2 to 10.
        opponents: one agent spec for every other seat, or a list with one per other seat
            (names, checkpoint paths, agent objects; :mod:`spoilfive_integrations.opponents`).
        seat: the learning seat in every game, or None (default) to draw it for each game at
            each episode start from the env's ``np_random``.
        illegal_action: ``"raise"`` (default; ``ValueError``, nothing changes) or ``"penalty"``
            (that game's episode terminates with the penalty reward, see
            :func:`forfeit_rewards`).
        render_mode: None or ``"ansi"`` (``render()`` returns one text table per game).
        autoreset_mode: what becomes of a game whose episode ended, Gymnasium's
            ``AutoresetMode`` or its value as text: ``NEXT_STEP`` (default), ``SAME_STEP`` or
            ``DISABLED`` (see the module docstring).
        mode, reward, **rules: as :func:`spoilfive_env.env` takes them.
    """

    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, *, num_players: int = 4, opponents="spoiler", seat: int | None = None,
                 illegal_action: str = "raise", render_mode: str | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, mode: str = "hand",
                 reward: str = "equity", **rules):
        modes = self.metadata["render_modes"]
        if render_mode is not None and not (isinstance(render_mode, str) and render_mode in modes):
            raise ValueError(f"render_mode={render_mode!r} is not allowed: choose None or 'ansi'")
        self.autoreset_mode = checked_autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}  # Gymnasium reads it here
        check_env_keywords(rules, type(self).__name__, own_keywords(type(self)),
                           {"seed": "the seed goes to reset(seed=...)"})
        self.batch = LearnerBatch(num_envs, num_players=num_players, opponents=opponents, seat=seat,
                                  illegal_action=illegal_action, mode=mode, reward=reward, **rules)
        self.num_envs = self.batch.num_envs
        self.render_mode = render_mode
        self.single_observation_space = single_observation_space()
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, bool)
        self._masks = np.ones((self.num_envs, NUM_ACTIONS), np.int8)
        self._started = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new episode in every game, or only in those ``options["reset_mask"]`` marks (a bool
        array ``(num_envs,)``, as Gymnasium's vector envs take it). ``seed`` (an int) reseeds the deals,
        seats and opponents; with every game restarted it reproduces them."""
        reset_mask, options = checked_reset_mask(options, self.num_envs)
        refuse_seed_list(seed, self.num_envs)  # Gymnasium's SyncVectorEnv takes one seed per game
        seed = checked_reset(seed, options, type(self).__name__, takes=("reset_mask",))
        if reset_mask is not None:
            if not self._started:
                raise ValueError("options['reset_mask'] before the first reset(): call reset() without it to "
                                 "deal every game's first hand")
            if self.batch.failure is not None:
                raise ValueError(f"the last step failed in the move of {self.batch.failure}, leaving every game "
                                 "half-stepped: call reset() without a reset_mask to restart them all")
        if seed is not None:
            self.batch.seed(seed)  # first: an opponent's reseed may fail, and then nothing has changed
        super().reset(seed=seed)
        restarting = np.ones(self.num_envs, bool) if reset_mask is None else reset_mask
        self.batch.start(restarting, self.np_random)
        self._autoreset[restarting] = False
        self._started = True
        return self._observe(np.zeros(self.num_envs, bool))

    def step(self, actions):
        """One learner action per game; games that ended at the previous step restart instead."""
        if not self._started:
            raise ValueError("step() before reset(): call reset() to deal the first hand")
        batch = self.batch
        batch.check_playable()
        actions = batch.check_actions(actions)
        if self.autoreset_mode == AutoresetMode.DISABLED and self._autoreset.any():
            games = ", ".join(map(str, np.flatnonzero(self._autoreset)))
            raise ValueError(f"game(s) {games} ended and autoreset_mode is DISABLED: restart them with "
                             "reset(options={'reset_mask': mask}) before the next step")
        resetting = self._autoreset & (self.autoreset_mode == AutoresetMode.NEXT_STEP)
        illegal = batch.illegal(actions, ~resetting)
        acting = ~resetting & ~illegal
        rewards, terminated = batch.learner_step(actions, acting, illegal)
        if resetting.any():
            batch.start(resetting, self.np_random, play=False)  # their opponents move below, with the rest
        rewards += batch.play_opponents(acting | resetting)
        terminated |= acting & batch.over
        rewards[resetting] = 0.0
        self._autoreset = terminated.copy()
        final = None
        if self.autoreset_mode == AutoresetMode.SAME_STEP and terminated.any():
            ended = np.flatnonzero(terminated)
            # The ended games' last observations only; their masks are all ones, as a finished game's.
            final = (batch.core.observe(batch.seat, games=ended),
                     self._infos(np.ones((self.num_envs, NUM_ACTIONS), np.int8), illegal))
            batch.start(terminated, self.np_random)  # the new episodes' opponents move up to the learner
            self._autoreset[:] = False
        # A restarted game's row is its new episode's, as Gymnasium's SyncVectorEnv gives the reset's info there:
        # the penalty that ended the last one is in final_info only.
        observations, infos = self._observe(illegal if final is None else illegal & ~terminated)
        if final is not None:
            add_final(infos, final, terminated)
        return observations, rewards, terminated, np.zeros(self.num_envs, bool), infos

    def _observe(self, penalized: np.ndarray):
        self._masks = self.batch.masks(over_fill=1)
        return self.batch.observe(), self._infos(self._masks.copy(), penalized)

    def _infos(self, masks: np.ndarray, penalized: np.ndarray) -> dict:
        """A step's infos: the learners' ``masks`` and seats, and ``penalized`` in penalty mode, each with its
        presence array."""
        present = np.ones(self.num_envs, bool)
        infos = {"action_mask": masks, "_action_mask": present, "seat": self.seats, "_seat": present.copy()}
        if self.batch.illegal_action == "penalty":
            infos["penalty"] = penalized.copy()
            infos["_penalty"] = present.copy()
        return infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions ``(B, 107)`` bool; all True in a game waiting for its restart."""
        return self._masks.astype(bool)

    def render(self):
        if self.render_mode is None:
            return None
        if not self._started:
            raise ValueError("render() before reset(): call reset() to deal the first hand")
        core = self.batch.core
        return tuple(render_table(core, viewer=int(self.batch.seat[g]), game=g) for g in range(self.num_envs))


def add_final(infos: dict, final: tuple[np.ndarray, dict], ended: np.ndarray) -> None:
    """Add a same-step autoreset's ``final_obs`` and ``final_info`` for the ``ended`` games (bool ``(B,)``) to
    ``infos``, in the layout Gymnasium's ``SyncVectorEnv`` gives them: ``final_obs`` an object array holding each
    ended game's last observation (None elsewhere), ``final_info`` a dict of arrays with presence masks.
    ``final``: the ended games' observations, in game order, and the step's infos for every game."""
    observations, final_infos = final
    final_obs = np.full(len(ended), None, dtype=object)
    for game, observation in zip(np.flatnonzero(ended), observations, strict=True):
        final_obs[game] = observation
    final_info = {}
    for key, value in final_infos.items():
        if not key.startswith("_"):
            final_info[key] = np.where(ended.reshape(-1, *[1] * (value.ndim - 1)), value, np.zeros_like(value))
            final_info[f"_{key}"] = ended.copy()
    infos.update({"final_obs": final_obs, "_final_obs": ended.copy(),
                  "final_info": final_info, "_final_info": ended.copy()})
