"""The tournament reports kept in docs/results/ are the issue's protocol, and the README's tables of the
strongest agent and of the strongest network alone are what they pool to (``python -m agents.across_seeds
docs/results/best-pimc/*.json --agent best --target 2``, ``python -m agents.across_seeds
docs/results/network-pimc/*.json --agent ppo-vs-pimc --target 0``): a report added, lost or edited, or a
figure of a table typed by hand, fails here.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from agents import BEST
from agents.across_seeds import pool_seeds, read_report
from agents.evaluate import evaluate
from spoilfive_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]
BEST_PIMC = sorted((ROOT / "docs" / "results" / "best-pimc").glob("*.json"))
NETWORK_PIMC = sorted((ROOT / "docs" / "results" / "network-pimc").glob("*.json"))
NETWORK = "ppo-vs-pimc"
TARGET = 2.0


LEADERBOARD = ROOT / "docs" / "results" / "leaderboard" / "baselines-seed0.json"


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"### {title}\n")
    return text[start:text.index("\n### ", start + 1)]


@pytest.mark.parametrize(("agent", "reports", "fewest"), [("best", BEST_PIMC, 27), (NETWORK, NETWORK_PIMC, 18)],
                         ids=["best", "network"])
def test_every_kept_report_is_its_agent_against_pimc_on_the_issues_protocol_and_named_for_its_size_and_seed(
        agent, reports, fewest):
    assert len(reports) >= fewest
    for path in reports:
        report = read_report(path)
        players = report["num_players"]
        assert path.name == f"{players}p-seed{report['seed']}.json"
        assert report["lineup"] == [agent] + ["pimc"] * (players - 1)
        assert (report["deals"], report["rotations"], report["hands"]) == (2000, players, 2000 * players)
        assert report["rules"] == dataclasses.asdict(Rules(num_players=players))
        assert report.get("best", BEST) == BEST  # the older reports do not say; the newer name the shipped spec
        assert report.get("paired") is None


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_readme_table_is_what_the_kept_reports_pool_to(players):
    groups = pool_seeds([read_report(path) for path in BEST_PIMC], names=["best"], target=TARGET,
                        sources=[path.name for path in BEST_PIMC])
    group = next(g for g in groups if g["players"] == players)
    best_table = readme_section("The strongest agent").split("**A network alone.**")[0]
    rows = [line for line in best_table.splitlines() if line.startswith(f"| {players} | ")]
    assert len(rows) == 1, rows
    cells = [cell.replace("**", "").strip() for cell in rows[0].strip("|").split("|")]
    seeds = [s["seed"] for s in group["seeds"]]
    shares = [s["share_above_fair"] for s in group["seeds"]]
    equities = [s["equity"] for s in group["seeds"]]
    assert cells[1].startswith(f"{len(seeds)}: ")
    listed = []
    for item in cells[1].split(": ", 1)[1].split(", "):  # "218 to 225" stands for the seeds between
        ends = [int(end) for end in re.split(r" to |–", item)]
        listed += list(range(ends[0], ends[-1] + 1))
    assert listed == seeds
    assert cells[2] == f"{group['share_above_fair']:+.2f} ± {group['share_above_fair_ci95']:.2f}"
    assert cells[3] == f"{group['seeds_at_target']} of {len(seeds)}"
    assert cells[4] == f"{min(shares):+.2f} to {max(shares):+.2f}"
    assert cells[5] == f"{min(equities):+.3f} to {max(equities):+.3f}"


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_readme_table_of_the_network_alone_is_what_its_kept_reports_pool_to(players):
    groups = pool_seeds([read_report(path) for path in NETWORK_PIMC], names=[NETWORK], target=0.0,
                        sources=[path.name for path in NETWORK_PIMC])
    group = next(g for g in groups if g["players"] == players)
    section = readme_section("The strongest agent")
    start = section.index("**A network alone.**")
    rows = [line for line in section[start:].split("\n\n")[1].splitlines() if line.startswith(f"| {players} | ")]
    assert len(rows) == 1, rows
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    seeds = [s["seed"] for s in group["seeds"]]
    shares = [s["share_above_fair"] for s in group["seeds"]]
    assert cells[1] == f"{len(seeds)}: " + ", ".join(str(seed) for seed in seeds)
    assert cells[2] == f"{group['share_above_fair']:+.2f} ± {group['share_above_fair_ci95']:.2f}"
    assert cells[3] == f"{group['seeds_at_target']} of {len(seeds)}"
    assert cells[4] == f"{min(shares):+.2f} to {max(shares):+.2f}"
    assert cells[5] == f"{group['equity']:+.3f} ± {group['equity_ci95']:.3f}"


def test_the_readme_table_of_best_with_the_pool_size_is_what_its_kept_reports_say():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("**The search reads the pool where it should: in its jinks.**")
    section = text[start:text.index("\n\n", text.index("| players | ante |", start))]
    rows = [line for line in section.splitlines() if re.match(r"\| \d+ \| \d+ \|", line)]
    assert len(rows) == 6, rows
    for row in rows:
        players, ante, stopped, spoil, fire, jinks = (cell.strip() for cell in row.strip("|").split("|"))
        report = read_report(ROOT / "docs" / "results" / "best-tables" / f"{players}p-ante{ante}-seed3.json")
        assert report["lineup"] == ["best"] * int(players) and report["deals"] == 500 and report["seed"] == 3
        assert report["rules"] == dataclasses.asdict(Rules(num_players=int(players), ante=int(ante)))
        table, seat = report["table"], report["agents"]["best"]
        assert stopped == f"{1 - table['two_trick_conversion']:.3f} ± {table['two_trick_conversion_ci95']:.3f}"
        assert spoil == f"{table['spoil_rate']:.3f} ± {table['spoil_rate_ci95']:.3f}"
        assert fire == f"{seat['friendly_fire_rate']:.2f} ± {seat['friendly_fire_rate_ci95']:.2f}"
        assert jinks == f"{table['jink_attempts']} ({table['jink_successes']})"


@pytest.mark.parametrize("players", [2, 6])
def test_the_readme_figures_of_best_tables_beyond_3_to_5_players_are_their_kept_reports(players):
    report = read_report(ROOT / "docs" / "results" / "best-tables" / f"{players}p-ante1-seed3.json")
    assert report["lineup"] == ["best"] * players and (report["deals"], report["seed"]) == (500, 3)
    assert report["rules"] == dataclasses.asdict(Rules(num_players=players))
    table = report["table"]
    stopped = f"{1 - table['two_trick_conversion']:.3f} ± {table['two_trick_conversion_ci95']:.3f}"
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"at {players} players{',' if players == 2 else ''} {stopped} against" in text


def test_the_readme_leaderboard_is_the_kept_board():
    board = json.loads(LEADERBOARD.read_text(encoding="utf-8"))
    assert (board["agents"], board["players"], board["deals"], board["seed"]) == (
        ["random", "greedy", "spoiler", "ppo-20min", "ppo"], [3, 4, 5], 2000, 0)
    expected = [
        f"| {n} | `{r['agent']}` | {r['rating']:+.2f} ± {r['rating_ci95']:.2f} | {r['mean_equity']:+.3f} ± "
        f"{r['equity_ci95']:.3f} | {r['share_above_fair'] * 100:+.1f} ± {r['share_ci95'] * 100:.1f} | "
        f"{r['stop_rate']:.3f} | {r['two_trick_conversion']:.3f} | {r['friendly_fire_rate']:.3f} | "
        f"{r['friendly_fire_rate_unforced']:.3f} |"
        for n in ("3", "4", "5") for r in board["sizes"][n]["ranking"]]
    board_text = readme_section("Leaderboard").split("![leaderboard](docs/figures/leaderboard.png)")[0]
    rows = [line for line in board_text.splitlines() if re.match(r"\| \d+ \| `", line)]
    assert rows == expected


def test_the_readme_search_leaderboard_is_its_two_kept_boards():
    """The search agents' board, run as two processes (3 and 4 players; 5), each kept as it printed."""
    folder = LEADERBOARD.parent
    boards = [json.loads((folder / name).read_text(encoding="utf-8"))
              for name in ("search-seed0-3p4p.json", "search-seed0-5p.json")]
    for board, players in zip(boards, ([3, 4], [5]), strict=True):
        assert (board["agents"], board["players"], board["deals"], board["seed"], board["best_is"]) == (
            ["spoiler", "ppo", "ppo-vs-pimc", "pimc", "best"], players, 200, 0, BEST)
    sizes = {**boards[0]["sizes"], **boards[1]["sizes"]}
    expected = [
        f"| {n} | `{r['agent']}` | {r['rating']:+.2f} ± {r['rating_ci95']:.2f} | {r['mean_equity']:+.3f} ± "
        f"{r['equity_ci95']:.3f} | {r['share_above_fair'] * 100:+.1f} ± {r['share_ci95'] * 100:.1f} | "
        f"{r['stop_rate']:.3f} | {r['two_trick_conversion']:.3f} | {r['friendly_fire_rate']:.3f} | "
        f"{r['friendly_fire_rate_unforced']:.3f} |"
        for n in ("3", "4", "5") for r in sizes[n]["ranking"]]
    section = readme_section("Leaderboard")
    board_text = section[section.index("leaderboard_search.png"):section.index("![leaderboard of the search agents]")]
    rows = [line for line in board_text.splitlines() if re.match(r"\| \d+ \| `", line)]
    assert rows == expected


def test_a_table_of_the_kept_board_plays_again_to_the_digit():
    """The kept board is what this code plays: a change to an agent's draws or to the rules shows here."""
    kept = json.loads(LEADERBOARD.read_text(encoding="utf-8"))["sizes"]["3"]["tables"]
    table = next(t for t in kept if (t["agent"], t["table_of"]) == ("random", "spoiler"))
    figures = evaluate(["random", "spoiler"], 3, 2000, 0)["agents"]["random"]
    for name in ("mean_equity", "pools_won", "stops", "threats_faced", "overtakes", "forced_overtakes",
                 "two_trick_hands"):
        assert figures[name] == table[name], name
