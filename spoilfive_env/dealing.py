"""Dealing unseen cards uniformly among every deal that respects what each seat cannot hold.

:func:`spoilfive_env.determinize.sample_hidden` knows, for one observation, which cards are
unseen, how many each other seat still holds, and which unseen cards each seat cannot hold (its
proven voids, the ace of trumps it would have robbed with, a trump it would have had to play).
A uniform draw over every deal that respects that is what a determinised search wants. Dealing
seat by seat is uniform when at most one kind of restriction is in play (those seats pick first,
the rest share what is left), but not when two seats are restricted differently: the first
seat's pick changes how many ways the second has, which a seat-by-seat deal ignores. This module
draws exactly from the uniform distribution in that case.

How: seats with the same restriction are one *group* (splitting a group's cards among its seats
uniformly is exact), and unseen cards fall into *types* by the groups that may hold them. The
number of deals is a sum over how many cards of each type each group takes; a forward pass over
the types counts them (a tensor over the groups' remaining places, one type and one group at a
time), and a backward pass draws the counts in proportion, then the cards within each type, then
each group's cards among its seats and the unrestricted seats' and the stock's share of the rest
(forward filtering, backward sampling). The tensor has one axis a group; where it would grow past
:data:`MAX_CELLS` the caller deals seat by seat instead.
"""

from __future__ import annotations

from math import comb, prod

import numpy as np

from .cards import NUM_CARDS

__all__ = ["MAX_CELLS", "deal_uniform", "needs_exact_deal"]

MAX_CELLS = 200_000
_BINOMIAL = np.array([[float(comb(r, x)) for x in range(NUM_CARDS + 1)] for r in range(NUM_CARDS + 1)])


def needs_exact_deal(unknown: np.ndarray, slots: np.ndarray, forbidden: np.ndarray) -> np.ndarray:
    """``(k,)``: the row has two seats still to be dealt cards that are restricted differently
    (among the unseen cards), where dealing seat by seat is not uniform."""
    restricted = np.asarray(forbidden, bool) & np.asarray(unknown, bool)[:, None, :]
    packed = np.packbits(restricted, axis=2)  # (k, n, 7): one bit a card
    code = np.concatenate([packed, np.zeros(packed.shape[:2] + (1,), np.uint8)], axis=2).view(np.uint64)[..., 0]
    seated = (slots > 0) & restricted.any(axis=2)
    lowest = np.where(seated, code, np.iinfo(np.uint64).max).min(axis=1)
    highest = np.where(seated, code, 0).max(axis=1)
    return seated.any(axis=1) & (lowest != highest)


def deal_uniform(unknown: np.ndarray, slots: np.ndarray, forbidden: np.ndarray, rng: np.random.Generator):
    """Deal ``slots`` (k, n) cards to each seat from ``unknown`` (k, 52), never a card that
    ``forbidden`` (k, n, 52) bars, uniformly among every such deal; what is left is in no hand.

    Rows with the same problem are solved once and drawn together.

    Returns ``(ok (k,), filled (k, 52))``: ``filled`` the seat given each card (``-1``: no hand);
    ``ok`` is False where no deal exists or the problem is over :data:`MAX_CELLS` (those rows
    are left to the caller).
    """
    unknown, forbidden = np.asarray(unknown, bool), np.asarray(forbidden, bool)
    k = len(unknown)
    filled = np.full((k, NUM_CARDS), -1, np.int8)
    ok = np.zeros(k, bool)
    if not k:
        return ok, filled
    key = np.concatenate([np.packbits(unknown, axis=1), slots.astype(np.uint8),
                          np.packbits(forbidden.reshape(k, -1), axis=1)], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    by_problem = np.argsort(inverse, kind="stable")
    ends = np.cumsum(np.bincount(inverse))
    starts = np.concatenate([[0], ends[:-1]])
    for problem, row in enumerate(first):
        members = by_problem[starts[problem]:ends[problem]]
        dealt = _deal_problem(unknown[row], slots[row], forbidden[row], len(members), rng)
        if dealt is not None:
            filled[members] = dealt
            ok[members] = True
    return ok, filled


def _deal_problem(unknown, slots, forbidden, draws: int, rng):
    """``draws`` uniform deals of one problem, ``(draws, 52)``, or None (no deal, or too large)."""
    cards = np.flatnonzero(unknown)
    if slots.sum() > len(cards):
        return None
    dealt = np.full((draws, NUM_CARDS), -1, np.int8)
    if not len(cards):
        return dealt
    barred = forbidden[:, cards]                                       # (n, U)
    seats = np.flatnonzero(slots > 0)
    groups: dict[bytes, list[int]] = {}
    for seat in seats:
        if barred[seat].any():
            groups.setdefault(np.packbits(barred[seat]).tobytes(), []).append(int(seat))
    group_seats = list(groups.values())
    free_seats = [int(s) for s in seats if not barred[s].any()]
    capacity = [int(slots[members].sum()) for members in group_seats]
    may_take = ~barred[[members[0] for members in group_seats]]               # (groups, U)
    types: dict[tuple, list[int]] = {}
    for j in range(len(cards)):
        types.setdefault(tuple(np.flatnonzero(may_take[:, j]).tolist()), []).append(j)
    type_list = list(types.items())
    shape = tuple(c + 1 for c in capacity)
    largest = max((len(members) for _, members in type_list), default=0)
    if prod(shape) * (largest + 1) > MAX_CELLS:
        return None
    steps = _count_deals(shape, capacity, type_list)
    total = steps[-1][2].sum(axis=-1)[(0,) * len(shape)]
    if not total > 0:
        return None
    taken = _draw_counts(steps, type_list, capacity, draws, rng)

    owner = np.full((draws, len(cards)), -1, np.int64)                 # group, or -1 for the rest
    for t, (allowed, members) in enumerate(type_list):
        counts = np.stack([taken[(t, g)] for g in allowed], axis=1) if allowed else np.zeros((draws, 0), np.int64)
        owner[:, members] = _split(np.ones((draws, len(members)), bool), allowed, counts, rng)
    hands = np.full((draws, len(cards)), -1, np.int64)                 # seat, as _split gives it
    for g, members in enumerate(group_seats):
        hands = np.where(owner == g, _split(owner == g, members, slots[members], rng), hands)
    rest = owner == -1
    hands = np.where(rest, _split(rest, free_seats, slots[free_seats], rng), hands)
    dealt[:, cards] = hands
    return dealt


def _count_deals(shape, capacity, type_list):
    """Forward pass: for each type and each group that may take it, the count tensor before that
    group's share is chosen (axes: the groups' remaining places, then the type's cards not yet
    placed), and after the type's last group. ``(type, group or None, tensor)`` each."""
    message = np.zeros(shape)
    message[tuple(capacity)] = 1.0
    steps = []
    axes = len(shape)
    for t, (allowed, members) in enumerate(type_list):
        m = len(members)
        current = np.zeros(shape + (m + 1,))
        current[..., m] = message
        for g in allowed:
            steps.append((t, g, current))
            after = np.zeros_like(current)
            for x in range(min(capacity[g], m) + 1):
                source = [slice(None)] * (axes + 1)
                target = [slice(None)] * (axes + 1)
                source[g], target[g] = slice(x, None), slice(0, shape[g] - x)
                source[axes], target[axes] = slice(x, None), slice(0, m + 1 - x)
                after[tuple(target)] += current[tuple(source)] * _BINOMIAL[x:m + 1, x]
            current = after
        steps.append((t, None, current))
        message = current.sum(axis=-1)
    return steps


def _draw_counts(steps, type_list, capacity, draws: int, rng):
    """Backward pass: how many cards of each type each group takes, ``{(type, group): (draws,)}``."""
    state = np.zeros((draws, len(capacity)), np.int64)                 # places left after the step
    left = np.zeros(draws, np.int64)
    taken = {}
    for t, g, tensor in reversed(steps):
        m = len(type_list[t][1])
        if g is None:
            weights = np.broadcast_to(tensor[tuple(state.T)], (draws, m + 1))  # over the cards kept
            left = _draw(weights, rng)                                # cards of the type for the others
            continue
        x = np.arange(min(capacity[g], m) + 1)
        before = state[:, g, None] + x
        remaining = left[:, None] + x
        valid = (before <= capacity[g]) & (remaining <= m)
        index = [np.broadcast_to(state[:, h, None], before.shape) for h in range(len(capacity))]
        index[g] = np.minimum(before, capacity[g])
        index.append(np.minimum(remaining, m))
        weights = np.where(valid, tensor[tuple(index)] * _BINOMIAL[np.minimum(remaining, NUM_CARDS), x], 0.0)
        choice = _draw(weights, rng)
        taken[(t, g)] = choice
        state[:, g] += choice
        left += choice
    return taken


def _draw(weights, rng):
    """One index per row, in proportion to the row's weights."""
    cumulative = np.cumsum(weights, axis=1)
    u = rng.random(len(weights)) * cumulative[:, -1]
    return np.minimum((cumulative <= u[:, None]).sum(axis=1), weights.shape[1] - 1)


def _split(mask, owners, counts, rng):
    """Share each row's cards in ``mask`` (draws, U) among ``owners`` at random, ``counts`` each
    (``(owners,)``, or ``(draws, owners)`` row by row); the cards past the counts go to -1."""
    keys = np.where(mask, rng.random(mask.shape), 2.0)
    order = np.argsort(keys, axis=1)
    rank = np.empty_like(order)                                        # each card's place in the shuffle
    np.put_along_axis(rank, order, np.arange(keys.shape[1])[None, :], axis=1)
    counts = np.asarray(counts, np.int64)
    if counts.ndim == 1:  # the same counts in every row: each place's owner once, then looked up
        which = np.searchsorted(np.cumsum(counts), np.arange(mask.shape[1]), side="right")[rank]
    else:
        which = (rank[:, :, None] >= np.cumsum(counts, axis=1)[:, None, :]).sum(axis=2)
    owner_of = np.append(np.asarray(owners, np.int64), -1)
    return np.where(mask, owner_of[which], -1)
