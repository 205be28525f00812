"""``SpoilFiveGymEnv``: Spoil Five as a single-agent ``gymnasium.Env``, one learning seat against opponents.

``gymnasium.make("spoilfive/SpoilFive-v0", num_players=4, opponents="spoiler", seat=None,
illegal_action="raise", **env options)`` returns it (after ``import spoilfive_env``, or with
the id ``"spoilfive_env:spoilfive/SpoilFive-v0"``). The learner acts only at its own decisions:
after its action the opponents move until it is the learner's turn again or the episode is over.

=======================  ====================================================================
id                       ``"spoilfive/SpoilFive-v0"``; ``gymnasium.make_vec`` gives
                         :class:`~spoilfive_integrations.vector.SpoilFiveVectorEnv`
observation              ``Box(OBS_DIM,) float32``: the learning seat's observation
                         (:mod:`spoilfive_env.observation`), with the AEC env's bounds
action                   ``Discrete(107)`` (:mod:`spoilfive_env.actions`)
legal actions            ``info["action_mask"]`` (int8, 107) after every reset and step;
                         ``env.action_masks()`` (bool), sb3-contrib's convention; all zero once
                         the episode is over
reward                   the learning seat's reward (``reward="equity"`` default, or ``"chips"``),
                         summed over the opponents' moves after its action: a hand's reward
                         arrives at the step on which that hand ends
episode                  one hand (``mode="hand"``) or one game (``mode="game"``); never truncated
info                     ``"action_mask"``, ``"seat"``; when the episode ends by play also
                         ``"winner"`` (seat or team, -1 spoiled), ``"tricks"``, ``"chips"``,
                         ``"pool"`` (not after a penalty: that hand has no result on the table),
                         and with ``mode="game"`` ``"game_winners"``, the seats with most chips;
                         ``"penalty"`` (bool) under ``illegal_action="penalty"``
illegal action           ``"raise"`` (default): ``ValueError`` naming the action, the seat and the
                         legal actions; nothing changes. ``"penalty"``: the seeds' penalty
                         (docs/rules.md): the learner forfeits his interest in the pool, the hand ends
                         and the episode terminates with the reward of a lost hand (below)
opponent error           an opponent that raises when asked (or breaks its contract) stops the
                         step after the learner's move: its error propagates, and every later
                         ``step`` raises ``ValueError`` until ``reset()``
version                  v0, the first release
=======================  ====================================================================

Penalty reward: the hand is scored as though it ended at the illegal action with no part of
the pool the offender's. Under ``"chips"`` that is his chip change in the hand (his antes, e.g.
``-1``); under ``"equity"`` that minus his even share of the pool as the hand began
(``-ante - pool_at_hand_start / n``). It equals what losing the hand to another player gives
him, the worst result a hand can have apart from a jink, and it is negative whenever the table
pays antes or the pool holds chips. Generic checkers that step unmasked samples (Gymnasium's
``check_env``, RLlib's pre-checks) run in this mode.

Seeding: ``reset(seed=s)`` reproduces the deal (the core's generator), the learning seat when it
is drawn (the env's ``np_random``) and the opponents' moves (each opponent reseeded from ``s``);
later ``reset()`` calls continue those streams.

>>> env = SpoilFiveGymEnv(num_players=3, opponents="random", seat=1)
>>> observation, info = env.reset(seed=7)
>>> from spoilfive_env import OBS_DIM
>>> observation.shape == (OBS_DIM,), info["seat"], int(info["action_mask"].sum()) > 0
(True, 1, True)
>>> terminated = False
>>> while not terminated:
...     action = int(info["action_mask"].argmax())
...     observation, reward, terminated, truncated, info = env.step(action)
>>> bool(info["action_mask"].any())
False
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from spoilfive_env.actions import NUM_ACTIONS, action_array
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.env import render_table
from spoilfive_env.registration import GYMNASIUM_ID

from .vector import LearnerBatch, check_env_keywords, checked_reset, own_keywords, single_observation_space


class RenderModeError(ValueError, TypeError):
    """A render mode the env does not draw. A ``ValueError``, as every refusal of a bad argument here, and a
    ``TypeError`` too: SB3's ``make_vec_env`` asks for ``render_mode="rgb_array"`` and, on a ``TypeError``,
    makes the env again without it, so ``make_vec_env("spoilfive/SpoilFive-v0", ...)`` works as it is."""


class SpoilFiveGymEnv(gymnasium.Env):
    """One learning seat of a Spoil Five table against opponents (see the module docstring).

    A thin view of a :class:`~spoilfive_integrations.vector.LearnerBatch` with one game, the
    same code that runs :class:`~spoilfive_integrations.vector.SpoilFiveVectorEnv`.

    Args:
        num_players: 2 to 10.
        opponents: one agent spec for every other seat, or a list with one per other seat
            (registry names, checkpoint paths or agent objects, as :func:`agents.load_agent`
            takes them; entry ``i`` sits ``i + 1`` seats to the learner's left).
        seat: the learning seat, or None (default) to draw it at each reset from ``np_random``.
        illegal_action: ``"raise"`` (default) or ``"penalty"``.
        render_mode: None, ``"ansi"`` (``render()`` returns the table as text) or ``"human"`` (prints it).
        mode, reward, **rules: as :func:`spoilfive_env.env` takes them (``mode="hand"``,
            ``reward="equity"``, rules options by name or ``preset=``).

    Raises:
        ValueError: at construction, for an unknown opponent, a list of the wrong length, a
            checkpoint for another observation layout, a seat out of range, bad rules options.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, num_players: int = 4, opponents="spoiler", seat: int | None = None,
                 illegal_action: str = "raise", render_mode: str | None = None, mode: str = "hand",
                 reward: str = "equity", **rules):
        if "num_envs" in rules:  # one game only; many are the vector env's
            raise ValueError(f"num_envs is not an option of the one-seat env: for several games use gymnasium."
                             f"make_vec({GYMNASIUM_ID!r}, num_envs=B, vectorization_mode='vector_entry_point')")
        modes = self.metadata["render_modes"]
        if render_mode is not None and not (isinstance(render_mode, str) and render_mode in modes):
            raise RenderModeError(f"render_mode={render_mode!r} is not allowed: choose None, 'ansi' or 'human'")
        check_env_keywords(rules, type(self).__name__, own_keywords(type(self)),
                           {"seed": "the seed goes to reset(seed=...)",
                            "autoreset_mode": "it is a vector env's: give it to gymnasium.make_vec as a keyword with "
                                              "vectorization_mode='vector_entry_point', or as vector_kwargs="
                                              "{'autoreset_mode': ...} with 'sync' or 'async'"})
        self.batch = LearnerBatch(1, num_players=num_players, opponents=opponents, seat=seat,
                                  illegal_action=illegal_action, mode=mode, reward=reward, **rules)
        self.render_mode = render_mode
        self.observation_space = single_observation_space()
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self._everywhere = np.ones(1, bool)
        self._started = False  # reset() has dealt a hand (gymnasium.make adds no OrderEnforcing)

    @property
    def core(self) -> SpoilFiveCore:
        """The one-game core (read it; stepping it directly bypasses the opponents)."""
        return self.batch.core

    @property
    def seat(self) -> int:
        """The learning seat of the current episode."""
        return int(self.batch.seat[0])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = checked_reset(seed, options, type(self).__name__)
        if seed is not None:
            self.batch.seed(seed)  # first: an opponent's reseed may fail, and then nothing has changed
        super().reset(seed=seed)
        self.batch.start(self._everywhere, self.np_random)
        self._started = True
        observation, info = self._observe(penalized=False)
        if self.render_mode == "human":
            self.render()
        return observation, info

    def step(self, action):
        batch = self.batch
        if not self._started:
            raise ValueError("step() before reset(): call reset() to deal the first hand")
        batch.check_playable()
        if batch.over[0]:
            raise ValueError("the episode is over: call reset() to start the next one")
        chosen = np.asarray(action)
        if chosen.shape != () or chosen.dtype.kind not in "iu":  # Discrete's own rule: 0-d
            raise ValueError(f"illegal action {action!r} for the learning seat {int(batch.seat[0])} (an action is a "
                             f"whole number 0-{NUM_ACTIONS - 1}, an action id); legal actions: "
                             f"{batch.legal_actions_text(0)}")
        actions = action_array(chosen.reshape(1), (1,))  # (a huge unsigned value named, not wrapped)
        illegal = batch.illegal(actions, self._everywhere, name_game=False)
        rewards, _ = batch.learner_step(actions, ~illegal, illegal)
        rewards += batch.play_opponents(~illegal)
        observation, info = self._observe(penalized=bool(illegal[0]))
        if self.render_mode == "human":
            self.render()
        return observation, float(rewards[0]), bool(batch.over[0]), False, info

    def _observe(self, penalized: bool):
        batch, core = self.batch, self.batch.core
        self._mask = batch.masks(over_fill=0)[0]
        info = {"action_mask": self._mask.copy(), "seat": self.seat}
        if core.done[0]:
            info.update(winner=int(core.last_winner[0]), tricks=core.last_tricks[0].tolist(),
                        chips=core.chips[0].tolist(), pool=int(core.pool[0]))
            if core.mode == "game":
                info["game_winners"] = core.game_winners(0)
        if batch.illegal_action == "penalty":
            info["penalty"] = penalized
        return batch.observe()[0], info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions ``(107,)`` bool (sb3-contrib's ``MaskablePPO`` reads this)."""
        return self._mask.astype(bool)

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if not self._started:
            raise ValueError("render() before reset(): call reset() to deal the first hand")
        text = render_table(self.batch.core, viewer=self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text
