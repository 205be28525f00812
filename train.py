"""Self-play PPO for Spoil Five on the vectorised core (one file, read top to bottom).

    python train.py --time-limit 5       # a quick run: 5 minutes
    python train.py                      # the default run: about 20 minutes on 2 CPU cores, up to 40 on a busy one
    python train.py --help               # every option, with its help
    python train.py --resume             # continue runs/<run name> from its checkpoint (Ctrl-C saves one)
    tensorboard --logdir runs            # watch it

What happens (the signposts in ``main`` follow this list):

1. **Tables.** One :class:`~spoilfive_env.core.SpoilFiveCore` per table size in
   ``--min-players..--max-players`` (``--num-games`` split evenly, so each game's table size
   is uniform over the range), stepped together; one network plays every size through the
   padded observation. Episodes are single hands under the equity reward.
2. **League.** Each hand draws a table kind by ``--league`` weights: ``self`` (every seat
   is the current policy) or an opponent kind (``snapshot``: a frozen past policy from the
   run's ``snapshots/``; ``spoiler``, ``greedy``, ``random``: the baselines of
   :mod:`agents`; ``opponent``: the agent ``--opponent`` names, any agent spec, e.g. a strong
   player's checkpoint); at an opponent table each seat is the current policy with probability
   ``--current-seats`` (at least one) and the opponent otherwise. Only current-policy seats
   are trained.
3. **Rollout.** Every game plays ``--hands-per-game`` hands (then waits for the others).
   Each (game, seat) is its own trajectory of that seat's decisions; decisions with a
   single legal action are played without the network and are not trajectory steps. The
   hand's equity reaches each seat's last decision. The rollout is one class,
   :class:`~spoilfive_integrations.selfplay.SelfPlayRollout`, run here or, with ``--ray
   [ADDRESS] --workers N``, by Ray actors each holding its share of the games, the learner
   staying here (``spoilfive_integrations/ray_training.py``; docs/training.md, "Scaling on Ray").
4. **Advantages.** GAE along each seat's trajectory (``--gamma``, ``--gae-lambda``); the
   critic is ``local`` (the seat's observation) or ``omniscient`` (it also sees every hand,
   as PerfectDou's does; training only).
5. **Update.** PPO with a clipped objective over ``--update-epochs`` passes of minibatches;
   bf16 autocast where the hardware has it (``--precision``).
6. **Watching.** A tqdm bar (decisions/s, last evaluation), TensorBoard scalars
   (``charts/``, ``losses/``, ``eval/``, ``time/``) and ``progress.csv`` under
   ``runs/<run name>/``; every ``--eval-every`` iterations an evaluation through
   :func:`agents.evaluate.evaluate` against tables of ``spoiler`` (one policy seat, duplicate
   deals, every rotation, 95% intervals); a learning-curve plot ``learning_curve.png`` at
   the end.
7. **Checkpoints.** ``checkpoint.pt`` (resumable: weights, optimizer, arguments,
   observation version, progress) and ``agent.pt`` (the same without the optimizer, what
   ``load_agent`` reads); ``--ship-as NAME`` copies ``agent.pt`` to
   ``agents/checkpoints/NAME.pt`` so that ``load_agent("NAME")`` finds it.

Decisions per second count every decision made at the tables (all seats, forced ones
included); ``trained`` counts the current policy's non-forced decisions, the PPO samples.
"""

import argparse
import ast
import contextlib
import copy
import csv
import dataclasses
import json
import math
import numbers
import os
import re
import shlex
import shutil
import signal
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

try:  # torch takes seconds to load: Ctrl-C then is one line and exit 130, as later on
    import numpy as np
    import torch
    from torch import nn

    from agents import CHECKPOINT_DIR, built_in_names, load_agent
    from agents.baselines import rules_backend
    from agents.evaluate import MAX_DEALS
    from agents.policy import (
        CRITICS,
        ENCODINGS,
        MAX_HIDDEN_LAYERS,
        CheckpointError,
        PolicyAgent,
        PolicyNet,
        checked_device,
        load_checkpoint,
        resolve_checkpoint,
        save_checkpoint,
    )
    from spoilfive_env.cards import MAX_PLAYERS, MIN_PLAYERS
    from spoilfive_env.cli import (
        MAX_COEF,
        MAX_LEARNING_RATE,
        ArgumentParser,
        SettingError,
        comma_items,
        install_hint,
        json_text,
        unwritable,
    )
    from spoilfive_env.core import physical_memory
    from spoilfive_env.observation import observation_backend
    from spoilfive_integrations.selfplay import (
        PRECISIONS,
        TABLE_KINDS,
        SelfPlayRollout,
        cpu_bf16,
        games_per_size,
        policy_net,
    )
    from spoilfive_integrations.selfplay import rollout_bytes as selfplay_rollout_bytes
except KeyboardInterrupt:
    print("train.py: stopped by Ctrl-C while starting up; nothing was run", file=sys.stderr)
    raise SystemExit(130) from None
except ModuleNotFoundError as error:  # torch or TensorBoard not installed: one line that says how, not a traceback
    if __name__ != "__main__":
        raise
    try:
        from spoilfive_env.cli import install_hint

        hint = install_hint("train")
    except ModuleNotFoundError:  # spoilfive's own dependencies are missing too: nothing of it is installed
        hint = 'install spoilfive from its checkout first (README, "Set up")'
    print(f"train.py: error: training needs {error.name}, which is not installed: {hint}", file=sys.stderr)
    raise SystemExit(2) from None


@dataclass
class Args:
    exp_name: str = "ppo"
    """name of the experiment; the run lives in runs/<exp_name>-s<seed> unless --run-name is given"""
    run_name: str = ""
    """explicit run directory name under --runs-dir (default <exp_name>-s<seed>)"""
    runs_dir: str = "runs"
    """folder holding the runs"""
    seed: int = 1
    """seed of everything: deals, league draws, network initialisation, action sampling"""
    device: str = "auto"
    """torch device: auto (cuda when present, else cpu), cpu, cuda, cuda:1, ..."""
    torch_threads: int = 0
    """torch CPU threads of the PPO update; 0: whichever of 1 and one per core updates faster, timed
    every 50 iterations (on a shared machine extra threads can be far slower). The rollout, which
    alternates with the environment's NumPy, always uses one (idle OpenMP workers spin on its core)"""
    precision: str = "auto"
    """bf16 or fp32 network arithmetic; auto: bf16 on CUDA and on CPUs with native bf16, else fp32"""
    total_decisions: int = 30_000_000
    """stop after this many decisions at the tables (all seats, forced ones included)"""
    time_limit: float = 0.0
    """also stop after this many minutes of training in this session, whichever comes first (0: no limit;
    with --resume: this many more minutes)"""
    min_players: int = 3
    """smallest table size trained"""
    max_players: int = 6
    """largest table size trained"""
    num_games: int = 4096
    """games stepped together, split evenly over the table sizes"""
    hands_per_game: int = 1
    """hands each game plays per rollout (a rollout ends when every game has played them)"""
    hidden: str = "256,256"
    """widths of the hidden layers of actor and critic"""
    critic: str = "local"
    """local (the critic sees the observation) or omniscient (it also sees every hand, as PerfectDou's
    does; training only): omniscient fits values better but gave no measurably stronger policy"""
    encoding: str = "canonical"
    """network input: canonical (card blocks in the trump's frame, see agents/policy.py) or raw"""
    learning_rate: float = 1e-3
    """Adam learning rate"""
    anneal_lr: bool = True
    """anneal the learning rate linearly over the run, down to a twentieth of it at the end"""
    gamma: float = 1.0
    """discount along a seat's decisions in a hand"""
    gae_lambda: float = 0.95
    """GAE lambda along a seat's decisions"""
    minibatch_size: int = 2048
    """decisions per PPO minibatch (a rollout splits into near-equal minibatches of about this size)"""
    update_epochs: int = 2
    """passes over each rollout's decisions (1 to 1,000)"""
    norm_adv: bool = True
    """normalise advantages within each minibatch"""
    clip_coef: float = 0.2
    """PPO clipping coefficient"""
    clip_vloss: bool = False
    """clip the value loss as CleanRL's PPO does (off: it slows the critic on rewards of several chips)"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    target_kl: float = 0.0
    """stop an update's epochs early past this approximate KL (0: never)"""
    league: str = "self=0.5,snapshot=0.2,spoiler=0.2,greedy=0.05,random=0.05"
    """weights of the table kinds drawn for each hand (self: every seat is the current policy; opponent: the
    --opponent agent)"""
    init_from: str = ""
    """start a new run from this checkpoint's network (a shipped name such as ppo, or a path): the run takes its
    --hidden, --critic and --encoding (giving other ones is refused); the optimizer and the counts start afresh"""
    opponent: str = ""
    """the agent of the league's opponent tables (give them a weight: --league ...,opponent=0.3): a name,
    name:key=value spec or checkpoint path, e.g. a strong player's checkpoint; it plays its seats as in a
    tournament (a search is slow: every one of its decisions is searched)"""
    current_seats: float = 0.5
    """at an opponent table, the chance that each seat is drawn the current policy; then one seat drawn at random
    is made it too (at least one is), so a seat is the current policy with chance p + (1 - p) / n at n players"""
    snapshot_every: int = 20
    """save a frozen snapshot of the policy for the league every this many iterations"""
    snapshot_sampling: str = "uniform"
    """how each iteration draws the snapshot of the league's snapshot tables: uniform, or pfsp (prioritised
    fictitious self-play: the snapshots the current policy does worst against come most often)"""
    pfsp_temperature: float = 0.1
    """with --snapshot-sampling pfsp: each snapshot is drawn with weight exp(-E / T), E the current policy's recent
    equity a hand at its tables (0 for one not played yet); at least 0.001, where the draw is already all on the
    weakest snapshot"""
    eval_every: int = 25
    """evaluate against spoiler tables every this many iterations (0: only at the end)"""
    eval_players: str = "3,4,5"
    """table sizes of the periodic evaluation against spoiler tables"""
    eval_deals: int = 300
    """deals per table size in a periodic evaluation (each played in every rotation)"""
    final_eval_deals: int = 1000
    """deals per table size in the evaluation at the end (0: skip)"""
    save_every: int = 25
    """write checkpoint.pt every this many iterations"""
    resume: bool = False
    """continue the run from runs/<run name>/checkpoint.pt with its own arguments; only what names the run
    (--run-name and --runs-dir, or --exp-name and --seed without --run-name), the stopping, device, thread,
    output, --eval-every, --final-eval-deals, --ray/--workers and --ship-as options may be given beside it
    (--total-decisions counts the whole run, --time-limit this session; --eval-deals and --eval-players stay the
    run's, so that its evaluations compare)"""
    ray: str | None = None
    """roll out on a Ray cluster: --ray alone starts a local one, --ray auto joins the one `ray start` made on this
    machine, --ray HOST:PORT joins that head node; the learner stays here (on the GPU when there is one)"""
    workers: int = 2
    """with --ray: rollout workers (Ray actors, one CPU each), each playing its share of --num-games"""
    ship_as: str = ""
    """at the end, copy agent.pt to agents/checkpoints/<ship_as>.pt (loadable as load_agent("<ship_as>"))"""
    replace_shipped: bool = False
    """with --ship-as: replace the checkpoint of that name already in agents/checkpoints/ (refused without it: the
    shipped agents live there, and best plays its rollouts with ppo)"""
    progress_bar: bool = True
    """show the tqdm progress bar"""
    json: bool = False
    """print the run's summary as JSON on standard output at the end (the plain-words report goes to
    standard error then)"""


# Options a resumed run may change when they are given; the rest come from the checkpoint.
RESUME_OVERRIDES = ("total_decisions", "time_limit", "device", "torch_threads", "ship_as", "replace_shipped",
                    "progress_bar", "eval_every", "final_eval_deals", "json", "resume")
RESUME_LOCATORS = ("run_name", "runs_dir", "exp_name", "seed")  # name the run to resume
PLACEMENT = ("ray", "workers")  # where the rollouts run: always this command's (a resumed run may change it)


CHOICES = {"precision": PRECISIONS, "critic": CRITICS, "encoding": ENCODINGS,
           "snapshot_sampling": ("uniform", "pfsp")}
MAX_SEED = 2**32 - 1  # the seed times 1_000_003 plus the iteration must fit torch's 64-bit generator seed
MAX_HIDDEN = 8192  # widest hidden layer accepted (a 8192 x 8192 layer is already 256 MB of fp32 weights)
# PPO takes a few passes (3 to 30 in the literature); one over the default rollout takes about a second, so more
# than this is over a quarter of an hour's update every iteration: a typo, not a setting.
MAX_UPDATE_EPOCHS = 1_000
# Equities a hand differ by hundredths of a chip between snapshots: at this temperature 0.01 chips is already a
# factor of e**10, so the draw is all on the weakest snapshot; far below it -E / T overflows (NaN chances).
MIN_PFSP_TEMPERATURE = 0.001
# (smallest, largest) allowed value of each numeric option; None: no bound on that side.
RANGES = {
    "seed": (0, MAX_SEED), "learning_rate": (0.0, MAX_LEARNING_RATE), "torch_threads": (0, os.cpu_count() or 1),
    "total_decisions": (1, None), "time_limit": (0.0, None),
    "min_players": (MIN_PLAYERS, MAX_PLAYERS), "max_players": (MIN_PLAYERS, MAX_PLAYERS),
    "num_games": (1, None), "hands_per_game": (1, None), "gamma": (0.0, 1.0), "gae_lambda": (0.0, 1.0),
    "minibatch_size": (1, None), "update_epochs": (1, MAX_UPDATE_EPOCHS), "clip_coef": (0.0, MAX_COEF),
    "ent_coef": (0.0, MAX_COEF), "vf_coef": (0.0, MAX_COEF), "max_grad_norm": (0.0, None), "target_kl": (0.0, None),
    "current_seats": (0.0, 1.0), "snapshot_every": (1, None), "eval_every": (0, None), "eval_deals": (1, MAX_DEALS),
    "final_eval_deals": (0, MAX_DEALS), "save_every": (1, None), "workers": (1, None),
    "pfsp_temperature": (MIN_PFSP_TEMPERATURE, None),
}
# A zero here would train nothing.
ABOVE_ZERO = ("learning_rate", "clip_coef", "max_grad_norm")
SHIP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def allowed_range(name: str) -> str:
    """What :data:`RANGES` allows of a numeric option, in words."""
    low, high = RANGES[name]
    if name in ABOVE_ZERO:
        return f"above {number(low)}" + (f", at most {number(high)}" if high is not None else "")
    return f"{number(low)} to {number(high)}" if high is not None else f"at least {number(low)}"


def number_type(name: str, kind: type):
    """The argparse type of a numeric option: ``kind`` (int or float) of the text, as argparse's own, but a text
    that is none is refused saying what is allowed; the range itself is held by :func:`check_args`, which
    checks a resumed run's saved values too."""
    def parse(text: str):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed: it must be "
                                             f"{'a whole number' if kind is int else 'a number'}, "
                                             f"{allowed_range(name)}") from None
    return parse


def number(value) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


MAX_NAME = 200
"""The longest --run-name or --exp-name: it names a folder, and most file systems stop at 255 bytes
(the run name adds the seed to the experiment's)."""


def int_list(option: str, text: str, low: int, high: int) -> list[int]:
    """Comma-separated integers in ``low..high`` (at least one), or ``ValueError`` naming the option."""
    parts = [part.strip() for part in text.split(",")]
    if text.strip() and not all(parts):
        raise ValueError(f"{flag(option)} {text!r}: an empty item; give comma-separated whole numbers")
    try:
        values = [int(part) for part in parts if part]
    except ValueError:
        raise ValueError(f"{flag(option)} {text!r}: give comma-separated whole numbers") from None
    if not values:
        raise ValueError(f"{flag(option)} {text!r}: give at least one number")
    bad = [v for v in values if not low <= v <= high]
    if bad:
        raise ValueError(f"{flag(option)} {text!r}: {bad[0]} is not allowed, each must be {low} to {high}")
    return values


def check_device(name: str) -> torch.device:
    """The torch device ``--device`` names, or ``ValueError`` when this machine has no such device."""
    if name == "auto":
        return resolve_device(name)
    return checked_device(name, "--device", "auto, cpu, cuda, cuda:N or mps")


def rollout_bytes(args: Args) -> int:
    """An upper bound on one rollout's memory (:func:`spoilfive_integrations.selfplay.rollout_bytes`, which a
    rollout worker checks too)."""
    return selfplay_rollout_bytes(args.num_games, range(args.min_players, args.max_players + 1), args.hands_per_game)


def network_arguments(net) -> dict:
    """The --hidden, --critic and --encoding that build ``net``, written as this command's arguments."""
    return {"hidden": ",".join(map(str, net.hidden)), "critic": net.critic_kind, "encoding": net.encoding}


def check_args(args: Args, given: Collection[str] = ()) -> None:
    """Check every option at once, before any work starts. ``given``: the options named on the command line
    (:func:`parse_command_line`), where a default value given by hand can be as idle as another.

    Raises:
        ValueError: the first option that is not allowed, naming it, its value and what is allowed.
    """
    for name, choices in CHOICES.items():
        if getattr(args, name) not in choices:
            raise ValueError(f"{flag(name)} {getattr(args, name)!r} is not allowed: choose one of {', '.join(choices)}")
    for name, (low, high) in RANGES.items():
        value = getattr(args, name)
        finite = isinstance(value, int) or math.isfinite(value)  # a huge int is no float: isfinite would overflow
        if not (finite and (low is None or value >= low) and (high is None or value <= high)) \
                or (name in ABOVE_ZERO and value <= 0):
            finite = "" if finite else "a finite number, "
            raise ValueError(f"{flag(name)} {value} is not allowed: it must be {finite}{allowed_range(name)}")
    if args.min_players > args.max_players:
        raise ValueError(f"--min-players {args.min_players} is above --max-players {args.max_players}")
    sizes = args.max_players - args.min_players + 1
    if args.num_games < sizes:
        raise ValueError(f"--num-games {args.num_games} is not allowed: it must be at least {sizes}, "
                         f"one game per table size {args.min_players}-{args.max_players}")
    layers = int_list("hidden", args.hidden, 1, MAX_HIDDEN)
    if len(layers) > MAX_HIDDEN_LAYERS:  # a checkpoint of more is refused by every loader, this one's resume too
        raise ValueError(f"{flag('hidden')} {args.hidden!r}: {len(layers)} layers are not allowed, give 1 to "
                         f"{MAX_HIDDEN_LAYERS}")
    eval_sizes = int_list("eval_players", args.eval_players, MIN_PLAYERS, MAX_PLAYERS)
    if len(set(eval_sizes)) != len(eval_sizes):
        raise ValueError(f"{flag('eval_players')} {args.eval_players!r}: give distinct table sizes")
    league = parse_weights(args.league)
    if args.snapshot_sampling == "uniform" and (args.pfsp_temperature != Args.pfsp_temperature
                                                or ("pfsp_temperature" in given and not args.resume)):
        raise ValueError(f"--pfsp-temperature {args.pfsp_temperature:g} would change nothing: it weighs the snapshots "
                         "drawn by --snapshot-sampling pfsp")
    if args.snapshot_sampling == "pfsp" and not league[TABLE_KINDS.index("snapshot")] > 0:
        raise ValueError(f"--snapshot-sampling pfsp would draw nothing: --league {args.league!r} plays no snapshot "
                         "tables; give them a weight, snapshot=W")
    opponent_weight = league[TABLE_KINDS.index("opponent")]
    if opponent_weight > 0 and not args.opponent:
        raise ValueError(f"--league {args.league!r} draws opponent tables: name their agent with --opponent SPEC")
    if args.opponent:
        if not opponent_weight > 0:
            raise ValueError(f"--opponent {args.opponent!r} would play no table: give it a weight, "
                             f"--league {args.league},opponent=W")
        try:
            opponent = load_agent(args.opponent, seed=0)
        except (ValueError, ImportError) as error:
            raise ValueError(f"--opponent: {error}") from None
        if getattr(opponent, "cheats", False):
            raise ValueError(f"--opponent {args.opponent!r}: it cheats (it reads every hand), so it is for "
                             "measurement only, never an opponent in training")
    if not args.run_name and not args.exp_name:
        raise ValueError("--exp-name is empty: give a name (or --run-name)")
    for name in ("run_name", "exp_name"):
        text = getattr(args, name)
        if os.sep in text or (os.altsep and os.altsep in text) or text in (".", ".."):
            raise ValueError(f"{flag(name)} {text!r} is not allowed: a name, not a path (see --runs-dir)")
        if text and (text != text.strip() or len(text) > MAX_NAME):
            raise ValueError(f"{flag(name)} {text!r} is not allowed: a name without spaces at either end, "
                             f"at most {MAX_NAME} characters (it names a folder)")
    if not args.runs_dir.strip():
        raise ValueError(f"--runs-dir {args.runs_dir!r} is empty: give a folder (default runs)")
    for name in ("run_name", "exp_name", "runs_dir"):  # the run's agent.pt is given to --agents lists, split at ','
        if "," in getattr(args, name) and not args.resume:  # a run made before 0.5.0 resumes as it is
            raise ValueError(f"{flag(name)} {getattr(args, name)!r} is not allowed: no ',' (the run's agent.pt "
                             "goes into comma-separated --agents lists, as in the evaluate command it prints)")
    needed, memory = rollout_bytes(args), physical_memory()
    if memory and needed > memory:
        gib = (needed + 2**29) // 2**30  # in whole numbers: a huge count overflows a float
        raise ValueError(f"--num-games {args.num_games} with --hands-per-game {args.hands_per_game} needs about "
                         f"{gib:,} GiB for one rollout, and this machine has {memory / 2**30:.0f} GiB: "
                         "give fewer games or hands")
    if args.replace_shipped and not args.ship_as:
        raise ValueError("--replace-shipped is for --ship-as: add --ship-as NAME (the checkpoint it may replace), "
                         "or leave --replace-shipped out")
    if args.ship_as:
        if not SHIP_NAME.fullmatch(args.ship_as) or args.ship_as.endswith(".pt"):
            raise ValueError(f"--ship-as {args.ship_as!r} is not allowed: a name of letters, digits, '_', '-' "
                             "and '.', without .pt (it becomes agents/checkpoints/NAME.pt)")
        taken = built_in_names()
        if args.ship_as in taken:
            raise ValueError(f"--ship-as {args.ship_as!r} is not allowed: it is a built-in agent's name "
                             f"({', '.join(taken)}), which load_agent would pick first")
        # asked on this command (a resumed run keeps its saved --ship-as, whose target the run's end looks at again)
        if "ship_as" in given and os.path.lexists(CHECKPOINT_DIR / f"{args.ship_as}.pt") and not args.replace_shipped:
            raise ValueError(f"--ship-as {args.ship_as!r}: agents/checkpoints/{args.ship_as}.pt is already there "
                             "(the shipped agents live in that folder, and best plays its rollouts with ppo): give "
                             "a new name, or add --replace-shipped to replace it")
    device = check_device(args.device)
    if args.precision == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise ValueError(f"--precision bf16: {device} has no bf16 arithmetic; use fp32 or auto")


ARG_KINDS = {str: "text", int: "a whole number", float: "a number with a decimal point", bool: "True or False"}
PROGRESS_COUNTS = ("iteration", "decisions", "trained")  # with "seconds" and "snapshot_equity", all a run keeps
ADAM_STATE = {"step", "exp_avg", "exp_avg_sq"}


def resume_problem(resumed: dict, net: PolicyNet) -> str | None:
    """What makes the loaded ``checkpoint.pt`` of a run unfit to resume (a file edited, or of another program),
    in words, or None: found now, not as a traceback hours in, nor trained on. The saved arguments must have
    the types of :class:`Args` (their values then pass :func:`check_args`), the progress the counts the run
    reads, and the optimizer state must load into train.py's Adam over ``net``'s parameters, with finite state
    tensors of their shapes."""
    saved, progress, optimizer = resumed.get("args"), resumed.get("progress"), resumed.get("optimizer")
    if optimizer is None or not isinstance(saved, dict):
        return "no optimizer state or arguments"
    for field in dataclasses.fields(Args):
        value = saved.get(field.name, field.default)
        if not isinstance(value, field.type) or (isinstance(value, bool) and field.type is not bool):
            return f"its saved {flag(field.name)} is {value!r}, not {ARG_KINDS.get(field.type, field.type)}"
    if not isinstance(progress, dict):
        return f"its progress is a {type(progress).__name__}, not a dict of counts" if progress is not None \
            else "no progress"
    unknown = [key for key in progress if key not in (*PROGRESS_COUNTS, "seconds", "snapshot_equity")]
    if unknown:
        return f"its progress holds {unknown[0]!r}, which train.py does not keep"
    for name in PROGRESS_COUNTS:
        value = progress.get(name)
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
            return f"its progress {name} is {value!r}, not a whole number of at least 0"
    seconds = progress.get("seconds")
    if not isinstance(seconds, numbers.Real) or isinstance(seconds, bool) or not 0 <= seconds < math.inf:
        return f"its progress seconds is {seconds!r}, not a finite number of at least 0"
    equities = progress.get("snapshot_equity", {})
    if not isinstance(equities, dict) or not all(
            isinstance(name, str) and isinstance(equity, numbers.Real) and not isinstance(equity, bool)
            and math.isfinite(equity) for name, equity in equities.items()):
        return "its progress snapshot_equity does not map snapshot file names to finite numbers"
    if not (isinstance(optimizer, dict) and isinstance(optimizer.get("state"), dict)
            and isinstance(optimizer.get("param_groups"), list)
            and all(isinstance(state, dict) and all(map(torch.is_tensor, state.values()))
                    for state in optimizer["state"].values())):
        return "its optimizer state is not a dict of state (tensors by parameter) and param_groups"
    params = list(net.parameters())
    probe = torch.optim.Adam(params, eps=1e-5)  # as train.py builds it (a throwaway: net is not the run's)
    built = dict(probe.param_groups[0])
    try:
        probe.load_state_dict(optimizer)
    except Exception as error:  # torch raises several kinds on a malformed state, each saying what does not fit
        return f"its optimizer state does not load ({type(error).__name__}: {error})"
    group = probe.param_groups[0]
    for key, value in built.items():  # the learning rate is annealed, fused is the device's; the rest are fixed
        loaded = group.get(key)
        if key == "lr" and not (isinstance(loaded, float) and 0 < loaded <= MAX_LEARNING_RATE):
            return f"its optimizer's learning rate is {loaded!r}, not a number above 0, at most {MAX_LEARNING_RATE:g}"
        if key == "fused" and not isinstance(loaded, bool | None):
            return f"its optimizer's fused is {loaded!r}, not True, False or None"
        if key not in ("params", "lr", "fused") and not (type(loaded) is type(value) and loaded == value):
            return f"its optimizer's {key} is {loaded!r}, where train.py's Adam has {value!r}"
    for index, param in enumerate(params):
        state = probe.state.get(param, {})
        if not state:  # Adam makes a parameter's state at its first step
            continue
        if set(state) != ADAM_STATE:
            return (f"the optimizer state of parameter {index} holds {', '.join(map(str, state))}, not "
                    f"{', '.join(sorted(ADAM_STATE))}")
        step = state["step"]
        if not (step.numel() == 1 and not step.is_complex() and torch.isfinite(step).all() and step.item() >= 0):
            return f"the optimizer step of parameter {index} is {step!r}, not one finite count"
        for key in ("exp_avg", "exp_avg_sq"):
            tensor = state[key]
            if not (torch.is_tensor(tensor) and tensor.is_floating_point() and tensor.shape == param.shape
                    and torch.isfinite(tensor).all()):
                return (f"the optimizer's {key} of parameter {index} is not a finite float tensor of shape "
                        f"{tuple(param.shape)}")
    return None


def parse_args(argv=None) -> Args:
    """Command-line options from the fields of :class:`Args`; each field's docstring is its help.
    Every option is checked (:func:`check_args`) before this returns; a bad one ends the command
    with one line and exit status 2."""
    return parse_command_line(argv)[0]


def parse_command_line(argv=None) -> tuple[Args, set[str]]:
    """:func:`parse_args`, and the names of the options given on the command line (a resumed run
    takes only those of :data:`RESUME_OVERRIDES` from it)."""
    tree = ast.parse(Path(__file__).read_text())
    body = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Args").body
    helps = {}
    for node, following in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(following, ast.Expr) \
                and isinstance(following.value, ast.Constant):
            helps[node.target.id] = following.value.value
    parser = ArgumentParser(prog="train.py", description=__doc__.split("\n\n")[0],
                            formatter_class=DefaultsHelpFormatter)
    for field in dataclasses.fields(Args):
        if field.type is bool:
            parser.add_argument(flag(field.name), action=argparse.BooleanOptionalAction, default=field.default,
                                help=helps.get(field.name))
        elif field.name == "ray":  # --ray alone: a local cluster
            parser.add_argument(flag(field.name), nargs="?", const="", default=None, metavar="ADDRESS",
                                help=helps.get(field.name))
        else:
            kind = number_type(field.name, field.type) if field.name in RANGES else field.type
            parser.add_argument(flag(field.name), type=kind, default=field.default, help=helps.get(field.name),
                                choices=CHOICES.get(field.name))
    words = sys.argv[1:] if argv is None else [str(word) for word in argv]
    if any(word == "--players" or word.startswith("--players=") for word in words):  # what agents.evaluate takes
        parser.error("--players is not an option of train.py: it trains at every table size from --min-players to "
                     f"--max-players ({Args.min_players} to {Args.max_players} by default); give those")
    unset = object()  # argparse fills in a default only where the namespace has no value yet
    parsed = vars(parser.parse_args(argv, argparse.Namespace(**{f.name: unset for f in dataclasses.fields(Args)})))
    given = {name for name, value in parsed.items() if value is not unset}
    args = Args(**{name: value for name, value in parsed.items() if value is not unset})
    try:
        check_args(args, given)
    except ValueError as error:
        parser.error(str(error))
    if "workers" in given and "ray" not in given:
        parser.error("--workers is for --ray: add --ray [ADDRESS] (rollout workers on a Ray cluster), "
                     "or leave --workers out to roll out in this process")
    # --exp-name and --seed name the run only without --run-name; beside it they would be ignored.
    locators = RESUME_LOCATORS[:2] if "run_name" in given else RESUME_LOCATORS
    fixed = sorted(given - set(RESUME_OVERRIDES) - set(locators) - set(PLACEMENT)) if args.resume else []
    if fixed:
        named = "; --run-name names it" if set(fixed) & set(RESUME_LOCATORS) else ""
        parser.error(f"{flag(fixed[0])} cannot change when resuming (the run keeps its own{named}); with --resume "
                     f"give only {', '.join(map(flag, RESUME_OVERRIDES[:-1] + locators + PLACEMENT))}")
    return args, given


def parse_weights(text: str) -> np.ndarray:
    """``--league`` text (``KIND=WEIGHT,...``) as probabilities over :data:`TABLE_KINDS`."""
    weights = np.zeros(len(TABLE_KINDS))
    given = set()
    try:
        items = comma_items(text)
    except ValueError:  # "self=1,,greedy=1": a weight left out, not one to skip
        raise ValueError(f"--league {text!r}: an empty item; give comma-separated KIND=WEIGHT items, "
                         "e.g. self=0.5,spoiler=0.5") from None
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name.strip() not in TABLE_KINDS:
            raise ValueError(f"--league item {item!r} must be KIND=WEIGHT with KIND one of {', '.join(TABLE_KINDS)}")
        if name.strip() in given:
            raise ValueError(f"--league {text!r}: {name.strip()} is given more than once; give each kind once")
        given.add(name.strip())
        try:
            weights[TABLE_KINDS.index(name.strip())] = float(value)
        except ValueError:
            raise ValueError(f"--league item {item!r}: the weight {value.strip()!r} is not a number") from None
    if not np.isfinite(weights).all() or (weights < 0).any() or weights.max() <= 0:
        raise ValueError(f"--league {text!r}: weights must be non-negative and not all zero")
    weights = weights / weights.max()  # first: a sum of huge weights would overflow to inf
    return weights / weights.sum()


SNAPSHOT_NAME = re.compile(r"iter_(\d+)\.pt")
"""A league snapshot's file name in a run's ``snapshots/``: ``iter_`` and the iteration that saved it."""


def snapshot_path(snapshot_dir: Path, iteration: int) -> Path:
    return snapshot_dir / f"iter_{iteration:06d}.pt"


def snapshot_iteration(path: Path) -> int | None:
    """The iteration that saved a league snapshot, from its name; None for a file that is not one (a copy
    kept beside them, ``iter_best.pt``): such a file is left alone, never drawn."""
    match = SNAPSHOT_NAME.fullmatch(path.name)
    return int(match[1]) if match else None


def league_snapshots(snapshot_dir: Path, up_to: int | None = None) -> list[Path]:
    """The league's snapshot files in the order they were saved, those saved up to iteration ``up_to`` if given."""
    found = [(snapshot_iteration(path), path) for path in snapshot_dir.glob("iter_*.pt")]
    return [path for iteration, path in sorted((iteration, path) for iteration, path in found
                                               if iteration is not None and (up_to is None or iteration <= up_to))]


PFSP_MEMORY = 0.5
"""How far one iteration's equity against a snapshot moves the running figure that --snapshot-sampling pfsp
weighs it by: the current policy keeps changing, so older figures count less."""


def pfsp_probabilities(equities, temperature: float) -> np.ndarray:
    """Prioritised fictitious self-play (AlphaStar's PFSP, with the equity a hand in place of a win rate):
    each snapshot's chance of being drawn, ``exp(-E / temperature)`` normalised, where ``E`` is the
    current policy's equity at that snapshot's tables. The snapshots it does worst against come most often."""
    logits = -np.asarray(equities, np.float64) / temperature
    weights = np.exp(logits - logits.max())  # the largest is 1: no overflow at any temperature
    return weights / weights.sum()


def draw_snapshot(snapshots: list, iteration: int, args: Args, equity_against: dict):
    """The snapshot that this iteration's snapshot tables play: drawn uniformly, or by
    :func:`pfsp_probabilities` over ``equity_against`` (file name -> running equity; 0 for one not yet played)."""
    rng = np.random.default_rng([args.seed, iteration, 7])
    if args.snapshot_sampling == "uniform":
        return snapshots[rng.integers(len(snapshots))]
    chances = pfsp_probabilities([equity_against.get(path.name, 0.0) for path in snapshots], args.pfsp_temperature)
    return snapshots[rng.choice(len(snapshots), p=chances)]


def seat_gae(values, reward, next_row, step_offsets, gamma: float, lam: float) -> np.ndarray:
    """GAE along each seat's own trajectory.

    Rows are decisions in the order they were made; ``next_row[i]`` is the same seat's next
    decision in the same hand (always a later row) or -1 after its last one, which carries
    the hand's reward and has no successor. ``step_offsets`` cut the rows into rollout steps,
    so a backward sweep over steps sees every successor before its predecessor.
    """
    has_next = next_row >= 0
    safe_next = np.maximum(next_row, 0)
    delta = reward + gamma * np.where(has_next, values[safe_next], 0.0) - values
    advantages = np.zeros(len(values), np.float32)
    for a, b in zip(step_offsets[-2::-1], step_offsets[:0:-1]):  # steps, last first
        follow = np.where(has_next[a:b], advantages[safe_next[a:b]], 0.0)
        advantages[a:b] = delta[a:b] + gamma * lam * follow
    return advantages


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def use_bf16(precision: str, device: torch.device) -> bool:
    if precision not in ("auto", "bf16", "fp32"):
        raise ValueError(f"--precision {precision!r}: choose auto, bf16 or fp32")
    if precision == "auto" and device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return cpu_bf16(precision)


def evaluate_against_spoilers(net: PolicyNet, sizes: list[int], deals: int, seed: int, device) -> dict:
    """One policy seat against a table of spoilers at each size (agents.evaluate)."""
    from agents.evaluate import evaluate

    # played as agent.pt will be when loaded: the dense product, not training's sparse one (the same moves to the bit)
    acting = copy.deepcopy(net).use_sparse_inputs(False)
    agent = PolicyAgent(acting, seed=seed, greedy=True, name="policy", device=device)
    results = {}
    for n in sizes:
        report = evaluate([agent, "spoiler"], num_players=n, deals=deals, seed=seed)
        me = report["agents"]["policy"]
        results[n] = {
            "pool_share": me["pool_share"], "pool_share_ci95": me["pool_share_ci95"],
            "fair_share": me["fair_share"], "equity": me["mean_equity"], "equity_ci95": me["equity_ci95"],
            "spoil_rate": report["table"]["spoil_rate"],
        }
    return results


def plot_learning_curve(csv_path: Path, png_path: Path) -> bool:
    """Plot ``progress.csv`` into ``png_path``; False (nothing written) when it has no iteration yet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(csv_path) as f:
        rows = [r for r in csv.DictReader(f)]
    if not rows:
        return False
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    decisions = np.array([float(r["decisions"]) for r in rows]) / 1e6
    sizes = sorted({int(k.split("_")[1][:-1]) for k in rows[0] if k.startswith("eval_") and k.endswith("_share")}
                   if any(k.startswith("eval_") for k in rows[0]) else [])
    for n in sizes:
        have = [i for i, r in enumerate(rows) if r.get(f"eval_{n}p_share")]
        if not have:
            continue
        x = decisions[have]
        share = np.array([float(rows[i][f"eval_{n}p_share"]) - 1.0 / n for i in have]) * 100
        share_ci = np.array([float(rows[i][f"eval_{n}p_share_ci"]) for i in have]) * 100
        equity = np.array([float(rows[i][f"eval_{n}p_equity"]) for i in have])
        equity_ci = np.array([float(rows[i][f"eval_{n}p_equity_ci"]) for i in have])
        line, = ax1.plot(x, share, marker="o", label=f"{n} players")
        ax1.fill_between(x, share - share_ci, share + share_ci, color=line.get_color(), alpha=0.2)
        ax2.plot(x, equity, marker="o", color=line.get_color(), label=f"{n} players")
        ax2.fill_between(x, equity - equity_ci, equity + equity_ci, color=line.get_color(), alpha=0.2)
    evaluated = bool(ax1.lines)
    if not evaluated:  # stopped before the first evaluation: the training tables' equity instead
        for kind in TABLE_KINDS[1:]:
            have = [i for i, r in enumerate(rows) if r.get(f"equity_vs_{kind}")]
            if have:
                ax2.plot(decisions[have], [float(rows[i][f"equity_vs_{kind}"]) for i in have], label=kind)
        ax1.text(0.5, 0.5, "no evaluation yet", ha="center", va="center", transform=ax1.transAxes)
    for ax, title in ((ax1, "share of won pools above fair share (points)"),
                      (ax2, "mean equity per hand (chips)")):
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel("decisions (millions)")
        ax.set_title(f"one policy seat vs spoiler tables: {title}" if evaluated or ax is ax1 else
                     f"training, by opponent kind: {title}", fontsize=9)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return True


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's defaults in the help, but not an empty one: "(default: )" says nothing."""

    def _get_help_string(self, action):
        return action.help if action.default in ("", None) else super()._get_help_string(action)


def fail(message: str):
    """End the command before any work: one line on standard error, exit status 2."""
    print(f"train.py: error: {message}", file=sys.stderr)
    raise SystemExit(2)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What stops a run at the next safe point: Ctrl-C, and the SIGTERM of ``kill``, ``docker stop``, ``timeout`` or a
cluster's pre-emption (whose default would lose everything since the last checkpoint, or the whole run before
its first one)."""


def signal_words(signum) -> str:
    """How a run's messages name the signal that stopped it."""
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


def stop_status(words: str) -> int:
    """The exit status of a run stopped by the signal :func:`signal_words` named: 128 plus its number, as a shell
    gives a command that signal ended (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + (signal.SIGINT if words == "Ctrl-C" else signal.Signals[words])


class StopSignals:
    """While entered, :data:`STOP_SIGNALS` go to ``self._handle``; the handlers before come back on leaving (an
    error included). Outside the main thread, where Python cannot set handlers, it does nothing."""

    def __enter__(self):
        self.previous = {}
        if threading.current_thread() is threading.main_thread():
            self.previous = {signum: signal.signal(signum, self._handle) for signum in STOP_SIGNALS}
        return self

    def _handle(self, signum, frame):
        raise NotImplementedError

    def __exit__(self, *exc):
        for signum, previous in self.previous.items():
            signal.signal(signum, previous)
        return False


class InterruptOnStop(StopSignals):
    """Ctrl-C or SIGTERM raise ``KeyboardInterrupt`` at once while it is entered, ``signum`` saying which: for
    work with no safe point to stop at (the final check), which a stop skips."""

    def __init__(self):
        self.signum = signal.SIGINT

    def _handle(self, signum, frame):
        self.signum = signum
        raise KeyboardInterrupt


class QuitAtOnce(KeyboardInterrupt):
    """A second stop, which quits at once; ``signum`` is its signal, for the command's exit status (130, or 143 for
    SIGTERM)."""

    def __init__(self, signum):
        super().__init__()
        self.signum = signum


class StopRequest(StopSignals):
    """Ctrl-C (or SIGTERM) while training: the first asks the loop to stop at the next safe point (a rollout
    step, or the end of the update in progress) and save; a second one quits at once (``KeyboardInterrupt``).
    ``signum`` is the signal that asked (the command exits with 128 plus it: 130 for Ctrl-C, 143 for SIGTERM)."""

    def __init__(self, say):
        self.requested = False
        self.signum = None
        self.say = say

    def _handle(self, signum, frame):
        if self.requested:
            raise QuitAtOnce(signum)
        self.requested, self.signum = True, signum
        words = signal_words(signum)
        again = "press Ctrl-C again" if signum == signal.SIGINT else f"send {words} again"
        self.say(f"{words}: stopping at the next safe point to save a resumable checkpoint "
                 f"({again} to quit without saving)")


def shell_words(*words) -> str:
    return " ".join(shlex.quote(str(w)) for w in words)


def option_words(name: str, value) -> tuple:
    """An option ``name`` and its ``value`` as words of a printed command: ``--name=value`` where the value starts
    with '-', which argparse would otherwise read as an option (a run named ``-1-s1``, a folder ``-runs``)."""
    return (f"{name}={value}",) if str(value).startswith("-") else (name, value)


def main(argv=None) -> dict:
    """Train (see the module docstring). Returns the run's summary (``summary.json``); its
    ``"interrupted"`` is true when Ctrl-C or SIGTERM stopped the run, ``"stopped_by"`` says which (the command then
    exits 130 or 143)."""
    with contextlib.ExitStack() as release:  # Ray rollout workers are let go however the run ends, an error included
        return run_training(argv, release)


def run_training(argv, release: contextlib.ExitStack) -> dict:
    """:func:`main`'s run; what it starts outside this process it hands to ``release`` to stop."""
    args, given = parse_command_line(argv)
    try:  # the compiled kernels, as SPOILFIVE_OBSERVATION and SPOILFIVE_RULES ask: a bad one is said before any work
        observation_backend(), rules_backend()
    except SettingError as error:
        fail(str(error))
    run_name = args.run_name or f"{args.exp_name}-s{args.seed}"
    run_dir = Path(args.runs_dir) / run_name
    why = unwritable(run_dir, folder=True)  # asked now, before a Ray cluster or a checkpoint is loaded
    if why:
        fail(f"--runs-dir {args.runs_dir!r}: the run's folder {run_dir} cannot be written: {why}")
    checkpoint_path = run_dir / "checkpoint.pt"
    progress = {"iteration": 0, "decisions": 0, "trained": 0, "seconds": 0.0}
    resumed = None
    resume_words = ["python", "train.py", *option_words("--run-name", run_name), "--resume"]
    if args.runs_dir != Args.runs_dir:
        resume_words[2:2] = option_words("--runs-dir", args.runs_dir)
    if args.resume:
        if not checkpoint_path.is_file():
            fail(f"--resume: no checkpoint at {checkpoint_path} (run name {run_name!r}; "
                 "give the run's --run-name, or its --exp-name and --seed)")
        try:
            saved_net, resumed = load_checkpoint(checkpoint_path)
        except CheckpointError as error:
            fail(f"--resume: {error}")
        problem = resume_problem(resumed, saved_net)
        if problem:
            fail(f"--resume: {checkpoint_path} is not a resumable checkpoint ({problem})")
        saved = resumed["args"]
        known = {f.name for f in dataclasses.fields(Args)}
        args = Args(**{**{k: v for k, v in saved.items() if k in known},
                       **{k: getattr(args, k) for k in RESUME_OVERRIDES if k in given},
                       "run_name": run_name, "runs_dir": args.runs_dir,  # where it was found, now
                       **{k: getattr(args, k) for k in PLACEMENT}})
        try:
            check_args(args)
        except ValueError as error:
            fail(f"--resume: {error}")
        network = network_arguments(saved_net)
        given_shape = {"hidden": ",".join(map(str, int_list("hidden", args.hidden, 1, MAX_HIDDEN))),
                       "critic": args.critic, "encoding": args.encoding}
        for name, value in network.items():  # an edited or mixed-up file: its arguments name another network
            if given_shape[name] != value:
                fail(f"--resume: {checkpoint_path} does not fit its own arguments: they give {flag(name)} "
                     f"{getattr(args, name)}, its network has {flag(name)} {value}")
        progress.update(resumed["progress"])
        if progress["decisions"] >= args.total_decisions:
            fail(f"--resume: the run already has {progress['decisions']:,} decisions, and --total-decisions is "
                 f"{args.total_decisions:,} in all: give a larger --total-decisions to train on")
    elif checkpoint_path.exists():
        fail(f"{run_dir} already holds a run: pass --resume to continue it, or --run-name/--seed for a new one")
    elif (run_dir / "agent.pt").exists():  # a new run would overwrite it, its table and its summary
        fail(f"{run_dir} already holds a run's agent.pt (without its checkpoint.pt, so it cannot be resumed): "
             "give --run-name/--seed for a new run, or move the folder aside")
    csv_path = run_dir / "progress.csv"
    kept = []  # the rows of a resumed run up to its checkpoint (those logged after it are dropped)
    if resumed is not None and csv_path.exists():
        try:
            with open(csv_path) as f:
                kept = [r for r in csv.DictReader(f) if int(r["iteration"]) <= progress["iteration"]]
        except (OSError, ValueError, KeyError, TypeError, csv.Error) as error:
            fail(f"--resume: {csv_path} is not a progress table train.py wrote ({type(error).__name__}: {error}): "
                 "move it aside to resume with a new one")
    snapshot_dir = run_dir / "snapshots"
    if resumed is not None:  # a league snapshot is drawn at random: one that does not load would stop the run hours in
        for path in league_snapshots(snapshot_dir):
            try:
                snapshot_net, _ = load_checkpoint(path)
            except CheckpointError as error:
                fail(f"--resume: league snapshot {error}; move it out of {snapshot_dir} to resume without it")
            found = network_arguments(snapshot_net)
            if found != network:
                name = next(name for name in network if found[name] != network[name])
                fail(f"--resume: league snapshot {path} is of another network: it has {flag(name)} {found[name]}, the "
                     f"run's network {flag(name)} {network[name]}; move it out of {snapshot_dir} to resume without it")
    elif league_snapshots(snapshot_dir):  # left by a run stopped before its first checkpoint
        fail(f"{run_dir} already holds league snapshots of an earlier run (without its checkpoint.pt, so it cannot "
             "be resumed): give --run-name/--seed for a new run, or move the folder aside")
    initial = None  # --init-from: the network a new run starts from
    if args.init_from and resumed is None:  # a resumed run has its own weights
        try:
            initial, _ = load_checkpoint(resolve_checkpoint(args.init_from))
        except CheckpointError as error:
            fail(f"--init-from: {error}")
        shape = network_arguments(initial)
        for name, value in shape.items():
            if name in given and str(getattr(args, name)).replace(" ", "") != value:
                fail(f"{flag(name)} {getattr(args, name)} does not fit --init-from {args.init_from}: its network has "
                     f"{flag(name)} {value} (leave {flag(name)} out to take it)")
        args = dataclasses.replace(args, **shape)
    workers = None  # --ray: the rollout workers (Ray actors), before any other work
    if args.ray is not None:
        try:
            from spoilfive_integrations.ray_training import RolloutWorkers
        except ImportError as error:
            fail(f"--ray needs Ray ({error}): {install_hint('ray')}")
        try:
            workers = RolloutWorkers(dataclasses.asdict(args), parse_weights(args.league), args.workers, args.ray,
                                     say=lambda text: print(text, file=sys.stderr, flush=True),
                                     bf16_obs=use_bf16(args.precision, resolve_device(args.device)))
        except ValueError as error:
            fail(str(error))
        release.callback(workers.close)
    try:
        snapshot_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        fail(f"cannot create the run directory {run_dir}: {error.strerror or error}")

    # ---- seeding, device, threads
    out = sys.stderr if args.json else sys.stdout  # the words; --json keeps standard output for the JSON

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    device = resolve_device(args.device)
    bf16 = use_bf16(args.precision, device)
    cores = os.cpu_count() or 1
    auto_threads = not args.torch_threads and cores > 1
    thread_time = {}  # update seconds per decision and epoch, by torch threads (auto threads)
    next_probe = progress["iteration"] + 1  # probe 1 thread, then all cores, every 50 iterations
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # nothing here uses it; third-party code might
    league = parse_weights(args.league)

    # ---- network, optimizer
    net = policy_net(dataclasses.asdict(args)).to(device)
    if initial is not None:
        net.load_state_dict(initial.state_dict())
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5,
                                 fused=device.type in ("cpu", "cuda"))
    if resumed is not None:
        net.load_state_dict(resumed["state_dict"])
        optimizer.load_state_dict(resumed["optimizer"])
    # ---- the rollout: the tables (one core per size), the league, the current policy acting
    # (spoilfive_integrations/selfplay.py); in this process, or shares of the games on Ray workers
    rollout = SelfPlayRollout(dataclasses.asdict(args), league, device=device, bf16=bf16, net=net) \
        if workers is None else None
    omniscient = args.critic == "omniscient"
    autocast = lambda: torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16)  # noqa: E731

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run_dir))
    if resumed is None:
        writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" +
                        "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()))
        (run_dir / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    eval_sizes = int_list("eval_players", args.eval_players, MIN_PLAYERS, MAX_PLAYERS)  # checked in check_args
    csv_fields = (["iteration", "decisions", "trained", "seconds", "decisions_per_s", "trained_per_s",
                   "learning_rate", "value_loss", "policy_loss", "entropy", "approx_kl", "clipfrac",
                   "explained_variance", "hands", "self_spoil_rate"]
                  + [f"equity_vs_{k}" for k in TABLE_KINDS[1:]] + ["snapshot"]
                  + [f"eval_{n}p_{m}" for n in eval_sizes for m in ("share", "share_ci", "equity", "equity_ci")])
    with open(csv_path, "w", newline="") as f:
        table = csv.DictWriter(f, csv_fields, extrasaction="ignore")
        table.writeheader()
        table.writerows(kept)

    def snapshot_files():
        # Up to the run's own iteration: a run killed between checkpoints (a second Ctrl-C, kill -9) resumes from
        # the last one, and the snapshots it saved after it are not yet this run's (each is written again then).
        return league_snapshots(snapshot_dir, up_to=progress["iteration"])

    def save_all():
        args_dict = dataclasses.asdict(args)
        save_checkpoint(checkpoint_path, net, args_dict, progress, optimizer)
        save_checkpoint(run_dir / "agent.pt", net, args_dict, progress)

    if not snapshot_files():
        save_checkpoint(snapshot_path(snapshot_dir, 0), net, dataclasses.asdict(args), progress)

    # ---- the announcement: where the run goes, on what, and what stops it
    sizes = list(range(args.min_players, args.max_players + 1))
    per_size = games_per_size(args.num_games, len(sizes))
    if resumed is None:
        say(f"Training run {run_dir} (new; {shell_words(*resume_words)} continues it later)")
    else:
        say(f"Resuming run {run_dir} at iteration {progress['iteration']} ({progress['decisions']:,} decisions, "
            f"{progress['seconds'] / 60:.1f} min so far)")
    how = "auto" if args.device == "auto" else "--device"
    gpu = f" {torch.cuda.get_device_name(device)}" if device.type == "cuda" else ""
    note = ("" if args.device != "auto" or device.type != "cpu" else ", no CUDA here")
    precision_note = (f"--precision {args.precision}" if args.precision != "auto" else
                      "auto: native bf16 here" if bf16 else "auto: no native bf16 here")
    say(f"  device {device}{gpu} ({how}{note}); precision {'bf16' if bf16 else 'fp32'} ({precision_note})")
    if initial is not None:
        say(f"  starts from the network of {args.init_from} (hidden {args.hidden}, {args.critic} critic, "
            f"{args.encoding} encoding)")
    update_threads = (f"{args.torch_threads} (--torch-threads)" if args.torch_threads else
                      f"auto, the faster of 1 and {cores} (timed every 50 iterations)" if auto_threads else "1")
    say(f"  torch threads: rollout 1, PPO update {update_threads}")
    say(f"  tables: {per_size * len(sizes):,} games stepped together, "
        f"{per_size:,} at each of {', '.join(map(str, sizes))} players; league "
        + ", ".join(f"{kind} {100 * w:.0f}%" + (f" ({args.opponent})" if kind == "opponent" else "")
                    for kind, w in zip(TABLE_KINDS, league) if w))
    limit = (f" or after {args.time_limit:g} {'more ' if resumed is not None else ''}minute"
             f"{'s' if args.time_limit != 1 else ''}, whichever comes first" if args.time_limit else "")
    total_text = f"{args.total_decisions:,} decision{'s' if args.total_decisions != 1 else ''}"
    say(f"  stops at {total_text}{' in all' if resumed is not None else ''}{limit}; "
        "Ctrl-C (or SIGTERM) stops early and saves a resumable checkpoint")
    evals = (f"every {args.eval_every} iterations ({args.eval_deals:,} deals)" if args.eval_every else "")
    final = (f"at the end ({args.final_eval_deals:,} deals)" if args.final_eval_deals else "")
    if evals or final:
        say(f"  checks one policy seat against spoiler tables at {args.eval_players} players "
            + " and ".join(filter(None, (evals, final))))
    if workers is not None:
        say(f"  rollouts: {workers.describe()}")
    if args.ship_as:
        target = CHECKPOINT_DIR / f"{args.ship_as}.pt"
        say(f"  at the end, ships agent.pt as {target} (load_agent({args.ship_as!r}))"
            + (", replacing the checkpoint there" if target.exists() else ""))
    say(f"  watch it: {shell_words('tensorboard', *option_words('--logdir', args.runs_dir))}")

    timers = defaultdict(float)
    last_eval = "none yet"
    start_time = time.time() - progress["seconds"]  # the run's clock, over every session
    session_start = time.time()  # --time-limit counts this session only
    session_decisions = progress["decisions"]
    lr_start = 1.0 - progress["decisions"] / args.total_decisions  # what the annealing had left

    def out_of_budget() -> bool:
        return progress["decisions"] >= args.total_decisions or bool(
            args.time_limit and time.time() - session_start >= 60 * args.time_limit)

    bar = None
    if args.progress_bar:
        from tqdm import tqdm

        bar = tqdm(total=args.total_decisions, initial=progress["decisions"], unit="dec", unit_scale=True,
                   dynamic_ncols=True, smoothing=0.1)
    gen = torch.Generator(device=device)

    def log_eval(results, iteration_row):
        nonlocal last_eval
        parts = []
        for n, r in results.items():
            writer.add_scalar(f"eval/share_above_fair_{n}p", r["pool_share"] - r["fair_share"], progress["decisions"])
            writer.add_scalar(f"eval/equity_{n}p", r["equity"], progress["decisions"])
            writer.add_scalar(f"eval/share_ci95_{n}p", r["pool_share_ci95"], progress["decisions"])
            writer.add_scalar(f"eval/equity_ci95_{n}p", r["equity_ci95"], progress["decisions"])
            writer.add_scalar(f"eval/spoil_rate_{n}p", r["spoil_rate"], progress["decisions"])
            iteration_row.update({f"eval_{n}p_share": r["pool_share"], f"eval_{n}p_share_ci": r["pool_share_ci95"],
                                  f"eval_{n}p_equity": r["equity"], f"eval_{n}p_equity_ci": r["equity_ci95"]})
            parts.append(f"{n}p {100 * (r['pool_share'] - r['fair_share']):+.1f}±{100 * r['pool_share_ci95']:.1f}")
        last_eval = " ".join(parts)

    # Ctrl-C or SIGTERM from here on: finish the rollout step or the whole update at hand, save, stop (exit 130, 143).
    stop = StopRequest(lambda text: bar.write(text, file=sys.stderr) if bar is not None else
                       print(text, file=sys.stderr, flush=True)).__enter__()
    try:  # the previous Ctrl-C handler comes back however the loop ends, an error included
        finished = False
        while not finished:
            iteration = progress["iteration"] + 1
            iter_start = time.perf_counter()
            if args.anneal_lr:
                frac = 1.0 - progress["decisions"] / args.total_decisions
                if args.time_limit:  # what was left at this session's start, spread over its minutes
                    frac = min(frac, lr_start * (1.0 - (time.time() - session_start) / (60 * args.time_limit)))
                optimizer.param_groups[0]["lr"] = max(frac, 0.05) * args.learning_rate
            gen.manual_seed(args.seed * 1_000_003 + iteration)

            # ---- the league and the rollout: a frozen snapshot for this iteration's snapshot seats, then
            # every game plays its hands; rows are the current policy's decisions, each linked to the
            # same seat's next one or carrying the hand's equity (spoilfive_integrations/selfplay.py)
            t0 = time.perf_counter()
            snapshots = snapshot_files()
            pick = draw_snapshot(snapshots, iteration, args, progress.get("snapshot_equity", {}))
            snapshot = torch.load(pick, map_location="cpu", weights_only=True)["state_dict"]
            if workers is None:
                batch = rollout.collect(iteration, snapshot=snapshot, stop=stop)
            else:  # new weights and the snapshot go to every worker through Ray's object store
                batch = workers.collect(net, iteration, snapshot, stop=stop)
                timers["rollout"] += time.perf_counter() - t0
            if batch is None:  # Ctrl-C: the unfinished rollout is dropped; the weights are those of the last iteration
                break
            for name, seconds in batch.timers.items() if workers is None else ():
                timers[name] += seconds
            N, decisions, stats = len(batch), batch.decisions, defaultdict(float, batch.stats)

            # ---- advantages: GAE along each seat's trajectory (row -> that seat's next row)
            t0 = time.perf_counter()
            next_row, reward, assigned, step_offsets = batch.next_row, batch.reward, batch.assigned, batch.step_offsets
            b_obs = batch.obs_tensor(device)
            b_mask = torch.from_numpy(batch.mask).to(device)
            b_holder = torch.from_numpy(batch.holder).to(device) if omniscient else None
            b_actions, b_logp = torch.from_numpy(batch.action).to(device), torch.from_numpy(batch.logp).to(device)
            values = np.empty(N, np.float32)
            with torch.inference_mode(), autocast():
                for s in range(0, N, 16384):
                    holder = b_holder[s: s + 16384] if omniscient else None
                    values[s: s + 16384] = net.value(b_obs[s: s + 16384], holder).cpu().numpy()
            if not np.all((next_row >= 0) | assigned):  # every row has a successor or the hand's reward
                raise RuntimeError(f"{int(((next_row < 0) & ~assigned).sum())} decisions lost their trajectory")
            advantages = seat_gae(values, reward, next_row, step_offsets, args.gamma, args.gae_lambda)
            returns = advantages + values
            b_adv = torch.from_numpy(advantages).to(device)
            b_ret = torch.from_numpy(returns).to(device)
            b_val = torch.from_numpy(values).to(device)
            timers["advantages"] += time.perf_counter() - t0

            # ---- PPO update (threads: as given, or the faster of 1 and all cores, timed now and then)
            t0 = time.perf_counter()
            probing = auto_threads and iteration - next_probe in (0, 1)
            if not auto_threads:
                threads = args.torch_threads or 1
            elif probing:
                threads = 1 if iteration == next_probe else cores
            else:
                threads = min(thread_time, key=thread_time.get)
            torch.set_num_threads(threads)
            passes = 0
            net.train()
            clipfracs, approx_kl = [], torch.zeros(())
            for _ in range(args.update_epochs):
                order = torch.randperm(N, device=device, generator=gen)
                for mb in order.tensor_split(max(1, round(N / args.minibatch_size))):  # near-equal sizes
                    with autocast():
                        dist, new_value = net.evaluate(b_obs[mb], b_mask[mb], b_holder[mb] if omniscient else None)
                    new_logp = dist.log_prob(b_actions[mb])
                    entropy = dist.entropy()
                    logratio = new_logp - b_logp[mb]
                    ratio = logratio.exp()
                    with torch.no_grad():
                        approx_kl = ((ratio - 1) - logratio).mean()
                        clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                    mb_adv = b_adv[mb]
                    if args.norm_adv and len(mb_adv) > 1:  # one row's std is NaN, and would make every weight NaN
                        mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                    pg_loss = torch.max(-mb_adv * ratio,
                                        -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                    if args.clip_vloss:
                        v_clipped = b_val[mb] + torch.clamp(new_value - b_val[mb], -args.clip_coef, args.clip_coef)
                        v_loss = 0.5 * torch.max((new_value - b_ret[mb]) ** 2, (v_clipped - b_ret[mb]) ** 2).mean()
                    else:
                        v_loss = 0.5 * ((new_value - b_ret[mb]) ** 2).mean()
                    entropy_loss = entropy.mean()
                    loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                    optimizer.step()
                    passes += len(mb)
                    if auto_threads and threads > 1 and 1 in thread_time and (
                            time.perf_counter() - t0 > 3 * thread_time[1] * passes + 0.5):
                        # Far slower than one thread was: the machine is busy; one thread until the next probe.
                        threads = 1
                        torch.set_num_threads(1)
                        thread_time[cores] = float("inf")
                # Ctrl-C does not cut the update short: a part-update saved as a whole iteration would make
                # the resumed run differ from an uninterrupted one. An update takes about 2 s at the defaults.
                if args.target_kl and approx_kl.item() > args.target_kl:
                    break
            timers["update"] += time.perf_counter() - t0
            if probing and threads == (1 if iteration == next_probe else cores):  # (not fallen back)
                thread_time[threads] = (time.perf_counter() - t0) / max(passes, 1)
            if auto_threads and iteration >= next_probe + 50:
                next_probe = iteration + 1
            var_y = np.var(returns)
            explained_var = float("nan") if var_y == 0 else float(1 - np.var(returns - values) / var_y)

            # ---- bookkeeping, logging, snapshots, evaluation
            iter_seconds = time.perf_counter() - iter_start
            progress["iteration"] = iteration
            progress["decisions"] += decisions
            progress["trained"] += N
            progress["seconds"] = time.time() - start_time
            step = progress["decisions"]
            row = {"iteration": iteration, "decisions": step, "trained": progress["trained"],
                   "seconds": round(progress["seconds"], 1), "decisions_per_s": round(decisions / iter_seconds),
                   "trained_per_s": round(N / iter_seconds), "learning_rate": optimizer.param_groups[0]["lr"],
                   "value_loss": v_loss.item(), "policy_loss": pg_loss.item(), "entropy": entropy_loss.item(),
                   "approx_kl": approx_kl.item(), "clipfrac": float(np.mean(clipfracs)),
                   "explained_variance": explained_var, "hands": int(stats["hands"]),
                   "self_spoil_rate": stats["self_spoils"] / max(stats["self_hands"], 1)}
            for kid in range(1, len(TABLE_KINDS)):
                if stats[f"eq_n_{kid}"]:
                    row[f"equity_vs_{TABLE_KINDS[kid]}"] = stats[f"eq_sum_{kid}"] / stats[f"eq_n_{kid}"]
            row["snapshot"] = snapshot_iteration(pick)
            if args.snapshot_sampling == "pfsp" and "equity_vs_snapshot" in row:
                equity_against = progress.setdefault("snapshot_equity", {})
                earlier = equity_against.get(pick.name, row["equity_vs_snapshot"])
                equity_against[pick.name] = earlier + PFSP_MEMORY * (row["equity_vs_snapshot"] - earlier)
            writer.add_scalar("charts/learning_rate", row["learning_rate"], step)
            writer.add_scalar("charts/update_threads", threads, step)
            writer.add_scalar("charts/decisions_per_s", row["decisions_per_s"], step)
            writer.add_scalar("charts/trained_decisions_per_s", row["trained_per_s"], step)
            writer.add_scalar("charts/self_play_spoil_rate", row["self_spoil_rate"], step)
            for kid in range(1, len(TABLE_KINDS)):
                name = f"equity_vs_{TABLE_KINDS[kid]}"
                if name in row:
                    writer.add_scalar(f"charts/{name}", row[name], step)
            for name in ("value_loss", "policy_loss", "entropy", "approx_kl", "clipfrac", "explained_variance"):
                writer.add_scalar(f"losses/{name}", row[name], step)
            total_time = sum(timers.values())
            for name, seconds in timers.items():
                writer.add_scalar(f"time/{name}_fraction", seconds / total_time, step)

            if iteration % args.snapshot_every == 0:
                save_checkpoint(snapshot_path(snapshot_dir, iteration), net, dataclasses.asdict(args), progress)
            finished = out_of_budget() or stop.requested
            if args.eval_every and iteration % args.eval_every == 0 and not finished:
                t0 = time.perf_counter()
                log_eval(evaluate_against_spoilers(net, eval_sizes, args.eval_deals, 10_000 + args.seed, device), row)
                timers["eval"] += time.perf_counter() - t0
            with open(csv_path, "a", newline="") as f:
                csv.DictWriter(f, csv_fields, extrasaction="ignore").writerow(row)
            if iteration % args.save_every == 0:
                save_all()
            if bar is not None:
                if args.time_limit:  # the bar ends where the first of the two limits will fall
                    elapsed = time.time() - session_start
                    rate = (progress["decisions"] - session_decisions) / max(elapsed, 1e-9)
                    projected = progress["decisions"] + rate * max(60 * args.time_limit - elapsed, 0.0)
                    bar.total = int(min(args.total_decisions, projected))
                bar.total = max(bar.total, bar.n + decisions)  # never under what is done: the last one can pass it
                bar.update(decisions)
                bar.set_postfix_str(f"{row['decisions_per_s']:,} dec/s | eval vs spoiler: {last_eval}", refresh=False)
    finally:
        stop.__exit__()
    if workers is not None:
        workers.close()  # now, before the final check: the cluster's CPUs are free again

    # ---- the end: save, final evaluation, learning curve, time report
    if bar is not None:
        bar.close()
    save_all()
    interrupted = stop.requested
    session_seconds = time.time() - session_start
    summary = {"run_dir": str(run_dir), "progress": dict(progress), "precision": "bf16" if bf16 else "fp32",
               "device": str(device), "interrupted": interrupted,
               # the signal that stopped the run (the command exits with 128 plus its number), None if none did
               "stopped_by": signal_words(stop.signum) if interrupted else None,
               "ray_workers": args.workers if workers is not None else 0}
    if args.final_eval_deals and not interrupted and progress["iteration"]:
        t0 = time.perf_counter()
        say(f"Final check against spoiler tables ({args.final_eval_deals:,} deals at {args.eval_players} players; "
            "Ctrl-C skips it) ...")
        try:
            with InterruptOnStop() as end_stop:  # one check, no safe point inside: a stop ends it at once
                results = evaluate_against_spoilers(net, eval_sizes, args.final_eval_deals, 99_999, device)
        except KeyboardInterrupt:
            interrupted = summary["interrupted"] = True
            summary["stopped_by"] = signal_words(end_stop.signum)
            say(f"{summary['stopped_by']}: final check skipped (the checkpoint is saved)")
        else:
            figures = {}
            log_eval(results, figures)
            add_to_last_row(csv_path, csv_fields, figures)  # the last iteration's row, not a second one
            summary["final_eval"] = results
        timers["eval"] += time.perf_counter() - t0
    total_time = max(sum(timers.values()), 1e-9)
    summary["time_fractions"] = {k: round(v / total_time, 3) for k, v in sorted(timers.items(), key=lambda kv: -kv[1])}
    summary["time_seconds"] = {k: round(v, 1) for k, v in timers.items()}
    train_time = total_time - timers.get("eval", 0.0)
    summary["decisions_per_s"] = round(progress["decisions"] / max(progress["seconds"], 1e-9))
    summary["decisions_per_s_excluding_eval"] = (round(progress["decisions"] / max(train_time, 1e-9))
                                                 if not resumed else None)
    curve_path = run_dir / "learning_curve.png"
    try:
        curve_written = plot_learning_curve(csv_path, curve_path)
    except Exception as error:  # a plot must not lose a finished run
        curve_written = False
        print(f"learning curve not written: {error}", file=sys.stderr)
    writer.close()
    ship_target = CHECKPOINT_DIR / f"{args.ship_as}.pt"
    # a file there by now (another run's, made while this one trained; a link) is replaced only when told to
    ship_blocked = bool(args.ship_as) and os.path.lexists(ship_target) and not args.replace_shipped
    if args.ship_as and not interrupted and not ship_blocked:  # an interrupted run is not shipped: resume it to finish
        CHECKPOINT_DIR.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run_dir / "agent.pt", ship_target)
        summary["shipped"] = str(ship_target)
    (run_dir / "summary.json").write_text(json_text(summary))

    # ---- the end in plain words: what happened, where the agent is, what to do with it
    trained_now = progress["decisions"] - session_decisions
    say(f"{'Stopped by ' + summary['stopped_by'] if interrupted else 'Finished'} at iteration {progress['iteration']}: "
        f"{trained_now:,} decisions in {session_seconds / 60:.1f} min this session "
        f"({trained_now / max(session_seconds, 1e-9):,.0f} decisions/s); the run has {progress['decisions']:,}.")
    for n, r in summary.get("final_eval", {}).items():
        say(f"  {n} players, one policy seat against spoilers: "
            f"{100 * (r['pool_share'] - r['fair_share']):+.1f} ± {100 * r['pool_share_ci95']:.1f} points of won "
            f"pools above the fair share, equity {r['equity']:+.3f} ± {r['equity_ci95']:.3f} chips a hand")
    agent_path = run_dir / "agent.pt"
    curve_words = f"learning curve {curve_path}; " if curve_written else ""  # no iteration yet, or no plot
    say(f"The agent: {agent_path} (resumable checkpoint {checkpoint_path}; "
        f"{curve_words}every figure in {run_dir / 'summary.json'})")
    evaluate_words = ("python", "-m", "agents.evaluate", "--players", 4,
                      *option_words("--agents", f"{agent_path},spoiler"), "--deals", 2000)
    say(f"  evaluate it: {shell_words(*evaluate_words)}")
    play_words = ("python", "-m", "spoilfive_env.play", "--players", 4, *option_words("--opponents", agent_path))
    say(f"  play it:     {shell_words(*play_words)}")
    say(f"  resume it:   {shell_words(*resume_words)} [--time-limit MORE_MINUTES] [--total-decisions N]")
    if "shipped" in summary:
        say(f"  shipped as {summary['shipped']}: load_agent({args.ship_as!r})")
    elif args.ship_as:
        by_hand = shell_words("cp", agent_path, ship_target)
        if ship_blocked:
            say(f"  not shipped as {args.ship_as!r}: {ship_target} is there (another run's, or a link; "
                f"--replace-shipped replaces it); to ship this agent there: {by_hand}")
        elif progress["decisions"] >= args.total_decisions:  # only the final check was stopped: nothing to resume
            say(f"  not shipped as {args.ship_as!r}: the final check was stopped; the run is done, so to ship it: "
                f"{by_hand}")
        else:
            say(f"  not shipped as {args.ship_as!r}: the run was interrupted; resume it to finish and ship it")
    if args.json:
        print(json_text(summary))
    return summary


def add_to_last_row(csv_path: Path, fields: list[str], values: dict) -> None:
    """Merge ``values`` into the last row of ``progress.csv`` (the final evaluation belongs to the
    last iteration's row)."""
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return
    rows[-1].update({k: v for k, v in values.items() if k in fields})
    with open(csv_path, "w", newline="") as f:
        table = csv.DictWriter(f, fields, extrasaction="ignore")
        table.writeheader()
        table.writerows(rows)


if __name__ == "__main__":
    try:
        summary = main()
        sys.stdout.flush()  # what is still buffered is written here, where a closed pipe can be answered
    except KeyboardInterrupt as quit_now:  # a second Ctrl-C (or SIGTERM), or a Ctrl-C before training started
        words = signal_words(getattr(quit_now, "signum", signal.SIGINT))
        print(f"\n{words}: stopped at once; nothing more was saved (the run's last checkpoint, if any, is as it was)",
              file=sys.stderr)
        sys.exit(stop_status(words))
    except BrokenPipeError:  # its reader stopped reading (train.py ... | head): no traceback
        from spoilfive_env.cli import stdout_closed  # loaded by main by now; imported here, not before the Ctrl-C guard

        sys.exit(stdout_closed())
    if summary.get("interrupted"):
        sys.exit(stop_status(summary["stopped_by"]))
