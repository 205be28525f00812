"""PettingZoo AEC environment for Spoil Five: a thin view of a :class:`SpoilFiveCore` with B = 1.

>>> from spoilfive_env import env
>>> game = env(num_players=3)
>>> game.reset(seed=1)
>>> for agent in game.agent_iter():
...     observation, reward, termination, truncation, info = game.last()
...     mask = observation["action_mask"]
...     action = None if termination or truncation else int(mask.nonzero()[0][0])
...     game.step(action)
>>> sorted(game.possible_agents)
['player_0', 'player_1', 'player_2']

=====================  ================================================================
name                   ``spoil_five_v0``
agents                 ``player_0 ... player_{n-1}``; ``player_i`` sits in seat ``i``
action space           ``Discrete(107)`` (see :mod:`spoilfive_env.actions`)
observation space      ``Dict(observation=Box(OBS_DIM,) float32, action_mask=Box(107,) int8)``
rewards                ``"equity"`` (default) or ``"chips"``, given when a hand ends
infos at the end       ``"winner"`` (the last hand's: seat, or team; -1 spoiled), ``"tricks"``,
                       ``"chips"``, ``"pool"``; with ``mode="game"`` also ``"game_winners"``,
                       the seats with the most chips (most chips wins the game; a tie names all)
=====================  ================================================================

Version history: v0, the first release.
"""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .actions import NUM_ACTIONS, action_id, action_str
from .cards import ACE, HAND_SIZE, NUM_RANKS, SUIT_SYMBOLS, card_index, card_str
from .core import PHASE_DONE, PHASE_NAMES, SpoilFiveCore
from .observation import build_observation, observation_bounds
from .rules import CHIPS_MAX, CHIPS_MIN, is_integer, largest_pool, table_rules

RESET_OPTIONS = ("dealer", "hands", "turnup", "pool", "chips")
SEQUENCES = (list, tuple, np.ndarray)  # what a list of cards or of chips may be given as


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's naming convention)
    """Spoil Five for 2 to 10 players.

    Args:
        num_players: 2 to 10.
        render_mode: ``None``, ``"ansi"`` (``render()`` returns text) or ``"human"`` (prints).
        mode: ``"hand"`` (an episode is one hand) or ``"game"`` (a whole game).
        reward: ``"equity"`` or ``"chips"``.
        **rules: options of :class:`~spoilfive_env.rules.Rules` by name, or ``preset=``.
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "spoil_five_v0", "is_parallelizable": False}

    def __init__(self, num_players: int = 4, render_mode: str | None = None, mode: str = "hand",
                 reward: str = "equity", **rules):
        super().__init__()
        modes = self.metadata["render_modes"]
        if render_mode is not None and not (isinstance(render_mode, str) and render_mode in modes):
            raise ValueError(f"render_mode={render_mode!r} is not allowed: choose None, 'ansi' or 'human'")
        self.rules = table_rules(num_players, **rules)
        self.render_mode = render_mode
        self.core = SpoilFiveCore(1, rules=self.rules, mode=mode, reward=reward, deal=False)
        self.possible_agents = [f"player_{seat}" for seat in range(self.rules.num_players)]
        self.agent_name_mapping = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        low, high = observation_bounds()
        observation_space = spaces.Dict({
            "observation": spaces.Box(low=low, high=high, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {agent: observation_space for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self._seat_arrays = [np.array([seat], np.int8) for seat in range(self.rules.num_players)]
        self._moving = np.ones(1, bool)  # step() moves the one game, never a finished one
        self.agents = []
        self.agent_selection = None  # no one to act until reset() deals
        self._dealt = False

    @property
    def np_random(self) -> np.random.Generator:
        """The generator of the deals (the core's ``rng``): what ``reset(seed=...)`` seeds, under the name
        PettingZoo's envs give theirs. Drawing from it changes the deals that follow."""
        return self.core.rng

    def observation_space(self, agent):
        return self.observation_spaces[self._known_agent(agent)]

    def action_space(self, agent):
        return self.action_spaces[self._known_agent(agent)]

    def _known_agent(self, agent) -> str:
        if not isinstance(agent, str) or agent not in self.agent_name_mapping:
            raise ValueError(f"agent {agent!r} is not at this table: the agents are "
                             f"{', '.join(map(repr, self.possible_agents))}")
        return agent

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start a new episode (a hand, or a game with ``mode="game"``).

        Args:
            seed: reseed the environment's generator (a whole number 0 or more).
            options: may fix the deal: ``"hands"`` (one list of 5 cards per seat, as text such
                as ``"5H"`` or as card indices) with ``"turnup"``, ``"dealer"`` (a seat),
                ``"pool"`` (chips carried over from a spoiled hand) and ``"chips"`` (one whole
                number per seat). Unknown keys are ignored with a warning.

        Raises:
            ValueError: a bad seed or option, naming it and what is allowed; the environment,
                its generator included, is then exactly as before.
        """
        deal = self._parse_options({} if options is None else options)
        # The core checks every value before it reseeds or draws anything.
        self.core.reset(**deal, seed=seed)
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self._dealt = True
        self._refresh()

    def _require_reset(self, method: str):
        if not self._dealt:
            raise ValueError(f"{method}() before reset(): call reset() to deal the first hand")

    def _require_agents(self, method: str):
        """Refuse ``method`` once every agent has stepped out of the finished episode (``step(None)``
        each): nobody is left to act or to report on (PettingZoo's own code would raise ``KeyError``)."""
        if not self.agents:  # (none before the first reset either)
            self._require_reset(method)
            raise ValueError(f"{method}() after every agent has left the finished episode: call reset() "
                             "to start the next one")

    def _parse_options(self, options: dict) -> dict:
        if not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict of reset options ({', '.join(RESET_OPTIONS)}), "
                             f"got {type(options).__name__}")
        unknown = sorted(set(map(str, options)) - set(RESET_OPTIONS))
        if unknown:
            # A warning, not an error: PettingZoo's api_test passes options of its own.
            gymnasium.logger.warn(f"ignoring unknown reset option(s) {', '.join(map(str, unknown))}: "
                                  f"known are {', '.join(RESET_OPTIONS)}")
        n = self.rules.num_players
        deal = {}
        if "hands" in options or "turnup" in options:
            if "hands" not in options or "turnup" not in options:
                raise ValueError("a fixed deal needs both 'hands' (one list of 5 cards per seat) and 'turnup'")
            hands = options["hands"]
            if not isinstance(hands, SEQUENCES) or len(hands) != n:
                raise ValueError(f"'hands' must hold one list of 5 cards for each of the {n} seats, got {hands!r}")
            parsed = []
            for seat, hand in enumerate(hands):
                if not isinstance(hand, SEQUENCES) or len(hand) != HAND_SIZE:
                    raise ValueError(f"seat {seat} must be dealt exactly {HAND_SIZE} cards, got {hand!r}")
                parsed.append([self._card(card) for card in hand])
            deal["hands"] = np.array([parsed])
            deal["turnups"] = np.array([self._card(options["turnup"])])
        if "dealer" in options:
            dealer = options["dealer"]
            if not is_integer(dealer) or not 0 <= dealer < n:
                raise ValueError(f"'dealer' must be a seat 0-{n - 1}, got {dealer!r}")
            deal["dealers"] = np.array([int(dealer)])
        # Chip counts are checked here against the engine's ranges; the core checks that
        # they leave room for the hands to come.
        if "pool" in options:
            pool = options["pool"]
            largest = largest_pool(self.rules, self.rules.max_hands if self.core.mode == "game" else 1)
            if not is_integer(pool) or not 0 <= pool <= largest:
                raise ValueError(f"'pool' must be a whole number of chips 0 to {largest} (so that a hand's winner "
                                 f"gains at most 2**24 chips under these rules: rewards are float32), got {pool!r}")
            deal["pools"] = np.array([pool], dtype=np.int64)
        if "chips" in options:
            chips = options["chips"]
            if not isinstance(chips, SEQUENCES) or len(chips) != n or not all(is_integer(c) for c in chips):
                raise ValueError(f"'chips' must give one whole number of chips per seat ({n}), got {chips!r}")
            outside = [c for c in chips if not CHIPS_MIN <= c <= CHIPS_MAX]
            if outside:
                raise ValueError(f"'chips' must be whole numbers {CHIPS_MIN} to {CHIPS_MAX} (the engine's "
                                 f"32-bit counters), got {outside[0]!r}")
            deal["chips"] = np.array([chips], dtype=np.int64)
        return deal

    @staticmethod
    def _card(card) -> int:
        if isinstance(card, str):
            return card_index(card)
        return card_index(card_str(card))

    def step(self, action):
        self._require_agents("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        try:
            action = action_id(action)
            why = ""
        except ValueError:
            why = f" (an action is a whole number 0-{NUM_ACTIONS - 1}, an action id)"
        if why or not 0 <= action < NUM_ACTIONS or not self._mask[action]:
            legal = ", ".join(f"{a} ({action_str(a)})" for a in np.flatnonzero(self._mask))
            raise ValueError(f"illegal action {action!r} for {agent}{why}; legal actions: {legal}")
        # The action was checked against the core's own mask just above: apply it directly.
        actions = np.array([action])
        rewards, done = self.core._apply_actions(actions, actions, self._moving)
        self._cumulative_rewards[agent] = 0.0
        self.rewards.update(zip(self.possible_agents, rewards[0].tolist()))
        if done[0]:
            for name in self.agents:
                self.terminations[name] = True
        self._accumulate_rewards()
        self._refresh()
        if self.render_mode == "human":
            self.render()

    def _refresh(self):
        """Cache the mask and select the agent to act (every agent in turn once finished)."""
        core = self.core
        if core.phase[0] == PHASE_DONE:
            self._mask = np.zeros(NUM_ACTIONS, np.int8)
            winner = int(core.last_winner[0])
            for name in self.agents:
                self.infos[name] = {"winner": winner, "tricks": core.last_tricks[0].tolist(),
                                    "chips": core.chips[0].tolist(), "pool": int(core.pool[0])}
                if core.mode == "game":
                    self.infos[name]["game_winners"] = core.game_winners(0)
            self.agent_selection = self.agents[0] if self.agents else self.possible_agents[0]
        else:
            self._mask = core.legal_mask()[0].view(np.int8)  # legal_mask() is already a copy
            self.agent_selection = self.possible_agents[int(core.current[0])]

    def last(self, observe: bool = True):
        self._require_agents("last")
        return super().last(observe)

    def observe(self, agent):
        self._require_reset("observe")
        # The seat is known to be valid: build directly, without core.observe's argument checks.
        seat = self.agent_name_mapping[self._known_agent(agent)]
        observation = build_observation(self.core, self._seat_arrays[seat])[0]
        acting = agent == self.agent_selection and self.core.phase[0] != PHASE_DONE
        mask = self._mask.copy() if acting else np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": observation, "action_mask": mask}

    # ------------------------------------------------------------------ rendering
    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        self._require_reset("render")
        text = render_table(self.core, viewer=self.agent_name_mapping.get(self.agent_selection, 0))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper, refusing in :class:`raw_env`'s words: ``step``, ``observe``,
    ``render`` and ``last`` before the first reset, and ``last`` once every agent has left the finished
    episode, raise ``ValueError`` saying what to do (PettingZoo's own checks raise ``AssertionError``,
    ``AttributeError`` or ``KeyError``), and a refused ``reset`` or ``step`` leaves the wrapper as it was too."""

    def reset(self, seed=None, options=None):
        flags = self._has_reset, self._has_updated
        try:
            super().reset(seed=seed, options=options)
        except BaseException:  # (a bad seed or option: the env is unchanged, and so is the wrapper)
            self._has_reset, self._has_updated = flags
            raise

    def step(self, action):
        if not self._has_reset:
            self.env.step(action)  # raw_env's refusal: no hand is dealt yet
            return
        updated = self._has_updated
        try:
            super().step(action)
        except BaseException:  # (an illegal action: the env is unchanged, and so is the wrapper's agent_iter flag)
            self._has_updated = updated
            raise

    def observe(self, agent):
        return super().observe(agent) if self._has_reset else self.env.observe(agent)

    def render(self):
        return super().render() if self._has_reset else self.env.render()

    def last(self, observe: bool = True):
        return self.env.last(observe)  # what AECEnv.last reads through the wrapper, with raw_env's checks

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo's own wrapper shows itself


def env(num_players: int = 4, render_mode: str | None = None, mode: str = "hand", reward: str = "equity",
        **rules) -> OrderEnforcing:
    """The Spoil Five AEC environment (:class:`raw_env`) inside PettingZoo's order-enforcing wrapper
    (:class:`OrderEnforcing`, which refuses calls out of order with a ``ValueError``).

    Args:
        num_players: 2 to 10 (a Python or NumPy integer).
        render_mode: ``None``, ``"ansi"`` (``render()`` returns text) or ``"human"`` (prints).
        mode: ``"hand"`` (an episode is one hand) or ``"game"`` (a whole game).
        reward: ``"equity"`` or ``"chips"`` (docs/rules.md, "Rewards").
        **rules: options of :class:`~spoilfive_env.rules.Rules` by name, or ``preset=``.

    Raises:
        ValueError: a bad argument, naming it and what is allowed.
    """
    return OrderEnforcing(
        raw_env(num_players=num_players, render_mode=render_mode, mode=mode, reward=reward, **rules))


def render_table(core: SpoilFiveCore, viewer: int, game: int = 0) -> str:
    """A compact text table of one game, showing only ``viewer``'s hidden cards."""
    n = core.num_players
    trump = int(core.trump[game])
    phase = PHASE_NAMES[core.phase[game]]
    if phase == "rob" and int(core.current[game]) != viewer and core.turnup[game] % NUM_RANKS != ACE:
        phase = "play"  # as in the observation: another seat's turn to rob would name the ace holder
    turnup = card_str(int(core.turnup[game]), symbols=True)
    lines = [
        f"Spoil Five · {n} players · hand {int(core.hand_index[game]) + (phase != 'done')} · "
        f"trump {SUIT_SYMBOLS[trump]} (turn-up {turnup}) · pool {int(core.pool[game])} · {phase}"
    ]
    trick = {}
    leader = int(core.leader[game])
    for position in range(int(core.trick_pos[game])):
        trick[(leader + position) % n] = card_str(int(core.trick_cards[game, position]), symbols=True)
    lines.append(f"  {'seat':<10} {'chips':>5} {'tricks':>6}  trick  notes")
    for seat in range(n):
        notes = []
        if seat == int(core.dealer[game]):
            notes.append("dealer")
        if seat == int(core.robber[game]):
            notes.append("robbed")
        if seat == int(core.jinker[game]):
            notes.append("jinking")
        marker = ">" if seat == int(core.current[game]) and phase != "done" else " "
        lines.append(f"{marker} {'player_' + str(seat):<10} {int(core.chips[game, seat]):>5} "
                     f"{int(core.tricks_won[game, seat]):>6}  {trick.get(seat, ''):<5}  {', '.join(notes)}")
    hand = " ".join(card_str(c, symbols=True) for c in core.hand_of(game, viewer))
    lines.append(f"player_{viewer}'s hand: {hand or '(empty)'}")
    if phase == "done":
        winner = int(core.last_winner[game])
        lines.append("hand spoiled: the pool carries over" if winner < 0 else
                     f"{'team' if core.rules.partnerships else 'player_'}{winner} took the pool")
    return "\n".join(lines)
