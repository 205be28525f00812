"""Tianshou 2.0: each seat's own trajectory for self-play, and a vector env of one core batch.

Install it with ``pip install ".[tianshou]"`` (Python 3.11 or newer).

``tianshou.env.PettingZooEnv(spoilfive_env.env(num_players=N))`` works as it is (observations
``Batch(agent_id, obs, mask)``, the legal actions in ``mask``). What a turn-based game needs
besides is :class:`SeatTrajectories`: Tianshou stores a step on the transition of the seat that
moved, with the rewards of that step and the NEXT seat's observation as ``obs_next``. So when
the last card ends a hand only that seat's transition sees the hand's rewards and is marked
terminal, and every value bootstrap looks at another seat's view. Before the advantages are
computed, :class:`SeatTrajectories` makes each seat's transitions a trajectory of their own:
``obs_next`` becomes that seat's own next decision in the episode, each reward a step pays a
seat goes to that seat's latest decision up to the step (a hand's end pays every seat; under
``mode="game"`` hands end inside the episode, a game), and the seat's last decision of the
episode is marked terminal for it. GAE then runs over each seat's decisions as over a
single-agent episode (use ``gamma = 1``: a hand's result is all that counts). A hand cut short
by truncation (a wrapper's; the env itself never truncates) ends every seat's trajectory there
as terminal, with the rewards the cut step gave: no seat has an observation of its own after the
cut to bootstrap from. Where the collection stops inside an episode, each seat's last decision
there is marked truncated and bootstraps from its own view, so that no seat's advantages run on
into another game's decisions (a reward paid after it, in the next collection, has no decision
of that batch to go to).

It is a drop-in for Tianshou's ``MultiAgentOnPolicyAlgorithm``, built for any table size from
``env.agents``; ``examples/tianshou_ppo.py`` maps every seat to one shared ``PPO``::

    algorithm = SeatTrajectories(algorithms=[shared_ppo] * len(env.agents), env=env)

That route steps one game at a time. :class:`SpoilFiveTianshouVectorEnv` is a Tianshou vector env
(a ``BaseVectorEnv``) over ``num_envs`` games of one core batch, one learning seat each, the
opponents moving in batch between its decisions (the code of
:class:`~spoilfive_integrations.vector.SpoilFiveVectorEnv`). Tianshou's ``Collector``, its trainers
and a single-agent algorithm whose network reads ``Batch(obs, mask)`` take it with no wrapper:

* observations are ``Batch(obs=(R, OBS_DIM) float32, mask=(R, 107) bool)``, the legal actions in
  ``mask`` as in the AEC route (one masked actor serves both);
* ``step(action, id)`` steps only the games ``id`` (all when None), ``reset(env_id)`` restarts
  only those: a game whose episode ended waits for its ``reset`` (the ``Collector`` resets each
  one as it ends), and a step of it before that is refused;
* rewards are the learning seat's, summed over the opponents' moves that follow its action;
  episodes are never truncated; infos are empty dicts (``{"penalty": bool}`` under
  ``illegal_action="penalty"``). There is no ``env_id`` in them, which only ``AsyncCollector``
  reads: the games step together, so use ``Collector`` (``AsyncCollector`` itself says so of a
  synchronous env), and reading a dict per game makes Tianshou's collection about a quarter slower;
* ``seed(s)`` seeds the next reset of every game (one int, where ``DummyVectorEnv`` gives each
  env ``s + i``: the games share one generator), as does ``reset(seed=s)``. A seed in a
  collection's ``gym_reset_kwargs`` is refused at the first game's end, since the ``Collector``
  passes it to every game's reset: seed a collection with ``envs.seed(s)`` and
  ``collect(..., reset_before_collect=True)``;
* ``action_space`` is one ``Discrete(107)`` per game. It knows no mask, so a collection with
  ``random=True`` draws illegal actions: those are refused, or penalised under
  ``illegal_action="penalty"``.

No wrapper is needed, nor :class:`SeatTrajectories`: each game's transitions are the one learning
seat's own trajectory::

    envs = SpoilFiveTianshouVectorEnv(num_envs=256, opponents="random", seed=0)
    collector = Collector(ppo, envs, VectorReplayBuffer(steps * 256, 256))

>>> from spoilfive_integrations.tianshou import SpoilFiveTianshouVectorEnv
>>> envs = SpoilFiveTianshouVectorEnv(num_envs=4, opponents="random", seed=0)
>>> observations, infos = envs.reset()
>>> observations.obs.shape[0], observations.mask.shape, len(infos)
(4, (4, 107), 4)
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from gymnasium import spaces
from tianshou.algorithm.algorithm_base import Algorithm, OnPolicyAlgorithm, Policy
from tianshou.algorithm.multiagent.marl import MultiAgentOnPolicyAlgorithm, MultiAgentPolicy
from tianshou.data import Batch
from tianshou.env import BaseVectorEnv, PettingZooEnv

from agents.base import Agent, checked_batch
from agents.policy import checked_greedy, checked_name, legal_choice, torch_threads
from spoilfive_env.actions import NUM_ACTIONS, action_array
from spoilfive_env.env import render_table
from spoilfive_env.rules import is_integer

from .vector import (
    LearnerBatch,
    LearnerBatchView,
    check_env_keywords,
    checked_reset,
    own_keywords,
    refuse_seed_list,
    single_observation_space,
)


class SeatTrajectories(MultiAgentOnPolicyAlgorithm):
    """Tianshou's multi-agent on-policy algorithm over each seat's own trajectory (module docstring).

    Works with any number of environments per collector: a seat's trajectory never leaves the
    game (the sub-buffer) it was played in.

    Args:
        algorithms: one Tianshou on-policy algorithm per seat (the same object for a shared policy).
        env: the ``PettingZooEnv`` the collector steps (for its agent -> seat map).

    Raises:
        ValueError: ``env`` is not a ``PettingZooEnv``, or ``algorithms`` is not a list of one on-policy
            algorithm per seat of it.
    """

    def __init__(self, *, algorithms, env: PettingZooEnv):
        # Type names, not reprs: an algorithm's repr prints its whole network.
        if not isinstance(env, PettingZooEnv):
            raise ValueError(f"env ({type(env).__name__}) is not allowed: give the tianshou.env.PettingZooEnv the "
                             "collector steps, which wraps the AEC env: "
                             "PettingZooEnv(spoilfive_env.env(num_players=3))")
        seats = len(env.agents)
        if not isinstance(algorithms, (list, tuple)) or len(algorithms) != seats:
            given = f"{len(algorithms)} of them" if isinstance(algorithms, (list, tuple)) else type(algorithms).__name__
            raise ValueError(f"algorithms ({given}) is not allowed: give a list of {seats} Tianshou on-policy "
                             f"algorithms, one per seat of env's {seats}-player table (the same object for a "
                             "shared policy)")
        for seat, algorithm in enumerate(algorithms):
            if not isinstance(algorithm, OnPolicyAlgorithm):
                raise ValueError(f"algorithms[{seat}] ({type(algorithm).__name__}) is not allowed: give a Tianshou "
                                 "on-policy algorithm (an OnPolicyAlgorithm, such as tianshou.algorithm.PPO)")
        super().__init__(algorithms=algorithms, env=env)
        self.seat_of_agent = env.agent_idx

    def _preprocess_batch(self, batch, buffer, indices):
        seats = np.array([self.seat_of_agent[agent] for agent in batch.obs.agent_id])
        steps = np.arange(len(seats))
        ends = np.asarray(batch.terminated, bool) | np.asarray(batch.truncated, bool)
        raw = np.asarray(batch.rew)  # (transitions, seats): every seat's rewards of each step
        # Each environment's transitions lie in a sub-buffer of their own, in time order; an episode (a hand, or
        # a game under mode="game") starts after an episode's end or where another environment's start.
        game = np.searchsorted(buffer.subbuffer_edges, indices, side="right") - 1
        starts = np.concatenate([[True], ends[:-1] | (game[1:] != game[:-1])])
        episode = np.cumsum(starts) - 1  # episode number of each transition
        finished = np.zeros(episode[-1] + 1 if len(episode) else 0, bool)
        finished[episode[ends]] = True
        # Each seat's decisions of an episode in time order; `following` is the seat's next one.
        order = np.lexsort((steps, seats, episode))
        same = (episode[order][1:] == episode[order][:-1]) & (seats[order][1:] == seats[order][:-1])
        following = np.full(len(seats), -1)
        following[order[:-1][same]] = order[1:][same]
        has_next = following >= 0
        batch.obs_next[has_next] = batch.obs[following[has_next]]
        # A seat's last decision of a finished episode is terminal; of one the collection stopped in, truncated,
        # bootstrapping from its own view (Tianshou marks only each sub-buffer's last transition unfinished, so
        # the other seats' advantages ran on into the next game's).
        terminated = ~has_next & finished[episode]
        truncated = ~has_next & ~finished[episode]
        batch.obs_next[truncated] = batch.obs[truncated]
        # Each reward to the seat it is paid to, at that seat's latest decision of the episode up to it: a hand's
        # end pays every seat, and under mode="game" hands end inside the episode. A reward before the seat's
        # first decision in this batch (an episode begun in an earlier collection) has no decision to go to.
        paid_at, paid_to = np.nonzero(raw)
        width = len(seats) + 1
        keys = (episode[order] * raw.shape[1] + seats[order]) * width + order  # sorted: order is time order
        wanted = (episode[paid_at] * raw.shape[1] + paid_to) * width + paid_at
        found = np.searchsorted(keys, wanted, side="right") - 1
        decision = order[np.clip(found, 0, None)]
        credited = (found >= 0) & (episode[decision] == episode[paid_at]) & (seats[decision] == paid_to)
        rewards = np.zeros_like(raw)
        np.add.at(rewards, (decision[credited], paid_to[credited]), raw[paid_at[credited], paid_to[credited]])
        batch.rew, batch.terminated, batch.truncated = rewards, terminated, truncated
        batch.done = terminated | truncated
        buffer.rew[indices], buffer.terminated[indices] = rewards, terminated
        buffer.truncated[indices], buffer.done[indices] = truncated, batch.done
        return super()._preprocess_batch(batch, buffer, indices)


class SpoilFiveTianshouVectorEnv(LearnerBatchView, BaseVectorEnv):
    """``num_envs`` games of one core batch as a Tianshou vector env, one learning seat each (module docstring).

    Args:
        num_envs, num_players, opponents, seat, illegal_action, mode, reward, **rules: as
            :class:`~spoilfive_integrations.vector.SpoilFiveVectorEnv` takes them (64 games by default).
        seed: seed of the first reset of every game (``seed()`` sets the next one).

    Raises:
        ValueError: at construction, for what the vector env refuses, or a bad ``seed``.
    """

    def __init__(self, num_envs: int = 64, *, num_players: int = 4, opponents="spoiler", seat: int | None = None,
                 illegal_action: str = "raise", seed: int | None = None, mode: str = "hand",
                 reward: str = "equity", **rules):
        name = type(self).__name__
        seed = checked_reset(seed, None, name)
        check_env_keywords(rules, name, own_keywords(type(self)))
        self.batch = LearnerBatch(num_envs, num_players=num_players, opponents=opponents, seat=seat,
                                  illegal_action=illegal_action, mode=mode, reward=reward, **rules)
        # BaseVectorEnv's own state, without its workers: the one core batch stands for them all.
        self.env_num = self.wait_num = self.batch.num_envs
        self.timeout = None
        self.is_async = False
        self.waiting_conn, self.waiting_id = [], []
        self.ready_id = list(range(self.env_num))
        self.is_closed = False
        observation_space = spaces.Dict({"obs": single_observation_space(), "mask": spaces.MultiBinary(NUM_ACTIONS)})
        # What BaseVectorEnv reads from each game through get_env_attr (its GYM_RESERVED_KEYS).
        self._gym_attributes = {"metadata": {"render_modes": ["ansi"]}, "reward_range": (-float("inf"), float("inf")),
                                "spec": None, "action_space": spaces.Discrete(NUM_ACTIONS),
                                "observation_space": observation_space}
        self._all_games = np.arange(self.env_num)
        self._next_seed = seed  # the seed of the next reset of every game, from seed= or seed()
        self._seat_rng = np.random.default_rng(seed)
        self._started = False  # every game has been dealt a first hand

    def _assert_is_not_closed(self) -> None:
        """Tianshou's check as a ``ValueError``, which ``python -O`` keeps."""
        if self.is_closed:
            raise ValueError(f"{type(self).__name__} was closed: make a new one")

    def _games(self, ids, argument: str) -> np.ndarray:
        """Tianshou's ``id``/``env_id`` (None, one game index, or a 1-D list or array of them) as int64 game
        indices, each checked and at most once."""
        if ids is None:
            return self._all_games
        if is_integer(ids):
            rows = [ids]
        elif isinstance(ids, (list, tuple, range)) or (isinstance(ids, np.ndarray) and ids.ndim == 1):
            rows = list(ids)
        else:
            rows = None
        if rows is None or not all(is_integer(row) and 0 <= row < self.env_num for row in rows) \
                or len(set(map(int, rows))) != len(rows):
            raise ValueError(f"{argument}={ids!r} is not allowed: give game indices 0-{self.env_num - 1}, each at most "
                             "once, or None for every game")
        return np.array(rows, np.int64).reshape(-1)

    def get_env_attr(self, key: str, id=None) -> list:
        """``key`` of every game of ``id``: the spaces, ``metadata``, ``spec`` (None), or an attribute of the env
        (one value for the whole batch, repeated)."""
        self._assert_is_not_closed()
        rows = self._games(id, "id")
        value = self._gym_attributes[key] if key in self._gym_attributes else getattr(self, key)
        return [value for _ in rows]

    def set_env_attr(self, key: str, value, id=None) -> None:
        """Set an attribute of your own on the env, for every game at once (one batch: a subset of games is
        refused). The env's own attributes are refused: ``set_opponents`` changes the opponents."""
        self._assert_is_not_closed()
        rows = self._games(id, "id")
        if len(rows) != self.env_num:
            raise ValueError(f"id={id!r} is not allowed for set_env_attr({key!r}): it applies to every game of the "
                             "batch at once, so give id=None")
        if key in self._gym_attributes or hasattr(self, key):
            raise ValueError(f"set_env_attr({key!r}) is not allowed: {key} is the env's own; set attributes of your "
                             "own (set_opponents() changes the opponents)")
        setattr(self, key, value)

    def seed(self, seed: int | None = None) -> list:
        """The seed of the next reset of every game, checked now (a refused one changes nothing). One int, or
        None: a list of seeds, one per game, is refused, since the games draw from one generator."""
        self._assert_is_not_closed()
        self._next_seed = self._checked_seed(seed)
        return [self._next_seed for _ in range(self.env_num)]

    def _checked_seed(self, seed) -> int | None:
        refuse_seed_list(seed, self.env_num)
        return checked_reset(seed, None, type(self).__name__)

    def reset(self, env_id=None, **kwargs):
        """New episodes in the games ``env_id`` (all when None): ``(Batch(obs, mask), infos)`` for those games.

        ``seed`` (an int, with every game restarted) reseeds the deals, seats and opponents, as ``seed()``
        does for the next such reset; ``options`` takes only None or ``{}``.
        """
        self._assert_is_not_closed()
        name = type(self).__name__
        unknown = sorted(set(kwargs) - {"seed", "options"})
        if unknown:
            raise ValueError(f"{name}.reset() got {', '.join(unknown)}: it takes env_id, seed and options")
        rows = self._games(env_id, "env_id")
        seed = self._checked_seed(kwargs.get("seed"))
        checked_reset(None, kwargs.get("options"), name)
        every_game = len(rows) == self.env_num
        if not every_game:
            if seed is not None:
                raise ValueError(f"seed={seed} with env_id={env_id!r} is not allowed: the games draw from one "
                                 "generator, so a seed restarts every game; give env_id=None (a Collector passes "
                                 "its gym_reset_kwargs to each game's reset as it ends: seed a collection with "
                                 "envs.seed(s) and collect(reset_before_collect=True) instead)")
            if not self._started:
                raise ValueError(f"env_id={env_id!r} before the first reset(): call reset() for every game first")
            if self.batch.failure is not None:
                raise ValueError(f"the last step failed in the move of {self.batch.failure}, leaving every game "
                                 "half-stepped: call reset() for every game")
        seed = self._next_seed if seed is None and every_game else seed
        if seed is not None:
            self.batch.seed(seed)  # first: an opponent's reseed may fail, and then nothing has changed
            self._seat_rng = np.random.default_rng(seed)
            self._next_seed = None
        restarting = np.zeros(self.env_num, bool)
        restarting[rows] = True
        self.batch.start(restarting, self._seat_rng)
        self._started = True
        return self._observe(rows), self._infos(rows, None)

    def step(self, action, id=None):
        """The learners' ``action`` (one per game of ``id``, all when None) and the opponents' replies.

        Returns ``(Batch(obs, mask), rewards, terminated, truncated, infos)`` for the games of ``id``, in
        its order. A game whose episode ended is refused until ``reset(env_id=...)`` restarts it.
        """
        self._assert_is_not_closed()
        if not self._started:
            raise ValueError("step() before reset(): call reset() to deal the first hands")
        batch = self.batch
        batch.check_playable()
        rows = self._games(id, "id")
        if action is None:
            raise ValueError("action=None is not allowed: this vector env is synchronous, so give one action per "
                             "game of id")
        given = action_array(action, (len(rows),))
        ended = rows[batch.over[rows]]
        if len(ended):
            raise ValueError(f"game(s) {', '.join(map(str, ended))} ended: restart them with "
                             "reset(env_id=...) before stepping them")
        rewards, terminated, illegal = batch.step_games(rows, given)
        return (self._observe(rows), rewards[rows], terminated[rows], np.zeros(len(rows), bool),
                self._infos(rows, illegal))

    def _observe(self, rows: np.ndarray) -> Batch:
        masks = self.batch.masks(over_fill=1)  # a finished game's row all ones, so a masked softmax stays finite
        if len(rows) == self.env_num and (rows == self._all_games).all():
            return Batch(obs=self.batch.observe(), mask=masks.astype(bool))
        return Batch(obs=self.core.observe(self.batch.seat, games=rows), mask=masks[rows].astype(bool))

    def _infos(self, rows: np.ndarray, penalized: np.ndarray | None) -> np.ndarray:
        """One info dict per game of ``rows``: empty, or ``{"penalty": bool}`` under ``illegal_action="penalty"``."""
        infos = np.empty(len(rows), dtype=object)
        if self.batch.illegal_action == "penalty":
            flags = np.zeros(self.env_num, bool) if penalized is None else penalized
            infos[:] = [{"penalty": bool(flags[game])} for game in rows]
        else:
            infos[:] = [{} for _ in rows]
        return infos

    def set_opponents(self, opponents) -> None:
        """Seat new opponents (any ``opponents`` spec) from the next decision on, in every game."""
        self.batch.set_opponents(opponents)

    def render(self, **kwargs) -> list[str]:
        """One text table per game, seen from its learning seat."""
        self._assert_is_not_closed()
        if not self._started:
            raise ValueError("render() before reset(): call reset() to deal the first hands")
        return [render_table(self.core, viewer=int(self.batch.seat[game]), game=game) for game in self._all_games]

    def close(self) -> None:
        self._assert_is_not_closed()
        self.is_closed = True


class TianshouPolicyAgent(Agent):
    """A frozen copy of a Tianshou policy over the 107 actions as an :class:`agents.base.Agent`.

    For tournaments (``agents.evaluate``) and self-play: ``envs.set_opponents(TianshouPolicyAgent(ppo))``
    seats a snapshot of the learner in every other seat of a :class:`SpoilFiveTianshouVectorEnv`. The
    policy's actor must read observations as this module's routes give them, ``Batch(obs, mask)``, and its
    ``dist_fn`` make a categorical distribution, as PPO's ``DiscreteActorPolicy`` does with the example's
    masked actor. Only legal actions are played, whatever the policy makes of the mask. The actor is called
    directly, not the policy's ``forward``, which would sample from torch's global generator: sampling
    (``greedy=False``) draws from the agent's own generator, so a seeded agent repeats its moves.

    Args:
        policy: a Tianshou ``Policy`` (``algorithm.policy``), or the algorithm itself; a copy is taken.
        seed: seed of the agent's generator (sampling only).
        greedy: play the most probable legal action instead of sampling.
        name: the name shown in tournaments.

    Raises:
        ValueError: ``policy`` is neither a Tianshou policy nor an algorithm, or has no actor and ``dist_fn``
            (a ``MultiAgentPolicy``: give one agent's policy).
    """

    name = "tianshou"

    def __init__(self, policy, seed: int | None = None, *, greedy: bool = False, name: str | None = None):
        if isinstance(policy, Algorithm):
            policy = policy.policy
        if not isinstance(policy, Policy):
            raise ValueError(f"policy ({type(policy).__name__}) is not allowed: give a Tianshou policy "
                             "(algorithm.policy) or algorithm, whose actor reads Batch(obs, mask)")
        if isinstance(policy, MultiAgentPolicy):
            raise ValueError("policy (MultiAgentPolicy) is not allowed: it plays every seat of an AEC table through "
                             "a policy per agent; give one of them (algorithm.policy.policies['player_0'])")
        if not (hasattr(policy, "actor") and hasattr(policy, "dist_fn")):
            raise ValueError(f"policy ({type(policy).__name__}) is not allowed: give a policy with an actor and a "
                             "dist_fn (an actor-critic's, such as PPO's DiscreteActorPolicy)")
        greedy, name = checked_greedy(greedy), checked_name(name, self.name)
        super().__init__(seed)
        self.policy = copy.deepcopy(policy).to("cpu").eval()
        self.greedy = greedy
        if name is not None:
            self.name = name

    @torch.inference_mode()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations, masks = checked_batch(observations, masks)  # before the network: its errors name no input
        if len(masks) == 0:
            return np.zeros(0, np.int64)
        with torch_threads(1):  # small batches beside environment stepping
            scores, _ = self.policy.actor(Batch(obs=observations, mask=masks), state=None, info=Batch())
            distribution = self.policy.dist_fn(scores)
        if not isinstance(distribution, torch.distributions.Categorical):
            raise ValueError(f"the policy's dist_fn gives a {type(distribution).__name__}: a "
                             f"TianshouPolicyAgent needs a Categorical over the {NUM_ACTIONS} actions")
        return legal_choice(distribution.logits.numpy(), masks, self.greedy, self.rng)


__all__ = ["SeatTrajectories", "SpoilFiveTianshouVectorEnv", "TianshouPolicyAgent"]
