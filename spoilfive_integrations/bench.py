"""Benchmark: learner steps per second, single-seat Gymnasium env against the VectorEnv.

``python -m spoilfive_integrations.bench`` alternates the two in one run (``--rounds`` times,
``--seconds`` each) and prints each one's learner steps per second and their ratio, the median
of the rounds. One learner step is one decision of the learning seat together with every
opponent move up to its next decision (``env.step``), resets included: for the single env a
``reset()`` after each episode, for the VectorEnv its autoreset (``--autoreset-mode``: by default
next-step, where an autoreset step counts no learner step for that game; same-step; or disabled,
the ended games restarted by ``reset(options={"reset_mask": ...})`` after each step). The
learner's action is a random legal one (``argmax`` of uniform noise times the mask), the same
cost in both. ``--json`` prints the figures as JSON.
Ctrl-C prints the rounds finished before it (the JSON with ``"interrupted": true``) and exits
with status 130.

It lives here, not in :mod:`spoilfive_env.bench`, because the rules layer never imports this one.
"""

from __future__ import annotations

import platform
import statistics
import time

import numpy as np
from gymnasium.vector import AutoresetMode

from spoilfive_env import __version__
from spoilfive_env.bench import MAX_ROUNDS, MAX_SECONDS, MIN_SECONDS, BenchInterrupted, refuse_bad_seconds
from spoilfive_env.cli import (
    ArgumentParser,
    exit_interrupted,
    finite_float,
    json_text,
    positive_int,
    run_command,
    seed_value,
    table_size,
)

from .gymnasium_env import SpoilFiveGymEnv
from .vector import SpoilFiveVectorEnv, check_env_fits_in_memory

DEFAULT_NUM_ENVS = 512
DEFAULT_PLAYERS = 4
DEFAULT_OPPONENTS = "spoiler"
DEFAULT_SECONDS = 2.0
DEFAULT_ROUNDS = 3


def bench_single(env: SpoilFiveGymEnv, seconds: float, rng: np.random.Generator) -> float:
    """Learner steps per second of the single-seat env, a reset after every episode."""
    _, info = env.reset()
    steps = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        action = int(np.argmax(rng.random(info["action_mask"].shape) * info["action_mask"]))
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            _, info = env.reset()
    return steps / elapsed


def bench_vector(envs: SpoilFiveVectorEnv, seconds: float, rng: np.random.Generator) -> float:
    """Learner steps per second of the VectorEnv in its autoreset mode (a next-step autoreset's restart
    step counts nothing for its game; a disabled one's ``reset_mask`` reset is timed with the step)."""
    _, infos = envs.reset()
    mode = envs.autoreset_mode.value
    restarting = np.zeros(envs.num_envs, bool)
    steps = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        masks = infos["action_mask"]
        _, _, terminated, truncated, infos = envs.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        steps += envs.num_envs - int(restarting.sum())
        ended = terminated | truncated
        if mode == "NextStep":
            restarting = ended
        elif mode == "Disabled" and ended.any():
            _, infos = envs.reset(options={"reset_mask": ended})
    return steps / elapsed


def make_envs(num_envs: int, num_players: int, opponents: str, autoreset_mode: str = "NextStep"):
    """Both envs; a ``ValueError`` for a bad table size or opponent."""
    return (SpoilFiveGymEnv(num_players=num_players, opponents=opponents),
            SpoilFiveVectorEnv(num_envs, num_players=num_players, opponents=opponents, autoreset_mode=autoreset_mode))


def run(num_envs: int = DEFAULT_NUM_ENVS, num_players: int = DEFAULT_PLAYERS, opponents: str = DEFAULT_OPPONENTS,
        seconds: float = DEFAULT_SECONDS, rounds: int = DEFAULT_ROUNDS, seed: int = 0, envs=None) -> dict:
    """Alternate both measurements ``rounds`` times; a JSON-ready dict. ``envs``: from :func:`make_envs`.

    Raises:
        BenchInterrupted: Ctrl-C after the first round; it holds the report of the rounds finished
            (``"rounds"`` counts them, ``"rounds_asked"`` the rounds asked for).
    """
    single, vector = envs if envs is not None else make_envs(num_envs, num_players, opponents)
    autoreset_mode = vector.autoreset_mode.value
    single.reset(seed=seed)
    vector.reset(seed=seed)
    rng = np.random.default_rng(seed)
    single_rates, vector_rates = [], []

    def report(**extra) -> dict:
        done = len(vector_rates)  # whole rounds: the ratio needs both measurements
        ratios = [v / s for s, v in zip(single_rates, vector_rates)]
        return {
            "benchmark": "learner steps per second: SpoilFiveGymEnv against SpoilFiveVectorEnv, alternated",
            "spoilfive_version": __version__,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "machine": f"{platform.system()} {platform.machine()} {platform.processor() or ''}".strip(),
            "num_envs": num_envs, "num_players": num_players, "opponents": opponents, "autoreset_mode": autoreset_mode,
            "seconds_per_measurement": seconds, "rounds": done, "seed": seed,
            "single_steps_per_second": single_rates[:done],
            "vector_steps_per_second": vector_rates,
            "ratio_per_round": ratios,
            "median_single": statistics.median(single_rates[:done]),
            "median_vector": statistics.median(vector_rates),
            "median_ratio": statistics.median(ratios),
            **extra,
        }

    try:
        for _ in range(rounds):
            single_rates.append(bench_single(single, seconds, rng))
            vector_rates.append(bench_vector(vector, seconds, rng))
    except KeyboardInterrupt:
        if not vector_rates:
            raise
        raise BenchInterrupted(report(interrupted=True, rounds_asked=rounds)) from None  # the rounds made are kept
    return report()


def format_table(report: dict) -> str:
    lines = [
        (f"Learner steps per second, {report['num_players']} players against {report['opponents']!r}, "
         f"{report['rounds']} alternated rounds of {report['seconds_per_measurement']:g} s, VectorEnv autoreset "
         f"mode {report['autoreset_mode']}"
         + (f" (stopped by Ctrl-C: {report['rounds_asked']} were asked for)" if report.get("interrupted") else "")),
        (f"spoilfive {report['spoilfive_version']}, Python {report['python']}, NumPy {report['numpy']}, "
         f"{report['machine']}"),
        "",
        f"{'round':>6}{'single env':>14}{'VectorEnv B=' + str(report['num_envs']):>18}{'ratio':>9}",
    ]
    for index, (s, v, r) in enumerate(zip(report["single_steps_per_second"], report["vector_steps_per_second"],
                                          report["ratio_per_round"]), start=1):
        lines.append(f"{index:>6}{s:>14,.0f}{v:>18,.0f}{r:>8.1f}x")
    lines.append(f"{'median':>6}{report['median_single']:>14,.0f}{report['median_vector']:>18,.0f}"
                 f"{report['median_ratio']:>8.1f}x")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = ArgumentParser(
        prog="python -m spoilfive_integrations.bench",
        description="Learner steps per second of the single-seat Gymnasium env and of the VectorEnv over one "
                    "core batch, alternated in one run, and their ratio.")
    parser.add_argument("--num-envs", type=positive_int, default=DEFAULT_NUM_ENVS,
                        help=f"games in the VectorEnv (default {DEFAULT_NUM_ENVS})")
    parser.add_argument("--players", type=table_size, default=DEFAULT_PLAYERS,
                        help=f"table size, 2 to 10 (default {DEFAULT_PLAYERS})")
    parser.add_argument("--opponents", default=DEFAULT_OPPONENTS,
                        help=f"opponent agent for every other seat (default {DEFAULT_OPPONENTS})")
    parser.add_argument("--seconds", type=finite_float, default=DEFAULT_SECONDS,
                        help=f"time per measurement in seconds, {MIN_SECONDS:g} to {MAX_SECONDS} (default "
                             f"{DEFAULT_SECONDS:g})")
    parser.add_argument("--rounds", type=positive_int, default=DEFAULT_ROUNDS,
                        help=f"alternations of the two measurements, 1 to {MAX_ROUNDS} (default {DEFAULT_ROUNDS})")
    parser.add_argument("--autoreset-mode", choices=[mode.value for mode in AutoresetMode], default="NextStep",
                        help="the VectorEnv's autoreset mode (default NextStep)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of deals, seats and actions")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    refuse_bad_seconds(parser, args.seconds)  # as spoilfive_env.bench: a measurement too short took no step
    if args.rounds > MAX_ROUNDS:
        parser.error(f"--rounds {args.rounds} is not allowed: give 1 to {MAX_ROUNDS} rounds")
    try:  # refused before any env is made
        check_env_fits_in_memory(args.num_envs, args.players, "--num-envs")
    except ValueError as error:
        parser.error(str(error))
    try:
        envs = make_envs(args.num_envs, args.players, args.opponents, args.autoreset_mode)
    except ValueError as error:  # a bad opponent
        parser.error(str(error))
    try:
        report = run(args.num_envs, args.players, args.opponents, args.seconds, args.rounds, args.seed, envs=envs)
    except BenchInterrupted as stopped:  # the rounds finished are not thrown away
        print(json_text(stopped.partial) if args.json else format_table(stopped.partial), flush=True)
        exit_interrupted("Ctrl-C: benchmark stopped; the rounds it had finished are above")
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: benchmark stopped before the first round finished, nothing to report")
    print(json_text(report) if args.json else format_table(report))
    return 0


if __name__ == "__main__":
    run_command(main)
