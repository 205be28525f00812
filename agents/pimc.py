"""Determinised search: ``pimc`` (Perfect Information Monte Carlo) and the cheating ``oracle``.

``pimc``
    From its seat's observation alone it samples ``samples`` complete deals consistent
    with what it has seen (:func:`spoilfive_env.determinize.sample_hidden`: its own hand,
    the cards each seat has played, shown voids, who holds the robbed turn-up and the ace
    of trumps, how many cards each player holds). In every sampled deal it plays out every
    legal action, then finishes the hand with a rollout policy for every player (``spoiler``
    by default: each simulated player reads only his own hand and the table), and scores
    the hand with the equity reward from the decision point on. It picks the action with
    the best mean over the samples (ties go to the rollout policy's own choice). All
    samples x actions of all the decisions in a batch are played out together as one batch
    on the vectorised core.
``oracle``
    **Cheats.** The same search on the true deal: it reads every hand from the engine
    (``Agent.act_batch_state``), so it is a ceiling for measurement, the price of hidden
    information, and never an opponent in training. Its ``act_batch`` (observation only)
    refuses to run. ``oracle:knows=trumps`` (or ``suits``) reads only how many trumps (or cards of
    each suit) each hand holds, and searches ``pimc``'s sampled deals that match: what that
    knowledge alone is worth (docs/strength.md).

Options (``load_agent("pimc:samples=64:rollout=greedy")``): ``samples`` (deals per
decision, 1 to :data:`MAX_SAMPLES`, default 128: about 6 ms for one decision at 4 players on one
core and 13 ms at 10 (13 and 30 ms without Numba), well within the 100 ms budget; in a tournament's
batch the cost per decision is lower), ``rollout`` (``spoiler``, ``greedy`` or ``random``),
``max_rows`` (rollout games per core batch, bounds memory).

The searches play by the table's rules: the tournament and the terminal game tell them
(``Agent.bind``); otherwise they assume the default rules at the observed table size (and
partnerships when the observation marks teammates).

:func:`max_n_values` is the exact search of the last tricks (the full game tree of a deal);
``pimc_ppo`` uses it (``exact_tricks``), ``pimc`` keeps the rollouts as its only look-ahead.
"""

from __future__ import annotations

import functools

import numpy as np

from spoilfive_env.actions import NUM_ACTIONS, action_str
from spoilfive_env.cards import EFFECTIVE_SUIT, HAND_SIZE, TRUMP
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.determinize import games_from_information, read_information, sample_hidden
from spoilfive_env.observation import SLICES
from spoilfive_env.rules import Rules, is_integer

from .base import Agent, checked_batch, checked_rules, sample_legal
from .baselines import core_rule_actions, rule_actions, view_from_observations

ROLLOUTS = ("spoiler", "greedy", "random")
PIMC_SAMPLES = 128
"""``pimc``'s deals sampled per decision (its ``samples`` option's default)."""
PHASE_DONE = 3
ORACLE_KNOWS = ("hands", "trumps", "suits")
"""What the cheating ``oracle`` reads from the engine (its ``knows`` option)."""
COUNT_CANDIDATES = 32
"""Deals an ``oracle`` that knows only counts draws for each it keeps: enough that the true trump
counts are met in full at nearly every decision (at 3 players)."""
MAX_SAMPLES = 16384
"""The most deals a search samples a decision: one decision's samples x legal actions are played
out as one core batch (16,384 x 6 actions is about a hundred thousand games, half a gigabyte)."""


def _random_moves(core, masks, rng):
    return sample_legal(masks, rng)


def _rule_moves(core, masks, rng, spoil: bool):
    return core_rule_actions(core, masks, spoil)


def _rollout_policy(name: str):
    """The rollouts' moves ``policy(core, masks, rng)``: module functions, not lambdas, so that an agent
    pickles with the standard ``pickle`` (an env that holds it as an opponent too)."""
    if name not in ROLLOUTS:
        raise ValueError(f"rollout={name!r} is not allowed: choose one of {', '.join(ROLLOUTS)}")
    if name == "random":
        return _random_moves
    return functools.partial(_rule_moves, spoil=name == "spoiler")


def play_out(core, first_actions: np.ndarray, seats: np.ndarray, policy, rng) -> np.ndarray:
    """Apply ``first_actions`` in every game of ``core``, finish the hands with ``policy``
    for every player, and return each game's total reward for ``seats`` ``(B,)``.

    The core is consumed (stepped to the end). Finished games are dropped from the batch
    as it goes, so late steps only pay for the games still running.
    """
    B = core.batch_size
    total = np.zeros(B, np.float64)
    rewards, _ = core.step(first_actions)
    total += rewards[np.arange(B), seats]
    ids = np.arange(B)
    while True:
        live = ~core.done
        if not live.any():
            return total
        if live.sum() <= core.batch_size // 2 and core.batch_size > 32:
            keep = np.flatnonzero(live)
            core = core.subset(keep)
            ids = ids[keep]
        masks = core.legal_mask()
        rewards, _ = core.step(policy(core, masks, rng))
        total[ids] += rewards[np.arange(len(ids)), seats[ids]]


def action_values(core, masks: np.ndarray, seats: np.ndarray, policy, rng):
    """Play out every legal action of every game: returns ``(game, action, value)`` arrays,
    one entry per (game, legal action), the value being ``seats``' reward from here on."""
    masks = np.asarray(masks, dtype=bool)
    game, action = np.nonzero(masks)
    values = play_out(core.subset(game), action.astype(np.int64), np.asarray(seats)[game], policy, rng)
    return game, action, values


def action_means(game_of_decision, game, action, values, decisions: int) -> np.ndarray:
    """Mean value of every action of every decision ``(decisions, NUM_ACTIONS)`` from the
    ``(game, action, value)`` arrays of :func:`action_values`; -inf for an action not played."""
    key = game_of_decision[game] * NUM_ACTIONS + action
    sums = np.bincount(key, weights=values, minlength=decisions * NUM_ACTIONS)
    counts = np.bincount(key, minlength=decisions * NUM_ACTIONS)
    return np.where(counts > 0, sums / np.maximum(counts, 1), -np.inf).reshape(decisions, NUM_ACTIONS)


def max_n_values(core) -> np.ndarray:
    """Every seat's reward from here to the end of each game of ``core`` ``(B, n)`` when all
    play perfectly on the full deal, each maximising his own reward (max-n; ties go to the
    lowest action id). The whole game tree is expanded, one tree level per core step: cheap
    only near the end of a hand (two tricks at four players: at most 16 lines a deal).
    """
    values = np.zeros((core.batch_size, core.num_players), np.float64)
    live = np.flatnonzero(~core.done)
    if not len(live):
        return values
    node, action = np.nonzero(core.legal_mask()[live])
    child = core.subset(live[node])
    rewards, _ = child.step(action.astype(np.int64))
    lines = rewards + max_n_values(child)
    own = lines[np.arange(len(node)), core.current[live][node]]
    order = np.lexsort((-own, node))  # by node, best first within a node
    first = order[np.r_[True, node[order][1:] != node[order][:-1]]]
    values[live] = lines[first]
    return values


def exact_action_values(core, masks: np.ndarray):
    """Like :func:`action_values` for seat 0, but each action's value is the max-n value of
    the line it opens (:func:`max_n_values`) instead of a rollout."""
    game, action = np.nonzero(np.asarray(masks, dtype=bool))
    child = core.subset(game)
    rewards, _ = child.step(action.astype(np.int64))
    return game, action, rewards[:, 0] + max_n_values(child)[:, 0]


def _named(actions) -> str:
    return ", ".join(f"{action} ({action_str(action)})" for action in actions)


def _refuse_forbidden(rows, masks, legal, where: str, rules=None) -> None:
    """Refuse the first of ``rows`` whose mask (of ``masks``) allows an action its ``legal`` row does not:
    a search would play that action in its games, and the core would refuse it deep inside, its
    generators already moved. Given the ``rules`` the search plays, the message names them."""
    forbidden = masks & ~legal
    if forbidden.any():
        at = int(np.flatnonzero(forbidden.any(axis=1))[0])
        # The likeliest cause: a table of other rules (a concealed ace's plays) that nobody told the agent.
        hint = "" if rules is None else (
            f" (by the rules the search plays: conceal_ace_penalty={rules.conceal_ace_penalty}, allow_jink="
            f"{rules.allow_jink}; at a table of other rules, tell it them: agent.bind(rules), or load_agent(spec, "
            "rules=rules), as env.unwrapped.rules gives them)")
        raise ValueError(f"{where} got a mask that does not fit its observation: row {int(rows[at])} allows "
                         f"{_named(np.flatnonzero(forbidden[at]))}, which the rules forbid there; its legal "
                         f"actions are {_named(np.flatnonzero(legal[at]))}{hint}")


def legal_masks(observations, rules) -> np.ndarray:
    """The legal actions ``(D, 107)`` of the player to act at each observation (of one table size), by the
    engine's rules: the position rebuilt as a core, drawing no random number. The other seats are given
    the cards nobody is seen to hold, in order: what the player to act may do does not depend on them."""
    info = read_information(observations)  # also refuses an observation no game can show
    n, rows = info.num_players, np.arange(len(info.hand))
    unseen = ~info.hand & (info.played_by < 0)
    unseen[rows, info.turnup] = False
    robbed = info.own_discard >= 0
    unseen[rows[robbed], info.own_discard[robbed]] = False
    left = HAND_SIZE - (info.played_by[:, None, :] == np.arange(n)[None, :, None]).sum(axis=2)
    left[:, 0] = 0  # the viewer's own cards are his hand
    # the k-th unseen card goes to the seat whose share of the cards left holds k
    seat = ((np.cumsum(unseen, axis=1) - 1)[:, :, None] >= np.cumsum(left, axis=1)[:, None, :]).sum(axis=2)
    holders = np.where(info.hand, 0, np.where(unseen & (seat < n), seat, -1)).astype(np.int8)
    return games_from_information(info, holders, None, rules, mode="hand", reward="equity").legal_mask()


def check_rules_allow(observations, masks, rules, rows) -> None:
    """Refuse masks that allow an action the rules forbid at their observations (of one table size;
    ``rows``: their row numbers in the caller's batch), drawing no random number."""
    _refuse_forbidden(rows, masks, legal_masks(observations, rules), "act_batch", rules)


def draw_deals(observations, per_decision: int, rng, rules):
    """``per_decision`` hidden deals drawn from each decision row's information, decision by decision
    (:func:`sample_hidden`): ``(repeat, info, holders, discards)``, ``repeat[i]`` the decision row of deal
    ``i`` and the information repeated to match."""
    repeat = np.repeat(np.arange(len(observations)), per_decision)
    info = read_information(observations).take(repeat)  # decode each observation once
    holders, discards = sample_hidden(info, rng, rules)
    return repeat, info, holders, discards


class _SearchAgent(Agent):
    def __init__(self, seed: int | None = None, samples: int = PIMC_SAMPLES, rollout: str = "spoiler",
                 max_rows: int = 65536, rules: Rules | None = None):
        super().__init__(seed)
        if not is_integer(samples) or not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"samples={samples!r} is not allowed: it must be a whole number from 1 to {MAX_SAMPLES:,}")
        self.samples = int(samples)
        self.rollout = rollout
        self._policy = _rollout_policy(rollout)
        self._spoil = rollout == "spoiler"
        if not is_integer(max_rows) or max_rows < 1:
            raise ValueError(f"max_rows={max_rows!r} is not allowed: it must be a positive integer "
                             "(rollout games a core batch holds)")
        self.max_rows = int(max_rows)
        self.rules = None if rules is None else checked_rules(rules, "rules=")

    def _rules_for(self, observations: np.ndarray) -> Rules:
        info_size = int(observations[0, SLICES["table_size"]].argmax()) + 2
        if self.rules is not None and self.rules.num_players == info_size:
            return self.rules
        partnerships = bool((observations[:, SLICES["teammates"]] > 0.5).any())
        return Rules(num_players=info_size, partnerships=partnerships)

    def _fallback(self, observations, masks):
        """The rollout policy's own choice: the tie-break, and the move when only one is legal."""
        if self.rollout == "random":
            return sample_legal(masks, self.rng)
        return rule_actions(view_from_observations(observations), masks, spoil=self._spoil)

    def _choose(self, game_of_decision, game, action, values, fallback, decisions):
        """Best mean action per decision; ``game_of_decision`` maps games to decisions."""
        return self._best(action_means(game_of_decision, game, action, values, decisions), fallback)

    @staticmethod
    def _worlds(info, holders, discards, rules, kept=None):
        """The determinised games of drawn deals (those at ``kept`` only, when given), played to the
        end of the hand and scored by equity."""
        if kept is not None:
            info, holders, discards = info.take(kept), holders[kept], discards[kept]
        return games_from_information(info, holders, discards, rules, mode="hand", reward="equity")

    def _search_sampled(self, repeat, worlds, masks, fallback, decisions):
        """Best mean action per decision over sampled ``worlds``, each seen from its seat 0 (the searcher);
        ``repeat`` maps worlds to decisions, ``masks`` are the decisions'."""
        game, action, values = action_values(worlds, masks[repeat], np.zeros(len(repeat), np.int64),
                                             self._policy, self.rng)
        return self._choose(repeat, game, action, values, fallback, decisions)

    @staticmethod
    def _best(means, fallback):
        """The best mean of each row of ``means`` (changed in place), ties to ``fallback``."""
        means[np.arange(len(means)), fallback] += 1e-6
        return means.argmax(axis=1)

    def _search_rows(self, observations, masks):
        """Decisions worth searching: more than one legal action, hand not over."""
        phase = observations[:, SLICES["phase"]].argmax(axis=1)
        return np.flatnonzero((masks.sum(axis=1) > 1) & (phase != PHASE_DONE))

    def _chunks(self, rows, masks, per_decision):
        """Split decision rows so that each chunk plays at most ``max_rows`` games."""
        cost = masks[rows].sum(axis=1) * per_decision
        start = 0
        while start < len(rows):
            end = start + max(1, int(np.searchsorted(np.cumsum(cost[start:]), self.max_rows, side="right")))
            yield rows[start:end]
            start = end


class PIMCAgent(_SearchAgent):
    """Determinised search from the seat's own information (see the module docstring)."""

    name = "pimc"

    def act_batch(self, observations, masks):
        observations, masks = checked_batch(observations, masks)
        rows = self._search_rows(observations, masks)
        sizes = observations[rows][:, SLICES["table_size"]].argmax(axis=1)
        groups = [(same, self._rules_for(observations[same]))
                  for same in (rows[sizes == size] for size in np.unique(sizes))]
        for same, rules in groups:  # before any draw (a random fallback draws)
            check_rules_allow(observations[same], masks[same], rules, same)
        actions = self._fallback(observations, masks)
        for same, rules in groups:
            for chunk in self._chunks(same, masks, self.samples):
                actions[chunk] = self._search(observations[chunk], masks[chunk], actions[chunk], rules)
        return actions

    def _sample_worlds(self, observations, rules):
        """``samples`` determinised games per decision row, drawn from that seat's information.

        Returns ``(repeat, games)``: ``repeat[i]`` is the decision row of game ``i``.
        """
        repeat, info, holders, discards = draw_deals(observations, self.samples, self.rng, rules)
        return repeat, self._worlds(info, holders, discards, rules)

    def _search(self, observations, masks, fallback, rules):
        repeat, games = self._sample_worlds(observations, rules)
        return self._search_sampled(repeat, games, masks, fallback, len(observations))


class OracleAgent(_SearchAgent):
    """CHEATS: the same search on the true deal, reading every hand from the engine.

    A ceiling for measurement only (the gap to ``pimc`` is what hidden information costs);
    never an opponent in training. The tournament calls :meth:`act_batch_state` with the
    core and the game rows to decide; ``samples`` repeats the play-outs (useful only with
    a random rollout).

    ``knows`` says what it reads (:data:`ORACLE_KNOWS`): ``hands`` (every hidden card, the
    default), or only a count in each other hand, ``trumps`` (how many trumps) or ``suits`` (how
    many cards of each effective suit, trumps one of them). With a count it is ``pimc``'s search
    (``samples`` defaults to ``pimc``'s 128) on sampled deals that match the true counts: it draws
    :data:`COUNT_CANDIDATES` times ``samples`` deals as ``pimc`` does and keeps those that match,
    reused in turn when fewer than ``samples`` do, and searches unconditioned deals when none does.
    ``decisions_searched`` and ``decisions_fully_matched`` (at least ``samples`` matches) count how
    often the counts were met.
    """

    name = "oracle"
    cheats = True

    def __init__(self, seed: int | None = None, samples: int | None = None, rollout: str = "spoiler",
                 max_rows: int = 65536, rules: Rules | None = None, knows: str = "hands"):
        if knows not in ORACLE_KNOWS:
            raise ValueError(f"knows={knows!r} is not allowed: choose one of {', '.join(ORACLE_KNOWS)}")
        if samples is None:
            samples = 1 if knows == "hands" else PIMC_SAMPLES
        super().__init__(seed, samples=samples, rollout=rollout, max_rows=max_rows, rules=rules)
        self.knows = knows
        self.decisions_searched = 0
        self.decisions_fully_matched = 0

    def act_batch(self, observations, masks):
        raise ValueError("the oracle cheats: it needs the engine's hidden state. Play it through "
                         "agents.evaluate or spoilfive_env.play, which call act_batch_state(core, games, ...)")

    def act_batch_state(self, core, games, observations, masks):
        observations, masks = checked_batch(observations, masks)
        games = self._checked_games(core, games, observations, masks)
        actions = self._fallback(observations, masks)
        rows = self._search_rows(observations, masks)
        if self.knows != "hands":
            for chunk in self._chunks(rows, masks, self.samples * COUNT_CANDIDATES):
                actions[chunk] = self._search_counts(core, games[chunk], observations[chunk], masks[chunk],
                                                     actions[chunk])
            return actions
        K = self.samples
        for chunk in self._chunks(rows, masks, K):
            D = len(chunk)
            repeat = np.repeat(np.arange(D), K)
            truth = core.subset(games[chunk][repeat])
            # Search to the end of this hand, scored by equity, whatever the real core does.
            truth.mode, truth.reward_mode = "hand", "equity"
            seats = truth.current.astype(np.int64)
            game, action, values = action_values(truth, masks[chunk][repeat], seats, self._policy, self.rng)
            actions[chunk] = self._choose(repeat, game, action, values, actions[chunk], D)
        return actions

    @staticmethod
    def _checked_games(core, games, observations, masks) -> np.ndarray:
        """``games`` as int64, or a ``ValueError`` (before any draw): ``core`` a core, ``games`` one game of
        it per observation row, each observation showing the hand and phase of that game's player to act,
        each mask within his legal actions. (The whole observation is not compared: observing the core
        would cost a whole batch's observations at every call, the tournament's blocks calling it apart.)"""
        if not isinstance(core, SpoilFiveCore):
            raise ValueError(f"act_batch_state needs the engine's state as a spoilfive_env.SpoilFiveCore, "
                             f"got {type(core).__name__}")
        given = np.asarray(games)
        if given.shape != (len(observations),) or (given.dtype.kind not in "iu" and given.size):
            raise ValueError(f"act_batch_state needs games as integer game indices of the core, one per "
                             f"observation row (shape ({len(observations)},)), got {given.dtype} of shape "
                             f"{given.shape}")
        games = given.astype(np.int64)
        if games.size and (games.min() < 0 or games.max() >= core.batch_size):
            outside = games[(games < 0) | (games >= core.batch_size)]
            raise ValueError(f"act_batch_state needs games 0 to {core.batch_size - 1} (the core's games), "
                             f"got {int(outside[0])}")
        rows = np.arange(len(games))
        held = core.holder[games] == core.current[games][:, None]
        phase = observations[:, SLICES["phase"]].argmax(axis=1)
        other = ((observations[:, SLICES["hand"]] > 0.5) != held).any(axis=1) | (phase != core.phase[games])
        if other.any():
            row = int(np.flatnonzero(other)[0])
            raise ValueError(f"act_batch_state got games that do not match its observations: row {row} does not "
                             f"show the hand and phase of game {int(games[row])}'s player to act (seat "
                             f"{int(core.current[games[row]])})")
        _refuse_forbidden(rows, masks, core.legal_mask()[games], "act_batch_state")
        return games

    def _counts(self, relative_holders, suits, num_players):
        """``(B, features)``: the known count(s) in each relative seat's hand."""
        wanted = [TRUMP] if self.knows == "trumps" else range(TRUMP + 1)  # the four plain suits, then trumps
        in_hand = relative_holders[:, None, :] == np.arange(num_players)[None, :, None]  # (B, n, 52)
        counts = [(in_hand & (suits == suit)[:, None, :]).sum(axis=2) for suit in wanted]
        return np.stack(counts, axis=2).reshape(len(relative_holders), -1)

    def _search_counts(self, core, games, observations, masks, fallback):
        """``pimc``'s search on sampled deals whose hands hold the true counts."""
        rules = core.rules
        n, decisions, candidates = rules.num_players, len(games), self.samples * COUNT_CANDIDATES
        viewer = core.current[games].astype(np.int64)
        held = core.holder[games].astype(np.int64)
        suits = EFFECTIVE_SUIT[core.trump[games]]
        truth = self._counts(np.where(held >= 0, (held - viewer[:, None]) % n, -1), suits, n)
        repeat, info, holders, discards = draw_deals(observations, candidates, self.rng, rules)
        matches = (self._counts(holders.astype(np.int64), suits[repeat], n) == truth[repeat]).all(axis=1)
        matches = matches.reshape(decisions, candidates)
        self.decisions_searched += decisions
        self.decisions_fully_matched += int((matches.sum(axis=1) >= self.samples).sum())
        kept = np.empty((decisions, self.samples), np.int64)
        for decision in range(decisions):
            matching = np.flatnonzero(matches[decision])
            if not len(matching):
                matching = np.arange(candidates)  # no deal matched: search unconditioned ones
            kept[decision] = decision * candidates + matching[np.arange(self.samples) % len(matching)]
        worlds = self._worlds(info, holders, discards, rules, kept.ravel())
        return self._search_sampled(np.repeat(np.arange(decisions), self.samples), worlds, masks, fallback, decisions)
