"""One agent's figures over several seeds: the reports of ``python -m agents.evaluate --json``, pooled.

2,000 deals of one seed measure an agent's share of the won pools to about ± 0.75 points, so whether
it clears a margin is a question of its mean over several fresh seeds. The runs are separate (one per
seed, side by side or on other machines); this reads their JSON reports and gives, per table size and
seating (the opponents in the order they sit from the agent: who sits on its left changes what is
measured), each seed's figures, their mean with a 95% interval, the spread over the seeds, and
how many seeds reach a target::

    python -m agents.across_seeds runs/3p-seed210.json runs/3p-seed211.json --agent best --target 2

An agent is found in a run among its lineup, or as the rival of a paired run (``--paired-with``),
whose report holds the rival's own figures on the same deals. Different seeds deal independently, so
the mean's interval is the seeds' intervals combined in quadrature, ``sqrt(sum ci_i**2) / k``; the
standard deviation over the seeds beside the one those intervals imply shows whether the seeds spread
more than their noise. Where every run of a group is paired with the same other agent, the paired
differences (the agent minus the other, on the same deals) are pooled the same way.

Two runs of the same seed, table size and seating would count the same deals twice, runs under
different rules measure different games, and ``best`` names the strongest agent of its day (a report
says which spec it stood for): pooling any of these is refused, in one line that names the files.
"""

from __future__ import annotations

import json
import math
import numbers
import statistics
from collections.abc import Iterable, Mapping
from itertools import groupby
from pathlib import Path

from spoilfive_env.cards import MAX_PLAYERS, MIN_PLAYERS
from spoilfive_env.cli import (
    ArgumentParser,
    comma_items,
    finite_float,
    json_text,
    plot_after_figures,
    plot_text,
    plus_minus,
    refuse_bad_plot_path,
    run_command,
    save_figure,
)
from spoilfive_env.rules import is_integer

from .evaluate import MAX_DEALS, Z95

__all__ = ["SeedFigures", "figures_of", "pool_seeds", "format_pooled", "plot_seeds", "read_report", "main"]

SeedFigures = dict
"""One seed's figures of the agent: ``seed``, ``players``, ``opponents`` (labels by seat, in order from the
agent's), ``seating`` (every other seat in that order, the agent's own as ``itself``: :func:`seating`), ``rules``,
``label`` (the agent's label in that run), ``stood_for`` (for a label ``best`` or ``best:...``, the spec it
stood for in that run, where the report says; else ``None``), ``side`` (``"lineup"`` or ``"rival"``), ``deals``,
``share_above_fair`` and ``share_above_fair_ci95`` (points of the won pools above the fair share),
``equity`` and ``equity_ci95`` (per hand), and ``paired`` (``None``, or ``other``, ``share_difference``,
``share_difference_ci95``, ``equity_difference``, ``equity_difference_ci95``: the agent minus ``other``)."""


def read_report(path) -> dict:
    """The report of ``python -m agents.evaluate --json`` in the file at ``path``.

    Raises:
        ValueError: the file is missing or unreadable, is not JSON, or is not such a report.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} cannot be read: {error}") from None
    try:
        report = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON ({error.msg} at line {error.lineno})") from None
    except ValueError as error:  # a whole number past Python's digit limit: its words, less its advice
        raise ValueError(f"{path} cannot be read as JSON ({str(error).split(';')[0]})") from None
    except RecursionError:
        raise ValueError(f"{path} is not a report of python -m agents.evaluate --json (its JSON is nested "
                         "too deeply to read)") from None
    needed = ("num_players", "deals", "seed", "lineup", "rules", "agents")
    if not isinstance(report, dict) or any(key not in report for key in needed):
        raise ValueError(f"{path} is not a report of python -m agents.evaluate --json (it needs "
                         f"{', '.join(needed)})")
    return report


def _figure(block: dict, key: str, low: float = -math.inf, high: float = math.inf, *, null: bool = True) -> float:
    """The figure ``key`` of a block of a report, from ``low`` to ``high``; ``null`` (nothing to measure it
    on) is ``nan`` where ``null`` allows it.

    Raises:
        KeyError: the figure is missing.
        TypeError: it is not a finite number in its range (a hand-edited file: the report writes ``null``,
            never NaN or Infinity). :func:`figures_of` words both.
    """
    value = block[key]
    if value is None and null:
        return float("nan")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"its {key} is {value!r}, not a number")
    try:
        number = float(value)
    except OverflowError:  # a whole number past a float's range
        number = math.copysign(math.inf, value)
    if not (math.isfinite(number) and low <= number <= high):
        allowed = (f"from {low:g} to {high:g}" if math.isfinite(low) and math.isfinite(high)
                   else f"of at least {low:g}" if math.isfinite(low) else "")
        raise TypeError(f"its {key} is {value!r}, not a finite number {allowed}".rstrip())
    return number


def _check_fields(report: dict) -> None:
    """The fields every report of ``agents.evaluate`` holds, in the ranges it writes them.

    Raises:
        TypeError: one that is not, said by name, which :func:`figures_of` words.
    """
    players, lineup, rules = report["num_players"], report["lineup"], report["rules"]
    if not (is_integer(players) and MIN_PLAYERS <= players <= MAX_PLAYERS):
        raise TypeError(f"its num_players is {players!r}, not a whole number from {MIN_PLAYERS} to {MAX_PLAYERS}")
    if not (is_integer(report["deals"]) and 1 <= report["deals"] <= MAX_DEALS):
        raise TypeError(f"its deals is {report['deals']!r}, not a whole number from 1 to {MAX_DEALS:,}")
    if not (is_integer(report["seed"]) and report["seed"] >= 0):
        raise TypeError(f"its seed is {report['seed']!r}, not a whole number of at least 0")
    if not (isinstance(lineup, list) and len(lineup) == players and all(isinstance(label, str) for label in lineup)):
        raise TypeError(f"its lineup is {lineup!r}, not a list of agent labels, one a seat")
    if not (isinstance(rules, dict) and rules.get("num_players") == players
            and all(isinstance(value, (int, bool)) for value in rules.values())):
        raise TypeError(f"its rules are {rules!r}, not the rules options by name (whole numbers and true/false) "
                        f"for its {players} players")
    agents = report["agents"]
    if not (isinstance(agents, dict) and all(isinstance(figures, dict) for figures in agents.values())
            and set(lineup) <= set(agents)):
        raise TypeError(f"its agents are {agents!r}, not the figures of each agent of its lineup by label")
    if report.get("best") is not None and not isinstance(report["best"], str):
        raise TypeError(f"its best is {report['best']!r}, not the spec of an agent")


def figures_of(report: dict, names, source: str = "the report") -> SeedFigures:
    """The figures of the agent called any of ``names`` (its labels) in one tournament ``report``.

    Raises:
        ValueError: no agent of the run, nor its paired rival, has one of ``names``, or more than one
            has; the paired block predates the rival's own intervals; or a figure is missing.
    """
    names = [names] if isinstance(names, str) else list(names)
    try:
        return _figures_of(report, names, source)
    except _NOT_WHOLE as error:
        raise _not_whole(source, error) from None


_NOT_WHOLE = (KeyError, TypeError, IndexError, AttributeError)
"""What reading a report that lacks a field, or holds one of another kind, raises."""


def _not_whole(source: str, error: Exception) -> ValueError:
    return ValueError(f"{source} is not a whole report of python -m agents.evaluate --json "
                      f"({type(error).__name__}: {error})")


def _figures_of(report: dict, names: list[str], source: str) -> SeedFigures:
    _check_fields(report)
    lineup, paired = report["lineup"], report.get("paired")
    in_lineup = [label for label in report["agents"] if label in names]
    as_rival = paired is not None and paired.get("rival") in names
    if len(in_lineup) + as_rival != 1:
        rival = f"; its paired rival: {paired['rival']}" if paired is not None else ""
        found = "none" if not in_lineup and not as_rival else "more than one"
        raise ValueError(f"{source}: {found} of its agents is {' or '.join(names)} (its agents: "
                         f"{', '.join(report['agents'])}{rival})")
    if in_lineup:
        label, side = in_lineup[0], "lineup"
        own = report["agents"][label]
        fair = _figure(own, "fair_share", 0, 1, null=False)
        share, share_ci = _figure(own, "pool_share", 0, 1), _figure(own, "pool_share_ci95", 0)
        equity, equity_ci = _figure(own, "mean_equity"), _figure(own, "equity_ci95", 0)
        seats = seating(lineup, label)
        sign = 1.0
    else:
        if "rival_pool_share_ci95" not in paired:
            raise ValueError(f"{source}: its paired block has no intervals of the rival's own (a report "
                             "made before they were added): run it again")
        label, side = paired["rival"], "rival"
        fair = _figure(report["agents"][lineup[0]], "fair_share", 0, 1, null=False)  # the first agent's seats
        share, share_ci = _figure(paired, "rival_pool_share", 0, 1), _figure(paired, "rival_pool_share_ci95", 0)
        equity, equity_ci = _figure(paired, "rival_mean_equity"), _figure(paired, "rival_equity_ci95", 0)
        seats = seating(lineup, lineup[0])  # the rival sat in every seat of the first agent
        sign = -1.0  # the report's differences are the lineup's agent minus the rival
    pair = None
    if paired is not None and (side == "rival" or paired.get("agent") == label):
        pair = {"other": paired["agent"] if side == "rival" else paired["rival"],
                "share_difference": sign * 100 * _figure(paired, "pool_share_difference", -1, 1),
                "share_difference_ci95": 100 * _figure(paired, "pool_share_difference_ci95", 0),
                "equity_difference": sign * _figure(paired, "equity_difference"),
                "equity_difference_ci95": _figure(paired, "equity_difference_ci95", 0)}
    best = report.get("best")  # what `best` stood for in that run (older reports do not say)
    stood_for = best + label[len("best"):] if best and (label == "best" or label.startswith("best:")) else None
    return {"seed": report["seed"], "players": report["num_players"],
            "opponents": [seat for seat in seats if seat != _ITSELF], "seating": seats,
            "rules": report["rules"], "label": label, "stood_for": stood_for, "side": side,
            "deals": report["deals"],
            "share_above_fair": 100 * (share - fair), "share_above_fair_ci95": 100 * share_ci,
            "equity": equity, "equity_ci95": equity_ci, "paired": pair}


_OWN_SEAT = "\0"
"""The agent's own other seats while :func:`seating` orders them (before every label, so a seat keeps its place)."""
_ITSELF = "itself"
"""The agent's own other seats in a :func:`seating`."""


def seating(lineup, label) -> list[str]:
    """The other seats of ``lineup`` in the order they sit from ``label``'s seat on, the agent's own other seats
    as ``itself``; from the seat of the agent's that gives the least order. Every rotation of a lineup is
    played, so only this order counts: a lineup and its rotations are one experiment, and the same opponents
    in another order (``A,B,C`` and ``A,C,B``: who sits on the agent's left) another.

    >>> seating(["greedy", "spoiler", "random"], "random"), seating(["spoiler", "random", "greedy"], "random")
    (['greedy', 'spoiler'], ['greedy', 'spoiler'])
    """
    n = len(lineup)
    order = min(tuple(_OWN_SEAT if lineup[(seat + k) % n] == label else lineup[(seat + k) % n] for k in range(1, n))
                for seat in range(n) if lineup[seat] == label)
    return [_ITSELF if entry == _OWN_SEAT else entry for entry in order]


def _mean_in_quadrature(values, intervals) -> tuple[float, float]:
    """The mean of independent figures and the half-width of its 95% interval."""
    k = len(values)
    return sum(values) / k, math.sqrt(sum(ci * ci for ci in intervals)) / k


def _spread(values) -> float:
    """The standard deviation over the seeds (``nan`` for one seed, or where a seed's figure is ``nan``:
    a run with nothing to measure it on, whose report has ``null``)."""
    if len(values) < 2 or not all(math.isfinite(value) for value in values):
        return float("nan")  # statistics.stdev raises on nan (AttributeError), not answers it
    return statistics.stdev(values)


def _describe(seats) -> str:
    """``2 x pimc``, ``spoiler, random``: the seats by label in the order they sit, neighbours of one label
    counted together (a group's ``seating``, ``itself`` for the agent's own other seats)."""
    counted = ((label, len(list(run))) for label, run in groupby(seats))
    return ", ".join(label if count == 1 else f"{count} x {label}" for label, count in counted)


def _labels(names) -> list[str]:
    """``names`` (one label or several) as a list of labels, or a ``ValueError``."""
    labels = [names] if isinstance(names, str) else list(names) if _is_collection(names) else None
    if not labels or not all(isinstance(label, str) and label for label in labels):
        raise ValueError(f"names={names!r:.80} is not allowed: give the agent's label in the runs, or a list of its "
                         "labels (where the runs write it differently)")
    return labels


def _is_collection(value) -> bool:
    """An iterable of entries: not a str (its letters) nor a dict (its keys)."""
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))


def pool_seeds(reports, names=None, target: float | None = None, sources=None) -> list[dict]:
    """Pool one agent's figures over the tournament ``reports`` (dicts of ``agents.evaluate``).

    ``names``: the agent's labels (one spec may be written more than one way across the runs, e.g.
    ``best`` and the spec it stands for); by default the first agent of the first report's lineup.
    ``target``: points above the fair share; each group then counts the seeds at or above it.
    ``sources``: a name per report for the messages (the file names); by default its place.

    Returns one dict a group, a group being the runs at one table size against the same opponents seated in the
    same order around the agent (:func:`seating`; a lineup and its rotations are one), ordered by table size:
    ``players``, ``opponents`` (in that order), ``seating`` (every other seat in order from the agent's, its
    own as ``itself``), ``rules``, ``agent`` (its labels in the runs),
    ``seeds`` (each seed's :data:`SeedFigures` but its rules, ordered by seed), ``share_above_fair`` and
    ``share_above_fair_ci95`` (the mean over the seeds, in points), ``equity`` and ``equity_ci95``,
    ``share_spread`` (the standard deviation over the seeds) and ``share_spread_expected`` (what the
    seeds' own intervals imply), with ``target``: ``seeds_at_target``; and ``paired`` where every run
    of the group is paired with the same other agent (its pooled differences), else ``None``.

    Raises:
        ValueError: no report; the agent is missing from a run; two runs of a group share a seed;
            a group's runs differ in their rules; ``reports``, ``names`` or ``sources`` (one per report) is not
            a list of its kind; or ``target`` is not a finite number (nor a bool).
    """
    if not _is_collection(reports):
        given = f"a {type(reports).__name__}" if isinstance(reports, Mapping) else f"{reports!r:.80}"
        raise ValueError(f"reports={given} is not allowed: give a list of reports (the dicts of agents.evaluate), "
                         "one per seed")
    reports = list(reports)
    if not reports:
        raise ValueError("no report to pool: give at least one")
    if sources is None:
        sources = [f"report {i + 1}" for i in range(len(reports))]
    elif not (_is_collection(sources) and len(sources := list(sources)) == len(reports)):
        raise ValueError(f"sources={sources!r:.80} is not allowed: give a list of {len(reports)} names, one per "
                         "report (its file name), or None")
    if target is not None:  # any real number but a bool (True is no number of points)
        if not (isinstance(target, numbers.Real) and not isinstance(target, bool) and math.isfinite(target)):
            raise ValueError(f"target={target!r} is not allowed: give a finite number of points above fair")
        target = int(target) if isinstance(target, numbers.Integral) else float(target)
    if names is None:
        lineup = reports[0].get("lineup") if isinstance(reports[0], dict) else None
        if not lineup:
            raise ValueError(f"{sources[0]} is not a report of python -m agents.evaluate --json (no lineup)")
        try:
            _check_fields(reports[0])  # a lineup of the right kind, before its first label is read
        except _NOT_WHOLE as error:
            raise _not_whole(sources[0], error) from None
        names = [lineup[0]]
    names = _labels(names)
    groups: dict[tuple, list[tuple[SeedFigures, str]]] = {}
    for report, source in zip(reports, sources, strict=True):
        figures = figures_of(report, names, source)
        # (its own seats ordered first among a size's groups, as the seating orders them)
        key = (figures["players"], tuple(_OWN_SEAT if seat == _ITSELF else seat for seat in figures["seating"]))
        for earlier, earlier_source in groups.get(key, []):
            if earlier["seed"] == figures["seed"]:
                raise ValueError(f"{earlier_source} and {source} are both seed {figures['seed']} at "
                                 f"{figures['players']} players: the same deals would count twice")
            if earlier["rules"] != figures["rules"]:
                raise ValueError(f"{earlier_source} and {source} were played under different rules: pool "
                                 "only runs of one set of rules")
            specs = (earlier["stood_for"], figures["stood_for"])
            if None not in specs and specs[0] != specs[1]:
                raise ValueError(f"{earlier_source} and {source} measured different agents under the name "
                                 f"best ({specs[0]} and {specs[1]}): pool one agent's runs")
        groups.setdefault(key, []).append((figures, source))
    return [_pooled(sorted((figures for figures, _ in rows), key=lambda f: f["seed"]), target)
            for _, rows in sorted(groups.items())]


def _pooled(seeds: list[SeedFigures], target: float | None) -> dict:
    rules = seeds[0]["rules"]  # the group's, one set (checked): kept once, not with every seed
    seeds = [{key: value for key, value in s.items() if key != "rules"} for s in seeds]
    shares = [s["share_above_fair"] for s in seeds]
    share, share_ci = _mean_in_quadrature(shares, [s["share_above_fair_ci95"] for s in seeds])
    equity, equity_ci = _mean_in_quadrature([s["equity"] for s in seeds], [s["equity_ci95"] for s in seeds])
    expected = math.sqrt(sum((s["share_above_fair_ci95"] / Z95) ** 2 for s in seeds) / len(seeds))
    group = {"players": seeds[0]["players"], "opponents": seeds[0]["opponents"], "seating": seeds[0]["seating"],
             "rules": rules,
             "agent": sorted({s["label"] for s in seeds}), "seeds": seeds,
             "share_above_fair": share, "share_above_fair_ci95": share_ci,
             "equity": equity, "equity_ci95": equity_ci,
             "share_spread": _spread(shares), "share_spread_expected": expected, "paired": None}
    if target is not None:
        group["target"] = target
        group["seeds_at_target"] = sum(value >= target for value in shares)
    pairs = [s["paired"] for s in seeds]
    if all(pairs) and len({p["other"] for p in pairs}) == 1:
        share_gain, share_gain_ci = _mean_in_quadrature([p["share_difference"] for p in pairs],
                                                        [p["share_difference_ci95"] for p in pairs])
        equity_gain, equity_gain_ci = _mean_in_quadrature([p["equity_difference"] for p in pairs],
                                                          [p["equity_difference_ci95"] for p in pairs])
        group["paired"] = {"other": pairs[0]["other"], "share_difference": share_gain,
                           "share_difference_ci95": share_gain_ci, "equity_difference": equity_gain,
                           "equity_difference_ci95": equity_gain_ci}
    return group


def format_pooled(groups: list[dict]) -> str:
    """The text ``python -m agents.across_seeds`` prints: a table a group."""
    blocks = []
    for group in groups:
        seeds = group["seeds"]
        deals = sum(s["deals"] for s in seeds)
        lines = [f"{' / '.join(group['agent'])} at {group['players']} players against "
                 f"{_describe(group['seating'])}: {len(seeds)} seed{'s' * (len(seeds) != 1)}, {deals:,} deals"]
        rows = [("seed", "share above fair (points)", "equity / hand", "")]
        for s in seeds:
            rows.append((str(s["seed"]),
                         plus_minus(s["share_above_fair"], s["share_above_fair_ci95"], "+.2f", ".2f"),
                         plus_minus(s["equity"], s["equity_ci95"], "+.3f", ".3f"),
                         f"(as {s['label']}, the rival of a paired run)" if s["side"] == "rival" else ""))
        rows.append(("mean", plus_minus(group["share_above_fair"], group["share_above_fair_ci95"], "+.2f", ".2f"),
                     plus_minus(group["equity"], group["equity_ci95"], "+.3f", ".3f"), ""))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            cells = [row[0].ljust(widths[0]), row[1].rjust(widths[1]), row[2].rjust(widths[2]), row[3]]
            lines.append("  " + "  ".join(cells).rstrip())
        notes = [] if len(seeds) < 2 else [
            f"standard deviation over the seeds {group['share_spread']:.2f} points (their intervals imply "
            f"{group['share_spread_expected']:.2f})"]
        if "target" in group:
            notes.append(f"seeds at fair + {group['target']:g}: {group['seeds_at_target']} of {len(seeds)}")
        if notes:
            lines.append("  " + "; ".join(notes))
        if group["paired"] is not None:
            p = group["paired"]
            lines.append(f"  paired with {p['other']} on the same deals, pooled: share "
                         f"{p['share_difference']:+.2f} ± {p['share_difference_ci95']:.2f} points, equity / hand "
                         f"{p['equity_difference']:+.3f} ± {p['equity_difference_ci95']:.3f}")
        blocks.append("\n".join(lines))
    blocks.append("intervals: 95%; the mean's combines the seeds' own (clustered by deal) in quadrature")
    return "\n\n".join(blocks)


def plot_seeds(groups: list[dict], path) -> None:
    """Each seed's share above fair with its 95% interval, and the mean's, a column a group; the target
    as a dashed line where one was given. Saved to ``path`` (.png, .pdf or .svg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for column, group in enumerate(groups):
        seeds = group["seeds"]
        offsets = [0.0] if len(seeds) == 1 else [-0.3 + 0.45 * i / (len(seeds) - 1) for i in range(len(seeds))]
        ax.errorbar([column + offset for offset in offsets], [s["share_above_fair"] for s in seeds],
                    yerr=[s["share_above_fair_ci95"] for s in seeds], fmt="o", color="tab:blue", alpha=0.6,
                    markersize=4, capsize=2, label="a seed" if column == 0 else None)
        ax.errorbar([column + 0.3], [group["share_above_fair"]], yerr=[group["share_above_fair_ci95"]], fmt="D",
                    color="black", capsize=4, label="mean of the seeds" if column == 0 else None)
    targets = {group["target"] for group in groups if "target" in group}
    for target in targets:
        ax.axhline(target, color="tab:red", linestyle="--", linewidth=1, label=f"fair + {target:g}")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([plot_text(f"{g['players']} players\nv {_describe(g['seating'])}") for g in groups],
                       fontsize="small")
    ax.set_ylabel("share of the won pools above fair (points)")
    agents = sorted({label for group in groups for label in group["agent"]})
    ax.set_title(plot_text(f"{' / '.join(agents)}: each seed and the mean, 95% intervals"), fontsize="medium")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    save_figure(fig, path)


def main(argv=None) -> int:
    """The command line: a bad file or value is one line on standard error and exit status 2."""
    parser = ArgumentParser(
        prog="python -m agents.across_seeds",
        description="One agent's figures over several seeds: the JSON reports of python -m agents.evaluate "
                    "--json, pooled per table size and seating (the opponents in the order they sit from the agent).")
    parser.add_argument("reports", nargs="+", metavar="REPORT.json",
                        help="reports of python -m agents.evaluate --json, one per seed")
    parser.add_argument("--agent", default=None, metavar="LABELS",
                        help="the agent, by its label in the runs (comma-separated where the runs write it "
                             "differently); the first agent of the first report's lineup by default")
    parser.add_argument("--target", type=finite_float, default=None, metavar="POINTS",
                        help="points above the fair share: count the seeds that reach it")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--plot", default=None, metavar="PATH",
                        help="save a plot of each seed's share above fair and the mean (.png, .pdf or .svg)")
    args = parser.parse_args(argv)
    if args.plot is not None:
        refuse_bad_plot_path(parser, args.plot)
    names = None
    if args.agent is not None:
        try:
            names = comma_items(args.agent)
        except ValueError as error:
            parser.error(f"--agent {error}")
        if not names:
            parser.error(f"--agent {args.agent!r}: give the agent's label")
    try:
        reports = [read_report(path) for path in args.reports]
        groups = pool_seeds(reports, names, args.target, sources=args.reports)
    except ValueError as error:
        parser.error(str(error))
    print(json_text(groups) if args.json else format_pooled(groups), flush=True)
    if args.plot is not None:
        return plot_after_figures(parser, args.plot, lambda path: plot_seeds(groups, path))
    return 0


if __name__ == "__main__":
    run_command(main)
