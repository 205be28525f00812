"""The opponents of a learning seat: the ``opponents`` argument of the Gymnasium envs, resolved.

``opponents`` is one agent spec for every other seat, or a list with one spec per other seat.
A spec is what :func:`agents.load_agent` takes: a registry name (``"spoiler"``,
``"pimc:samples=32"``), a checkpoint path or shipped checkpoint name (``"ppo"``), or an agent
object (anything with ``act_batch(observations, masks)``; a frozen copy of your own policy is
how self-play works). List entry ``i`` sits ``i + 1`` seats to the learner's left (it acts
``i + 1`` turns after him), wherever the learner sits, so one list means the same table
whether the learning seat is fixed or drawn at each reset.

The same name (or the same object) given twice is one agent that plays both seats, so each
step asks it once on every row it has to decide (:func:`agents.base.actions_in_core`: its
``act_batch_core``, which gives ``act_batch``'s moves on those rows' observations; ``act_batch``
itself for an object that has only that; ``act_batch_state`` for the cheating oracle). Agents made from specs are
seeded from the env's seed (:meth:`Lineup.reseed`), and so are agent objects that have a
``reseed`` method; a seeded reset thus reproduces the opponents' moves.

>>> from spoilfive_env.rules import Rules
>>> lineup = resolve_opponents(["spoiler", "random", "spoiler"], Rules(num_players=4))
>>> [agent.name for agent in lineup.agents]
['spoiler', 'random']
>>> lineup.agent_of_position.tolist()  # position 0 is the learner
[-1, 0, 1, 0]
>>> resolve_opponents("spoiler", Rules(num_players=3)).agent_of_position.tolist()
[-1, 0, 0]
"""

from __future__ import annotations

import os

import numpy as np

from agents import load_agent
from agents.base import actions_in_core, checked_actions, distinct_entries, stream_seed
from spoilfive_env.rules import Rules

LEARNER = -1
"""``agent_of_position`` entry of the learner's own position (0)."""
_OPPONENT_STREAM = 0x0990


class Lineup:
    """Distinct opponent agents and which one sits at each position relative to the learner.

    Attributes:
        agents: the distinct agent objects.
        agent_of_position: ``(n,)`` int, index into ``agents`` of the player ``k`` seats to the
            learner's left; ``LEARNER`` (-1) at ``k = 0``.
        specs: the spec each distinct agent was made from (the object itself for objects).
    """

    def __init__(self, agents: list, agent_of_position: np.ndarray, specs: list):
        self.agents = agents
        self.agent_of_position = agent_of_position
        self.specs = specs

    def reseed(self, seed: int, *, named_only: bool = False) -> None:
        """Restart every agent's random stream from ``seed`` (one independent stream each); ``named_only``: only
        the agents made from a name or a path (an agent object's generator is its owner's).

        If one agent's ``reseed`` raises, the agents before it get back the attributes their
        ``reseed`` replaced (a new generator, the seed), so a refused reset changes no stream."""
        before = [dict(getattr(agent, "__dict__", {})) for agent in self.agents]
        try:
            for index, (agent, spec) in enumerate(zip(self.agents, self.specs)):
                if hasattr(agent, "reseed") and not (named_only and spec is agent):
                    agent.reseed(agent_seed(seed, index))
        except BaseException:
            for agent, attributes in zip(self.agents, before):
                if attributes:
                    vars(agent).update(attributes)
            raise

    def act(self, index: int, core, games: np.ndarray, masks: np.ndarray):
        """Actions of agent ``index`` for the core's ``games`` (``masks``: their rows)."""
        chosen = actions_in_core(self.agents[index], core, games, masks)
        # An agent object may be the user's own: name it if it breaks the act_batch contract.
        return checked_actions(f"opponent {self.specs[index]!r}", chosen, masks, games)


def agent_seed(seed: int, index: int) -> int:
    """Seed of the ``index``-th distinct opponent for an env seeded with ``seed``."""
    return stream_seed(seed, _OPPONENT_STREAM, index)


def _is_agent_object(spec) -> bool:
    return not isinstance(spec, (str, os.PathLike, type)) and hasattr(spec, "act_batch")


def _load(spec, position: str):
    if _is_agent_object(spec):
        return spec
    if isinstance(spec, type):  # a class has act_batch too, unbound: a TypeError at the first move
        raise ValueError(f"{position}={spec!r} is a class, not an opponent: give an agent object (an instance, "
                         f"{spec.__name__}(...)), a registry name or a checkpoint path")
    if not isinstance(spec, (str, os.PathLike)):
        also = ", or a list or tuple of them, one for each other seat" if position == "opponents" else ""
        raise ValueError(
            f"{position}={spec!r} is not an opponent: give a registry name, a checkpoint path or "
            f"an agent object with act_batch(observations, masks){also}"
        )
    try:
        return load_agent(spec)
    except ValueError as error:  # unknown name, missing file, checkpoint for another layout
        raise ValueError(f"{position}={os.fspath(spec)!r} cannot be loaded: {error}") from None


def check_opponents_flag(parser, opponents, num_players: int) -> None:
    """A command line's ``--opponents``: ``parser.error`` (one line, exit 2) unless they load for a table of
    ``num_players``, so that a bad spec is refused before any work."""
    try:
        resolve_opponents(opponents, Rules(num_players=num_players))
    except (ValueError, ImportError) as error:
        parser.error(f"--opponents: {error}")


def resolve_opponents(opponents, rules) -> Lineup:
    """One agent per other seat from ``opponents`` (see the module docstring).

    Args:
        opponents: one spec, or a list/tuple of ``num_players - 1`` specs.
        rules: the table's :class:`~spoilfive_env.rules.Rules`; each agent is ``bind``-ed to them.

    Raises:
        ValueError: a list of the wrong length, an unknown name, a missing checkpoint, a
            checkpoint for another observation layout, or something that is not an agent.
    """
    others = rules.num_players - 1
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != others:
            raise ValueError(
                f"opponents has {len(opponents)} entries: a table of {rules.num_players} players "
                f"needs one spec for every other seat (a list of {others}) or a single spec for all"
            )
        specs = list(opponents)
        names = [f"opponents[{i}]" for i in range(others)]
    else:
        specs = [opponents] * others
        names = ["opponents"] * others
    first, agent_of_other = distinct_entries(specs)
    agents = [_load(specs[position], names[position]) for position in first]
    for agent in agents:
        if hasattr(agent, "bind"):
            agent.bind(rules)
    agent_of_position = np.concatenate([[LEARNER], agent_of_other])
    return Lineup(agents, agent_of_position, [specs[position] for position in first])
