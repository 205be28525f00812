"""The leaderboard: every agent against tables of every other, at each table size, and a rating.

``python -m agents.leaderboard --players 3,4,5 --agents A,B,... --deals K [--seed S] [--json]
[--ray [ADDRESS]] [--plot PATH]``

For each table size ``n`` and each ordered pair of different agents ``(A, B)`` one
tournament of :func:`agents.evaluate.evaluate` seats ``A`` alone against ``n - 1`` copies
of ``B``: the same ``K`` duplicate deals (from ``--seed``) for every pair, each deal under
every rotation. Per agent and size the board gives:

* **equity per hand** and **pool share** (``pool_share``; ``share_above_fair``, in points in the
  table) of its lone seat, averaged over the tables of the other agents; each with a 95%
  interval that is the mean of the per-table intervals (clustered by deal). The tables share
  their deals, so the per-table errors are correlated and the mean of the half-widths is a
  safe (conservative) bound on the half-width of the average.
* a **rating**: the Luce choice model (Plackett-Luce restricted to the winner, the ranking a
  hand gives: the pool's winner above everyone else, a spoiled hand no ranking) fitted by
  maximum likelihood with ``choix.ilsr_top1`` (iterative Luce spectral ranking) over every
  won pool of every table of that size. A seat of agent ``i`` wins a hand's pool with
  probability ``exp(r_i) / sum over the seats exp(r_seat)``; the ratings are centred on 0
  (natural-log units: a rating 0.7 above another wins about twice as many pools in a
  head-to-head seat). Its 95% interval comes from the fit's Fisher information.
* the **cooperative-spoiling figures** of its lone seat (:mod:`agents.spoiling`): how often
  it stops a player on two tricks (of the hands where another player was the first to reach two, the
  share where that player did not win and this seat took a trick after he reached two),
  how often it takes a pool it was on two tricks for, and how often it overtakes a fellow
  player who was already beating the threat (of its chances to do so).

``--json`` gives every figure, the per-table results included; ``--ray`` plays every
tournament on a Ray cluster (the Ray path of :func:`agents.evaluate.evaluate`: the same
figures as without it); ``--plot PATH`` draws the ratings by table size (matplotlib).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable

import numpy as np

from spoilfive_env.cards import MAX_PLAYERS, MIN_PLAYERS
from spoilfive_env.cli import (
    ArgumentParser,
    comma_items,
    exit_interrupted,
    install_hint,
    json_text,
    plot_after_figures,
    plot_text,
    plus_minus,
    refuse_bad_plot_path,
    run_command,
    save_figure,
    seed_value,
    table_sizes,
)
from spoilfive_env.rules import is_integer

from . import BEST, load_agent
from .evaluate import MAX_DEALS, Z95, check_ray, deal_count, evaluate, refuse_bad_agents
from .sharding import connect_for_command, plays_on_ray

RATING_PRIOR = 1e-3
"""choix's regularisation (a weak Gaussian prior on the ratings): keeps the fit finite when an
agent never wins, without moving the ratings measurably when it does."""

SPOILING_FIGURES = (
    ("stop_rate", "stops", "threats_faced"),
    ("two_trick_conversion", "two_trick_pools", "two_trick_hands"),
    ("friendly_fire_rate", "overtakes", "overtake_chances"),
    ("friendly_fire_rate_unforced", "unforced_overtakes", "unforced_overtake_chances"),
)
"""(figure, numerator count, denominator count) per agent, summed over its tables. The unforced friendly fire
leaves out the chances where every legal card overtook (``agents.spoiling``): what tells a player's choice."""


def _choice_data(tables: list[dict], names: list[str], num_players: int) -> list[tuple[int, list[int]]]:
    """Top-1 data for choix: one ``(winner, losers)`` item per won pool, agents as indices.

    In a table of ``A`` alone against ``n - 1`` copies of ``B`` a pool won by ``A`` is
    ``(A, [B] * (n-1))``, one won by a ``B`` seat ``(B, [A] + [B] * (n-2))``.
    """
    data = []
    for table in tables:
        a, b = names.index(table["agent"]), names.index(table["table_of"])
        data += [(a, [b] * (num_players - 1))] * table["pools_won"]
        data += [(b, [a] + [b] * (num_players - 2))] * table["table_pools_won"]
    return data


def rating_library():
    """choix, the rating library (the leaderboard's only extra dependency), or an ImportError that says how to
    install it; :func:`leaderboard` asks first, so that a missing library is told before hours of play."""
    try:
        import choix
    except ImportError:
        raise ImportError(f"the leaderboard's ratings need choix, which is not installed: "
                          f"{install_hint('leaderboard')}") from None
    return choix


def fit_ratings(tables: list[dict], names: list[str], num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """Luce ratings ``(m,)`` (centred) and their 95% half-widths from the won pools of ``tables``.

    The interval: the inverse Fisher information of the choice model at the fit, inverted on the ratings
    whose sum is 0 (the centring fixes the common shift, which the pools do not tell), ``Z95`` standard errors.
    With no pool won at all, the ratings are unknown (``nan``); where the pools leave them unidentified (agents
    never compared, through their tables, with the rest) so are their intervals (``inf``).
    """
    choix = rating_library()
    m = len(names)
    data = _choice_data(tables, names, num_players)
    if not data:
        return np.full(m, np.nan), np.full(m, np.nan)
    ratings = choix.ilsr_top1(m, data, alpha=RATING_PRIOR)
    ratings = ratings - ratings.mean()
    strength = np.exp(ratings)
    information = np.zeros((m, m))
    for table in tables:  # every pool of a table has the same choice set: one term per table
        a, b = names.index(table["agent"]), names.index(table["table_of"])
        seats = np.zeros(m)
        seats[a] += 1
        seats[b] += num_players - 1
        p = seats * strength / (seats * strength).sum()
        information += (table["pools_won"] + table["table_pools_won"]) * (np.diag(p) - np.outer(p, p))
    # An orthonormal basis of the sum-zero ratings. Not a pseudo-inverse: an agent that won every pool (or
    # none) leaves the information nearly singular, and its round-off eigenvalue (-1e-17, not 0) came out as a
    # variance of -4e15, clipped to an interval of 0: "known exactly" where the fit runs off to infinity.
    basis = np.linalg.qr(np.eye(m)[:, : m - 1] - 1 / m)[0]
    reduced = basis.T @ information @ basis
    eigenvalues = np.linalg.eigvalsh(reduced)
    if eigenvalues[0] <= 1e-12 * max(eigenvalues[-1], 1e-300):
        return ratings, np.full(m, np.inf)
    covariance = basis @ np.linalg.inv(reduced) @ basis.T
    return ratings, Z95 * np.sqrt(np.diag(covariance))


def _table_result(report: dict, agent: str, table_of: str) -> dict:
    """One tournament's figures for the lone agent (entry 0) and the table around it."""
    lone = report["entries"][0]
    others = report["entries"][1:]
    return {
        "agent": agent,
        "table_of": table_of,
        "mean_equity": lone["mean_equity"], "equity_ci95": lone["equity_ci95"],
        "pool_share": lone["pool_share"], "pool_share_ci95": lone["pool_share_ci95"],
        "fair_share": lone["fair_share"],
        "pools_won": lone["pools_won"],
        "table_pools_won": int(sum(entry["pools_won"] for entry in others)),
        "spoil_rate": report["table"]["spoil_rate"],
        "stops": lone["stops"], "threats_faced": lone["threats_faced"],
        "two_trick_pools": lone["two_trick_pools"], "two_trick_hands": lone["two_trick_hands"],
        "overtakes": lone["overtakes"], "overtake_chances": lone["overtake_chances"],
        "forced_overtakes": lone["forced_overtakes"],
        "unforced_overtakes": lone["overtakes"] - lone["forced_overtakes"],
        "unforced_overtake_chances": lone["overtake_chances"] - lone["forced_overtakes"],
    }


def _agent_row(name: str, tables: list[dict], rating: float, rating_ci: float) -> dict:
    mine = [t for t in tables if t["agent"] == name]
    row = {
        "agent": name,
        "rating": float(rating), "rating_ci95": float(rating_ci),
        "mean_equity": float(np.mean([t["mean_equity"] for t in mine])),
        "equity_ci95": float(np.mean([t["equity_ci95"] for t in mine])),
        "pool_share": float(np.mean([t["pool_share"] for t in mine])),
        "share_above_fair": float(np.mean([t["pool_share"] - t["fair_share"] for t in mine])),
        "share_ci95": float(np.mean([t["pool_share_ci95"] for t in mine])),
        "fair_share": mine[0]["fair_share"],
    }
    for figure, numerator, denominator in SPOILING_FIGURES:
        top = sum(t[numerator] for t in mine)
        bottom = sum(t[denominator] for t in mine)
        row[figure] = float(top / bottom) if bottom else None  # no chance to show it
        row[denominator] = int(bottom)
    return row


def board_agents(agents) -> list[str]:
    """The agent specs of a board, stripped (blank ones left out), or a ``ValueError``: fewer than two, one
    given twice (a typo, most likely, as a repeated table size: not an agent to drop silently), not a spec."""
    given = [agents] if isinstance(agents, str) else list(agents)  # a string is one spec, not its letters
    odd = [a for a in given if not isinstance(a, str)]
    if odd:
        raise ValueError(f"agent {odd[0]!r} is not allowed: the leaderboard takes agent specs (names, "
                         "name:key=value specs, checkpoint paths)")
    names = [a.strip() for a in given if a.strip()]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"agents {', '.join(names)} are not allowed: give each agent once "
                         f"({', '.join(repeated)} more than once)")
    if len(names) < 2:
        raise ValueError(f"a leaderboard needs at least two different agents, got {agents!r}")
    return names


def leaderboard(agents: list[str], players=(3, 4, 5), deals: int = 2000, seed: int = 0, *,
                ray: str | bool | None = None, progress=None) -> dict:
    """Play every pairing at every table size and return the board (what ``--json`` prints).

    Args:
        agents: at least two distinct agent specs (names, ``name:key=value`` specs, paths), each once.
        players: table sizes.
        deals: duplicate deals per tournament (each under every rotation).
        seed: seed of the deals (the same deals for every pairing of a size) and of the agents.
        ray: ``None``: play here; otherwise the ``ray=`` of :func:`agents.evaluate.evaluate`.
        progress: optional callable ``(text)`` told about each tournament as it starts; given one,
            each tournament also shows its tqdm bar on standard error.

    Returns:
        ``{"agents", "players", "deals", "seed", "top_rated", "best_is", "sizes": {n: {"ranking": [rows by
        rating], "tables": [one per pairing]}}, "seconds"}``.

    Raises:
        ValueError: fewer than two agents, an agent given twice, a bad spec, or a bad table size.
        ImportError: choix, the rating library, is not installed (before any play).
    """
    names = board_agents(agents)
    sizes = [] if isinstance(players, str) or not isinstance(players, Iterable) else list(players)
    bad = [n for n in sizes if not (is_integer(n) and MIN_PLAYERS <= n <= MAX_PLAYERS)]
    if not sizes or bad:
        raise ValueError(f"table sizes {bad or players!r} are not allowed: give a list of whole numbers "
                         f"{MIN_PLAYERS}-{MAX_PLAYERS}")
    sizes = [int(n) for n in sizes]
    if len(set(sizes)) != len(sizes):  # as --players: a typo, most likely, not a size to drop silently
        raise ValueError(f"table sizes {players!r} are not allowed: give distinct table sizes")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress={progress!r:.60} is not allowed: give a callable (told each tournament's "
                         "text) or None")
    check_ray(ray)
    rating_library()
    for spec in names:  # as refuse_bad_agents: a bad spec is refused now, not after the pairings before it
        load_agent(spec, seed=0)
    started = time.perf_counter()
    options = {"ray": ray} if plays_on_ray(ray) else {}
    board, unfinished = {}, None
    try:
        for n in sizes:
            tables = []
            unfinished = {"players": n, "tables": tables}  # what a Ctrl-C now keeps of this size
            for agent in names:
                for table_of in names:
                    if agent == table_of:
                        continue
                    if progress is not None:
                        progress(f"{n} players: {agent} against a table of {table_of}")
                    report = evaluate([agent, table_of], n, deals, seed, progress=progress is not None, **options)
                    tables.append(_table_result(report, agent, table_of))
            ratings, ratings_ci = fit_ratings(tables, names, n)
            rows = [_agent_row(name, tables, r, ci) for name, r, ci in zip(names, ratings, ratings_ci)]
            # unknown ratings (no pool won at this size) last, in the order given
            board[str(n)] = {"ranking": sorted(rows, key=lambda row: -row["rating"] if math.isfinite(row["rating"])
                                               else math.inf), "tables": tables}
            unfinished = None
    except KeyboardInterrupt:  # hours of tournaments are not thrown away: the sizes done are the board
        if not board and not (unfinished and unfinished["tables"]):
            raise
    done = [n for n in sizes if str(n) in board]
    rated = [n for n in done if all(math.isfinite(row["rating"]) for row in board[str(n)]["ranking"])]
    overall = {name: np.mean([next(r["rating"] for r in board[str(n)]["ranking"] if r["agent"] == name)
                              for n in rated]) for name in names} if rated else {}
    return {
        "agents": names,
        "players": done,
        "deals": int(deals),
        "seed": int(seed),
        "rating": "Luce choice model over each won pool (choix.ilsr_top1), centred, natural-log units",
        # the top-rated agent of this run, which need not be load_agent("best") (named apart below); None where no
        # size finished or none had a pool won
        "top_rated": max(overall, key=overall.get) if overall else None,
        "best_is": BEST,  # what the name "best" stands for (CONTRACT.md: the leaderboard says which it is)
        "sizes": board,
        "seconds": time.perf_counter() - started,
        # Ctrl-C: the size in play then, with the tables it had finished (no rating from part of a size)
        "interrupted": unfinished,
    }


def _rate(value) -> str:
    """A rate to 3 places, or '-' where there was no chance to show it (or, by choice, a board from before 0.5.0)."""
    return "-" if value is None else f"{value:.3f}"


def format_board(board: dict) -> str:
    """The human table that ``python -m agents.leaderboard`` prints."""
    lines = [(f"Spoil Five leaderboard: {', '.join(board['agents'])}; {board['deals']} duplicate deals per "
              f"table, every rotation, seed {board['seed']}, {board['seconds']:.0f} s")]
    width = max(len(name) for name in board["agents"])
    for n in board["players"]:
        lines += ["", f"{n} players (fair share {1 / n:.3f}); each agent alone against a table of each other agent",
                  (f"{'':<3}{'agent':<{width}}  {'rating':>14}  {'equity / hand':>16}  {'share above fair':>17}  "
                   f"{'stops':>6}  {'2-trick wins':>12}  {'overtakes':>9}  {'by choice':>9}")]
        for place, row in enumerate(board["sizes"][str(n)]["ranking"], 1):
            lines.append(
                f"{place:<3}{row['agent']:<{width}}  "
                f"{plus_minus(row['rating'], row['rating_ci95'], '>+6.2f', '<5.2f')}  "
                f"{plus_minus(row['mean_equity'], row['equity_ci95'], '>+7.3f', '<5.3f')}  "
                f"{plus_minus(100 * row['share_above_fair'], 100 * row['share_ci95'], '>+7.1f', '<4.1f')} pt  "
                f"{_rate(row['stop_rate']):>6}  {_rate(row['two_trick_conversion']):>12}  "
                f"{_rate(row['friendly_fire_rate']):>9}  {_rate(row.get('friendly_fire_rate_unforced')):>9}")
    done = board["players"]
    unfinished = board.get("interrupted")
    if unfinished:
        lines += ["", f"stopped by Ctrl-C during {unfinished['players']} players; its finished tables "
                      "(no rating from part of a size):"]
        lines += [f"   {t['agent']} against a table of {t['table_of']}: equity {t['mean_equity']:+.3f} ± "
                  f"{t['equity_ci95']:.3f}, share above fair {100 * (t['pool_share'] - t['fair_share']):+.1f} ± "
                  f"{100 * t['pool_share_ci95']:.1f} pt" for t in unfinished["tables"]]
    lines += [
        "",
        f"top rated over these sizes: {board['top_rated'] or ('- (no pool won)' if done else '- (no size finished)')}",
        f"best (load_agent(\"best\"), the strongest agent shipped) is {board['best_is']}",
        ("rating: Luce choice model fitted to who won each pool (choix), centred, 95% interval from its Fisher "
         "information; equity and share: mean over the tables, 95% (mean of the per-table intervals, clustered "
         "by deal); stops: share of the hands where another player was the first to reach two tricks that he lost "
         "while this seat took a later trick; 2-trick wins: pools won of the hands it reached two tricks; "
         "overtakes: share of its chances to overtake a fellow already beating the threat that it took; by choice: "
         "the same, leaving out the chances where every legal card overtook"),
    ]
    return "\n".join(lines)


def plot_ratings(board: dict, path) -> None:
    """Ratings by table size, one line per agent with its 95% band, saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = board["players"]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name in board["agents"]:
        rows = [next(r for r in board["sizes"][str(n)]["ranking"] if r["agent"] == name) for n in sizes]
        rating = np.array([r["rating"] for r in rows])
        ci = np.array([r["rating_ci95"] for r in rows])
        ax.errorbar(sizes, rating, yerr=ci, marker="o", capsize=3, label=plot_text(name))
    ax.set_xticks(sizes)
    ax.set_xlabel("players at the table")
    ax.set_ylabel("Luce rating (log strength, centred)")
    ax.set_title(f"Spoil Five leaderboard ({board['deals']} duplicate deals per table, seed {board['seed']})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    save_figure(fig, path)


def main(argv=None) -> int:
    """The command line; bad input: one line on standard error and exit status 2."""
    parser = ArgumentParser(prog="python -m agents.leaderboard",
                            description="Every agent against tables of every other, at each table size, "
                                        "on duplicate deals with every rotation; a Luce rating per size.")
    parser.add_argument("--players", type=table_sizes, default=[3, 4, 5], help="table sizes, e.g. 3,4,5 (default)")
    parser.add_argument("--agents", required=True,
                        help="comma-separated agents, at least two: names, name:key=value specs or checkpoint paths")
    parser.add_argument("--deals", type=deal_count, default=2000,
                        help=f"duplicate deals per table, 1 to {MAX_DEALS:,} (default 2000)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the deals and agents (default 0)")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="play on a Ray cluster: no address starts a local one, 'auto' joins this machine's, "
                             "or HOST:PORT")
    parser.add_argument("--plot", default=None, metavar="PATH", help="save a plot of the ratings by table size")
    parser.add_argument("--quiet", action="store_true",
                        help="no report of each tournament, nor its progress bar, on standard error")
    args = parser.parse_args(argv)
    try:
        items = comma_items(args.agents)  # a blank item is refused, as agents.evaluate does
    except ValueError as error:
        parser.error(f"--agents {error}")
    try:
        specs = board_agents(items)
    except ValueError as error:
        parser.error(f"--agents {args.agents!r}: {error}")
    refuse_bad_agents(parser, "--agents", specs, players=args.players)
    if args.plot is not None:  # asked now: a plot that cannot be written fails before the tournaments
        refuse_bad_plot_path(parser, args.plot)
    if args.ray is not None:  # join the cluster now, as agents.evaluate: an unreachable address fails before any play
        connect_for_command(parser, args.ray)
    progress = None if args.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    try:
        board = leaderboard(specs, args.players, args.deals, args.seed, ray=args.ray, progress=progress)
    except KeyboardInterrupt:  # before any tournament had finished
        exit_interrupted("Ctrl-C: leaderboard stopped before any tournament finished, nothing to report")
    except (ValueError, ImportError) as error:
        parser.error(str(error))
    print(json_text(board) if args.json else format_board(board), flush=True)  # before the plot:
    if args.plot is not None and board["players"]:  # a plot that cannot be written loses no figure
        status = plot_after_figures(parser, args.plot, lambda path: plot_ratings(board, path))
        if status:
            return status
    if board["interrupted"]:
        exit_interrupted("Ctrl-C: leaderboard stopped; the tournaments it had finished are above")
    return 0


if __name__ == "__main__":
    run_command(main)
