"""sb3-contrib's MaskablePPO on Spoil Five: the single-seat env, or one core batch, and self-play.

    python examples/sb3_maskable_ppo.py                         # 128 games of one core batch vs random
    python examples/sb3_maskable_ppo.py --route single --timesteps 20000   # gymnasium.make, no wrapper
    python examples/sb3_maskable_ppo.py --self-play 64          # opponents = the learner, refreshed every 64 steps

``--route single`` is sb3-contrib's documented use of a Gymnasium env, with nothing added::

    MaskablePPO("MlpPolicy", gymnasium.make("spoilfive/SpoilFive-v0", opponents="random"))

``--route batched`` (default) gives MaskablePPO the project's SB3 ``VecEnv`` over one core batch
(:class:`spoilfive_integrations.sb3.SpoilFiveSB3VecEnv`, inside SB3's ``VecMonitor``).
``--self-play K`` starts against ``--opponents`` and, every ``K`` environment steps, seats a
snapshot of the learner in every other seat (:class:`~spoilfive_integrations.sb3.SelfPlayCallback`).
At the end the policy plays one seat against ``random`` and ``spoiler`` tables through
:func:`agents.evaluate.evaluate` (duplicate deals, every rotation).
"""

from __future__ import annotations

import argparse
import sys
import time

try:  # torch and the library take seconds to load: a Ctrl-C then is one line and exit 130, as later on
    import gymnasium
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor

    import spoilfive_env  # noqa: F401  (registers "spoilfive/SpoilFive-v0")
    from agents.evaluate import check_against_baselines, check_deal_count
    from spoilfive_env.actions import NUM_ACTIONS
    from spoilfive_env.cli import (
        ArgumentParser,
        exit_interrupted,
        non_negative_int,
        positive_int,
        run_command,
        seed_value,
        table_size,
    )
    from spoilfive_env.core import physical_memory
    from spoilfive_env.observation import OBS_DIM
    from spoilfive_integrations.opponents import check_opponents_flag
    from spoilfive_integrations.sb3 import SB3_MEMORY, SB3PolicyAgent, SelfPlayCallback, SpoilFiveSB3VecEnv
    from spoilfive_integrations.vector import check_env_fits_in_memory
except KeyboardInterrupt:
    if __name__ != "__main__":  # imported by a program of its own: the Ctrl-C is that program's
        raise
    print("sb3_maskable_ppo.py: stopped by Ctrl-C while starting up; nothing was run", file=sys.stderr)
    raise SystemExit(130) from None

ROUTES = ("batched", "single")
BATCHED_STEPS = 64
"""MaskablePPO's ``n_steps`` on the batched route: its rollout buffer holds this many steps of every game."""
BATCHED_GAMES = 128
"""Games in the core batch of the batched route, unless ``--num-envs`` says."""
ROLLOUT_BYTES = 2 * 4 * (OBS_DIM + NUM_ACTIONS) + 64
"""About what one decision of the rollout buffer takes (observation and mask as float32, and the
flattened copy made for the update)."""


def parse_args(argv=None) -> argparse.Namespace:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--route", choices=ROUTES, default="batched")
    parser.add_argument("--num-players", type=table_size, default=4)
    parser.add_argument("--opponents", default="random", help="opponents' agent spec (agents.load_agent)")
    parser.add_argument("--num-envs", type=positive_int, default=None,
                        help=f"games in the core batch (batched route; default {BATCHED_GAMES})")
    parser.add_argument("--timesteps", type=positive_int, default=300_000, help="learner decisions")
    parser.add_argument("--self-play", type=non_negative_int, default=0, metavar="K",
                        help="refresh the opponents from the learner every K env steps (0: fixed opponents)")
    parser.add_argument("--seed", type=seed_value, default=0)
    parser.add_argument("--eval-deals", type=check_deal_count, default=500,
                        help="duplicate deals per evaluation table (0: none)")
    args = parser.parse_args(argv)
    if args.self_play and args.route != "batched":
        parser.error("--self-play takes the batched route")
    if args.num_envs is not None and args.route != "batched":  # it did nothing there, without a word
        parser.error("--num-envs takes the batched route: the single route is one gymnasium.make env")
    if args.num_envs is None:
        args.num_envs = BATCHED_GAMES
    if args.route == "batched":
        try:
            check_env_fits_in_memory(args.num_envs, args.num_players, "--num-envs", SB3_MEMORY)
        except ValueError as error:
            parser.error(str(error))
        needed, memory = args.num_envs * BATCHED_STEPS * ROLLOUT_BYTES, physical_memory()
        if memory is not None and needed > memory:
            parser.error(f"--num-envs={args.num_envs} is not allowed here: MaskablePPO's rollout buffer of "
                         f"{BATCHED_STEPS} steps a game needs about {needed / 2**30:.1f} GiB, more than this "
                         f"machine's {memory / 2**30:.1f} GiB; allowed: at most "
                         f"{memory // (BATCHED_STEPS * ROLLOUT_BYTES):,} games")
    check_opponents_flag(parser, args.opponents, args.num_players)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        train_and_evaluate(args)
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: run stopped, nothing saved (this example saves no model)")
    return 0


def train_and_evaluate(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)  # the env steps on the same cores
    if args.route == "single":
        env = gymnasium.make("spoilfive/SpoilFive-v0", num_players=args.num_players, opponents=args.opponents)
        hyper = dict(n_steps=2048, batch_size=256)
    else:
        env = VecMonitor(SpoilFiveSB3VecEnv(num_envs=args.num_envs, num_players=args.num_players,
                                            opponents=args.opponents, seed=args.seed))
        hyper = dict(n_steps=BATCHED_STEPS, batch_size=1024)
    model = MaskablePPO("MlpPolicy", env, learning_rate=1e-3, gamma=1.0, ent_coef=0.01, n_epochs=4,
                        seed=args.seed, verbose=0, **hyper)
    callback = SelfPlayCallback(args.self_play, seed=args.seed) if args.self_play else None
    started = time.perf_counter()
    model.learn(args.timesteps, callback=callback)
    elapsed = time.perf_counter() - started
    print(f"{args.route}: {model.num_timesteps} learner decisions in {elapsed:.0f} s, "
          f"{model.num_timesteps / elapsed:.0f} decisions/s (learning included)")
    if args.eval_deals:
        agent = SB3PolicyAgent(model.policy, greedy=True, name="sb3-maskable-ppo")
        check_against_baselines(agent, args.num_players, args.eval_deals, seed=args.seed + 1)


if __name__ == "__main__":
    run_command(main)
