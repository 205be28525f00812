"""RLlib (new API stack): many games of one core as one ``MultiAgentEnv``, and a masking RLModule.

RLlib pays a fixed Python cost per environment step (connectors, episode bookkeeping, one
module forward). Through ``PettingZooEnv`` on the AEC environment each of those steps
moves one card; here each step moves one decision in every game of a core batch, so the
cost is paid once per batch and the module's forward pass sees all the batch's acting seats.

* :class:`SpoilFiveMultiAgentEnv`: ``num_games`` games stepped together. Agent ids are
  ``"g{game}_p{seat}"``; an episode is one hand (``mode="hand"``) or one game
  (``mode="game"``) in every game of the batch, and ends when the last of them ends.
  Observations go only to the seat to act in each unfinished game, as a dict with the
  AEC environment's keys, ``{"observation": float32 (OBS_DIM,), "action_mask": int8 (107,)}``.
  A seat's reward arrives when its game's hand ends (RLlib credits it to that seat's last
  action); the seats of a finished game are asked nothing more, and are terminated with the
  episode (:func:`episode_end` says why).
* :class:`SpoilFiveAgainstOpponentsEnv`: ``num_games`` games with one learning seat each against named
  ``opponents``, which move in batch between its decisions; the agents are the learning seats, ``"g{game}"``.
* :class:`SpoilFiveMaskedModule`: a torch ``RLModule`` with ``ValueFunctionAPI`` (PPO,
  APPO, IMPALA) over the project's :class:`agents.policy.PolicyNet`; it reads
  ``"observation"`` and ``"action_mask"`` from that dict and gives illegal actions the
  lowest finite logit, so they are never sampled. :func:`policy_agent` turns a trained
  module into an :class:`agents.base.Agent` for ``agents.evaluate``.

RLlib's environment pre-check steps ``action_space.sample()``, unmasked. With the default
``illegal_action="penalty"`` the check passes: an illegal action ends that game's hand
with the seeds' penalty (docs/rules.md), the one the Gymnasium env gives
(:func:`spoilfive_integrations.vector.forfeit_rewards`): the offender's reward is
that of a lost hand, his antes and (under ``"equity"``) his share of the pool as the hand
began; every other seat gets 0. The masking module never plays one (the env's
``illegal_actions`` attribute counts them). ``illegal_action="raise"`` raises ``ValueError``
as the AEC environment does (then set ``config.environment(disable_env_checking=True)``).

>>> from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv
>>> env = SpoilFiveMultiAgentEnv({"num_games": 3, "num_players": 4})
>>> observations, infos = env.reset(seed=0)
>>> len(observations), sorted(observations[next(iter(observations))])
(3, ['action_mask', 'observation'])

Training (see ``examples/rllib_ppo.py``)::

    config = (PPOConfig()
              .environment(SpoilFiveMultiAgentEnv, env_config={"num_games": 64, "num_players": 4})
              .multi_agent(policies={"shared"}, policy_mapping_fn=shared_policy)
              .rl_module(rl_module_spec=masked_module_spec()))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import gymnasium
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.env_context import EnvContext
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from agents.policy import (
    ENCODINGS,
    MAX_HIDDEN_LAYERS,
    MAX_HIDDEN_WIDTH,
    PolicyAgent,
    PolicyNet,
    checked_greedy,
    checked_name,
    network_too_large,
    within_layer_limits,
)
from spoilfive_env.actions import NUM_ACTIONS, action_id
from spoilfive_env.core import SpoilFiveCore, checked_seed
from spoilfive_env.env import raw_env
from spoilfive_env.observation import OBS_DIM
from spoilfive_env.rules import is_integer, table_rules

from .vector import (
    ILLEGAL_ACTION_MODES,
    LearnerBatch,
    LearnerBatchView,
    check_env_fits_in_memory,
    check_env_keywords,
    checked_reset,
    forfeit_rewards,
    not_legal,
)

SHARED_POLICY = "shared"
DEFAULT_HIDDEN = (256, 256)
CONFIG_KEYS = ("num_games", "num_players", "mode", "reward", "illegal_action", "seed")
"""The env's own keys of ``env_config``, besides the rules options."""
RLLIB_MEMORY = (14_500, 400 + 4 * OBS_DIM)
"""Bytes a game and bytes a seat that :class:`SpoilFiveMultiAgentEnv` really uses at its peak (the agent
ids and the dicts of each step add a seat's share), measured as
:data:`~spoilfive_integrations.vector.VECTOR_MEMORY` is, with the first legal action for every seat
asked (14,856 and 17,781 bytes a game at 2 and 10 players), rounded up; and the last step's observation of
every seat (:func:`final_observations`), 4 bytes a float, a seat's share again."""


def agent_id(game: int, seat: int) -> str:
    """The RLlib agent id of ``seat`` in ``game``: ``"g{game}_p{seat}"``."""
    return f"g{game}_p{seat}"


def episode_end(agents: list[str], all_done: bool) -> dict:
    """A step's ``terminated`` dict: every agent at the episode's end, none before.

    A game that ends before the others waits: its agents are asked nothing more (no observation) and are
    terminated with the episode, each with a last observation (:func:`final_observations`). Terminating them as
    their game ends is what RLlib before 2.58 cannot take: an agent terminated at the last step of a sample, while
    the episode goes on, fails the next sample with ``KeyError: <agent id>`` (ray-project/ray#61602)."""
    return {**dict.fromkeys(agents, True), "__all__": True} if all_done else {"__all__": False}


def final_observations(agents: list[str], observations: np.ndarray) -> dict:
    """The observations of the step that ends the episode: one for every agent (``observations``, in the order of
    ``agents``), each with an all-ones mask, a finished game's (nothing is asked of it).

    RLlib records an agent's last transition only when its termination comes with an observation. Without one,
    an agent whose game ended before a sample's boundary lost its last action and its hand's reward in the
    sample after it: it had only a lookback observation there (ray-project/ray#44677; with the example's
    defaults, 3 to 4% of the seat episodes of a sample lost their reward so, on Ray 2.60 and 2.49 alike)."""
    ones = np.ones(NUM_ACTIONS, np.int8)
    return {aid: {"observation": observation, "action_mask": ones} for aid, observation in zip(agents, observations)}


def checked_action_dict(action_dict: Mapping, index: Mapping[str, int], illegal_action: str, ids: str,
                        legal_text=None) -> tuple[np.ndarray, np.ndarray]:
    """The rows (``index[agent id]``) and the actions (int64) of ``action_dict``, every key and value checked.

    An unknown key is refused naming the ``ids`` there are; a value that is not a whole number is refused under
    both ``illegal_action`` modes; one outside the action ids is refused under ``"raise"`` (with
    ``legal_text(row)``, the legal actions, when given) and is an illegal action under ``"penalty"`` (returned as
    ``NUM_ACTIONS``, which no mask allows, so that it is penalised)."""
    rows = np.empty(len(action_dict), np.int64)
    chosen = np.empty(len(action_dict), np.int64)
    for i, (aid, value) in enumerate(action_dict.items()):
        row = index.get(aid) if isinstance(aid, str) else None
        if row is None:
            raise ValueError(f"unknown agent id {aid!r}: ids are {ids}")
        try:
            action = action_id(value)
        except ValueError as error:
            raise ValueError(f"{aid}: {error}") from None
        if not 0 <= action < NUM_ACTIONS:
            if illegal_action == "raise":
                legal = f"; legal actions: {legal_text(row)}" if legal_text else ""
                raise ValueError(f"illegal action {action} for {aid}: action ids are 0-{NUM_ACTIONS - 1}{legal}")
            action = NUM_ACTIONS  # out of the table, so illegal: penalised below
        rows[i], chosen[i] = row, action
    return rows, chosen


_ENVS_MADE = "_spoilfive_envs_made"
"""The attribute an ``EnvContext`` counts the envs made from it in (:meth:`CoreBatchMultiAgentEnv.read_config`)."""


def _seed_at(place: tuple[int, int], seed: int | None) -> int | None:
    """``seed`` for the env at ``place`` (its runner's ``worker_index``, its index in the runner): itself at
    ``(0, 0)``, else mixed with the place. RLlib's pre-check resets every env it makes with ``seed=42``, and
    then samples on (without ``config.debugging(seed=...)``, from the env's own generator): every env of every
    runner would deal the same games."""
    if seed is None or place == (0, 0):
        return seed
    return int(np.random.SeedSequence([seed, *place]).generate_state(1, np.uint64)[0] >> np.uint64(1))


class CoreBatchMultiAgentEnv(MultiAgentEnv):
    """What the two RLlib envs of one core batch share: their ``env_config`` read and checked, and their agents
    declared with their spaces."""

    illegal_actions: int
    """Penalised actions since construction (RLlib's pre-check makes some)."""

    @staticmethod
    def read_config(config, own: tuple[str, ...], env_name: str,
                    hints: Mapping[str, str]) -> tuple[dict, int, int | None, tuple[int, int]]:
        """RLlib's ``env_config`` (a dict or ``EnvContext``) checked: ``(the other options, num_games, seed, place)``,
        the seed plus the env runner's ``worker_index`` (mixed with the env's index in its runner after the
        first), the place ``(worker_index, index)`` for :func:`_seed_at`; an unknown key refused naming ``own``
        keys and the rules options (``hints``: a sentence for a key that belongs elsewhere)."""
        if config is not None and not isinstance(config, Mapping):
            raise ValueError(f"config must be a dict of env options (RLlib's env_config), got {type(config).__name__}")
        options = dict(config or {})
        check_env_keywords({key: value for key, value in options.items() if key not in own}, env_name, own, hints)
        num_games = options.pop("num_games", 64)
        if not is_integer(num_games) or num_games < 1:
            raise ValueError(f"num_games={num_games!r} is not allowed: it must be a positive integer")
        worker = int(getattr(config, "worker_index", 0) or 0)
        # RLlib (2.60) makes every env of an env runner (num_envs_per_env_runner) from one EnvContext, whose
        # vector_index stays 0: counted on it, each env has a place of its own.
        index = int(getattr(config, "vector_index", 0) or 0)
        if isinstance(config, EnvContext):
            index += config.__dict__.get(_ENVS_MADE, 0)
            config.__dict__[_ENVS_MADE] = config.__dict__.get(_ENVS_MADE, 0) + 1
        seed = checked_seed(options.pop("seed", None))
        if seed is not None:
            seed = _seed_at((0, index), seed + worker)  # the first env of a runner: seed + worker_index, as before
        return options, int(num_games), seed, (worker, index)

    def declare_agents(self, ids: list[str], num_players: int) -> None:
        """``ids`` as the env's agents (``possible_agents``, each one's row in :attr:`_index`), each observing the AEC
        env's dict at a table of ``num_players`` and choosing one of the action ids."""
        self._ids = np.array(ids, dtype=object)
        self._index = {aid: row for row, aid in enumerate(ids)}
        self.possible_agents = list(ids)
        self.agents = self.possible_agents[:]
        space = raw_env(num_players=num_players).observation_space("player_0")
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {aid: gymnasium.spaces.Discrete(NUM_ACTIONS) for aid in self.possible_agents}
        self.illegal_actions = 0
        self._started = False  # reset() has dealt

    def check_step(self, action_dict) -> None:
        """A ``ValueError`` for a step before the first reset, or one whose actions are not a dict."""
        if not self._started:
            raise ValueError("step() before reset(): call reset() to deal the first hands")
        if not isinstance(action_dict, Mapping):
            raise ValueError(f"step() takes a dict {{agent id: action}}, got {type(action_dict).__name__}")


class SpoilFiveMultiAgentEnv(CoreBatchMultiAgentEnv):
    """``num_games`` Spoil Five games on one core, as one RLlib ``MultiAgentEnv``.

    Args:
        config: RLlib's ``env_config`` (a dict or ``EnvContext``) with the keys
            ``num_games`` (default 64), ``num_players`` (4), ``mode`` (``"hand"``),
            ``reward`` (``"equity"``), ``illegal_action`` (``"penalty"``), ``seed``
            (``None``; each RLlib worker adds its ``worker_index``; under RLlib's pre-check, which resets every env
            with seed 42, seed a run with ``config.debugging(seed=S)``), and any rules option
            by name (``jink_bonus=1``, ``preset="hoyle"``).

    Raises:
        ValueError: a bad ``num_games``, ``mode``, ``reward``, ``illegal_action`` or rule.
    """

    def __init__(self, config: dict | None = None):
        super().__init__()
        options, num_games, seed, self._place = self.read_config(
            config, CONFIG_KEYS, "SpoilFiveMultiAgentEnv",
            {"num_envs": "the number of games is num_games",
             "opponents": "RLlib's policies play every seat here (policy_mapping_fn)",
             "seat": "RLlib's policies play every seat here (policy_mapping_fn)",
             "render_mode": "this env does not render"})
        num_players = options.pop("num_players", 4)
        mode = options.pop("mode", "hand")
        reward = options.pop("reward", "equity")
        illegal_action = options.pop("illegal_action", "penalty")
        # (mode and reward: SpoilFiveCore checks them)
        if not isinstance(illegal_action, str) or illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action={illegal_action!r} is not allowed: choose one of "
                             f"{', '.join(ILLEGAL_ACTION_MODES)}")
        self.rules = table_rules(num_players, **options)
        self.illegal_action = illegal_action
        self.num_games = B = num_games
        self.num_players = n = self.rules.num_players
        check_env_fits_in_memory(B, n, "num_games", RLLIB_MEMORY)
        self.core = SpoilFiveCore(B, rules=self.rules, mode=mode, reward=reward, seed=seed, deal=False)
        self.declare_agents([agent_id(g, s) for g in range(B) for s in range(n)], n)
        self._forfeited = np.zeros(B, bool)

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal a new episode in every game; observations of the seat to act in each."""
        seed = _seed_at(self._place, checked_reset(seed, options, type(self).__name__))
        if seed is not None:
            self.core.rng = np.random.default_rng(seed)
        self.core.reset()
        self._started = True
        self._forfeited[:] = False
        self.agents = self.possible_agents[:]
        return self._observations(np.ones(self.num_games, bool)), {}

    def step(self, action_dict: dict):
        """Apply the actions of the seats that were asked to act (at most one per game)."""
        self.check_step(action_dict)
        B, n = self.num_games, self.num_players
        rows, chosen = checked_action_dict(action_dict, self._index, self.illegal_action, f"'g<game>_p<seat>', "
                                           f"games 0-{self.num_games - 1}, seats 0-{self.num_players - 1}")
        asked = self.core.current_player + np.arange(B) * n  # flat index of the seat to act
        waiting = ~(self.core.done | self._forfeited)
        games = rows // n
        if len(games) != len(np.unique(games)) or not (waiting[games] & (asked[games] == rows)).all():
            wrong = [aid for aid, g, r in zip(action_dict, games, rows) if not (waiting[g] and asked[g] == r)]
            raise ValueError(f"actions for agents not asked to act: {wrong[:5]}; act only for the agents "
                             "of the last observations")
        actions = np.zeros(B, np.int64)
        actions[games] = chosen
        moving = np.zeros(B, bool)
        moving[games] = True
        rewards = np.zeros((B, n), np.float32)
        forfeited_now = np.zeros(B, bool)
        if self.illegal_action == "penalty":
            illegal = moving & not_legal(self.core, actions)
            if illegal.any():
                forfeited_now = illegal
                self._forfeited |= illegal
                moving &= ~illegal
                offenders = np.flatnonzero(illegal)
                seats = self.core.current_player[offenders]
                rewards[offenders, seats] = forfeit_rewards(self.core, offenders, seats)
                self.illegal_actions += len(offenders)
        hand_rewards, ended = self.core.step(actions, where=moving)
        rewards += hand_rewards
        ended |= forfeited_now
        all_done = bool((self.core.done | self._forfeited).all())

        # Rewards for every seat that acted (0 until its hand ends), every seat of an ended game,
        # and every other seat a hand's end pays (mode="game": hands end inside the episode).
        flat = rewards.ravel()
        ended_rows = (np.flatnonzero(ended)[:, None] * n + np.arange(n)).ravel()
        rewarded = np.union1d(np.union1d(rows, ended_rows), np.flatnonzero(flat))
        reward_dict = dict(zip(self._ids[rewarded].tolist(), flat[rewarded].tolist()))
        terminated = episode_end(self.possible_agents, all_done)
        if all_done:
            every_seat = np.stack([self.core.observe(np.full(B, seat)) for seat in range(n)], axis=1)
            observations = final_observations(self.possible_agents, every_seat.reshape(B * n, -1))
        else:
            observations = self._observations(~(self.core.done | self._forfeited))
        return observations, reward_dict, terminated, {"__all__": False}, {}

    def _observations(self, games_mask: np.ndarray) -> dict:
        """``{agent id: {"observation", "action_mask"}}`` of the seat to act in ``games_mask`` (one game at least: the
        episode's last step observes every seat instead)."""
        games = np.flatnonzero(games_mask)
        observations = self.core.observe(games=games)
        masks = self.core.legal_mask()[games].astype(np.int8)
        ids = self._ids[games * self.num_players + self.core.current_player[games]]
        return {aid: {"observation": obs, "action_mask": mask}
                for aid, obs, mask in zip(ids.tolist(), observations, masks)}


OPPONENTS_CONFIG_KEYS = ("num_games", "num_players", "opponents", "seat", "mode", "reward", "illegal_action", "seed")
"""The env's own keys of :class:`SpoilFiveAgainstOpponentsEnv`'s ``env_config``, besides the rules options."""


def game_agent_id(game: int) -> str:
    """The RLlib agent id of the learning seat of ``game`` in :class:`SpoilFiveAgainstOpponentsEnv`: ``"g{game}"``."""
    return f"g{game}"


class SpoilFiveAgainstOpponentsEnv(LearnerBatchView, CoreBatchMultiAgentEnv):
    """``num_games`` games of one core batch, one learning seat each against named opponents, as one RLlib
    ``MultiAgentEnv``.

    What the Gymnasium vector env is to a single-agent library, for RLlib on any supported Ray: its agents are
    the learning seats only, ``"g{game}"``, one a game (the seat itself is drawn at each reset unless ``seat`` is
    given; :attr:`seats` says which). Between the learner's decisions the opponents move in batch
    (:class:`~spoilfive_integrations.vector.LearnerBatch`, the code of the Gymnasium vector env). An episode is one
    hand (``mode="hand"``) or one game (``mode="game"``) in every game, and ends when the last of them ends; a
    game that ended waits, asked nothing more, and its agent is terminated with the episode (:func:`episode_end`).
    Observations are the multi-agent env's dict
    (``"observation"``, ``"action_mask"``), so :class:`SpoilFiveMaskedModule` plays them; a reward is the learning
    seat's, summed over the opponents' moves that follow its action.

    Args:
        config: RLlib's ``env_config`` with the keys ``num_games`` (default 64), ``num_players`` (4),
            ``opponents`` (``"spoiler"``; names, checkpoint paths, a list with one per other seat, or agent
            objects: :mod:`spoilfive_integrations.opponents`), ``seat`` (None: drawn for each game at each reset),
            ``mode`` (``"hand"``), ``reward`` (``"equity"``), ``illegal_action`` (``"penalty"``, so RLlib's
            pre-check of unmasked actions passes; :class:`SpoilFiveMultiAgentEnv` says what it gives), ``seed``
            (None; each RLlib worker adds its ``worker_index``; under RLlib's pre-check, which resets every env with
            seed 42, seed a run with ``config.debugging(seed=S)``), and any rules option by name.

    Raises:
        ValueError: a bad ``num_games``, ``opponents``, ``seat``, ``mode``, ``reward``, ``illegal_action``, seed or
            rule.
    """

    def __init__(self, config: dict | None = None):
        super().__init__()
        options, num_games, seed, self._place = self.read_config(config, OPPONENTS_CONFIG_KEYS, type(self).__name__,
                                                    {"num_envs": "the number of games is num_games",
                                                     "render_mode": "this env does not render"})
        self.batch = LearnerBatch(num_games, num_envs_name="num_games",
                                  **{"opponents": "spoiler", "illegal_action": "penalty", **options})
        self.rules = self.batch.rules
        self.illegal_action = self.batch.illegal_action
        self.num_games = self.batch.num_envs
        self.num_players = self.rules.num_players
        if seed is not None:
            self.batch.seed(seed)
        self._seat_rng = np.random.default_rng(seed)
        self.declare_agents([game_agent_id(g) for g in range(self.num_games)], self.num_players)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal a new episode in every game, the opponents moving up to each learner's first decision.

        ``seed`` (an int) reseeds the deals, seats and opponents, and reproduces them."""
        seed = _seed_at(self._place, checked_reset(seed, options, type(self).__name__))
        if seed is not None:
            self.batch.seed(seed)  # first: an opponent's reseed may fail, and then nothing has changed
            self._seat_rng = np.random.default_rng(seed)
        self.batch.start(np.ones(self.num_games, bool), self._seat_rng)
        self._started = True
        self.agents = self.possible_agents[:]
        return self._observations(), {}

    def step(self, action_dict: dict):
        """Apply the learners' actions (at most one a game, for games still playing) and the opponents' replies."""
        self.check_step(action_dict)
        batch = self.batch
        batch.check_playable()
        games, chosen = checked_action_dict(action_dict, self._index, self.illegal_action,
                                            f"'g<game>', games 0-{self.num_games - 1}", batch.legal_actions_text)
        ended = games[batch.over[games]]
        if len(ended):
            raise ValueError(f"actions for agents whose game ended: {self._ids[ended][:5].tolist()}; act only for "
                             "the agents of the last observations")
        rewards, _, illegal = batch.step_games(games, chosen)
        self.illegal_actions += int(illegal.sum())
        reward_dict = dict(zip(self._ids[games].tolist(), rewards[games].tolist()))
        all_done = bool(batch.over.all())
        observations = final_observations(self.possible_agents, batch.observe()) if all_done else self._observations()
        return observations, reward_dict, episode_end(self.possible_agents, all_done), {"__all__": False}, {}

    def _observations(self) -> dict:
        """``{agent id: {"observation", "action_mask"}}`` of the learning seat of every game still playing (one at
        least: the episode's last step observes every agent instead)."""
        games = np.flatnonzero(~self.batch.over)
        observations = self.core.observe(self.batch.seat, games=games)
        masks = self.core.legal_mask()[games].astype(np.int8)
        return {aid: {"observation": obs, "action_mask": mask}
                for aid, obs, mask in zip(self._ids[games].tolist(), observations, masks)}

    def set_opponents(self, opponents) -> None:
        """Seat new opponents (any ``opponents`` spec) from the next decision on, in every game (self-play)."""
        self.batch.set_opponents(opponents)


def shared_policy(agent_id, episode=None, **kwargs) -> str:
    """RLlib ``policy_mapping_fn``: every seat of every game plays the one shared policy."""
    return SHARED_POLICY


def count_seats_that_did_not_act(*, metrics_logger, **kwargs) -> None:
    """RLlib ``on_sample_end`` callback: a seat that acted in an earlier sample but not in this one
    counts 0 steps, not NaN.

    With ``count_steps_by="agent_steps"`` RLlib sums every agent id's sampled steps, and an id
    seen before but absent from this sample reads NaN and stops training (``ValueError: cannot
    convert float NaN to integer``; ray-project/ray#62635, open in Ray 2.60). Here the games of a
    batch end their hands at different steps, so in a small sample some seats never act. Give it
    as ``config.callbacks(on_sample_end=count_seats_that_did_not_act)``.
    """
    from ray.rllib.utils.metrics import NUM_AGENT_STEPS_SAMPLED

    for aid in list(metrics_logger.peek(NUM_AGENT_STEPS_SAMPLED, default={})):
        metrics_logger.log_value((NUM_AGENT_STEPS_SAMPLED, aid), 0, reduce="sum")


# ---------------------------------------------------------------------- the RLModule
class SpoilFiveMaskedModule(TorchRLModule, ValueFunctionAPI):
    """Actor-critic over :class:`agents.policy.PolicyNet` that masks illegal actions.

    Reads this project's observation dict (``"observation"``, ``"action_mask"``, the keys of
    the AEC environment and of PettingZoo). ``model_config``: ``hidden`` (layer widths,
    default ``(256, 256)``) and ``encoding`` (``"canonical"`` or ``"raw"``, see
    :mod:`agents.policy`). The critic sees the observation only (``critic="local"``).
    """

    def setup(self):
        space = self.observation_space
        if not isinstance(space, gymnasium.spaces.Dict) or set(space.spaces) != {"observation", "action_mask"}:
            raise ValueError(f"SpoilFiveMaskedModule needs a Dict observation space with the keys "
                             f"'observation' and 'action_mask', got {space}")
        if space["observation"].shape != (OBS_DIM,):
            raise ValueError(f"the observation must have shape ({OBS_DIM},) (this version's layout), "
                             f"got {space['observation'].shape}")
        config = self.model_config or {}
        self.net = PolicyNet(hidden=tuple(config.get("hidden", DEFAULT_HIDDEN)), critic="local",
                             encoding=config.get("encoding", "canonical"))

    def _forward(self, batch, **kwargs):
        obs = batch[Columns.OBS]
        logits = self.net.logits(obs["observation"])
        legal = obs["action_mask"].bool()
        return {Columns.ACTION_DIST_INPUTS: logits.masked_fill(~legal, torch.finfo(logits.dtype).min)}

    def compute_values(self, batch, embeddings=None):
        return self.net.value(batch[Columns.OBS]["observation"])


def masked_module_spec(hidden=DEFAULT_HIDDEN, encoding: str = "canonical",
                       policy: str = SHARED_POLICY) -> MultiRLModuleSpec:
    """The ``rl_module_spec`` of one shared :class:`SpoilFiveMaskedModule` named ``policy``.

    The options are checked here, where they are given, not when RLlib builds the module on a worker."""
    if isinstance(hidden, (str, bytes)) or not isinstance(hidden, Sequence) or not within_layer_limits(hidden):
        raise ValueError(f"hidden={hidden!r} is not allowed: give a list of one or more positive whole layer widths "
                         f"(at most {MAX_HIDDEN_LAYERS} layers of at most {MAX_HIDDEN_WIDTH:,})")
    why = network_too_large(hidden)
    if why:
        raise ValueError(f"hidden={hidden!r} is not allowed here: {why}")
    if not isinstance(encoding, str) or encoding not in ENCODINGS:
        raise ValueError(f"encoding={encoding!r} is not allowed: choose one of {', '.join(ENCODINGS)}")
    if not isinstance(policy, str) or not policy:
        raise ValueError(f"policy={policy!r} is not allowed: give the policy's name, a non-empty string")
    return MultiRLModuleSpec(rl_module_specs={
        policy: RLModuleSpec(module_class=SpoilFiveMaskedModule,
                             model_config={"hidden": list(hidden), "encoding": encoding}),
    })


def policy_agent(module: SpoilFiveMaskedModule, name: str | None = "rllib", seed: int | None = None,
                 greedy: bool = True) -> PolicyAgent:
    """An :class:`agents.base.Agent` that plays with a (trained) module's actor, for ``agents.evaluate``."""
    if not isinstance(getattr(module, "net", None), PolicyNet):
        raise ValueError(f"module must be a SpoilFiveMaskedModule (algo.get_module(policy)), "
                         f"got {type(module).__name__}")
    greedy, name = checked_greedy(greedy), checked_name(name, "rllib")
    net = PolicyNet(hidden=module.net.hidden, critic="local", encoding=module.net.encoding)
    net.load_state_dict({key: value.detach().cpu() for key, value in module.net.state_dict().items()})
    return PolicyAgent(net, seed, greedy=greedy, name=name or "rllib")


__all__ = ["SHARED_POLICY", "SpoilFiveAgainstOpponentsEnv", "SpoilFiveMaskedModule", "SpoilFiveMultiAgentEnv",
           "agent_id", "game_agent_id", "masked_module_spec", "policy_agent", "shared_policy"]
