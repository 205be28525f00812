"""The common base of every agent: ``act`` for one AEC observation, ``act_batch`` for a core.

An agent sees only what its seat's observation holds (the flat vector of
:mod:`spoilfive_env.observation` and the legal mask). The one exception is the cheating
``oracle``: its class sets ``cheats = True`` and the tournament hands it the engine's hidden
state through :meth:`Agent.act_batch_state`; it is a ceiling for measurement, never an
opponent in training.

>>> import numpy as np
>>> class FirstLegal(Agent):
...     name = "first"
...     def act_batch(self, observations, masks):
...         return masks.argmax(axis=1)
>>> agent = FirstLegal(seed=0)
>>> mask = np.zeros(107, np.int8); mask[[30, 41]] = 1
>>> agent.act({"observation": np.zeros(OBS_DIM), "action_mask": mask})
30
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.core import make_generator
from spoilfive_env.observation import OBS_DIM


class Agent:
    """Base class of all agents.

    Subclasses set ``name`` and implement :meth:`act_batch`. Randomness comes only from
    ``self.rng``, a generator made from the explicit ``seed`` (``None`` draws fresh entropy).

    Attributes:
        name: the registry name (``"random"``, ``"greedy"``, ...), or a checkpoint's name.
        seed: the seed the agent was made with.
        rng: the agent's own ``np.random.Generator``.
        cheats: True only for agents that read the engine's hidden state (the oracle).
        batch_invariant: True when ``act_batch``'s action for a row depends on that row alone
            (no random draws, no arithmetic that varies with the batch's size): a tournament
            may then decide the rows of many blocks of deals in one call (see
            :mod:`agents.sharding`). False by default, which is always safe.
        rules: the :class:`~spoilfive_env.rules.Rules` of the table, when a tournament or the
            terminal game has told the agent (see :meth:`bind`); ``None`` otherwise.
    """

    name: str = "agent"
    cheats: bool = False
    batch_invariant: bool = False

    def __init__(self, seed: int | None = None):
        self.rng = make_generator(seed)  # refuses a seed that is not a whole number >= 0 or None
        self.seed = seed
        self.rules = None

    def reseed(self, seed: int | None) -> None:
        """Restart the agent's random stream from ``seed`` (refused, and nothing changed, unless a
        whole number 0 or more, or None)."""
        self.rng = make_generator(seed)
        self.seed = seed

    def bind(self, rules) -> None:
        """Tell the agent the rules of the table it is about to play (agents may ignore it)."""
        self.rules = rules

    def act(self, observation: dict) -> int:
        """One action for one AEC observation dict (``"observation"``, ``"action_mask"``)."""
        if not isinstance(observation, Mapping) or not {"observation", "action_mask"} <= observation.keys():
            got = (f"keys {sorted(map(str, observation))}" if isinstance(observation, Mapping)
                   else type(observation).__name__)
            raise ValueError("act() takes one AEC observation: a dict with 'observation' and 'action_mask' "
                             f"(what env.observe(agent) returns), got {got}")
        obs = np.asarray(observation["observation"], dtype=np.float32)[None, :]
        mask = np.asarray(observation["action_mask"]).astype(bool)[None, :]
        if obs.shape != (1, OBS_DIM) or mask.shape != (1, NUM_ACTIONS):
            raise ValueError(f"act() needs an observation of {OBS_DIM} numbers and a mask of {NUM_ACTIONS}, "
                             f"got {obs.shape[1:]} and {mask.shape[1:]}")
        if not mask.any():
            raise ValueError("act() needs an observation with at least one legal action in its mask")
        return int(self.act_batch(obs, mask)[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions ``(B,)`` int64 for observations ``(B, OBS_DIM)`` and legal masks ``(B, 107)``."""
        raise NotImplementedError(f"{type(self).__name__} must implement act_batch")

    def act_batch_state(self, core, games: np.ndarray, observations: np.ndarray,
                        masks: np.ndarray) -> np.ndarray:
        """Like :meth:`act_batch`, also given the core and the game rows being decided.

        Only a cheating agent (``cheats = True``) overrides this; the tournament calls it
        only for such agents. The default ignores the state.
        """
        return self.act_batch(observations, masks)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, seed={self.seed!r})"


def checked_batch(observations, masks) -> tuple[np.ndarray, np.ndarray]:
    """``act_batch``'s arguments as float32 ``(B, OBS_DIM)`` and bool ``(B, 107)``, or a ``ValueError``
    saying what is wrong (before any random draw): other shapes, or a row with no legal action,
    where no action could be legal."""
    observations = np.asarray(observations, dtype=np.float32)
    masks = np.asarray(masks)
    if observations.ndim != 2 or observations.shape[1] != OBS_DIM or masks.shape != (len(observations), NUM_ACTIONS):
        raise ValueError(f"act_batch needs observations (B, {OBS_DIM}) and masks (B, {NUM_ACTIONS}), "
                         f"got {observations.shape} and {masks.shape}")
    masks = masks.astype(bool, copy=False)
    if not masks.any(axis=1).all():
        raise ValueError(f"act_batch needs at least one legal action in every mask row; rows "
                         f"{np.flatnonzero(~masks.any(axis=1))[:5].tolist()} have none")
    return observations, masks


def sample_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` ``(B, 107)``, without a loop."""
    masks = np.asarray(masks, dtype=bool)
    scores = rng.random(masks.shape)
    scores[~masks] = -1.0
    return scores.argmax(axis=1)


def stream_seed(seed: int, stream: int, index: int) -> int:
    """Seed of agent ``index``'s own random stream ``stream`` under ``seed``.

    Each caller names its ``stream`` (a constant of its own), so that an env's opponents and a
    tournament's agents made from the same seed draw independent numbers.
    """
    return int(np.random.SeedSequence([int(seed), stream, index]).generate_state(1)[0])


def lineup_key(spec):
    """What makes two lineup entries one agent: the same name or path, or the very same object."""
    return os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else id(spec)


def distinct_entries(specs) -> tuple[list[int], np.ndarray]:
    """The distinct agents of a lineup (see :func:`lineup_key`).

    Returns:
        The position of each distinct agent's first entry, in order, and every entry's index
        into them (int ``(len(specs),)``).

    >>> distinct_entries(["spoiler", "random", "spoiler"])
    ([0, 1], array([0, 1, 0]))
    """
    first, index, keys = [], [], {}
    for position, spec in enumerate(specs):
        key = lineup_key(spec)
        if key not in keys:
            keys[key] = len(first)
            first.append(position)
        index.append(keys[key])
    return first, np.array(index, np.int64)
