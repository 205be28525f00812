"""``python -m agents.across_seeds``: one agent's figures over several seeds, from real tournament reports.

Small tournaments of the rule-based agents (a fraction of a second each) stand in for the 2,000-deal
runs of the search; the pooling reads nothing but their reports.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from conftest import assert_one_line_refusal

from agents import BEST
from agents.across_seeds import figures_of, format_pooled, main, plot_seeds, pool_seeds
from agents.evaluate import evaluate
from spoilfive_env.cli import BAD_USAGE, json_text

DEALS = 60


@pytest.fixture(scope="module")
def runs():
    """Tournaments of ``greedy`` against ``spoiler`` tables on three seeds at 3 players and two at 4,
    and two 3-player runs paired with ``random`` in greedy's seats."""
    plain = {(n, seed): evaluate(["greedy", "spoiler"], num_players=n, deals=DEALS, seed=seed)
             for n, seed in [(3, 1), (3, 2), (3, 3), (4, 1), (4, 2)]}
    paired = {seed: evaluate(["greedy", "spoiler"], num_players=3, deals=DEALS, seed=seed, paired_with="random")
              for seed in (11, 12)}
    return plain, paired


def written(tmp_path, name, report):
    path = tmp_path / name
    path.write_text(json_text(report))
    return str(path)


def points_above_fair(report, label):
    figures = report["agents"][label]
    return 100 * (figures["pool_share"] - figures["fair_share"])


def test_a_reports_figures_are_the_agents_own_in_points_above_fair(runs):
    plain, _ = runs
    report = plain[3, 1]
    figures = figures_of(report, "greedy")
    assert figures["share_above_fair"] == pytest.approx(points_above_fair(report, "greedy"))
    assert figures["share_above_fair_ci95"] == pytest.approx(100 * report["agents"]["greedy"]["pool_share_ci95"])
    assert figures["equity"] == report["agents"]["greedy"]["mean_equity"]
    assert figures["opponents"] == ["spoiler", "spoiler"] and figures["side"] == "lineup"
    assert figures["paired"] is None
    assert figures_of(report, "spoiler")["opponents"] == ["greedy"]  # an agent in two seats: not its own opponent


def test_the_mean_over_seeds_has_the_seeds_intervals_in_quadrature_one_group_a_table_size(runs):
    plain, _ = runs
    reports = list(plain.values())
    groups = pool_seeds(reports, target=0.0)
    assert [(g["players"], [s["seed"] for s in g["seeds"]]) for g in groups] == [(3, [1, 2, 3]), (4, [1, 2])]
    three = groups[0]
    shares = [points_above_fair(plain[3, seed], "greedy") for seed in (1, 2, 3)]
    intervals = [100 * plain[3, seed]["agents"]["greedy"]["pool_share_ci95"] for seed in (1, 2, 3)]
    assert three["share_above_fair"] == pytest.approx(sum(shares) / 3)
    assert three["share_above_fair_ci95"] == pytest.approx(math.sqrt(sum(c * c for c in intervals)) / 3)
    equities = [plain[3, seed]["agents"]["greedy"]["mean_equity"] for seed in (1, 2, 3)]
    assert three["equity"] == pytest.approx(sum(equities) / 3)
    equity_intervals = [plain[3, seed]["agents"]["greedy"]["equity_ci95"] for seed in (1, 2, 3)]
    assert three["equity_ci95"] == pytest.approx(math.sqrt(sum(c * c for c in equity_intervals)) / 3)
    mean = sum(shares) / 3
    assert three["share_spread"] == pytest.approx(math.sqrt(sum((x - mean) ** 2 for x in shares) / 2))
    assert three["seeds_at_target"] == sum(x >= 0 for x in shares)
    assert three["rules"] == plain[3, 1]["rules"] and "rules" not in three["seeds"][0]
    assert three["paired"] is None


def test_the_rival_of_a_paired_run_is_found_with_its_own_figures_and_the_differences_turned_round(runs):
    _, paired = runs
    groups = pool_seeds(list(paired.values()), names=["random"])
    (group,) = groups
    assert group["agent"] == ["random"] and [s["side"] for s in group["seeds"]] == ["rival", "rival"]
    blocks = [paired[seed]["paired"] for seed in (11, 12)]
    fair = 100 / 3
    assert group["share_above_fair"] == pytest.approx(sum(100 * b["rival_pool_share"] - fair for b in blocks) / 2)
    assert group["equity"] == pytest.approx(sum(b["rival_mean_equity"] for b in blocks) / 2)
    # random minus greedy: the reports' differences (greedy minus random) with their sign turned round
    assert group["paired"]["other"] == "greedy"
    assert group["paired"]["share_difference"] == pytest.approx(-sum(100 * b["pool_share_difference"]
                                                                     for b in blocks) / 2)
    assert group["paired"]["equity_difference"] == pytest.approx(-sum(b["equity_difference"] for b in blocks) / 2)
    # and from greedy's side, as the reports give them
    greedy = pool_seeds(list(paired.values()))[0]["paired"]
    assert greedy["other"] == "random"
    assert greedy["equity_difference"] == pytest.approx(-group["paired"]["equity_difference"])
    assert greedy["share_difference_ci95"] == pytest.approx(group["paired"]["share_difference_ci95"])


def test_the_pooled_paired_differences_have_the_seeds_intervals_in_quadrature(runs):
    """Each seed's paired differences in points (share) and per hand (equity), and their mean over the seeds with
    the seeds' 95% intervals combined in quadrature, sqrt(sum ci**2) / k, as the agent's own figures are."""
    _, paired = runs
    (group,) = pool_seeds(list(paired.values()))
    blocks = [paired[seed]["paired"] for seed in (11, 12)]
    for seed, block in zip(group["seeds"], blocks):
        assert seed["paired"]["share_difference"] == pytest.approx(100 * block["pool_share_difference"])
        assert seed["paired"]["share_difference_ci95"] == pytest.approx(100 * block["pool_share_difference_ci95"])
        assert seed["paired"]["equity_difference_ci95"] == pytest.approx(block["equity_difference_ci95"])
    pooled = group["paired"]
    assert pooled["share_difference"] == pytest.approx(sum(100 * b["pool_share_difference"] for b in blocks) / 2)
    assert pooled["share_difference_ci95"] == pytest.approx(
        math.sqrt(sum((100 * b["pool_share_difference_ci95"]) ** 2 for b in blocks)) / 2)
    assert pooled["equity_difference"] == pytest.approx(sum(b["equity_difference"] for b in blocks) / 2)
    assert pooled["equity_difference_ci95"] == pytest.approx(
        math.sqrt(sum(b["equity_difference_ci95"] ** 2 for b in blocks)) / 2)


def test_the_command_prints_each_seed_the_mean_and_the_seeds_at_the_target(runs, tmp_path, capsys):
    plain, paired = runs
    paths = [written(tmp_path, f"{n}p-{seed}.json", report) for (n, seed), report in plain.items()]
    assert main([*paths, "--target", "1.5"]) == 0
    text = capsys.readouterr().out
    assert text == format_pooled(pool_seeds(list(plain.values()), target=1.5)) + "\n"
    assert "greedy at 3 players against 2 x spoiler: 3 seeds, 180 deals" in text
    assert "greedy at 4 players against 3 x spoiler: 2 seeds, 120 deals" in text
    share = pool_seeds([plain[3, seed] for seed in (1, 2, 3)])[0]
    assert f"mean {share['share_above_fair']:+.2f} ± {share['share_above_fair_ci95']:.2f}" in " ".join(text.split())
    assert "seeds at fair + 1.5:" in text
    rival_paths = [written(tmp_path, f"paired-{seed}.json", report) for seed, report in paired.items()]
    assert main([*rival_paths, "--agent", "random", "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)
    assert group["paired"]["other"] == "greedy" and len(group["seeds"]) == 2


def test_the_seeds_are_listed_by_seed_and_a_seed_on_the_target_reaches_it(runs):
    """A group's seeds come in seed order whatever the order of the reports, and a seed exactly at the target
    counts as reaching it."""
    plain, _ = runs
    shares = {seed: points_above_fair(plain[3, seed], "greedy") for seed in (1, 2, 3)}
    (group,) = pool_seeds([plain[3, seed] for seed in (3, 1, 2)], target=min(shares.values()))
    assert [s["seed"] for s in group["seeds"]] == [1, 2, 3]
    assert [s["share_above_fair"] for s in group["seeds"]] == pytest.approx([shares[seed] for seed in (1, 2, 3)])
    assert group["seeds_at_target"] == 3


def test_the_spread_the_seeds_intervals_imply_is_the_root_mean_square_of_their_standard_errors(runs):
    """``share_spread_expected``: each seed's 95% interval over 1.96 is its standard error; the spread they imply
    over the seeds is the root of the mean of their squares."""
    plain, _ = runs
    (group,) = pool_seeds([plain[3, seed] for seed in (1, 2, 3)])
    errors = [100 * plain[3, seed]["agents"]["greedy"]["pool_share_ci95"] / 1.96 for seed in (1, 2, 3)]
    assert group["share_spread_expected"] == pytest.approx(math.sqrt(sum(e * e for e in errors) / 3), rel=1e-3)


def test_runs_paired_with_different_agents_pool_no_difference(runs):
    """The paired differences are pooled only where every run of the group is paired with the same other agent."""
    _, paired = runs
    other = json.loads(json_text(paired[12]))
    other["paired"]["rival"] = "random:again"
    (group,) = pool_seeds([paired[11], other])
    assert [s["paired"]["other"] for s in group["seeds"]] == ["random", "random:again"]
    assert group["paired"] is None
    plain, _ = runs  # a run of the group not paired at all: no difference to pool either
    (group,) = pool_seeds([plain[3, 1], paired[11]])
    assert [s["paired"] is None for s in group["seeds"]] == [True, False]
    assert group["paired"] is None
    assert pool_seeds(list(paired.values()))[0]["paired"]["other"] == "random"


def test_runs_of_one_seating_are_one_group_whatever_its_rotation_and_another_order_is_another():
    """Every rotation of a lineup is played, so a lineup and its rotations are one experiment; the same opponents
    in another order around the agent are another (who sits on its left: spoiler,greedy,random and
    spoiler,random,greedy gave +8.5 and +10.8 points at 1,000 deals, and were pooled as one, their spread read
    as noise; found by a review)."""
    lineups = ((["greedy", "spoiler", "random"], 1), (["spoiler", "random", "greedy"], 2),
               (["greedy", "random", "spoiler"], 3))
    reports = [evaluate(lineup, num_players=3, deals=20, seed=seed) for lineup, seed in lineups]
    groups = pool_seeds(reports)
    assert [([s["seed"] for s in g["seeds"]], g["opponents"]) for g in groups] == [
        ([3], ["random", "spoiler"]), ([1, 2], ["spoiler", "random"])]


def test_each_seating_is_named_in_its_order_so_two_groups_never_read_alike():
    """The heading names every other seat in order from the agent's (neighbours of one label counted together,
    the agent's own other seats as itself): spoiler,greedy,spoiler and spoiler,spoiler,greedy around random were
    two groups both headed "against 2 x spoiler, greedy" (found by a review)."""
    lineups = ((["random", "spoiler", "greedy", "spoiler"], 1), (["random", "spoiler", "spoiler", "greedy"], 2),
               (["random", "spoiler", "random", "greedy"], 3))
    groups = pool_seeds([evaluate(lineup, num_players=4, deals=8, seed=seed) for lineup, seed in lineups],
                        names="random")
    headings = [block.splitlines()[0] for block in format_pooled(groups).split("\n\n") if block.startswith("random")]
    assert sorted(g["seating"] for g in groups) == [["greedy", "itself", "spoiler"], ["spoiler", "greedy", "spoiler"],
                                                     ["spoiler", "spoiler", "greedy"]]
    assert len(set(headings)) == 3 and any("against 2 x spoiler, greedy:" in h for h in headings)
    assert any("against spoiler, greedy, spoiler:" in h for h in headings)


def test_a_paired_rival_of_an_agent_in_several_seats_faces_the_others_alone():
    """The rival sits in every seat of the first agent: its opponents are the rest of the lineup, so it pools with
    the same table played directly (it was given the first agent's other seats as opponents too)."""
    paired = evaluate(["spoiler", "greedy", "spoiler"], num_players=3, deals=20, seed=1, paired_with="random")
    direct = evaluate(["random", "greedy", "random"], num_players=3, deals=20, seed=2)
    (group,) = pool_seeds([paired, direct], names="random")
    assert group["opponents"] == ["greedy"] and [s["side"] for s in group["seeds"]] == ["rival", "lineup"]


def test_runs_against_other_opponents_at_one_size_are_other_groups(runs):
    """Runs at one table size against different opponents measure different things: a group each."""
    plain, _ = runs
    other = evaluate(["greedy", "random"], num_players=3, deals=20, seed=1)  # seed 1 again: other deals' group
    groups = pool_seeds([plain[3, 1], other, plain[3, 2]])
    assert [(g["opponents"], [s["seed"] for s in g["seeds"]]) for g in groups] == [
        (["random", "random"], [1]), (["spoiler", "spoiler"], [1, 2])]


def test_one_agent_written_two_ways_pools_as_one(runs):
    plain, _ = runs
    renamed = json.loads(json_text(plain[3, 2]))  # the same runs, greedy's label written otherwise
    renamed["agents"]["greedy:again"] = renamed["agents"].pop("greedy")
    renamed["lineup"] = ["greedy:again" if label == "greedy" else label for label in renamed["lineup"]]
    (group,) = pool_seeds([plain[3, 1], renamed], names=["greedy", "greedy:again"])
    assert group["agent"] == ["greedy", "greedy:again"] and len(group["seeds"]) == 2


def test_runs_of_best_that_stood_for_different_agents_are_not_pooled(runs):
    plain, _ = runs
    older, newer = (json.loads(json_text(plain[3, seed])) for seed in (1, 2))
    for report in (older, newer):
        report["agents"]["best"] = report["agents"].pop("greedy")
        report["lineup"] = ["best" if label == "greedy" else label for label in report["lineup"]]
    assert newer["best"] == BEST  # every report says what `best` was
    older["best"] = "pimc_ppo:samples=96"
    with pytest.raises(ValueError, match=rf"^report 1 and report 2 measured different agents under the name best "
                                         rf"\(pimc_ppo:samples=96 and {re.escape(BEST)}\): pool one agent's runs$"):
        pool_seeds([older, newer], names="best")
    older["best"] = BEST
    assert len(pool_seeds([older, newer], names="best")[0]["seeds"]) == 2


CASES = [
    (["missing.json"], ["missing.json: no such file"]),
    (["not-json.json"], ["not-json.json is not JSON"]),
    (["not-a-report.json"], ["not-a-report.json is not a report of python -m agents.evaluate --json"]),
    (["3p-1.json", "--agent", "pimc"], ["3p-1.json: none of its agents is pimc", "its agents: greedy, spoiler"]),
    (["3p-1.json", "3p-1-again.json"], ["3p-1.json and", "3p-1-again.json are both seed 1 at 3 players",
                                         "count twice"]),
    (["3p-1.json", "3p-2-jink1.json"], ["played under different rules"]),
    (["3p-1.json", "--agent", "greedy,spoiler"], ["more than one of its agents is greedy or spoiler"]),
    (["3p-1.json", "--agent", ""], ["--agent", "give the agent's label"]),
    (["3p-1.json", "--target", "nan"], ["--target", "give a finite number"]),
    (["3p-1.json", "--target", "two"], ["--target", "'two' is not a number"]),
    (["players-text.json", "3p-2.json"], ["players-text.json is not a whole report", "num_players is '3'",
                                          "not a whole number"]),
    (["share-text.json"], ["share-text.json is not a whole report", "its pool_share is 'x', not a number"]),
    (["lineup-text.json"], ["lineup-text.json is not a whole report", "lineup is 'greedy'",
                            "not a list of agent labels"]),
    # Item 6, 17, 21 and 23 of the bad-input sweep: hand-edited reports were read as far as they went.
    (["lineup-dict.json"], ["lineup-dict.json is not a whole report", "lineup is {'greedy': 1}",
                            "not a list of agent labels"]),
    (["deep.json"], ["deep.json is not a report", "nested too deeply"]),
    (["long-seed.json"], ["long-seed.json cannot be read as JSON", "(4300", "integer string conversion"]),
    (["agents-text.json"], ["agents-text.json is not a whole report", "its agents are 'greedy'",
                            "the figures of each agent"]),
    (["players-negative.json"], ["players-negative.json is not a whole report", "its num_players is -5",
                                 "from 2 to 10"]),
    (["deals-negative.json"], ["deals-negative.json is not a whole report", "its deals is -5",
                               "from 1 to 1,000,000"]),
    (["seed-negative.json"], ["its seed is -1", "at least 0"]),
    (["interval-negative.json"], ["interval-negative.json is not a whole report", "its pool_share_ci95 is -3",
                                  "of at least 0"]),
    (["share-above-one.json"], ["its pool_share is 2", "from 0 to 1"]),
    (["equity-nan.json"], ["its mean_equity is nan", "not a finite number"]),
    (["rules-list.json"], ["rules-list.json is not a whole report", "its rules are [1, {}]",
                           "the rules options by name"]),
    (["best-number.json"], ["its best is 5", "not the spec of an agent"]),
    # Reports that do not hang together: each would be pooled as if it measured what it says.
    (["lineup-short.json"], ["lineup-short.json is not a whole report", "its lineup is ['greedy', 'spoiler']",
                             "one a seat"]),
    (["rules-other-size.json"], ["rules-other-size.json is not a whole report", "for its 3 players"]),
    (["agents-missing.json"], ["agents-missing.json is not a whole report", "the figures of each agent of its lineup"]),
    # The fair share is never null (every agent has seats), and true is no share of anything.
    (["fair-null.json"], ["fair-null.json is not a whole report", "its fair_share is None, not a number"]),
    (["share-true.json"], ["share-true.json is not a whole report", "its pool_share is True, not a number"]),
]


@pytest.mark.parametrize("args, words", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_files_and_values_are_refused_in_one_line(runs, tmp_path, monkeypatch, capsys, args, words):
    plain, _ = runs
    monkeypatch.chdir(tmp_path)
    written(tmp_path, "3p-1.json", plain[3, 1])
    written(tmp_path, "3p-1-again.json", plain[3, 1])
    other_rules = json.loads(json_text(plain[3, 2]))
    other_rules["rules"]["jink_bonus"] = 1
    written(tmp_path, "3p-2-jink1.json", other_rules)
    written(tmp_path, "3p-2.json", plain[3, 2])
    for name, edit in [("players-text.json", lambda report: report.update(num_players="3")),
                       ("share-text.json", lambda report: report["agents"]["greedy"].update(pool_share="x")),
                       ("lineup-text.json", lambda report: report.update(lineup="greedy")),
                       ("lineup-dict.json", lambda report: report.update(lineup={"greedy": 1})),
                       ("agents-text.json", lambda report: report.update(agents="greedy")),
                       ("players-negative.json", lambda report: report.update(num_players=-5)),
                       ("deals-negative.json", lambda report: report.update(deals=-5)),
                       ("seed-negative.json", lambda report: report.update(seed=-1)),
                       ("interval-negative.json",
                        lambda report: report["agents"]["greedy"].update(pool_share_ci95=-3)),
                       ("share-above-one.json", lambda report: report["agents"]["greedy"].update(pool_share=2)),
                       ("equity-nan.json", lambda report: report["agents"]["greedy"].update(mean_equity=math.nan)),
                       ("rules-list.json", lambda report: report.update(rules=[1, {}])),
                       ("best-number.json", lambda report: report.update(best=5)),
                       ("lineup-short.json", lambda report: report.update(lineup=["greedy", "spoiler"])),
                       ("rules-other-size.json", lambda report: report["rules"].update(num_players=4)),
                       ("agents-missing.json", lambda report: report["agents"].pop("spoiler")),
                       ("fair-null.json", lambda report: report["agents"]["greedy"].update(fair_share=None)),
                       ("share-true.json", lambda report: report["agents"]["greedy"].update(pool_share=True))]:
        edited = json.loads(json_text(plain[3, 1]))
        edit(edited)
        (tmp_path / name).write_text(json.dumps(edited))  # json_text would write the NaN as null
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "long-seed.json").write_text('{"seed": ' + "7" * 5000 + "}")
    (tmp_path / "not-json.json").write_text("{'seed': 1")
    (tmp_path / "not-a-report.json").write_text('{"seed": 1}')
    with pytest.raises(SystemExit) as stopped:
        main(args)
    assert stopped.value.code == BAD_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert_one_line_refusal(captured.err, stopped.value.code, *words)


def test_one_seed_has_no_spread_to_show(runs):
    plain, _ = runs
    (group,) = pool_seeds([plain[3, 1]])
    assert math.isnan(group["share_spread"])
    assert "standard deviation" not in format_pooled([group])
    assert "standard deviation over the seeds" in format_pooled(pool_seeds([plain[3, 1], plain[3, 2]]))


def test_a_seed_with_no_pool_won_pools_to_nan_not_a_traceback(runs, tmp_path, capsys):
    # A short run may see every pool spoiled: the report's pool share is null (python -m agents.evaluate
    # --players 6 --deals 1 --seed 2 --agents greedy,random), and statistics.stdev raised on the nan.
    plain, _ = runs
    unmeasured = json.loads(json_text(plain[3, 1]))
    unmeasured["agents"]["greedy"].update(pool_share=None, pool_share_ci95=None)
    paths = [written(tmp_path, "3p-1.json", unmeasured), written(tmp_path, "3p-2.json", plain[3, 2])]
    (group,) = pool_seeds([unmeasured, plain[3, 2]])
    assert math.isnan(group["share_spread"]) and math.isnan(group["share_above_fair"])
    assert main([*paths, "--target", "2"]) == 0
    assert "standard deviation over the seeds nan points" in capsys.readouterr().out
    assert main([*paths, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["share_spread"] is None


def test_a_report_with_a_figure_missing_is_refused_in_its_words(runs):
    plain, _ = runs
    cut = json.loads(json_text(plain[3, 1]))
    del cut["agents"]["greedy"]["pool_share_ci95"]
    with pytest.raises(ValueError, match="cut.json is not a whole report .*pool_share_ci95"):
        pool_seeds([cut], sources=["cut.json"])


def test_the_plot_is_written_after_the_figures(runs, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plain, _ = runs
    paths = [written(tmp_path, f"{n}p-{seed}.json", report) for (n, seed), report in plain.items()]
    plot = tmp_path / "figures" / "seeds.png"
    assert main([*paths, "--target", "2", "--plot", str(plot)]) == 0
    assert "greedy at 3 players" in capsys.readouterr().out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_labels_with_dollar_signs_are_plotted_as_written(runs, tmp_path, capsys):
    # matplotlib read "$\\foo$" as mathtext and failed after the figures (item 7 of the bad-input sweep)
    pytest.importorskip("matplotlib")
    plain, _ = runs
    text = json_text(plain[3, 1]).replace('"greedy"', '"a$\\\\foo$"').replace('"spoiler"', '"b$x^$"')
    renamed = json.loads(text)
    plot = tmp_path / "seeds.png"
    assert main([written(tmp_path, "3p-1.json", renamed), "--plot", str(plot)]) == 0
    captured = capsys.readouterr()
    assert "a$\\foo$ at 3 players against 2 x b$x^$" in captured.out and captured.err == ""
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("plot, words", [("seeds.jpg", ["--plot 'seeds.jpg'", ".png, .pdf or .svg"]),
                                         ("a-file/seeds.png", ["--plot 'a-file/seeds.png' cannot be written",
                                                               "is a file"])])
def test_a_plot_that_cannot_be_written_is_refused_before_anything_is_read(runs, tmp_path, monkeypatch, capsys,
                                                                         plot, words):
    plain, _ = runs
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    path = written(tmp_path, "3p-1.json", plain[3, 1])
    with pytest.raises(SystemExit) as stopped:
        main([path, "--plot", plot])
    captured = capsys.readouterr()
    assert stopped.value.code == BAD_USAGE and captured.out == ""
    assert_one_line_refusal(captured.err, stopped.value.code, *words)


def test_no_report_or_one_without_a_lineup_is_refused():
    with pytest.raises(ValueError, match="^no report to pool: give at least one$"):
        pool_seeds([])
    with pytest.raises(ValueError, match="first.json is not a report .*no lineup"):
        pool_seeds([{"seed": 1}], sources=["first.json"])


@pytest.mark.parametrize("call, says", [
    (lambda plain: {"reports": None}, "reports=None is not allowed: give a list of reports"),  # was a TypeError
    (lambda plain: {"reports": plain[3, 1]}, "reports=a dict is not allowed: give a list of reports"),  # its keys
    (lambda plain: {"sources": ["a"]}, r"sources=\['a'\] is not allowed: give a list of 2 names, one per report"),
    (lambda plain: {"sources": ["a", "b", "c"]}, r"sources=\['a', 'b', 'c'\] is not allowed: give a list of 2"),
    (lambda plain: {"sources": "ab"}, "sources='ab' is not allowed"),  # its letters were the names
    (lambda plain: {"names": []}, r"names=\[\] is not allowed: give the agent's label"),  # "none of its agents is  ("
    (lambda plain: {"names": 5}, "names=5 is not allowed"),  # was a TypeError
    (lambda plain: {"names": [None]}, r"names=\[None\] is not allowed"),
    (lambda plain: {"target": True}, "target=True is not allowed: give a finite number"),  # was taken as 1
])
def test_odd_arguments_of_pool_seeds_are_refused_in_words(runs, call, says):
    plain, _ = runs
    with pytest.raises(ValueError, match=says):
        pool_seeds(**{"reports": [plain[3, 1], plain[3, 2]], **call(plain)})


def test_a_target_may_be_any_real_number_numpy_ones_included(runs):
    import numpy as np

    plain, _ = runs
    for target in (1, 1.0, np.int64(1), np.float64(1.0)):  # np.int64 was refused
        (group,) = pool_seeds([plain[3, 1], plain[3, 2]], target=target)
        assert group["target"] == 1 and type(group["target"]) in (int, float)


def test_ctrl_c_while_plotting_keeps_the_figures_and_exits_130(runs, tmp_path, monkeypatch, capsys):
    import agents.across_seeds as across_seeds

    def interrupted(groups, path):
        raise KeyboardInterrupt

    plain, _ = runs
    monkeypatch.setattr(across_seeds, "plot_seeds", interrupted)
    path = written(tmp_path, "3p-1.json", plain[3, 1])
    plot = str(tmp_path / "seeds.png")
    with pytest.raises(SystemExit) as stopped:
        main([path, "--plot", plot])
    captured = capsys.readouterr()
    assert stopped.value.code == 130 and "greedy at 3 players" in captured.out
    assert captured.err.strip() == f"Ctrl-C: --plot {plot!r} was not written; the figures are above"


def test_a_seed_of_0_a_two_player_table_and_an_interval_of_0_are_read_as_a_report_writes_them(runs):
    """The edges of what agents.evaluate writes: seed 0 (its default), two players (the smallest table), and an
    interval of 0 (a run whose share never varied, e.g. no pool won by anyone but one seat) are figures, not faults."""
    two = evaluate(["greedy", "spoiler"], num_players=2, deals=20, seed=0)
    (group,) = pool_seeds([two])
    assert group["players"] == 2 and [s["seed"] for s in group["seeds"]] == [0]
    plain, _ = runs
    steady = json.loads(json_text(plain[3, 1]))
    steady["agents"]["greedy"].update(pool_share_ci95=0, equity_ci95=0)
    (figures,) = pool_seeds([steady])[0]["seeds"]
    assert figures["share_above_fair_ci95"] == 0 and figures["equity_ci95"] == 0


def test_a_rivals_intervals_are_its_own_not_those_of_the_paired_difference(runs):
    _, paired = runs
    (group,) = pool_seeds(list(paired.values()), names="random")
    blocks = [paired[seed]["paired"] for seed in (11, 12)]
    assert [s["share_above_fair_ci95"] for s in group["seeds"]] == pytest.approx(
        [100 * b["rival_pool_share_ci95"] for b in blocks])
    assert [s["equity_ci95"] for s in group["seeds"]] == pytest.approx([b["rival_equity_ci95"] for b in blocks])
    # (the difference's intervals are another figure: were they read instead, the above would fail)
    assert all(b["rival_equity_ci95"] != b["equity_difference_ci95"] for b in blocks)


def test_a_paired_run_the_agent_lost_pools_its_negative_difference():
    """The paired difference runs from -1 to 1: random paired with greedy loses to it, and that is a figure."""
    report = evaluate(["random", "spoiler"], num_players=3, deals=DEALS, seed=11, paired_with="greedy")
    difference = report["paired"]["pool_share_difference"]
    assert difference < 0  # random minus greedy on the same deals
    (group,) = pool_seeds([report])
    assert group["paired"]["other"] == "greedy"
    assert group["paired"]["share_difference"] == pytest.approx(100 * difference)


def relabelled(report, old, new):
    """A copy of ``report`` with the agent labelled ``old`` labelled ``new``."""
    report = json.loads(json_text(report))
    report["agents"][new] = report["agents"].pop(old)
    report["lineup"] = [new if label == old else label for label in report["lineup"]]
    return report


def test_what_best_stood_for_keeps_the_options_written_after_it_and_no_other_label_is_best(runs):
    plain, _ = runs
    # best with an option changed stood for the day's best with that option changed
    changed = relabelled(plain[3, 1], "greedy", "best:samples=8")
    assert figures_of(changed, "best:samples=8")["stood_for"] == BEST + ":samples=8"
    # an agent whose name merely begins with "best" is not best
    assert figures_of(relabelled(plain[3, 1], "greedy", "bestish"), "bestish")["stood_for"] is None


def test_a_report_that_predates_best_saying_what_it_stood_for_pools_with_one_that_says(runs):
    """Older reports have no ``best``: nothing to compare, so they are not refused as a different agent."""
    plain, _ = runs
    older, newer = (relabelled(plain[3, seed], "greedy", "best") for seed in (1, 2))
    del older["best"]
    (group,) = pool_seeds([older, newer], names="best")
    assert [s["stood_for"] for s in group["seeds"]] == [None, BEST]


def test_the_table_counts_every_seeds_deals_and_marks_the_rivals_rows(runs):
    plain, paired = runs
    short = evaluate(["greedy", "spoiler"], num_players=3, deals=20, seed=4)  # fewer deals than the others
    text = format_pooled(pool_seeds([plain[3, 1], short]))
    assert "greedy at 3 players against 2 x spoiler: 2 seeds, 80 deals" in text
    rival = format_pooled(pool_seeds(list(paired.values()), names="random"))
    assert rival.count("(as random, the rival of a paired run)") == 2  # one a seed, none on the mean
    assert "the rival of a paired run" not in format_pooled(pool_seeds(list(paired.values())))


def test_each_seeds_row_shows_its_share_and_equity_with_their_own_intervals(runs):
    plain, _ = runs
    (group,) = pool_seeds([plain[3, seed] for seed in (1, 2, 3)])
    text = " ".join(format_pooled([group]).split())
    for s in group["seeds"]:
        assert (f"{s['seed']} {s['share_above_fair']:+.2f} ± {s['share_above_fair_ci95']:.2f} "
                f"{s['equity']:+.3f} ± {s['equity_ci95']:.3f}") in text


def test_a_target_of_0_the_fair_share_itself_is_still_a_target(runs):
    plain, _ = runs
    (group,) = pool_seeds([plain[3, seed] for seed in (1, 2, 3)], target=0)
    assert f"seeds at fair + 0: {group['seeds_at_target']} of 3" in format_pooled([group])


def test_the_plot_shows_each_seeds_share_and_interval_the_mean_and_the_target_line(runs, monkeypatch):
    pytest.importorskip("matplotlib")
    import agents.across_seeds as across_seeds

    plain, _ = runs
    (group,) = pool_seeds([plain[3, seed] for seed in (1, 2, 3)], target=0)  # 0: the fair share, a line too
    saved = []
    monkeypatch.setattr(across_seeds, "save_figure", lambda fig, path: saved.append(fig))
    plot_seeds([group], "seeds.png")
    (ax,) = saved[0].axes

    def drawn(container):
        """The points of an error bar and the half-widths of their bars."""
        points, _, (bars,) = container.lines
        return list(points.get_ydata()), [(top - bottom) / 2 for (_, bottom), (_, top) in bars.get_segments()]

    seeds, mean = ax.containers  # the seeds, then the mean, as drawn
    assert drawn(seeds) == (pytest.approx([s["share_above_fair"] for s in group["seeds"]]),
                            pytest.approx([s["share_above_fair_ci95"] for s in group["seeds"]]))
    assert drawn(mean) == (pytest.approx([group["share_above_fair"]]), pytest.approx([group["share_above_fair_ci95"]]))
    assert [list(line.get_ydata()) for line in ax.lines if line.get_linestyle() == "--"] == [[0, 0]]
    import matplotlib.pyplot as plt

    plt.close(saved[0])


def test_a_seed_with_nothing_to_measure_an_interval_on_shows_a_dash_not_nan():
    """A one-deal report has null intervals (no spread over deals): the table printed 'nan' for them."""
    report = json.loads(json_text(evaluate(["greedy", "random"], 3, 1, seed=0)))
    assert report["agents"]["greedy"]["pool_share_ci95"] is None
    text = format_pooled(pool_seeds([report], "greedy"))
    assert "nan" not in text
    seed_row = next(line for line in text.splitlines() if line.strip().startswith("0 "))
    assert seed_row.count("± -") == 2, seed_row
