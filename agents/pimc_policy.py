"""``pimc_ppo``: determinised search whose rollouts the trained policy plays for the searcher.

The search of :class:`~agents.pimc.PIMCAgent` (sample ``samples`` deals consistent with the
seat's information, play every legal action out in each, keep the best mean equity), with
the searching seat's own moves in the rollouts played by a trained
:class:`~agents.policy.PolicyAgent` (on its own observation of the sampled deal,
``core.observe()``) and the other seats by a model of the opponents, ``spoiler`` by
default (``others``). All samples x actions of all decisions in a batch are one batch on
the core; each rollout step is one forward pass of the network over the simulated games
where the searcher is to act. Ties, and the decisions with one legal action, go to the
policy's own choice. With ``prior > 0`` each action's value also gains ``prior`` times the
policy's log-probability of it (the policy's opinion, where the samples disagree little).
With ``win_weight > 0`` a value in which the searcher wins the pool (a positive equity)
counts ``1 + win_weight`` times; with ``loss_weight > 0`` one in which another seat wins it
(negative) counts ``1 + loss_weight`` times; a spoiled hand (0) stays as it is. The equity
reward weighs one's own win against another's as pool share does near a fair share
((n - 1) : 1); ``win_weight`` tilts the search toward its own wins, ``loss_weight`` toward
stopping the others' (the knob of the cooperative-spoiling study: how much a player cares
that somebody else takes the pool).

Measured (docs/strength.md, "What was tried"): the policy playing the *other* seats too
(``others=policy``) was weaker against spoiler tables than the policy alone; ``spoiler`` as the
model of the others is what makes the search pay.

Options (``load_agent("pimc_ppo:samples=48:others=policy")``): ``samples`` (deals per
decision), ``policy`` (a shipped checkpoint name or a checkpoint path, default ``ppo``),
``others`` (``spoiler``, ``greedy``, ``policy``, or a policy checkpoint, a shipped name or a
path, whose network plays the other seats), ``prior``, ``exact_tricks`` (with at
most this many tricks left, each action's value in a sampled deal is its max-n value over
the whole game tree, every player playing perfectly for himself on that deal, instead of a
rollout; 0: never), ``search_from_trick`` (decisions of earlier tricks are the policy's
alone; 1: search every trick), ``win_weight`` (extra weight of the searcher's own wins in
the rollout and ``exact_tricks`` values, 0 to a million; 0: plain equity), ``loss_weight`` (the
same for the others' wins), ``jink_confidence`` (jink only when the jink succeeds in at
least this share of the sampled deals, else claim: a pool in hand counts for more in the pool
share than the jink's bonus; 0: by value alone), ``inner_samples`` (recursive search: in each
rollout the searcher's next turn is itself a search of this many deals, drawn again from its own
observation of the sampled deal, its later turns the policy's; 0: the policy's throughout),
``belief`` (``none``, or a trump-count belief, a shipped name such as ``trump_counts`` or a path:
the deals are drawn ``belief_draws`` times over and resampled by the belief's probability of each
hidden hand's trump count, :mod:`agents.trump_belief`; at a table it was not trained for, the
deals are drawn as without it), ``belief_draws`` (default 8), ``max_rows`` (rollout games per
core batch).

torch is needed (the policy); :func:`agents.load_agent` imports this module only when such
an agent is asked for. ``python -m agents.pimc_policy [PLAYERS] [--agents A,B,...] [--json]`` prints the
milliseconds a decision of each agent (default ``best``, ``pimc_ppo`` and ``pimc``) takes, one at a
time on one thread, as a table (JSON with ``--json``).
"""

from __future__ import annotations

import numpy as np

from spoilfive_env.actions import CLAIM, JINK
from spoilfive_env.cli import aligned_rows, exit_interrupted, json_text, run_command
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.observation import SLICES
from spoilfive_env.rules import Rules, is_integer

from .baselines import core_rule_actions
from .pimc import MAX_SAMPLES, PIMCAgent, action_values, draw_deals, exact_action_values

try:  # torch takes seconds to load: run as a command, Ctrl-C then is one line and exit 130, as later on
    from .policy import PolicyAgent, load_policy_agent, torch_generator_kept_on_error
    from .trump_belief import TrumpCountBelief, load_belief, trump_counts
except KeyboardInterrupt:
    if __name__ != "__main__":  # imported (load_agent, a program of its own): the Ctrl-C is the importer's
        raise
    exit_interrupted("Ctrl-C: timing stopped while starting up, nothing was run")

DEFAULT_SAMPLES = 32
"""Deals per decision of ``pimc_ppo``. ``best`` takes 96 (docs/strength.md, "How it was chosen": a
little stronger against pimc tables at every size on seeds 0-2, about twice the time); 256 was no
stronger than 96."""
MAX_EXACT_TRICKS = 3
"""The most tricks left at which ``exact_tricks`` may replace the rollouts by the full game tree
(three tricks at five players is already hundreds of thousands of lines a decision)."""
TRICKS = 5
"""Tricks in a hand: the searcher's cards in hand tell the trick (five in the first)."""
OTHERS = ("policy", "spoiler", "greedy")
"""Who plays the other seats of the rollouts: the policy itself, or a rule-based model."""
MAX_BELIEF_DRAWS = 64
"""The most deals drawn a kept deal with ``belief`` (64 x 96 deals a decision is already 6,144)."""


def _checked_number(name: str, value, allowed: str, high: float = np.inf) -> float:
    """A numeric option checked: a real number (not a bool), finite, from 0 to ``high``."""
    number = np.nan
    if not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float
            pass
    if not (0 <= number <= high and np.isfinite(number)):
        raise ValueError(f"{name}={value!r} is not allowed: it must be {allowed}")
    return number


MAX_WEIGHT = 1_000_000
"""The largest ``prior``, ``win_weight`` and ``loss_weight``. At a million that term already decides
alone (the values of a hand's actions differ by fractions of a chip); a far larger weight would carry
the search's sums past the largest float, leaving no action to choose."""


def _weight(name: str, value) -> float:
    """A checked ``prior``, ``win_weight`` or ``loss_weight``: a number from 0 to :data:`MAX_WEIGHT`."""
    return _checked_number(name, value, f"a finite number from 0 to {MAX_WEIGHT:,}", high=MAX_WEIGHT)


class PolicyPIMCAgent(PIMCAgent):
    """Determinised search with a trained policy playing the rollouts (module docstring).

    Args:
        seed: seed of the sampling of hidden hands.
        samples: deals sampled per decision.
        policy: a :class:`~agents.policy.PolicyAgent`, a shipped checkpoint name or a path.
        others: the model of the other seats in the rollouts: ``spoiler``, ``greedy``,
            ``policy`` (the policy plays them too), or a policy checkpoint (a shipped name, a
            path or a :class:`~agents.policy.PolicyAgent`) that plays them.
        prior: weight of the policy's log-probability added to each action's value.
        exact_tricks: tricks left at which the max-n search of the sampled deal replaces the
            rollouts (0 to :data:`MAX_EXACT_TRICKS`).
        search_from_trick: the first trick whose decisions are searched (1 to :data:`TRICKS`).
        win_weight: a sampled value where the searcher wins (positive) counts
            ``1 + win_weight`` times; 0 (default) keeps the plain equity.
        loss_weight: a sampled value where another seat wins (negative) counts
            ``1 + loss_weight`` times; 0 (default) keeps the plain equity.
        jink_confidence: the least share of the sampled deals in which a jink must succeed for
            the search to jink (0 to 1; 0, the default: the best mean value decides).
        inner_samples: deals of the search that plays the searcher's next turn in every
            rollout (recursive determinised search, "IIMC" in Furtak and Buro, 2013); 0 (default):
            the policy plays it.
        belief: ``None`` or ``"none"`` (deals drawn uniformly among those the observation allows), or a
            :class:`~agents.trump_belief.TrumpCountBelief`, a shipped belief's name or a path: the
            deals resampled by each hidden hand's believed trump count (the searcher's own search
            only; an inner search draws uniformly).
        belief_draws: with ``belief``, deals drawn for each one kept (1 to :data:`MAX_BELIEF_DRAWS`).
        max_rows: rollout games per core batch (bounds memory).
        rules: the table's rules (a tournament tells the agent through ``bind``).
    """

    name = "pimc_ppo"

    def __init__(self, seed: int | None = None, samples: int = DEFAULT_SAMPLES, policy="ppo",
                 others: str = "spoiler", prior: float = 0.0, exact_tricks: int = 0,
                 search_from_trick: int = 1, win_weight: float = 0.0, loss_weight: float = 0.0,
                 jink_confidence: float = 0.0, inner_samples: int = 0, belief=None, belief_draws: int = 8,
                 max_rows: int = 32768, rules=None):
        super().__init__(seed, samples=samples, rollout="spoiler", max_rows=max_rows, rules=rules)
        if not is_integer(belief_draws) or not 1 <= belief_draws <= MAX_BELIEF_DRAWS:
            raise ValueError(f"belief_draws={belief_draws!r} is not allowed: it must be a whole number from 1 to "
                             f"{MAX_BELIEF_DRAWS} (deals drawn for each one the search keeps)")
        self.belief_draws = int(belief_draws)
        # The numbers first: refused before any file is read (building a network draws from torch's generator).
        self.prior = _weight("prior", prior)
        if isinstance(exact_tricks, bool) or not isinstance(exact_tricks, (int, np.integer)) \
                or not 0 <= exact_tricks <= MAX_EXACT_TRICKS:
            raise ValueError(f"exact_tricks={exact_tricks!r} is not allowed: it must be an integer "
                             f"from 0 to {MAX_EXACT_TRICKS}")
        self.exact_tricks = int(exact_tricks)
        if isinstance(search_from_trick, bool) or not isinstance(search_from_trick, (int, np.integer)) \
                or not 1 <= search_from_trick <= TRICKS:
            raise ValueError(f"search_from_trick={search_from_trick!r} is not allowed: it must be an "
                             f"integer from 1 to {TRICKS}")
        self.search_from_trick = int(search_from_trick)
        self.win_weight = _weight("win_weight", win_weight)
        self.loss_weight = _weight("loss_weight", loss_weight)
        self.jink_confidence = _checked_number(
            "jink_confidence", jink_confidence,
            "a number from 0 to 1 (the least share of sampled deals in which a jink must succeed)", high=1)
        if not is_integer(inner_samples) or not 0 <= inner_samples <= MAX_SAMPLES:
            raise ValueError(f"inner_samples={inner_samples!r} is not allowed: it must be a whole number from 0 "
                             f"(the policy plays the searcher's later turns) to {MAX_SAMPLES:,}")
        self.inner_samples = int(inner_samples)
        with torch_generator_kept_on_error():  # a refusal after one file was loaded changes nothing
            if belief is None or belief == "none":
                self.belief = None
            elif isinstance(belief, TrumpCountBelief):
                self.belief = belief
            elif isinstance(belief, str):
                try:
                    self.belief = load_belief(belief)
                except ValueError as error:
                    raise ValueError(f"belief={belief!r} is not allowed: {error}") from None
            else:
                raise ValueError(f"belief={belief!r} is not allowed: give none, a shipped belief's name or a path")
            self.policy = policy if isinstance(policy, PolicyAgent) else load_policy_agent(policy)
            self.others = others
            self._others_net = None  # a network that plays the other seats
            if isinstance(others, PolicyAgent):
                self._others_net, self.others = others, others.name
            elif others not in OTHERS:
                try:
                    self._others_net = load_policy_agent(others)
                except (ValueError, OSError) as error:
                    raise ValueError(f"others={others!r} is not allowed: choose one of {', '.join(OTHERS)}, "
                                     "or a policy checkpoint (a shipped name or a path) that plays them "
                                     f"({error})") from None
        self.rollout = self.policy.name if others == "policy" else f"{self.policy.name}+{self.others}"
        self._policy = self._policy_actions
        self._inner = None  # the search of the searcher's next turn in the rollouts
        if self.inner_samples:
            inner_others = self.others if self._others_net is None else self._others_net
            self._inner = PolicyPIMCAgent(samples=self.inner_samples, policy=self.policy, others=inner_others,
                                          win_weight=self.win_weight, loss_weight=self.loss_weight,
                                          max_rows=max_rows, rules=rules)
        self._next_turn_cards = None  # while searching: the searcher's cards in hand at its next turn

    def bind(self, rules) -> None:
        super().bind(rules)
        if self._inner is not None:
            self._inner.bind(rules)

    def _policy_actions(self, core, masks, rng) -> np.ndarray:
        """Every simulated player's move: the policy on his own observation of the sampled deal
        (with ``others`` a rule-based agent, only the searching seat 0 uses the policy); with
        ``inner_samples``, the searcher's next turn searched instead (the policy not asked there)."""
        inner = self._next_turn(core, masks)
        actions = self._model_actions(core, masks, inner)
        rows = np.flatnonzero(inner)
        if len(rows):
            actions[rows] = self._inner.act_batch(core.observe(games=rows), masks[rows])
        return actions

    def _next_turn(self, core, masks) -> np.ndarray:
        """``(B,)`` bool: the games where the searcher (seat 0) is at its next turn with a choice,
        the moves the inner search makes from its own observation of the simulated deal (none
        without ``inner_samples``)."""
        if self._next_turn_cards is None:
            return np.zeros(core.batch_size, bool)
        low, high = self._next_turn_cards
        cards = (core.holder == 0).sum(axis=1)
        return (core.current == 0) & (cards >= low) & (cards <= high) & (masks.sum(axis=1) > 1)

    def _model_actions(self, core, masks, inner) -> np.ndarray:
        """The moves of the rollouts' models: the policy for the searcher, ``others`` for the rest;
        the games marked ``inner`` are left to the inner search (what stands there is replaced)."""
        if self.others == "policy":
            actions = masks.argmax(axis=1)  # the forced moves, which a greedy policy is not asked
            rows = self._policy_rows(~inner, masks)
            if len(rows):
                actions[rows] = self.policy.act_batch(core.observe(games=rows), masks[rows])
            return actions
        others = core.current != 0
        mine = ~others & ~inner
        if self._others_net is None:
            actions = core_rule_actions(core, masks, self.others == "spoiler")  # a forced move too
            rows = self._policy_rows(mine, masks)
            if len(rows):  # observe only the searcher's games: a fraction of the batch, one per seat
                actions[rows] = self.policy.act_batch(core.observe(games=rows), masks[rows])
            return actions
        observations = core.observe()
        actions = np.zeros(len(masks), np.int64)
        if others.any():
            actions[others] = self._others_net.act_batch(observations[others], masks[others])
        if mine.any():
            actions[mine] = self.policy.act_batch(observations[mine], masks[mine])
        return actions

    def _policy_rows(self, playing, masks) -> np.ndarray:
        """The games marked ``playing`` whose move the policy decides (not a greedy policy's forced ones)."""
        rows = np.flatnonzero(playing)
        return rows[self.policy.choice_rows(masks[rows])]

    def _search_rows(self, observations, masks):
        """As pimc's, less the decisions before trick ``search_from_trick`` (the policy's alone;
        the robbing decision counts as the first trick)."""
        rows = super()._search_rows(observations, masks)
        cards = np.minimum(observations[rows][:, SLICES["hand"]].sum(axis=1), TRICKS)
        return rows[TRICKS + 1 - cards >= self.search_from_trick]

    def _fallback(self, observations, masks):
        return self.policy.act_batch(observations, masks)

    def _sample_worlds(self, observations, rules):
        """pimc's deals, or with ``belief`` (at a table it covers) ``belief_draws`` times as many,
        resampled by the belief's probability of each hidden hand's trump count."""
        if self.belief is None or not self.belief.covers(rules):
            return super()._sample_worlds(observations, rules)
        D, drawn = len(observations), self.samples * self.belief_draws
        _, info, holders, discards = draw_deals(observations, drawn, self.rng, rules)
        counts = trump_counts(holders, info.trump, rules.num_players).reshape(D, drawn, -1)
        kept = self.belief.resample(observations, counts, self.samples, self.rng) + np.arange(D)[:, None] * drawn
        return np.repeat(np.arange(D), self.samples), self._worlds(info, holders, discards, rules, kept.ravel())

    def _search(self, observations, masks, fallback, rules):
        if self._inner is None:
            return self._search_decisions(observations, masks, fallback, rules)
        # Recursive: decisions grouped by the searcher's cards in hand, so that its next turn in
        # the rollouts is known by the cards it then holds (one fewer after a card played, one
        # more while robbing the turn-up, as many before a jink's lead).
        self._inner.rules, self._inner.rng = rules, self.rng
        cards = np.rint(observations[:, SLICES["hand"]].sum(axis=1)).astype(np.int64)
        chosen = np.empty(len(observations), np.int64)
        try:
            for held in np.unique(cards):
                rows = np.flatnonzero(cards == held)
                self._next_turn_cards = (held - 1, held + 1)
                chosen[rows] = self._search_decisions(observations[rows], masks[rows], fallback[rows], rules)
        finally:
            self._next_turn_cards = None
        return chosen

    def _search_decisions(self, observations, masks, fallback, rules):
        D = len(observations)
        repeat, games = self._sample_worlds(observations, rules)
        exact = observations[:, SLICES["hand"]].sum(axis=1)[repeat] <= self.exact_tricks
        searched = [np.flatnonzero(~exact), np.flatnonzero(exact)]
        parts = []
        for rows, solve in zip(searched, (self._rollout_values, exact_action_values), strict=True):
            if len(rows):
                game, action, values = solve(games.subset(rows), masks[repeat][rows])
                parts.append((rows[game], action, values))
        game, action, values = (np.concatenate(arrays) for arrays in zip(*parts, strict=True))
        if self.jink_confidence:  # each sampled jink, and whether it succeeded (a failed one spoils: 0)
            jinks = np.flatnonzero(action == JINK)
            jink_decisions, jink_succeeded = repeat[game[jinks]], values[jinks] > 0
        values = self._tilted(values)
        if self.prior:  # each sample's value, plus prior * log pi(action): the policy's opinion
            values = values + self.prior * self._log_probs(observations, masks)[repeat[game], action]
        chosen = self._choose(repeat, game, action, values, fallback, D)
        if self.jink_confidence:
            self._claim_doubtful_jinks(chosen, jink_decisions, jink_succeeded)
        return chosen

    def _claim_doubtful_jinks(self, chosen, decision_of_jink, succeeded):
        """Claim instead where a chosen jink succeeded in fewer than ``jink_confidence`` of its
        samples (``decision_of_jink``, ``succeeded``: one entry per sampled jink); in place."""
        tried = np.bincount(decision_of_jink, minlength=len(chosen))
        won = np.bincount(decision_of_jink, weights=succeeded, minlength=len(chosen))
        chosen[(chosen == JINK) & (won < self.jink_confidence * tried)] = CLAIM

    def _tilted(self, values: np.ndarray) -> np.ndarray:
        """The search's objective: the searcher's own wins (positive equity) count
        ``1 + win_weight`` times, the others' (negative) ``1 + loss_weight`` times, spoils (0) nothing."""
        if not (self.win_weight or self.loss_weight):
            return values
        return values * np.where(values > 0, 1 + self.win_weight, 1 + self.loss_weight)

    def _rollout_values(self, games, masks):
        return action_values(games, masks, np.zeros(games.batch_size, np.int64), self._policy, self.rng)

    def _log_probs(self, observations, masks) -> np.ndarray:
        """The policy's log-probabilities ``(D, 107)`` (illegal actions: a large negative number)."""
        return self.policy.log_probs(observations, masks)


class NoDecisionsMet(ValueError):
    """:func:`decision_times` met no decision to time in its games."""


def decision_times(specs=("best", "pimc_ppo", "pimc"), num_players: int = 4, decisions: int = 50,
                   seed: int = 0) -> dict:
    """Milliseconds per decision of each agent, one decision at a time on one thread.

    Counted in CPU time of this process (``time.process_time``: one thread, so one core's
    time), which a busy shared machine does not inflate; wall-clock time is also given.

    The decisions are the searched ones (more than one legal action) met while ``spoiler``
    players play hands of the default rules; every agent decides the same ones.
    """
    import time

    import torch

    from . import load_agent

    torch.set_num_threads(1)
    rules = Rules(num_players=num_players)
    core = SpoilFiveCore(decisions, rules=rules, seed=seed)
    states = []
    rng = np.random.default_rng(seed)
    stop_after = rng.integers(0, 3 * num_players, size=decisions)  # a spread of points in the hand
    steps = 0
    while not core.done.all() and len(states) < decisions:
        masks, observations = core.legal_mask(), core.observe()
        pick = np.flatnonzero(~core.done & (stop_after == steps) & (masks.sum(axis=1) > 1))
        states += [(observations[g], masks[g]) for g in pick]
        core.step(core_rule_actions(core, masks, True), where=~core.done)
        steps += 1
    if not states:  # a time of nothing would read as 0 ms a decision
        raise NoDecisionsMet(f"no searched decision (one with more than one legal action) was met in {decisions} "
                         f"game{'s' if decisions != 1 else ''} at {num_players} players: give more decisions")
    cpu, wall = {}, {}
    for spec in specs:
        agent = load_agent(spec, seed=seed)
        agent.bind(rules)
        started, started_wall = time.process_time(), time.perf_counter()
        for observation, mask in states:
            agent.act_batch(observation[None], mask[None])
        cpu[spec] = 1000 * (time.process_time() - started) / len(states)
        wall[spec] = 1000 * (time.perf_counter() - started_wall) / len(states)
    return {"players": num_players, "decisions": len(states), "cpu_ms_per_decision": cpu,
            "wall_ms_per_decision": wall}


MAX_TIMED = 10_000
"""The most decisions ``python -m agents.pimc_policy`` times (each agent decides them one at a time)."""


def format_times(times: dict) -> str:
    """The human table that ``python -m agents.pimc_policy`` prints: each agent's milliseconds a decision."""
    lines = [f"Milliseconds a decision, one at a time on one thread: {times['decisions']} searched decisions at "
             f"{times['players']} players", ""]
    header = ("agent", "CPU ms", "wall ms")
    rows = [(spec, f"{cpu:.1f}", f"{times['wall_ms_per_decision'][spec]:.1f}")
            for spec, cpu in times["cpu_ms_per_decision"].items()]
    return "\n".join(lines + aligned_rows(header, rows))


def main(argv=None) -> int:
    """``python -m agents.pimc_policy [PLAYERS] [--decisions K] [--agents A,B,...] [--json]``: :func:`decision_times`
    as a table (:func:`format_times`), or as JSON."""
    from spoilfive_env.cli import ArgumentParser, comma_items, positive_int, table_size

    from .evaluate import refuse_bad_agents

    parser = ArgumentParser(prog="python -m agents.pimc_policy",
                            description="Milliseconds a decision of each agent takes (default best, pimc_ppo and "
                                        "pimc), one at a time on one thread, on the same decisions.")
    parser.add_argument("players", nargs="?", type=table_size, default=4, help="table size, 2-10 (default 4)")
    parser.add_argument("--decisions", type=positive_int, default=50,
                        help=f"decisions to time, at most one from each of this many games, 1 to {MAX_TIMED:,} "
                             "(default 50)")
    parser.add_argument("--agents", default="best,pimc_ppo,pimc",
                        help="comma-separated agents to time: names, name:key=value specs or checkpoint paths "
                             "(default best,pimc_ppo,pimc)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    args = parser.parse_args(argv)
    if args.decisions > MAX_TIMED:  # one at a time: 10,000 decisions of three agents are already many minutes
        parser.error(f"--decisions {args.decisions} is not allowed: give at most {MAX_TIMED:,}")
    try:
        specs = comma_items(args.agents)  # a blank item is refused, as agents.evaluate does
    except ValueError as error:
        parser.error(f"--agents {error}")
    if not specs:
        parser.error(f"--agents {args.agents!r}: give at least one agent")
    repeated = sorted({spec for spec in specs if specs.count(spec) > 1})
    if repeated:  # as agents.leaderboard: a typo, most likely, not an agent to time once without a word
        parser.error(f"--agents {args.agents!r} is not allowed: give each agent once ({', '.join(repeated)} "
                     "more than once)")
    refuse_bad_agents(parser, "--agents", specs, observations_only=True)
    try:
        times = decision_times(specs=specs, num_players=args.players, decisions=args.decisions)
    except NoDecisionsMet as error:  # said before any agent is timed
        parser.error(f"--decisions {args.decisions}: {error}")
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: timing stopped, nothing reported")
    print(json_text(times) if args.json else format_times(times))
    return 0


if __name__ == "__main__":
    run_command(main)
