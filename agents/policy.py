"""The trained policy: the network, the masked categorical, checkpoints and ``PolicyAgent``.

One network plays every table size through the padded observation of
:mod:`spoilfive_env.observation`. It has two parts:

- the **actor** (what an agent plays with): an MLP from the seat's observation
  ``(OBS_DIM,)`` to one logit per action ``(107,)``; illegal actions are masked out in
  exactly one place, :class:`MaskedCategorical`;
- the **critic**, used only in training: an MLP to the expected equity of the hand. With
  ``critic="omniscient"`` (PerfectDou's perfect-training-imperfect-execution) it also sees
  every hand at the table (:func:`all_hands`: who holds each card); with
  ``critic="local"`` it sees the observation only. An agent never runs the critic, so the
  hidden cards it sees in training never reach play.

A checkpoint is one ``torch.save`` file (a dict of plain values and tensors, loadable with
``weights_only=True``)::

    format              "spoilfive-policy"
    format_version      1
    observation_version spoilfive_env.observation.OBSERVATION_VERSION at training time
    obs_dim, num_actions
    model               {"hidden": [256, 256], "critic": "local", "encoding": "canonical"}
    state_dict          weights of actor and critic
    args                the training arguments (train.Args as a dict)
    progress            {"iteration", "decisions", ...} where training stood
    optimizer           optional: Adam state, only in a run's resumable checkpoint

:func:`load_policy_agent` rebuilds the network from ``model``, loads the weights strictly
and refuses, with the reason, a file that is not such a checkpoint or does not fit this
version of the observation or action space.

>>> import numpy as np, torch
>>> from spoilfive_env import SpoilFiveCore, Rules
>>> torch.manual_seed(0)  # doctest: +ELLIPSIS
<torch._C.Generator object at ...>
>>> agent = PolicyAgent(PolicyNet(hidden=(32,)), seed=0)
>>> core = SpoilFiveCore(8, rules=Rules(num_players=3), seed=1)
>>> mask = core.legal_mask()
>>> actions = agent.act_batch(core.observe(), mask)
>>> bool(mask[np.arange(8), actions].all())
True
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from pathlib import Path

import numpy as np

from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.cards import MAX_PLAYERS, NUM_CARDS, NUM_SUITS, plain_order, trump_order
from spoilfive_env.cli import install_hint, written_whole
from spoilfive_env.core import checked_seed, physical_memory
from spoilfive_env.observation import OBS_DIM, OBSERVATION_LAYOUT, OBSERVATION_VERSION, SLICES
from spoilfive_env.rules import is_integer

from . import CHECKPOINT_DIR, shipped_checkpoints  # in the package, torch-free
from .base import Agent, checked_batch

TORCH_MISSING = (
    f"trained policies need PyTorch, which is not installed: {install_hint('train')}. The built-in agents "
    "(random, greedy, spoiler, pimc) need no torch."
)
try:
    import torch
    from torch import nn
except ModuleNotFoundError as error:
    if error.name != "torch":
        raise
    raise ModuleNotFoundError(TORCH_MISSING, name="torch") from None

FORMAT = "spoilfive-policy"
FORMAT_VERSION = 1
CRITICS = ("omniscient", "local")
MAX_HIDDEN_LAYERS = 16
"""Most hidden layers a checkpoint may describe (a sanity cap checked before building)."""
MAX_HIDDEN_WIDTH = 16384
"""Widest hidden layer a checkpoint may describe (one such layer is already 1 GiB of weights)."""
CHECKPOINT_KIND = "a .pt file written by train.py (torch.save of a dict of tensors and plain values)"


def within_layer_limits(hidden) -> bool:
    """``hidden`` lists 1 to :data:`MAX_HIDDEN_LAYERS` whole layer widths, each 1 to :data:`MAX_HIDDEN_WIDTH`:
    what a checkpoint may hold (the caller checks that it is a list)."""
    return 1 <= len(hidden) <= MAX_HIDDEN_LAYERS and all(
        is_integer(width) and 1 <= width <= MAX_HIDDEN_WIDTH for width in hidden)


def network_too_large(hidden) -> str | None:
    """Why an actor and a critic (each an MLP from the observation through layers of these widths) cannot
    be trained here, or None: a layer wider than :data:`MAX_HIDDEN_WIDTH`, or float32 weights, gradients
    and Adam's two moments that would not fit in this machine's memory. For commands to ask before they
    build anything."""
    wide = [width for width in hidden if width > MAX_HIDDEN_WIDTH]
    if wide:
        return f"a layer of {wide[0]:,} is too wide: give widths from 1 to {MAX_HIDDEN_WIDTH:,}"
    widths = [OBS_DIM, *hidden]
    parameters = 2 * sum(a * b for a, b in zip(widths[:-1], widths[1:])) + widths[-1] * (NUM_ACTIONS + 1)
    memory = physical_memory()
    if memory is not None and 16 * parameters > memory:
        return (f"the actor and the critic with Adam's state need about {16 * parameters / 2**30:.1f} GiB, more "
                f"than this machine's {memory / 2**30:.1f} GiB")
    return None


# ---------------------------------------------------------------------- the masked policy
class MaskedCategorical:
    """A categorical over the 107 actions restricted to the legal ones: the only place
    where the mask meets the logits.

    Illegal actions get probability exactly 0 (log-probability ``-inf`` is never
    formed: masked logits are set to the dtype's lowest finite value), so sampling,
    ``mode`` and ``log_prob`` of a legal action never see an illegal one, and the entropy
    sums over legal actions only. Every row needs at least one legal action (the core's
    finished games have all-True rows).
    """

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor):
        self.mask = mask
        masked = logits.masked_fill(~mask, torch.finfo(logits.dtype).min)
        self.log_probs = torch.log_softmax(masked, dim=-1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        p_logp = self.log_probs.exp() * self.log_probs
        return -torch.where(self.mask, p_logp, torch.zeros_like(p_logp)).sum(-1)

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """One action per row by the Gumbel-max trick (exact categorical sampling)."""
        u = torch.rand(self.log_probs.shape, generator=generator, device=self.log_probs.device)
        gumbel = -torch.log(-torch.log(u.clamp_(1e-20, 1.0)))
        return torch.where(self.mask, self.log_probs + gumbel, torch.finfo(self.log_probs.dtype).min).argmax(-1)

    def mode(self) -> torch.Tensor:
        return self.log_probs.argmax(-1)


# ---------------------------------------------------------------------- card encoding
# A card's part in a hand depends only on its effective suit and its place in that suit's
# order under the trump. The "canonical" encoding lays every 52-card block of the
# observation out in that frame: 14 trump slots by strength (5T, JT, AH, AT, KT, QT, ...;
# with hearts trump AH is also the ace of trumps and slot 3 stays empty), then the three
# plain suits following the trump suit in C, D, H, S order, 13 slots each by strength (a
# plain suit missing its ace leaves its lowest slot empty). The five void flags become the
# same four effective suits. What the network learns about one trump suit then serves all
# four. The encoding is a fixed gather inside the network: agents still read the plain
# observation.
NUM_SLOTS = 14 + 3 * 13  # 53
CARD_BLOCKS = {"hand": 1, "own_discard": 1, "turnup": 1, "played": MAX_PLAYERS, "trick_cards": 1, "led_card": 1}
ENCODINGS = ("canonical", "raw")


def _canonical_slots() -> np.ndarray:
    """``slots[trump, card]``: the card's canonical slot (0-52) under each trump suit."""
    slots = np.full((NUM_SUITS, NUM_CARDS), -1, np.int64)
    for trump in range(NUM_SUITS):
        trumps = trump_order(trump)
        places = range(len(trumps)) if len(trumps) == 14 else [0, 1, 2, *range(4, 14)]
        slots[trump, trumps] = list(places)
        for j in range(3):
            plain = plain_order((trump + 1 + j) % NUM_SUITS, trump)
            slots[trump, plain] = 14 + 13 * j + np.arange(len(plain))
    assert (slots >= 0).all() and all(len(set(row)) == NUM_CARDS for row in slots.tolist())
    return slots


CANONICAL_SLOTS = _canonical_slots()


def _canonical_gather() -> tuple[np.ndarray, int]:
    """``(4, width)`` source column in the observation of each encoded feature, per trump;
    ``OBS_DIM`` points at an appended zero column (empty slots)."""
    columns = [[] for _ in range(NUM_SUITS)]
    for name, _size in OBSERVATION_LAYOUT:
        start = SLICES[name].start
        for trump in range(NUM_SUITS):
            out = columns[trump]
            if name in CARD_BLOCKS:
                for block in range(CARD_BLOCKS[name]):
                    source = np.full(NUM_SLOTS, OBS_DIM)
                    source[CANONICAL_SLOTS[trump]] = start + block * NUM_CARDS + np.arange(NUM_CARDS)
                    out.extend(source.tolist())
            elif name == "voids":  # (10 seats x 5 effective suits) -> trumps, then plain suits
                order = [4] + [(trump + 1 + j) % NUM_SUITS for j in range(3)]
                for seat in range(MAX_PLAYERS):
                    out.extend(start + seat * 5 + s for s in order)
            else:
                out.extend(range(start, start + _size))
    table = np.array(columns, np.int64)
    return table, table.shape[1]


CANONICAL_GATHER, CANONICAL_DIM = _canonical_gather()


def _inverse_gather() -> np.ndarray:
    """``(4, OBS_DIM)``: the encoded column of each observation column per trump
    (``CANONICAL_DIM`` for the one column the encoding drops: the void flag of the trump's
    printed suit, which no card belongs to)."""
    inverse = np.full((NUM_SUITS, OBS_DIM), CANONICAL_DIM, np.int64)
    for trump in range(NUM_SUITS):
        real = CANONICAL_GATHER[trump] < OBS_DIM
        inverse[trump, CANONICAL_GATHER[trump][real]] = np.flatnonzero(real)
    return inverse


CANONICAL_INVERSE = _inverse_gather()


def trump_of(obs: torch.Tensor) -> torch.Tensor:
    """Trump suit ``(B,)`` of each observation."""
    return obs[:, SLICES["trump"]].argmax(dim=1)


def _cpu_autocast() -> bool:
    """Whether CPU autocast (bf16 arithmetic) is on here."""
    try:
        return torch.is_autocast_enabled("cpu")
    except TypeError:  # torch before 2.4
        return torch.is_autocast_cpu_enabled()


def _with_zero_column(weight: torch.Tensor) -> torch.Tensor:
    """The encoded weight ``(out, CANONICAL_DIM)`` and a zero column, where ``CANONICAL_INVERSE`` sends the
    observation column the encoding drops."""
    return torch.cat([weight, weight.new_zeros(weight.shape[0], 1)], 1)


class CardLinear(nn.Module):
    """The first layer of a network, on the ``canonical`` or the ``raw`` encoding.

    The canonical encoding is a per-trump permutation of the input columns, so on the CPU,
    instead of moving every row's inputs, the layer permutes its own weight columns once per
    trump suit and multiplies each trump's rows by their own matrix: the same result as a
    ``Linear`` on the encoded input, for about the cost of a plain ``Linear``. On a GPU it
    gathers the inputs (no host synchronisation). Its weight is stored in the encoded layout
    (``(out, CANONICAL_DIM)``).

    With ``sparse_inputs`` (what ``train.py``'s networks use) the CPU path in float32 reads each observation as
    its few entries that are not zero (about 35 of 968), the sum of those weight columns (an embedding bag),
    instead of the dense product: the network's update about 1.5 times as fast, the same values up to the order
    of the float sums. Under bf16 autocast (a CPU with native bf16) the dense product in bf16 is as fast, so it
    stays. Acting keeps the dense product, whose exact bits the seeded figures of the searches depend on.
    """

    sparse_inputs = False

    def __init__(self, out_features: int, encoding: str = "canonical"):
        super().__init__()
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding={encoding!r} is not allowed: choose one of {', '.join(ENCODINGS)}")
        self.encoding = encoding
        self.linear = layer_init(nn.Linear(CANONICAL_DIM if encoding == "canonical" else OBS_DIM, out_features))
        self.register_buffer("inverse", torch.from_numpy(CANONICAL_INVERSE), persistent=False)
        self.register_buffer("gather", torch.from_numpy(CANONICAL_GATHER), persistent=False)

    def forward(self, obs: torch.Tensor, trump: torch.Tensor | None = None) -> torch.Tensor:
        if self.sparse_inputs and obs.device.type == "cpu" and not _cpu_autocast():
            return self._sparse_product(obs, trump)
        if self.encoding == "raw":
            return self.linear(obs)
        trump = trump_of(obs) if trump is None else trump
        if obs.device.type != "cpu":  # on a GPU gathering the inputs is cheap, and nothing waits
            return self.linear(self.encode(obs, trump))
        weights = self._weights_by_trump()
        rows, outputs = [], []
        for suit in range(NUM_SUITS):
            idx = (trump == suit).nonzero(as_tuple=True)[0]
            if len(idx):
                rows.append(idx)
                outputs.append(nn.functional.linear(obs.index_select(0, idx), weights[suit], self.linear.bias))
        order = torch.cat(rows)
        stacked = torch.cat(outputs)
        return stacked.new_empty(stacked.shape).index_copy(0, order, stacked)

    def _sparse_product(self, obs: torch.Tensor, trump: torch.Tensor | None) -> torch.Tensor:
        """The layer as the sum of the weight columns of each row's entries that are not zero, each times its
        value (in the encoded layout: each entry's column for the row's trump; a dropped one reads the zero column)."""
        rows, columns = obs.nonzero(as_tuple=True)  # row by row, as the bags' offsets need
        values = obs[rows, columns]
        weight = self.linear.weight
        if self.encoding == "canonical":  # a dropped entry's column is CANONICAL_DIM: the zero column
            trump = trump_of(obs) if trump is None else trump
            columns = self.inverse[trump[rows], columns]
            weight = _with_zero_column(weight)
        offsets = torch.searchsorted(rows, torch.arange(len(obs), device=obs.device))
        summed = nn.functional.embedding_bag(columns, weight.t().contiguous(), offsets, mode="sum",
                                             per_sample_weights=values.to(weight.dtype))
        return summed + self.linear.bias

    def _weights_by_trump(self) -> list[torch.Tensor]:
        """For each trump suit, the weight with its columns in the observation's order. A frozen weight's (an
        agent's, ``load_policy_agent``) are kept until it changes (a copy bumps its version): a search's many
        small batches would otherwise permute the whole weight four times for each. A trainable weight's are
        made afresh: a fused optimiser step changes the weight without bumping its version."""
        weight = self.linear.weight
        if weight.requires_grad:
            self.__dict__.pop("_kept", None)  # frozen again after training: kept afresh then
            return self._permuted(weight)
        kept_for, kept_version, kept = getattr(self, "_kept", (None, None, None))
        if kept_for is not weight or kept_version != weight._version:  # (the very tensor: no reused address)
            with torch.no_grad():
                kept = self._permuted(weight)
            self._kept = (weight, weight._version, kept)
        return kept

    def __getstate__(self):  # a pickled or copied layer leaves its kept weights behind (rebuilt on use)
        state = super().__getstate__() if hasattr(super(), "__getstate__") else self.__dict__
        return {key: value for key, value in state.items() if key != "_kept"}

    def _permuted(self, weight: torch.Tensor) -> list[torch.Tensor]:
        padded = _with_zero_column(weight)
        return [padded.index_select(1, self.inverse[suit]) for suit in range(NUM_SUITS)]

    def encode(self, obs: torch.Tensor, trump: torch.Tensor | None = None) -> torch.Tensor:
        """The encoded input ``(B, CANONICAL_DIM)`` itself (what the GPU path multiplies)."""
        trump = trump_of(obs) if trump is None else trump
        padded = torch.cat([obs, obs.new_zeros(obs.shape[0], 1)], dim=1)
        return padded.gather(1, self.gather[trump])


def canonical_cards(per_card: torch.Tensor, trump: torch.Tensor, fill: int = -1) -> torch.Tensor:
    """A per-card array ``(B, 52)`` moved to the canonical slots ``(B, 53)`` of each row's trump."""
    out = per_card.new_full((per_card.shape[0], NUM_SLOTS), fill)
    return out.scatter_(1, torch.from_numpy(CANONICAL_SLOTS).to(per_card.device)[trump], per_card)


# ---------------------------------------------------------------------- the network
def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


def mlp(inputs: int, hidden: tuple[int, ...]) -> nn.Sequential:
    """The hidden layers (Linear + ReLU each); output layers are kept apart (see PolicyNet)."""
    layers, width = [], inputs
    for h in hidden:
        layers += [layer_init(nn.Linear(width, h)), nn.ReLU()]
        width = h
    return nn.Sequential(*layers)


def all_hands(holder: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The omniscient critic's extra input ``(B, 10 * C)``: one-hot relative holder of each card.

    ``holder`` ``(B, C)`` integer, per card (``C = 52``) or per canonical slot (``C = 53``):
    the holder counted from the viewer (0 the viewer, 1 on his left, ...), or -1 for a card
    in no hand. Entry ``seat * C + card`` is 1 when that relative seat holds that card.
    """
    h = holder.long()
    out = torch.zeros(h.shape[0], MAX_PLAYERS, h.shape[1], dtype=dtype, device=h.device)
    out.scatter_(1, h.clamp(min=0).unsqueeze(1), (h >= 0).unsqueeze(1).to(dtype))
    return out.reshape(h.shape[0], -1)


class PolicyNet(nn.Module):
    """Actor (observation -> 107 logits) and critic (observation [+ all hands] -> equity).

    Both read the observation through a :class:`CardLinear` first layer. Hidden layers run in whatever
    precision the caller's autocast gives (bf16 in training where the hardware has it); the
    two output layers always run in float32, so that log-probabilities and values keep
    their precision.

    Args:
        hidden: widths of the hidden layers, the same for actor and critic.
        critic: ``"omniscient"`` (also sees every hand, training only) or ``"local"``.
        encoding: ``"canonical"`` (card blocks in the trump's frame) or ``"raw"``.
    """

    def __init__(self, hidden: tuple[int, ...] = (256, 256), critic: str = "local",
                 encoding: str = "canonical"):
        super().__init__()
        if critic not in CRITICS:
            raise ValueError(f"critic={critic!r} is not allowed: choose one of {', '.join(CRITICS)}")
        if not hidden or any(int(h) < 1 for h in hidden):
            raise ValueError(f"hidden={hidden!r}: give at least one positive layer width")
        self.hidden = tuple(int(h) for h in hidden)
        self.critic_kind = critic
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding={encoding!r} is not allowed: choose one of {', '.join(ENCODINGS)}")
        self.encoding = encoding
        self.actor_first = CardLinear(self.hidden[0], encoding)
        self.actor_body = nn.Sequential(nn.ReLU(), *mlp(self.hidden[0], self.hidden[1:]))
        self.actor_head = layer_init(nn.Linear(self.hidden[-1], NUM_ACTIONS), std=0.01)
        self.critic_first = CardLinear(self.hidden[0], encoding)
        if critic == "omniscient":
            # The first layer's columns for the one-hot "who holds each card" (all_hands).
            cards = NUM_SLOTS if encoding == "canonical" else NUM_CARDS
            self.critic_hands = nn.Linear(MAX_PLAYERS * cards, self.hidden[0], bias=False)
            torch.nn.init.orthogonal_(self.critic_hands.weight, np.sqrt(2))
        self.critic_body = nn.Sequential(nn.ReLU(), *mlp(self.hidden[0], self.hidden[1:]))
        self.critic_head = layer_init(nn.Linear(self.hidden[-1], 1), std=1.0)

    @property
    def config(self) -> dict:
        return {"hidden": list(self.hidden), "critic": self.critic_kind, "encoding": self.encoding}

    def use_sparse_inputs(self, on: bool = True) -> PolicyNet:
        """Both first layers read the observation's entries that are not zero on the CPU (training's
        networks, :class:`CardLinear`), or the dense product (``on=False``: acting). Returns the network."""
        self.actor_first.sparse_inputs = self.critic_first.sparse_inputs = bool(on)
        return self

    @staticmethod
    def _head(layer: nn.Linear, h: torch.Tensor) -> torch.Tensor:
        with torch.autocast(h.device.type, enabled=False):
            return layer(h.float())

    def logits(self, obs: torch.Tensor, trump: torch.Tensor | None = None) -> torch.Tensor:
        """Logits ``(B, 107)`` float32, unmasked (act through :meth:`distribution`)."""
        return self._head(self.actor_head, self.actor_body(self.actor_first(obs, trump)))

    def distribution(self, obs: torch.Tensor, mask: torch.Tensor) -> MaskedCategorical:
        return MaskedCategorical(self.logits(obs), mask)

    def value(self, obs: torch.Tensor, holder_relative: torch.Tensor | None = None,
              trump: torch.Tensor | None = None) -> torch.Tensor:
        """Expected equity ``(B,)`` float32. The omniscient critic needs ``holder_relative``
        ``(B, 52)``: each card's holder counted from the viewer, -1 for none."""
        trump = trump_of(obs) if trump is None and self.encoding == "canonical" else trump
        h = self.critic_first(obs, trump)
        if self.critic_kind == "omniscient":
            if holder_relative is None:
                raise ValueError("the omniscient critic needs holder_relative (every hand at the table)")
            holder = holder_relative.long()
            if self.encoding == "canonical":
                holder = canonical_cards(holder, trump)
            h = h + self.critic_hands(all_hands(holder, h.dtype))
        return self._head(self.critic_head, self.critic_body(h)).squeeze(-1)

    def evaluate(self, obs: torch.Tensor, mask: torch.Tensor, holder_relative: torch.Tensor | None = None):
        """``(distribution, value)`` of a batch (training)."""
        trump = trump_of(obs) if self.encoding == "canonical" else None
        return MaskedCategorical(self.logits(obs, trump), mask), self.value(obs, holder_relative, trump)


# ---------------------------------------------------------------------- checkpoints
def save_checkpoint(path, net: PolicyNet, args: dict, progress: dict | None = None,
                    optimizer: torch.optim.Optimizer | None = None) -> None:
    """Write one checkpoint file (atomically: a temporary file, then a rename)."""
    data = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "observation_version": OBSERVATION_VERSION,
        "obs_dim": OBS_DIM,
        "num_actions": NUM_ACTIONS,
        "model": net.config,
        "state_dict": {k: v.detach().cpu() for k, v in net.state_dict().items()},
        "args": dict(args),
        "progress": dict(progress or {}),
    }
    if optimizer is not None:
        data["optimizer"] = optimizer.state_dict()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with written_whole(path) as file:  # a second Ctrl-C or a full disk leaves the old checkpoint as it was
        torch.save(data, file)


class CheckpointError(ValueError):
    """A file that is not a spoilfive policy checkpoint, or one that does not fit."""


def load_checkpoint(path, map_location="cpu") -> tuple[PolicyNet, dict]:
    """Rebuild the network of a checkpoint strictly. Returns ``(net, checkpoint dict)``."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint file at {path}: give a checkpoint's path or the name of one shipped "
                              f"in agents/checkpoints ({', '.join(shipped_checkpoints()) or 'none'})")
    try:
        with warnings.catch_warnings():  # junk bytes can look like a foreign pickle protocol: refused below anyway
            warnings.simplefilter("ignore")
            data = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # a pickle of something else, a truncated file, ...
        raise CheckpointError(f"{path} is not a readable torch checkpoint: {_unreadable_reason(error)}; "
                              f"expected {CHECKPOINT_KIND}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a spoilfive policy checkpoint (no format={FORMAT!r} entry)")
    if data.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has checkpoint format version {data.get('format_version')!r}; this spoilfive "
            f"reads version {FORMAT_VERSION}")
    problems = []
    if data.get("observation_version") != OBSERVATION_VERSION:
        problems.append(f"it was trained on observation layout version {data.get('observation_version')!r}, "
                        f"this spoilfive_env has version {OBSERVATION_VERSION}")
    if data.get("obs_dim") != OBS_DIM:
        problems.append(f"its observation has {data.get('obs_dim')!r} features, this spoilfive_env has {OBS_DIM}")
    if data.get("num_actions") != NUM_ACTIONS:
        problems.append(f"it has {data.get('num_actions')!r} actions, this spoilfive_env has {NUM_ACTIONS}")
    if problems:
        raise CheckpointError(f"{path} does not fit this version of spoilfive: " + "; ".join(problems)
                              + ". Retrain with `python train.py` or use a spoilfive release that matches.")
    config = _network_config(path, data.get("model"))
    state_dict = data.get("state_dict")
    if not is_state_dict(state_dict):
        raise CheckpointError(f"{path}: its state_dict entry must map parameter names to tensors, "
                              f"got {type(state_dict).__name__}")
    details = weights_misfit(state_dict, lambda: PolicyNet(**config))
    if details:
        raise CheckpointError(f"{path}: the weights do not fit the network its header describes ({config}): "
                              + "; ".join(details))
    cast = non_float_weights(state_dict, lambda: PolicyNet(**config))
    if cast:  # load_state_dict would cast them without a word: integers truncated, an imaginary part dropped
        raise CheckpointError(f"{path}: its weights must be floating point ({', '.join(cast[:3])}"
                              f"{', ...' if len(cast) > 3 else ''}); train.py saves float32 weights")
    broken = non_finite_weights(state_dict)
    if broken:  # refused now, not at the first act
        raise CheckpointError(f"{path}: its weights hold NaN or infinite values ({', '.join(broken[:3])}"
                              f"{', ...' if len(broken) > 3 else ''}): a diverged run? Use an earlier checkpoint")
    try:
        net = PolicyNet(**config)
        net.load_state_dict(state_dict, strict=True)
    except (TypeError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{path}: the weights do not fit the network it describes ({config}): {error}") from None
    return net, data


def is_state_dict(value) -> bool:
    """Whether ``value`` maps parameter names to tensors, as a module's ``state_dict()`` does."""
    return isinstance(value, dict) and all(
        isinstance(key, str) and isinstance(item, torch.Tensor) for key, item in value.items())


def weights_misfit(state_dict: dict, build_network) -> list[str]:
    """How the weights ``state_dict`` differ from those of the network ``build_network()`` makes: the names
    missing, unexpected and misshapen, a few of each; empty where they fit. The network is built on the meta
    device, so a small file that claims a huge network is answered without allocating anything."""
    with torch.device("meta"):
        expected = {name: tuple(value.shape) for name, value in build_network().state_dict().items()}
    found = {name: tuple(value.shape) for name, value in state_dict.items()}
    missing = sorted(set(expected) - set(found))
    unexpected = sorted(set(found) - set(expected))
    misshapen = [f"{name} {found[name]} (expected {expected[name]})"
                 for name in expected if name in found and found[name] != expected[name]]
    return (([f"missing {', '.join(missing[:3])}"] if missing else [])
            + ([f"unexpected {', '.join(unexpected[:3])}"] if unexpected else []) + misshapen[:3])


def non_float_weights(state_dict: dict, build_network) -> list[str]:
    """The weights of ``state_dict`` (``name (dtype)``) that the network ``build_network()`` makes holds as
    floating point but that are not: integers, booleans, complex numbers. Built on the meta device."""
    with torch.device("meta"):
        expected = build_network().state_dict()
    return [f"{name} ({value.dtype})" for name, value in state_dict.items()
            if name in expected and expected[name].is_floating_point() and not value.is_floating_point()]


def non_finite_weights(state_dict: dict) -> list[str]:
    """The names of the floating-point weights in ``state_dict`` that hold NaN or an infinity."""
    return [name for name, value in state_dict.items()
            if value.is_floating_point() and not bool(torch.isfinite(value).all())]


def _unreadable_reason(error: Exception) -> str:
    """What was wrong with a file ``torch.load(weights_only=True)`` refused, in words."""
    foreign = re.search(r"Unsupported global: GLOBAL (\S+)", str(error))
    if foreign:
        return (f"it holds a pickled Python object ({foreign.group(1)}), which is never loaded "
                "(weights_only=True: tensors and plain containers only)")
    return "the file is damaged, truncated or of another kind"


def _network_config(path, model) -> dict:
    """The checkpoint's ``model`` entry checked and turned into :class:`PolicyNet` keywords."""
    if not isinstance(model, dict):
        raise CheckpointError(f"{path}: its model entry must be a dict such as {PolicyNet().config}, "
                              f"got {type(model).__name__}")
    hidden, critic, encoding = model.get("hidden"), model.get("critic"), model.get("encoding", "raw")
    if not isinstance(hidden, (list, tuple)) or not within_layer_limits(hidden):
        raise CheckpointError(f"{path}: model['hidden'] must list 1 to {MAX_HIDDEN_LAYERS} layer widths, each "
                              f"1 to {MAX_HIDDEN_WIDTH}, got {hidden!r}")
    if not isinstance(critic, str) or critic not in CRITICS:
        raise CheckpointError(f"{path}: model['critic'] must be one of {', '.join(CRITICS)}, got {critic!r}")
    if not isinstance(encoding, str) or encoding not in ENCODINGS:
        raise CheckpointError(f"{path}: model['encoding'] must be one of {', '.join(ENCODINGS)}, got {encoding!r}")
    return {"hidden": tuple(hidden), "critic": critic, "encoding": encoding}


# ---------------------------------------------------------------------- the agent
@contextlib.contextmanager
def torch_threads(threads: int | None):
    """Run the block with torch on ``threads`` CPU threads (None: as set), restoring the setting after.

    Acting on small batches beside environment stepping wants one thread: extra OpenMP threads
    stall badly on a busy machine.
    """
    if threads is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def sample_legal(scores: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One legal action per row, drawn from ``softmax(scores)`` over the legal ones (Gumbel-max with ``rng``).

    ``scores`` ``(B, 107)`` logits or log-probabilities, ``masks`` ``(B, 107)`` bool. Returns int64 ``(B,)``.
    """
    return np.where(masks, scores + rng.gumbel(size=scores.shape), -np.inf).argmax(axis=1).astype(np.int64)


def legal_choice(scores: np.ndarray, masks: np.ndarray, greedy: bool, rng: np.random.Generator) -> np.ndarray:
    """One legal action per row of ``scores`` ``(B, 107)``: the highest-scoring legal one (``greedy``, drawing
    nothing), or one drawn by :func:`sample_legal`. A frozen policy agent's last step."""
    if greedy:
        return np.where(masks, scores, -np.inf).argmax(axis=1).astype(np.int64)
    return sample_legal(scores, masks, rng)


def checked_device(device, what: str = "device", choices: str = "cpu, cuda, cuda:N or mps") -> torch.device:
    """The torch device ``device`` names, or ``ValueError`` when it is no device or this machine has none such.

    ``what`` names the value in the error (``"--device"`` on a command line). A CPU device is plain
    ``cpu``: torch cannot map a checkpoint's tensors to ``cpu:0``.
    """
    name = str(device)
    try:
        device = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        raise ValueError(f"{what} {name!r} is not a device: use {choices}") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"{what} {name}: CUDA is not available here (torch {torch.__version__}, "
                             f"{'built without CUDA' if torch.version.cuda is None else 'no usable GPU'}); "
                             "use cpu")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ValueError(f"{what} {name}: this machine has {torch.cuda.device_count()} CUDA device(s), "
                             f"cuda:0 to cuda:{torch.cuda.device_count() - 1}")
    elif device.type == "mps":
        if not torch.backends.mps.is_available():
            raise ValueError(f"{what} {name}: MPS is not available here; use cpu")
    elif device.type != "cpu":
        raise ValueError(f"{what} {name!r} cannot run a policy: use {choices}")
    return torch.device("cpu") if device.type == "cpu" else device


def checked_greedy(greedy) -> bool:
    """``greedy`` as a bool, or ``ValueError``: a string such as ``"false"`` is truthy, and would play greedily."""
    if not isinstance(greedy, (bool, np.bool_)):
        raise ValueError(f"greedy={greedy!r} is not allowed: give True (the most probable legal action) or False "
                         "(sample from the policy)")
    return bool(greedy)


def checked_name(name, default: str) -> str | None:
    """An agent's ``name=`` (``None`` keeps ``default``), or ``ValueError``: the name labels the agent's
    rows in every tournament report, so it must be a non-empty string."""
    if name is not None and not (isinstance(name, str) and name.strip()):
        raise ValueError(f"name={name!r} is not allowed: give a non-empty string, or None for {default!r}")
    return name


def checked_threads(threads) -> int | None:
    """``threads=`` of an agent acting with torch: a whole number of at least 1, or None (torch's own
    setting); refused now, not at the first move."""
    if threads is not None and not (is_integer(threads) and threads >= 1):
        raise ValueError(f"threads={threads!r} is not allowed: give a whole number of torch CPU threads, "
                         "at least 1, or None for torch's own setting")
    return None if threads is None else int(threads)


class PolicyAgent(Agent):
    """A trained policy as an :class:`~agents.base.Agent` (actor only, CPU by default).

    Args:
        net: the :class:`PolicyNet`.
        seed: seed of the agent's own generator (used only when ``greedy=False``).
        greedy: play the most probable legal action (default) instead of sampling.
        name: the name shown in tournaments.
        device: torch device of the network.
        threads: torch CPU threads while acting (default 1: a tournament's batches are small,
            and extra OpenMP threads stall badly on a busy machine); None leaves torch's setting.
    """

    name = "policy"
    trained_players: tuple[int, int] | None = None
    """``(fewest, most)`` players at the tables its run trained at, where its checkpoint says (``load_policy_agent``
    sets it): a table outside them is one the network never saw, which the commands note."""

    def __init__(self, net: PolicyNet, seed: int | None = None, *, greedy: bool = True,
                 name: str | None = None, device: str | torch.device = "cpu", threads: int | None = 1):
        if not isinstance(net, PolicyNet):  # anything else fails only at its first move, or has no .to()
            raise ValueError(f"PolicyAgent needs the policy network as an agents.policy.PolicyNet (load_policy_agent "
                             f"reads one from a checkpoint), got {type(net).__name__}")
        greedy, device = checked_greedy(greedy), checked_device(device)
        name, threads = checked_name(name, self.name), checked_threads(threads)
        super().__init__(seed)
        self.threads = threads
        self.device = device
        self.net = net.to(self.device).eval()
        self.greedy = greedy
        if name is not None:
            self.name = name

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch_threads(self.threads if self.device.type == "cpu" else None):
            return self._act_batch(observations, masks)

    def log_probs(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The network's log-probabilities ``(B, 107)`` over each row's legal actions (an illegal
        action gets the dtype's lowest number: probability 0)."""
        observations, masks = checked_batch(observations, masks)
        with torch_threads(self.threads if self.device.type == "cpu" else None), torch.inference_mode():
            obs = torch.as_tensor(observations, device=self.device)
            mask = torch.as_tensor(masks, device=self.device)
            return MaskedCategorical(self.net.logits(obs), mask).log_probs.cpu().numpy()

    def choice_rows(self, masks: np.ndarray) -> np.ndarray:
        """The rows of ``masks`` whose move the network decides: greedy, only those with more than one
        legal action (a forced move is the same without it, and a greedy agent draws no random number);
        sampling, every row (each draws). A caller can skip observing the rest."""
        return np.flatnonzero(masks.sum(axis=1) > 1) if self.greedy else np.arange(len(masks))

    @torch.inference_mode()
    def _act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations, masks = checked_batch(observations, masks)
        actions = masks.argmax(axis=1)  # the forced moves; the rest are replaced below
        rows = self.choice_rows(masks)
        if len(rows) == 0:
            return actions
        if len(rows) < len(masks):
            observations, masks = observations[rows], masks[rows]
        obs = torch.as_tensor(observations, device=self.device)
        mask = torch.as_tensor(masks, device=self.device)
        logits = self.net.logits(obs)
        if not bool(torch.isfinite(logits).all()):
            raise ValueError("the policy network gave non-finite logits: its weights are broken (a diverged run?)")
        if self.greedy:
            actions[rows] = MaskedCategorical(logits, mask).mode().cpu().numpy()
            return actions
        # Sampling with the agent's own numpy generator keeps seeding explicit.
        logp = MaskedCategorical(logits, mask).log_probs.cpu().numpy()
        return sample_legal(logp, masks, self.rng)


def resolve_checkpoint(name_or_path) -> Path:
    """A checkpoint path, or a shipped name such as ``"ppo"`` -> ``agents/checkpoints/ppo.pt``."""
    if not isinstance(name_or_path, (str, os.PathLike)) or not os.fspath(name_or_path).strip():
        raise CheckpointError(f"a checkpoint is a path or the name of one shipped in agents/checkpoints "
                              f"({', '.join(shipped_checkpoints()) or 'none'}), got {name_or_path!r}")
    path = Path(name_or_path)
    if path.suffix == ".pt" or path.exists() or os.sep in str(name_or_path):
        return path
    return CHECKPOINT_DIR / f"{name_or_path}.pt"


@contextlib.contextmanager
def torch_generator_kept_on_error():
    """Puts torch's global generator back if the block raises: building a network draws from it, so a spec
    refused after one file was loaded (a good belief, then a missing policy) would otherwise change it."""
    state = torch.get_rng_state()
    try:
        yield
    except BaseException:
        torch.set_rng_state(state)
        raise


def load_policy_agent(path, seed: int | None = None, *, greedy: bool = True,
                      device: str | torch.device = "cpu") -> PolicyAgent:
    """A :class:`PolicyAgent` from a checkpoint path or a shipped name; refuses a misfit file, a ``greedy``
    that is not a bool, a seed that is not one and a device this machine has not (before reading the file).
    The agent acts, so its network is frozen (``requires_grad`` off, which lets its first layer keep its
    permuted weights); to train it further, ``agent.net.requires_grad_(True)``, or ``train.py --init-from``."""
    greedy, device = checked_greedy(greedy), checked_device(device)
    checked_seed(seed)
    path = resolve_checkpoint(path)
    net, data = load_checkpoint(path, map_location=device)  # no such file: says which are shipped
    name = path.stem if path.parent == CHECKPOINT_DIR else str(path)
    agent = PolicyAgent(net.requires_grad_(False), seed, greedy=greedy, name=name, device=device)  # it acts
    agent.trained_players = trained_table_sizes(data.get("args", {}))
    return agent


def trained_table_sizes(args) -> tuple[int, int] | None:
    """The ``(fewest, most)`` players a checkpoint's run trained at (``train.py``'s ``--min-players`` and
    ``--max-players``, in its saved arguments); None where they do not tell it: not there (a network fitted by other
    means), or not the whole history (a network distilled, or fine-tuned from another, trained at other sizes too)."""
    if not isinstance(args, dict) or args.get("init_from") or "distilled" in args:
        return None
    fewest, most = args.get("min_players"), args.get("max_players")
    if isinstance(fewest, int) and isinstance(most, int) and not isinstance(fewest, bool) and fewest <= most:
        return fewest, most
    return None
