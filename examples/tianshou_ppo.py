"""Tianshou 2.0 on the AEC environment: N seats, one shared masked policy, PPO.

    python examples/tianshou_ppo.py                       # a few minutes on 2 CPU cores
    python examples/tianshou_ppo.py --num-players 5 --iterations 2 --episodes 8 --eval-deals 20   # smoke test

The environment goes through Tianshou's own ``tianshou.env.PettingZooEnv`` unchanged: its
observation is a ``Batch(agent_id, obs, mask)`` with the legal actions in ``mask``. The
``MultiAgentOnPolicyAlgorithm`` is built for any table size from ``env.agents`` (Tianshou's
tic-tac-toe example hard-codes two players), every seat mapped to the SAME ``PPO``
algorithm, so one actor and one critic play every seat. The actor reads ``mask`` and gives
illegal actions the lowest finite logit, so they are never sampled (the AEC env would raise).

One fix is needed for a turn-based game: Tianshou credits a hand's rewards only to the seat
that played its last card, and bootstraps each value from the next seat's view.
:class:`spoilfive_integrations.tianshou.SeatTrajectories` (a drop-in for
``MultiAgentOnPolicyAlgorithm``) makes each seat's transitions a trajectory of its own before
GAE; see that module for how.

At the end the network plays one seat against ``random`` and ``spoiler`` tables through
:func:`agents.evaluate.evaluate` (duplicate deals, every rotation).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

try:  # torch and the library take seconds to load: a Ctrl-C then is one line and exit 130, as later on
    import numpy as np
    import torch
    from tianshou.algorithm import PPO
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode
    from torch import nn

    import spoilfive_env
    from agents.base import Agent
    from agents.evaluate import check_against_baselines, check_deal_count
    from agents.policy import MAX_HIDDEN_WIDTH, network_too_large
    from spoilfive_env.actions import NUM_ACTIONS
    from spoilfive_env.cards import MAX_DECISIONS_PER_HAND
    from spoilfive_env.cli import (
        ArgumentParser,
        exit_interrupted,
        learning_rate,
        positive_int,
        run_command,
        seed_value,
        table_size,
    )
    from spoilfive_env.core import physical_memory
    from spoilfive_env.observation import OBS_DIM
    from spoilfive_integrations.tianshou import SeatTrajectories
except KeyboardInterrupt:
    if __name__ != "__main__":  # imported by a program of its own: the Ctrl-C is that program's
        raise
    print("tianshou_ppo.py: stopped by Ctrl-C while starting up; nothing was run", file=sys.stderr)
    raise SystemExit(130) from None

TRANSITION_BYTES = 2 * (4 * OBS_DIM + NUM_ACTIONS) + 64
"""About what one transition of the replay buffer takes (observation and next observation with their masks)."""


def check_args(parser: ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, in one line naming the flag, sizes that would fail once training has started."""
    if args.minibatch_size < 2:
        parser.error(f"--minibatch-size {args.minibatch_size} is not allowed: give at least 2 (PPO normalises the "
                     "advantages over each minibatch)")
    why = network_too_large([args.hidden, args.hidden])
    if why:
        parser.error(f"--hidden {args.hidden} is not allowed here: {why}")
    memory = physical_memory()
    if memory is None:
        return
    transitions = args.episodes * MAX_DECISIONS_PER_HAND * args.num_players
    if transitions * TRANSITION_BYTES > memory:
        parser.error(f"--episodes {args.episodes} is not allowed here: the replay buffer for that many hands of "
                     f"{args.num_players} players needs about {transitions * TRANSITION_BYTES / 2**30:.1f} GiB, more "
                     f"than this machine's {memory / 2**30:.1f} GiB; allowed: at most "
                     f"{memory // (MAX_DECISIONS_PER_HAND * args.num_players * TRANSITION_BYTES):,}")


def parse_args(argv=None) -> argparse.Namespace:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-players", type=table_size, default=4)
    parser.add_argument("--iterations", type=positive_int, default=60)
    parser.add_argument("--episodes", type=positive_int, default=64, help="hands collected per iteration")
    parser.add_argument("--epochs", type=positive_int, default=4, help="PPO epochs over each seat's data")
    parser.add_argument("--minibatch-size", type=positive_int, default=256)
    parser.add_argument("--lr", type=learning_rate, default=1e-3)
    parser.add_argument("--hidden", type=positive_int, default=256,
                        help=f"hidden layer width (at most {MAX_HIDDEN_WIDTH:,})")
    parser.add_argument("--seed", type=seed_value, default=0)
    parser.add_argument("--eval-deals", type=check_deal_count, default=500,
                        help="duplicate deals per evaluation table (0: none)")
    args = parser.parse_args(argv)
    check_args(parser, args)
    return args


class MaskedActor(nn.Module):
    """Observation -> logits over the 107 actions, illegal ones at the lowest finite value.

    Reads Tianshou's ``Batch(obs, mask)`` (or a plain array plus a ``mask`` argument, for
    :class:`ActorAgent`). Returns ``(logits, state)`` as Tianshou's actors do.
    """

    def __init__(self, hidden: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, NUM_ACTIONS))

    def forward(self, obs, state=None, info=None, mask=None):
        if mask is None:
            obs, mask = obs.obs, obs.mask
        logits = self.body(torch.as_tensor(np.asarray(obs), dtype=torch.float32))
        legal = torch.as_tensor(np.asarray(mask, dtype=bool))
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), state


class SeatCritic(nn.Module):
    """Observation -> the seat's expected result of the hand (reads Tianshou's ``Batch(obs, ...)``)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, 1))

    def forward(self, obs, **kwargs):
        return self.body(torch.as_tensor(np.asarray(obs.obs), dtype=torch.float32))


class ActorAgent(Agent):
    """The trained actor as an :class:`agents.base.Agent` (the most probable legal action)."""

    name = "tianshou-ppo"

    def __init__(self, actor: MaskedActor):
        super().__init__(None)
        self.actor = actor

    @torch.inference_mode()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits, _ = self.actor(observations, mask=masks)
        return logits.argmax(dim=1).numpy()


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        train_and_evaluate(args)
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: run stopped, nothing saved (this example saves no model)")
    return 0


def train_and_evaluate(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)  # the collector steps the environment on the same cores
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou shuffles its minibatches with NumPy's global generator, as its examples seed
    # The collector summarises the per-seat reward vectors flattened, and says so at every call.
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)

    def make_env():
        return PettingZooEnv(spoilfive_env.env(num_players=args.num_players))

    env = make_env()
    actor = MaskedActor(args.hidden)
    policy = DiscreteActorPolicy(actor=actor, action_space=env.action_space, observation_space=env.observation_space)
    shared = PPO(policy=policy, critic=SeatCritic(args.hidden), optim=AdamOptimizerFactory(lr=args.lr),
                 gamma=1.0, gae_lambda=0.95, ent_coef=0.01, max_grad_norm=0.5)
    algorithm = SeatTrajectories(algorithms=[shared] * len(env.agents), env=env)

    train_envs = DummyVectorEnv([make_env])
    train_envs.seed(args.seed)
    # Room for every decision of the iteration's hands: the transitions must stay in time order.
    buffer = VectorReplayBuffer(args.episodes * MAX_DECISIONS_PER_HAND * args.num_players, 1)
    collector = Collector(algorithm, train_envs, buffer, exploration_noise=False)

    started, decisions = time.perf_counter(), 0
    for iteration in range(1, args.iterations + 1):
        collector.reset_buffer()
        with policy_within_training_step(algorithm.policy):  # what Tianshou's trainer does
            result = collector.collect(n_episode=args.episodes, reset_before_collect=True)
            with torch_train_mode(algorithm.policy):
                algorithm.update(buffer=buffer, batch_size=args.minibatch_size, repeat=args.epochs)
        decisions += result.n_collected_steps
        elapsed = time.perf_counter() - started
        print(f"iteration {iteration:3d}  decisions {decisions:7d}  {decisions / elapsed:6.0f} decisions/s", flush=True)

    if args.eval_deals:
        agent = ActorAgent(actor.eval())
        check_against_baselines(agent, args.num_players, args.eval_deals, seed=args.seed + 1)


if __name__ == "__main__":
    run_command(main)
