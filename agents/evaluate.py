"""Fair tournaments: duplicate deals, every rotation of the agents, one batch on the core.

``python -m agents.evaluate --players N --agents A,B,... --deals K [--seed S] [--json] [--paired-with X] [--quiet]``

A fixed set of ``K`` deals (hands, turn-up, dealer) is drawn from ``--seed``. The lineup
``A,B,...`` fills the table seat by seat; a lineup shorter than the table is filled with
its last agent (``--agents greedy,random`` at 4 players is one greedy against three
randoms). Every deal is played once for each of the ``N`` rotations of the lineup around
the table, so each agent meets the same cards from every seat. Episodes are single hands
scored with the equity reward (docs/rules.md, "Rewards"): a spoil is worth 0 to everyone
(without a ``dealer_ante``), a won pool ``P`` gives the winner ``P (N-1)/N`` and every other
player ``-P/N``.

All deals and rotations are stepped together as one batch on
:class:`~spoilfive_env.core.SpoilFiveCore` (in chunks of about ``batch_size`` games, whole
blocks of deals); at every step each agent is asked on the games where one of its seats is to
act: once for all of them when the agent is ``batch_invariant`` (the rule-based ones), else once
per block of deals, through :func:`agents.base.actions_in_core` (``act_batch_core``: ``act_batch`` on
those games' observations, or the same moves read from the core by the rule players). The cheating
``oracle`` is handed the core itself (``Agent.act_batch_state``).

Seeding, and Ray: the deals are cut into blocks of :data:`~agents.sharding.BLOCK_DEALS`
deals, and every agent is reseeded at the start of each block from
``SeedSequence([seed, agent index, block index])`` and draws only from that block's stream
while it plays it (:mod:`agents.sharding`). A block's outcome is a pure function of
``(seed, block)``, so the figures for a seed are the same whatever ``batch_size``, and the
same with ``--ray [ADDRESS]``, which plays shards of blocks as Ray tasks and merges them.

Figures (``--json`` gives all of them):

* per agent: mean equity and mean chips per hand (per seat it occupies), each with a 95%
  confidence interval clustered by deal (the ``K`` per-deal means are the independent
  samples); share of the won pools, with its interval, beside the fair share (seats / N);
  jink attempts and successes; how often it converted two tricks into the pool; the
  cooperative-spoiling figures of :mod:`agents.spoiling` (how often it stopped a player on
  two tricks, how often it overtook a fellow who was already beating such a threat, and how often
  where it had a choice), which the human report gives too, in a second table.
* per table: spoil rate with its interval, and how often a player who reached two tricks
  went on to win the pool.
* with ``--paired-with X``: the same tournament again with ``X`` in the first agent's seats (the
  same deals, every other agent on the same streams), each one's equity and pool share and the
  difference of the two, with intervals clustered by deal (:func:`paired_difference`). A Ctrl-C during that
  second tournament still reports the first, finished one (``"interrupted"`` in place of
  ``"paired"``), then exits with status 130.

The canary: the same deterministic agent in every seat gives every lineup entry exactly
the fair share and zero mean equity (the rotations make each entry sit in every seat of the
same game): exactly zero under the default rules, within float32's rounding of the dealer's
transfer (about 1e-8) with a ``dealer_ante``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from spoilfive_env import __version__
from spoilfive_env.cards import HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, NUM_CARDS, NUM_TRICKS
from spoilfive_env.cli import (
    ArgumentParser,
    aligned_rows,
    comma_items,
    exit_interrupted,
    json_text,
    non_negative_int,
    plus_minus,
    positive_int,
    rule_option,
    run_command,
    seed_value,
    table_size,
)
from spoilfive_env.core import SpoilFiveCore, check_fits_in_memory
from spoilfive_env.rules import PRESETS, Rules, is_integer, make_rules

from . import BEST, load_agent
from .base import Agent, actions_in_core, checked_actions, distinct_entries, stream_seed
from .sharding import BLOCK_DEALS, block_seed, check_shards, connect_for_command, plays_on_ray, run_on_ray
from .spoiling import overtake_events, stops, trick_winners, two_tricks_with_one_to_play

Z95 = 1.959963984540054
MAX_DEALS = 1_000_000
"""The most deals one tournament takes: the deals and every hand's outcome are held in memory
(a million deals of four players is already about a gigabyte), and a million deals of the
rule-based agents take minutes."""


def _at_most_max_deals(text: str, value: int) -> int:
    if value > MAX_DEALS:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: give at most {MAX_DEALS:,} deals")
    return value


def refuse_bad_agents(parser, flag: str, specs, *, observations_only: bool = False, players=()) -> None:
    """Load each agent spec once, so that a bad one ends the command in one line (``parser.error``:
    exit 2) before any play; ``flag`` names the option it came from. ``observations_only``: the
    command plays agents on observations alone, so the cheating ``oracle`` is refused too. ``players``: the
    table sizes the command plays, each outside a trained network's own noted on standard error (it plays)."""
    for spec in dict.fromkeys(specs):
        try:
            agent = load_agent(spec, seed=0)
        except ValueError as error:  # the message names the spec and what is allowed
            parser.error(f"{flag}: {error}")
        except ImportError as error:  # a missing extra (torch, ray): say which spec needed it
            parser.error(f"{flag} {spec!r}: {error}")
        except KeyboardInterrupt:  # a checkpoint or a policy search imports torch: seconds
            exit_interrupted(f"Ctrl-C: stopped while loading {flag} {spec}, nothing was run")
        if observations_only and getattr(agent, "cheats", False):
            parser.error(f"{flag} {spec!r}: it cheats (it reads every hand from the engine), so it plays only where "
                         "the engine's state is at hand: agents.evaluate, the leaderboard, the terminal game and the "
                         "Gymnasium env's opponents")
        trained = getattr(agent, "trained_players", None)
        unseen = [n for n in players if trained and not trained[0] <= n <= trained[1]]
        if unseen:
            print(f"note: {spec} trained at {trained[0]} to {trained[1]} players, never at "
                  f"{' or '.join(map(str, unseen))}: it plays there all the same", file=sys.stderr)


def deal_count(text: str) -> int:
    """argparse ``type``: a number of deals, 1 to :data:`MAX_DEALS`."""
    return _at_most_max_deals(text, positive_int(text))


def check_deal_count(text: str) -> int:
    """argparse ``type``: deals of a closing check, 0 (no check) to :data:`MAX_DEALS`."""
    return _at_most_max_deals(text, non_negative_int(text))


def make_deals(num_players: int, deals: int, seed: int):
    """``deals`` deals from ``seed``: hands ``(K, n, 5)``, turn-ups ``(K,)``, dealers ``(K,)``."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x5F0115]))
    order = rng.random((deals, NUM_CARDS)).argsort(axis=1).astype(np.int8)
    hands = order[:, : num_players * HAND_SIZE].reshape(deals, num_players, HAND_SIZE)
    turnups = order[:, num_players * HAND_SIZE]
    dealers = rng.integers(0, num_players, size=deals)
    return hands, turnups, dealers


_AGENT_STREAM = 0xA6E47
"""The tournament agents' stream (:func:`agents.base.stream_seed`) of the seed they are made with."""


def distinct_specs(agents, num_players: int):
    """The lineup's distinct entries (specs or agent objects, in order of first seat) and the
    lineup as indices into them (length ``num_players``); agent index = position in the first."""
    specs = list(agents)
    if not specs:
        raise ValueError("give at least one agent")
    if len(specs) > num_players:
        raise ValueError(f"{len(specs)} agents do not fit a table of {num_players} players")
    specs = specs + [specs[-1]] * (num_players - len(specs))
    first, lineup = distinct_entries(specs)
    return [specs[position] for position in first], lineup


def build_agents(specs, seed: int) -> list:
    """Agents from :func:`distinct_specs`' entries (objects are used as they are)."""
    agents = []
    for index, spec in enumerate(specs):
        if isinstance(spec, type):  # a class has act_batch too, unbound: a TypeError at the first move
            raise ValueError(f"{spec!r} is a class, not an agent: give an agent object (an instance, "
                             f"{spec.__name__}(...)), a registry name or a checkpoint path")
        agent = load_agent(spec, seed=stream_seed(seed, _AGENT_STREAM, index)) if isinstance(spec, str) else spec
        if not isinstance(agent, Agent) and not hasattr(agent, "act_batch"):
            raise ValueError(f"{spec!r} is not an agent: it needs act_batch(observations, masks)")
        agents.append(agent)
    return agents


def _labels(specs, agents) -> list[str]:
    labels = []
    for index, (spec, agent) in enumerate(zip(specs, agents)):
        label = spec if isinstance(spec, str) else getattr(agent, "name", f"agent{index}")
        while label in labels:
            label += "'"
        labels.append(label)
    return labels


def _lineup(agents, num_players: int, seed: int):
    """Distinct agents, their labels, and the lineup as indices into them (length n)."""
    specs, lineup = distinct_specs(agents, num_players)
    distinct = build_agents(specs, seed)
    return distinct, _labels(specs, distinct), lineup


def check_ray(ray) -> None:
    """``ray`` of :func:`evaluate` (and of the leaderboard): None, a bool or a str address, or a ``ValueError``
    in the function's words (the command line's ``--ray`` takes a str and words its own)."""
    if not (ray is None or isinstance(ray, (bool, str))):
        raise ValueError(f"ray={ray!r:.60} is not allowed: give None or False (play here), True or '' (a local Ray "
                         "cluster), 'auto' (the cluster `ray start` made on this machine) or 'HOST:PORT' (that head)")


def largest_core_batch(deals: int, num_players: int, batch_size: int) -> int:
    """The most games :func:`play_tournament` steps in one core: whole blocks of about ``batch_size``
    games (at least one block), and never more than the tournament's games (every rotation of every deal)."""
    block_games = BLOCK_DEALS * num_players
    return min(deals * num_players, block_games * max(1, batch_size // block_games))


def play_tournament(agents: list, lineup: np.ndarray, rules: Rules, hands, turnups, dealers,
                    batch_size: int = 8192, *, seed: int = 0, first_block: int = 0, progress: str | None = None):
    """Play every deal under every rotation. Returns per-game outcome arrays.

    Game ``g = deal * n + rotation``; in rotation ``r`` seat ``s`` holds lineup entry
    ``(s - r) % n``. Returns a dict of ``entry_of_seat (G, n)``, ``equity (G, n)``,
    ``chips (G, n)``, ``winner (G,)``, ``tricks (G, n)``, ``jinker (G,)``, ``jink_won (G,)``.

    The deals given are blocks ``first_block, first_block + 1, ...`` of the tournament's
    deals (:mod:`agents.sharding`): every :data:`~agents.sharding.BLOCK_DEALS` deals, from the
    first, are a block, and agent ``a`` plays block ``b`` with its generator reseeded from
    ``block_seed(seed, a, b)``, so the outcome of each block depends on ``(seed, block)``
    alone. A core batch holds whole blocks (at least one, about ``batch_size`` games). The
    agents' own generators are put back as they were at the end.

    ``progress``: a label to show a tqdm bar on standard error, in tricks played (a hand that
    ends early counts its five); ``None`` (default): no bar. It draws no random number.
    """
    n = rules.num_players
    D = len(turnups)
    G = D * n
    rotation = np.tile(np.arange(n), D)
    deal_of_game = np.repeat(np.arange(D), n)
    entry_of_seat = (np.arange(n)[None, :] - rotation[:, None]) % n
    agent_of_seat = lineup[entry_of_seat]
    out = {
        "entry_of_seat": entry_of_seat,
        "equity": np.zeros((G, n), np.float64),
        "chips": np.zeros((G, n), np.int64),
        "winner": np.full(G, -1, np.int64),
        "tricks": np.zeros((G, n), np.int64),
        "jinker": np.full(G, -1, np.int64),
        "jink_won": np.zeros(G, bool),
        # Cooperative-spoiling events (agents.spoiling): trick winners, friendly fire.
        "trick_winner": np.full((G, NUM_TRICKS), -1, np.int64),
        "overtake_chances": np.zeros((G, n), np.int64),
        "overtakes": np.zeros((G, n), np.int64),
        "forced_overtakes": np.zeros((G, n), np.int64),
    }
    for agent in agents:
        if hasattr(agent, "bind"):
            agent.bind(rules)
    block_games = BLOCK_DEALS * n
    # An agent with its own reseed() may keep random state beyond ``rng``: one block at a time.
    own_reseed = any(type(agent).reseed is not Agent.reseed for agent in agents if isinstance(agent, Agent))
    chunk_games = block_games * (1 if own_reseed else max(1, batch_size // block_games))
    saved = [(getattr(agent, "seed", None), getattr(agent, "rng", None)) for agent in agents]
    bar = tqdm(total=G * NUM_TRICKS, desc=progress, unit="trick", unit_scale=True, leave=False,
               disable=progress is None)
    try:
        for start in range(0, G, chunk_games):
            ids = np.arange(start, min(G, start + chunk_games))
            _play_chunk(agents, agent_of_seat, rules, hands, turnups, dealers, deal_of_game, ids, out,
                        seed, first_block, block_games, bar)
    finally:
        bar.close()
        for agent, (agent_seed, rng) in zip(agents, saved):
            if rng is not None:
                agent.seed, agent.rng = agent_seed, rng
    return out


def _tricks_played(core) -> np.ndarray:
    """Each game's progress in tricks ``(B,)`` float: the cards of the trick in play count as a
    fraction of it, and a finished hand counts all its tricks."""
    return np.where(core.done, NUM_TRICKS, core.trick_number + core.trick_pos / core.num_players)


def _advance(bar, tricks: float) -> None:
    """Move ``bar`` on by ``tricks``, never past its total: thirds and fifths of a trick summed
    over thousands of steps can overshoot it by a rounding error, which tqdm warns about."""
    bar.update(max(0.0, min(tricks, bar.total - bar.n)))


def _play_chunk(agents, agent_of_seat, rules, hands, turnups, dealers, deal_of_game, ids, out,
                seed, first_block, block_games, bar):
    """Play games ``ids`` (whole blocks) on one core, each agent drawing from each block's stream;
    ``bar`` (tqdm) is moved on by the tricks played."""
    blocks = range(ids[0] // block_games, ids[-1] // block_games + 1)
    streams = {}  # (agent index, local block) -> that block's generator
    for index, agent in enumerate(agents):
        for block in blocks:
            if hasattr(agent, "reseed"):
                agent.reseed(block_seed(seed, index, first_block + block))
            streams[index, block] = getattr(agent, "rng", None)
    core = SpoilFiveCore(len(ids), rules=rules, mode="hand", reward="equity", deal=False)
    d = deal_of_game[ids]
    core.reset(hands=hands[d], turnups=turnups[d], dealers=dealers[d])
    counted = _tricks_played(core)  # what the bar has been told, per game
    while len(ids):
        masks = core.legal_mask()
        who = agent_of_seat[ids, core.current.astype(np.int64)]
        who[core.done] = -1  # finished games wait for compaction: asking an agent would spend its stream
        actions = np.zeros(len(ids), np.int64)  # (a finished game's action is ignored)
        for index, agent in enumerate(agents):
            rows = np.flatnonzero(who == index)
            if not len(rows):
                continue
            if getattr(agent, "batch_invariant", False):
                groups = [rows]  # its action for a row depends on that row alone
            else:  # rows are in game order, so each block's rows are one run
                block_of_row = ids[rows] // block_games
                groups = np.split(rows, np.flatnonzero(np.diff(block_of_row)) + 1)
            for group in groups:
                stream = streams[index, int(ids[group[0]] // block_games)]
                if stream is not None and not getattr(agent, "batch_invariant", False):
                    agent.rng = stream
                group_masks = masks[group]
                chosen = actions_in_core(agent, core, group, group_masks)
                # An agent object may be the user's own: name it, not a row of this core, if it breaks the contract.
                actions[group] = checked_actions(f"agent {getattr(agent, 'name', type(agent).__name__)!r}", chosen,
                                                 group_masks)
        chance, overtook, forced = overtake_events(core, actions)
        acting, tricks_before = core.current.astype(np.int64), core.trick_number.copy()
        rewards, done = core.step(actions)
        out["equity"][ids] += rewards
        out["overtake_chances"][ids, acting] += chance
        out["overtakes"][ids, acting] += overtook
        out["forced_overtakes"][ids, acting] += forced
        games, trick, seat = trick_winners(core, tricks_before)
        out["trick_winner"][ids[games], trick] = seat
        if done.any():
            f = np.flatnonzero(done)
            g = ids[f]
            out["chips"][g] = core.chips[f] - rules.starting_chips
            out["winner"][g] = core.last_winner[f]
            out["tricks"][g] = core.last_tricks[f]
            out["jinker"][g] = core.last_jinker[f]
            out["jink_won"][g] = core.last_jink_won[f]
        if not bar.disable:  # (counting costs a little on every step: only for a bar shown)
            played = _tricks_played(core)
            _advance(bar, float((played - counted).sum()))
            counted = played
        live = ~core.done
        if not live.any():
            break
        if live.sum() <= core.batch_size // 2 and core.batch_size > 64:
            keep = np.flatnonzero(live)  # (in order: each block's rows stay one run)
            core = core.subset(keep)
            ids, counted = ids[keep], counted[keep]


def _mean_ci(per_deal: np.ndarray) -> tuple[float, float]:
    """Mean of per-deal values and the half-width of its 95% interval."""
    K = len(per_deal)
    mean = float(per_deal.mean()) if K else float("nan")
    half = float(Z95 * per_deal.std(ddof=1) / np.sqrt(K)) if K > 1 else float("nan")
    return mean, half


def _ratio_residuals(numerator: np.ndarray, denominator: np.ndarray) -> tuple[float, np.ndarray, float]:
    """Ratio of sums over deals, each deal's residual from it, and the denominator's total: the
    deal's first-order pull on the ratio is ``residual / total`` (the delta method). ``nan`` when
    the denominator sums to zero."""
    total = denominator.sum()
    if total == 0:
        return float("nan"), np.full(len(numerator), np.nan), float("nan")
    ratio = numerator.sum() / total
    return float(ratio), numerator - ratio * denominator, total


def _influence_ci(influence: np.ndarray, scale: float = 1.0) -> float:
    """Half-width of the 95% interval of a figure whose per-deal pulls are ``influence / scale``
    (clustered by deal)."""
    K = len(influence)
    if K < 2:
        return float("nan")
    return float(Z95 * np.sqrt(K / (K - 1) * (influence ** 2).sum() / scale ** 2))


def _ratio_ci(numerator: np.ndarray, denominator: np.ndarray) -> tuple[float, float]:
    """Ratio of sums over deals with a delta-method 95% interval clustered by deal."""
    ratio, residual, total = _ratio_residuals(numerator, denominator)
    return ratio, _influence_ci(residual, total)


def _deal_sums(values: np.ndarray, num_deals: int) -> np.ndarray:
    """Per-game values ``(G, n)`` or ``(G,)`` summed per deal ``(K,)`` (game = deal * n + rotation)."""
    return values.reshape(num_deals, -1).sum(axis=1)


def _seat_won(outcome: dict, rules: Rules) -> np.ndarray:
    """``(G, n)``: the seat's side took the pool (in partnerships, both partners)."""
    return outcome["winner"][:, None] == rules.sides()[None, :]


def _group_per_deal(outcome: dict, seat_won: np.ndarray, mine: np.ndarray, num_deals: int):
    """Per deal, for the seats ``mine`` marks ``(G, n)``: their mean equity a hand and the pools
    they won (the numerator of their pool share), ``(K,)`` each."""
    hands_per_deal = int(mine.sum()) // num_deals
    equity = _deal_sums(outcome["equity"] * mine, num_deals) / hands_per_deal
    return equity, _deal_sums((seat_won & mine).astype(np.float64), num_deals)


def _spoiling_figures(by_deal, mine, two_trick_pools, two_trick_hands, faced, stopped, overtakes, chances,
                      forced) -> dict:
    """A group's cooperative-spoiling counts and rates (agents.spoiling), intervals clustered by deal."""
    def per_deal(counts):
        return by_deal(counts.astype(np.float64))

    stop_rate, stop_ci = _ratio_ci(per_deal(stopped & mine), per_deal(faced & mine))
    fire, fire_ci = _ratio_ci(per_deal(overtakes * mine), per_deal(chances * mine))
    chosen, chosen_ci = _ratio_ci(per_deal((overtakes - forced) * mine), per_deal((chances - forced) * mine))
    return {
        "two_trick_hands": int((two_trick_hands & mine).sum()), "two_trick_pools": int((two_trick_pools & mine).sum()),
        "threats_faced": int((faced & mine).sum()), "stops": int((stopped & mine).sum()),
        "stop_rate": stop_rate, "stop_rate_ci95": stop_ci,
        "overtake_chances": int((chances * mine).sum()), "overtakes": int((overtakes * mine).sum()),
        "friendly_fire_rate": fire, "friendly_fire_rate_ci95": fire_ci,
        "forced_overtakes": int((forced * mine).sum()),
        "friendly_fire_rate_unforced": chosen, "friendly_fire_rate_unforced_ci95": chosen_ci,
    }


def _live_conversion(by_deal, seat_won, reached_two_live, mine) -> dict:
    """The pools won of the hands where a seat of ``mine`` reached two tricks with one still to play."""
    conversion, ci = _ratio_ci(by_deal((seat_won & reached_two_live & mine).astype(np.float64)),
                               by_deal((reached_two_live & mine).astype(np.float64)))
    return {"two_trick_hands_live": int((reached_two_live & mine).sum()),
            "two_trick_conversion_live": conversion, "two_trick_conversion_live_ci95": ci}


def summarise(outcome: dict, rules: Rules, num_deals: int, groups: dict[str, np.ndarray]) -> dict:
    """Figures for each group of lineup entries (``{label: bool (n,) over entries}``)."""
    n = rules.num_players
    entry_of_seat = outcome["entry_of_seat"]
    winner = outcome["winner"]
    seat_won = _seat_won(outcome, rules)
    reached_two = outcome["tricks"] >= 2
    # ... with a trick still to play: a seat whose second trick was the last one could not go on to win, and is
    # no stopped threat (10% to 19% of the players above at 3 to 5 players, a quarter of those who did not win)
    reached_two_live = two_tricks_with_one_to_play(outcome["trick_winner"], n)
    jinked = outcome["jinker"][:, None] == np.arange(n)[None, :]
    jink_won = jinked & outcome["jink_won"][:, None]
    won_any = (winner >= 0)
    faced, stopped = stops(outcome["trick_winner"], winner, n, rules.sides())

    def by_deal(values):
        return _deal_sums(values, num_deals)

    total_wins = by_deal(seat_won.astype(np.float64))
    result = {}
    for label, entries in groups.items():
        mine = entries[entry_of_seat]  # (G, n) bool: seat played by this group
        seats = int(entries.sum())
        hands_per_deal = seats * n
        equity_per_deal, pools_won = _group_per_deal(outcome, seat_won, mine, num_deals)
        equity, equity_ci = _mean_ci(equity_per_deal)
        chips, chips_ci = _mean_ci(by_deal(outcome["chips"] * mine) / hands_per_deal)
        share, share_ci = _ratio_ci(pools_won, total_wins)
        conversion, conversion_ci = _ratio_ci(by_deal((seat_won & reached_two & mine).astype(np.float64)),
                                              by_deal((reached_two & mine).astype(np.float64)))
        result[label] = {
            "seats": seats,
            "hands": int(mine.sum()),
            "mean_equity": equity, "equity_ci95": equity_ci,
            "mean_chips": chips, "chips_ci95": chips_ci,
            "pool_share": share, "pool_share_ci95": share_ci, "fair_share": seats / n,
            "pools_won": int((seat_won & mine).sum()),
            "win_rate": float((seat_won & mine).sum() / mine.sum()),
            "jink_attempts": int((jinked & mine).sum()),
            "jink_successes": int((jink_won & mine).sum()),
            "two_trick_conversion": conversion, "two_trick_conversion_ci95": conversion_ci,
            **_live_conversion(by_deal, seat_won, reached_two_live, mine),
            **_spoiling_figures(by_deal, mine, seat_won & reached_two, reached_two, faced, stopped,
                                outcome["overtakes"], outcome["overtake_chances"], outcome["forced_overtakes"]),
        }
    spoil, spoil_ci = _mean_ci(by_deal((~won_any).astype(np.float64)) / n)
    conversion, conversion_ci = _ratio_ci(by_deal((seat_won & reached_two).astype(np.float64)),
                                          by_deal(reached_two.astype(np.float64)))
    table = {
        "hands": int(len(winner)),
        "spoil_rate": spoil, "spoil_rate_ci95": spoil_ci,
        "two_trick_conversion": conversion, "two_trick_conversion_ci95": conversion_ci,
        **_live_conversion(by_deal, seat_won, reached_two_live, np.ones_like(reached_two_live)),
        "jink_attempts": int(jinked.sum()), "jink_successes": int(jink_won.sum()),
    }
    return result, table


class PairingInterrupted(KeyboardInterrupt):
    """Ctrl-C during the second tournament of :func:`evaluate` with ``paired_with``: the first one
    had finished. ``report`` is its report, with ``"interrupted": {"paired_with": label}`` in place
    of ``"paired"``. A :class:`KeyboardInterrupt`, so a caller that does not look for it stops as
    on any Ctrl-C."""

    def __init__(self, report: dict):
        super().__init__(f"Ctrl-C during the paired tournament with {report['interrupted']['paired_with']}")
        self.report = report


def evaluate(agents, num_players: int = 4, deals: int = 1000, seed: int = 0, *,
             rules: Rules | None = None, batch_size: int = 8192, ray: str | bool | None = None,
             shards: int | None = None, paired_with=None, progress: bool = False, **rule_options) -> dict:
    """Run a tournament and return every figure as a dict (what ``--json`` prints).

    The figures are a function of ``(agents, num_players, deals, seed, rules)`` alone: the
    same for any ``batch_size``, and the same with ``ray=`` for any number of ``shards``
    (the deals are played in blocks of :data:`~agents.sharding.BLOCK_DEALS`, each agent
    reseeded per block from ``SeedSequence([seed, agent index, block])``; see
    :mod:`agents.sharding`). Only ``"seconds"`` differs.

    Args:
        agents: lineup of agent specs (names, ``name:key=value`` specs, checkpoint paths as str or
            :class:`os.PathLike`) or agent objects, seat by seat, as a list or tuple (or one agent); a
            short lineup is filled with its last entry. Every agent, objects included, is reseeded per
            block from ``seed`` (an object's own generator is put back afterwards).
        num_players: table size.
        deals: number of deals; each is played ``num_players`` times (every rotation).
        seed: seed of the deals and of the agents' per-block streams.
        rules: the rules of the table (default ``Rules(num_players=num_players)``); or give
            rules options as keywords (``jink_bonus=1``, ``preset="hoyle"``).
        batch_size: games stepped together on one core (rounded to whole blocks).
        ray: ``None`` or ``False`` (default): play here, in this process. ``""`` or ``True``:
            start a local Ray cluster (or reuse the session already connected);
            ``"auto"``: join the cluster ``ray start`` made on this machine; ``"HOST:PORT"``:
            join that head node. Shards of blocks then run as Ray tasks, one CPU each; agent
            specs are rebuilt in each task (checkpoint paths must be readable there), agent
            objects travel pickled. A caller running many tournaments (the leaderboard)
            pays for connecting once: later calls reuse the session.
        shards: Ray tasks to cut the blocks into (default: one per CPU of the cluster); only with ``ray``.
        paired_with: an agent spec (or object) to compare the lineup's first agent with: the
            same tournament is played again with it in every seat of the first agent, on the
            same deals, every other agent drawing from the same streams, and ``"paired"``
            gives both agents' figures and the difference (first minus this one) of equity per
            hand and of pool share, with 95% intervals clustered by deal. The difference of
            two agents on the same deals is sharper than two separate tournaments' intervals.
        progress: show a tqdm bar on standard error for each tournament (tricks played; with
            ``ray``, deals whose shard is done). The figures are the same either way.

    Returns:
        ``{"agents": {label: figures}, "entries": [figures of each lineup entry],
        "table": {...}, "lineup": [...], "num_players", "deals", "seed", "hands", "rules",
        "version", "best", "seconds"}``, and ``"paired"`` with ``paired_with``. Labels are the specs
        (agent objects: their ``name``); ``"version"`` is the package's and ``"best"`` the spec the
        label ``best`` stood for (:data:`agents.BEST`), so that a report read later says which agent it
        measured.

    Raises:
        ValueError: a bad argument or agent spec (before any play), or an agent whose ``act_batch``
            returned anything but one legal integer action per row (naming the agent).
        PairingInterrupted: Ctrl-C during the ``paired_with`` tournament; it holds the first
            tournament's report.

    Example (training's periodic check against a table of spoilers):
        ``evaluate([my_agent, "spoiler"], num_players=4, deals=500, seed=1)["agents"]``
    """
    if not is_integer(num_players):  # 4.0 would pass the comparison with rules.num_players below
        raise ValueError(f"num_players={num_players!r} is not allowed: it must be a whole number from {MIN_PLAYERS} "
                         f"to {MAX_PLAYERS}")
    if rules is not None and not isinstance(rules, Rules):
        raise ValueError(f"rules={rules!r} is not allowed: give a Rules (spoilfive_env.rules.make_rules), or None "
                         "and the rules options as keywords")
    if rules is not None and "preset" in rule_options:
        raise ValueError(f"preset={rule_options['preset']!r} is not allowed with rules=: a preset makes the rules, "
                         "which rules= gives already; give the preset without rules= (any other options as keywords "
                         "beside it), or rules= with the options to change in it")
    if rules is None:
        rules = make_rules(num_players=num_players, **rule_options)
    elif rule_options:
        rules = rules.replace(**rule_options)
    if rules.num_players != num_players:
        raise ValueError(f"rules are for {rules.num_players} players, not {num_players}")
    if not (is_integer(deals) and 1 <= deals <= MAX_DEALS):
        raise ValueError(f"deals={deals!r} is not allowed: it must be a whole number from 1 to {MAX_DEALS:,}")
    if not (is_integer(seed) and seed >= 0):  # not truncated (1.5 would play seed 1) nor left to NumPy's words
        raise ValueError(f"seed={seed!r} is not allowed: it must be a whole number of at least 0")
    check_ray(ray)
    check_shards(shards)
    if shards is not None and not plays_on_ray(ray):  # the command line's --shards says the same
        raise ValueError(f"shards={shards!r} is for ray=: give ray= too (True, 'auto' or 'HOST:PORT'), or leave "
                         "shards out to play here")
    if isinstance(agents, (str, os.PathLike)) or hasattr(agents, "act_batch"):  # one agent (a class: refused below)
        agents = [agents]
    if not isinstance(agents, Sequence):  # a dict would give its keys, a set no seat order
        raise ValueError(f"agents={agents!r:.80} is not allowed: give the lineup seat by seat as a list or tuple of "
                         "agents (names, name:key=value specs, checkpoint paths or agent objects), or one agent")
    # A path is loaded and labelled as the same path given as a str.
    agents = [os.fspath(agent) if isinstance(agent, os.PathLike) else agent for agent in agents]
    if isinstance(paired_with, os.PathLike):
        paired_with = os.fspath(paired_with)
    if not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress={progress!r:.60} is not allowed: give True or False")
    if not (is_integer(batch_size) and batch_size >= 1):
        raise ValueError(f"batch_size={batch_size!r} is not allowed: it must be a positive integer")
    # Refused now if it cannot fit in memory, not after the agents are built and the deals made.
    check_fits_in_memory(largest_core_batch(int(deals), num_players, batch_size), num_players)
    return _evaluate(agents, num_players, int(deals), seed, rules, batch_size, ray, shards, paired_with, progress)


def _evaluate(agents, num_players: int, deals: int, seed: int, rules: Rules, batch_size: int, ray, shards,
              paired_with, progress: bool) -> dict:
    """:func:`evaluate` with every argument already checked (``python -m agents.evaluate`` checks
    them in its flags' words, the memory too, and comes here: each check runs once a command)."""
    started = time.perf_counter()
    specs, lineup = distinct_specs(agents, num_players)
    distinct = build_agents(specs, seed)  # also on the Ray path: a bad spec fails here, before any task
    labels = _labels(specs, distinct)
    if paired_with is not None:  # the rival in the first agent's place: index 0, so its streams
        rival_specs = [paired_with, *specs[1:]]
        rival = build_agents(rival_specs[:1], seed) + distinct[1:]
    hands, turnups, dealers = make_deals(num_players, int(deals), seed)

    def play(specs, distinct, label):
        label = f"{label}, {num_players} players" if progress else None
        if not plays_on_ray(ray):
            return play_tournament(distinct, lineup, rules, hands, turnups, dealers, batch_size, seed=seed,
                                   progress=label)
        return run_on_ray(specs, lineup, rules, hands, turnups, dealers, seed, batch_size,
                          address=ray, shards=shards, progress=label)

    outcome = play(specs, distinct, labels[0])
    n = num_players
    agent_groups = {label: lineup == index for index, label in enumerate(labels)}
    per_agent, table = summarise(outcome, rules, int(deals), agent_groups)
    entry_groups = {str(e): np.arange(n) == e for e in range(n)}
    per_entry, _ = summarise(outcome, rules, int(deals), entry_groups)
    entries = [{"entry": e, "agent": labels[lineup[e]], **per_entry[str(e)]} for e in range(n)]

    def report(**extra) -> dict:
        return {
            "num_players": n,
            "deals": int(deals),
            "rotations": n,
            "hands": int(deals) * n,
            "seed": int(seed),
            "lineup": [labels[i] for i in lineup],
            "rules": dataclasses.asdict(rules),
            "version": __version__,
            "best": BEST,  # what the label `best` stood for: it names the strongest agent of its day
            "agents": per_agent,
            "entries": entries,
            "table": table,
            **extra,
            "seconds": time.perf_counter() - started,
        }

    if paired_with is None:
        return report()
    rival_label = paired_with if isinstance(paired_with, str) else getattr(rival[0], "name", "rival")
    try:
        rival_outcome = play(rival_specs, rival, f"{rival_label} (paired)")
    except KeyboardInterrupt:  # the first tournament is finished: it is not thrown away
        raise PairingInterrupted(report(interrupted={"paired_with": rival_label})) from None
    return report(paired=paired_difference(outcome, rival_outcome, rules, lineup == 0, int(deals),
                                           labels[0], rival_label))


def paired_difference(outcome: dict, rival_outcome: dict, rules: Rules, entries: np.ndarray, num_deals: int,
                      label: str, rival_label: str) -> dict:
    """The seats of lineup ``entries`` in two tournaments on the same deals, their agent in
    ``outcome`` and a rival in ``rival_outcome``: each one's mean equity and pool share with their
    95% intervals, as :func:`summarise` counts them, and the differences (agent minus rival) with 95% intervals
    clustered by deal (the pool share's by the delta method, as :func:`_ratio_ci`)."""
    mine = entries[outcome["entry_of_seat"]]  # the same seats in both: same lineup, same rotations
    figures = []
    for played in (outcome, rival_outcome):
        seat_won = _seat_won(played, rules)
        equity, pools_won = _group_per_deal(played, seat_won, mine, num_deals)
        share, residual, total = _ratio_residuals(pools_won, _deal_sums(seat_won.astype(np.float64), num_deals))
        figures.append((equity, share, residual / total))
    (equity, share, influence), (rival_equity, rival_share, rival_influence) = figures
    difference, difference_ci = _mean_ci(equity - rival_equity)
    (mean_equity, equity_ci), (rival_mean_equity, rival_equity_ci) = _mean_ci(equity), _mean_ci(rival_equity)
    return {
        "agent": label, "rival": rival_label,
        "mean_equity": mean_equity, "rival_mean_equity": rival_mean_equity,
        "equity_ci95": equity_ci, "rival_equity_ci95": rival_equity_ci,
        "pool_share": share, "rival_pool_share": rival_share,
        "pool_share_ci95": _influence_ci(influence), "rival_pool_share_ci95": _influence_ci(rival_influence),
        "equity_difference": difference, "equity_difference_ci95": difference_ci,
        "pool_share_difference": share - rival_share,
        "pool_share_difference_ci95": _influence_ci(influence - rival_influence),
    }


def format_report(report: dict) -> str:
    """The human table that ``python -m agents.evaluate`` prints."""
    n = report["num_players"]
    lines = [
        f"Spoil Five tournament: {n} players, {report['deals']} deals x {n} rotations = "
        f"{report['hands']} hands, seed {report['seed']}, {report['seconds']:.1f} s",
        f"lineup: {', '.join(report['lineup'])}",
        "",
    ]
    header = ("agent", "seats", "equity / hand", "chips / hand", "pool share (fair)", "jinks won/tried")
    rows = [(label, str(a["seats"]),
             plus_minus(a["mean_equity"], a["equity_ci95"], "+.3f", ".3f"),
             plus_minus(a["mean_chips"], a["chips_ci95"], "+.3f", ".3f"),
             f"{plus_minus(a['pool_share'], a['pool_share_ci95'], '.3f', '.3f')} ({a['fair_share']:.3f})",
             f"{a['jink_successes']}/{a['jink_attempts']}")
            for label, a in report["agents"].items()]
    lines += aligned_rows(header, rows)
    # the cooperative-spoiling figures of each agent's seats (agents.spoiling): at a table of one agent, what the
    # equity and share above cannot show
    spoiling = ("agent", "stops (threats faced)", "friendly fire (chances)", "by choice (chances)")
    lines += [""] + aligned_rows(spoiling, [
        (label, f"{plus_minus(a['stop_rate'], a['stop_rate_ci95'], '.3f', '.3f')} ({a['threats_faced']})",
         f"{plus_minus(a['friendly_fire_rate'], a['friendly_fire_rate_ci95'], '.3f', '.3f')} ({a['overtake_chances']})",
         f"{plus_minus(a['friendly_fire_rate_unforced'], a['friendly_fire_rate_unforced_ci95'], '.3f', '.3f')} "
         f"({a['overtake_chances'] - a['forced_overtakes']})")
        for label, a in report["agents"].items()])
    t = report["table"]
    lines += [
        "",
        f"spoil rate {plus_minus(t['spoil_rate'], t['spoil_rate_ci95'], '.3f', '.3f')}; a player who reached two "
        f"tricks went on to win {plus_minus(t['two_trick_conversion'], t['two_trick_conversion_ci95'], '.1%', '.1%')}"
        " of the time, "
        f"{plus_minus(t['two_trick_conversion_live'], t['two_trick_conversion_live_ci95'], '.1%', '.1%')} with a "
        "trick still to play",
        "intervals: 95%, clustered by deal; equity and chips per hand per seat played",
    ]
    if "paired" in report:
        p = report["paired"]
        lines += [
            "",
            f"paired on the same deals, {p['agent']} minus {p['rival']} in its seats: equity / hand "
            f"{plus_minus(p['equity_difference'], p['equity_difference_ci95'], '+.3f', '.3f')} "
            f"({plus_minus(p['mean_equity'], p['equity_ci95'], '+.3f', '.3f')} against "
            f"{plus_minus(p['rival_mean_equity'], p['rival_equity_ci95'], '+.3f', '.3f')}); pool share "
            f"{plus_minus(100 * p['pool_share_difference'], 100 * p['pool_share_difference_ci95'], '+.1f', '.1f')}"
            " points "
            f"({plus_minus(p['pool_share'], p['pool_share_ci95'], '.3f', '.3f')} against "
            f"{plus_minus(p['rival_pool_share'], p['rival_pool_share_ci95'], '.3f', '.3f')})",
        ]
    if "interrupted" in report:
        lines += ["", f"paired with {report['interrupted']['paired_with']}: not finished (stopped by Ctrl-C), no "
                      "difference; the figures above are the first tournament's alone"]
    return "\n".join(lines)


BASELINES = ("random", "spoiler")
"""The tables a trained agent is checked against at the end of a training example."""


def check_against_baselines(agent, num_players: int, deals: int, seed: int, say=print) -> dict:
    """One seat of ``agent`` against a table of each of :data:`BASELINES` (the closing check
    of the examples): one line each through ``say``, and the reports by baseline."""
    reports = {}
    for baseline in BASELINES:
        report = reports[baseline] = evaluate([agent, baseline], num_players=num_players, deals=deals, seed=seed)
        figures = report["agents"][report["lineup"][0]]
        say(f"vs {num_players - 1} x {baseline}: equity/hand {figures['mean_equity']:+.3f} "
            f"± {figures['equity_ci95']:.3f} over {report['hands']} hands")
    return reports


def main(argv=None) -> int:
    """The command line; every value is checked before the tournament starts (a bad one: one line
    on standard error, exit status 2; Ctrl-C: one line, exit status 130)."""
    parser = ArgumentParser(
        prog="python -m agents.evaluate",
        description="A Spoil Five tournament on duplicate deals with every seat rotation.")
    parser.add_argument("--players", type=table_size, default=4,
                        help=f"table size, {MIN_PLAYERS}-{MAX_PLAYERS} (default 4)")
    parser.add_argument("--agents", required=True,
                        help="comma-separated lineup by seat, e.g. 'spoiler,greedy' (a short lineup is "
                             "filled with its last agent); names, name:key=value specs or checkpoint paths")
    parser.add_argument("--deals", type=deal_count, default=1000,
                        help=f"number of deals, 1 to {MAX_DEALS:,} (default 1000)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the deals and agents (default 0)")
    parser.add_argument("--preset", default=None, help="rules preset (default, hoyle, dealer_feeds)")
    parser.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE", type=rule_option,
                        help="a rules option, e.g. --rule jink_bonus=1 (repeatable)")
    parser.add_argument("--batch-size", type=positive_int, default=8192, help="games per core batch")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="play shards of the deals as Ray tasks: no ADDRESS starts a local cluster, 'auto' "
                             "joins the one `ray start` made here, HOST:PORT joins that head (same figures as without)")
    parser.add_argument("--shards", type=positive_int, default=None,
                        help="with --ray: Ray tasks to split the deals into (default: one per CPU of the cluster)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar on standard error (shown by default: the searches take minutes)")
    parser.add_argument("--paired-with", default=None, metavar="AGENT",
                        help="play the tournament again with AGENT in the first agent's seats, on the same deals, "
                             "and report the difference (first agent minus AGENT) of equity and pool share")
    args = parser.parse_args(argv)
    if args.shards is not None and args.ray is None:
        parser.error("--shards is for --ray: add --ray [ADDRESS], or leave --shards out")
    if args.preset is not None and args.preset not in PRESETS:
        parser.error(f"--preset {args.preset!r} is not allowed: choose one of {', '.join(PRESETS)}")
    given = [key for key, _ in args.rule]
    repeated = sorted({key for key in given if given.count(key) > 1})
    if repeated:
        parser.error(f"--rule {repeated[0]} is given more than once: give each option once")
    try:  # an unknown option too: Rules names it and lists the known ones
        rules = make_rules(num_players=args.players, preset=args.preset, **dict(args.rule))
    except ValueError as error:
        parser.error(f"--rule: {error}")
    try:  # the core batch the tournament will step must fit in memory (checked before any play)
        check_fits_in_memory(largest_core_batch(args.deals, args.players, args.batch_size), args.players,
                             name="a core batch of")
    except ValueError as error:
        parser.error(f"--batch-size {args.batch_size} with --deals {args.deals}: {error}")
    try:
        specs = comma_items(args.agents)
    except ValueError as error:
        parser.error(f"--agents {error}")
    if not specs:
        parser.error(f"--agents {args.agents!r}: give at least one agent")
    if len(specs) > args.players:
        parser.error(f"--agents: {len(specs)} agents do not fit a table of --players {args.players}")
    if args.paired_with is not None and not args.paired_with.strip():
        parser.error("--paired-with '': give an agent (a name, a name:key=value spec or a checkpoint path)")
    refuse_bad_agents(parser, "--agents", specs, players=[args.players])
    if args.paired_with is not None:
        args.paired_with = args.paired_with.strip()
        refuse_bad_agents(parser, "--paired-with", [args.paired_with], players=[args.players])
    if args.ray is not None:  # join the cluster now: an unreachable address fails before any play
        connect_for_command(parser, args.ray)
    try:  # every value is checked above, the memory too: evaluate() would check them again
        report = _evaluate(specs, args.players, args.deals, args.seed, rules, args.batch_size, args.ray,
                           args.shards, args.paired_with, not args.quiet)
    except PairingInterrupted as stopped:  # the first tournament had finished: report it
        print(json_text(stopped.report) if args.json else format_report(stopped.report), flush=True)
        exit_interrupted(f"Ctrl-C: the paired tournament with {args.paired_with} was not finished; the first "
                         "tournament's figures are above")
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: tournament stopped, nothing reported")
    print(json_text(report) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    run_command(main)
