"""Benchmark: decisions per second under random legal play.

``python -m spoilfive_env.bench`` prints a table; ``--json`` prints the same numbers as JSON;
``--seconds`` sets the time spent on each measurement (default 2); ``--quick`` runs every
measurement very briefly (for tests: the numbers are then only indicative).

Measured:

==========================  ==============================================================
measurement                 one decision is
==========================  ==============================================================
``core``, masks only        one game's action applied by :meth:`SpoilFiveCore.step`, after
                            :meth:`~SpoilFiveCore.legal_mask`; finished games are restarted
                            with :meth:`~SpoilFiveCore.reset` (included in the time)
``core``, with observation  the same plus :meth:`~SpoilFiveCore.observe` of the seat to act
``aec``                     one ``step`` of the PettingZoo environment in an ``agent_iter``
                            loop with ``last()`` (observation and mask); ``reset`` included
==========================  ==============================================================

The random action is chosen vectorised (``argmax`` of uniform noise times the mask), and that
cost is included in every number: it is what a trivial policy would cost, and it is small next
to a step at every batch size. Speed is measured here, never asserted by a test.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time

import numpy as np

from .actions import NUM_ACTIONS
from .cli import ArgumentParser, non_negative_int
from .core import SpoilFiveCore
from .env import env as make_env
from .rules import Rules

PLAYERS = (2, 4, 6, 10)
BATCH_SIZES = (1, 64, 1024, 4096)
DEFAULT_SECONDS = 2.0
QUICK_SECONDS = 0.02
SELECTION_NOTE = ("random legal action selection (argmax of uniform noise times the mask) is included "
                  "in every timing")


def _random_actions(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    return np.argmax(rng.random(mask.shape, dtype=np.float32) * mask, axis=-1)


def bench_core(num_players: int, batch_size: int, seconds: float, observe: bool, seed: int = 0) -> dict:
    """Decisions per second of a core of ``batch_size`` games with autoreset."""
    core = SpoilFiveCore(batch_size, rules=Rules(num_players=num_players), seed=seed)
    rng = np.random.default_rng(seed)

    def one_step() -> int:
        mask = core.legal_mask()
        if observe:
            core.observe()
        live = batch_size - int(core.done.sum())
        _, done = core.step(_random_actions(rng, mask))
        if done.any():
            core.reset(done)
        return live

    for _ in range(3):  # warm-up
        one_step()
    decisions = steps = 0
    start = time.perf_counter()
    while True:
        decisions += one_step()
        steps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {"kind": "core", "observe": observe, "num_players": num_players, "batch_size": batch_size,
            "decisions": decisions, "steps": steps, "seconds": elapsed,
            "decisions_per_second": decisions / elapsed}


def bench_aec(num_players: int, seconds: float, seed: int = 0) -> dict:
    """Decisions per second of the AEC environment (one game), hand after hand."""
    game = make_env(num_players=num_players)
    rng = np.random.default_rng(seed)
    decisions = hands = 0
    episode_seed = seed
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        game.reset(seed=episode_seed)
        episode_seed += 1
        for _agent in game.agent_iter():
            observation, _reward, termination, truncation, _info = game.last()
            if termination or truncation:
                game.step(None)
                continue
            game.step(int(_random_actions(rng, observation["action_mask"])))
            decisions += 1
        hands += 1
        elapsed = time.perf_counter() - start
    return {"kind": "aec", "observe": True, "num_players": num_players, "batch_size": 1,
            "decisions": decisions, "hands": hands, "seconds": elapsed,
            "decisions_per_second": decisions / elapsed}


def run(players=PLAYERS, batch_sizes=BATCH_SIZES, seconds: float = DEFAULT_SECONDS, seed: int = 0) -> dict:
    """Every measurement; a JSON-ready dict."""
    from . import __version__

    results = []
    for observe in (False, True):
        for n in players:
            for batch_size in batch_sizes:
                results.append(bench_core(n, batch_size, seconds, observe, seed))
    for n in players:
        results.append(bench_aec(n, seconds, seed))
    return {
        "benchmark": "spoilfive decisions per second under random legal play",
        "note": SELECTION_NOTE,
        "spoilfive_version": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": f"{platform.system()} {platform.machine()} {platform.processor() or ''}".strip(),
        "seconds_per_measurement": seconds,
        "num_actions": NUM_ACTIONS,
        "players": list(players),
        "batch_sizes": list(batch_sizes),
        "results": results,
    }


def _rate(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.2f}M"
    if value >= 1e3:
        return f"{value / 1e3:.1f}k"
    return f"{value:.0f}"


def format_table(report: dict) -> str:
    players, batch_sizes = report["players"], report["batch_sizes"]
    rates = {(r["kind"], r["observe"], r["num_players"], r["batch_size"]): r["decisions_per_second"]
             for r in report["results"]}
    lines = [
        f"Spoil Five: decisions per second under random legal play "
        f"({report['seconds_per_measurement']:g} s per measurement)",
        f"Note: {report['note']}.",
        f"spoilfive {report['spoilfive_version']}, Python {report['python']}, NumPy {report['numpy']}, "
        f"{report['machine']}",
    ]
    header = f"{'players':>8}" + "".join(f"{'B=' + str(b):>11}" for b in batch_sizes)
    for observe, title in ((False, "core, legal mask + step"),
                           (True, "core, legal mask + observation of the player to act + step")):
        lines += ["", title, header]
        for n in players:
            lines.append(f"{n:>8}" + "".join(f"{_rate(rates[('core', observe, n, b)]):>11}" for b in batch_sizes))
    lines += ["", "AEC environment, one game (agent_iter + last() + step)", f"{'players':>8}{'decisions/s':>14}"]
    for n in players:
        lines.append(f"{n:>8}{_rate(rates[('aec', True, n, 1)]):>14}")
    return "\n".join(lines)


def _int_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def main(argv=None) -> int:
    parser = ArgumentParser(
        prog="python -m spoilfive_env.bench",
        description="Decisions per second of the Spoil Five core and AEC environment under random legal play "
                    "(the cost of choosing random actions is included).")
    parser.add_argument("--seconds", type=float, default=None,
                        help=f"time per measurement in seconds (default {DEFAULT_SECONDS:g}; "
                             f"{QUICK_SECONDS:g} with --quick)")
    parser.add_argument("--quick", action="store_true", help="a very short run of every measurement (for tests)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON instead of a table")
    parser.add_argument("--players", type=_int_list, default=list(PLAYERS),
                        help="comma-separated table sizes (default 2,4,6,10)")
    parser.add_argument("--batch-sizes", type=_int_list, default=list(BATCH_SIZES),
                        help="comma-separated core batch sizes (default 1,64,1024,4096)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of the deals and the random actions")
    args = parser.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else (QUICK_SECONDS if args.quick else DEFAULT_SECONDS)
    if not math.isfinite(seconds) or seconds <= 0:  # nan or inf would never end a measurement
        parser.error(f"--seconds {seconds:g} is not allowed: the seconds must be positive and finite")
    for n in args.players:
        if not 2 <= n <= 10:
            parser.error(f"--players: {n} is not allowed: Spoil Five takes 2 to 10 players")
    for b in args.batch_sizes:
        if b < 1:
            parser.error(f"--batch-sizes: {b} is not allowed: batch sizes must be positive")
    report = run(args.players, args.batch_sizes, seconds, args.seed)
    print(json.dumps(report, indent=2) if args.json else format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
