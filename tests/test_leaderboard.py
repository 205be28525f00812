"""The leaderboard: ratings that order agents by strength, spoiling figures, the command line."""

from __future__ import annotations

import json
import re
import sys
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
from conftest import INTERRUPTED, ctrl_c_on_call, exit_status

pytest.importorskip("choix")

from agents import BEST  # noqa: E402
from agents.evaluate import evaluate  # noqa: E402
from agents.leaderboard import fit_ratings, format_board, leaderboard, main  # noqa: E402
from agents.spoiling import overtake_events, stops  # noqa: E402
from spoilfive_env.cards import card_index  # noqa: E402
from spoilfive_env.rules import Rules  # noqa: E402

DEALS = 200


@pytest.fixture(scope="module")
def board():
    # Two specs of the same search agent (the rollout named or left to its default): symmetric.
    return leaderboard(["random", "greedy", "pimc:samples=2", "pimc:samples=2:rollout=spoiler"],
                       players=(4,), deals=DEALS, seed=3)


def rows_of(board, n):
    return {row["agent"]: row for row in board["sizes"][str(n)]["ranking"]}


def test_the_same_agent_under_two_names_rates_the_same(board):
    rows = rows_of(board, 4)
    a, b = rows["pimc:samples=2"], rows["pimc:samples=2:rollout=spoiler"]
    assert abs(a["rating"] - b["rating"]) < np.hypot(a["rating_ci95"], b["rating_ci95"])
    assert abs(a["share_above_fair"] - b["share_above_fair"]) < a["share_ci95"] + b["share_ci95"]


def test_stronger_agents_rate_higher(board):
    rows = rows_of(board, 4)
    order = [row["agent"] for row in board["sizes"]["4"]["ranking"]]
    assert order[-1] == "random" and order[-2] == "greedy"
    greedy, random_ = rows["greedy"], rows["random"]
    assert greedy["rating"] - greedy["rating_ci95"] > random_["rating"] + random_["rating_ci95"]
    assert rows["random"]["share_above_fair"] < 0 < rows["greedy"]["share_above_fair"]
    assert board["top_rated"].startswith("pimc")
    assert board["best_is"] == BEST  # "best" is named apart from the run's top-rated agent
    assert abs(sum(row["rating"] for row in rows.values())) < 1e-9  # centred


def test_every_pairing_is_played_on_the_same_deals(board):
    tables = board["sizes"]["4"]["tables"]
    names = board["agents"]
    assert sorted((t["agent"], t["table_of"]) for t in tables) == sorted(
        (a, b) for a in names for b in names if a != b)
    for t in tables:
        assert t["fair_share"] == 0.25
        assert 0 <= t["pools_won"] <= DEALS * 4 and t["pools_won"] + t["table_pools_won"] <= DEALS * 4
    # Each table is its pairing's tournament on the board's deals: replayed for the two quick pairings.
    quick = [t for t in tables if {t["agent"], t["table_of"]} == {"random", "greedy"}]
    assert len(quick) == 2
    for t in quick:
        lone = evaluate([t["agent"], t["table_of"]], 4, DEALS, board["seed"])["entries"][0]
        assert (t["pools_won"], t["mean_equity"]) == (lone["pools_won"], pytest.approx(lone["mean_equity"]))


def test_every_hand_of_a_table_is_a_pool_of_the_lone_agent_one_of_the_table_or_a_spoil(board):
    """A table's pools won by the lone seat and by the other seats, with its spoils, account for each of its
    hands exactly once (the table's pools are the other seats' alone: the rating's choice data reads them)."""
    for t in board["sizes"]["4"]["tables"]:
        hands = DEALS * 4
        spoiled = round(t["spoil_rate"] * hands)
        assert t["pools_won"] + t["table_pools_won"] + spoiled == hands, (t["agent"], t["table_of"])


def test_spoiling_figures_tell_spoilers_from_greedy_players():
    rows = rows_of(leaderboard(["greedy", "spoiler"], players=(4,), deals=DEALS, seed=1), 4)
    assert rows["spoiler"]["stop_rate"] > rows["greedy"]["stop_rate"]
    # greedy takes every trick it can, cheapest card first: it overtakes at every chance.
    assert rows["greedy"]["friendly_fire_rate"] == 1.0 and rows["greedy"]["overtake_chances"] > 0
    for row in rows.values():
        assert 0 <= row["two_trick_conversion"] <= 1 and row["two_trick_hands"] > 0


def test_fit_recovers_known_strengths():
    """Pools drawn from a Luce model with known ratings: the fit finds them within its interval."""
    rng = np.random.default_rng(0)
    names = ["a", "b", "c"]
    truth = np.array([0.6, 0.0, -0.6])
    n, hands = 4, 20000
    tables = []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                continue
            weights = np.array([np.exp(truth[i]), (n - 1) * np.exp(truth[j])])
            lone = rng.binomial(hands, weights[0] / weights.sum())
            tables.append({"agent": a, "table_of": b, "pools_won": int(lone), "table_pools_won": hands - int(lone)})
    ratings, ci = fit_ratings(tables, names, n)
    assert np.all(np.abs(ratings - (truth - truth.mean())) < ci)
    assert np.all(ci < 0.1)


def test_a_rating_s_interval_is_the_fisher_information_s_worked_by_hand():
    """Two agents of equal strength at 3 players, each alone against a table of the other for N pools: a
    lone seat wins a third of them. Each table's choice set then carries information 2/9 (1 -1; -1 1) a pool,
    whose pseudo-inverse over the 2N pools gives each rating a variance of 9 / (16 N)."""
    from agents.evaluate import Z95

    pools = 9000
    tables = [{"agent": a, "table_of": b, "pools_won": pools // 3, "table_pools_won": 2 * pools // 3}
              for a, b in (("a", "b"), ("b", "a"))]
    ratings, ci = fit_ratings(tables, ["a", "b"], 3)
    assert ratings == pytest.approx([0.0, 0.0], abs=1e-6)
    assert ci == pytest.approx([Z95 * np.sqrt(9 / (16 * pools))] * 2, rel=1e-6)


@pytest.mark.parametrize("pools", [1, 7, 300])
def test_an_agent_that_won_every_pool_has_a_wide_interval_not_a_zero_one(pools):
    """Agent a won every pool of both tables, so its fit runs off to where the prior holds it: the interval is the
    inverse information along a - b, worked by hand, wide; the pseudo-inverse gave 0 ("known exactly") or noise."""
    from agents.evaluate import Z95

    tables = [{"agent": "a", "table_of": "b", "pools_won": pools, "table_pools_won": 0},
              {"agent": "b", "table_of": "a", "pools_won": 0, "table_pools_won": pools}]
    (rating_a, rating_b), ci = fit_ratings(tables, ["a", "b"], 3)
    assert rating_a > 1 and rating_a == pytest.approx(-rating_b)
    weight = np.exp(rating_a - rating_b)
    information = sum(pools * p * (1 - p) for p in (weight / (weight + 2), 2 * weight / (2 * weight + 1)))
    assert ci == pytest.approx([Z95 / (2 * np.sqrt(information))] * 2, rel=1e-6)
    assert ci[0] > 5


def test_agents_never_compared_through_the_pools_have_no_interval():
    """Two pairs that never met (a with b, c with d): the pools say nothing of one pair against the other, so the
    ratings' intervals are unbounded (inf, null in JSON), not a number."""
    tables = [{"agent": x, "table_of": y, "pools_won": 30, "table_pools_won": 60}
              for x, y in (("a", "b"), ("b", "a"), ("c", "d"), ("d", "c"))]
    _, ci = fit_ratings(tables, ["a", "b", "c", "d"], 3)
    assert np.isinf(ci).all()


def test_a_size_with_no_pool_won_has_no_ratings_and_names_no_top_agent(monkeypatch, capsys):
    """Every hand spoiled: there is nothing to rate, so the ratings are null, not 0, and no agent is top rated;
    the human table shows '-' for them."""
    monkeypatch.setattr("agents.leaderboard.evaluate", stand_in_evaluate([], pools=0))
    board = leaderboard(STAND_IN_AGENTS, players=(3,), deals=7, seed=5)
    assert board["top_rated"] is None and board["players"] == [3]
    assert [row["agent"] for row in board["sizes"]["3"]["ranking"]] == STAND_IN_AGENTS  # as given
    assert all(np.isnan(row["rating"]) and np.isnan(row["rating_ci95"]) for row in board["sizes"]["3"]["ranking"])
    monkeypatch.setattr("agents.leaderboard.leaderboard", lambda *args, **kwargs: board)
    assert main(["--players", "3", "--agents", ",".join(STAND_IN_AGENTS), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "top rated over these sizes: - (no pool won)" in out
    assert re.search(r"^2  greedy +- ± - +\+", out, re.MULTILINE), out  # the rating unknown, the equity not
    assert main(["--players", "3", "--agents", ",".join(STAND_IN_AGENTS), "--quiet", "--json"]) == 0
    ranking = json.loads(capsys.readouterr().out)["sizes"]["3"]["ranking"]
    assert all(row["rating"] is None and row["rating_ci95"] is None for row in ranking)


def test_a_one_deal_board_shows_no_interval_as_a_dash_not_nan(capsys):
    assert main(["--players", "3", "--agents", "random,greedy", "--deals", "1", "--seed", "0", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "+1.000 ± -" in out and "+33.3 ± -    pt" in out


LUCE_TRUTH = {3: [0.3, 0.0, -0.3], 4: [-0.9, 0.6, 0.3]}
"""Ratings of random, greedy and spoiler (as named to the board) at each table size, for the stand-in tournaments."""
STAND_IN_AGENTS = ["random", "greedy", "spoiler"]


def stand_in_table(i: int, j: int, n: int, pools: int = 120_000) -> dict:
    """The figures of the lone seat of agent ``i`` against a table of agent ``j`` at ``n`` players: its won pools
    as the Luce model of :data:`LUCE_TRUTH` expects (no spoils), the other figures made to name the table."""
    strength = np.exp(LUCE_TRUTH[n])
    lone = round(pools * strength[i] / (strength[i] + (n - 1) * strength[j]))
    return {"mean_equity": 10 * n + i + 0.1 * j, "equity_ci95": 0.01 * n * (j + 1), "pool_share": 0.1 * n + 0.01 * j,
            "pool_share_ci95": 0.001 * n * (j + 1) ** 2, "fair_share": 1 / n, "pools_won": lone,
            "stops": j + 1, "threats_faced": (j + 1) ** 2, "two_trick_pools": n, "two_trick_hands": 2 * n + j,
            "overtakes": 0, "overtake_chances": 0, "forced_overtakes": 0, "table_pools": pools - lone}


def stand_in_evaluate(played: list, pools: int = 120_000, **changes):
    """A stand-in for the board's ``evaluate``: the lone seat's figures of :func:`stand_in_table` (with ``changes``)
    and its table's pools spread over the other seats; each call's agents, size, deals and seed go to ``played``."""
    def stand_in(agents, num_players, deals, seed, **kwargs):
        played.append((tuple(agents), num_players, deals, seed))
        i, j = (STAND_IN_AGENTS.index(name) for name in agents)
        lone = {**stand_in_table(i, j, num_players, pools), **changes}
        table_pools = lone.pop("table_pools")  # spread over the table's seats
        others = [{"pools_won": table_pools // (num_players - 1) + (seat < table_pools % (num_players - 1))}
                  for seat in range(num_players - 1)]
        return {"entries": [lone, *others], "table": {"spoil_rate": 0.0}}

    return stand_in


def test_each_size_s_figures_and_ratings_come_from_its_own_tables_and_go_to_their_agent(monkeypatch):
    """Stand-in tournaments whose pools follow known Luce ratings, reversed in order from 3 to 4 players: each
    agent and size gets the mean of its own lone seat's figures over the tables of that size (the intervals the
    mean of the tables' intervals, the spoiling rates its counts summed over the tables), its own rating (the fit
    recovers the truth) with the fit's interval, the ranking goes by rating, and the top-rated agent is the one
    with the best rating averaged over the sizes (greedy: 0.3, against random's -0.3 and spoiler's 0)."""
    played = []
    monkeypatch.setattr("agents.leaderboard.evaluate", stand_in_evaluate(played))
    board = leaderboard(STAND_IN_AGENTS, players=(3, 4), deals=7, seed=5)
    pairs = [(a, b) for a in STAND_IN_AGENTS for b in STAND_IN_AGENTS if a != b]
    assert sorted(played) == sorted((pair, n, 7, 5) for n in (3, 4) for pair in pairs)
    assert board["players"] == [3, 4] and board["interrupted"] is None and board["top_rated"] == "greedy"
    assert {"agents", "players", "deals", "seed", "rating", "top_rated", "best_is", "sizes", "seconds"} <= set(board)
    for n in (3, 4):
        tables = board["sizes"][str(n)]["tables"]
        assert sorted((t["agent"], t["table_of"]) for t in tables) == sorted(pairs)
        _, fit_ci = fit_ratings(tables, STAND_IN_AGENTS, n)
        ranking = board["sizes"][str(n)]["ranking"]
        assert [row["agent"] for row in ranking] == sorted(STAND_IN_AGENTS, key=lambda a: -LUCE_TRUTH[n][
            STAND_IN_AGENTS.index(a)])
        for row in ranking:
            i = STAND_IN_AGENTS.index(row["agent"])
            mine = [stand_in_table(i, j, n) for j in range(3) if j != i]
            assert row["rating"] == pytest.approx(LUCE_TRUTH[n][i], abs=0.01)
            assert row["rating_ci95"] == pytest.approx(fit_ci[i])
            for key, table_key in (("mean_equity", "mean_equity"), ("equity_ci95", "equity_ci95"),
                                   ("pool_share", "pool_share"), ("share_ci95", "pool_share_ci95")):
                assert row[key] == pytest.approx(np.mean([t[table_key] for t in mine])), (n, row["agent"], key)
            assert row["fair_share"] == 1 / n
            assert row["share_above_fair"] == pytest.approx(row["pool_share"] - 1 / n)
            assert row["stop_rate"] == pytest.approx(sum(t["stops"] for t in mine) / sum(t["threats_faced"]
                                                                                         for t in mine))
            assert row["threats_faced"] == sum(t["threats_faced"] for t in mine)
            assert row["two_trick_conversion"] == pytest.approx(2 * n / sum(t["two_trick_hands"] for t in mine))
            assert row["friendly_fire_rate"] is None and row["overtake_chances"] == 0


def test_a_spoiling_rate_with_chances_but_none_taken_is_zero_not_null(monkeypatch):
    """A rate whose counts, summed over the agent's tables, have chances but not one taken is 0.0, a figure; null
    (None) is kept for a rate with no chance at all to show it."""
    monkeypatch.setattr("agents.leaderboard.evaluate", stand_in_evaluate([], pools=300, stops=0, overtakes=0,
                                                                         overtake_chances=4))
    for row in rows_of(leaderboard(STAND_IN_AGENTS, players=(3,), deals=7, seed=5), 3).values():
        assert row["stop_rate"] == 0.0 and row["threats_faced"] > 0
        assert row["friendly_fire_rate"] == 0.0 and row["overtake_chances"] == 8


def test_friendly_fire_by_choice_leaves_the_forced_chances_out_of_both_counts(monkeypatch):
    """The board's unforced friendly fire: the overtakes less the forced ones, of the chances less the forced,
    each summed over the agent's tables (two tables of 3 overtakes, 1 forced, of 5 chances: 4 of 8); the human
    table prints it beside the friendly fire with the forced chances in (6 of 10)."""
    monkeypatch.setattr("agents.leaderboard.evaluate", stand_in_evaluate([], pools=300, overtakes=3,
                                                                         overtake_chances=5, forced_overtakes=1))
    board = leaderboard(STAND_IN_AGENTS, players=(3,), deals=7, seed=5)
    for row in rows_of(board, 3).values():
        assert row["friendly_fire_rate"] == pytest.approx(0.6)
        assert row["friendly_fire_rate_unforced"] == pytest.approx(0.5)
        assert row["unforced_overtake_chances"] == 8
    table_lines = [line.split() for line in format_board(board).splitlines() if re.match(r"[123]  \S", line)]
    assert len(table_lines) == 3 and all(line[-2:] == ["0.600", "0.500"] for line in table_lines)


def test_the_plot_draws_each_agent_s_ratings_and_intervals_by_table_size(monkeypatch):
    """The plot's line for each agent runs over the board's table sizes through its rating at each, with its
    95% interval as the error bar (a board made by hand, so that every figure is known)."""
    drawn = []
    monkeypatch.setattr("agents.leaderboard.save_figure", lambda figure, path: drawn.append(figure))
    ranking = {3: [("b", 0.5, 0.1), ("a", -0.5, 0.2)], 5: [("a", 0.25, 0.3), ("b", -0.25, 0.4)]}
    board = {"agents": ["a", "b"], "players": [3, 5], "deals": 9, "seed": 1,
             "sizes": {str(n): {"ranking": [{"agent": a, "rating": r, "rating_ci95": ci} for a, r, ci in rows]}
                       for n, rows in ranking.items()}}
    from agents.leaderboard import plot_ratings

    plot_ratings(board, "ratings.png")
    (figure,) = drawn
    lines = {bars.get_label(): bars for bars in figure.axes[0].containers}
    assert sorted(lines) == ["a", "b"]
    for name, rating, low in (("a", [-0.5, 0.25], [-0.7, -0.05]), ("b", [0.5, -0.25], [0.4, -0.65])):
        line, _, (bar,) = lines[name].lines
        assert line.get_xdata().tolist() == [3, 5] and line.get_ydata().tolist() == pytest.approx(rating)
        assert [segment[0][1] for segment in bar.get_segments()] == pytest.approx(low)


def test_stops_in_partnerships_are_a_team_s_two_tricks_faced_by_the_other_team():
    # 4 players, teams {0, 2} and {1, 3}. The winner of a partnership pool is the team.
    trick_winner = np.array([[1, 2, 0, 3, 3],    # team 0 on two at trick 3; seat 3 takes 4 and 5: team 1 wins
                             [0, 2, 1, 0, 3]])   # team 0 on two at trick 2 and wins with trick 4
    winner = np.array([1, 0])
    faced, stopped = stops(trick_winner, winner, 4, Rules(num_players=4, partnerships=True).sides())
    assert faced.tolist() == [[False, True, False, True]] * 2  # never the threat's own partner
    assert stopped.tolist() == [[False, False, False, True], [False] * 4]
    # read seat by seat, seat 3 was "the threat" of the first hand and the team's number 1 "not him"
    faced, stopped = stops(trick_winner, winner, 4)
    assert stopped[0].tolist() != [False, False, False, True]


def played(hands: list[str], dealer: int, plays: str, turnup: str = "9C", **rules):
    """One hand-made deal (clubs trump: the 9C turned, unless ``turnup`` says otherwise), dealt by ``dealer`` and
    played card by card."""
    from spoilfive_env.core import SpoilFiveCore

    core = SpoilFiveCore(1, rules=Rules(num_players=len(hands), **rules), deal=False)
    core.reset(hands=np.array([[[card_index(c) for c in hand.split()] for hand in hands]]),
               turnups=np.array([card_index(turnup)]), dealers=np.array([dealer]))
    for card in plays.split():
        core.step(np.array([card_index(card)]))
    return core


@pytest.mark.parametrize("card, overtakes", [("KS", True), ("4S", False)])
def test_friendly_fire_in_partnerships_is_overtaking_one_s_partner_who_beats_the_threat_team(card, overtakes):
    """Clubs trump, nobody holds a club or the AH. Team 0 (seats 0, 2) takes tricks 1 and 2, one each:
    no seat is on two, but the team is. In trick 3 seat 3 (team 1) beats the team's 2S and 3S with the QS;
    seat 1, his partner, may overtake with the KS or play the 4S."""
    core = played(["KD 2H 3S 5D 6D", "2D 3H KS 4S 8D", "3D KH 2S 9D 10D", "4D 4H QS JD QD"], 3,
                  "KD 2D 3D 4D 2H 3H KH 4H 2S QS 3S", partnerships=True)
    assert int(core.current[0]) == 1 and core.tricks_won[0].tolist() == [1, 0, 1, 0]
    chance, overtook, _ = overtake_events(core, np.array([card_index(card)]))
    assert chance.tolist() == [True] and overtook.tolist() == [overtakes]


def test_a_player_on_two_tricks_himself_has_no_friendly_fire_chance():
    """Clubs trump, nobody holds a club or the AH. Seats 0 and 1 take two tricks each (0, 1, 0, 1). In the
    last trick seat 1 (a threat) leads the 5H, seat 2 beats it with the 9H, and seat 0 could take the
    trick with the KH. Seat 0 is on two tricks himself: the trick wins him the pool, so it is no overtaking
    of a fellow spoiler, and no chance of one (agents.spoiling: the seat holds fewer than two tricks)."""
    core = played(["KD 4D JD 8D KH", "2D QD 6D 10D 5H", "3D 5D 7D 9D 9H"], 2,
                  "KD 2D 3D 4D QD 5D 6D 7D JD 8D 10D 9D 5H 9H")
    assert int(core.current[0]) == 0 and core.tricks_won[0].tolist() == [2, 2, 0]
    chance, overtook, _ = overtake_events(core, np.array([card_index("KH")]))
    assert chance.tolist() == [False] and overtook.tolist() == [False]


def test_beating_the_threat_s_own_winning_card_is_no_friendly_fire():
    """Clubs trump, nobody holds a club or the AH. Seat 1 takes tricks 1 and 3 and, on two, leads the 9H in
    trick 4; seat 2 plays under it with the 5H. Seat 0 (no trick) may beat the threat with the KH: that is
    the stop, not an overtake of a fellow, since nobody was beating the threat yet (no chance of one)."""
    core = played(["2D 5D 7D KH 8D", "KD 4D JD 9H 10D", "3D QD 6D 5H 9D"], 2, "2D KD 3D 4D QD 5D 6D 7D JD 9H 5H")
    assert int(core.current[0]) == 0 and core.tricks_won[0].tolist() == [0, 2, 1]
    chance, overtook, _ = overtake_events(core, np.array([card_index("KH")]))
    assert chance.tolist() == [False] and overtook.tolist() == [False]


def test_a_threat_who_has_not_yet_played_to_the_trick_gives_no_friendly_fire_chance():
    """Clubs trump, nobody holds a club or the AH. Seat 1 takes tricks 1 and 2 (a threat, on two) and seat 2 trick
    3; seat 2 leads the 5H in trick 4 and seat 0 (no trick) may beat it with the KH, before seat 1 has played.
    Nobody is beating the threat's card yet, since he has none in the trick: no fellow to overtake, no chance.
    Mutant killed: a threat who has not played to the trick counted as already beaten (P08)."""
    core = played(["2D 5D 7D KH 8D", "KD QD 6D 9D 10D", "3D 4D JD 5H 9H"], 2, "2D KD 3D QD 4D 5D 6D JD 7D 5H")
    assert int(core.current[0]) == 0 and int(core.leader[0]) == 2 and core.tricks_won[0].tolist() == [0, 2, 1]
    chance, overtook, _ = overtake_events(core, np.array([card_index("KH")]))
    assert chance.tolist() == [False] and overtook.tolist() == [False]


@pytest.mark.parametrize("card, overtakes", [("KH", True), ("4H", False)])
def test_friendly_fire_reads_the_trick_in_playing_order_from_the_leader(card, overtakes):
    """Clubs trump, nobody holds a club or the AH. Seat 1 takes tricks 1 and 2 (a threat, on two) and seat 0 trick
    3; in trick 4 seat 0 leads the 9H and seat 1, next in playing order, plays under it with the 5H. Seat 2, third,
    may overtake his fellow with the KH (a chance, taken) or play the 4H (a chance, not taken): the trick's
    second card is seat 1's, the threat's, beaten by the first, seat 0's.
    Mutant killed: the trick's cards read in reversed playing order, the second card taken for seat 2's (P10)."""
    core = played(["2D 5D JD 9H 8D", "KD QD 6D 5H 10D", "3D 4D 7D KH 4H"], 2, "2D KD 3D QD 4D 5D 6D 7D JD 9H 5H")
    assert int(core.current[0]) == 2 and int(core.leader[0]) == 0 and core.tricks_won[0].tolist() == [1, 2, 0]
    chance, overtook, forced = overtake_events(core, np.array([card_index(card)]))
    assert chance.tolist() == [True] and overtook.tolist() == [overtakes] and forced.tolist() == [False]


@pytest.mark.parametrize("card", ["KH", "QH"])
def test_a_chance_where_every_legal_card_beats_is_a_forced_overtake(card):
    """The trick of the test above, seat 2 holding the KH and QH: both beat his fellow's 9H and he must follow
    hearts, so whichever he plays overtakes. A forced chance, counted apart (friendly_fire_rate_unforced):
    about half of random's and spoiler's chances at 3 to 5 players are (found by a review)."""
    core = played(["2D 5D JD 9H 8D", "KD QD 6D 5H 10D", "3D 4D 7D KH QH"], 2, "2D KD 3D QD 4D 5D 6D 7D JD 9H 5H")
    chance, overtook, forced = overtake_events(core, np.array([card_index(card)]))
    assert chance.tolist() == overtook.tolist() == forced.tolist() == [True]


def test_the_unforced_friendly_fire_rate_leaves_the_forced_chances_out():
    """evaluate's friendly_fire_rate_unforced: the overtakes less the forced ones, of the chances less the forced."""
    from agents.evaluate import evaluate

    figures = evaluate(["random"], num_players=4, deals=100, seed=0)["agents"]["random"]
    forced, overtakes, chances = figures["forced_overtakes"], figures["overtakes"], figures["overtake_chances"]
    assert 0 < forced < chances and forced <= overtakes
    assert figures["friendly_fire_rate_unforced"] == pytest.approx((overtakes - forced) / (chances - forced))
    assert figures["friendly_fire_rate_unforced"] < figures["friendly_fire_rate"]


@pytest.mark.parametrize("card, overtakes", [("KC", True), ("4C", False)])
def test_friendly_fire_counts_the_ace_of_clubs_card_index_0_as_a_card_in_the_trick(card, overtakes):
    """Diamonds trump (the 9D turned), nobody holds a diamond or the AH. Seat 1 takes tricks 1 and 2 (a threat, on
    two) and seat 0 trick 3; in trick 4 seat 0 leads the AC, card index 0, and seat 1 plays under it with the 5C.
    Seat 2 may overtake his fellow with the KC or play the 4C: the trick's best card, the one beating the threat,
    is the AC, whose index 0 is a card played like any other (an empty place of a trick is -1).
    Mutant killed: a trick's card counted as played only when its index is above 0 (S04)."""
    core = played(["2S 5S JS AC 8S", "KS QS 6S 5C 10S", "3S 4S 7S KC 4C"], 2, "2S KS 3S QS 4S 5S 6S 7S JS AC 5C",
                  turnup="9D")
    assert int(core.current[0]) == 2 and int(core.leader[0]) == 0 and core.tricks_won[0].tolist() == [1, 2, 0]
    chance, overtook, _ = overtake_events(core, np.array([card_index(card)]))
    assert chance.tolist() == [True] and overtook.tolist() == [overtakes]


def test_the_tricks_a_step_completed_are_each_trick_once_with_the_seat_that_took_it():
    """Random hands at 4 players: the tricks that trick_winners reports step by step are each hand's tricks in
    order, each once, and credit each seat with the tricks the core counted for it at the hand's end (whether the
    hand ended after three tricks, a failed or won jink, or an early spoil).
    Mutant killed: every game reported as completing a trick on every step, the trick in play credited (S22)."""
    from agents.spoiling import trick_winners
    from spoilfive_env.core import SpoilFiveCore

    core = SpoilFiveCore(300, rules=Rules(num_players=4), seed=11)
    rng = np.random.default_rng(11)
    taken = np.zeros((300, 4), np.int64)
    reported = [[] for _ in range(300)]
    while not core.done.all():
        mask = core.legal_mask()
        before = core.trick_number.copy()
        core.step(np.argmax(rng.random(mask.shape) * mask, axis=1))
        games, trick, seat = trick_winners(core, before)
        np.add.at(taken, (games, seat), 1)
        for game, index in zip(games.tolist(), trick.tolist()):
            reported[game].append(index)
    assert all(tricks == list(range(len(tricks))) for tricks in reported)
    assert (taken == core.last_tricks).all()
    assert {len(tricks) for tricks in reported} >= {3, 5}  # hands won early and hands played out


def test_stops_on_a_hand_made_hand():
    # 3 players: seat 0 takes tricks 1 and 2, seat 1 takes 3, seat 2 takes 4 and 5: spoiled.
    trick_winner = np.array([[0, 0, 1, 2, 2],
                             [0, 0, 0, -1, -1],   # seat 0 wins after three
                             [1, 2, 0, 1, -1]])   # seat 1 reaches two at trick 4, then takes it... wins
    winner = np.array([-1, 0, 1])
    faced, stopped = stops(trick_winner, winner, 3)
    assert faced.tolist() == [[False, True, True], [False, True, True], [True, False, True]]
    assert stopped.tolist() == [[False, True, True], [False, False, False], [False, False, False]]
    # 4 players, a trick each: nobody can reach three, so the hand ends spoiled after four tricks with no threat
    # (the fifth trick, not played, is nobody's: no seat is on two)
    faced, stopped = stops(np.array([[0, 1, 2, 3, -1]]), np.array([-1]), 4)
    assert not faced.any() and not stopped.any()
    # the last seat is a seat like the others: seat 2 of 3 on two after trick 2, stopped by seats 0 and 1
    # (mutant killed: the sides counted up to the second-highest only, the last seat never a threat, S32)
    faced, stopped = stops(np.array([[2, 2, 0, 1, 1]]), np.array([-1]), 3)
    assert faced.tolist() == [[True, True, False]] and stopped.tolist() == [[True, True, False]]


def test_json_and_plot(tmp_path, capsys):
    plot = tmp_path / "ratings.png"
    assert main(["--players", "3,4", "--agents", "greedy,random", "--deals", "50", "--json", "--quiet",
                 "--plot", str(plot)]) == 0
    board = json.loads(capsys.readouterr().out)
    assert board["players"] == [3, 4] and board["agents"] == ["greedy", "random"] and board["deals"] == 50
    assert board["interrupted"] is None
    for n in ("3", "4"):
        ranking = board["sizes"][n]["ranking"]
        assert [row["agent"] for row in ranking] == ["greedy", "random"]
        for key in ("rating", "rating_ci95", "mean_equity", "equity_ci95", "share_above_fair", "share_ci95",
                    "stop_rate", "two_trick_conversion"):
            assert all(np.isfinite(row[key]) for row in ranking), key
        for row in ranking:  # a rate with no chance to show it is null, not NaN
            assert (row["friendly_fire_rate"] is None) == (row["overtake_chances"] == 0)
            tables = [t for t in board["sizes"][n]["tables"] if t["agent"] == row["agent"]]
            assert row["pool_share"] == pytest.approx(np.mean([t["pool_share"] for t in tables]))
            assert row["share_above_fair"] == pytest.approx(row["pool_share"] - row["fair_share"])
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_agent_whose_name_holds_dollar_signs_is_plotted_as_written(tmp_path, capsys):
    # matplotlib read "$\\foo$" as mathtext and failed after the figures (item 7 of the bad-input sweep)
    checkpoint = tmp_path / "m$\\foo$.pt"
    checkpoint.write_bytes((Path(__file__).parents[1] / "agents" / "checkpoints" / "ppo.pt").read_bytes())
    plot = tmp_path / "ratings.png"
    assert main(["--players", "2", "--agents", f"random,{checkpoint}", "--deals", "1", "--quiet",
                 "--plot", str(plot)]) == 0
    # nothing on standard error but the note that ppo's copy never trained at 2 players
    assert capsys.readouterr().err == f"note: {checkpoint} trained at 3 to 6 players, never at 2: it plays there all " \
                                      "the same\n"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_plot_in_a_new_folder_is_made_and_one_that_cannot_be_is_refused_before_any_play(tmp_path, capsys):
    plot = tmp_path / "new" / "folder" / "ratings.png"
    assert main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--quiet", "--plot", str(plot)]) == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    with pytest.raises(SystemExit) as stop:
        main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--plot", str(blocked / "x.png")])
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert "is a file, so no folder can be made in it" in captured.err and len(captured.err.strip().splitlines()) == 1
    assert captured.out == ""  # nothing was played


def test_a_plot_path_that_is_a_folder_or_not_writable_is_refused_before_any_play(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "plots.png"
    folder.mkdir()
    with pytest.raises(SystemExit) as stop:
        main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--plot", str(folder)])
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert "is a folder" in captured.err and captured.out == ""
    # No permission (faked: the test may run as root, whom permissions do not stop).
    monkeypatch.setattr("spoilfive_env.cli.os.access", lambda path, mode: False)
    with pytest.raises(SystemExit) as stop:
        main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--plot",
              str(tmp_path / "new" / "x.png")])
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert f"no permission to write in {tmp_path}" in captured.err and captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plots.png"]  # no folder, no probe left behind


def test_a_plot_that_fails_to_write_keeps_the_figures(tmp_path, capsys, monkeypatch):
    from agents import leaderboard as board_module

    def refuse(board, path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(board_module, "plot_ratings", refuse)
    assert main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--quiet", "--json",
                 "--plot", str(tmp_path / "x.png")]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["agents"] == ["greedy", "random"]  # the figures came out first
    assert "could not be written (Permission denied)" in captured.err


def test_the_human_table(capsys):
    assert main(["--players", "3", "--agents", "greedy,random", "--deals", "20", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "3 players" in out and "top rated over these sizes: greedy" in out
    assert f"best (load_agent(\"best\"), the strongest agent shipped) is {BEST}" in out


def test_the_human_table_lists_each_size_s_agents_by_rating_with_their_figures():
    """A board made by hand: a size's lines go in the ranking's order, each with the agent's rating and interval,
    equity and interval, share above fair and interval in points, then its stop, 2-trick and overtake rates, the
    last also by choice (a rate with no chance to show it: '-')."""
    from agents.leaderboard import format_board

    def row(agent, rating, rating_ci, equity, stop_rate, fire=None, fire_by_choice=None):
        return {"agent": agent, "rating": rating, "rating_ci95": rating_ci, "mean_equity": equity,
                "equity_ci95": 0.05, "share_above_fair": 0.02, "share_ci95": 0.01, "stop_rate": stop_rate,
                "two_trick_conversion": 0.75, "friendly_fire_rate": fire, "friendly_fire_rate_unforced": fire_by_choice}

    board = {"agents": ["a", "bb"], "players": [3], "deals": 9, "seed": 1, "seconds": 3.0, "interrupted": None,
             "top_rated": "bb", "best_is": "x",
             "sizes": {"3": {"ranking": [row("bb", 0.5, 0.15, -0.25, 0.5, 0.875, 0.625),
                                         row("a", -0.5, 0.25, 0.25, None)]}}}
    lines = [line.split() for line in format_board(board).splitlines()]
    assert [line for line in lines if line[:1] in (["1"], ["2"])] == [
        ["1", "bb", "+0.50", "±", "0.15", "-0.250", "±", "0.050", "+2.0", "±", "1.0", "pt", "0.500", "0.750", "0.875",
         "0.625"],
        ["2", "a", "-0.50", "±", "0.25", "+0.250", "±", "0.050", "+2.0", "±", "1.0", "pt", "-", "0.750", "-", "-"]]


@pytest.mark.parametrize("argv, says", [
    (["--agents", "greedy"], "at least two"),
    (["--agents", "greedy,greedy"], "give each agent once (greedy more than once)"),
    (["--agents", "ppo,greedy,ppo"], "agents ppo, greedy, ppo are not allowed: give each agent once"),  # was dropped
    (["--agents", "greedy,nobody"], "unknown agent 'nobody'"),
    (["--agents", "greedy,random", "--players", "1,4"], "table sizes"),
    (["--agents", "greedy,random", "--players", "four"], "table sizes"),
    (["--agents", "greedy,random", "--deals", "0"], "--deals: '0' is not allowed: give a whole number of at least 1"),
    (["--agents", "greedy,random", "--deals", "1000001"], "at most 1,000,000"),
    (["--agents", "greedy,random", "--seed", "-1"], "--seed: '-1' is not allowed: give a seed from 0 to 4,294,967,295"),
    (["--agents", "greedy,random", "--plot", "board.txt"], ".png"),
    (["--agents", "greedy,random", "--plot", ".png"], "with a file name"),  # was written as a hidden file
    (["--agents", "greedy,random", "--plot", "plots/.SVG"], "with a file name"),
    (["--agents", "greedy,random", "--players", "3,3"], "give distinct table sizes"),  # was dropped silently
    (["--agents", "random,,greedy"], "--agents 'random,,greedy': an empty item"),  # blanks were dropped silently
    (["--agents", "random,greedy,"], "--agents 'random,greedy,': an empty item"),
])
def test_bad_input_is_one_line_and_exit_2(argv, says, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--deals", "5", *argv] if "--deals" not in argv else argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and says in err


def test_a_ray_address_nobody_answers_is_refused_before_any_play(monkeypatch, capsys):
    pytest.importorskip("ray")
    monkeypatch.setattr("agents.leaderboard.evaluate", lambda *args, **kwargs: pytest.fail("a tournament was played"))
    with pytest.raises(SystemExit) as stop:  # not quiet: the first tournament's line was written before the error
        main(["--players", "3", "--agents", "greedy,random", "--deals", "2", "--ray", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--ray 127.0.0.1:1: no Ray cluster answers there" in err


def test_without_choix_the_board_says_how_to_install_it_before_any_play(monkeypatch, capsys):
    played = []
    monkeypatch.setattr("agents.leaderboard.evaluate", lambda *args, **kwargs: played.append(args))
    monkeypatch.setitem(sys.modules, "choix", None)  # as if choix were not installed
    with pytest.raises(ImportError, match=r"need choix, which is not installed: .*-e \"\.\[leaderboard\]\""):
        leaderboard(["greedy", "random"], players=[3], deals=5)
    with pytest.raises(SystemExit) as stop:
        main(["--players", "3", "--agents", "greedy,random", "--deals", "5"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and "choix" in err, err
    assert played == []  # it was said before the first tournament, not after all of them


def test_bad_calls_of_the_function():
    with pytest.raises(ValueError, match="at least two"):
        leaderboard(["greedy"], deals=5)
    with pytest.raises(ValueError, match="table sizes"):
        leaderboard(["greedy", "random"], players=(11,), deals=5)
    with pytest.raises(ValueError, match=r"table sizes \[3, 4, 3\] are not allowed: give distinct table sizes"):
        leaderboard(["greedy", "random"], players=[3, 4, 3], deals=5)  # was played once, the 3 dropped silently
    with pytest.raises(ValueError, match=r"agents greedy, random, greedy are not allowed: give each agent once"):
        leaderboard(["greedy", "random", " greedy"], players=[3], deals=5)  # was played as greedy, random


@pytest.mark.parametrize("agents, players, says", [
    ("greedy,random", (3,), "at least two different agents, got 'greedy,random'"),  # not the letters g, r, e...
    (["greedy", object()], (3,), "agent <object .* is not allowed: the leaderboard takes agent specs"),
    (["greedy", "random"], (3.5,), r"table sizes \[3.5\] are not allowed"),  # was played at 3
    (["greedy", "random"], 3, "table sizes 3 are not allowed: give a list of whole numbers 2-10"),
    (["greedy", "random"], "3,4", "table sizes '3,4' are not allowed"),
    (["greedy", "random"], (True,), r"table sizes \[True\] are not allowed"),
    # A bad spec late in the list: its pairings came only after the earlier ones had been played in full.
    (["random", "greedy", "nope"], (3,), "unknown agent 'nope'"),
    (["random", "greedy", "ppo:x=1"], (3,), "bad options for checkpoint .*ppo.pt'"),
])
def test_odd_agents_and_table_sizes_are_refused_in_words_before_any_play(agents, players, says, monkeypatch):
    monkeypatch.setattr("agents.leaderboard.evaluate", lambda *args, **kwargs: pytest.fail("a tournament was played"))
    with pytest.raises(ValueError, match=says):
        leaderboard(agents, players, deals=2)


@pytest.mark.parametrize("options, says", [
    ({"progress": "x"}, "progress='x' is not allowed: give a callable .* or None"),  # was a TypeError when called
    ({"ray": 0}, r"ray=0 is not allowed: give None or False \(play here\)"),  # was worded for --ray
])
def test_odd_progress_and_ray_are_refused_before_any_play(options, says, monkeypatch):
    monkeypatch.setattr("agents.leaderboard.evaluate", lambda *args, **kwargs: pytest.fail("a tournament was played"))
    with pytest.raises(ValueError, match=says):
        leaderboard(["greedy", "random"], (3,), deals=2, **options)


def test_ray_goes_to_the_tournaments_ray_path(monkeypatch, capsys):
    """``--ray [ADDRESS]`` reaches every tournament as evaluate's ``ray=`` (whose sharding gives the
    same figures as one process: tests/test_ray.py); without it no tournament is told of Ray."""
    import agents.evaluate
    import agents.leaderboard as board_module
    import agents.sharding

    seen = []

    def recording(*args, **kwargs):
        seen.append(kwargs.get("ray"))
        return agents.evaluate.evaluate(*args)

    monkeypatch.setattr(board_module, "evaluate", recording)
    monkeypatch.setattr(agents.sharding, "connect", lambda address: seen.append(("joined", address)))
    assert main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--quiet", "--ray", "auto"]) == 0
    assert seen == [("joined", "auto"), "auto", "auto"]  # joined before any play, as agents.evaluate does
    seen.clear()
    assert main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--quiet", "--ray"]) == 0
    assert seen == [("joined", ""), "", ""]
    seen.clear()
    assert main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--quiet"]) == 0
    assert seen == [None, None]
    capsys.readouterr()


def interrupt_at(monkeypatch, call: int):
    """Make the ``call``-th tournament of the leaderboard end in Ctrl-C (the others are played)."""
    from agents import leaderboard as board_module

    ctrl_c_on_call(monkeypatch, board_module, "evaluate", call)


def test_ctrl_c_keeps_the_sizes_and_tables_already_played(monkeypatch, capsys, tmp_path):
    interrupt_at(monkeypatch, 4)  # 3 players: two tables; 4 players: the first, then Ctrl-C
    plot = tmp_path / "ratings.png"
    with pytest.raises(SystemExit) as stop:
        main(["--players", "3,4", "--agents", "greedy,random", "--deals", "5", "--quiet", "--json",
              "--plot", str(plot)])
    assert stop.value.code == 130
    captured = capsys.readouterr()
    board = json.loads(captured.out)
    assert board["players"] == [3] and list(board["sizes"]) == ["3"] and board["top_rated"] in ("greedy", "random")
    assert board["interrupted"]["players"] == 4
    assert [(t["agent"], t["table_of"]) for t in board["interrupted"]["tables"]] == [("greedy", "random")]
    assert "the tournaments it had finished are above" in captured.err
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # drawn from the finished size


def test_ctrl_c_before_any_tournament_finished_reports_nothing(monkeypatch, capsys):
    interrupt_at(monkeypatch, 1)
    with pytest.raises(SystemExit) as stop:
        main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--quiet"])
    assert stop.value.code == 130
    captured = capsys.readouterr()
    assert captured.out == "" and "before any tournament finished" in captured.err


def test_ctrl_c_inside_the_first_size_shows_its_finished_tables_without_ratings(monkeypatch, capsys):
    interrupt_at(monkeypatch, 2)
    with pytest.raises(SystemExit) as stop:
        main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--quiet"])
    assert stop.value.code == 130
    out = capsys.readouterr().out
    assert "stopped by Ctrl-C during 3 players" in out and "greedy against a table of random" in out
    assert "top rated over these sizes: - (no size finished)" in out


def test_ctrl_c_while_the_plot_is_drawn_keeps_the_board(monkeypatch, capsys, tmp_path):
    from agents import leaderboard as board_module

    def drawing(board, path):  # matplotlib takes seconds to load and draw
        raise KeyboardInterrupt

    monkeypatch.setattr(board_module, "plot_ratings", drawing)
    plot = tmp_path / "ratings.png"
    argv = ["--players", "3", "--agents", "greedy,random", "--deals", "5", "--quiet", "--json", "--plot", str(plot)]
    assert exit_status(main, argv) == INTERRUPTED
    captured = capsys.readouterr()
    assert json.loads(captured.out)["players"] == [3]  # the board came out first
    assert "Traceback" not in captured.err and captured.err.strip().splitlines() == [
        f"Ctrl-C: --plot {str(plot)!r} was not written; the figures are above"]
    assert not plot.exists()


def test_a_plot_cut_short_leaves_no_file(monkeypatch, tmp_path):
    from matplotlib.figure import Figure

    from agents.leaderboard import plot_ratings

    def cut_short(figure, file, **kwargs):  # part of the image written, then Ctrl-C
        with open(file, "wb") if isinstance(file, (str, Path)) else nullcontext(file) as out:
            out.write(b"\x89PNG\r\n")
        raise KeyboardInterrupt

    board = leaderboard(["greedy", "random"], players=(3,), deals=5, seed=0)
    monkeypatch.setattr(Figure, "savefig", cut_short)
    with pytest.raises(KeyboardInterrupt):
        plot_ratings(board, tmp_path / "ratings.png")
    assert list(tmp_path.iterdir()) == []  # neither the plot nor its temporary


def test_the_command_line_s_values_and_defaults_reach_the_board(monkeypatch):
    """What ``python -m agents.leaderboard`` plays: the documented defaults (3, 4 and 5 players, 2000 deals, seed 0,
    each tournament told on standard error) and each flag's value."""
    from agents import leaderboard as board_module

    class Played(Exception):
        pass

    calls = []

    def stand_in(specs, players, deals, seed, *, ray=None, progress=None):
        calls.append((specs, players, deals, seed, ray, progress is not None))
        raise Played  # nothing to play: the values are what is tested

    monkeypatch.setattr(board_module, "leaderboard", stand_in)
    with pytest.raises(Played):
        main(["--agents", "greedy,random"])
    with pytest.raises(Played):
        main(["--agents", "greedy,spoiler", "--players", "4,2", "--deals", "7", "--seed", "9", "--quiet"])
    assert calls == [(["greedy", "random"], [3, 4, 5], 2000, 0, None, True),
                     (["greedy", "spoiler"], [4, 2], 7, 9, None, False)]


def test_ctrl_c_before_any_size_finished_draws_no_plot(monkeypatch, capsys, tmp_path):
    # No size finished: no rating to draw, and an empty plot would read as a board with nothing on it.
    interrupt_at(monkeypatch, 2)
    plot = tmp_path / "ratings.png"
    with pytest.raises(SystemExit) as stop:
        main(["--players", "3", "--agents", "greedy,random", "--deals", "5", "--quiet", "--plot", str(plot)])
    assert stop.value.code == 130
    assert "stopped by Ctrl-C during 3 players" in capsys.readouterr().out
    assert not plot.exists()


def test_the_human_board_gives_each_size_s_fair_share():
    from agents.leaderboard import format_board

    def row(agent, rating):
        return {"agent": agent, "rating": rating, "rating_ci95": 0.1, "mean_equity": 0.0, "equity_ci95": 0.05,
                "share_above_fair": 0.0, "share_ci95": 0.01, "stop_rate": None, "two_trick_conversion": None,
                "friendly_fire_rate": None}

    sizes = {str(n): {"ranking": [row("a", 0.5), row("b", -0.5)]} for n in (3, 5)}
    board = {"agents": ["a", "b"], "players": [3, 5], "deals": 9, "seed": 1, "seconds": 3.0, "interrupted": None,
             "top_rated": "a", "best_is": "x", "sizes": sizes}
    text = format_board(board)
    # one seat of n: the share each seat takes on average, against which "share above fair" is counted
    assert "3 players (fair share 0.333)" in text and "5 players (fair share 0.200)" in text
