"""Benchmark: decisions per second under random legal play.

``python -m spoilfive_env.bench`` prints a table; ``--json`` prints the same numbers as JSON;
``--seconds`` sets the time spent on each measurement (default 2); ``--quick`` runs every
measurement very briefly (for tests: the numbers are then only indicative). Ctrl-C prints the
measurements finished before it (the JSON with ``"interrupted": true``) and exits with status 130.

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

The random legal action is drawn exactly uniformly and its cost is included in every number:
for a batch, one uniform number per game picks the k-th legal action through the mask packed
8 actions a byte (:func:`random_legal_actions`; at ``B = 4096`` about a third of the loop, 0.3 ms, since
the core was compiled); for one game, a uniform choice among ``np.flatnonzero(mask)``. Speed is
measured here, never asserted by a test.

``--peers`` measures the project beside its peers, when they are installed (the ``peers`` extra,
from the checkout: ``pip install -c .ci/constraints.txt -e ".[peers]"``): each measurement runs in
a fresh subprocess, ours and the peer's alternately (who goes first alternates too) for
``--rounds`` rounds, every process on the same one CPU (NumPy steps on one thread; XLA would
spread a Pgx step over every core), and the table gives the ratio ours / peer per round, its
median and range. A peer that is not installed, or fails to start, is reported as skipped with
the reason. ``--profile`` prints the CPU microseconds of the parts of one decision
(:func:`profile`; docs/performance.md).

==============================  =====================================  ============================
comparison                      ours                                   peer
==============================  =====================================  ============================
one game, AEC loop              ``agent_iter``/``last``/``step``,       PettingZoo ``leduc_holdem_v4``,
                                4 players                              ``texas_holdem_v4`` (same loop)
one game, observation tensor    the same                               OpenSpiel ``euchre``, its
                                                                       information-state tensor read
                                                                       at every decision
batch, mask + step              ``B = 4096``, 4 players                Pgx ``leduc_holdem``, JAX on
                                                                       CPU, ``jit(vmap(auto_reset))``
batch, mask + observation       ``B = 4096``, observation of the       OpenSpiel ``euchre`` as above
+ step                          seat to act                            (one game at a time); and
                                                                       ours without the observation
                                                                       (what the observation costs)
==============================  =====================================  ============================
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from .actions import NUM_ACTIONS
from .cli import (
    ArgumentParser,
    exit_interrupted,
    json_text,
    non_negative_int,
    positive_int,
    positive_ints,
    run_command,
    seed_value,
    table_sizes,
)
from .core import SpoilFiveCore, check_fits_in_memory, core_backend
from .env import env as make_env
from .observation import observation_backend
from .rules import Rules

PLAYERS = (2, 4, 6, 10)
BATCH_SIZES = (1, 64, 1024, 4096)
DEFAULT_SECONDS = 2.0
QUICK_SECONDS = 0.02
MAX_SECONDS = 3600  # per measurement: an hour is already far more than a steady rate needs
MIN_SECONDS = 0.01
"""The shortest measurement: below about 10 ms a rate is mostly the clock's and the warm-up's noise, and a
measurement can end before its first step (a rate of 0, which a ratio of rates then divides by)."""
SELECTION_NOTE = ("a uniformly random legal action is drawn at every decision and its cost is included "
                  "in every timing")
DEFAULT_ROUNDS = 5
MAX_ROUNDS = 1000  # alternations of a comparison: enough for any median; more would only never end
PEER_PLAYERS = 4  # table size of our side of every comparison
PEER_BATCH = 4096  # batch size of the batched comparisons
WORKER_TIMEOUT = 600  # seconds a measuring subprocess may take, JAX compilation included
HAND_DECISIONS = 20  # decisions in a 4-player hand (5 tricks of 4 cards), robbing aside

_BITS_PER_BYTE = 8
# Set bits in each byte value, and the position of the j-th set bit of each byte value.
_BYTE_POPCOUNT = np.array([bin(value).count("1") for value in range(256)], np.uint8)
_BYTE_SELECT = np.zeros((256, _BITS_PER_BYTE), np.uint8)
for _value in range(256):
    _positions = [bit for bit in range(_BITS_PER_BYTE) if _value >> bit & 1]
    _BYTE_SELECT[_value, : len(_positions)] = _positions
_BYTE_SELECT = _BYTE_SELECT.reshape(-1)


def random_legal_actions(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` ``(B, A)`` (every row has one).

    One uniform number per game instead of one per action: the mask is packed 8 actions a byte
    and laid out ``(bytes, B)``, so the running count of legal actions, the byte holding the
    k-th and the bit within it are whole-row operations and table lookups.

    >>> mask = np.zeros((3, 20), bool); mask[0, [5, 12]] = True; mask[1, 19] = True; mask[2] = True
    >>> actions = random_legal_actions(np.random.default_rng(0), mask)
    >>> bool(mask[np.arange(3), actions].all())
    True
    """
    packed = np.packbits(mask, axis=1, bitorder="little").T.copy()  # (bytes, B)
    running = _BYTE_POPCOUNT.take(packed)
    for byte_row in range(1, len(running)):  # legal actions up to and including each byte
        running[byte_row] += running[byte_row - 1]  # (a loop over 14 bytes: np.cumsum is slower)
    pick = (rng.random(mask.shape[0], dtype=np.float32) * running[-1]).astype(np.uint8)  # 0 .. legal-1
    before_byte = running <= pick  # bytes wholly before the picked action
    byte = before_byte.sum(axis=0, dtype=np.intp)
    skipped = (running * before_byte).max(axis=0)  # legal actions in those bytes
    bits = packed[byte, np.arange(mask.shape[0])].astype(np.intp)
    return byte * _BITS_PER_BYTE + _BYTE_SELECT.take(bits * _BITS_PER_BYTE + (pick - skipped))


def random_legal_action(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A uniformly random legal action of one mask ``(A,)``."""
    legal = np.flatnonzero(mask)
    return int(legal[int(rng.random() * len(legal))])  # Generator.integers costs several times more


def bench_core(num_players: int, batch_size: int, seconds: float, observe: bool, seed: int = 0) -> dict:
    """Decisions per second of a core of ``batch_size`` games with autoreset."""
    core = SpoilFiveCore(batch_size, rules=Rules(num_players=num_players), seed=seed)
    rng = np.random.default_rng(seed)

    def one_step() -> int:
        mask = core.legal_mask()
        if observe:
            core.observe()
        live = batch_size - int(core.done.sum())
        _, done = core.step(random_legal_actions(rng, mask))
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


def aec_loop(game, seconds: float, seed: int = 0) -> tuple[int, int, float]:
    """Random legal play of a PettingZoo AEC game, episode after episode, for ``seconds``.

    The loop PettingZoo documents (``agent_iter``, ``last``, ``step``), run alike for ours and
    for PettingZoo's own games. Returns ``(decisions, episodes, elapsed seconds)``.
    """
    rng = np.random.default_rng(seed)
    decisions = episodes = 0
    episode_seed = seed
    game.reset(seed=seed)  # untimed: first-call costs (a compiled observation loads or compiles)
    game.last()
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
            game.step(random_legal_action(rng, observation["action_mask"]))
            decisions += 1
        episodes += 1
        elapsed = time.perf_counter() - start
    return decisions, episodes, elapsed


def bench_aec(num_players: int, seconds: float, seed: int = 0) -> dict:
    """Decisions per second of the AEC environment (one game), hand after hand."""
    decisions, hands, elapsed = aec_loop(make_env(num_players=num_players), seconds, seed)
    return {"kind": "aec", "observe": True, "num_players": num_players, "batch_size": 1,
            "decisions": decisions, "hands": hands, "seconds": elapsed,
            "decisions_per_second": decisions / elapsed}


class BenchInterrupted(KeyboardInterrupt):
    """Ctrl-C during a benchmark after some measurements were made: ``partial`` is what the
    function returns, over those measurements only (a report has ``"interrupted": True``). A
    :class:`KeyboardInterrupt`, so a caller that does not look for it stops as on any Ctrl-C."""

    def __init__(self, partial: dict):
        super().__init__("Ctrl-C during a benchmark: the measurements made before it are in .partial")
        self.partial = partial


def run(players=PLAYERS, batch_sizes=BATCH_SIZES, seconds: float = DEFAULT_SECONDS, seed: int = 0) -> dict:
    """Every measurement; a JSON-ready dict.

    Raises:
        BenchInterrupted: Ctrl-C after the first measurement; it holds the report of those made.
    """
    from . import __version__

    results = []

    def report(**extra) -> dict:
        return {
            "benchmark": "spoilfive decisions per second under random legal play",
            "note": SELECTION_NOTE,
            "spoilfive_version": __version__,
            "core": core_backend(),
            "observation": observation_backend(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "machine": f"{platform.system()} {platform.machine()} {platform.processor() or ''}".strip(),
            "seconds_per_measurement": seconds,
            "num_actions": NUM_ACTIONS,
            "players": list(players),
            "batch_sizes": list(batch_sizes),
            "results": results,
            **extra,
        }

    try:
        for observe in (False, True):
            for n in players:
                for batch_size in batch_sizes:
                    results.append(bench_core(n, batch_size, seconds, observe, seed))
        for n in players:
            results.append(bench_aec(n, seconds, seed))
    except KeyboardInterrupt:
        if not results:
            raise
        raise BenchInterrupted(report(interrupted=True)) from None  # the measurements made are kept
    return report()


def _rate(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.2f}M"
    if value >= 1e3:
        return f"{value / 1e3:.1f}k"
    return f"{value:.0f}"


def _versions_line(report: dict) -> str:
    """What was measured: versions, the core's and the observation's backends, and the machine."""
    return (f"spoilfive {report['spoilfive_version']} (core: {report.get('core', 'numpy')}, "
            f"observation: {report.get('observation', 'numpy')}), "
            f"Python {report['python']}, NumPy {report['numpy']}, {report['machine']}")


def format_table(report: dict) -> str:
    """The report as text tables; after a Ctrl-C, only the tables begun, ``-`` where not measured."""
    players, batch_sizes = report["players"], report["batch_sizes"]
    rates = {(r["kind"], r["observe"], r["num_players"], r["batch_size"]): _rate(r["decisions_per_second"])
             for r in report["results"]}
    measured = {(kind, observe) for kind, observe, _, _ in rates}
    lines = [
        f"Spoil Five: decisions per second under random legal play "
        f"({report['seconds_per_measurement']:g} s per measurement)",
        f"Note: {report['note']}.",
        _versions_line(report),
    ]
    if report.get("interrupted"):
        lines.append("Stopped by Ctrl-C: the measurements made before it, '-' where none was made.")
    header = f"{'players':>8}" + "".join(f"{'B=' + str(b):>11}" for b in batch_sizes)
    for observe, title in ((False, "core, legal mask + step"),
                           (True, "core, legal mask + observation of the player to act + step")):
        if ("core", observe) not in measured:
            continue
        lines += ["", title, header]
        for n in players:
            lines.append(f"{n:>8}" + "".join(f"{rates.get(('core', observe, n, b), '-'):>11}" for b in batch_sizes))
    if ("aec", True) in measured:
        lines += ["", "AEC environment, one game (agent_iter + last() + step)", f"{'players':>8}{'decisions/s':>14}"]
        for n in players:
            lines.append(f"{n:>8}{rates.get(('aec', True, n, 1), '-'):>14}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- beside the peers
def _peer_pettingzoo(name: str, seconds: float, seed: int) -> dict:
    import importlib

    game = importlib.import_module(f"pettingzoo.classic.{name}").env()
    decisions, episodes, elapsed = aec_loop(game, seconds, seed)
    return {"decisions": decisions, "episodes": episodes, "seconds": elapsed}


def _peer_pgx(name: str, seconds: float, seed: int) -> dict:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    game = pgx.make(name)
    init = jax.jit(jax.vmap(game.init))
    step = jax.vmap(auto_reset(game.step, game.init))

    @jax.jit
    def one_step(state, key):
        # The same selection as ours: one uniform number per game picks among the legal actions.
        act_key, step_key = jax.random.split(key)
        mask = state.legal_action_mask
        pick = jnp.floor(jax.random.uniform(act_key, (PEER_BATCH,)) * mask.sum(axis=1))
        action = jnp.argmax(jnp.cumsum(mask, axis=1) > pick[:, None], axis=1)
        return step(state, action, jax.random.split(step_key, PEER_BATCH))

    key = jax.random.PRNGKey(seed)
    key, init_key = jax.random.split(key)
    state = init(jax.random.split(init_key, PEER_BATCH))
    for _ in range(3):  # compile and warm up
        key, step_key = jax.random.split(key)
        state = one_step(state, step_key)
    jax.block_until_ready(state)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        key, step_key = jax.random.split(key)
        state = one_step(state, step_key)
        steps += 1
    jax.block_until_ready(state)
    elapsed = time.perf_counter() - start
    return {"decisions": steps * PEER_BATCH, "steps": steps, "seconds": elapsed}


def _peer_open_spiel(name: str, seconds: float, seed: int) -> dict:
    import pyspiel

    game = pyspiel.load_game(name)
    rng = np.random.default_rng(seed)
    decisions = episodes = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()  # uniform in euchre's deal
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            state.information_state_tensor()
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
            decisions += 1
        episodes += 1
        elapsed = time.perf_counter() - start
    return {"decisions": decisions, "episodes": episodes, "seconds": elapsed}


def _ours(kind: str, seconds: float, seed: int) -> dict:
    if kind == "aec":
        return bench_aec(PEER_PLAYERS, seconds, seed)
    return bench_core(PEER_PLAYERS, PEER_BATCH, seconds, observe=kind == "core_observe", seed=seed)


# Worker name -> (modules it needs, function(name, seconds, seed)).
_WORKERS = {
    "pettingzoo": (("pettingzoo", "rlcard"), _peer_pettingzoo),
    "pgx": (("pgx", "jax"), _peer_pgx),
    "open_spiel": (("pyspiel",), _peer_open_spiel),
    "ours": ((), _ours),
}


OBSERVATION_SHARE_PEER = "ours, mask + step"


@dataclass(frozen=True)
class Comparison:
    """One row of the side-by-side table: our measurement against one peer's."""

    title: str
    ours: str  # "aec", "core" or "core_observe"
    peer: str  # "worker:name", e.g. "pgx:leduc_holdem"
    peer_title: str


COMPARISONS = (
    Comparison("one game, AEC loop", "aec", "pettingzoo:leduc_holdem_v4", "PettingZoo leduc_holdem_v4"),
    Comparison("one game, AEC loop", "aec", "pettingzoo:texas_holdem_v4", "PettingZoo texas_holdem_v4"),
    Comparison("one game, observation tensor", "aec", "open_spiel:euchre", "OpenSpiel euchre"),
    Comparison(f"B={PEER_BATCH}, mask + step", "core", "pgx:leduc_holdem", "Pgx leduc_holdem (JAX CPU)"),
    Comparison(f"B={PEER_BATCH}, mask + observation + step", "core_observe", "open_spiel:euchre",
               "OpenSpiel euchre, one game"),
    # Not a peer: what building the observation costs, both sides ours, paired in each round.
    Comparison(f"B={PEER_BATCH}, mask + observation + step", "core_observe", "ours:core", OBSERVATION_SHARE_PEER),
)


def missing_modules(worker: str) -> list[str]:
    """The modules a worker needs that are not installed (found without importing them)."""
    needed, _ = _WORKERS[worker.split(":")[0]]
    return [module for module in needed if importlib.util.find_spec(module) is None]


def run_worker(spec: str, seconds: float, seed: int) -> dict:
    """Measure ``spec`` ("ours:aec", "pgx:leduc_holdem", ...) in a fresh Python process.

    Returns the worker's JSON result with ``decisions_per_second``; raises ``RuntimeError``
    with the worker's last line of error output when it fails.
    """
    command = [sys.executable, "-m", "spoilfive_env.bench", "--worker", spec, "--seconds", repr(seconds),
               "--seed", str(seed)]
    cpu = worker_cpu()
    if cpu is not None:
        command += ["--worker-cpu", str(cpu)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=WORKER_TIMEOUT,
                               env={**os.environ, "JAX_PLATFORMS": "cpu"})
    if completed.returncode != 0:
        lines = completed.stderr.strip().splitlines() or [f"exit status {completed.returncode}"]
        raise RuntimeError(lines[-1])
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    result["decisions_per_second"] = result["decisions"] / result["seconds"]
    return result


def worker_cpu() -> int | None:
    """The one CPU every measuring process is pinned to (None where affinity is not supported).

    NumPy steps on one thread while XLA spreads a Pgx step over every core; on one CPU each
    side gets the same machine, also when other work shares it.
    """
    if not hasattr(os, "sched_getaffinity"):
        return None
    return min(os.sched_getaffinity(0))


def summarize(ours: list[float], peer: list[float]) -> dict:
    """Ratios ours / peer of paired rounds: every ratio, their median and range, and the rates."""
    ratios = [a / b for a, b in zip(ours, peer)]
    return {"ours_rates": ours, "peer_rates": peer, "ratios": ratios, "median": statistics.median(ratios),
            "low": min(ratios), "high": max(ratios), "ours_median": statistics.median(ours),
            "peer_median": statistics.median(peer)}


def compare(comparisons=COMPARISONS, rounds: int = DEFAULT_ROUNDS, seconds: float = DEFAULT_SECONDS,
            seed: int = 0, measure=run_worker, log=None) -> dict:
    """Run every comparison whose peer is installed, alternating ours and the peer's, round by round.

    Each measurement is a separate process (``measure``), so neither side inherits the other's
    imports, threads or caches; round ``r`` runs ours first when ``r`` is even. A peer that is
    missing or fails is skipped, with the reason in its row.

    Raises:
        BenchInterrupted: Ctrl-C after the first round; it holds the report of the comparisons
            finished and of the rounds finished of the one in progress (its row says how many).
    """
    rows = []

    def report(**extra) -> dict:
        from . import __version__

        return {"benchmark": "spoilfive beside its peers: decisions per second, ratio ours / peer per round",
                "note": SELECTION_NOTE, "date": time.strftime("%Y-%m-%d"), "spoilfive_version": __version__,
                "core": core_backend(), "observation": observation_backend(),
                "python": platform.python_version(), "numpy": np.__version__,
                "machine": f"{platform.system()} {platform.machine()} {os.cpu_count()} CPUs",
                "pinned_cpu": worker_cpu(),
                "rounds": rounds, "seconds_per_measurement": seconds, "players": PEER_PLAYERS,
                "batch_size": PEER_BATCH, "rows": rows, **extra}

    for comparison in comparisons:
        row = {"title": comparison.title, "peer": comparison.peer_title, "ours_kind": comparison.ours}
        missing = missing_modules(comparison.peer)
        if missing:
            row["skipped"] = (f"not installed: {', '.join(missing)} "
                              "(from the checkout: pip install -c .ci/constraints.txt -e '.[peers]')")
            rows.append(row)
            continue
        ours, peer = [], []
        try:
            for round_index in range(rounds):
                order = [("ours", f"ours:{comparison.ours}"), ("peer", comparison.peer)]
                if round_index % 2:
                    order.reverse()
                for side, spec in order:
                    rate = measure(spec, seconds, seed + round_index)["decisions_per_second"]
                    (ours if side == "ours" else peer).append(rate)
                if log:
                    log(f"{comparison.title} vs {comparison.peer_title}: round {round_index + 1}/{rounds} "
                        f"ours {_rate(ours[-1])}, peer {_rate(peer[-1])}")
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as error:
            row["skipped"] = f"failed: {error}"
            rows.append(row)
            continue
        except KeyboardInterrupt:  # the rounds finished are kept
            paired = min(len(ours), len(peer))
            if paired:
                row.update(summarize(ours[:paired], peer[:paired]), interrupted=f"{paired} of {rounds} rounds")
                rows.append(row)
            if not any("ratios" in done for done in rows):
                raise
            raise BenchInterrupted(report(interrupted=True)) from None
        row.update(summarize(ours, peer))
        rows.append(row)
    return report()


def format_comparison(report: dict) -> str:
    """The side-by-side table as Markdown: one row per comparison, ratio median and range."""
    lines = [
        f"Spoil Five beside its peers, {report['date']}: {report['rounds']} rounds of "
        f"{report['seconds_per_measurement']:g} s per side, each in its own process, alternating; "
        f"{report['players']} players" + ("" if report.get("pinned_cpu") is None else
                                          f"; every process on CPU {report['pinned_cpu']}"),
        f"Note: {report['note']}.",
        _versions_line(report),
    ]
    if report.get("interrupted"):
        lines.append("Stopped by Ctrl-C: the comparisons finished before it, and the rounds finished of the one "
                     "in progress.")
    lines += [
        "",
        "| what | ours (median) | peer | peer (median) | ratio ours/peer: median (range) |",
        "|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        if "skipped" in row:
            lines.append(f"| {row['title']} | | {row['peer']} | | skipped: {row['skipped']} |")
            continue
        partial = f", {row['interrupted']} (Ctrl-C)" if "interrupted" in row else ""
        lines.append(f"| {row['title']} | {_rate(row['ours_median'])}/s | {row['peer']} | "
                     f"{_rate(row['peer_median'])}/s | {_ratio(row['median'])} "
                     f"({_ratio(row['low'])}-{_ratio(row['high'])}){partial} |")
    for row in report["rows"]:
        if row.get("peer") == OBSERVATION_SHARE_PEER and "ratios" in row:
            lines += ["", f"Ours, B={report['batch_size']}: mask + observation + step runs at {row['median']:.0%} "
                          f"of mask + step (median of the paired rounds, range {row['low']:.0%}-{row['high']:.0%})."]
    return "\n".join(lines)


def _ratio(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def refuse_bad_worker(parser: ArgumentParser, spec: str, cpu: int | None) -> None:
    """``--worker WORKER:NAME`` and ``--worker-cpu CPU`` (the flags of :func:`run_worker`'s subprocess) checked
    before any work: ``parser.error`` otherwise."""
    worker, sep, name = spec.partition(":")
    if worker not in _WORKERS or not sep or not name:
        parser.error(f"--worker {spec!r} is not allowed: give WORKER:NAME, WORKER one of {', '.join(_WORKERS)} "
                     "(e.g. ours:core)")
    if cpu is None:
        return
    if not hasattr(os, "sched_getaffinity"):
        parser.error(f"--worker-cpu {cpu}: this system cannot pin a process to a CPU; leave it out")
    allowed = sorted(os.sched_getaffinity(0))
    if cpu not in allowed:
        parser.error(f"--worker-cpu {cpu} is not allowed: give a CPU this process may run on "
                     f"({_cpu_ranges(allowed)})")


def _cpu_ranges(cpus: list[int]) -> str:
    """``0-3, 6``: sorted CPU numbers as ranges."""
    ranges = []
    for cpu in cpus:
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ", ".join(str(low) if low == high else f"{low}-{high}" for low, high in ranges)


def _worker_main(spec: str, seconds: float, seed: int, cpu: int | None = None) -> int:
    worker, _, name = spec.partition(":")
    if cpu is not None:  # before JAX starts its threads
        os.sched_setaffinity(0, {cpu})
    result = _WORKERS[worker][1](name, seconds, seed)
    print(json.dumps({"worker": spec, "decisions": result["decisions"], "seconds": result["seconds"]}))
    return 0


# ---------------------------------------------------------------------------- where the time goes
def _best_cpu_microseconds(call, number: int, repeats: int = 3) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(number):
            call()
        best = min(best, (time.process_time() - start) / number)
    return best * 1e6


def _cores_in_play(batch_size: int, count: int, num_players: int) -> list:
    """``count`` cores of ``batch_size`` games, each advanced a different number of steps.

    A batch is played for several hands first, restarting finished games, so that its games
    stand at every point of a hand (a fresh batch plays its tricks in step).
    """
    warm_up = 0 if batch_size == 1 else 3 * HAND_DECISIONS
    cores = []
    for k in range(count):
        core = SpoilFiveCore(batch_size, rules=Rules(num_players=num_players), seed=k)
        rng = np.random.default_rng(k)
        for _ in range(warm_up + 2 + 3 * k):
            _, done = core.step(random_legal_actions(rng, core.legal_mask()))
            if done.any():
                core.reset(done)
        cores.append(core)
    return cores


def _reset_masks(cores) -> None:
    for core in cores:
        core._mask_cache = None
        core._legal_mask()


def _profile_batch(batch_size: int, num_players: int, count: int) -> dict:
    from .observation import build_observation

    cores = _cores_in_play(batch_size, count, num_players)
    number = 1000 if batch_size == 1 else 6
    seats = [core.current.copy() for core in cores]
    rng = np.random.default_rng(0)
    actions = [random_legal_actions(rng, core.legal_mask()) for core in cores]
    games = np.arange(batch_size)

    def observe_all():
        for core, seat in zip(cores, seats):
            build_observation(core, seat)

    def copy_and_step():
        for core, action in zip([c.subset(games) for c in cores], actions):
            core.step(action)

    copies = max(3, number // 5)
    step = (_best_cpu_microseconds(copy_and_step, copies)
            - _best_cpu_microseconds(lambda: _reset_masks([c.subset(games) for c in cores]), copies))
    return {f"observation B={batch_size}": _best_cpu_microseconds(observe_all, number) / count,
            f"legal mask B={batch_size}": _best_cpu_microseconds(lambda: _reset_masks(cores), number) / count,
            f"step B={batch_size}": step / count}


def profile(num_players: int = PEER_PLAYERS, batch_sizes=(1, PEER_BATCH), seconds: float = DEFAULT_SECONDS,
            count: int = 6) -> dict:
    """CPU microseconds per call of the parts of a decision: observation, legal mask, step.

    Each part runs on ``count`` cores at different points of a hand. The step is timed on fresh
    copies (:meth:`SpoilFiveCore.subset`), less the cost of copying and computing the mask
    there. ``"aec decision"`` is one decision of the AEC loop, PettingZoo's wrapper and the
    random choice included.

    Raises:
        BenchInterrupted: Ctrl-C after the parts of the first batch size; it holds the parts timed.
    """
    parts = {}
    try:
        for batch_size in batch_sizes:
            parts.update(_profile_batch(batch_size, num_players, count))
        game = make_env(num_players=num_players)  # made before the clock starts: not part of a decision
        start = time.process_time()
        decisions, _, _ = aec_loop(game, seconds)
    except KeyboardInterrupt:
        if not parts:
            raise
        raise BenchInterrupted(parts) from None  # the parts timed are kept
    parts["aec decision"] = (time.process_time() - start) / decisions * 1e6
    return parts


def format_profile(parts: dict) -> str:
    """:func:`profile`'s parts, one a line."""
    return "\n".join(f"{name:>22}  {value:9.1f} us" for name, value in parts.items())


def distinct_batch_sizes(text: str) -> list[int]:
    """argparse ``type`` of ``--batch-sizes``: distinct batch sizes, each at least 1 (a size given twice is a
    typo, most likely, as a table size given twice: not one to measure twice)."""
    sizes = positive_ints(text)
    if len(set(sizes)) != len(sizes):
        raise argparse.ArgumentTypeError(f"{text!r}: give distinct batch sizes")
    return sizes


def seconds_value(text: str) -> float:
    """argparse ``type`` of ``--seconds`` in both benchmark commands: a number (its range is checked by
    :func:`refuse_bad_seconds`, as a default is); text that is none is refused naming the range."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number: give {MIN_SECONDS:g} to {MAX_SECONDS} "
                                         "seconds") from None


def refuse_bad_seconds(parser: ArgumentParser, seconds: float) -> None:
    """``--seconds`` of both benchmark commands: :data:`MIN_SECONDS` to :data:`MAX_SECONDS` (nan or inf would
    never end a measurement); ``parser.error`` otherwise."""
    if not (math.isfinite(seconds) and MIN_SECONDS <= seconds <= MAX_SECONDS):
        parser.error(f"--seconds {seconds:g} is not allowed: give {MIN_SECONDS:g} to {MAX_SECONDS} seconds (a "
                     "shorter measurement can end before its first step)")


def main(argv=None) -> int:
    parser = ArgumentParser(
        prog="python -m spoilfive_env.bench",
        description="Decisions per second of the Spoil Five core and AEC environment under random legal play "
                    "(the cost of choosing random actions is included).")
    parser.add_argument("--seconds", type=seconds_value, default=None,
                        help=f"time per measurement in seconds, {MIN_SECONDS:g} to {MAX_SECONDS} (default "
                             f"{DEFAULT_SECONDS:g}; {QUICK_SECONDS:g} with --quick)")
    parser.add_argument("--quick", action="store_true", help="a very short run of every measurement (for tests)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON instead of a table")
    parser.add_argument("--players", type=table_sizes, default=None,
                        help="comma-separated table sizes (default 2,4,6,10)")
    parser.add_argument("--batch-sizes", type=distinct_batch_sizes, default=None,
                        help="comma-separated core batch sizes (default 1,64,1024,4096)")
    parser.add_argument("--seed", type=seed_value, default=None,
                        help="seed of the deals and the random actions (default 0)")
    parser.add_argument("--peers", action="store_true",
                        help="measure beside the installed peers (PettingZoo classic, Pgx, OpenSpiel: the "
                             "'peers' extra), each side in its own process, alternating, and print the ratios")
    parser.add_argument("--rounds", type=positive_int, default=None,
                        help=f"rounds of --peers, 1 to {MAX_ROUNDS} (default {DEFAULT_ROUNDS})")
    parser.add_argument("--profile", action="store_true",
                        help="CPU microseconds per call of the observation, the legal mask and the step "
                             "(B=1 and B=4096) and of one AEC decision (docs/performance.md)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # one measurement, for --peers' subprocesses
    parser.add_argument("--worker-cpu", type=non_negative_int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peers and args.profile:
        parser.error("--peers and --profile are two different runs: give one of them")
    run_of = "--peers" if args.peers else "--profile" if args.profile else None
    for option, value in (("--players", args.players), ("--batch-sizes", args.batch_sizes)):
        if value is not None and run_of:  # it would be ignored
            parser.error(f"{option} is for the default measurements; {run_of} measures at its own table size and "
                         f"batches ({PEER_PLAYERS} players, B=1 and {PEER_BATCH}): leave {option} out")
    if args.rounds is not None and not args.peers:
        parser.error("--rounds is for --peers: add --peers, or leave --rounds out")
    if args.rounds is not None and args.rounds > MAX_ROUNDS:
        parser.error(f"--rounds {args.rounds} is not allowed: give 1 to {MAX_ROUNDS} rounds")
    if args.seed is not None and args.profile:
        parser.error("--profile times the same fixed positions every run and takes no --seed: leave --seed out")
    seed = args.seed if args.seed is not None else 0
    players = args.players or list(PLAYERS)
    batch_sizes = args.batch_sizes or list(BATCH_SIZES)
    rounds = args.rounds or DEFAULT_ROUNDS
    seconds = args.seconds if args.seconds is not None else (QUICK_SECONDS if args.quick else DEFAULT_SECONDS)
    refuse_bad_seconds(parser, seconds)
    if args.worker is not None:
        refuse_bad_worker(parser, args.worker, args.worker_cpu)
    elif args.worker_cpu is not None:
        parser.error("--worker-cpu is for --worker: leave it out")
    for b in batch_sizes:
        try:  # refused now, not after the other measurements
            check_fits_in_memory(b, max(players))
        except ValueError as error:
            parser.error(f"--batch-sizes: {error}")
    if args.worker is not None:
        try:
            return _worker_main(args.worker, seconds, seed, args.worker_cpu)
        except KeyboardInterrupt:  # the terminal's Ctrl-C stops --peers too, which keeps the rounds finished
            exit_interrupted("Ctrl-C: measurement stopped, nothing reported")

    def log(line):
        print(line, file=sys.stderr, flush=True)

    show = format_profile if args.profile else format_comparison if args.peers else format_table
    try:
        if args.profile:
            report = profile(seconds=seconds)
        elif args.peers:
            report = compare(rounds=rounds, seconds=seconds, seed=seed, log=log)
        else:
            report = run(players, batch_sizes, seconds, seed)
    except BenchInterrupted as stopped:  # minutes of measurements are not thrown away
        print(json_text(stopped.partial) if args.json else show(stopped.partial), flush=True)
        exit_interrupted("Ctrl-C: benchmark stopped; the measurements it had finished are above")
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: benchmark stopped before any measurement finished, nothing to report")
    print(json_text(report) if args.json else show(report))
    return 0


if __name__ == "__main__":
    run_command(main)
