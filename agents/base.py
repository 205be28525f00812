"""The common base of every agent: ``act`` for one AEC observation, ``act_batch`` for a core.

An agent sees only what its seat's observation holds (the flat vector of
:mod:`spoilfive_env.observation` and the legal mask). The one exception is the cheating
``oracle``: its class sets ``cheats = True`` and the tournament hands it the engine's hidden
state through :meth:`Agent.act_batch_state`; it is a ceiling for measurement, never an
opponent in training.

>>> import numpy as np
>>> class FirstLegal(Agent):
...     name = "first"
...     def act_batch(self, observations, masks):
...         return masks.argmax(axis=1)
>>> agent = FirstLegal(seed=0)
>>> mask = np.zeros(107, np.int8); mask[[30, 41]] = 1
>>> agent.act({"observation": np.zeros(OBS_DIM), "action_mask": mask})
30
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping

import numpy as np

from spoilfive_env.actions import DECLINE_ROB, NUM_ACTIONS, ROB_FIRST, action_str, allowed
from spoilfive_env.core import PHASE_DONE, PHASE_JINK, PHASE_NAMES, PHASE_ROB, make_generator
from spoilfive_env.observation import CHIP_SCALE, OBS_DIM, SLICES, observation_bounds
from spoilfive_env.rules import CHIPS_MAX, CHIPS_MIN, Rules


class Agent:
    """Base class of all agents.

    Subclasses set ``name`` and implement :meth:`act_batch`. Randomness comes only from
    ``self.rng``, a generator made from the explicit ``seed`` (``None`` draws fresh entropy).

    Attributes:
        name: the registry name (``"random"``, ``"greedy"``, ...), or a checkpoint's name.
        seed: the seed the agent was made with.
        rng: the agent's own ``np.random.Generator``.
        cheats: True only for agents that read the engine's hidden state (the oracle).
        batch_invariant: True when ``act_batch``'s action for a row depends on that row alone
            (no random draws, no arithmetic that varies with the batch's size): a tournament
            may then decide the rows of many blocks of deals in one call (see
            :mod:`agents.sharding`). False by default, which is always safe.
        rules: the :class:`~spoilfive_env.rules.Rules` of the table, when a tournament or the
            terminal game has told the agent (see :meth:`bind`); ``None`` otherwise.
    """

    name: str = "agent"
    cheats: bool = False
    batch_invariant: bool = False

    def __init__(self, seed: int | None = None):
        self.rng = make_generator(seed)  # refuses a seed that is not a whole number >= 0 or None
        self.seed = seed
        self.rules = None

    def reseed(self, seed: int | None) -> None:
        """Restart the agent's random stream from ``seed`` (refused, and nothing changed, unless a
        whole number 0 or more, or None)."""
        self.rng = make_generator(seed)
        self.seed = seed

    def bind(self, rules) -> None:
        """Tell the agent the rules of the table it is about to play (agents may ignore it); anything
        but a :class:`~spoilfive_env.rules.Rules` is refused, and nothing changed."""
        self.rules = checked_rules(rules, "bind()")

    def act(self, observation: dict) -> int:
        """One action for one AEC observation dict (``"observation"``, ``"action_mask"``)."""
        if not isinstance(observation, Mapping) or not {"observation", "action_mask"} <= observation.keys():
            got = (f"keys {sorted(map(str, observation))}" if isinstance(observation, Mapping)
                   else type(observation).__name__)
            raise ValueError("act() takes one AEC observation: a dict with 'observation' and 'action_mask' "
                             f"(what env.observe(agent) returns), got {got}")
        obs = _numbers(observation["observation"], "act()", "an observation")
        mask = _mask_array(observation["action_mask"], "act()")
        if obs.shape != (OBS_DIM,) or mask.shape != (NUM_ACTIONS,):
            raise ValueError(f"act() needs an observation of {OBS_DIM} numbers and a mask of {NUM_ACTIONS}, "
                             f"got {obs.shape} and {mask.shape}")
        mask = _mask_as_bool(mask[None, :], "act()")
        if not mask.any():
            raise ValueError("act() needs an observation with at least one legal action in its mask")
        return int(self.act_batch(obs[None, :], mask)[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions ``(B,)`` int64 for observations ``(B, OBS_DIM)`` and legal masks ``(B, 107)``."""
        raise NotImplementedError(f"{type(self).__name__} must implement act_batch")

    def act_batch_core(self, core, games: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`act_batch`'s actions for the player to act in each of the core's ``games`` (int ``(k,)``),
        for a caller that holds the core: ``masks`` ``(k, 107)`` are those games' legal masks (or fewer
        actions). This builds the games' observations and calls :meth:`act_batch`; an agent that reads the
        same facts faster from the core (the rule players) overrides it, and reads nothing hidden
        from the player to act, unlike :meth:`act_batch_state`."""
        games, masks = checked_core_batch(core, games, masks)
        return self.act_batch(core.observe(games=games), masks)

    def act_batch_state(self, core, games: np.ndarray, observations: np.ndarray,
                        masks: np.ndarray) -> np.ndarray:
        """Like :meth:`act_batch`, also given the core and the game rows being decided.

        Only a cheating agent (``cheats = True``) overrides this; the tournament calls it
        only for such agents. The default ignores the state.
        """
        return self.act_batch(observations, masks)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, seed={self.seed!r})"


def checked_batch(observations, masks) -> tuple[np.ndarray, np.ndarray]:
    """``act_batch``'s arguments as C-contiguous float32 ``(B, OBS_DIM)`` and bool ``(B, 107)``, or a
    ``ValueError`` saying what is wrong (before any random draw): other shapes; a mask value other than
    0/1 or True/False; a row with no legal action; an observation that is not numbers, or holds a value
    outside the observation space (NaN and infinities included) or chips and a pool beyond the engine's
    32-bit counts; a mask that allows a card the
    observation's hand does not hold, or a rob, claim or jink outside that phase (except in a finished
    game's row, where the core allows everything)."""
    observations = _numbers(observations, "act_batch", "observations")
    masks = _mask_array(masks, "act_batch")
    if observations.ndim != 2 or observations.shape[1] != OBS_DIM or masks.shape != (len(observations), NUM_ACTIONS):
        raise ValueError(f"act_batch needs observations (B, {OBS_DIM}) and masks (B, {NUM_ACTIONS}), "
                         f"got {observations.shape} and {masks.shape}")
    masks = _mask_with_a_legal_action_a_row(masks, "act_batch")
    if len(observations):
        _check_bounds(observations)
        _check_fit(observations, masks)
    # torch refuses negative strides (a reversed view): hand every agent plain arrays
    return np.ascontiguousarray(observations), np.ascontiguousarray(masks)


def actions_in_core(agent, core, games: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``agent``'s actions for the player to act in the core's ``games`` (``masks``: their rows), as its
    ``act_batch`` gives them on those games' observations: through ``act_batch_core`` where it has one
    (every :class:`Agent`; the rule players read the core without building observations), through
    ``act_batch_state`` for a cheating agent (the oracle reads the hidden state), else through
    ``act_batch`` itself (an object that has only that)."""
    if getattr(agent, "cheats", False):
        return agent.act_batch_state(core, games, core.observe(games=games), masks)
    if hasattr(agent, "act_batch_core"):
        return agent.act_batch_core(core, games, masks)
    return agent.act_batch(core.observe(games=games), masks)


def checked_core_batch(core, games, masks) -> tuple[np.ndarray, np.ndarray]:
    """``act_batch_core``'s games as int64 ``(k,)`` and masks as bool ``(k, 107)``, or a ``ValueError``
    saying what is wrong: games that are not whole numbers below the core's batch size, masks of
    another shape or of values other than 0/1 or True/False, a row with no legal action, or one that
    allows what the core does not."""
    given = np.asarray(games)
    if given.ndim != 1 or (given.size and given.dtype.kind not in "iu"):
        raise ValueError(f"act_batch_core needs games as a 1-D array of game indices (whole numbers), got "
                         f"shape {given.shape}, dtype {given.dtype}")
    games = given.astype(np.int64, copy=False)
    if len(games) and (games.min() < 0 or games.max() >= core.batch_size):
        raise ValueError(f"act_batch_core needs games from 0 to {core.batch_size - 1} (the core's batch), got "
                         f"{games[:8].tolist()}")
    masks = _mask_array(masks, "act_batch_core")
    if masks.shape != (len(games), NUM_ACTIONS):
        raise ValueError(f"act_batch_core needs masks ({len(games)}, {NUM_ACTIONS}), one row for each game, "
                         f"got {masks.shape}")
    masks = _mask_with_a_legal_action_a_row(masks, "act_batch_core")
    beyond = masks & ~core.legal_mask()[games]
    if beyond.any():
        row, action = (int(i) for i in np.argwhere(beyond)[0])
        raise ValueError(f"act_batch_core got a mask that allows action {action} ({action_str(action)}) in game "
                         f"{int(games[row])}, which the core does not allow there")
    return games, np.ascontiguousarray(masks)


def checked_rules(rules, where: str):
    """``rules`` if it is a :class:`~spoilfive_env.rules.Rules`, else a ``ValueError`` naming ``where``."""
    if not isinstance(rules, Rules):
        raise ValueError(f"{where} needs the table's rules as a spoilfive_env.rules.Rules "
                         f"(for example Rules(num_players=4)), got {type(rules).__name__} {rules!r:.80}")
    return rules


def _numbers(values, where: str, what: str) -> np.ndarray:
    """``values`` as float32, or a ``ValueError`` when they are not numbers (None, text, ragged lists)."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):  # ragged nested lists
        raw = None
    if raw is None or raw.dtype.kind not in "biuf":
        if raw is None:
            got = "a ragged nested sequence"
        elif raw.dtype.kind == "O":
            got = f"{values!r:.60}"
        else:
            got = f"dtype {raw.dtype}" + (f", such as {raw.reshape(-1)[0].item()!r:.40}" if raw.size else "")
        raise ValueError(f"{where} needs {what} of numbers (float32, as the env's observe() gives), got {got}")
    return raw.astype(np.float32, copy=False)


def _mask_array(masks, where: str) -> np.ndarray:
    """``masks`` as an array, or a ``ValueError`` for a ragged nested sequence (NumPy's own names no argument)."""
    try:
        return np.asarray(masks)
    except ValueError:
        raise ValueError(f"{where} needs masks of {NUM_ACTIONS} 0/1 or True/False values a row, got a ragged "
                         f"nested sequence {masks!r:.60}") from None


def _is_zero_or_one(value) -> bool:
    return isinstance(value, (numbers.Real, np.bool_)) and (value == 0 or value == 1)


def _mask_as_bool(masks: np.ndarray, where: str) -> np.ndarray:
    """``masks`` as bool, or a ``ValueError`` naming the first value that is not 0/1 or True/False
    (NaN, -1, 2, 0.5, text would otherwise count as legal wherever they are not zero)."""
    if masks.dtype == bool:
        return masks
    if masks.dtype.kind in "iuf":
        ok = (masks == 0) | (masks == 1)  # NaN compares unequal to both
    else:  # text, objects: only real numbers 0 and 1 are mask values
        ok = np.frompyfunc(_is_zero_or_one, 1, 1)(masks).astype(bool) if masks.size else np.ones(masks.shape, bool)
    if not ok.all():
        row, action = (int(i) for i in np.argwhere(~ok)[0])
        value = masks[row, action]
        value = value.item() if isinstance(value, np.generic) else value
        raise ValueError(f"{where} needs masks of 0/1 or True/False values (1: legal); row {row} has "
                         f"{value!r:.40} for action {action} (dtype {masks.dtype})")
    return masks.astype(bool)


def _mask_with_a_legal_action_a_row(masks: np.ndarray, where: str) -> np.ndarray:
    """``masks`` as bool (:func:`_mask_as_bool`), or a ``ValueError`` naming the rows with no legal action."""
    masks = _mask_as_bool(masks, where)
    if not masks.any(axis=1).all():
        raise ValueError(f"{where} needs at least one legal action in every mask row; rows "
                         f"{np.flatnonzero(~masks.any(axis=1))[:5].tolist()} have none")
    return masks


def _observation_limits():
    """The env's observation space bounds as float32 (infinities as float32's largest number, so that
    an infinity is refused), each column's largest allowed bit pattern, and the one run of columns not
    bounded below by 0 (the chips)."""
    low, high = observation_bounds()
    low, high = np.maximum(low, -_BIG), np.minimum(high, _BIG)
    # The space allows any chips and pool, but the engine counts them in int32 (and the searches read
    # them back so): no more than int32's extremes (the engine's pool stays within 2**24, rules.HAND_CHIPS_MAX).
    high[SLICES["chips"]] = high[SLICES["pool"]] = np.float32(CHIPS_MAX / CHIP_SCALE)
    low[SLICES["chips"]] = np.float32(CHIPS_MIN / CHIP_SCALE)
    # A float32 from +0 up orders as its bits read as uint32, and NaN, infinities and negative
    # numbers read larger than any finite limit: one max pass checks every column from 0.
    from_zero = low == 0
    limit_bits = np.where(from_zero, high.view(np.uint32), np.iinfo(np.uint32).max).astype(np.uint32)
    signed = np.flatnonzero(~from_zero)
    assert len(signed) == signed[-1] + 1 - signed[0], "the signed columns are one run (a slice, no gather)"
    return low, high, limit_bits, slice(int(signed[0]), int(signed[-1]) + 1)


_BIG = np.finfo(np.float32).max
_LOW, _HIGH, _LIMIT_BITS, _SIGNED = _observation_limits()
_BLOCK_OF_COLUMN = np.empty(OBS_DIM, object)
for _name, _columns in SLICES.items():
    _BLOCK_OF_COLUMN[_columns] = _name
_HAND = SLICES["hand"]
_PHASE = SLICES["phase"].start
_NON_CARD_PHASE = [PHASE_ROB, PHASE_JINK, PHASE_JINK]  # the phase of decline, claim and jink


def _check_bounds(observations: np.ndarray) -> None:
    """Refuse a value outside the env's observation space (NaN and infinities included)."""
    signed = observations[:, _SIGNED]
    if (observations.view(np.uint32).max(axis=0) <= _LIMIT_BITS).all() \
            and ((signed >= _LOW[_SIGNED]) & (signed <= _HIGH[_SIGNED])).all():
        return
    with np.errstate(invalid="ignore"):
        bad = ~((observations >= _LOW) & (observations <= _HIGH))
    if not bad.any():  # only -0.0, whose bits the fast pass refused: a zero all the same
        return
    row, column = (int(i) for i in np.argwhere(bad)[0])
    low, high = _LOW[column], _HIGH[column]
    allowed = ("finite numbers" if low == -_BIG else f"finite numbers of at least {low:g}" if high == _BIG
               else f"numbers from {low:g} to {high:g}")
    block = _BLOCK_OF_COLUMN[column]
    if block in ("chips", "pool"):
        allowed += (f" (chip counts {CHIPS_MIN if block == 'chips' else 0} to {CHIPS_MAX}, the engine's 32-bit "
                    f"range, divided by {CHIP_SCALE:g})")
    raise ValueError(f"act_batch needs observations as spoilfive_env builds them: row {row} has "
                     f"{float(observations[row, column]):g} in its {block!r} block (column "
                     f"{column}), which holds {allowed}")


def _check_fit(observations: np.ndarray, masks: np.ndarray) -> None:
    """Refuse a mask that the observation's own position could not give: a play or rob of a card not
    in the hand, a decline outside robbing, a claim or jink outside the jink choice."""
    held = observations[:, _HAND] > 0.5
    loose = (masks[:, :ROB_FIRST] | masks[:, ROB_FIRST:DECLINE_ROB]) > held
    phase = observations[:, _PHASE:_PHASE + len(PHASE_NAMES)] > 0.5
    off_phase = masks[:, DECLINE_ROB:] > phase[:, _NON_CARD_PHASE]
    if not (loose.any() or off_phase.any()):
        return
    misfit = (loose.any(axis=1) | off_phase.any(axis=1)) & ~phase[:, PHASE_DONE]  # a finished game allows all
    if not misfit.any():
        return
    row = int(np.flatnonzero(misfit)[0])
    if loose[row].any():
        card = int(np.flatnonzero(loose[row])[0])
        action = card if masks[row, card] else ROB_FIRST + card
        why = f"card {card} is not in the observation's hand {np.flatnonzero(held[row]).tolist()}"
    else:
        action = DECLINE_ROB + int(np.flatnonzero(off_phase[row])[0])
        shown = [name for name, on in zip(PHASE_NAMES, phase[row], strict=True) if on]
        why = f"the observation's phase is {' and '.join(shown) or 'none'}"
    raise ValueError(f"act_batch got a mask that does not fit its observation: row {row} allows "
                     f"{action} ({action_str(action)}), but {why}")


def sample_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` ``(B, 107)``, without a loop."""
    masks = np.asarray(masks, dtype=bool)
    scores = rng.random(masks.shape)
    scores[~masks] = -1.0
    return scores.argmax(axis=1)


def stream_seed(seed: int, stream: int, index: int) -> int:
    """Seed of agent ``index``'s own random stream ``stream`` under ``seed``.

    Each caller names its ``stream`` (a constant of its own), so that an env's opponents and a
    tournament's agents made from the same seed draw independent numbers.
    """
    return int(np.random.SeedSequence([int(seed), stream, index]).generate_state(1)[0])


def lineup_key(spec):
    """What makes two lineup entries one agent: the same name or path, or the very same object."""
    return os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else id(spec)


def distinct_entries(specs) -> tuple[list[int], np.ndarray]:
    """The distinct agents of a lineup (see :func:`lineup_key`).

    Returns:
        The position of each distinct agent's first entry, in order, and every entry's index
        into them (int ``(len(specs),)``).

    >>> distinct_entries(["spoiler", "random", "spoiler"])
    ([0, 1], array([0, 1, 0]))
    """
    first, index, keys = [], [], {}
    for position, spec in enumerate(specs):
        key = lineup_key(spec)
        if key not in keys:
            keys[key] = len(first)
            first.append(position)
        index.append(keys[key])
    return first, np.array(index, np.int64)


def checked_actions(who: str, chosen, masks: np.ndarray, games=None) -> np.ndarray:
    """What an agent's ``act_batch`` returned for ``masks`` ``(B, 107)``, as int64 ``(B,)``, or a
    ``ValueError`` naming ``who`` (``"agent 'x'"``), what it returned and what is required: anything but one
    integer action per row (floats would be truncated, text parsed, one action broadcast to every row), or
    an action its row's mask does not allow. ``games``: the rows' game numbers, for the message."""
    rows = len(masks)
    try:
        actions = np.asarray(chosen)
    except (TypeError, ValueError):  # a ragged nested sequence
        actions = None
    if actions is None or actions.shape != (rows,) or actions.dtype.kind not in "iu":
        got = (f"{actions.dtype} actions of shape {actions.shape}" if isinstance(chosen, np.ndarray)
               else f"{chosen!r:.60} ({type(chosen).__name__})")
        raise ValueError(f"{who} returned {got} for {rows} row{'s' * (rows != 1)}: act_batch must return one legal "
                         f"integer action per row (an integer array of shape ({rows},))")
    legal = allowed(masks, actions)
    if not legal.all():
        row = int(np.flatnonzero(~legal)[0])
        where = f"in game {int(games[row])}" if games is not None else f"in row {row} of the batch it was given"
        raise ValueError(f"{who} chose action {actions[row]}, which its mask does not allow, {where}: act_batch "
                         "must return a legal action")
    return actions.astype(np.int64, copy=False)
