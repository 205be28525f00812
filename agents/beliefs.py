"""How much the other players' plays tell about their hidden cards: a probe of the sampler.

The searches (``pimc``, ``pimc_ppo``, ``best``) sample the hidden hands uniformly among the
deals consistent with the searcher's observation (:func:`spoilfive_env.determinize.sample_hidden`).
The observation says who played which card but not in what order, so a search cannot weigh
a deal by how likely the others were to play as they did. This probe measures what such
weighing would be worth before anyone builds it.

At a table where every seat plays ``agents``, at each play decision of seat 0 it draws
``samples`` hidden deals from seat 0's observation and scores each by its **accuracy**: the
share of the others' hidden cards that it puts in the right hand. It compares the plain mean
over the samples (what the searches use) with the mean weighted by a model's likelihood of
the others' plays, each play's probability mixed with ``floor`` of a uniform choice among the
legal moves:

* ``trick``: the plays of the current trick only (what an observation shows in order);
* ``hand``: every play of this hand so far (the order of play, which the probe keeps and the
  observation does not).

The likelihood of a past play is computed in the game as it stood then: seat 0's observation
at that moment, with the sampled hidden hands of now walked back (the cards played since
returned to their players, a rob made since undone), so the model sees exactly the
observation that player would have had if the sample were true (:func:`play_log_likelihood`).

A decision where seat 0 sees no hidden card in the others' hands (he plays last to the fifth
trick) has nothing to place and is left out of the figures.

``python -m agents.beliefs --players 3 --agents pimc --model ppo --games 200`` prints the
accuracies and the gains with 95% intervals over decisions (``--json``: the dict).
"""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from spoilfive_env.actions import ROB_FIRST
from spoilfive_env.cli import (
    ArgumentParser,
    exit_interrupted,
    json_text,
    positive_float,
    positive_int,
    run_command,
    seed_value,
    table_size,
)
from spoilfive_env.core import PHASE_PLAY, SpoilFiveCore
from spoilfive_env.determinize import games_from_information, read_information, sample_hidden
from spoilfive_env.rules import Rules, is_integer

from . import load_agent
from .baselines import core_rule_actions
from .evaluate import Z95, refuse_bad_agents

RULE_MODELS = ("spoiler", "greedy")
"""Models that are rule-based agents (their choice has probability 1); anything else is a policy checkpoint."""
MAX_SAMPLED_ROWS = 1_000_000
"""The most sampled deals the probe holds at once (games x samples), a few hundred megabytes."""
UNLIKELY = -20.0
"""The least log-likelihood of a play: one the sampled hand makes illegal (the deal is all but ruled out)."""


class PlayModel:
    """The probability a model gives each player's actual play, on his own observation.

    ``name``: ``spoiler`` or ``greedy`` (rule-based: probability 1 on its own choice), or a
    policy checkpoint (a shipped name or a path: its softmax).
    """

    def __init__(self, name: str = "ppo", floor: float = 0.05):
        if not 0 <= floor <= 1:
            raise ValueError(f"floor={floor!r} is not allowed: it must be from 0 to 1")
        self.name, self.floor = name, float(floor)
        self._policy = None
        if name not in RULE_MODELS:
            from .policy import load_policy_agent  # torch, only for a network model

            try:
                self._policy = load_policy_agent(name)
            except (ValueError, OSError) as error:
                raise ValueError(f"model {name!r} is not allowed: choose {' or '.join(RULE_MODELS)}, or a "
                                 f"policy checkpoint (a shipped name or a path) ({error})") from None

    def log_likelihood(self, core, actions: np.ndarray) -> np.ndarray:
        """``(B,)`` log of ``(1 - floor) * p + floor / legal moves`` of ``actions`` by the players to
        act in ``core``, at least :data:`UNLIKELY` (an action illegal there, or impossible for a
        rule-based model with ``floor=0``)."""
        masks = core.legal_mask()
        rows = np.arange(len(actions))
        if self._policy is None:
            chosen = core_rule_actions(core, masks, self.name == "spoiler")
            p = (chosen == actions).astype(np.float64)
        else:
            p = np.exp(self._policy.log_probs(core.observe(), masks)[rows, actions].astype(np.float64))
        likelihood = np.where(masks[rows, actions], (1 - self.floor) * p + self.floor / masks.sum(axis=1), 0.0)
        return np.maximum(np.log(np.maximum(likelihood, 1e-300)), UNLIKELY)


def walked_back(now, holders, discards, then):
    """The hidden hands of ``now`` walked back to the earlier point ``then`` of the same hand
    (both :class:`~spoilfive_env.determinize.Information` of seat 0, row for row): every card
    played since goes back to its player, seat 0's hand is his hand then, and a rob made since
    is undone (the robber holds his discard again, the turn-up is on the table).

    Returns ``(holders, discards)`` for :func:`~spoilfive_env.determinize.games_from_information`
    with ``then``.
    """
    holders = holders.copy()
    since = (now.played_by > 0) & (then.played_by < 0)
    rows, cards = np.nonzero(since)
    holders[rows, cards] = now.played_by[rows, cards]
    holders[(holders == 0) & ~then.hand] = -1
    holders[then.hand] = 0
    discards = discards.copy()
    robbed_since = (now.robber >= 0) & (then.robber < 0)
    other = np.flatnonzero(robbed_since & (now.robber > 0))  # seat 0's own hand then is already in place
    holders[other, now.turnup[other]] = -1
    holders[other, discards[other]] = now.robber[other]
    discards[robbed_since] = -1
    return holders, discards


def play_log_likelihood(model: PlayModel, now, holders, discards, history, rules: Rules):
    """Log-likelihood ``(B,)`` of the others' plays in ``history`` under ``model``, in each row's
    sampled deal (``holders``, ``discards`` of the point ``now``), split as ``(this trick, the
    whole hand)``.

    ``history``: the steps of the hand so far, each ``(rows, then, actions, trick_number)``: the
    rows where another seat played a card then, seat 0's information at that moment (row for
    row) and the cards played.
    """
    whole = np.zeros(len(now.phase))
    trick = np.zeros(len(now.phase))
    for rows, then, actions, trick_number in history:
        if not len(rows):
            continue
        sub = now.take(rows)
        back, back_discards = walked_back(sub, holders[rows], discards[rows], then)
        games = games_from_information(then, back, back_discards, rules)
        log_p = model.log_likelihood(games, actions)
        whole[rows] += log_p
        trick[rows] += np.where(trick_number == now.trick_number[rows], log_p, 0.0)
    return trick, whole


def seat_zero_decisions(core, player, samples: int = 1):
    """Play ``core``'s hands to the end with ``player`` in every seat; at each play decision of
    seat 0 (before it is played) yield ``(games, now, history)``: the games where seat 0 is to
    play, his information there repeated ``samples`` times a game (row ``i`` is game
    ``games[i // samples]``), and the others' plays so far in those rows, as
    :func:`play_log_likelihood` takes them."""
    past = []  # per step: (games where another seat played a card, seat 0's information then, cards, trick)
    while not core.done.all():
        live = ~core.done
        masks, observations = core.legal_mask(), core.observe()
        decide = np.flatnonzero(live & (core.current == 0) & (core.phase == PHASE_PLAY))
        if len(decide):
            repeat = np.repeat(decide, samples)
            history = []
            for games_then, then, actions, trick_number in past:
                mine = np.isin(repeat, games_then)
                at = np.searchsorted(games_then, repeat[mine])
                history.append((np.flatnonzero(mine), then.take(at), actions[at], trick_number[at]))
            now = read_information(observations[decide]).take(np.repeat(np.arange(len(decide)), samples))
            yield decide, now, history
        actions = player.act_batch(observations, masks)
        played = np.flatnonzero(live & (core.current > 0) & (core.phase == PHASE_PLAY) & (actions < ROB_FIRST))
        if len(played):
            past.append((played, read_information(core.observe(0)[played]), actions[played].astype(np.int64),
                         core.trick_number[played].copy()))
        core.step(actions, where=live)


def belief_accuracy(num_players: int = 3, agents: str = "pimc", model: str = "ppo", games: int = 200,
                    samples: int = 64, floor: float = 0.05, seed: int = 0, progress: bool = False) -> dict:
    """The probe of the module docstring: ``games`` hands with ``agents`` in every seat."""
    if not (is_integer(games) and games >= 1 and is_integer(samples) and samples >= 1):
        raise ValueError(f"games={games!r} and samples={samples!r} must be positive integers")
    if games * samples > MAX_SAMPLED_ROWS:
        raise ValueError(f"games={games:,} x samples={samples:,} is too many: their product may be at most "
                         f"{MAX_SAMPLED_ROWS:,} (every game's sampled deals are held at once)")
    rules = Rules(num_players=num_players)
    player = load_agent(agents, seed=seed)
    player.bind(rules)
    play_model = PlayModel(model, floor)
    rng = np.random.default_rng(seed)
    core = SpoilFiveCore(games, rules=rules, seed=seed)
    gains = {"trick": [], "hand": []}
    uniform = []
    with tqdm(desc=f"{num_players} players: seat 0's turns", unit="turn", disable=not progress, leave=False) as bar:
        for decide, now, steps in seat_zero_decisions(core, player, samples):
            holders, discards = sample_hidden(now, rng, rules)
            log_w = play_log_likelihood(play_model, now, holders, discards, steps, rules)
            truth = core.holder[np.repeat(decide, samples)]  # seat 0 views: his relative seats are absolute
            hidden = truth > 0
            hidden_count = hidden.sum(axis=1)
            accuracy = ((holders == truth) & hidden).sum(axis=1) / np.maximum(hidden_count, 1)
            # Playing last to the fifth trick, seat 0 sees no hidden card in the others' hands: no belief to score.
            placed = hidden_count.reshape(len(decide), samples)[:, 0] > 0
            accuracy = accuracy.reshape(len(decide), samples)[placed]
            uniform += list(accuracy.mean(axis=1))
            for key, weights in zip(("trick", "hand"), log_w, strict=True):
                weights = weights.reshape(len(decide), samples)[placed]
                weights = np.exp(weights - weights.max(axis=1, keepdims=True))
                weighted = (weights * accuracy).sum(axis=1) / weights.sum(axis=1)
                gains[key] += list(weighted - accuracy.mean(axis=1))
            bar.update()
    result = {"players": num_players, "agents": agents, "model": model, "games": games, "samples": samples,
              "floor": floor, "seed": seed, "decisions": len(uniform), "uniform_accuracy": float(np.mean(uniform))}
    for key, values in gains.items():
        values = np.asarray(values)
        result[f"{key}_gain"] = float(values.mean())
        result[f"{key}_gain_ci95"] = float(Z95 * values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0
    return result


def main(argv=None) -> int:
    """The command line (a bad value: one line on standard error, exit status 2)."""
    parser = ArgumentParser(prog="python -m agents.beliefs",
                            description="How much the others' plays tell about their hidden cards: accuracy of "
                                        "the sampled hands, uniform and weighted by a model of the plays.")
    parser.add_argument("--players", type=table_size, default=3, help="table size, 2-10 (default 3)")
    parser.add_argument("--agents", default="pimc", help="the agent in every seat (default pimc)")
    parser.add_argument("--model", default="ppo", help="the model of the plays: spoiler, greedy or a policy "
                                                       "checkpoint (default ppo)")
    parser.add_argument("--games", type=positive_int, default=200, help="hands played (default 200)")
    parser.add_argument("--samples", type=positive_int, default=64, help="deals sampled a decision (default 64)")
    parser.add_argument("--floor", type=positive_float, default=0.05,
                        help="share of a uniform choice mixed into each play's probability, at most 1 (default 0.05)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the deals and samples (default 0)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.floor > 1:
        parser.error(f"--floor {args.floor:g} is not allowed: it must be above 0 and at most 1")
    refuse_bad_agents(parser, "--agents", [args.agents], observations_only=True)
    try:
        PlayModel(args.model)
    except (ValueError, ImportError) as error:
        parser.error(f"--model: {error}")
    except KeyboardInterrupt:  # a policy model imports torch: seconds
        exit_interrupted("Ctrl-C: probe stopped while loading --model, nothing was run")
    if args.games * args.samples > MAX_SAMPLED_ROWS:
        parser.error(f"--games {args.games} x --samples {args.samples} is too many: their product may be at "
                     f"most {MAX_SAMPLED_ROWS:,}")
    try:
        result = belief_accuracy(args.players, args.agents, args.model, args.games, args.samples, args.floor,
                                 args.seed, progress=True)
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: probe stopped, nothing reported")
    if args.json:
        print(json_text(result))
    else:
        print(f"{args.players} players, {args.agents} in every seat, model {args.model}: {result['decisions']:,} "
              f"decisions of seat 0, {args.samples} sampled deals each")
        print(f"  accuracy of the sampled hands (share of the others' hidden cards in the right hand): "
              f"{result['uniform_accuracy']:.4f} uniform")
        for key, what in (("trick", "the current trick's plays"), ("hand", "every play of the hand")):
            print(f"  weighted by {what}: {result[f'{key}_gain']:+.4f} ± {result[f'{key}_gain_ci95']:.4f}")
    return 0


if __name__ == "__main__":
    run_command(main)
