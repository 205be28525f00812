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

``--adapters`` measures instead each library's door of this package that is installed (the SB3 ``VecEnv``, the
Tianshou vector env, the RLlib env of one learning seat a game against opponents) beside the VectorEnv, alternated
in the same way, at the same number of games: learner steps per second with the door's own conventions (SB3's
same-step autoreset, Tianshou's ``reset(env_id)`` of the ended games, RLlib's episode of one hand in every game and
its ``reset()``), the restarts timed with the steps, and each door's rate as a share of the VectorEnv's in the same
round. A library that is not installed is skipped, and the report says so.

It lives here, not in :mod:`spoilfive_env.bench`, because the rules layer never imports this one.
"""

from __future__ import annotations

import importlib.util
import platform
import statistics
import time

import numpy as np
from gymnasium.vector import AutoresetMode

from spoilfive_env import __version__
from spoilfive_env.bench import (
    MAX_ROUNDS,
    MAX_SECONDS,
    MIN_SECONDS,
    BenchInterrupted,
    refuse_bad_seconds,
    seconds_value,
)
from spoilfive_env.cli import (
    ArgumentParser,
    exit_interrupted,
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


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action a row of ``masks`` (``argmax`` of uniform noise times the mask)."""
    return np.argmax(rng.random(masks.shape) * masks, axis=-1)


def bench_sb3(envs, seconds: float, rng: np.random.Generator) -> float:
    """Learner steps per second of the SB3 ``VecEnv`` (a game that ends restarts in the same step, SB3's way)."""
    envs.reset()
    steps = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        envs.step(random_legal(envs.action_masks(), rng))
        steps += envs.num_envs
    return steps / elapsed


def bench_tianshou(envs, seconds: float, rng: np.random.Generator) -> float:
    """Learner steps per second of the Tianshou vector env, the ended games restarted by ``reset(env_id)``."""
    batch, _ = envs.reset()
    masks = np.asarray(batch.mask)
    steps = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        batch, _, terminated, truncated, _ = envs.step(random_legal(masks, rng))
        masks = np.asarray(batch.mask)
        steps += envs.env_num
        ended = np.flatnonzero(terminated | truncated)
        if len(ended):
            restarted, _ = envs.reset(env_id=ended)
            masks[ended] = restarted.mask
    return steps / elapsed


def bench_rllib(env, seconds: float, rng: np.random.Generator) -> float:
    """Learner steps per second of the RLlib env of one learning seat a game: each step acts for every game still
    playing, and ``reset()`` deals every game anew when the last has ended."""
    observations, _ = env.reset()
    episode_over = False
    steps = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        if episode_over:  # (the last step observes every agent once more, asking nothing)
            observations, _ = env.reset()
            episode_over = False
            continue
        actions = random_legal(np.stack([view["action_mask"] for view in observations.values()]), rng)
        observations, _, terminated, _, _ = env.step(dict(zip(observations, actions.tolist())))
        episode_over = terminated["__all__"]
        steps += len(actions)
    return steps / elapsed


def make_sb3(num_envs: int, num_players: int, opponents: str, seed: int):
    from .sb3 import SpoilFiveSB3VecEnv

    return SpoilFiveSB3VecEnv(num_envs, num_players=num_players, opponents=opponents, seed=seed)


def make_tianshou(num_envs: int, num_players: int, opponents: str, seed: int):
    from .tianshou import SpoilFiveTianshouVectorEnv

    return SpoilFiveTianshouVectorEnv(num_envs, num_players=num_players, opponents=opponents, seed=seed)


def make_rllib(num_envs: int, num_players: int, opponents: str, seed: int):
    from .rllib import SpoilFiveAgainstOpponentsEnv

    return SpoilFiveAgainstOpponentsEnv({"num_games": num_envs, "num_players": num_players, "opponents": opponents,
                                         "seed": seed, "illegal_action": "raise"})  # as the other doors


ADAPTERS = {
    "sb3": ("stable_baselines3", "SpoilFiveSB3VecEnv", make_sb3, bench_sb3),
    "tianshou": ("tianshou", "SpoilFiveTianshouVectorEnv", make_tianshou, bench_tianshou),
    "rllib": ("ray.rllib", "SpoilFiveAgainstOpponentsEnv", make_rllib, bench_rllib),
}
"""Each door: the library it needs, its class, how to make it (games, players, opponents, seed) and how to
measure it."""


def installed_adapters() -> tuple[list[str], list[str]]:
    """The doors whose library is installed, and those skipped."""
    def has(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is not None
        except ImportError:  # a parent package that is missing
            return False

    present = [name for name, (module, *_) in ADAPTERS.items() if has(module)]
    return present, [name for name in ADAPTERS if name not in present]


def run_adapters(num_envs: int = DEFAULT_NUM_ENVS, num_players: int = DEFAULT_PLAYERS,
                 opponents: str = DEFAULT_OPPONENTS, seconds: float = DEFAULT_SECONDS, rounds: int = DEFAULT_ROUNDS,
                 seed: int = 0, adapters: list[str] | None = None) -> dict:
    """The VectorEnv and each door of ``adapters`` (default: every installed one) in turn, ``rounds`` times; a
    JSON-ready dict with each door's rates and its share of the VectorEnv's rate in the same round.

    Raises:
        BenchInterrupted: Ctrl-C after the first round; it holds the report of the rounds finished.
    """
    present, skipped = installed_adapters()
    names = present if adapters is None else list(adapters)
    vector = SpoilFiveVectorEnv(num_envs, num_players=num_players, opponents=opponents)
    vector.reset(seed=seed)
    doors = {name: ADAPTERS[name][2](num_envs, num_players, opponents, seed) for name in names}
    rng = np.random.default_rng(seed)
    vector_rates: list[float] = []
    rates: dict[str, list[float]] = {name: [] for name in names}

    def report(**extra) -> dict:
        done = min([len(vector_rates), *map(len, rates.values())])  # whole rounds: a share needs both
        shares = {name: [r / v for r, v in zip(rates[name][:done], vector_rates)] for name in names}
        return {
            "benchmark": "learner steps per second: each library's door against SpoilFiveVectorEnv, alternated",
            "spoilfive_version": __version__,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "machine": f"{platform.system()} {platform.machine()} {platform.processor() or ''}".strip(),
            "num_envs": num_envs, "num_players": num_players, "opponents": opponents,
            "seconds_per_measurement": seconds, "rounds": done, "seed": seed,
            "adapters": {name: ADAPTERS[name][1] for name in names},
            "skipped": [name for name in skipped if name not in names],
            "vector_steps_per_second": vector_rates[:done],
            "adapter_steps_per_second": {name: rates[name][:done] for name in names},
            "share_of_vector_per_round": shares,
            "median_vector": statistics.median(vector_rates[:done]),
            "median_adapter": {name: statistics.median(rates[name][:done]) for name in names},
            "median_share_of_vector": {name: statistics.median(shares[name]) for name in names},
            **extra,
        }

    try:
        for _ in range(rounds):
            vector_rates.append(bench_vector(vector, seconds, rng))
            for name, door in doors.items():
                rates[name].append(ADAPTERS[name][3](door, seconds, rng))
    except KeyboardInterrupt:
        if not all(rates.values()) or not vector_rates:
            raise
        raise BenchInterrupted(report(interrupted=True, rounds_asked=rounds)) from None
    return report()


def format_adapters_table(report: dict) -> str:
    names = list(report["adapters"])
    lines = [
        (f"Learner steps per second, {report['num_players']} players against {report['opponents']!r}, "
         f"{report['num_envs']} games, {report['rounds']} alternated rounds of "
         f"{report['seconds_per_measurement']:g} s; "
         "each door's share of the VectorEnv's rate in the same round"
         + (f" (stopped by Ctrl-C: {report['rounds_asked']} were asked for)" if report.get("interrupted") else "")),
        (f"spoilfive {report['spoilfive_version']}, Python {report['python']}, NumPy {report['numpy']}, "
         f"{report['machine']}"),
    ]
    if report["skipped"]:
        lines.append(f"skipped (library not installed): {', '.join(report['skipped'])}")
    lines += ["", f"{'round':>6}{'VectorEnv':>12}" + "".join(f"{name:>18}" for name in names)]
    rows = [(str(index), vector, [(report["adapter_steps_per_second"][name][index - 1],
                                   report["share_of_vector_per_round"][name][index - 1]) for name in names])
            for index, vector in enumerate(report["vector_steps_per_second"], start=1)]
    rows.append(("median", report["median_vector"], [(report["median_adapter"][name],
                                                      report["median_share_of_vector"][name]) for name in names]))
    for label, vector, cells in rows:
        lines.append(f"{label:>6}{vector:>12,.0f}" + "".join(f"{rate:>11,.0f} ({share:.2f})" for rate, share in cells))
    return "\n".join(lines)


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
    parser.add_argument("--seconds", type=seconds_value, default=DEFAULT_SECONDS,
                        help=f"time per measurement in seconds, {MIN_SECONDS:g} to {MAX_SECONDS} (default "
                             f"{DEFAULT_SECONDS:g})")
    parser.add_argument("--rounds", type=positive_int, default=DEFAULT_ROUNDS,
                        help=f"alternations of the two measurements, 1 to {MAX_ROUNDS} (default {DEFAULT_ROUNDS})")
    parser.add_argument("--autoreset-mode", choices=[mode.value for mode in AutoresetMode], default="NextStep",
                        help="the VectorEnv's autoreset mode (default NextStep)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of deals, seats and actions")
    parser.add_argument("--adapters", action="store_true",
                        help="measure each installed library door (SB3, Tianshou, RLlib) beside the VectorEnv instead")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    refuse_bad_seconds(parser, args.seconds)  # as spoilfive_env.bench: a measurement too short took no step
    if args.rounds > MAX_ROUNDS:
        parser.error(f"--rounds {args.rounds} is not allowed: give 1 to {MAX_ROUNDS} rounds")
    try:  # refused before any env is made
        check_env_fits_in_memory(args.num_envs, args.players, "--num-envs")
    except ValueError as error:
        parser.error(str(error))
    if args.adapters:
        return main_adapters(parser, args)
    try:
        envs = make_envs(args.num_envs, args.players, args.opponents, args.autoreset_mode)
    except ValueError as error:  # a bad opponent
        parser.error(str(error))
    return print_report(lambda: run(args.num_envs, args.players, args.opponents, args.seconds, args.rounds, args.seed,
                                    envs=envs), format_table, args.json)


def print_report(measure, show, as_json: bool) -> int:
    """Print the report of ``measure()`` as JSON or as ``show`` makes it a table; after Ctrl-C, the rounds it had
    finished (they are not thrown away), and exit 130."""
    try:
        report = measure()
    except BenchInterrupted as stopped:
        print(json_text(stopped.partial) if as_json else show(stopped.partial), flush=True)
        exit_interrupted("Ctrl-C: benchmark stopped; the rounds it had finished are above")
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: benchmark stopped before the first round finished, nothing to report")
    print(json_text(report) if as_json else show(report))
    return 0


def main_adapters(parser: ArgumentParser, args) -> int:
    """``--adapters``: the doors beside the VectorEnv (the flags already checked but the autoreset mode's)."""
    if args.autoreset_mode != "NextStep":
        parser.error(f"--autoreset-mode {args.autoreset_mode} is not allowed with --adapters: each door restarts its "
                     "games its own way, beside the VectorEnv's default NextStep")
    present, _ = installed_adapters()
    if not present:
        parser.error("--adapters: none of the libraries is installed (stable-baselines3, tianshou, ray[rllib]); "
                     "install the sb3, rllib or tianshou extra")
    try:
        SpoilFiveVectorEnv(1, num_players=args.players, opponents=args.opponents)  # a bad opponent, before any work
    except ValueError as error:
        parser.error(str(error))
    return print_report(lambda: run_adapters(args.num_envs, args.players, args.opponents, args.seconds, args.rounds,
                                             args.seed), format_adapters_table, args.json)


if __name__ == "__main__":
    run_command(main)
