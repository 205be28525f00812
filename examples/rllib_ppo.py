"""PPO with RLlib (new API stack): one shared masked policy for every seat of many games, or one seat against opponents.

    python examples/rllib_ppo.py                          # local Ray, 2 CPUs, a few minutes
    python examples/rllib_ppo.py --address auto --num-env-runners 8 --num-games 64   # a running Ray cluster
    python examples/rllib_ppo.py --route opponents        # one seat a game against --opponents (default random)
    python examples/rllib_ppo.py --route opponents --self-play 5   # ... against the learner, every 5 iterations
    python examples/rllib_ppo.py --route pettingzoo       # RLlib's own PettingZooEnv route, to compare

The batched route (default) steps ``--num-games`` games of one core per RLlib environment
step (:class:`spoilfive_integrations.rllib.SpoilFiveMultiAgentEnv`), one shared policy in every
seat; the ``opponents`` route steps as many games with one learning seat each, the other seats
played in batch by ``--opponents`` (:class:`~spoilfive_integrations.rllib.SpoilFiveAgainstOpponentsEnv`),
and ``--self-play K`` seats a snapshot of the learner there every K iterations; the ``pettingzoo``
route wraps the AEC environment in ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``
(one card per RLlib step; its pre-check samples unmasked actions, which the AEC env refuses,
so that route disables it). All train :class:`~spoilfive_integrations.rllib.SpoilFiveMaskedModule`.
Steps are counted as decisions (agent steps): one seat choosing one action.

On a cluster nothing but this script changes: ``--address`` joins it, the project's packages
travel to the workers through ``runtime_env={"py_modules": ...}``, and the environment runners
(``--num-env-runners``) are spread over its nodes. Each printed line gives the decisions
sampled, their rate while sampling, and the rate over the whole iteration (learning included).
At the end the learned policy plays one seat against ``random`` and against ``spoiler`` tables
through :func:`agents.evaluate.evaluate` (duplicate deals, every rotation).
"""

from __future__ import annotations

import argparse
import sys
import time

try:  # torch and the library take seconds to load: a Ctrl-C then is one line and exit 130, as later on
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env

    import agents
    import spoilfive_env
    import spoilfive_integrations
    from agents.evaluate import check_against_baselines, check_deal_count
    from agents.policy import network_too_large
    from agents.sharding import CONNECT_TIMEOUT_S, reachable
    from spoilfive_env.actions import NUM_ACTIONS
    from spoilfive_env.cli import (
        ArgumentParser,
        ctrl_c_held,
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
    from spoilfive_integrations.rllib import (
        RLLIB_MEMORY,
        SHARED_POLICY,
        SpoilFiveAgainstOpponentsEnv,
        SpoilFiveMultiAgentEnv,
        count_seats_that_did_not_act,
        masked_module_spec,
        policy_agent,
        shared_policy,
    )
    from spoilfive_integrations.vector import VECTOR_MEMORY, check_env_fits_in_memory
except KeyboardInterrupt:
    if __name__ != "__main__":  # imported by a program of its own: the Ctrl-C is that program's
        raise
    print("rllib_ppo.py: stopped by Ctrl-C while starting up; nothing was run", file=sys.stderr)
    raise SystemExit(130) from None

ROUTES = ("batched", "opponents", "pettingzoo")
OPPONENTS_DEFAULTS = {"opponents": "random", "self_play": 0}
"""The opponents route's flags when not given (fixed opponents)."""
MAX_LOCAL_CPUS = 1024
"""The most CPUs a local Ray is started with (Ray fails to start a node that claims billions)."""
MIN_TURNS = 3
"""Rounds of the table a sample must span at least (``--batch-size`` over the games sampled). Below
one round RLlib's learner can get an empty update and fail (``UnboundLocalError: ... loss_per_module``,
Ray 2.60; found by trying: half a round failed, one round held); three keep a margin."""
DECISION_BYTES = 2 * (4 * OBS_DIM + NUM_ACTIONS) + 64
"""About what one sampled decision of a training batch takes (observation, next observation, mask)."""


def check_args(parser: ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, in one line naming the flag, what would fail (or wait forever) once Ray has started."""
    if args.address is not None:
        args.address = args.address.strip()
        if args.address not in ("", "auto", "local"):
            why = reachable(args.address)
            if why is not None:
                parser.error(f"--address {args.address!r}: no Ray cluster answers there within "
                             f"{CONNECT_TIMEOUT_S:g} s ({why}); give the head node's HOST:PORT (start one with "
                             "`ray start --head`), 'auto' for the cluster started on this machine, or no --address "
                             "for a local Ray")
    if not args.address:
        if args.num_cpus > MAX_LOCAL_CPUS:
            parser.error(f"--num-cpus {args.num_cpus} is not allowed: give 1 to {MAX_LOCAL_CPUS:,}")
        if args.num_env_runners > args.num_cpus:
            parser.error(f"--num-env-runners {args.num_env_runners} is more than --num-cpus {args.num_cpus}: each "
                         "runner takes one CPU of the local Ray, and RLlib would wait for them forever; give at most "
                         f"{args.num_cpus} runners or more CPUs")
    why = network_too_large(args.hidden)
    if why:
        parser.error(f"--hidden {' '.join(map(str, args.hidden))} is not allowed here: {why}")
    check_opponents_args(parser, args)
    if args.route != "pettingzoo":
        try:
            check_env_fits_in_memory(args.num_games, args.num_players, "--num-games",
                                     RLLIB_MEMORY if args.route == "batched" else VECTOR_MEMORY)
        except ValueError as error:
            parser.error(str(error))
    if args.minibatch_size > args.batch_size:
        parser.error(f"--minibatch-size {args.minibatch_size} is more than --batch-size {args.batch_size}: give a "
                     "minibatch of at most the batch")
    games = 1 if args.route == "pettingzoo" else args.num_games  # games one environment step moves
    seats = 1 if args.route == "opponents" else args.num_players  # agents a game
    least = MIN_TURNS * seats * games * max(1, args.num_env_runners)
    if args.batch_size < least:
        who = "learning seat" if args.route == "opponents" else "seat"
        factors = "games x samplers" if args.route == "opponents" else "players x games x samplers"
        parser.error(f"--batch-size {args.batch_size} is too small for {args.num_players} players, {games} game(s) an "
                     f"environment ({args.route} route) and {max(1, args.num_env_runners)} sampler(s): every {who} "
                     f"of every game should act in each sample (RLlib's learner can fail on less); give at "
                     f"least {least:,} ({MIN_TURNS} x {factors})"
                     + (", or fewer --num-games" if args.route != "pettingzoo" else ""))
    memory = physical_memory()
    if memory is None:
        return
    if args.batch_size * DECISION_BYTES > memory:
        parser.error(f"--batch-size {args.batch_size} is not allowed here: that many decisions need about "
                     f"{args.batch_size * DECISION_BYTES / 2**30:.1f} GiB, more than this machine's "
                     f"{memory / 2**30:.1f} GiB; allowed: at most {memory // DECISION_BYTES:,}")


def check_opponents_args(parser: ArgumentParser, args: argparse.Namespace) -> None:
    """The opponents route's flags: refused on the other routes, defaults filled in, the opponents loaded."""
    given = [key for key in OPPONENTS_DEFAULTS if getattr(args, key) is not None]
    if args.route != "opponents":
        if given:
            flags = " and ".join(f"--{key.replace('_', '-')}" for key in given)
            parser.error(f"{flags} {'need' if len(given) > 1 else 'needs'} --route opponents: the {args.route} route "
                         "is self-play, one shared policy in every seat")
        return
    if args.self_play and "opponents" in given:
        parser.error(f"--opponents is not allowed with --self-play {args.self_play}: the learner's snapshots are the "
                     "opponents from the first iteration on")
    for key in OPPONENTS_DEFAULTS:
        if getattr(args, key) is None:
            setattr(args, key, OPPONENTS_DEFAULTS[key])
    check_opponents_flag(parser, args.opponents, args.num_players)


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--route", choices=ROUTES, default="batched", help="environment route (see above)")
    parser.add_argument("--address", default=None,
                        help="Ray cluster to join ('auto' or host:port); default: start a local Ray")
    parser.add_argument("--num-cpus", type=positive_int, default=2,
                        help=f"CPUs of the local Ray (no --address; at most {MAX_LOCAL_CPUS:,})")
    parser.add_argument("--num-env-runners", type=non_negative_int, default=0,
                        help="remote environment runners (0: sample in the driver)")
    parser.add_argument("--num-players", type=table_size, default=4)
    parser.add_argument("--num-games", type=positive_int, default=256,
                        help="games per environment (batched and opponents routes)")
    parser.add_argument("--opponents", default=None,
                        help="opponents route: the other seats' agent (a name such as random or spoiler, a checkpoint; "
                             "default random)")
    parser.add_argument("--self-play", type=non_negative_int, default=None, metavar="K",
                        help="opponents route: seat a snapshot of the learner as the opponents every K iterations "
                             "(default 0: --opponents throughout)")
    parser.add_argument("--iterations", type=positive_int, default=10)
    parser.add_argument("--batch-size", type=positive_int, default=8192, help="decisions per training iteration")
    parser.add_argument("--minibatch-size", type=positive_int, default=2048)
    parser.add_argument("--epochs", type=positive_int, default=4)
    parser.add_argument("--lr", type=learning_rate, default=3e-4)
    parser.add_argument("--hidden", type=positive_int, nargs="+", default=[256, 256], help="layer widths")
    parser.add_argument("--seed", type=seed_value, default=0)
    parser.add_argument("--eval-deals", type=check_deal_count, default=500,
                        help="duplicate deals per evaluation table (0: no evaluation)")
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    return args


def make_pettingzoo_env(config):
    """RLlib's own PettingZoo route over the AEC environment (the comparison)."""
    return PettingZooEnv(spoilfive_env.env(num_players=config.get("num_players", 4)))


def build_config(args) -> PPOConfig:
    if args.route == "batched":
        env, env_config = SpoilFiveMultiAgentEnv, {"num_games": args.num_games,
                                                   "num_players": args.num_players, "seed": args.seed}
    elif args.route == "opponents":
        env, env_config = SpoilFiveAgainstOpponentsEnv, {"num_games": args.num_games, "num_players": args.num_players,
                                                         "opponents": args.opponents, "seed": args.seed}
    else:
        register_env("spoilfive_pettingzoo", make_pettingzoo_env)
        env, env_config = "spoilfive_pettingzoo", {"num_players": args.num_players}
    return (
        PPOConfig()
        # The batched envs pass RLlib's pre-check (illegal_action="penalty"); the AEC env raises.
        .environment(env, env_config=env_config, disable_env_checking=args.route == "pettingzoo")
        # Count decisions, not RLlib env steps (a batched env step holds up to num_games decisions).
        .multi_agent(policies={SHARED_POLICY}, policy_mapping_fn=shared_policy, count_steps_by="agent_steps")
        .callbacks(on_sample_end=count_seats_that_did_not_act)  # else a seat absent from a sample stops the run
        .rl_module(rl_module_spec=masked_module_spec(hidden=tuple(args.hidden)))
        .env_runners(num_env_runners=args.num_env_runners, num_cpus_per_env_runner=1)
        .training(train_batch_size_per_learner=args.batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.epochs, lr=args.lr, gamma=1.0, lambda_=0.95, entropy_coeff=0.01)
        .debugging(seed=args.seed)
    )


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        train_and_evaluate(args)
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: run stopped, Ray shut down, nothing saved (this example saves no model)")
    return 0


def train_and_evaluate(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)  # the driver samples and learns on the same cores
    try:
        if args.address:
            try:
                ray.init(address=args.address,
                         runtime_env={"py_modules": [spoilfive_env, agents, spoilfive_integrations]})
            except ConnectionError as error:  # 'auto' with no cluster on this machine, say
                build_parser().error(f"--address {args.address!r}: cannot join a Ray cluster "
                                     f"({str(error).splitlines()[0]}); start one with `ray start --head`, or give "
                                     "no --address for a local Ray")
        else:
            with ctrl_c_held():  # Ray's processes ignore Ctrl-C: it waits until ray.shutdown() knows them
                ray.init(num_cpus=args.num_cpus, include_dashboard=False)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if args.num_env_runners > cpus:  # on a cluster: RLlib would wait for them forever
            build_parser().error(f"--num-env-runners {args.num_env_runners} is more than the {cpus} CPUs of the "
                                 f"Ray cluster at {args.address}: each runner takes one; give at most {cpus}")
        algo = build_config(args).build_algo()
        total, started = 0, time.perf_counter()
        for iteration in range(1, args.iterations + 1):
            if args.route == "opponents" and args.self_play and (iteration - 1) % args.self_play == 0:
                seat_snapshot(algo, policy_agent(algo.get_module(SHARED_POLICY), name=f"snapshot{iteration}",
                                                 seed=args.seed + iteration, greedy=False))
            result = algo.train()
            runners = result["env_runners"]
            decisions = int(sum(runners["num_module_steps_sampled"].values()))
            sampling = result["timers"]["env_runner_sampling_timer"]
            total += decisions
            elapsed = time.perf_counter() - started
            print(f"iteration {iteration:3d}  decisions {total:8d}  sampling {decisions / sampling:7.0f}/s  "
                  f"overall {total / elapsed:7.0f}/s", flush=True)
        if args.eval_deals:
            agent = policy_agent(algo.get_module(SHARED_POLICY), name="rllib-ppo")
            check_against_baselines(agent, args.num_players, args.eval_deals, seed=args.seed + 1)
        algo.stop()
    finally:
        ray.shutdown()  # also on Ctrl-C: a local Ray ends with the run, a cluster loses only this driver


def seat_snapshot(algo, snapshot) -> None:
    """Seat ``snapshot`` (an agent) as the opponents in the env of every environment runner that has one (the
    driver's runner has none when remote runners sample)."""
    def seat(runner):
        env = runner.env  # a vector of envs in later Rays (``envs``), one env in earlier ones
        if env is None:  # the driver's runner, when remote runners sample
            return
        for one in getattr(env.unwrapped, "envs", None) or [env]:
            one.unwrapped.set_opponents(snapshot)

    algo.env_runner_group.foreach_env_runner(seat)


if __name__ == "__main__":
    run_command(main)
