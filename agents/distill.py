"""One step of expert iteration: a policy network fitted to ``pimc_ppo``'s search values; or,
with ``--expert pimc``, a network that plays like ``pimc``, to model the other seats of
``pimc_ppo``'s rollouts (``pimc_ppo:others=<checkpoint>``).

``python -m agents.distill --out runs/distill/ppo-distilled.pt``: with the defaults, about 45
minutes of one core for the search (one table size after another) and 2 for the fit. No
checkpoint made this way is shipped: it measured no stronger against ``pimc`` tables (below).

1. **Search targets.** Tables where every seat is ``pimc_ppo`` (its rollouts played by
   ``--policy``) play ``--deals`` duplicate deals at each table size of ``--players``, every
   rotation, through :func:`agents.evaluate.evaluate`; every searched decision (more than one
   legal action) is recorded: the observation (float16: its entries are 0, 0.25, 0.95 and 1,
   which it keeps to 2e-4), the legal mask and the search's mean equity of every legal action
   over its sampled deals. Table size ``players[i]`` plays the deals of seed ``seed + i``.
   Each size's targets are saved in ``--data`` and reused by a later run with the same settings
   and the same policy (the file is named by a digest of the policy file's bytes), so a fit can be
   redone without the search (a file written whole or not at all; one that cannot be read, or whose
   arrays do not fit, is searched again).
2. **Fit.** The policy's actor (the critic is left as it is: no agent reads it) is trained by
   cross-entropy to ``softmax(Q / tau)`` over the legal actions, Adam, minibatches of 1,024,
   from the ``--policy`` checkpoint's weights; 5% of the decisions are held out, and each epoch
   reports the held-out *regret*: the search's best mean equity minus that of the action the
   network would play (what the network gives up against the search's own judgement).

With ``--expert pimc`` the tables are of ``pimc`` (``--samples`` defaults to its own 128) and
the fit is the same, from ``--policy``'s weights to ``pimc``'s mean equities; the targets are
kept as ``targets_pimc_...``.

The result is an ordinary policy checkpoint (``load_agent(path)``, ``pimc_ppo:policy=path``);
its ``args`` entry records the source policy and these settings. Measured (docs/strength.md,
"Distillation"): the held-out regret falls from 0.060 to 0.041 chips a decision; the network
alone gains against ``spoiler`` tables and loses a little head to head against ``ppo``, whose
self-play it no longer matches (the search models the other seats as ``spoiler``).
"""

from __future__ import annotations

import hashlib
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.cli import (
    MAX_LEARNING_RATE,
    MAX_SEED,
    ArgumentParser,
    exit_interrupted,
    learning_rate,
    per_table_size,
    positive_float,
    positive_int,
    positive_ints,
    run_command,
    seed_value,
    table_sizes,
    unwritable,
    written_whole,
)
from spoilfive_env.observation import OBS_DIM

from .evaluate import MAX_DEALS, evaluate
from .pimc import MAX_SAMPLES, PIMC_SAMPLES, PIMCAgent, action_means

try:  # torch takes seconds to load: run as a command, Ctrl-C then is one line and exit 130, as later on
    import torch

    from .pimc_policy import DEFAULT_SAMPLES, PolicyPIMCAgent
    from .policy import CheckpointError, load_checkpoint, non_finite_weights, resolve_checkpoint, save_checkpoint
except KeyboardInterrupt:
    if __name__ != "__main__":  # imported by a program of its own: the Ctrl-C is that program's
        raise
    exit_interrupted("Ctrl-C: distillation stopped while starting up, nothing was run")

DEFAULT_PLAYERS = (4, 3, 5, 6, 2)
DEFAULT_DEALS = (2000, 3000, 1500, 800, 2000)
"""Deals per table size: about 100,000 searched decisions at each of 3 to 6 players, 31,000 at 2."""
DEFAULT_SEED = 1000
"""Seeds 1000 on: away from the evaluation seeds (0-2) and the tuning seeds (100-103)."""
TARGET_ARRAYS = ("observations", "masks", "values")
"""The arrays of the search targets, as :meth:`SearchRecorder.recorded` gives and ``--data`` keeps them."""
ILLEGAL = -1e9
"""The search value and logit given to an illegal action (its target weight is then 0)."""


class _Recording:
    """A search agent that keeps every searched decision: observation, mask, mean value per action."""

    def __init__(self, *args, progress=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.observations, self.masks, self.values = [], [], []
        self._searched = None
        self.progress = progress  # a tqdm bar told the number of decisions searched

    def _search(self, observations, masks, fallback, rules):
        self._searched = (observations, masks)
        return super()._search(observations, masks, fallback, rules)

    def _choose(self, game_of_decision, game, action, values, fallback, decisions):
        means = action_means(game_of_decision, game, action, values, decisions)
        observations, masks = self._searched
        self.observations.append(observations.astype(np.float16))
        self.masks.append(np.asarray(masks, dtype=bool))
        self.values.append(np.where(np.isneginf(means), np.nan, means).astype(np.float32))  # NaN: not legal
        if self.progress is not None:
            self.progress.update(decisions)
        return self._best(means, fallback)

    def recorded(self) -> dict[str, np.ndarray]:
        if not self.observations:
            raise RuntimeError("no searched decision was recorded")
        return {"observations": np.concatenate(self.observations), "masks": np.concatenate(self.masks),
                "values": np.concatenate(self.values)}


class SearchRecorder(_Recording, PolicyPIMCAgent):
    """``pimc_ppo`` that keeps every searched decision: observation, mask, mean value per action."""


class PIMCRecorder(_Recording, PIMCAgent):
    """``pimc`` that keeps every searched decision (``--expert pimc``: a network that plays like it)."""


EXPERTS = {"pimc_ppo": (SearchRecorder, DEFAULT_SAMPLES), "pimc": (PIMCRecorder, PIMC_SAMPLES)}
"""The searches a network can be fitted to: recorder and default samples a decision."""


def search_targets(num_players: int, deals: int, seed: int, policy="ppo",
                   samples: int = DEFAULT_SAMPLES, progress: bool = False,
                   expert: str = "pimc_ppo") -> dict[str, np.ndarray]:
    """Every searched decision of tables of ``expert`` on ``deals`` deals of ``seed`` (module docstring;
    ``policy`` plays ``pimc_ppo``'s rollouts); ``progress``: a bar counting the decisions searched
    (their number is known only at the end)."""
    recorder_class, _ = EXPERTS[expert]
    options = {"policy": policy} if expert == "pimc_ppo" else {}
    with tqdm(desc=f"{num_players} players: search", unit="decision", disable=not progress, leave=False) as bar:
        recorder = recorder_class(samples=samples, progress=bar, **options)
        evaluate([recorder], num_players=num_players, deals=deals, seed=seed)
    return recorder.recorded()


def policy_key(checkpoint_path) -> str:
    """The name a policy's search targets are kept by: its file's stem and a digest of the file's bytes,
    so that two checkpoints of one file name (or one trained again in place) never share targets."""
    digest = hashlib.sha256()
    with open(checkpoint_path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return f"{Path(checkpoint_path).stem}-{digest.hexdigest()[:16]}"


def _targets_path(data_dir: Path, num_players: int, deals: int, seed: int, policy_key: str, samples: int,
                  expert: str = "pimc_ppo") -> Path:
    searcher = policy_key if expert == "pimc_ppo" else expert  # pimc plays no policy
    return data_dir / f"targets_{searcher}_{num_players}p_{deals}deals_seed{seed}_{samples}samples.npz"


def save_targets(path: Path, part: dict[str, np.ndarray]) -> None:
    """Save search targets to ``path`` whole or not at all: written under a temporary name, then
    renamed (a Ctrl-C or a full disk mid-write leaves no truncated file for a rerun to trust)."""
    with written_whole(path) as file:  # a file object: np.savez adds no .npz to its name
        np.savez(file, **part)


def read_targets(path: Path) -> tuple[dict[str, np.ndarray] | None, str]:
    """The search targets saved at ``path``, or ``None`` and why they cannot be read (a file cut
    short, say, by an older version killed mid-write, or arrays that do not fit: :func:`targets_misfit`):
    then they are searched again."""
    try:
        with np.load(path) as saved:
            part = {key: saved[key] for key in TARGET_ARRAYS}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:
        return None, f"{type(error).__name__}: {error}"
    why = targets_misfit(part)
    return (None, why) if why else (part, "")


def targets_misfit(part: dict[str, np.ndarray]) -> str:
    """What in search targets read from a file the fit cannot take (a shape, a type, a value that is
    not finite), or ``""``: the arrays :meth:`SearchRecorder.recorded` gives."""
    observations, masks, values = (part[key] for key in TARGET_ARRAYS)
    if observations.ndim != 2 or observations.shape[1] != OBS_DIM or observations.dtype.kind != "f":
        return (f"observations must be floats of shape (decisions, {OBS_DIM}), got {observations.dtype} "
                f"of shape {observations.shape}")
    count = len(observations)
    if not count:  # a search records at least one decision, or saves nothing
        return "it holds no decision"
    for name, array, kind, dtype_kind in (("masks", masks, "booleans", "b"), ("values", values, "floats", "f")):
        if array.shape != (count, NUM_ACTIONS) or array.dtype.kind != dtype_kind:
            return (f"{name} must be {kind} of shape ({count}, {NUM_ACTIONS}), one row per observation, "
                    f"got {array.dtype} of shape {array.shape}")
    if not np.isfinite(observations).all():
        return "observations hold NaN or infinite values"
    if not masks.any(axis=1).all():
        return "a decision has no legal action"
    if not np.isfinite(values[masks]).all():
        return "the values of legal actions hold NaN or infinite values"
    return ""


def held_out_regret(net, observations, masks, values) -> tuple[float, float]:
    """``(regret, agreement)``: the search's best mean minus that of the network's choice, and how
    often the two choose the same action."""
    with torch.inference_mode():
        logits = net.logits(observations.float()).masked_fill(~masks, ILLEGAL)
        choice = logits.argmax(dim=1)
        best = values.max(dim=1).values
        regret = (best - values.gather(1, choice[:, None])[:, 0]).mean().item()
        agreement = (choice == values.argmax(dim=1)).float().mean().item()
    return regret, agreement


def fit_to_search(net, data: dict[str, np.ndarray], tau: float = 0.1, epochs: int = 10, lr: float = 1e-3,
                  batch_size: int = 1024, holdout: float = 0.05, seed: int = 0, say=tqdm.write) -> list[dict]:
    """Train ``net``'s actor in place on the search targets (module docstring). Returns per-epoch figures."""
    count = len(data["observations"])
    if count < 2:
        raise ValueError(f"{count} searched decisions are too few to fit and measure: search more deals")
    rng = np.random.default_rng(seed)
    order = rng.permutation(count)
    cut = max(1, int(count * holdout))  # at least one decision held out, to measure the fit on
    held_out, train = order[:cut], order[cut:]
    observations = torch.as_tensor(data["observations"])
    masks = torch.as_tensor(data["masks"])
    values = torch.as_tensor(np.nan_to_num(data["values"], nan=ILLEGAL))
    values = torch.where(masks, values, torch.full_like(values, ILLEGAL))
    check = torch.as_tensor(held_out)
    regret, agreement = held_out_regret(net, observations[check], masks[check], values[check])
    history = [{"epoch": 0, "loss": float("nan"), "held_out_regret": regret, "agreement": agreement}]
    say(f"{count:,} searched decisions ({len(held_out):,} held out); before: held-out regret {regret:.4f} "
        f"chips a decision, agreement {agreement:.3f}")
    actor = [parameter for name, parameter in net.named_parameters() if name.startswith("actor")]
    optimizer = torch.optim.Adam(actor, lr=lr)
    net.train()
    for epoch in tqdm(range(1, epochs + 1), desc="fit", unit="epoch", leave=False):
        rng.shuffle(train)
        total = 0.0
        for start in range(0, len(train), batch_size):
            rows = torch.as_tensor(train[start:start + batch_size])
            logits = net.logits(observations[rows].float()).masked_fill(~masks[rows], ILLEGAL)
            target = torch.softmax(values[rows] / tau, dim=1)
            loss = -(target * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(rows)
        regret, agreement = held_out_regret(net, observations[check], masks[check], values[check])
        history.append({"epoch": epoch, "loss": total / len(train), "held_out_regret": regret, "agreement": agreement})
        say(f"epoch {epoch}: loss {total / len(train):.4f}, held-out regret {regret:.4f}, agreement {agreement:.3f}")
    net.eval()
    return history


MIN_HANDS = 6
"""The fewest hands a distillation takes (deals x table size, over the sizes): a hand gives a few
searched decisions, at least one of which is held out to measure the fit on."""
MAX_EPOCHS = 10_000
"""The most passes ``--epochs`` takes: far more than a fit needs (10 by default); a count past 2**63
would end the fit in a traceback (its progress bar takes the count's length)."""
MIN_TAU = 1e-6
"""The smallest ``--tau``, chips: at a millionth of a chip the targets are already the search's best
action alone, and far smaller ones divide the values by zero in 32-bit floats (NaN targets)."""
MAX_TAU = 1e6
"""The largest ``--tau``, chips: at a million chips the targets are already even over the legal actions
(their values lie a few chips apart); from about 1e8 an illegal action's :data:`ILLEGAL` value no longer
weighs nothing, and the fit learns to play illegal actions at a loss of millions."""


def main(argv=None) -> int:
    """The command line: every value checked before the search starts (one line, exit status 2)."""
    parser = ArgumentParser(prog="python -m agents.distill",
                            description="Fit a policy network to a search's values: pimc_ppo's (expert "
                                        "iteration) or pimc's (a network that plays like pimc).")
    parser.add_argument("--out", required=True, help="the checkpoint to write (a .pt path)")
    parser.add_argument("--expert", choices=sorted(EXPERTS), default="pimc_ppo",
                        help="the search fitted to, at tables of itself (default %(default)s)")
    parser.add_argument("--policy", default="ppo", help="the policy the fit starts from, which also plays "
                                                        "pimc_ppo's rollouts: a shipped name or a checkpoint path "
                                                        "(default ppo)")
    parser.add_argument("--players", type=table_sizes, default=",".join(map(str, DEFAULT_PLAYERS)),
                        help="table sizes, comma-separated (default %(default)s)")
    parser.add_argument("--deals", type=positive_ints, default=None,
                        help="deals at each table size: one number for all or one per size (default "
                             f"{','.join(map(str, DEFAULT_DEALS))} at {','.join(map(str, DEFAULT_PLAYERS))} players; "
                             "other sizes need it given)")
    parser.add_argument("--seed", type=seed_value, default=DEFAULT_SEED,
                        help="size i of --players plays the deals of seed + i (default %(default)s)")
    parser.add_argument("--samples", type=positive_int, default=None,
                        help=f"deals sampled per decision (default: the expert's own, {DEFAULT_SAMPLES} for "
                             f"pimc_ppo and {PIMC_SAMPLES} for pimc)")
    parser.add_argument("--data", default="runs/distill", help="where the search targets are kept and reused")
    parser.add_argument("--tau", type=positive_float, default=0.1,
                        help=f"temperature of the targets, chips, {MIN_TAU:g} to {MAX_TAU:,.0f} (default 0.1)")
    parser.add_argument("--epochs", type=positive_int, default=10,
                        help=f"passes over the decisions, 1 to {MAX_EPOCHS:,} (default 10)")
    parser.add_argument("--lr", type=learning_rate, default=1e-3,
                        help=f"Adam's learning rate, above 0, at most {MAX_LEARNING_RATE:g} (default 0.001)")
    args = parser.parse_args(argv)
    if args.epochs > MAX_EPOCHS:
        parser.error(f"--epochs {args.epochs} is not allowed: give at most {MAX_EPOCHS:,} passes")
    if not MIN_TAU <= args.tau <= MAX_TAU:
        parser.error(f"--tau {args.tau:g} is not allowed: give a temperature from {MIN_TAU:g} to {MAX_TAU:,.0f} "
                     "chips")
    if not args.data.strip():
        parser.error(f"--data {args.data!r}: give a folder for the search targets (default runs/distill)")
    if not args.out.endswith(".pt"):
        parser.error(f"--out {args.out!r}: give a path ending in .pt")
    if Path(args.out).is_dir():
        parser.error(f"--out {args.out!r} is a folder: give the checkpoint file's path")
    for flag, place, is_folder in (("--out", args.out, False), ("--data", args.data, True)):
        why = unwritable(place, folder=is_folder)  # asked now: the search takes minutes to hours
        if why:
            parser.error(f"{flag} {place!r} cannot be written: {why}")
    players, deals = args.players, args.deals
    if args.seed + len(players) - 1 > MAX_SEED:  # size i plays seed + i
        parser.error(f"--seed {args.seed} is not allowed with {len(players)} table sizes: they would take seeds past "
                     f"{MAX_SEED:,}; give at most {MAX_SEED - len(players) + 1:,}")
    samples = args.samples or EXPERTS[args.expert][1]
    if samples > MAX_SAMPLES:
        parser.error(f"--samples {samples}: give at most {MAX_SAMPLES:,} deals a decision")
    if deals is not None and max(deals) > MAX_DEALS:
        parser.error(f"--deals {','.join(map(str, deals))}: give at most {MAX_DEALS:,} deals a size")
    try:
        deals = per_table_size("--deals", players, deals, dict(zip(DEFAULT_PLAYERS, DEFAULT_DEALS)))
    except ValueError as error:
        parser.error(str(error))
    if sum(deals[index] * n for index, n in enumerate(players)) < MIN_HANDS:
        parser.error(f"--deals {','.join(map(str, deals))}: give at least {MIN_HANDS} hands in all (deals x table "
                     "size), so that some decisions are held out to measure the fit")
    try:
        policy_path = resolve_checkpoint(args.policy)
        net, checkpoint = load_checkpoint(policy_path)
    except CheckpointError as error:
        parser.error(f"--policy: {error}")
    data_dir = Path(args.data)
    key = policy_key(policy_path) if args.expert == "pimc_ppo" else None  # pimc plays no policy
    paths = [_targets_path(data_dir, num_players, num_deals, args.seed + index, key, samples, args.expert)
             for index, (num_players, num_deals) in enumerate(zip(players, deals, strict=True))]
    for path in paths:  # asked now: the targets are written there after the search
        if path.exists() and not path.is_file():
            parser.error(f"--data {args.data!r} cannot be written: {path.name} in it is "
                         f"{'a folder' if path.is_dir() else 'not a regular file'}; the search targets are "
                         "kept in that name: move it away")
    for flag, folder in (("--out", Path(args.out).resolve().parent), ("--data", Path(args.data))):
        try:  # made now, after every check: a folder that cannot be made fails before the search
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            parser.error(f"{flag}: the folder {str(folder)!r} cannot be made ({error.strerror or error})")
    torch.set_num_threads(1)  # small batches beside the core's stepping (README, "Training")
    parts = []
    try:
        for index, (num_players, num_deals, path) in enumerate(zip(players, deals, paths, strict=True)):
            seed = args.seed + index
            part = None
            if path.is_file():
                part, why = read_targets(path)
                if part is None:
                    print(f"{num_players} players: the saved targets in {path} cannot be read ({why}); "
                          "searching again", flush=True)
                else:
                    print(f"{num_players} players: {len(part['observations']):,} decisions read from {path}")
            if part is None:
                started = time.perf_counter()
                print(f"{num_players} players: searching {num_deals:,} deals x {num_players} rotations "
                      f"(seed {seed}) ...", flush=True)
                part = search_targets(num_players, num_deals, seed, args.policy, samples, progress=True,
                                      expert=args.expert)
                data_dir.mkdir(parents=True, exist_ok=True)
                save_targets(path, part)
                print(f"{num_players} players: {len(part['observations']):,} decisions in "
                      f"{time.perf_counter() - started:.0f} s, saved to {path}", flush=True)
            parts.append((num_players, part))
        parts.sort(key=lambda item: item[0])  # the fit sees the sizes in order, whatever --players' order
        data = {key: np.concatenate([part[key] for _, part in parts]) for key in TARGET_ARRAYS}
        history = fit_to_search(net, data, tau=args.tau, epochs=args.epochs, lr=args.lr)
    except ValueError as error:  # too few decisions came out of the search to fit on
        print(f"{parser.prog}: error: {error}; the search targets are in {data_dir}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: distillation stopped; the search targets saved so far are in " + str(data_dir))
    broken = non_finite_weights(net.state_dict())
    if broken:  # a last guard: such a network is refused by every loader, so it is not saved
        print(f"{parser.prog}: error: the fitted network's weights hold NaN or infinite values ({broken[0]}"
              f"{', ...' if len(broken) > 1 else ''}): nothing saved; the search targets are in {data_dir}",
              file=sys.stderr)
        return 1
    settings = {"expert": args.expert, "policy": str(args.policy), "players": players, "deals": deals,
                "seed": args.seed, "samples": samples, "tau": args.tau, "epochs": args.epochs, "lr": args.lr}
    save_checkpoint(args.out, net, {**checkpoint.get("args", {}), "distilled": settings},
                    {**checkpoint.get("progress", {}), "distill_history": history})
    role = "policy" if args.expert == "pimc_ppo" else "others"  # it plays the searcher's seat, or the others'
    print(f"saved {args.out}: play it with load_agent({args.out!r}), search with it as "
          f"pimc_ppo:{role}={args.out}")
    return 0


if __name__ == "__main__":
    run_command(main)
