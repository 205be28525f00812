"""Tianshou 2.0: each seat's own trajectory for multi-agent on-policy learning (``pip install ".[tianshou]"``).

``tianshou.env.PettingZooEnv(spoilfive_env.env(num_players=N))`` works as it is (observations
``Batch(agent_id, obs, mask)``, the legal actions in ``mask``). What a turn-based game needs
besides is :class:`SeatTrajectories`: Tianshou stores a step on the transition of the seat that
moved, with the rewards of that step and the NEXT seat's observation as ``obs_next``. So when
the last card ends a hand only that seat's transition sees the hand's rewards and is marked
terminal, and every value bootstrap looks at another seat's view. Before the advantages are
computed, :class:`SeatTrajectories` makes each seat's transitions a trajectory of their own:
``obs_next`` becomes that seat's own next decision in the hand, its last decision of the hand
gets its share of the hand's rewards and is marked terminal for it. GAE then runs over each
seat's decisions as over a single-agent episode (use ``gamma = 1``: a hand's result is all
that counts). A hand cut short by truncation (a wrapper's; the env itself never truncates) ends
every seat's trajectory there as terminal, with the rewards the cut step gave: no seat has an
observation of its own after the cut to bootstrap from.

It is a drop-in for Tianshou's ``MultiAgentOnPolicyAlgorithm``, built for any table size from
``env.agents``; ``examples/tianshou_ppo.py`` maps every seat to one shared ``PPO``::

    algorithm = SeatTrajectories(algorithms=[shared_ppo] * len(env.agents), env=env)
"""

from __future__ import annotations

import numpy as np
from tianshou.algorithm.algorithm_base import OnPolicyAlgorithm
from tianshou.algorithm.multiagent.marl import MultiAgentOnPolicyAlgorithm
from tianshou.env import PettingZooEnv


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
        # Each environment's transitions lie in a sub-buffer of their own, in time order; a hand starts
        # after a hand's end or where another environment's transitions start.
        game = np.searchsorted(buffer.subbuffer_edges, indices, side="right") - 1
        starts = np.concatenate([[True], ends[:-1] | (game[1:] != game[:-1])])
        hand = np.cumsum(starts) - 1  # hand number of each transition
        finished = np.zeros(hand[-1] + 1 if len(hand) else 0, bool)
        finished[hand[ends]] = True
        # Each seat's decisions of a hand in time order; `following` is the seat's next one.
        order = np.lexsort((steps, seats, hand))
        same = (hand[order][1:] == hand[order][:-1]) & (seats[order][1:] == seats[order][:-1])
        following = np.full(len(seats), -1)
        following[order[:-1][same]] = order[1:][same]
        has_next = following >= 0
        batch.obs_next[has_next] = batch.obs[following[has_next]]
        # The seat's last decision of a finished hand: its share of the hand's rewards, terminal.
        terminated = ~has_next & finished[hand]
        hand_rewards = np.zeros((len(finished), np.asarray(batch.rew).shape[1]))  # (hands, seats)
        hand_rewards[hand[ends]] = np.asarray(batch.rew)[ends]
        rewards = np.zeros_like(np.asarray(batch.rew))
        rewards[terminated, seats[terminated]] = hand_rewards[hand[terminated], seats[terminated]]
        batch.rew, batch.terminated = rewards, terminated
        batch.done = terminated | np.asarray(batch.truncated, bool)
        buffer.rew[indices], buffer.terminated[indices], buffer.done[indices] = rewards, terminated, batch.done
        return super()._preprocess_batch(batch, buffer, indices)
