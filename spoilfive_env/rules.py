"""Rules configuration: one frozen dataclass holding every option of docs/rules.md, and presets.

>>> Rules(num_players=5).ante
1
>>> Rules.preset("hoyle").dealer_ante
1
>>> Rules(num_players=11)
Traceback (most recent call last):
...
ValueError: num_players=11 is not allowed: Spoil Five takes 2 to 10 players
(5 cards each plus the turn-up must fit in 52)

Limits. The engine keeps chips in 32-bit integers and counts hands in 16 bits, and gives rewards
as float32, so the options must keep every reachable count in range: ``max_hands`` is at most
``MAX_HANDS_LIMIT`` (32767); over ``max_hands`` hands every player's chips must stay within
``CHIPS_MIN`` to ``CHIPS_MAX`` (the int32 range); and the pool, with the jink bonuses of one hand,
at most ``HAND_CHIPS_MAX`` (2**24, to which float32 holds every whole number of chips, so a hand's
reward is its exact chip change; :func:`chip_reach` gives the worst case). Rules that could overflow
are refused here, and a core refuses a reset whose injected chips or pool could
(:func:`check_chip_headroom`):

>>> Rules(ante=2**30)
Traceback (most recent call last):
...
ValueError: ante=1073741824 is not allowed with these rules: ... ante may be at most 83886
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .cards import MAX_PLAYERS, MIN_PLAYERS

PARTNERSHIP_TABLE_SIZES = (4, 6)
CHIPS_MIN = -(2**31)
"""Lowest chip count the engine can hold (int32)."""
CHIPS_MAX = 2**31 - 1
"""Highest chip count the engine can hold (int32)."""
HAND_CHIPS_MAX = 2**24
"""Most chips a pool may hold, and one seat gain in one hand: rewards are float32, which hold every
whole number of chips exactly only up to 2**24."""
MAX_HANDS_LIMIT = 2**15 - 1
"""Most hands in one game: the engine counts hands in int16."""
INTEGER_OPTIONS = ("num_players", "starting_chips", "ante", "spoil_ante", "dealer_ante", "jink_bonus",
                   "num_hands", "max_hands")
BOOLEAN_OPTIONS = ("allow_jink", "conceal_ace_penalty", "partnerships")
CHIP_OPTIONS = ("starting_chips", "ante", "spoil_ante", "dealer_ante", "jink_bonus")


def is_integer(value) -> bool:
    """A Python or NumPy integer, and not a bool (True is no number of chips)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def chip_reach(num_players: int, ante: int, spoil_ante: int, dealer_ante: int, jink_bonus: int,
               hands: int, chips_low: int, chips_high: int, pool: int) -> tuple[int, int, int, int]:
    """The worst case over ``hands`` hands: ``(lowest chips, highest chips, largest pool, largest gain
    in one hand)``.

    Per hand a player pays at most the larger ante, the dealer's extra and one jink bonus, and
    the pool grows by at most every player's larger ante plus the dealer's extra. A player gains
    at most the whole pool and every other player's jink bonus. Python integers: no overflow.
    """
    per_hand_ante = max(ante, spoil_ante)
    pool_high = pool + hands * (per_hand_ante * num_players + dealer_ante)
    low = chips_low - hands * (per_hand_ante + dealer_ante + jink_bonus)
    high = chips_high + pool_high + hands * jink_bonus * (num_players - 1)
    return low, high, pool_high, pool_high + jink_bonus * (num_players - 1)


def _fits(low: int, high: int, pool_high: int, hand_gain_high: int) -> bool:
    # A hand's loss is at most its antes and one jink bonus, under the gain's bound.
    return CHIPS_MIN <= low and high <= CHIPS_MAX and pool_high <= hand_gain_high <= HAND_CHIPS_MAX


def largest_pool(rules: Rules, hands: int) -> int:
    """The largest pool a game may start ``hands`` hands with: its winner's gain in one hand (the pool grown
    by those hands' antes, and the others' jink bonuses) stays at most ``HAND_CHIPS_MAX``."""
    gain_high = chip_reach(rules.num_players, rules.ante, rules.spoil_ante, rules.dealer_ante, rules.jink_bonus,
                           hands, 0, 0, 0)[3]
    return HAND_CHIPS_MAX - gain_high


def check_chip_headroom(rules: Rules, hands: int, chips, pools) -> None:
    """Refuse chips ``(k, n)`` and pools ``(k,)`` that could overflow within ``hands`` hands.

    Raises:
        ValueError: naming the value and the range allowed under ``rules``.
    """
    n = rules.num_players
    chips = np.asarray(chips).reshape(-1, n)
    pools = np.broadcast_to(np.asarray(pools), (len(chips),)) if np.size(pools) else np.zeros(len(chips), int)
    outside = pools[(pools < 0) | (pools > HAND_CHIPS_MAX)]
    if outside.size:
        raise ValueError(f"pool {outside[0]} is not allowed: it must be 0 to {HAND_CHIPS_MAX} (rewards are float32, "
                         "exact in whole chips to 2**24)")
    outside = chips[(chips < CHIPS_MIN) | (chips > CHIPS_MAX)]
    if outside.size:
        raise ValueError(f"chips {outside[0]} is not allowed: chips must be {CHIPS_MIN} to {CHIPS_MAX} (the "
                         "engine counts chips in 32 bits)")
    # In range of int32, so the sums below cannot overflow int64.
    chips, pools = chips.astype(np.int64), pools.astype(np.int64)
    low, high, pool_high, gain_high = chip_reach(n, rules.ante, rules.spoil_ante, rules.dealer_ante,
                                                 rules.jink_bonus, hands, 0, 0, 0)
    within = f"within {hands} hand{'s' if hands != 1 else ''} under these rules"
    if pools.size and (pools + gain_high).max() > HAND_CHIPS_MAX:
        raise ValueError(f"pool {pools.max()} is not allowed: {within} a player may win it grown by {pool_high} "
                         f"chips and {gain_high - pool_high} chips of jink bonuses in one hand, so it must be 0 to "
                         f"{HAND_CHIPS_MAX - gain_high} (rewards are float32, exact in whole chips to 2**24)")
    if chips.size and chips.min() + low < CHIPS_MIN:
        raise ValueError(f"chips {chips.min()} is not allowed: {within} a player may pay {-low} chips, so "
                         f"chips must be at least {CHIPS_MIN - low} (the engine counts chips in 32 bits)")
    top = chips.max(axis=1) + pools
    if top.size and (top + high).max() > CHIPS_MAX:
        game = int(np.argmax(top))
        raise ValueError(
            f"chips {chips[game].max()} with a pool of {pools[game]} is not allowed: {within} a player may "
            f"win the pool and {high} chips more, so his chips plus the pool must be at most {CHIPS_MAX - high} "
            f"(the engine counts chips in 32 bits)")


@dataclass(frozen=True)
class Rules:
    """Every option of docs/rules.md. Validated on construction (see the module's limits);
    immutable afterwards. NumPy integers and booleans are accepted and stored as Python ones."""

    num_players: int = 4
    """2 to 10 players."""
    starting_chips: int = 20
    """Chips per player at the start of a game."""
    ante: int = 1
    """Chips each player pays into a new pool."""
    spoil_ante: int = 1
    """Chips each player adds to a pool carried over from a spoiled hand."""
    dealer_ante: int = 0
    """Extra chips the dealer pays into the pool every hand."""
    jink_bonus: int = 2
    """Chips each other player pays a successful jinker."""
    allow_jink: bool = True
    """Whether winning the first three tricks offers the choice to claim or jink."""
    conceal_ace_penalty: bool = False
    """The holder of the ace of trumps may play to trick 1 without announcing; that ace then
    ranks below every other trump (and the ace of hearts loses its reneging privilege)."""
    num_hands: int = 10
    """Hands in a game before play goes on until the pool is won."""
    max_hands: int = 50
    """Safety cap on hands in a game; the pool is then split evenly, the remainder unpaid."""
    partnerships: bool = False
    """4 or 6 players in two fixed teams of alternate seats (seat % 2); three tricks between
    a team's players win the pool, shared; no spoils except a failed jink."""

    def __post_init__(self):
        for name in INTEGER_OPTIONS:
            value = getattr(self, name)
            if not is_integer(value):
                raise ValueError(f"{name}={value!r} is not allowed: it must be an integer")
            object.__setattr__(self, name, int(value))  # a NumPy integer is stored as a Python int
        for name in BOOLEAN_OPTIONS:
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name}={value!r} is not allowed: it must be True or False")
            object.__setattr__(self, name, bool(value))
        if not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            raise ValueError(
                f"num_players={self.num_players} is not allowed: Spoil Five takes "
                f"{MIN_PLAYERS} to {MAX_PLAYERS} players (5 cards each plus the turn-up must fit in 52)"
            )
        for name in CHIP_OPTIONS:
            if not 0 <= getattr(self, name) <= CHIPS_MAX:
                raise ValueError(f"{name}={getattr(self, name)} is not allowed: it must be 0 to {CHIPS_MAX} "
                                 "(the engine counts chips in 32 bits)")
        if not 1 <= self.num_hands <= MAX_HANDS_LIMIT:
            raise ValueError(f"num_hands={self.num_hands} is not allowed: it must be 1 to {MAX_HANDS_LIMIT}")
        if not self.num_hands <= self.max_hands <= MAX_HANDS_LIMIT:
            raise ValueError(
                f"max_hands={self.max_hands} is not allowed: it must be num_hands={self.num_hands} to "
                f"{MAX_HANDS_LIMIT} (the engine counts hands in 16 bits)"
            )
        self._check_reach()
        if self.partnerships and self.num_players not in PARTNERSHIP_TABLE_SIZES:
            raise ValueError(
                f"partnerships=True is not allowed with num_players={self.num_players}: "
                f"partnerships need {' or '.join(map(str, PARTNERSHIP_TABLE_SIZES))} players"
            )

    def _reach(self, **changes) -> tuple[int, int, int, int]:
        values = {**{name: getattr(self, name) for name in INTEGER_OPTIONS}, **changes}
        return chip_reach(values["num_players"], values["ante"], values["spoil_ante"], values["dealer_ante"],
                          values["jink_bonus"], values["max_hands"], values["starting_chips"],
                          values["starting_chips"], 0)

    def _check_reach(self) -> None:
        """Refuse options whose chips could leave the int32 range within ``max_hands`` hands, or whose pool
        and one hand's jink bonuses could pass ``HAND_CHIPS_MAX``."""
        low, high, pool_high, gain_high = self._reach()
        if _fits(low, high, pool_high, gain_high):
            return
        reasons = []
        if not (CHIPS_MIN <= low and high <= CHIPS_MAX):
            reasons.append(f"a player's chips could reach {low} to {high}, beyond the engine's 32-bit chip "
                           f"counters ({CHIPS_MIN} to {CHIPS_MAX})")
        if gain_high > HAND_CHIPS_MAX:
            reasons.append(f"the pool could reach {pool_high} and a player gain {gain_high} chips in one hand, "
                           f"beyond {HAND_CHIPS_MAX} (rewards are float32, exact in whole chips to 2**24)")
        why = f"over max_hands={self.max_hands} hands " + ", and ".join(reasons)
        candidates = ("ante", "spoil_ante", "dealer_ante", "jink_bonus", "starting_chips", "max_hands")
        defaults = {field.name: field.default for field in dataclasses.fields(self)}
        # Blame an option the caller set before one left at its default: lowering either may fit.
        changed = [name for name in candidates if getattr(self, name) != defaults[name]]
        for name in changed + [name for name in candidates if name not in changed]:
            smallest = self.num_hands if name == "max_hands" else 0
            if not _fits(*self._reach(**{name: smallest})):
                continue  # this option alone is not what overflows
            allowed, too_big = smallest, getattr(self, name)  # bisect: allowed fits, too_big does not
            while too_big - allowed > 1:
                middle = (allowed + too_big) // 2
                allowed, too_big = (middle, too_big) if _fits(*self._reach(**{name: middle})) else (allowed, middle)
            raise ValueError(f"{name}={getattr(self, name)} is not allowed with these rules: {why}; with the "
                             f"other options as they are, {name} may be at most {allowed}")
        raise ValueError(f"these rules are not allowed: {why}; lower the antes, jink_bonus or max_hands")

    @classmethod
    def preset(cls, name: str, **overrides) -> Rules:
        """A named preset (``default``, ``hoyle``, ``dealer_feeds``) with optional overrides."""
        if not isinstance(name, str) or name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}: choose one of {', '.join(PRESETS)}")
        return cls.from_options(**{**PRESETS[name], **overrides})

    @classmethod
    def option_names(cls) -> list[str]:
        """The rules options by name, sorted (besides them, ``make_rules`` takes ``preset``)."""
        return sorted(field.name for field in dataclasses.fields(cls))

    @classmethod
    def from_options(cls, **options) -> Rules:
        """Rules from keyword options, refusing unknown names with the list of known ones."""
        if "preset" in options:  # make_rules (and the envs) take it: it chooses options, it is not one
            raise ValueError(f"preset={options['preset']!r} is not allowed here: Rules.from_options and "
                             "Rules.replace take the rules options alone; a preset is chosen by "
                             "make_rules(preset=...) or Rules.preset(name, **options)")
        known = cls.option_names()
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ValueError(
                f"unknown rules option(s) {', '.join(unknown)}: known options are "
                f"{', '.join(known)} (make_rules and the envs also take preset)"
            )
        return cls(**options)

    def replace(self, **changes) -> Rules:
        return self.from_options(**{**dataclasses.asdict(self), **changes})

    def sides(self) -> np.ndarray:
        """``(num_players,)`` the side each seat plays and is scored for: the seat itself, or its team
        (``seat % 2``) in partnerships, where three tricks between the partners win."""
        seats = np.arange(self.num_players)
        return seats % 2 if self.partnerships else seats


PRESETS: dict[str, dict] = {
    "default": {},
    "hoyle": {"ante": 2, "spoil_ante": 1, "dealer_ante": 1, "jink_bonus": 1},
    "dealer_feeds": {"spoil_ante": 0, "dealer_ante": 1},
}


def make_rules(num_players: int | None = None, preset: str | None = None, **options) -> Rules:
    """Rules from the keyword options that ``env(...)`` takes: a preset plus overrides."""
    if num_players is not None:
        options["num_players"] = num_players
    return Rules.preset(preset, **options) if preset is not None else Rules.from_options(**options)


def table_rules(num_players, **options) -> Rules:
    """:func:`make_rules` for an env's table: ``num_players`` is required there, where ``make_rules``
    reads None as the default; an env given None would quietly seat 4."""
    if num_players is None:
        raise ValueError("num_players=None is not allowed: it must be an integer, 2 to 10")
    return make_rules(num_players=num_players, **options)
