"""Self-play rollouts for ``train.py``: the one rollout that runs in-process and in Ray workers.

:class:`SelfPlayRollout` holds a share of the training games (one
:class:`~spoilfive_env.core.SpoilFiveCore` per table size, :class:`Tables`), the league's
opponents (a frozen snapshot network and the baselines) and a copy of the current policy.
:meth:`SelfPlayRollout.collect` plays every game's hands and returns the current policy's
decisions as a :class:`RolloutBatch` of NumPy arrays, each row linked to the same seat's next
decision (``next_row``) or carrying the hand's equity (``reward``), ready for GAE.

``train.py`` makes one rollout holding every game (``--ray`` not given), or
:mod:`spoilfive_integrations.ray_training` makes one per Ray actor, each holding its share
(``worker`` of ``workers``, :func:`split_games`); the driver concatenates the batches
(:func:`merge_batches`). A rollout is a pure function of the weights, the snapshot,
``(seed, iteration)`` and ``(worker, workers)``: the league draws, the deals, the baselines'
and the policy's sampling are all seeded from them at the start of each :meth:`collect`, so a
rollout lost with a worker can be redone exactly, and one worker gives the in-process run.

Decisions with a single legal action are played without the network and are not rows; a
seat decides at most :data:`~spoilfive_env.cards.MAX_DECISIONS_PER_HAND` times in a hand.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import torch

from agents import load_agent
from agents.policy import (
    CRITICS,
    ENCODINGS,
    MAX_HIDDEN_LAYERS,
    MAX_HIDDEN_WIDTH,
    PolicyNet,
    checked_device,
    within_layer_limits,
)
from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.cards import MAX_DECISIONS_PER_HAND, MAX_PLAYERS, MIN_PLAYERS, NUM_CARDS
from spoilfive_env.core import PHASE_DONE, SpoilFiveCore, physical_memory
from spoilfive_env.observation import OBS_DIM
from spoilfive_env.rules import Rules, is_integer

TABLE_KINDS = ("self", "snapshot", "spoiler", "greedy", "random", "opponent")
"""The league's table kinds (``--league`` weights are over these). ``opponent``: the agent
``train.py --opponent`` names (any agent spec: a checkpoint of a strong player, a search)."""
CURRENT, SNAPSHOT, SPOILER, GREEDY, RANDOM, OPPONENT = range(6)  # what plays a seat (= the table kind's index)
BASELINES = {SPOILER: "spoiler", GREEDY: "greedy", RANDOM: "random"}
WORKER_SALT = 0x3A7  # seeds of worker w of several: [seed, iteration, WORKER_SALT, w]


def games_per_size(num_games: int, num_sizes: int) -> int:
    """Games at each of ``num_sizes`` table sizes: ``num_games`` split evenly (at least one)."""
    return max(1, num_games // num_sizes)


def split_games(num_games: int, sizes: list[int], workers: int) -> list[list[int]]:
    """Games per table size of each worker: :func:`games_per_size`, each size's games split
    over the workers (the first ones take the remainder)."""
    return [[worker_games(num_games, sizes, w, workers)] * len(sizes) for w in range(workers)]


def worker_games(num_games: int, sizes: list[int], worker: int, workers: int) -> int:
    """Games at each table size of worker ``worker`` (its row of :func:`split_games`)."""
    per_size = games_per_size(num_games, len(sizes))
    return per_size // workers + (worker < per_size % workers)


def rollout_seed(seed: int, iteration: int, worker: int, workers: int) -> list[int]:
    """Seed words of one worker's rollout (one worker: those of the in-process run)."""
    return [int(seed), int(iteration)] + ([WORKER_SALT, int(worker)] if workers > 1 else [])


class Tables:
    """One core per table size, the league's seat assignment, and each seat's open trajectory."""

    def __init__(self, games_per_size: list[int], sizes: list[int], league: np.ndarray,
                 current_seats: float, hands_per_game: int):
        self.cores = [SpoilFiveCore(games, rules=Rules(num_players=n), mode="hand", reward="equity", deal=False)
                      for games, n in zip(games_per_size, sizes)]
        self.league = league
        self.current_seats = current_seats
        self.hands_per_game = hands_per_game
        self.rng = np.random.default_rng()
        self.seat_kind = [np.zeros((c.batch_size, c.num_players), np.int8) for c in self.cores]
        self.table_kind = [np.zeros(c.batch_size, np.int8) for c in self.cores]
        self.last_row = [np.full((c.batch_size, c.num_players), -1, np.int64) for c in self.cores]
        self.hands_left = [np.zeros(c.batch_size, np.int64) for c in self.cores]

    def start_rollout(self, seed_words: list[int]) -> None:
        self.rng = np.random.default_rng(seed_words)
        for i, core in enumerate(self.cores):
            core.rng = np.random.default_rng(seed_words + [i])
            self.hands_left[i][:] = self.hands_per_game
            self.last_row[i][:] = -1
            self.deal(i, np.arange(core.batch_size))

    def deal(self, i: int, games: np.ndarray) -> None:
        """New hands in ``games`` of core ``i``, with a fresh draw of the league."""
        core, k, n = self.cores[i], len(games), self.cores[i].num_players
        core.reset(games)
        self.hands_left[i][games] -= 1
        kind = self.rng.choice(len(TABLE_KINDS), size=k, p=self.league).astype(np.int8)
        current = self.rng.random((k, n)) < self.current_seats
        current[np.arange(k), self.rng.integers(0, n, size=k)] = True  # at least one trained seat
        seats = np.where(current, CURRENT, kind[:, None]).astype(np.int8)
        seats[kind == CURRENT] = CURRENT  # "self" tables: every seat
        self.seat_kind[i][games] = seats
        self.table_kind[i][games] = kind


@dataclass
class RolloutBatch:
    """The current policy's decisions of one rollout, one row each, in the order they were made.

    ``next_row[i]``: the same seat's next decision in the same hand (a later row), or -1 after
    its last one, which has ``assigned[i]`` and the hand's equity in ``reward[i]``.
    ``step_offsets`` cut the rows into rollout steps (GAE sweeps them backwards).
    """

    obs: np.ndarray  # (N, OBS_DIM) float32, or int16 holding bf16 bits (half the bytes to ship; see obs_tensor)
    mask: np.ndarray  # (N, NUM_ACTIONS) bool
    holder: np.ndarray | None  # (N, NUM_CARDS) int8, relative holder seat (omniscient critic only)
    action: np.ndarray  # (N,) int64
    logp: np.ndarray  # (N,) float32, log-probability of the action when it was sampled
    next_row: np.ndarray  # (N,) int64
    reward: np.ndarray  # (N,) float32
    assigned: np.ndarray  # (N,) bool
    step_offsets: np.ndarray  # (S + 1,) int64, from 0 to N
    decisions: int  # every decision at the tables, forced ones and other seats' included
    stats: dict = field(default_factory=dict)  # sums over the finished hands (see SelfPlayRollout)
    timers: dict = field(default_factory=dict)  # seconds in env / policy / opponents

    def __len__(self) -> int:
        return len(self.action)

    def obs_tensor(self, device) -> torch.Tensor:
        """The observations as a torch tensor on ``device`` (bf16 if they were kept in bf16)."""
        obs = torch.from_numpy(self.obs)
        return (obs.view(torch.bfloat16) if obs.dtype == torch.int16 else obs).to(device)


def merge_batches(batches: list[RolloutBatch]) -> RolloutBatch:
    """The batches of several workers as one (rows renumbered; no trajectory crosses batches).
    The arrays are new (writable) ones even for one batch: Ray hands out read-only views."""
    starts = np.cumsum([0] + [len(b) for b in batches])
    next_row = np.concatenate([np.where(b.next_row >= 0, b.next_row + s, -1) for b, s in zip(batches, starts)])
    offsets = np.concatenate([[0]] + [b.step_offsets[1:] + s for b, s in zip(batches, starts)])
    stats, timers = defaultdict(float), defaultdict(float)
    for b in batches:
        for key, value in b.stats.items():
            stats[key] += value
        for key, value in b.timers.items():
            timers[key] += value
    holder = None if batches[0].holder is None else np.concatenate([b.holder for b in batches])
    return RolloutBatch(
        obs=np.concatenate([b.obs for b in batches]), mask=np.concatenate([b.mask for b in batches]),
        holder=holder, action=np.concatenate([b.action for b in batches]),
        logp=np.concatenate([b.logp for b in batches]), next_row=next_row,
        reward=np.concatenate([b.reward for b in batches]), assigned=np.concatenate([b.assigned for b in batches]),
        step_offsets=offsets.astype(np.int64), decisions=sum(b.decisions for b in batches),
        stats=dict(stats), timers=dict(timers))


def hidden_widths(hidden) -> tuple[int, ...]:
    """The layer widths the ``hidden`` setting names (``"256,256"``; an int is one layer)."""
    return tuple(int(h) for h in str(hidden).split(",") if h.strip())


def policy_net(settings: dict) -> PolicyNet:
    """A new network of the shape ``train.py``'s ``hidden``, ``critic`` and ``encoding`` settings give, reading
    its sparse inputs as such on the CPU in float32 (``PolicyNet.use_sparse_inputs``: a third more decisions a
    second in training)."""
    return PolicyNet(hidden=hidden_widths(settings["hidden"]), critic=settings["critic"],
                     encoding=settings["encoding"]).use_sparse_inputs()


ROLLOUT_SETTINGS = ("seed", "min_players", "max_players", "num_games", "hands_per_game", "current_seats", "hidden",
                    "critic", "encoding")
"""The settings a rollout needs (``opponent`` too, where its league draws opponent tables)."""
LEAGUE_SUM_TOLERANCE = math.sqrt(np.finfo(np.float64).eps)  # how far from 1 numpy's choice lets probabilities sum


def check_rollout(settings, league_weights, worker=0, workers=1) -> None:
    """Refuse what :class:`SelfPlayRollout` cannot play (``ValueError`` naming the value and what is allowed):
    checked before any network is built, so a refusal draws from no generator.

    Also for a driver to ask before it starts workers (``worker`` ``workers - 1``, the last, holds the fewest
    games). An ``opponent`` spec is loaded to be checked, with torch's generator put back after.
    """
    if not isinstance(settings, Mapping):
        raise ValueError(f"settings must be a dict of train.py's settings (dataclasses.asdict(args)), got "
                         f"{type(settings).__name__}")
    if not (is_integer(workers) and workers >= 1):
        raise ValueError(f"workers={workers!r} is not allowed: give a whole number of at least 1")
    if not (is_integer(worker) and 0 <= worker < workers):
        raise ValueError(f"worker={worker!r} is not allowed: give one of the {workers} worker(s), 0 to {workers - 1}")
    missing = [key for key in ROLLOUT_SETTINGS if key not in settings]
    if missing:
        raise ValueError(f"settings lacks {', '.join(map(repr, missing))}: a rollout reads "
                         f"{', '.join(ROLLOUT_SETTINGS)} and opponent (train.py's settings, dataclasses.asdict(args))")

    def refuse(key: str, allowed: str):
        raise ValueError(f"settings[{key!r}]={settings[key]!r} is not allowed: {allowed}")

    if not (is_integer(settings["seed"]) and settings["seed"] >= 0):
        refuse("seed", "give a whole number 0 or more")
    for key in ("min_players", "max_players"):
        if not (is_integer(settings[key]) and MIN_PLAYERS <= settings[key] <= MAX_PLAYERS):
            refuse(key, f"give a table size, a whole number from {MIN_PLAYERS} to {MAX_PLAYERS}")
    low, high = settings["min_players"], settings["max_players"]
    if low > high:
        raise ValueError(f"settings['min_players']={low} is above settings['max_players']={high}: give a "
                         "min_players of at most max_players")
    sizes = list(range(low, high + 1))
    if not (is_integer(settings["num_games"]) and settings["num_games"] >= len(sizes)):
        refuse("num_games", f"give a whole number of at least {len(sizes)}, one game per table size {low}-{high}")
    if not (is_integer(settings["hands_per_game"]) and settings["hands_per_game"] >= 1):
        refuse("hands_per_game", "give a whole number of at least 1")
    seats = settings["current_seats"]
    if not (isinstance(seats, (int, float, np.integer, np.floating)) and not isinstance(seats, (bool, np.bool_))
            and 0 <= seats <= 1):
        refuse("current_seats", "give a chance, a number from 0 to 1")
    try:
        widths = hidden_widths(settings["hidden"])
    except ValueError:
        widths = ()
    if not within_layer_limits(widths):
        refuse("hidden", f"give comma-separated layer widths, e.g. '256,256': 1 to {MAX_HIDDEN_LAYERS} layers of "
                         f"1 to {MAX_HIDDEN_WIDTH:,} units")
    if settings["critic"] not in CRITICS:
        refuse("critic", f"choose one of {', '.join(CRITICS)}")
    if settings["encoding"] not in ENCODINGS:
        refuse("encoding", f"choose one of {', '.join(ENCODINGS)}")
    try:
        weights = np.asarray(league_weights, np.float64)
    except (TypeError, ValueError):
        weights = None
    if weights is None or weights.shape != (len(TABLE_KINDS),) or not np.isfinite(weights).all() \
            or (weights < 0).any() or abs(math.fsum(weights) - 1) > LEAGUE_SUM_TOLERANCE:
        raise ValueError(f"league_weights={league_weights!r} is not allowed: give {len(TABLE_KINDS)} probabilities, "
                         f"one per table kind ({', '.join(TABLE_KINDS)}), each 0 or more, summing to 1")
    per_size_here = worker_games(settings["num_games"], sizes, worker, workers)
    if not per_size_here:
        per_size = games_per_size(settings["num_games"], len(sizes))
        raise ValueError(f"worker {worker} of workers={workers} would hold no games: settings['num_games']="
                         f"{settings['num_games']} gives {per_size} game(s) per table size, at least one per worker; "
                         f"give workers 1 to {per_size}, or more games")
    games = per_size_here * len(sizes)
    needed, memory = rollout_bytes(games, sizes, settings["hands_per_game"]), physical_memory()
    if memory and needed > memory:
        raise ValueError(f"settings['num_games']={settings['num_games']} with settings['hands_per_game']="
                         f"{settings['hands_per_game']} needs about {(needed + 2**29) // 2**30:,} GiB for the "
                         f"rollout's buffers, and this machine has {memory / 2**30:.0f} GiB: give fewer games or hands")
    opponent = settings.get("opponent")
    if opponent:
        try:
            with torch.random.fork_rng(devices=[]):  # a checkpoint's network draws its initial weights
                agent = load_agent(opponent)
        except (ValueError, ImportError) as error:
            raise ValueError(f"settings['opponent']: {error}") from None
        if getattr(agent, "cheats", False):
            raise ValueError(f"settings['opponent']={opponent!r}: it cheats (it reads every hand), so it is for "
                             "measurement only, never an opponent in training")
    elif weights[OPPONENT] > 0:
        raise ValueError("the league draws opponent tables but no opponent is named: give settings['opponent'] "
                         "(train.py --opponent SPEC)")


def rollout_bytes(num_games: int, sizes, hands_per_game: int) -> int:
    """An upper bound on the memory of one rollout of ``num_games`` games spread evenly over the table ``sizes``:
    every seat deciding as often as a hand allows, each row's float32 observation held twice (the batch and its
    torch copy). In whole numbers: any count is answered, none overflows a float."""
    row_bytes = 2 * 4 * OBS_DIM + NUM_ACTIONS
    return num_games * sum(sizes) * hands_per_game * MAX_DECISIONS_PER_HAND * row_bytes // len(sizes)


PRECISIONS = ("auto", "bf16", "fp32")
"""``train.py --precision``: the CPU's choice, or bf16 or fp32 arithmetic for the networks."""


def cpu_bf16(precision: str) -> bool:
    """Whether a CPU rollout should run its network in bf16 under ``--precision``."""
    if precision != "auto":
        return precision == "bf16"
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


class SelfPlayRollout:
    """A share of the training games and the league's players; :meth:`collect` plays a rollout.

    Args:
        settings: ``train.py``'s arguments as a dict (``dataclasses.asdict(args)``); read are
            ``seed``, ``min_players``, ``max_players``, ``num_games``, ``hands_per_game``,
            ``current_seats``, ``hidden``, ``critic``, ``encoding``, ``opponent`` (the agent
            spec of the ``opponent`` tables, ``""``: none) and ``league`` (given here already
            parsed, as ``league_weights``: probabilities over :data:`TABLE_KINDS`).
        league_weights: the ``--league`` probabilities (one per :data:`TABLE_KINDS`, summing to 1).
        worker, workers: this rollout holds worker ``worker``'s share of ``workers``.
        device: torch device of the rollout's networks.
        bf16: run the networks under bf16 autocast.
        bf16_obs: keep the observations in bf16, as a bf16 learner does (its network sees nothing
            more; half the bytes through Ray's object store); default: ``bf16``.
        net: the current policy to act with (in-process: the learner's own network, of the shape
            the settings give); ``None`` makes a copy that :meth:`collect` loads weights into.

    Raises:
        ValueError: an argument it cannot take (:func:`check_rollout`: a setting out of range, league
            weights that are no probabilities, a worker with no games; a device this machine lacks;
            a ``net`` of another shape), before anything is built or any generator drawn from.
    """

    def __init__(self, settings: dict, league_weights: np.ndarray, *, worker: int = 0, workers: int = 1,
                 device: str | torch.device = "cpu", bf16: bool = False, bf16_obs: bool | None = None,
                 net: PolicyNet | None = None):
        check_rollout(settings, league_weights, worker, workers)
        checked_device(device, "device")
        for name, value in (("bf16", bf16), ("bf16_obs", bf16_obs)):
            if not (isinstance(value, (bool, np.bool_)) or (value is None and name == "bf16_obs")):
                raise ValueError(f"{name}={value!r} is not allowed: give True or False"
                                 + (", or None (as bf16)" if name == "bf16_obs" else ""))
        if net is not None:
            if not isinstance(net, PolicyNet):
                raise ValueError(f"net={net!r} is not allowed: give a PolicyNet, or None for a copy")
            shape = (hidden_widths(settings["hidden"]), settings["critic"], settings["encoding"])
            if (net.hidden, net.critic_kind, net.encoding) != shape:  # its snapshots load into a network of `shape`
                raise ValueError(f"net is not the network the settings describe: it has hidden={net.hidden}, "
                                 f"critic={net.critic_kind!r}, encoding={net.encoding!r}, the settings "
                                 f"hidden={shape[0]}, critic={shape[1]!r}, encoding={shape[2]!r}")
        self.seed = int(settings["seed"])
        self.worker, self.workers = int(worker), int(workers)
        self.device = torch.device(device)
        self.bf16 = bool(bf16)
        self.bf16_obs = self.bf16 if bf16_obs is None else bool(bf16_obs)
        self.omniscient = settings["critic"] == "omniscient"
        self.net = net if net is not None else policy_net(settings).to(self.device).eval()
        self.opponent_net = policy_net(settings).to(self.device).eval()  # snapshot seats
        self.baselines = {kind: load_agent(name) for kind, name in BASELINES.items()}
        if settings.get("opponent"):  # the agent of the opponent tables, played like a baseline
            self.baselines[OPPONENT] = load_agent(settings["opponent"])
        sizes = list(range(settings["min_players"], settings["max_players"] + 1))
        games = split_games(settings["num_games"], sizes, self.workers)[self.worker]
        self.tables = Tables(games, sizes, np.asarray(league_weights, np.float64), settings["current_seats"],
                             settings["hands_per_game"])
        self.generator = torch.Generator(device=self.device)
        # The batch's buffers, one row per current-policy decision, written in place as the
        # rollout goes (the observations in the learner's dtype, so no copy is made later).
        capacity = sum(c.batch_size * c.num_players for c in self.tables.cores) \
            * settings["hands_per_game"] * MAX_DECISIONS_PER_HAND
        self.buf_obs = torch.zeros(capacity, OBS_DIM, dtype=torch.bfloat16 if self.bf16_obs else torch.float32)
        self.buf_mask = np.zeros((capacity, NUM_ACTIONS), bool)
        self.buf_holder = np.zeros((capacity if self.omniscient else 0, NUM_CARDS), np.int8)
        self.buf_action = np.zeros(capacity, np.int64)
        self.buf_logp = np.zeros(capacity, np.float32)

    @property
    def num_games(self) -> int:
        return sum(core.batch_size for core in self.tables.cores)

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16)

    def collect(self, iteration: int, weights: dict | None = None, snapshot: dict | None = None,
                stop=None) -> RolloutBatch | None:
        """Play one rollout: every game plays its hands.

        Args:
            iteration: the training iteration (seeds this rollout with ``seed`` and the worker).
            weights: a state dict for the current policy (``None``: act with the network as is).
            snapshot: a state dict for the snapshot seats' network (``None``: keep the last one).
            stop: anything with a ``requested`` attribute; when it turns true between two steps,
                the unfinished rollout is dropped and ``None`` returned.

        Returns:
            The :class:`RolloutBatch`, whose arrays are views of this rollout's buffers: valid
            until the next :meth:`collect` (Ray copies them out when a worker returns). Its
            ``stats`` hold, over the finished hands, for each opponent kind ``k`` the current
            seats' equity sum ``eq_sum_k`` and count ``eq_n_k``, and ``hands``,
            ``self_hands``, ``self_spoils``.
        """
        if not (is_integer(iteration) and iteration >= 0):
            raise ValueError(f"iteration={iteration!r} is not allowed: give a whole number 0 or more")
        torch.set_num_threads(1)  # the rollout alternates with NumPy; idle OpenMP threads would spin
        if weights is not None:
            self.net.load_state_dict(weights)
        if snapshot is not None:
            self.opponent_net.load_state_dict(snapshot)
        words = rollout_seed(self.seed, iteration, self.worker, self.workers)
        self.generator.manual_seed(int(np.random.SeedSequence(words).generate_state(1)[0]))
        for kind, agent in self.baselines.items():
            agent.reseed(int(np.random.SeedSequence(words + [kind]).generate_state(1)[0]))
        tables, device, omniscient = self.tables, self.device, self.omniscient
        timers = defaultdict(float)
        t0 = time.perf_counter()
        tables.start_rollout(words)
        timers["env"] += time.perf_counter() - t0
        self.net.eval()
        N = 0  # rows so far
        decisions = 0
        link_prev, link_next, reward_rows, reward_values = [], [], [], []
        step_offsets = [0]
        stats = defaultdict(float)
        with torch.inference_mode():
            while True:
                if stop is not None and stop.requested:
                    return None
                # what every live game needs: mask, observation, who acts, which rows are whose
                t0 = time.perf_counter()
                per_core = []
                start = N
                for i, core in enumerate(tables.cores):
                    live = core.phase != PHASE_DONE
                    if not live.any():
                        per_core.append(None)
                        continue
                    mask = core.legal_mask()
                    obs = core.observe()
                    cur = core.current.astype(np.int64)
                    kind = tables.seat_kind[i][core._all, cur]
                    decide = live & (mask.sum(axis=1) > 1)
                    actions = mask.argmax(axis=1)  # forced moves (finished games' are ignored)
                    mine = np.flatnonzero(decide & (kind == CURRENT))
                    k = len(mine)
                    if k:  # the current policy's rows
                        seats = cur[mine]
                        self.buf_obs[N: N + k] = torch.from_numpy(obs[mine])
                        self.buf_mask[N: N + k] = mask[mine]
                        if omniscient:  # every hand, from this seat: the critic's extra input
                            holder = core.holder[mine].astype(np.int16)
                            rel = np.where(holder >= 0, (holder - seats[:, None]) % core.num_players, -1)
                            self.buf_holder[N: N + k] = rel
                        rows = np.arange(N, N + k)
                        prev = tables.last_row[i][mine, seats]
                        linked = prev >= 0
                        link_prev.append(prev[linked])
                        link_next.append(rows[linked])
                        tables.last_row[i][mine, seats] = rows
                        N += k
                    per_core.append((mask, obs, kind, decide, actions, mine))
                    decisions += int(live.sum())
                timers["env"] += time.perf_counter() - t0
                if N == start and all(p is None for p in per_core):
                    break

                # the current policy: one forward pass over its rows of every core
                t0 = time.perf_counter()
                if N > start:
                    step_obs = self.buf_obs[start:N]
                    if self.bf16_obs and not self.bf16:  # kept in bf16, but the network runs in float32
                        step_obs = step_obs.float()
                    with self._autocast():
                        dist = self.net.distribution(step_obs.to(device),
                                                     torch.from_numpy(self.buf_mask[start:N]).to(device))
                    action_t = dist.sample(self.generator)
                    chosen = action_t.cpu().numpy()
                    self.buf_action[start:N] = chosen
                    self.buf_logp[start:N] = dist.log_prob(action_t).float().cpu().numpy()
                    at = 0
                    for p in per_core:
                        if p is not None and len(p[5]):
                            p[4][p[5]] = chosen[at: at + len(p[5])]
                            at += len(p[5])
                timers["policy"] += time.perf_counter() - t0

                # opponents: snapshot seats by the frozen network, baselines by their agents
                t0 = time.perf_counter()
                for kind_id in (SNAPSHOT, SPOILER, GREEDY, RANDOM, OPPONENT):
                    idx = [np.flatnonzero(p[3] & (p[2] == kind_id)) if p is not None else None for p in per_core]
                    if not sum(len(g) for g in idx if g is not None):
                        continue
                    o = np.concatenate([p[1][g] for p, g in zip(per_core, idx) if p is not None])
                    m = np.concatenate([p[0][g] for p, g in zip(per_core, idx) if p is not None])
                    if kind_id == SNAPSHOT:
                        with self._autocast():
                            d = self.opponent_net.distribution(torch.from_numpy(o).to(device),
                                                               torch.from_numpy(m).to(device))
                        chosen = d.sample(self.generator).cpu().numpy()
                    else:
                        chosen = self.baselines[kind_id].act_batch(o, m)
                    at = 0
                    for p, g in zip(per_core, idx):
                        if p is not None:
                            p[4][g] = chosen[at: at + len(g)]
                            at += len(g)
                timers["opponents"] += time.perf_counter() - t0

                # step every core; a finished hand's equity goes to each seat's last row
                t0 = time.perf_counter()
                for i, (core, p) in enumerate(zip(tables.cores, per_core)):
                    if p is None:
                        continue
                    rewards, done = core.step(p[4])
                    if not done.any():
                        continue
                    d = np.flatnonzero(done)
                    hand_rewards = rewards[d]
                    last = tables.last_row[i][d]
                    got = last >= 0
                    reward_rows.append(last[got])
                    reward_values.append(hand_rewards[got])
                    tables.last_row[i][d] = -1
                    # statistics of the finished hands
                    seat_kind, table_kind = tables.seat_kind[i][d], tables.table_kind[i][d]
                    current = seat_kind == CURRENT
                    against = ~current.all(axis=1)  # an opponent table whose every seat was drawn the policy: none
                    for kid in range(1, len(TABLE_KINDS)):
                        sel = (table_kind == kid) & against
                        stats[f"eq_sum_{kid}"] += float((hand_rewards[sel] * current[sel]).sum())
                        stats[f"eq_n_{kid}"] += float(current[sel].sum())
                    selfplay = table_kind == CURRENT
                    stats["self_hands"] += float(selfplay.sum())
                    stats["self_spoils"] += float((core.last_winner[d][selfplay] == -1).sum())
                    stats["hands"] += len(d)
                    again = d[tables.hands_left[i][d] > 0]
                    if len(again):
                        tables.deal(i, again)
                step_offsets.append(N)
                timers["env"] += time.perf_counter() - t0

        # the trajectories: row -> that seat's next row, or the hand's reward on its last row
        next_row = np.full(N, -1, np.int64)
        if link_prev:
            next_row[np.concatenate(link_prev)] = np.concatenate(link_next)
        reward = np.zeros(N, np.float32)
        assigned = np.zeros(N, bool)
        if reward_rows:
            rr = np.concatenate(reward_rows)
            reward[rr] = np.concatenate(reward_values)
            assigned[rr] = True

        return RolloutBatch(
            obs=(self.buf_obs[:N].view(torch.int16) if self.bf16_obs else self.buf_obs[:N]).numpy(),
            mask=self.buf_mask[:N], holder=self.buf_holder[:N] if omniscient else None,
            action=self.buf_action[:N], logp=self.buf_logp[:N],
            next_row=next_row, reward=reward, assigned=assigned,
            step_offsets=np.asarray(step_offsets, np.int64), decisions=decisions, stats=dict(stats),
            timers=dict(timers))
