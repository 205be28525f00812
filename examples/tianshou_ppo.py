"""Tianshou 2.0 PPO: self-play on the AEC environment, or one seat on a vector env of one core batch.

    python examples/tianshou_ppo.py                       # self-play on the AEC env, a few minutes on 2 CPU cores
    python examples/tianshou_ppo.py --route vector        # one seat against random, 256 games of one core batch
    python examples/tianshou_ppo.py --route vector --self-play 5   # the opponents: the learner, every 5 iterations
    python examples/tianshou_ppo.py --num-players 5 --iterations 2 --episodes 8 --eval-deals 20   # smoke test

``--route pettingzoo`` (default): the environment goes through Tianshou's own
``tianshou.env.PettingZooEnv`` unchanged: its observation is a ``Batch(agent_id, obs, mask)`` with the
legal actions in ``mask``. The ``MultiAgentOnPolicyAlgorithm`` is built for any table size from
``env.agents`` (Tianshou's tic-tac-toe example hard-codes two players), every seat mapped to the SAME
``PPO`` algorithm, so one actor and one critic play every seat. The actor reads ``mask`` and gives
illegal actions the lowest finite logit, so they are never sampled (the AEC env would raise).

One fix is needed for a turn-based game: Tianshou credits a hand's rewards only to the seat
that played its last card, and bootstraps each value from the next seat's view.
:class:`spoilfive_integrations.tianshou.SeatTrajectories` (a drop-in for
``MultiAgentOnPolicyAlgorithm``) makes each seat's transitions a trajectory of their own before
GAE; see that module for how.

``--route vector``: :class:`spoilfive_integrations.tianshou.SpoilFiveTianshouVectorEnv`, a Tianshou
vector env over ``--num-envs`` games of one core batch, one learning seat each (drawn at each hand)
against ``--opponents``. Its observation is ``Batch(obs, mask)`` too, so the same actor and critic
serve; Tianshou's ``Collector`` takes it with no wrapper, and plain single-agent ``PPO`` learns from it
(each game's transitions are the learning seat's own). Each iteration collects ``--step-per-collect``
decisions, the same number from every game. ``--self-play K`` seats a snapshot of the learner
(:class:`spoilfive_integrations.tianshou.TianshouPolicyAgent`, sampling) in every other seat before the
first iteration and every ``K`` iterations after it.

At the end the trained policy (its most probable legal action, a ``TianshouPolicyAgent``) plays one seat
against ``random`` and ``spoiler`` tables through :func:`agents.evaluate.evaluate` (duplicate deals, every
rotation).
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
    from agents.evaluate import check_against_baselines, check_deal_count
    from agents.policy import MAX_HIDDEN_WIDTH, network_too_large
    from spoilfive_env.actions import NUM_ACTIONS
    from spoilfive_env.cards import MAX_DECISIONS_PER_HAND
    from spoilfive_env.cli import (
        ArgumentParser,
        exit_interrupted,
        learning_rate,
        non_negative_int,
        positive_int,
        run_command,
        seed_value,
        table_size,
    )
    from spoilfive_env.core import physical_memory
    from spoilfive_env.observation import OBS_DIM
    from spoilfive_integrations.opponents import check_opponents_flag
    from spoilfive_integrations.tianshou import SeatTrajectories, SpoilFiveTianshouVectorEnv, TianshouPolicyAgent
    from spoilfive_integrations.vector import check_env_fits_in_memory
except KeyboardInterrupt:
    if __name__ != "__main__":  # imported by a program of its own: the Ctrl-C is that program's
        raise
    print("tianshou_ppo.py: stopped by Ctrl-C while starting up; nothing was run", file=sys.stderr)
    raise SystemExit(130) from None

TRANSITION_BYTES = 2 * (4 * OBS_DIM + NUM_ACTIONS) + 64
"""About what one transition of the replay buffer takes (observation and next observation with their masks)."""
ROUTES = ("pettingzoo", "vector")
VECTOR_DEFAULTS = {"num_envs": 256, "opponents": "random", "step_per_collect": 8192, "self_play": 0}
"""The vector route's flags when not given (8,192 decisions: 32 from each of 256 games; fixed opponents)."""


def check_args(parser: ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, in one line naming the flag, sizes and flags that would fail once training has started."""
    if args.minibatch_size < 2:
        parser.error(f"--minibatch-size {args.minibatch_size} is not allowed: give at least 2 (PPO normalises the "
                     "advantages over each minibatch)")
    why = network_too_large([args.hidden, args.hidden])
    if why:
        parser.error(f"--hidden {args.hidden} is not allowed here: {why}")
    if args.route == "pettingzoo":
        given = [f"--{key.replace('_', '-')}" for key in VECTOR_DEFAULTS if getattr(args, key) is not None]
        if given:
            parser.error(f"{' and '.join(given)} {'need' if len(given) > 1 else 'needs'} --route vector: the "
                         "pettingzoo route is self-play, one game")
        args.episodes = 64 if args.episodes is None else args.episodes
    else:
        check_vector_args(parser, args)
    memory = physical_memory()
    if memory is None:
        return
    if args.route == "vector":
        transitions, flag, value, per = args.step_per_collect, "--step-per-collect", args.step_per_collect, 1
    else:
        per = MAX_DECISIONS_PER_HAND * args.num_players
        transitions, flag, value = args.episodes * per, "--episodes", args.episodes
    if transitions * TRANSITION_BYTES > memory:
        parser.error(f"{flag} {value} is not allowed here: its replay buffer at a table of {args.num_players} needs "
                     f"about {transitions * TRANSITION_BYTES / 2**30:.1f} GiB, more than this machine's "
                     f"{memory / 2**30:.1f} GiB; allowed: at most {memory // (per * TRANSITION_BYTES):,}")


def check_vector_args(parser: ArgumentParser, args: argparse.Namespace) -> None:
    """The vector route's flags: defaults filled in, the games and opponents checked, the decisions a whole
    number of steps of every game."""
    if args.episodes is not None:
        parser.error("--episodes needs --route pettingzoo: the vector route collects --step-per-collect decisions "
                     "an iteration")
    defaults = [key for key in VECTOR_DEFAULTS if getattr(args, key) is None]
    if args.self_play and "opponents" not in defaults:
        parser.error(f"--opponents is not allowed with --self-play {args.self_play}: the learner's snapshots are the "
                     "opponents from the first iteration on")
    for key in defaults:
        setattr(args, key, VECTOR_DEFAULTS[key])
    try:
        check_env_fits_in_memory(args.num_envs, args.num_players, "--num-envs")
    except ValueError as error:
        parser.error(str(error))
    check_opponents_flag(parser, args.opponents, args.num_players)
    if args.step_per_collect % args.num_envs:
        flags = [f"--{key.replace('_', '-')} {getattr(args, key)}{' (the default)' if key in defaults else ''}"
                 for key in ("step_per_collect", "num_envs")]
        parser.error(f"{flags[0]} is not allowed with {flags[1]}: each step collects one decision from every game, "
                     f"so give a multiple of {args.num_envs}")


def parse_args(argv=None) -> argparse.Namespace:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--route", choices=ROUTES, default="pettingzoo",
                        help="pettingzoo: self-play on the AEC env; vector: one seat on a vector env of one core "
                             "batch (default pettingzoo)")
    parser.add_argument("--num-players", type=table_size, default=4)
    parser.add_argument("--iterations", type=positive_int, default=60)
    parser.add_argument("--episodes", type=positive_int, default=None,
                        help="hands collected per iteration (pettingzoo route; default 64)")
    parser.add_argument("--num-envs", type=positive_int, default=None,
                        help="games in the core batch (vector route; default 256)")
    parser.add_argument("--opponents", default=None,
                        help="the other seats' agent spec, agents.load_agent (vector route; default random)")
    parser.add_argument("--step-per-collect", type=positive_int, default=None,
                        help="decisions collected per iteration, a multiple of --num-envs (vector route; default 8192)")
    parser.add_argument("--self-play", type=non_negative_int, default=None, metavar="K",
                        help="seat a snapshot of the learner as the opponents every K iterations (vector route; "
                             "default 0: --opponents throughout)")
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

    Reads Tianshou's ``Batch(obs, mask)``. Returns ``(logits, state)`` as Tianshou's actors do.
    """

    def __init__(self, hidden: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, NUM_ACTIONS))

    def forward(self, obs, state=None, info=None):
        logits = self.body(torch.as_tensor(np.asarray(obs.obs), dtype=torch.float32))
        legal = torch.as_tensor(np.asarray(obs.mask, dtype=bool))
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), state


class SeatCritic(nn.Module):
    """Observation -> the seat's expected result of the hand (reads Tianshou's ``Batch(obs, ...)``)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, 1))

    def forward(self, obs, **kwargs):
        return self.body(torch.as_tensor(np.asarray(obs.obs), dtype=torch.float32))


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

    actor = MaskedActor(args.hidden)
    build = self_play_on_the_aec_env if args.route == "pettingzoo" else one_seat_on_the_vector_env
    algorithm, collector, collect, learner = build(args, actor, SeatCritic(args.hidden))
    buffer = collector.buffer

    started, decisions = time.perf_counter(), 0
    for iteration in range(1, args.iterations + 1):
        if args.route == "vector" and args.self_play and (iteration - 1) % args.self_play == 0:
            snapshot = TianshouPolicyAgent(learner, seed=args.seed + iteration, name=f"snapshot{iteration}")
            collector.env.set_opponents(snapshot)
        collector.reset_buffer()
        with policy_within_training_step(algorithm.policy):  # what Tianshou's trainer does
            result = collector.collect(**collect)
            with torch_train_mode(algorithm.policy):
                algorithm.update(buffer=buffer, batch_size=args.minibatch_size, repeat=args.epochs)
        decisions += result.n_collected_steps
        elapsed = time.perf_counter() - started
        print(f"iteration {iteration:3d}  decisions {decisions:7d}  {decisions / elapsed:6.0f} decisions/s", flush=True)

    if args.eval_deals:  # the most probable legal action of the trained policy
        agent = TianshouPolicyAgent(learner, greedy=True, name="tianshou-ppo")
        check_against_baselines(agent, args.num_players, args.eval_deals, seed=args.seed + 1)


def make_ppo(actor: MaskedActor, critic: SeatCritic, args: argparse.Namespace, action_space, observation_space):
    """One PPO for every seat it plays: a hand's result is all that counts (gamma 1)."""
    policy = DiscreteActorPolicy(actor=actor, action_space=action_space, observation_space=observation_space)
    return PPO(policy=policy, critic=critic, optim=AdamOptimizerFactory(lr=args.lr),
               gamma=1.0, gae_lambda=0.95, ent_coef=0.01, max_grad_norm=0.5)


def self_play_on_the_aec_env(args, actor, critic):
    """Every seat of one AEC game, one shared PPO through :class:`SeatTrajectories`; each iteration collects
    ``--episodes`` whole hands. Returns the algorithm, its collector, the collection's arguments and the PPO."""
    def make_env():
        return PettingZooEnv(spoilfive_env.env(num_players=args.num_players))

    env = make_env()
    shared = make_ppo(actor, critic, args, env.action_space, env.observation_space)
    algorithm = SeatTrajectories(algorithms=[shared] * len(env.agents), env=env)
    train_envs = DummyVectorEnv([make_env])
    train_envs.seed(args.seed)
    # Room for every decision of the iteration's hands: the transitions must stay in time order.
    buffer = VectorReplayBuffer(args.episodes * MAX_DECISIONS_PER_HAND * args.num_players, 1)
    collector = Collector(algorithm, train_envs, buffer, exploration_noise=False)
    return algorithm, collector, {"n_episode": args.episodes, "reset_before_collect": True}, shared


def one_seat_on_the_vector_env(args, actor, critic):
    """One learning seat in each of ``--num-envs`` games against ``--opponents``, plain PPO; each iteration
    collects ``--step-per-collect`` decisions, hands running on from one iteration to the next. Returns as
    :func:`self_play_on_the_aec_env` does (the algorithm is the PPO)."""
    envs = SpoilFiveTianshouVectorEnv(num_envs=args.num_envs, num_players=args.num_players,
                                      opponents=args.opponents, seed=args.seed)
    algorithm = make_ppo(actor, critic, args, envs.action_space[0], envs.observation_space[0])
    buffer = VectorReplayBuffer(args.step_per_collect, args.num_envs)  # each game's steps of an iteration
    collector = Collector(algorithm, envs, buffer, exploration_noise=False)
    collector.reset()
    return algorithm, collector, {"n_step": args.step_per_collect}, algorithm


if __name__ == "__main__":
    run_command(main)
