"""Stable-Baselines3 / sb3-contrib: a ``VecEnv`` over one core batch, a policy agent, self-play.

sb3-contrib's ``MaskablePPO`` runs on the single-seat env with no wrapper at all: it wraps a
plain ``gymnasium.Env`` in ``Monitor`` and ``DummyVecEnv`` itself and finds
``action_masks()`` through Gymnasium's wrappers (``get_wrapper_attr``)::

    MaskablePPO("MlpPolicy", gymnasium.make("spoilfive/SpoilFive-v0", opponents="random"))

That steps one game at a time. :class:`SpoilFiveSB3VecEnv` steps ``num_envs`` games of one
core batch (the opponents moving in batch between the learner's decisions, the code of
:class:`~spoilfive_integrations.vector.SpoilFiveVectorEnv`) with SB3's own conventions:

* ``step_wait()`` returns ``(observations (B, OBS_DIM), rewards (B,), dones (B,), infos)``,
  ``infos`` one dict per game; a game whose episode ended is restarted in the same step:
  its row of ``observations`` is the new episode's first observation and its info holds
  ``"terminal_observation"`` (and ``"TimeLimit.truncated": False``; episodes are never cut);
* ``action_masks()`` ``(B, 107)`` bool, and ``env_method("action_masks")`` one row per game,
  which is how sb3-contrib's ``get_action_masks`` reads a ``VecEnv``;
* ``seed(s)`` seeds the next ``reset()`` (deals, drawn seats and opponents).

Wrap it in ``VecMonitor`` for episode returns in SB3's logs.

Self-play: :class:`SB3PolicyAgent` turns a snapshot of a (maskable) SB3 policy into an
:class:`agents.base.Agent` (``act_batch``); :class:`SelfPlayCallback` hands a fresh snapshot
of the learner to the envs as their opponents every ``refresh_steps`` environment steps
(``env_method("set_opponents", agent)``).

>>> from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv
>>> venv = SpoilFiveSB3VecEnv(num_envs=4, opponents="random", seed=0)
>>> observations = venv.reset()
>>> observations.shape[0], venv.action_masks().shape
(4, (4, 107))
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from agents.base import Agent, checked_batch
from agents.policy import sample_legal, torch_threads
from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.core import SpoilFiveCore, checked_seed
from spoilfive_env.rules import is_integer

from .opponents import resolve_opponents
from .vector import LearnerBatch, checked_reset, single_observation_space


class SpoilFiveSB3VecEnv(VecEnv):
    """``num_envs`` games of one core batch as an SB3 ``VecEnv``, one learning seat each.

    Args:
        num_envs: number of games (1 or more).
        num_players: 2 to 10.
        opponents: one agent spec for every other seat, or a list with one per other seat
            (names, checkpoint paths, agent objects; :mod:`spoilfive_integrations.opponents`).
        seat: the learning seat in every game, or None (default) to draw it for each game at
            each episode start.
        illegal_action: ``"raise"`` (default) or ``"penalty"`` (as the Gymnasium env).
        seed: seed of the first ``reset()`` (SB3's ``seed()`` sets it too).
        mode, reward, **rules: as :func:`spoilfive_env.env` takes them.

    Raises:
        ValueError: at construction, as :class:`~spoilfive_integrations.vector.SpoilFiveVectorEnv`.
    """

    def __init__(self, num_envs: int = 64, *, num_players: int = 4, opponents="spoiler", seat: int | None = None,
                 illegal_action: str = "raise", seed: int | None = None, mode: str = "hand",
                 reward: str = "equity", **rules):
        seed = checked_reset(seed, None, type(self).__name__)
        self.batch = LearnerBatch(num_envs, num_players=num_players, opponents=opponents, seat=seat,
                                  illegal_action=illegal_action, mode=mode, reward=reward, **rules)
        self.render_mode = None
        super().__init__(self.batch.num_envs, single_observation_space(), spaces.Discrete(NUM_ACTIONS))
        self._seat_rng = np.random.default_rng(seed)
        if seed is not None:
            self.seed(seed)
        self._actions = np.zeros(self.num_envs, np.int64)
        self._masks = np.ones((self.num_envs, NUM_ACTIONS), bool)
        self._everywhere = np.ones(self.num_envs, bool)
        self._started = False  # reset() has dealt (SB3 itself never steps first; a user may)

    @property
    def core(self) -> SpoilFiveCore:
        """The core batch (read it; stepping it directly bypasses the opponents)."""
        return self.batch.core

    # ------------------------------------------------------------------ VecEnv
    def seed(self, seed: int | None = None):
        """SB3's ``seed()``: the seed of the next ``reset()``, checked now (a refused one changes nothing)."""
        return super().seed(checked_reset(seed, None, type(self).__name__))

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        if seed is not None:
            self.batch.seed(seed)
            self._seat_rng = np.random.default_rng(seed)
        self._reset_seeds()
        self._reset_options()
        self.batch.start(self._everywhere, self._seat_rng)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._started = True
        return self._observe()

    def step_async(self, actions: np.ndarray) -> None:
        if not self._started:
            raise ValueError("step() before reset(): call reset() to deal the first hands")
        self._actions = self.batch.check_actions(actions)

    def step_wait(self):
        batch, actions = self.batch, self._actions
        illegal = batch.illegal(actions, self._everywhere)
        acting = ~illegal
        rewards, terminated = batch.learner_step(actions, acting, illegal)
        rewards += batch.play_opponents(acting)
        dones = terminated | batch.over
        infos = [{"TimeLimit.truncated": False} for _ in range(self.num_envs)]
        if dones.any():
            ended = np.flatnonzero(dones)
            final = batch.observe()[ended]
            for row, game in enumerate(ended.tolist()):
                infos[game]["terminal_observation"] = final[row]
            if batch.illegal_action == "penalty":
                for game in np.flatnonzero(illegal).tolist():
                    infos[game]["penalty"] = True
            batch.start(dones, self._seat_rng)
        return self._observe(), rewards.astype(np.float32), dones, infos

    def _observe(self) -> np.ndarray:
        self._masks = self.batch.masks(over_fill=1).astype(bool)
        return self.batch.observe()

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions ``(B, 107)`` bool (sb3-contrib's convention)."""
        return self._masks.copy()

    def set_opponents(self, opponents) -> None:
        """Seat new opponents (any ``opponents`` spec) from the next decision on, in every game."""
        self.batch.lineup = resolve_opponents(opponents, self.batch.rules)

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices=None) -> list:
        value = getattr(self, attr_name)  # AttributeError when absent, as has_attr expects
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        """``"action_masks"``: one mask row per game; any other method runs once, its result repeated."""
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self._masks[rows].copy())
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


class SB3PolicyAgent(Agent):
    """A frozen snapshot of an SB3 actor-critic policy as an :class:`agents.base.Agent`.

    Works with sb3-contrib's maskable policies (the mask is applied by the policy's own
    distribution) and plays only legal actions. Sampling (``greedy=False``) draws from the
    agent's own generator, so a seeded agent repeats its moves.

    Args:
        policy: ``model.policy``; a copy is taken (later training does not change it).
        seed: seed of the agent's generator (sampling only).
        greedy: play the most probable legal action instead of sampling.
        name: the name shown in tournaments.
    """

    name = "sb3"

    def __init__(self, policy, seed: int | None = None, *, greedy: bool = False, name: str | None = None):
        super().__init__(seed)
        # A new policy from the same constructor arguments (what SB3's own policy.save keeps):
        # deepcopy fails on a policy that holds its last action distribution.
        self.policy = type(policy)(**policy._get_constructor_parameters())
        self.policy.load_state_dict(copy.deepcopy(policy.state_dict()))
        self.policy.to("cpu").eval()
        self.greedy = greedy
        if name is not None:
            self.name = name

    @torch.inference_mode()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations, masks = checked_batch(observations, masks)  # before the network: its errors name no input
        if len(masks) == 0:
            return np.zeros(0, np.int64)
        with torch_threads(1):  # small batches beside environment stepping
            obs = torch.as_tensor(observations)
            logits = self.policy.get_distribution(obs, action_masks=masks).distribution.logits.numpy()
        if not self.greedy:
            return sample_legal(logits, masks, self.rng)
        return np.where(masks, logits, -np.inf).argmax(axis=1).astype(np.int64)


class SelfPlayCallback(BaseCallback):
    """Every ``refresh_steps`` environment steps, the learner's current policy becomes the opponents.

    At the start of training and then every ``refresh_steps`` calls of the env's ``step``
    (``num_envs`` decisions each on a vector env), a snapshot :class:`SB3PolicyAgent` of the
    learner is handed to the training env through ``env_method("set_opponents", agent)``
    (:class:`SpoilFiveSB3VecEnv` has it). ``self.snapshots`` counts the refreshes.

    Args:
        refresh_steps: environment steps between refreshes (1 or more).
        greedy: whether the snapshot opponents play greedily (default: they sample).
        seed: seed of the first snapshot's generator (each later one adds its number).
    """

    def __init__(self, refresh_steps: int, *, greedy: bool = False, seed: int = 0, verbose: int = 0):
        super().__init__(verbose)
        if not is_integer(refresh_steps) or refresh_steps < 1:
            raise ValueError(f"refresh_steps={refresh_steps!r} is not allowed: it must be an integer, 1 or more")
        self.refresh_steps = int(refresh_steps)
        if not isinstance(greedy, (bool, np.bool_)):
            raise ValueError(f"greedy={greedy!r} is not allowed: give True or False")
        if checked_seed(seed) is None:  # each snapshot's seed is this plus its number
            raise ValueError("seed=None is not allowed here: give a whole number 0 or more")
        self.greedy = bool(greedy)
        self.seed = int(seed)
        self.snapshots = 0

    def _refresh(self) -> None:
        agent = SB3PolicyAgent(self.model.policy, seed=self.seed + self.snapshots, greedy=self.greedy,
                               name=f"snapshot{self.snapshots}")
        if not self.training_env.has_attr("set_opponents"):
            raise ValueError("self-play needs an env with set_opponents (SpoilFiveSB3VecEnv)")
        self.training_env.env_method("set_opponents", agent)
        self.snapshots += 1
        if self.verbose:
            print(f"self-play: opponents refreshed from the learner at step {self.num_timesteps}")

    def _on_training_start(self) -> None:
        self._refresh()

    def _on_step(self) -> bool:
        if self.n_calls % self.refresh_steps == 0:
            self._refresh()
        return True


__all__ = ["SB3PolicyAgent", "SelfPlayCallback", "SpoilFiveSB3VecEnv"]
