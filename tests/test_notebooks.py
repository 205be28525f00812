"""Every notebook in ``notebooks/`` runs from top to bottom without an error, and its cells compute the figures
they print and plot (each cell run alone on small inputs, below).

Part of the normal suite (not marked slow): the notebooks are kept small. They run in the
``python3`` kernel of the interpreter running the tests (jupyter_client starts ``python``
kernels with ``sys.executable``), from ``notebooks/`` as Jupyter and nbconvert run them (so a
notebook that finds files relative to the repository root fails here), with the repository
root on ``PYTHONPATH`` so that the packages import without an install.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
# Probes appended to a notebook: (code, what its output must be), run from notebooks/.
PROBES = {"02_cooperative_spoiling.ipynb": [
    ('print("ppo" in AGENTS)', "True"),  # the shipped agents load from any working directory
    # best's tables are the kept reports (found through the package), the README's 0.516 stopped at 3 players
    ('print(SEARCH_DEALS, f"{1 - searched_at[3][\'table\'][\'two_trick_conversion\']:.3f}")', "0 0.516"),
]}
TIMEOUT_S = 180


def kernel_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    return env


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    notebook = nbformat.read(path, as_version=4)
    probe = nbformat.v4.new_code_cell("import sys; print(sys.prefix)")
    notebook.cells.append(probe)
    probes = [(nbformat.v4.new_code_cell(code), expected) for code, expected in PROBES.get(path.name, [])]
    notebook.cells.extend(cell for cell, _ in probes)
    client = nbclient.NotebookClient(notebook, timeout=TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute(env=kernel_env())
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    assert not errors
    prefix = "".join(output.get("text", "") for output in probe.outputs).strip()
    assert prefix == sys.prefix, f"the notebook ran in another Python environment: {prefix}"
    for cell, expected in probes:
        said = "".join(output.get("text", "") for output in cell.outputs).strip()
        assert said == expected, f"{path.name}: {cell.source} printed {said!r}, run from notebooks/"


# What the cells compute. A notebook that runs can still print or plot the wrong figure: these tests run one
# cell at a time (its source as kept in the notebook) on small inputs, with a stand-in for the tournaments where
# the figures must be known, and read what it printed or drew against a count made here.


def code_cell(name: str, marker: str) -> str:
    """The source of the one code cell of notebook ``name`` that contains ``marker``."""
    cells = [cell.source for cell in nbformat.read(NOTEBOOK_DIR / name, as_version=4).cells
             if cell.cell_type == "code" and marker in cell.source]
    assert len(cells) == 1, f"{name}: {len(cells)} code cells hold {marker!r}"
    return cells[0]


def run_cell(source: str, namespace: dict) -> list[str]:
    """Run a cell's source in ``namespace`` (the notebook's variables so far); the lines it printed."""
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "<cell>", "exec"), namespace)
    return printed.getvalue().splitlines()


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    yield pyplot
    pyplot.close("all")


def stand_in_report(k: int, lineup: list, num_players: int, deals: int) -> dict:
    """The report of the ``k``-th stand-in tournament: every figure differs from the others of the same report
    and from the same figure of the other calls (at the notebook's three decimals), so a figure read from the
    wrong key or the wrong call shows; friendly fire is null at 2 players, as a real report's (no fellow)."""
    seat = {"stop_rate": 0.600 + 0.003 * k, "stops": 10 + k, "two_trick_conversion": 0.900 - 0.004 * k,
            "friendly_fire_rate": None if num_players == 2 else 0.700 + 0.002 * k,
            "friendly_fire_rate_ci95": 0.050 + 0.001 * k,
            "friendly_fire_rate_unforced": None if num_players == 2 else 0.500 + 0.003 * k,
            "friendly_fire_rate_unforced_ci95": 0.070 + 0.002 * k}
    entries = [{"pool_share": 0.200 + 0.004 * k + 0.3 * i, "pool_share_ci95": 0.030 + 0.001 * k + 0.1 * i,
                "fair_share": (1 + i) / num_players, "mean_equity": -0.100 + 0.007 * k + i,
                "equity_ci95": 0.060 + 0.002 * k + 0.2 * i} for i in range(2)]
    table = {"two_trick_conversion": 0.300 + 0.010 * k, "two_trick_conversion_ci95": 0.020 + 0.001 * k,
             "two_trick_conversion_live": 0.450 + 0.012 * k, "two_trick_conversion_live_ci95": 0.010 + 0.002 * k,
             "spoil_rate": 0.150 + 0.005 * k, "spoil_rate_ci95": 0.040 + 0.002 * k,
             "jink_attempts": 3 * k, "jink_successes": k}
    return {"hands": deals * num_players, "deals": deals, "table": table, "entries": entries,
            "agents": {name: dict(seat) for name in lineup}}


def stand_in_evaluate(calls: list):
    """A stand-in for ``agents.evaluate.evaluate`` that notes each call and answers :func:`stand_in_report`."""
    def evaluate(lineup, num_players, deals, seed, ante=1):
        calls.append((list(lineup), num_players, deals, seed, ante))
        return stand_in_report(len(calls), lineup, num_players, deals)

    return evaluate


def columns(line: str) -> list[str]:
    return line.replace("±", " ").split()


def test_the_spoiling_table_prints_each_agent_s_figures_from_its_own_tournament(plt):
    """Cell 'rows': one tournament of each agent alone at each size on seed 0, and each row of the table its
    figures: stopped is one less the two-trick player's win share (printed beside it), then the same of the players
    with a trick left, with the table's intervals, and the agent's stop and friendly-fire rates, the last also by
    choice."""
    calls = []
    namespace = {"AGENTS": ["greedy", "spoiler"], "TABLE_SIZES": (3, 4), "DEALS": 7, "np": np, "WIDTH": 8,
                 "evaluate": stand_in_evaluate(calls)}
    printed = run_cell(code_cell("02_cooperative_spoiling.ipynb", "rows = []"), namespace)
    lineups = [(agent, n) for agent in ("greedy", "spoiler") for n in (3, 4)]
    assert calls == [([agent], n, 7, 0, 1) for agent, n in lineups]
    assert len(printed) == 1 + len(lineups)
    for k, ((agent, n), line) in enumerate(zip(lineups, printed[1:]), start=1):
        report = stand_in_report(k, [agent], n, 7)
        table, seat = report["table"], report["agents"][agent]
        win_share = table["two_trick_conversion"]
        assert columns(line) == [agent, str(n), f"{1 - win_share:.3f}", f"{table['two_trick_conversion_ci95']:.3f}",
                                 f"{win_share:.3f}", f"{1 - table['two_trick_conversion_live']:.3f}",
                                 f"{table['two_trick_conversion_live_ci95']:.3f}",
                                 f"{table['spoil_rate']:.3f}", f"{table['spoil_rate_ci95']:.3f}",
                                 f"{seat['stop_rate']:.3f}", f"{seat['friendly_fire_rate']:.3f}",
                                 f"{seat['friendly_fire_rate_ci95']:.3f}", f"{seat['friendly_fire_rate_unforced']:.3f}",
                                 f"{seat['friendly_fire_rate_unforced_ci95']:.3f}"], line


def test_the_trained_agent_is_one_setting_and_a_checkpoint_path_keeps_the_tables_aligned(plt):
    """Cell 'TRAINED = ': the agents studied are greedy, spoiler and TRAINED, and the tables' agent column is as wide
    as the longest of them: a run's checkpoint path (set as TRAINED) leaves every row's figures under its header."""
    setup = code_cell("02_cooperative_spoiling.ipynb", "TRAINED = ")
    trained = "runs/a-long-run-name/agent.pt"
    namespace = {}
    run_cell(setup.replace('TRAINED = "ppo"', f"TRAINED = {trained!r}"), namespace)
    assert namespace["AGENTS"] == ["greedy", "spoiler", trained] and namespace["WIDTH"] == len(trained)
    calls = []
    namespace.update(TABLE_SIZES=(3,), DEALS=5, np=np, evaluate=stand_in_evaluate(calls))
    header, *rows = run_cell(code_cell("02_cooperative_spoiling.ipynb", "rows = []"), namespace)
    players_end = header.index("players") + len("players")
    assert [row.split()[0] for row in rows] == namespace["AGENTS"]
    assert all(row[players_end - 1] == "3" and row[players_end] == " " for row in rows), rows


def test_the_spoiling_bars_draw_each_agent_s_figure_and_interval_side_by_side(plt):
    """Cell 'def bars': in each panel one set of bars per agent, as high as its figure at each size, with its
    interval as the error bar, and the agents' bars of a size side by side (none overlaps another)."""
    agents_, sizes = ["greedy", "spoiler", "ppo"], (3, 4)
    rows = [{"agent": agent, "players": n, "stopped": 0.1 * a + 0.02 * s, "stopped_ci": 0.01 + 0.001 * (a + s),
             "spoil": 0.5 - 0.1 * a - 0.03 * s, "spoil_ci": 0.02 + 0.002 * (a + s), "stops": 0.9 - 0.05 * (a + s),
             "fire": 0.3 + 0.1 * a + 0.04 * s, "fire_ci": 0.03 + 0.003 * (a + s),
             "choice": 0.2 + 0.09 * a + 0.05 * s, "choice_ci": 0.04 + 0.002 * (a + s)}
            for a, agent in enumerate(agents_) for s, n in enumerate(sizes)]
    run_cell(code_cell("02_cooperative_spoiling.ipynb", "def bars"),
             {"AGENTS": agents_, "TABLE_SIZES": sizes, "rows": rows, "np": np, "plt": plt})
    axes = plt.gcf().axes
    assert [ax.get_title() for ax in axes] == ["two-trick player stopped", "spoil rate",
                                               "friendly fire (overtakes / chances)", "friendly fire by choice"]
    from matplotlib.container import BarContainer

    for ax, key in zip(axes, ("stopped", "spoil", "fire", "choice"), strict=True):
        drawn = [bars for bars in ax.containers if isinstance(bars, BarContainer)]
        assert [bars.get_label() for bars in drawn] == agents_
        spans = []
        for agent, bars in zip(agents_, drawn):
            mine = [r for r in rows if r["agent"] == agent]
            assert [p.get_height() for p in bars.patches] == pytest.approx([r[key] for r in mine])
            (segments,) = bars.errorbar.lines[2]
            assert [end[1] for s in segments.get_segments() for end in s] == pytest.approx(
                [r[key] + sign * r[f"{key}_ci"] for r in mine for sign in (-1, 1)])
            spans.append([(p.get_x(), p.get_x() + p.get_width()) for p in bars.patches])
        for size in range(len(sizes)):  # left to right in the order of the agents, no two overlapping
            ordered = [agent_spans[size] for agent_spans in spans]
            assert all(left[1] <= right[0] + 1e-9 for left, right in zip(ordered, ordered[1:]))


def best_report(n: int, ante: int) -> dict:
    import json

    return json.loads((ROOT / "docs" / "results" / "best-tables" / f"{n}p-ante{ante}-seed3.json").read_text())


def test_best_s_tables_are_the_kept_reports_set_beside_greedy_on_their_own_deals(plt):
    """Cells 'SEARCH_DEALS' and 'def rate': best's figures at each size are its kept report's, greedy's come from
    a tournament on that report's deals (its number of deals and its seed), the difference is best's less greedy's,
    and the pool-size table shows each size's reports at ante 1 and 4 (stopped one less the win share, the jinks
    won beside those attempted)."""
    calls = []
    namespace = {"TABLE_SIZES": (3, 4, 5), "evaluate": stand_in_evaluate(calls), "np": np}
    printed = run_cell(code_cell("02_cooperative_spoiling.ipynb", "SEARCH_DEALS = "), namespace)
    assert len(printed) == 4
    for k, (n, line) in enumerate(zip((3, 4, 5), printed[1:]), start=1):
        kept = best_report(n, 1)
        assert calls[k - 1] == (["greedy"], n, kept["deals"], kept["seed"], 1)
        greedy = stand_in_report(k, ["greedy"], n, kept["deals"])["table"]
        expected = [str(n)]
        for key in ("two_trick_conversion", "two_trick_conversion_live"):
            stopped, stopped_greedy = 1 - kept["table"][key], 1 - greedy[key]
            expected += [f"{stopped:.3f}", f"{kept['table'][key + '_ci95']:.3f}", f"{stopped_greedy:.3f}",
                         f"{greedy[key + '_ci95']:.3f}", f"{stopped - stopped_greedy:+.3f}"]
        assert columns(line) == [*expected, f"{kept['table']['spoil_rate']:.3f}",
                                 f"{kept['agents']['best']['friendly_fire_rate']:.3f}",
                                 f"{kept['agents']['best']['friendly_fire_rate_unforced']:.3f}"], line

    printed = run_cell(code_cell("02_cooperative_spoiling.ipynb", "def rate"), namespace)
    assert len(printed) == 1 + 6
    for (n, ante), line in zip([(n, ante) for n in (3, 4, 5) for ante in (1, 4)], printed[1:]):
        report = best_report(n, ante)
        table, conversion = report["table"], report["table"]["two_trick_conversion"]
        stopped = (["-"] if conversion is None
                   else [f"{1 - conversion:.3f}", f"{table['two_trick_conversion_ci95']:.3f}"])
        assert columns(line) == [str(n), str(ante), *stopped, f"{table['spoil_rate']:.3f}",
                                 f"{report['agents']['best']['friendly_fire_rate']:.3f}",
                                 str(table["jink_attempts"]), f"({table['jink_successes']})"], line
    # a rate of 0 is a figure; only a rate no event gave (the report's null) is shown as '-'
    assert namespace["rate"](0.0) == "0.000" and namespace["rate"](None) == "-"
    assert namespace["rate"](0.0, 0.25) == "0.000 ± 0.250"
    # SEARCH_DEALS set: best's tables are played anew at the table's ante, on seed 3
    namespace["SEARCH_DEALS"] = 5
    namespace["best_table"](4, ante=4)
    assert calls[-1] == (["best"], 4, 5, 3, 4)


def test_the_greedy_pool_share_table_reads_greedy_s_entry_of_each_mixed_table(plt):
    """Cell 'greedy pool share': greedy alone at a table of each agent, on seed 1; the row is greedy's entry (the
    first of the lineup), its pool share and fair share, and its equity with the equity's own interval."""
    calls = []
    printed = run_cell(code_cell("02_cooperative_spoiling.ipynb", "greedy pool share"),
                       {"AGENTS": ["greedy", "spoiler"], "TABLE_SIZES": (3, 5), "DEALS": 9, "WIDTH": 8,
                        "evaluate": stand_in_evaluate(calls)})
    lineups = [(agent, n) for agent in ("greedy", "spoiler") for n in (3, 5)]
    assert calls == [(["greedy", agent], n, 9, 1, 1) for agent, n in lineups]
    for k, ((agent, n), line) in enumerate(zip(lineups, printed[1:]), start=1):
        greedy = stand_in_report(k, ["greedy", agent], n, 9)["entries"][0]
        assert columns(line) == [agent, str(n), f"{greedy['pool_share']:.3f}", f"{greedy['pool_share_ci95']:.3f}",
                                 f"({greedy['fair_share']:.3f})", f"{greedy['mean_equity']:+.3f}",
                                 f"{greedy['equity_ci95']:.3f}"], line


def test_the_trained_tables_by_ante_and_size_print_and_plot_each_tournament_s_figures(plt):
    """Cells 'ANTES' and 'trained tables': the trained agent (TRAINED) alone at each ante and size on seed 2; each
    row stopped (one less the win share), spoil rate, friendly fire ('-' where null: no fellow at 2 players) and
    jinks per hand (the report's hands, not its deals); the plot's line for each ante runs through its own rows'
    stopped and spoil."""
    calls = []
    trained = "runs/mine/agent.pt"  # TRAINED: a run's checkpoint as a user sets it, in place of the shipped ppo
    namespace = {"DEALS": 6, "np": np, "plt": plt, "evaluate": stand_in_evaluate(calls), "TRAINED": trained}
    printed = run_cell(code_cell("02_cooperative_spoiling.ipynb", "ANTES = "), namespace)
    antes, sizes = (1, 2, 4), (2, 3, 4, 6, 8)
    lineups = [(ante, n) for ante in antes for n in sizes]
    assert calls == [([trained], n, 6, 2, ante) for ante, n in lineups]
    expected = {}
    for k, ((ante, n), line) in enumerate(zip(lineups, printed[1:]), start=1):
        report = stand_in_report(k, [trained], n, 6)
        table, fire = report["table"], report["agents"][trained]["friendly_fire_rate"]
        expected[ante, n] = (1 - table["two_trick_conversion"], table["spoil_rate"])
        assert columns(line) == [str(ante), str(n), f"{1 - table['two_trick_conversion']:.3f}",
                                 f"{table['spoil_rate']:.3f}", "-" if n == 2 else f"{fire:.3f}",
                                 f"{table['jink_attempts'] / (6 * n):.4f}"], line
    run_cell(code_cell("02_cooperative_spoiling.ipynb", "trained tables: spoil rate"), namespace)
    stopped_ax, spoil_ax = plt.gcf().axes
    for ax, which in ((stopped_ax, 0), (spoil_ax, 1)):
        assert [line.get_label() for line in ax.lines] == [f"ante {ante}" for ante in antes]
        for ante, line in zip(antes, ax.lines):
            assert line.get_xdata().tolist() == list(sizes)
            assert line.get_ydata().tolist() == pytest.approx([expected[ante, n][which] for n in sizes])


def test_the_quickstart_hand_ends_with_each_player_s_equity_reward(plt):
    """Cell 'agent_iter': a random hand played to its end prints each player's reward of the hand. Equity is the
    change in chips plus an even share of the pool (CONTRACT.md), so the rewards of a hand sum to zero."""
    namespace = {}
    run_cell(code_cell("01_quickstart.ipynb", "agent_iter"), namespace)
    rewards = namespace["final_rewards"]
    assert sorted(rewards) == sorted(namespace["game"].possible_agents)
    assert all(isinstance(value, float) for value in rewards.values())
    assert sum(rewards.values()) == pytest.approx(0.0) and any(rewards.values())


def test_the_quickstart_spoil_rates_are_those_of_random_hands_at_every_table_size(plt, monkeypatch):
    """Cell 'spoil_rates' on 300 hands a size: random play (not the first legal action) at each size from 2 to 10
    players, every hand played out, and each printed and plotted rate counted here from the hands' ends: a hand
    is spoiled when a jink failed, or, with no jink, when nobody took three tricks (RULES.md)."""
    import spoilfive_env

    cores, steps = [], []

    class Recorded(spoilfive_env.SpoilFiveCore):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            cores.append(self)

        def step(self, actions):
            steps.append((self.legal_mask(), np.asarray(actions).copy()))
            return super().step(actions)

    monkeypatch.setattr(spoilfive_env, "SpoilFiveCore", Recorded)
    source = code_cell("01_quickstart.ipynb", "spoil_rates")
    assert "BATCH = 10_000\n" in source
    printed = run_cell(source.replace("BATCH = 10_000\n", "BATCH = 300\n"), {"np": np, "plt": plt})
    sizes = list(range(2, 11))
    assert [core.num_players for core in cores] == sizes and all(core.done.all() for core in cores)
    first_legal = [(mask.argmax(axis=1) == actions)[mask.sum(axis=1) > 1] for mask, actions in steps]
    assert not np.concatenate(first_legal).all()  # random choices among the legal actions
    spoiled = [np.where(core.last_jinker >= 0, ~core.last_jink_won, core.last_tricks.max(axis=1) < 3)
               for core in cores]
    failed = [(core.last_jinker >= 0) & ~core.last_jink_won for core in cores]
    assert printed == [f"{n:2d} players: {s.mean():6.1%} of hands spoiled ({f.mean():5.1%} by a failed jink)"
                       for n, s, f in zip(sizes, spoiled, failed)]
    assert any(f.any() for f in failed) and any(f.sum() < s.sum() for f, s in zip(failed, spoiled))
    spoil_bars, jink_bars = plt.gcf().axes[0].containers
    assert [p.get_height() for p in spoil_bars.patches] == pytest.approx([s.mean() for s in spoiled])
    assert [p.get_height() for p in jink_bars.patches] == pytest.approx([f.mean() for f in failed])
    assert [p.get_x() + p.get_width() / 2 for p in spoil_bars.patches] == pytest.approx(sizes)
