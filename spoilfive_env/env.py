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
=====================  ================================================================

Version history: v0, the first release.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .actions import NUM_ACTIONS, action_str
from .cards import ACE, NUM_RANKS, SUIT_SYMBOLS, card_index, card_str
from .core import PHASE_DONE, PHASE_NAMES, SpoilFiveCore, validate_deal
from .observation import OBS_DIM, SLICES
from .rules import make_rules

RESET_OPTIONS = ("dealer", "hands", "turnup", "pool", "chips")


def env(**kwargs):
    """The Spoil Five AEC environment with PettingZoo's order-enforcing wrapper."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


def _observation_bounds():
    low = np.zeros(OBS_DIM, np.float32)
    high = np.ones(OBS_DIM, np.float32)
    high[SLICES["tricks_won"]] = 5 / 3
    low[SLICES["chips"]] = -np.inf
    high[SLICES["chips"]] = np.inf
    high[SLICES["pool"]] = np.inf
    high[SLICES["hand_place"]] = np.inf
    return low, high


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
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not allowed: choose None, 'ansi' or 'human'")
        self.rules = make_rules(num_players=num_players, **rules)
        self.render_mode = render_mode
        self.core = SpoilFiveCore(1, rules=self.rules, mode=mode, reward=reward, deal=False)
        self.possible_agents = [f"player_{seat}" for seat in range(self.rules.num_players)]
        self.agent_name_mapping = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        low, high = _observation_bounds()
        observation_space = spaces.Dict({
            "observation": spaces.Box(low=low, high=high, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {agent: observation_space for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self.agents = []

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict | None = None):
        deal = self._parse_options(options or {})
        if "hands" in deal:  # refuse a bad deal before anything changes, the generator included
            validate_deal(deal["hands"], deal["turnups"], self.rules.num_players, 1)
        if seed is not None:
            self.core.rng = np.random.default_rng(seed)
        self.core.reset(**deal)
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self._refresh()

    def _parse_options(self, options: dict) -> dict:
        unknown = sorted(set(options) - set(RESET_OPTIONS))
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
            if not isinstance(hands, (list, tuple)) or len(hands) != n:
                raise ValueError(f"'hands' must hold one list of 5 cards for each of the {n} seats, got {hands!r}")
            parsed = []
            for seat, hand in enumerate(hands):
                if isinstance(hand, str) or len(hand) != 5:
                    raise ValueError(f"seat {seat} must be dealt exactly 5 cards, got {hand!r}")
                parsed.append([self._card(card) for card in hand])
            deal["hands"] = np.array([parsed])
            deal["turnups"] = np.array([self._card(options["turnup"])])
        if "dealer" in options:
            dealer = options["dealer"]
            if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < n:
                raise ValueError(f"'dealer' must be a seat 0-{n - 1}, got {dealer!r}")
            deal["dealers"] = np.array([dealer])
        if "pool" in options:
            pool = options["pool"]
            if isinstance(pool, bool) or not isinstance(pool, (int, np.integer)) or pool < 0:
                raise ValueError(f"'pool' must be a whole number of chips, 0 or more, got {pool!r}")
            deal["pools"] = np.array([pool])
        if "chips" in options:
            chips = options["chips"]
            if len(chips) != n:
                raise ValueError(f"'chips' must give one number per seat ({n}), got {chips!r}")
            deal["chips"] = np.array([chips], dtype=np.int64)
        return deal

    @staticmethod
    def _card(card) -> int:
        if isinstance(card, str):
            return card_index(card)
        return card_index(card_str(card))

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)) \
                or not 0 <= action < NUM_ACTIONS or not self._mask[action]:
            legal = ", ".join(f"{a} ({action_str(a)})" for a in np.flatnonzero(self._mask))
            raise ValueError(f"illegal action {action!r} for {agent}; legal actions: {legal}")
        rewards, done = self.core.step(np.array([action]))
        self._cumulative_rewards[agent] = 0.0
        for seat, name in enumerate(self.possible_agents):
            self.rewards[name] = float(rewards[0, seat])
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
            self.agent_selection = self.agents[0] if self.agents else self.possible_agents[0]
        else:
            self._mask = core.legal_mask()[0].astype(np.int8)
            self.agent_selection = self.possible_agents[int(core.current[0])]

    def observe(self, agent):
        seat = self.agent_name_mapping[agent]
        observation = self.core.observe(seat)[0]
        acting = agent == self.agent_selection and self.core.phase[0] != PHASE_DONE
        mask = self._mask.copy() if acting else np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": observation, "action_mask": mask}

    # ------------------------------------------------------------------ rendering
    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        text = render_table(self.core, viewer=self.agent_name_mapping.get(self.agent_selection, 0))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass


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
