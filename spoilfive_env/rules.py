"""Rules configuration: one frozen dataclass holding every option of RULES.md, and presets.

>>> Rules(num_players=5).ante
1
>>> Rules.preset("hoyle").dealer_ante
1
>>> Rules(num_players=11)
Traceback (most recent call last):
...
ValueError: num_players=11 is not allowed: Spoil Five takes 2 to 10 players (5 cards each plus the turn-up must fit in 52)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .cards import MAX_PLAYERS, MIN_PLAYERS

PARTNERSHIP_TABLE_SIZES = (4, 6)


@dataclass(frozen=True)
class Rules:
    """Every option of RULES.md. Validated on construction; immutable afterwards."""

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
        for name in ("num_players", "starting_chips", "ante", "spoil_ante", "dealer_ante",
                     "jink_bonus", "num_hands", "max_hands"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name}={value!r} is not allowed: it must be an integer")
        for name in ("allow_jink", "conceal_ace_penalty", "partnerships"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(f"{name}={value!r} is not allowed: it must be True or False")
        if not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            raise ValueError(
                f"num_players={self.num_players} is not allowed: Spoil Five takes "
                f"{MIN_PLAYERS} to {MAX_PLAYERS} players (5 cards each plus the turn-up must fit in 52)"
            )
        for name in ("starting_chips", "ante", "spoil_ante", "dealer_ante", "jink_bonus"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}={getattr(self, name)} is not allowed: it must be 0 or more")
        if self.num_hands < 1:
            raise ValueError(f"num_hands={self.num_hands} is not allowed: it must be at least 1")
        if self.max_hands < self.num_hands:
            raise ValueError(
                f"max_hands={self.max_hands} is not allowed: it must be at least num_hands={self.num_hands}"
            )
        if self.partnerships and self.num_players not in PARTNERSHIP_TABLE_SIZES:
            raise ValueError(
                f"partnerships=True is not allowed with num_players={self.num_players}: "
                f"partnerships need {' or '.join(map(str, PARTNERSHIP_TABLE_SIZES))} players"
            )

    @classmethod
    def preset(cls, name: str, **overrides) -> "Rules":
        """A named preset (``default``, ``hoyle``, ``dealer_feeds``) with optional overrides."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}: choose one of {', '.join(PRESETS)}")
        return cls.from_options(**{**PRESETS[name], **overrides})

    @classmethod
    def from_options(cls, **options) -> "Rules":
        """Rules from keyword options, refusing unknown names with the list of known ones."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(
                f"unknown rules option(s) {', '.join(unknown)}: known options are "
                f"{', '.join(sorted(known))} and preset"
            )
        return cls(**options)

    def replace(self, **changes) -> "Rules":
        return self.from_options(**{**dataclasses.asdict(self), **changes})


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
