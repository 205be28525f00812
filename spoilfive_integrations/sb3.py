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
* ``seed(s)`` seeds the next ``reset()`` (deals, drawn seats and opponents); ``set_options``
  takes only None or ``{}``: there are no reset options;
* ``indices`` are games ``0`` to ``num_envs - 1``; what acts on the whole batch (``set_attr``,
  ``env_method`` of anything but ``"action_masks"``, such as ``"set_opponents"``) takes only all of them.

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
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.vec_env import VecEnv

from agents.base import Agent, checked_batch
from agents.policy import checked_greedy, checked_name, legal_choice, torch_threads
from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.rules import is_integer

from .vector import (
    LearnerBatch,
    LearnerBatchView,
    check_env_keywords,
    checked_reset,
    own_keywords,
    single_observation_space,
)

SB3_MEMORY = (13_500, 150)
"""Bytes a game and bytes a seat that :class:`SpoilFiveSB3VecEnv` really uses at its peak, measured as
:data:`~spoilfive_integrations.vector.VECTOR_MEMORY` is (12,725 and 13,770 bytes a game at 2 and 10
players), rounded up."""


class SpoilFiveSB3VecEnv(LearnerBatchView, VecEnv):
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
        check_env_keywords(rules, type(self).__name__, own_keywords(type(self)))
        self.batch = LearnerBatch(num_envs, num_players=num_players, opponents=opponents, seat=seat,
                                  illegal_action=illegal_action, mode=mode, reward=reward, memory=SB3_MEMORY,
                                  **rules)
        self.render_mode = None
        super().__init__(self.batch.num_envs, single_observation_space(), spaces.Discrete(NUM_ACTIONS))
        self._seat_rng = np.random.default_rng(seed)
        if seed is not None:
            self.seed(seed)
        self._actions = None  # step_async's actions, until step_wait plays them
        self._masks = np.ones((self.num_envs, NUM_ACTIONS), bool)
        self._everywhere = np.ones(self.num_envs, bool)
        self._started = False  # reset() has dealt (SB3 itself never steps first; a user may)

    # ------------------------------------------------------------------ VecEnv
    def seed(self, seed: int | None = None):
        """SB3's ``seed()``: the seed of the next ``reset()``, checked now (a refused one changes nothing)."""
        return super().seed(checked_reset(seed, None, type(self).__name__))

    def set_options(self, options=None) -> None:
        """SB3's ``set_options()``: this env takes no reset options, so only None or an empty dict (or a
        list of them) is allowed, and anything else is refused now, as the Gymnasium envs do."""
        for entry in options if isinstance(options, (list, tuple)) else [options]:
            checked_reset(None, entry, type(self).__name__)
        super().set_options(options)

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        if seed is not None:
            self.batch.seed(seed)  # first: an opponent's reseed may fail, and then nothing has changed
            self._seat_rng = np.random.default_rng(seed)
        self._reset_seeds()
        self._reset_options()
        self._actions = None
        self.batch.start(self._everywhere, self._seat_rng)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._started = True
        return self._observe()

    def step_async(self, actions: np.ndarray) -> None:
        if not self._started:
            raise ValueError("step() before reset(): call reset() to deal the first hands")
        self.batch.check_playable()
        self._actions = self.batch.check_actions(actions)

    def step_wait(self):
        if not self._started:
            raise ValueError("step() before reset(): call reset() to deal the first hands")
        if self._actions is None:
            raise ValueError("step_wait() without step_async(): give the actions to step_async(actions) first, "
                             "or call step(actions)")
        batch, actions = self.batch, self._actions
        self._actions = None  # played once: a failed step is not played again
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
        """Seat new opponents (any ``opponents`` spec) from the next decision on, in every game (one
        lineup serves the whole batch, so ``env_method`` refuses it for some games only)."""
        self.batch.set_opponents(opponents)

    def close(self) -> None:
        pass

    def _get_indices(self, indices) -> list[int]:
        """SB3's ``indices`` (None, a game index or a list of them) as a list, each game checked."""
        if indices is None:
            rows = list(range(self.num_envs))
        elif isinstance(indices, (list, tuple, range)) or (isinstance(indices, np.ndarray) and indices.ndim == 1):
            rows = list(indices)
        else:
            rows = [indices]  # one index (or something refused below)
        bad = [row for row in rows if not (is_integer(row) and 0 <= row < self.num_envs)]
        if bad:
            raise ValueError(f"indices={indices!r} is not allowed: give game indices 0-{self.num_envs - 1}, "
                             "or None for every game")
        return [int(row) for row in rows]

    def _every_game(self, indices, what: str) -> list[int]:
        """The rows of ``indices``; refused unless every game: ``what`` acts on the one batch, not on a game."""
        rows = self._get_indices(indices)
        if set(rows) != set(range(self.num_envs)):
            raise ValueError(f"indices={indices!r} is not allowed for {what}: it applies to every game of the "
                             "batch at once, so give indices=None")
        return rows

    def get_attr(self, attr_name: str, indices=None) -> list:
        rows = self._get_indices(indices)
        value = getattr(self, attr_name)  # AttributeError when absent, as has_attr expects
        return [value for _ in rows]

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        """Set an attribute of the batch: for every game at once (a subset of ``indices`` is refused)."""
        self._every_game(indices, f"set_attr({attr_name!r})")
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        """``"action_masks"``: one mask row per game of ``indices``; any other method (``"set_opponents"``)
        runs once on the batch, its result repeated, and only for every game (a subset is refused)."""
        if method_name == "action_masks":
            return list(self._masks[self._get_indices(indices)].copy())
        rows = self._every_game(indices, f"env_method({method_name!r})")
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
        if not isinstance(policy, BasePolicy):
            raise ValueError(f"policy must be an SB3 policy (model.policy), got {type(policy).__name__}")
        greedy, name = checked_greedy(greedy), checked_name(name, self.name)
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
        return legal_choice(logits, masks, self.greedy, self.rng)


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
        if not (is_integer(seed) and seed >= 0):  # None too: each snapshot's seed is this plus its number
            raise ValueError(f"seed={seed!r} is not allowed: give a whole number 0 or more (each snapshot's seed is "
                             "this plus its number)")
        self.greedy = greedy
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
