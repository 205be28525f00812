"""A learned belief about how many trumps each other player holds, and the searches' deals resampled by it.

The searches draw the hidden hands uniformly among the deals consistent with the searcher's
observation (:func:`spoilfive_env.determinize.sample_hidden`). Told each hidden hand's true trump
count, ``pimc``'s search gains about 1.75 points of pool share at 3 and 4 players
(``oracle:knows=trumps``, docs/strength.md), so this module learns a belief about those counts
from the observation alone and lets the search weigh its deals by it.

**The network** (:class:`TrumpCountNet`), one per table size: for each other seat (relative
places 1 to n-1), a distribution over the trumps in its hand (0 to 5). It is a correction of the
sampler's own belief: its logits are the log of the sampler's marginal of each seat's count over
:data:`SAMPLER_DEALS` deals drawn from the observation, plus an MLP of the observation and that
log marginal (last layer initialised to zero: it starts as the sampler). Trained by cross-entropy
on the searched decisions of tables of ``pimc`` (every seat's turn, :func:`collect`), the later
tenth of the hands held out, stopped when the held-out loss has not improved for four epochs.

**The resampling** (:meth:`TrumpCountBelief.resample`): the search draws ``draws`` times its
deals, counts each deal's trumps per seat, and keeps as many as it needs by systematic resampling
with weights ``prod over seats of p(count) / q(count)``: the network's probability over the
frequency of that count among the drawn deals. The kept deals then hold the network's marginals
where the drawn ones allow, and are otherwise the sampler's.

**The data** of a table size is played in streams of at most ``--stream-hands`` hands, each
stream seeded by the next seed (the first size's streams take ``--seed``, ``--seed + 1``, ...;
the next size goes on from there), so the data depend on the seed and the stream length and not
on ``--workers``, the processes that play the streams side by side. With ``--cache DIR`` each
stream is kept in a file named by its table size, seed and hands, and read back, not played
again, by a later run.

The shipped belief ``agents/checkpoints/beliefs/trump_counts.pt`` covers 3, 4 and 5 players
at the default rules (at any other size or rules a search draws its deals as before). It is made by::

    python -m agents.trump_belief

(its defaults: ``--players 3,4,5 --hands 12000,10000,6000 --stream-hands 12000 --seed 600``, one
stream a size; about 7, 10 and 15 minutes of one core to collect, or ``--workers 3`` side by side, and
5 a size to fit; the held-out losses it prints are in docs/strength.md). ``pimc_ppo:belief=trump_counts``
(and ``best``) use it. A sharper belief of the same kind (the canonical card encoding, three times the
3-player data) played no better: docs/strength.md, "A sharper belief".
"""

from __future__ import annotations

import os
import signal
import zipfile
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from spoilfive_env.cards import IS_TRUMP, MAX_PLAYERS, MIN_PLAYERS
from spoilfive_env.cli import (
    MAX_SEED,
    ArgumentParser,
    exit_interrupted,
    json_text,
    per_table_size,
    positive_int,
    positive_ints,
    run_command,
    seed_value,
    table_sizes,
    unwritable,
    written_whole,
)
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.observation import OBS_DIM, OBSERVATION_VERSION
from spoilfive_env.rules import Rules, is_integer

from . import CHECKPOINT_DIR, load_agent
from .pimc import draw_deals
from .policy import MAX_HIDDEN_WIDTH, is_state_dict, non_finite_weights, weights_misfit

BELIEF_DIR = CHECKPOINT_DIR / "beliefs"
"""Where shipped beliefs live (apart from the policies, so no policy name lists them)."""
FORMAT = "spoilfive-trump-count-belief"
FORMAT_VERSION = 1
COUNTS = 6
"""A hand's possible trump counts, 0 to 5."""
DEFAULT_HANDS = {3: 12000, 4: 10000, 5: 6000}
"""Hands of ``pimc`` tables the shipped belief was fitted on, by table size (``--hands``'s default)."""
SAMPLER_DEALS = 64
"""Drawn deals whose count frequencies are the network's input (the first of the search's draws)."""
SMOOTHING = 0.05
"""Added to each count's tally of the :data:`SAMPLER_DEALS` deals before the log (no log of zero)."""
HIDDEN = 256
DATA_BATCH = 256
"""Games played side by side while collecting."""
MAX_HANDS = 100_000
"""The most hands ``--hands`` takes at a size (and ``--stream-hands`` in a stream). A size's decisions are
held in memory together for the fit: about 11 a hand at 3 players and 35 at 10, of 3.9 kB each (968
float32 features), so 100,000 hands are 4 to 14 GB (twice that while the streams are joined); and they
take an hour of one core at 3 players (12,000 hands took 7 minutes), about seven at 10."""
MAX_WORKERS = 64
"""The most processes ``--workers`` takes: each loads torch and plays its stream's games, about
half a gigabyte, so 64 already ask 30 GB (and no more start than there are streams)."""


def trump_counts(holders: np.ndarray, trump: np.ndarray, num_players: int) -> np.ndarray:
    """``(B, n - 1)`` int64: the trumps in the hand of each relative seat 1 .. n-1.

    ``holders`` ``(B, 52)``: each card's holder relative to the viewer (-1: in no hand);
    ``trump`` ``(B,)``: each game's trump suit."""
    trumps = IS_TRUMP[trump]
    return np.stack([((holders == seat) & trumps).sum(axis=1) for seat in range(1, num_players)], axis=1)


def count_frequencies(counts: np.ndarray) -> np.ndarray:
    """``(D, n - 1, COUNTS)``: the share of the deals of ``counts`` ``(D, deals, n - 1)`` with each count."""
    return np.stack([(counts == k).mean(axis=1) for k in range(COUNTS)], axis=2)


def log_sampler_marginal(counts: np.ndarray) -> np.ndarray:
    """The network's input from the first :data:`SAMPLER_DEALS` of ``counts`` ``(D, deals, n - 1)``:
    ``(D, n - 1, COUNTS)`` float32, the log of each count's smoothed frequency among them."""
    head = counts[:, :SAMPLER_DEALS]
    tallies = np.stack([(head == k).sum(axis=1) for k in range(COUNTS)], axis=2)
    return np.log((tallies + SMOOTHING) / (head.shape[1] + SMOOTHING * COUNTS)).astype(np.float32)


class TrumpCountNet(torch.nn.Module):
    """Each other seat's trump count: the sampler's log marginal plus a learned correction (module docstring)."""

    def __init__(self, num_players: int, hidden: int = HIDDEN):
        super().__init__()
        self.num_players = int(num_players)
        seats = self.num_players - 1
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(OBS_DIM + seats * COUNTS, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, seats * COUNTS))
        torch.nn.init.zeros_(self.mlp[-1].weight)
        torch.nn.init.zeros_(self.mlp[-1].bias)

    def forward(self, observations: torch.Tensor, log_marginal: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, n - 1, COUNTS)``."""
        correction = self.mlp(torch.cat([observations, log_marginal.flatten(1)], dim=1))
        return log_marginal + correction.view(-1, self.num_players - 1, COUNTS)


class TrumpCountBelief:
    """Networks by table size, and the resampling of a search's deals by them (module docstring)."""

    def __init__(self, nets: dict[int, TrumpCountNet], name: str = "trump_counts"):
        self.nets, self.name = dict(nets), name
        for net in self.nets.values():
            net.eval()

    def covers(self, rules: Rules) -> bool:
        """Whether a network was trained for this table: its size, at the default rules."""
        return rules.num_players in self.nets and rules == Rules(num_players=rules.num_players)

    def probabilities(self, observations: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """``(D, n - 1, COUNTS)``: the belief for the decisions ``observations`` given their drawn
        deals' counts ``(D, deals, n - 1)`` (the first :data:`SAMPLER_DEALS` are the input)."""
        net = self.nets[counts.shape[2] + 1]
        with torch.no_grad():
            logits = net(torch.as_tensor(observations, dtype=torch.float32),
                         torch.from_numpy(log_sampler_marginal(counts)))
            return torch.softmax(logits, dim=-1).numpy().astype(np.float64)

    def resample(self, observations: np.ndarray, counts: np.ndarray, keep: int, rng) -> np.ndarray:
        """``(D, keep)``: which of each decision's drawn deals ``counts`` ``(D, deals, n - 1)`` to keep,
        by systematic resampling with weights ``prod p(count) / q(count)``; draws ``D`` uniforms from ``rng``."""
        D, deals, _ = counts.shape
        belief = self.probabilities(observations, counts)
        drawn = count_frequencies(counts)
        log_ratio = np.log(np.maximum(belief, 1e-12)) - np.log(np.maximum(drawn, 1e-12))  # (D, seats, COUNTS)
        log_weight = np.take_along_axis(log_ratio[:, None], counts[..., None], axis=3)[..., 0].sum(axis=2)
        weight = np.exp(log_weight - log_weight.max(axis=1, keepdims=True))
        cumulative = np.cumsum(weight / weight.sum(axis=1, keepdims=True), axis=1)
        points = (rng.random((D, 1)) + np.arange(keep)) / keep
        rows = np.arange(D)[:, None]  # one sorted search over all rows: row r's values shifted into [r, r + 1]
        picks = np.searchsorted((cumulative + rows).ravel(), (points + rows).ravel()).reshape(D, keep) - rows * deals
        return np.clip(picks, 0, deals - 1)


def save_belief(nets: dict[int, TrumpCountNet], path, report: dict) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    torch.save({"format": FORMAT, "format_version": FORMAT_VERSION, "observation_version": OBSERVATION_VERSION,
                "obs_dim": OBS_DIM, "hidden": HIDDEN, "sampler_deals": SAMPLER_DEALS,
                "nets": {str(n): net.state_dict() for n, net in nets.items()}, "report": report}, path)


def belief_path(name_or_path) -> Path:
    """A belief file: a path, or the name of one shipped in ``agents/checkpoints/beliefs``."""
    text = str(name_or_path)
    if text.endswith(".pt") or "/" in text or "\\" in text:
        return Path(text)
    return BELIEF_DIR / f"{text}.pt"


def shipped_beliefs() -> list[str]:
    return sorted(path.stem for path in BELIEF_DIR.glob("*.pt")) if BELIEF_DIR.is_dir() else []


def load_belief(name_or_path) -> TrumpCountBelief:
    """A :class:`TrumpCountBelief` from a file; a ``ValueError`` saying why a file does not fit."""
    path = belief_path(name_or_path)
    if not path.is_file():
        raise ValueError(f"no trump-count belief at {path}: give a belief file's path or the name of one shipped "
                         f"in agents/checkpoints/beliefs ({', '.join(shipped_beliefs()) or 'none'})")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # a truncated file, a pickle of something else
        raise ValueError(f"{path} is not a readable torch file ({type(error).__name__}); expected a trump-count "
                         "belief made by python -m agents.trump_belief") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path} is not a trump-count belief of format {FORMAT!r} version {FORMAT_VERSION}")
    if data.get("observation_version") != OBSERVATION_VERSION or data.get("obs_dim") != OBS_DIM:
        raise ValueError(f"{path} was trained on observation layout version {data.get('observation_version')!r} "
                         f"({data.get('obs_dim')!r} features); this spoilfive_env has version {OBSERVATION_VERSION} "
                         f"({OBS_DIM}): make it again with python -m agents.trump_belief")
    if data.get("sampler_deals") != SAMPLER_DEALS:
        raise ValueError(f"{path} was trained on the counts of {data.get('sampler_deals')!r} drawn deals; "
                         f"this spoilfive reads {SAMPLER_DEALS}")
    states, hidden = data.get("nets", {}), data.get("hidden", HIDDEN)
    if not isinstance(states, dict) or not states:
        raise ValueError(f"{path} holds no network: its nets entry must map table sizes to state dicts, "
                         f"got {type(states).__name__} {'(empty)' if isinstance(states, dict) else ''}".rstrip())
    if not is_integer(hidden) or not 1 <= hidden <= MAX_HIDDEN_WIDTH:
        raise ValueError(f"{path}: its hidden entry must be a layer width from 1 to {MAX_HIDDEN_WIDTH}, got {hidden!r}")
    sizes = {}
    for size, state in states.items():  # every check before any network is built (no torch draw, no memory)
        players = int(size) if is_integer(size) or (isinstance(size, str) and size.isdecimal()) else None
        if players is None or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(f"{path}: its nets entry must map table sizes ({MIN_PLAYERS} to {MAX_PLAYERS}) to "
                             f"networks, got the key {size!r}")
        if not is_state_dict(state):
            raise ValueError(f"{path}: the network for {players} players must map parameter names to tensors, "
                             f"got {type(state).__name__}")
        wrong = weights_misfit(state, lambda: TrumpCountNet(players, int(hidden)))  # noqa: B023 (called at once)
        if wrong:
            raise ValueError(f"{path}: the network for {players} players does not fit its header (hidden={hidden}): "
                             + "; ".join(wrong))
        if non_finite_weights(state):
            raise ValueError(f"{path}: the network for {players} players holds NaN or infinite weights")
        sizes[players] = state
    nets = {}
    for players, state in sizes.items():
        nets[players] = TrumpCountNet(players, hidden=int(hidden))
        nets[players].load_state_dict(state)
    return TrumpCountBelief(nets, name=path.stem)


def collect(num_players: int, hands: int, seed: int, *, progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Observations ``(N, OBS_DIM)`` float32 at every searched decision (more than one legal action)
    of tables of ``pimc`` at the default rules, and each other seat's true trump count ``(N, n - 1)``.

    :data:`DATA_BATCH` games side by side from ``seed`` (``pimc``'s own seed ``seed + 1000``), a finished
    hand dealt again until ``hands`` have finished."""
    n = num_players
    core = SpoilFiveCore(DATA_BATCH, rules=Rules(num_players=n), mode="hand", seed=seed)
    core.reset()
    agent = load_agent("pimc", seed=seed + 1000)
    observations, targets, finished = [], [], 0
    with tqdm(total=hands, desc=f"pimc tables, {n} players", unit="hand", disable=not progress) as bar:
        while finished < hands:
            obs, masks = core.observe(), core.legal_mask()
            rows = np.flatnonzero(~core.done & (masks.sum(axis=1) > 1))
            if len(rows):
                viewer = core.current[rows].astype(np.int64)
                held = core.holder[rows].astype(np.int64)
                relative = np.where(held >= 0, (held - viewer[:, None]) % n, -1)
                observations.append(obs[rows].astype(np.float32))
                targets.append(trump_counts(relative, core.trump[rows], n).astype(np.int8))
            core.step(agent.act_batch(obs, masks))
            done = core.done
            if done.any():
                finished += int(done.sum())
                bar.update(int(done.sum()))
                core.reset(np.flatnonzero(done))
    return np.concatenate(observations), np.concatenate(targets)


def streams(sizes: list[int], hands: list[int], stream_hands: int, seed: int) -> list[tuple[int, int, int]]:
    """``(players, hands, seed)`` of every stream of the data, in order: each size's hands cut into
    streams of at most ``stream_hands``, each stream taking the next seed from ``seed``."""
    out = []
    for size, total in zip(sizes, hands, strict=True):
        for start in range(0, total, stream_hands):
            out.append((size, min(stream_hands, total - start), seed + len(out)))
    return out


def stream_file(cache, players: int, hands: int, seed: int) -> Path:
    """Where ``--cache`` keeps a stream (named by all that decides it)."""
    return Path(cache) / f"pimc-tables-{players}p-seed{seed}-{hands}hands-obs{OBSERVATION_VERSION}.npz"


def read_stream(path: Path, players: int) -> tuple[tuple[np.ndarray, np.ndarray] | None, str]:
    """A stream kept at ``path`` as ``(observations, targets)``, or ``None`` and why it cannot be read
    (a damaged file, or arrays :func:`collect` does not give): then it is played again."""
    try:
        with np.load(path) as data:
            observations, targets = data["observations"], data["targets"]
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:
        return None, f"{type(error).__name__}: {error}"
    if observations.ndim != 2 or observations.shape[1] != OBS_DIM or observations.dtype != np.float32:
        return None, (f"observations must be float32 of shape (decisions, {OBS_DIM}), got {observations.dtype} "
                      f"of shape {observations.shape}")
    if not len(observations):  # a stream of at least one hand has decisions
        return None, "it holds no decision"
    if targets.shape != (len(observations), players - 1) or targets.dtype.kind not in "iu":
        return None, (f"targets must be whole numbers of shape ({len(observations)}, {players - 1}), one trump "
                      f"count a seat for each observation, got {targets.dtype} of shape {targets.shape}")
    if not np.isfinite(observations).all():
        return None, "observations hold NaN or infinite values"
    if targets.min() < 0 or targets.max() >= COUNTS:
        return None, f"targets must be trump counts from 0 to {COUNTS - 1}, got {targets.min()} to {targets.max()}"
    return (observations, targets), ""


def play_stream(players: int, hands: int, seed: int, cache=None, progress: bool = False):
    """One stream's :func:`collect`, read from ``cache`` when it holds it, and kept there when not."""
    path = None if cache is None else stream_file(cache, players, hands, seed)
    if path is not None and path.is_file():
        stream, why = read_stream(path, players)
        if stream is not None:
            return stream
        tqdm.write(f"{players} players, seed {seed}: the stream kept in {path} cannot be read ({why}); "
                   "playing it again")
    observations, targets = collect(players, hands, seed, progress=progress)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with written_whole(path) as file:
            np.savez_compressed(file, observations=observations, targets=targets)
    return observations, targets


def _quiet_worker() -> None:
    """A stream process: one thread, and Ctrl-C left to the command (which ends the pool)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)


def play_streams(jobs: list[tuple[int, int, int]], workers: int = 1, cache=None) -> list:
    """Each stream's ``(observations, targets)``, in the order of ``jobs``; ``workers`` processes
    play them side by side (the data are the same for any number)."""
    if workers == 1 or len(jobs) == 1:
        return [play_stream(*job, cache=cache, progress=True) for job in jobs]
    with get_context("spawn").Pool(min(workers, len(jobs)), initializer=_quiet_worker) as pool:  # ends it on exit
        played = pool.imap(_play_stream_job, [(*job, cache) for job in jobs])
        return list(tqdm(played, total=len(jobs), desc="streams of pimc tables", unit="stream"))


def _play_stream_job(job):
    return play_stream(*job)


def sampler_inputs(observations: np.ndarray, num_players: int, seed: int, chunk: int = 2000) -> np.ndarray:
    """The network's input for each observation: :func:`log_sampler_marginal` of :data:`SAMPLER_DEALS`
    deals drawn from it (``(N, n - 1, COUNTS)``)."""
    rng, rules = np.random.default_rng(seed), Rules(num_players=num_players)
    out = np.empty((len(observations), num_players - 1, COUNTS), np.float32)
    for start in range(0, len(observations), chunk):
        obs = observations[start:start + chunk]
        _, info, holders, _ = draw_deals(obs, SAMPLER_DEALS, rng, rules)
        counts = trump_counts(holders, info.trump, num_players).reshape(len(obs), SAMPLER_DEALS, -1)
        out[start:start + len(obs)] = log_sampler_marginal(counts)
    return out


def fit(observations: np.ndarray, targets: np.ndarray, num_players: int, seed: int, *, epochs: int = 40,
        patience: int = 4, progress: bool = False) -> tuple[TrumpCountNet, dict]:
    """A :class:`TrumpCountNet` trained on the first nine tenths, stopped on the last tenth's loss.

    Returns the net (its best epoch) and the held-out losses in nats a seat: the sampler's
    input alone and the network's."""
    torch.manual_seed(seed)
    inputs = torch.from_numpy(sampler_inputs(observations, num_players, seed + 1))
    x, y = torch.from_numpy(observations), torch.from_numpy(targets.astype(np.int64))
    cut = int(len(x) * 0.9)
    train_rows, held_out = torch.arange(cut), torch.arange(cut, len(x))
    net = TrumpCountNet(num_players)
    optimizer = torch.optim.Adam(net.parameters(), lr=5e-4, weight_decay=1e-5)

    def loss(rows):
        return torch.nn.functional.cross_entropy(net(x[rows], inputs[rows]).reshape(-1, COUNTS), y[rows].reshape(-1))

    with torch.no_grad():
        sampler_loss = torch.nn.functional.cross_entropy(inputs[held_out].reshape(-1, COUNTS),
                                                         y[held_out].reshape(-1)).item()
    best, best_state, best_epoch, waited = np.inf, None, 0, 0
    for epoch in tqdm(range(epochs), desc=f"fitting, {num_players} players", unit="epoch", disable=not progress):
        net.train()
        order = train_rows[torch.randperm(cut)]
        for start in range(0, cut, 512):
            optimizer.zero_grad()
            loss(order[start:start + 512]).backward()
            optimizer.step()
        net.eval()
        with torch.no_grad():
            held = loss(held_out).item()
        if held < best - 1e-4:
            best, best_state, best_epoch, waited = held, {k: v.clone() for k, v in net.state_dict().items()}, epoch, 0
        else:
            waited += 1
            if waited >= patience:
                break
    net.load_state_dict(best_state)
    net.eval()
    return net, {"decisions": len(x), "held_out": len(held_out), "epochs": best_epoch + 1,
                 "sampler_nats_per_seat": sampler_loss, "belief_nats_per_seat": best}


def main(argv=None) -> int:
    """The command line (a bad value: one line on standard error, exit status 2)."""
    parser = ArgumentParser(prog="python -m agents.trump_belief",
                            description="Collect pimc tables' decisions, fit the trump-count belief at each size, "
                                        "and save it for the searches (pimc_ppo:belief=NAME).")
    parser.add_argument("--players", type=table_sizes, default=[3, 4, 5], help="table sizes (default 3,4,5)")
    parser.add_argument("--hands", type=positive_ints, default=None,
                        help=f"hands of pimc tables to collect at each size, 1 to {MAX_HANDS:,}, one number or "
                             "one per size (default 12000,10000,6000 at 3,4,5 players; other sizes need it given)")
    parser.add_argument("--stream-hands", type=positive_int, default=12000,
                        help=f"hands a stream of the data holds at most, 1 to {MAX_HANDS:,}; each stream takes "
                             "the next seed (default 12000)")
    parser.add_argument("--seed", type=seed_value, default=600,
                        help="seed of the first stream (default 600)")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help=f"processes playing the streams side by side, 1 to {MAX_WORKERS}; the data do not "
                             "depend on it (default 1)")
    parser.add_argument("--cache", default=None,
                        help="a folder that keeps each stream, read back by a later run instead of playing it again")
    parser.add_argument("--out", default=str(BELIEF_DIR / "trump_counts.pt"),
                        help="where to save it (default agents/checkpoints/beliefs/trump_counts.pt)")
    parser.add_argument("--json", action="store_true", help="print the held-out losses as JSON")
    args = parser.parse_args(argv)
    if any(size < 2 for size in args.players):
        parser.error("--players: a trump-count belief needs at least 2 players")
    if args.hands is not None and max(args.hands) > MAX_HANDS:  # before the streams are listed
        parser.error(f"--hands {','.join(map(str, args.hands))} is not allowed: give 1 to {MAX_HANDS:,} hands a size")
    if args.stream_hands > MAX_HANDS:
        parser.error(f"--stream-hands {args.stream_hands} is not allowed: give 1 to {MAX_HANDS:,} hands a stream")
    if args.workers > MAX_WORKERS:
        parser.error(f"--workers {args.workers} is not allowed: give 1 to {MAX_WORKERS} processes")
    if args.cache is not None and not args.cache.strip():
        parser.error(f"--cache {args.cache!r}: give a folder for the streams, or leave --cache out")
    try:
        args.hands = per_table_size("--hands", args.players, args.hands, DEFAULT_HANDS)
    except ValueError as error:
        parser.error(str(error))
    if not args.out.endswith(".pt"):
        parser.error(f"--out {args.out!r} is not allowed: a belief file's name ends in .pt")
    jobs = streams(args.players, args.hands, args.stream_hands, args.seed)
    if jobs[-1][2] > MAX_SEED:
        parser.error(f"--seed {args.seed} is not allowed: its {len(jobs)} streams would take seeds past {MAX_SEED:,}")
    for flag, path, folder in (("--out", args.out, False), ("--cache", args.cache, True)):
        why = None if path is None else unwritable(path, folder=folder)
        if why:
            parser.error(f"{flag} {path!r} cannot be written: {why}")
    if args.cache is not None and Path(args.cache).is_dir():  # asked now: a stream is written there once played
        try:
            blocked = {entry.name: entry.is_dir() for entry in os.scandir(args.cache) if not entry.is_file()}
        except OSError as error:
            parser.error(f"--cache {args.cache!r} cannot be read: {error.strerror or error}")
        for job in jobs if blocked else ():
            name = stream_file(args.cache, *job).name
            if name in blocked:
                parser.error(f"--cache {args.cache!r} cannot be written: {name} in it is "
                             f"{'a folder' if blocked[name] else 'not a regular file'}; the stream is kept in that "
                             "name: move it away")
    torch.set_num_threads(1)
    nets, report = {}, {}
    try:
        data = play_streams(jobs, args.workers, args.cache)
        for size, hands in zip(args.players, args.hands, strict=True):
            mine = [index for index, job in enumerate(jobs) if job[0] == size]
            observations = np.concatenate([data[index][0] for index in mine])
            targets = np.concatenate([data[index][1] for index in mine])
            seeds = [jobs[index][2] for index in mine]
            nets[size], report[size] = fit(observations, targets, size, seeds[0], progress=True)
            report[size].update(hands=hands, seeds=seeds)
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: stopped, no belief saved" + (f" (the streams played are in {args.cache})"
                                                                if args.cache else ""))
    save_belief(nets, args.out, report)
    if args.json:
        print(json_text({"out": args.out, "sizes": report}))
    else:
        for size, figures in report.items():
            print(f"{size} players: {figures['decisions']:,} decisions; held-out nats a seat, sampler "
                  f"{figures['sampler_nats_per_seat']:.4f}, belief {figures['belief_nats_per_seat']:.4f}")
        print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    run_command(main)
