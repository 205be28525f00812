"""Determinisation: whole games built from one seat's information plus sampled hidden hands.

A seat's observation holds everything that seat knows. Search agents (PIMC, see
``agents/pimc.py``) need complete games that agree with it: the other players' hidden
cards filled in, and everything public kept. This module gives the two steps, each for a
batch of observations at once, without a Python loop over the batch:

* :func:`sample_hidden` draws hidden hands consistent with what the seat has seen;
* :func:`games_from_information` builds a :class:`~spoilfive_env.core.SpoilFiveCore` from
  observations plus hidden hands (any hands: sampled ones, or the true ones).

The viewer always sits in **seat 0** of the built games: observations only hold seats
relative to the viewer, and the rules only depend on relative positions (dealer, eldest,
turn order), so seat ``k`` of a built game is the player ``k`` places to the viewer's left.
Card and action ids are absolute, so an action chosen in a built game is the same action
in the real one. The built core's ``observe(0)`` equals the observation it came from, and
its legal mask (for the viewer, when the viewer is to act) equals the real one.

>>> import numpy as np
>>> from spoilfive_env.core import SpoilFiveCore
>>> real = SpoilFiveCore(3, seed=5)
>>> obs = real.observe()                       # the players to act, one per game
>>> holders, discards = sample_hidden(obs, np.random.default_rng(0))
>>> games = games_from_information(obs, holders, discards)
>>> bool(np.array_equal(games.observe(0), obs))
True

What a seat knows, and so what :func:`sample_hidden` respects:

* its own hand, every card played and by whom, the turn-up (left on the table unless
  somebody robbed; a robber holds it until he plays it), its own discard if it robbed;
* the voids each player has shown (the observation's ``voids`` block: proven from public
  plays only);
* the robbing rights: when the turn-up is not an ace, whoever robbed or declined holds the
  ace of trumps until he plays it, and a player who has had his turn in the first trick
  without robbing or declining does not hold it (under ``conceal_ace_penalty`` he may, and
  then he concealed it: the built game demotes that ace; but not if he answered a trump
  lead in trick 1 with a plain card, since the demoted ace would have bound him to a trump).
  Another seat's turn to rob is shown to the others as his turn to play (it would name the
  ace's holder), so from their view the seat to play to trick 1 may hold it, and a built game
  that gives it to him is at his turn to rob;
* how many cards each player still holds.

Everything else is unknown: the other cards are dealt uniformly among every deal that
respects all of the above, and what is left is the undealt stock, from which another robber's
hidden discard is drawn. Where two seats are restricted differently (say, void in different
suits) the deal is exact (:mod:`spoilfive_env.dealing`: the deals are counted and drawn in
proportion); otherwise seat by seat, the restricted seats first, which is then uniform too.
Before the exact deal (2026-12-03, later) every deal was seat by seat, which is not uniform when two
seats are restricted differently: against exact enumeration, 3 of 30 positions tested at 5
players and 7 of 17 at 10 were measurably off (a card 0.075 against 0.086 at 5 players, 0.40
against 0.29 at 10).

A plain card answering a trump lead in the trick on the table proves no void while a privileged
trump above the led card could be held back (the engine's ``voids`` block says nothing), but it
does prove the seat holds no other trump: this sampler reads that from the trick itself (the fix
of 2026-12-03; before it, such a seat could be given a trump it would have had to play, about 4%
of all samples under random play). Earlier tricks are not observed in order, so what they showed
beyond the proven voids is lost to every search. Two things the observation cannot tell are
assumed: a robber did not discard the ace of trumps itself (unless his hand is full
without it, or he has shown a trump void or answered a trump lead in the trick on the table
with a plain card), and (in ``mode="game"``) the
previous hand was not spoiled (``spoiled_last`` only changes the next hand's ante).

The built games count rewards from the decision point: ``chips_at_hand_start`` and
``pool_at_hand_start`` are set to the chips and pool now, so a hand's reward is the change
from here on, which is what a search should maximise.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .cards import (
    ACE,
    ACE_OF_TRUMPS,
    CONCEALED_ACE_STRENGTH,
    EFFECTIVE_SUIT,
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_CARDS,
    NUM_RANKS,
    PRIVILEGED,
    STRENGTH,
    TRICKS_TO_WIN,
    TRUMP,
    card_str,
)
from .core import PHASE_DONE, PHASE_PLAY, PHASE_ROB, STATE_FIELDS, SpoilFiveCore
from .dealing import deal_uniform, needs_exact_deal
from .observation import CHIP_SCALE, OBS_DIM, SLICES, as_float32
from .rules import CHIPS_MAX, CHIPS_MIN, Rules

__all__ = ["Information", "games_from_information", "read_information", "sample_hidden"]

_MAX_RETRIES = 20


@dataclass
class Information:
    """What a batch of ``B`` observations say, seats relative to the viewer (0 = viewer).

    Every seat field uses ``-1`` for "none". ``n`` is the table size (the same for every row).
    """

    num_players: int
    hand: np.ndarray          # (B, 52) bool: the viewer's cards
    played_by: np.ndarray     # (B, 52) int8: relative seat that played the card, -1 unplayed
    turnup: np.ndarray        # (B,) int8
    trump: np.ndarray         # (B,) int8
    trick_cards: np.ndarray   # (B, 10) int8: current trick by position from the leader
    trick_pos: np.ndarray     # (B,) int8: cards on the current trick
    led_card: np.ndarray      # (B,) int8
    leader: np.ndarray        # (B,) int8
    current: np.ndarray       # (B,) int8: seat to act, -1 once the hand is over
    phase: np.ndarray         # (B,) int8: rob, play, jink, done
    tricks_won: np.ndarray    # (B, n) int8
    trick_number: np.ndarray  # (B,) int8
    dealer: np.ndarray        # (B,) int8
    robber: np.ndarray        # (B,) int8
    declined: np.ndarray      # (B,) int8
    jinker: np.ndarray        # (B,) int8
    voids: np.ndarray         # (B, n, 5) bool
    own_concealed: np.ndarray  # (B,) bool
    own_discard: np.ndarray   # (B,) int8: the viewer's discard if he robbed
    pool: np.ndarray          # (B,) int32
    chips: np.ndarray         # (B, n) int32
    hand_place: np.ndarray    # (B, 3) float32: the observation's hand_place block
    teammates: bool           # the observation marks teams (partnerships)

    def take(self, rows) -> Information:
        """The information of ``rows`` (indices into the batch, repeats allowed): as
        ``read_information(observations[rows])`` gives it, without decoding each repeat again."""
        return dataclasses.replace(self, **{field.name: getattr(self, field.name)[rows]
                                            for field in dataclasses.fields(self)
                                            if isinstance(getattr(self, field.name), np.ndarray)})


def _one_hot_index(block: np.ndarray) -> np.ndarray:
    """Index of the hot entry per row, -1 where the row is all zero."""
    return np.where(block.max(axis=1) > 0.5, block.argmax(axis=1), -1).astype(np.int8)


def read_information(observations: np.ndarray) -> Information:
    """Decode a batch of observations ``(B, OBS_DIM)`` into arrays, vectorised.

    Raises ``ValueError`` when the rows are not observations, come from different table
    sizes, or show what no game can (a card both held and played, a trump that is not the
    turn-up's suit, more cards or tricks than were dealt or played).
    """
    obs = as_float32(observations, "observations")
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
        raise ValueError(f"observations must have shape (B, {OBS_DIM}), got {obs.shape}")
    B = len(obs)
    table = obs[:, SLICES["table_size"]]
    if B == 0:
        raise ValueError("observations must hold at least one row")
    not_finite = ~np.isfinite(obs).all(axis=1)
    if not_finite.any():  # a NaN pool read back as -2**31 chips
        raise ValueError(f"row {int(np.flatnonzero(not_finite)[0])} is no Spoil Five observation: it holds a value "
                         "that is not a finite number")
    if not np.all((table > 0.5).sum(axis=1) == 1):
        raise ValueError("not Spoil Five observations: the table_size block is not one-hot")
    sizes = table.argmax(axis=1) + MIN_PLAYERS
    if np.any(sizes != sizes[0]):
        raise ValueError(f"observations come from different table sizes: {sorted(set(sizes.tolist()))}")
    n = int(sizes[0])
    played = obs[:, SLICES["played"]].reshape(B, MAX_PLAYERS, NUM_CARDS)[:, :n] > 0.5
    played_by = np.where(played.any(axis=1), played.argmax(axis=1), -1).astype(np.int8)
    leader = _one_hot_index(obs[:, SLICES["leader"]])
    in_trick = obs[:, SLICES["trick_cards"]] > 0.5
    trick_cards = np.full((B, MAX_PLAYERS), -1, np.int8)
    g, card = np.nonzero(in_trick)
    position = (played_by[g, card].astype(np.int16) - leader[g]) % n
    trick_cards[g, position] = card
    phase = obs[:, SLICES["phase"]].argmax(axis=1).astype(np.int8)
    voids = obs[:, SLICES["voids"]].reshape(B, MAX_PLAYERS, 5)[:, :n] > 0.5
    info = Information(
        num_players=n,
        hand=obs[:, SLICES["hand"]] > 0.5,
        played_by=played_by,
        turnup=obs[:, SLICES["turnup"]].argmax(axis=1).astype(np.int8),
        trump=obs[:, SLICES["trump"]].argmax(axis=1).astype(np.int8),
        trick_cards=trick_cards,
        trick_pos=in_trick.sum(axis=1).astype(np.int8),
        led_card=_one_hot_index(obs[:, SLICES["led_card"]]),
        leader=leader,
        current=_one_hot_index(obs[:, SLICES["to_act"]]),
        phase=phase,
        tricks_won=np.rint(obs[:, SLICES["tricks_won"]][:, :n] * TRICKS_TO_WIN).astype(np.int8),
        trick_number=obs[:, SLICES["trick_number"]].argmax(axis=1).astype(np.int8),
        dealer=_one_hot_index(obs[:, SLICES["dealer"]]),
        robber=_one_hot_index(obs[:, SLICES["robber"]]),
        declined=_one_hot_index(obs[:, SLICES["declined"]]),
        jinker=_one_hot_index(obs[:, SLICES["jinker"]]),
        voids=voids,
        own_concealed=obs[:, SLICES["own_concealed"]][:, 0] > 0.5,
        own_discard=_one_hot_index(obs[:, SLICES["own_discard"]]),
        pool=_chip_counts(obs[:, SLICES["pool"]][:, 0]),
        chips=_chip_counts(obs[:, SLICES["chips"]][:, :n]),
        hand_place=obs[:, SLICES["hand_place"]].copy(),
        teammates=bool((obs[:, SLICES["teammates"]] > 0.5).any()),
    )
    _check_possible(info, (obs[:, SLICES["turnup"]] > 0.5).sum(axis=1), (obs[:, SLICES["phase"]] > 0.5).sum(axis=1))
    return info


def _chip_counts(block: np.ndarray) -> np.ndarray:
    """An observation's chips or pool as the engine's int32 counts. The float32 the engine shows for
    ``CHIPS_MAX`` reads back as 2**31, one past int32: clipped (in float64, where the bound is exact)."""
    return np.clip(np.rint(block * CHIP_SCALE).astype(np.float64), CHIPS_MIN, CHIPS_MAX).astype(np.int32)


def _check_possible(info: Information, turnups: np.ndarray, phases: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first row that no game can show (a hand-made or damaged
    observation), before a search builds games from it."""
    n = info.num_players
    live = info.phase != PHASE_DONE
    own_played = (info.played_by == 0).sum(axis=1)
    played = (info.played_by >= 0).sum(axis=1)
    rows = np.arange(len(info.phase))
    problems = (
        (turnups != 1, "the turnup block is not one-hot"),
        (phases != 1, "the phase block is not one-hot"),
        (info.trump != info.turnup // NUM_RANKS, "the trump is not the turn-up's suit"),
        ((info.hand & (info.played_by >= 0)).any(axis=1), "a card is both in the hand and played"),
        (info.hand[rows, info.turnup] & (info.robber != 0), "the turn-up is in the hand of a viewer who did not rob"),
        (info.hand.sum(axis=1) + own_played > HAND_SIZE, f"the viewer has held and played more than {HAND_SIZE} cards"),
        (live & (info.hand.sum(axis=1) + own_played != HAND_SIZE),
         f"the viewer holds and has played {HAND_SIZE} cards in all until the hand is over"),
        (live & (played != n * info.trick_number + info.trick_pos),
         "the cards played are not the completed tricks and the trick on the table"),
        (info.tricks_won.sum(axis=1) != info.trick_number, "the tricks won are not the tricks completed"),
    )
    for bad, what in problems:
        if bad.any():
            raise ValueError(f"row {int(np.flatnonzero(bad)[0])} is no Spoil Five observation: {what}")


def _as_information(observations) -> Information:
    return observations if isinstance(observations, Information) else read_information(observations)


def _rules_for(info: Information, rules: Rules | None) -> Rules:
    if rules is None:
        return Rules(num_players=info.num_players, partnerships=info.teammates)
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a spoilfive_env.rules.Rules (or None for the default rules), "
                         f"got {type(rules).__name__}")
    if rules.num_players != info.num_players:
        raise ValueError(f"rules are for {rules.num_players} players but the observations "
                         f"come from a table of {info.num_players}")
    if rules.partnerships != info.teammates:  # the built games would show teams the observations do not
        raise ValueError(f"rules have partnerships={rules.partnerships} but the observations "
                         f"{'mark' if info.teammates else 'mark no'} teammates")
    return rules


def _per_seat_counts(seat_of_card: np.ndarray, num_players: int) -> np.ndarray:
    """``(B, n)``: how many of each row's cards ``seat_of_card`` ``(B, 52)`` gives each seat (``-1``: none);
    one bincount, where comparing with every seat would build a ``(B, 52, n)`` array."""
    B = len(seat_of_card)
    seat = seat_of_card.astype(np.int64)
    index = (np.arange(B)[:, None] * num_players + seat)[seat >= 0]
    return np.bincount(index, minlength=B * num_players).reshape(B, num_players)


def _had_first_turn(info: Information) -> np.ndarray:
    """``(B, n)``: the seat has had its turn in the first trick (played to it, or is the viewer,
    to play to it now with the robbing choice behind him). Another seat to play in trick 1 may
    still be choosing to rob: that turn is shown to the others as play (it would name him)."""
    n = info.num_players
    seats = np.arange(n)
    played_any = _per_seat_counts(info.played_by, n) > 0
    past_first = info.trick_number > 0
    playing_now = ((info.current == 0) & (info.phase == PHASE_PLAY) & (info.trick_number == 0))[:, None] \
        & (seats == 0)[None, :]
    return past_first[:, None] | played_any | playing_now


def sample_hidden(observations, rng: np.random.Generator, rules: Rules | None = None):
    """Hidden hands consistent with each observation, one sample per row.

    Args:
        observations: ``(B, OBS_DIM)`` observations (or an :class:`Information`). Repeat
            rows (``np.repeat(obs, k, axis=0)``) for ``k`` samples of one observation.
        rng: the generator to draw from.
        rules: the table's rules (default: the default rules at the observed table size);
            only ``conceal_ace_penalty`` changes what is consistent.

    Returns:
        ``holders`` ``(B, 52)`` int8, the relative seat holding each card (the viewer's
        hand is seat 0; ``-1`` for a card in no hand: played, turn-up on the table, undealt
        or discarded), and ``discards`` ``(B,)`` int8, the robber's discard (``-1`` if
        nobody robbed; the viewer's own discard when he robbed).
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), "
                         f"got {type(rng).__name__}")
    info = _as_information(observations)
    rules = _rules_for(info, rules)
    n = info.num_players
    B = len(info.phase)
    rows = np.arange(B)
    seats = np.arange(n)
    holders = np.full((B, NUM_CARDS), -1, np.int8)
    holders[info.hand] = 0
    played = info.played_by >= 0
    known = info.hand | played
    known[rows, info.turnup] = True
    has_discard = info.own_discard >= 0
    known[rows[has_discard], info.own_discard[has_discard]] = True

    suits = EFFECTIVE_SUIT[info.trump]  # (B, 52)
    forbidden = np.zeros((B, n, NUM_CARDS), bool)
    for suit in range(5):
        forbidden |= info.voids[:, :, suit, None] & (suits == suit)[:, None, :]
    # A plain card on a trump lead in the trick on the table: the engine proves no void while a
    # privileged trump above the lead could be held back, but any other trump would have been due.
    led = np.maximum(info.led_card, 0)
    trump_led = (info.led_card >= 0) & (suits[rows, led] == TRUMP)
    answered_plain = np.zeros((B, n), bool)  # (B, n): the seat answered a trump lead with a plain card
    for position in range(1, n):
        card = info.trick_cards[:, position]
        plain = np.flatnonzero(trump_led & (card >= 0) & (suits[rows, np.maximum(card, 0)] != TRUMP))
        answered_plain[plain, (info.leader[plain] + position) % n] = True
    g = np.flatnonzero(answered_plain.any(axis=1))
    strength = STRENGTH[info.trump[g]]
    may_hold_back = PRIVILEGED[info.trump[g]] & (strength > strength[np.arange(len(g)), led[g]][:, None])
    forbidden[g] |= answered_plain[g][:, :, None] & ((suits[g] == TRUMP) & ~may_hold_back)[:, None, :]
    # The turn-up in another robber's hand until he plays it.
    r = np.flatnonzero((info.robber > 0) & ~played[rows, info.turnup])
    holders[r, info.turnup[r]] = info.robber[r]
    # The ace of trumps (turn-up not an ace): with whoever robbed or declined, or with the
    # seat now choosing to rob; else nobody who has had his first turn holds it.
    ace = ACE_OF_TRUMPS[info.trump].astype(np.int64)
    ace_turned = info.turnup % NUM_RANKS == ACE
    ace_open = ~ace_turned & ~known[rows, ace]
    entitled = np.where(info.robber >= 0, info.robber, info.declined)
    entitled = np.where((entitled < 0) & (info.phase == PHASE_ROB), info.current, entitled)
    a = np.flatnonzero(ace_open & (entitled > 0))
    played_count = _per_seat_counts(info.played_by, n)
    room = HAND_SIZE - played_count[a, entitled[a]] - (holders[a] == entitled[a][:, None]).sum(axis=1)
    # Shown to hold no such trump: a trump void, or a renege in the trick on the table.
    keeps = (room > 0) & ~forbidden[a, entitled[a], ace[a]]
    holders[a[keeps], ace[a[keeps]]] = entitled[a[keeps]]
    # A robber whose hand is full without the ace, or who has shown he holds no such trump,
    # discarded the ace itself.
    ace_discarded = np.zeros(B, bool)
    ace_discarded[a[~keeps]] = info.robber[a[~keeps]] >= 0
    known[holders > 0] = True
    known[rows[ace_discarded], ace[ace_discarded]] = True
    if not rules.conceal_ace_penalty:
        open_rows = np.flatnonzero(ace_open & (entitled < 0))
        barred = _had_first_turn(info)[open_rows]
        forbidden[open_rows[:, None], seats[None, :], ace[open_rows][:, None]] |= barred
    else:
        # An unannounced ace of trumps is concealed from its holder's first play on, and a
        # concealed ace is demoted for the rest of the hand (docs/rules.md): a seat that
        # answered a trump lead in the trick on the table with a plain card holds none.
        concealed = ace_open & (entitled < 0)
        forbidden[rows[:, None], seats[None, :], ace[:, None]] |= answered_plain & concealed[:, None]

    held = _per_seat_counts(holders, n)  # (B, n) assigned so far
    slots = HAND_SIZE - played_count - held
    slots[:, 0] = 0
    if np.any(slots < 0):
        raise ValueError("inconsistent observation: a seat holds more cards than it was dealt")
    unknown = ~known
    forbidden[:, 0] = True

    # Two seats restricted differently: dealt exactly uniformly (spoilfive_env.dealing); else seat
    # by seat, which is then uniform, retrying (and at last ignoring the restrictions) where stuck.
    exact = np.flatnonzero(needs_exact_deal(unknown, slots, forbidden))
    ok, filled = deal_uniform(unknown[exact], slots[exact], forbidden[exact], rng)
    holders[exact[ok]] = np.where(filled[ok] >= 0, filled[ok], holders[exact[ok]])
    todo = np.setdiff1d(rows, exact[ok])
    for attempt in range(_MAX_RETRIES + 1):
        relax = attempt == _MAX_RETRIES
        ok, filled = _deal_unknown(unknown[todo], slots[todo], forbidden[todo] & (not relax), rng)
        done_rows = todo[ok]
        holders[done_rows] = np.where(filled[ok] >= 0, filled[ok], holders[done_rows])
        todo = todo[~ok]
        if not len(todo):
            break
    if len(todo):
        raise ValueError("inconsistent observation: not enough unseen cards for the hidden hands")

    discards = np.where(has_discard, info.own_discard, -1).astype(np.int8)
    discards[ace_discarded] = ace[ace_discarded]
    other = np.flatnonzero((info.robber > 0) & ~ace_discarded)
    if len(other):
        stock = unknown[other] & (holders[other] < 0)
        score = np.where(stock, rng.random(stock.shape), -1.0)
        discards[other] = score.argmax(axis=1)
    return holders, discards


def _largest_first(score: np.ndarray, count: int) -> np.ndarray:
    """``(k, count)``: the columns of each row's ``count`` largest scores, largest first; the first
    ``count`` columns of a descending argsort, found by ``count`` argmaxes (a hand is at most 5 cards)."""
    score = score.copy()
    rows = np.arange(len(score))
    top = np.empty((len(score), count), np.int64)
    for place in range(count):
        top[:, place] = score.argmax(axis=1)
        score[rows, top[:, place]] = -np.inf
    return top


def _deal_unknown(unknown, slots, forbidden, rng):
    """Deal ``slots`` (k, n) cards per seat from ``unknown`` (k, 52), avoiding ``forbidden``
    (k, n, 52). Returns ``(ok (k,), filled (k, 52) seat or -1)``."""
    k, n = slots.shape
    rows = np.arange(k)
    filled = np.full((k, NUM_CARDS), -1, np.int8)
    free = unknown.copy()
    ok = np.ones(k, bool)
    # Seats with the most forbidden unseen cards pick first.
    pressure = (forbidden & unknown[:, None, :]).sum(axis=2) * (slots > 0)
    order = np.argsort(-pressure, axis=1, kind="stable")
    for rank in range(n):
        seat = order[:, rank]
        need = slots[rows, seat]
        if not need.any():
            continue
        allowed = free & ~forbidden[rows, seat]
        ok &= allowed.sum(axis=1) >= need
        score = np.where(allowed, rng.random(allowed.shape), -1.0)
        top = _largest_first(score, int(need.max()))
        take = (np.arange(top.shape[1])[None, :] < need[:, None]) & (score[rows[:, None], top] >= 0)
        g, j = np.nonzero(take)
        cards = top[g, j]
        filled[g, cards] = seat[g]
        free[g, cards] = False
    return ok, filled


def _checked_discards(discards, info: Information, holders: np.ndarray) -> np.ndarray:
    """``discards`` as ``(B,)`` int64, or a ``ValueError``: each one a card index 0-51 or -1, and where
    another seat robbed, not a card that ``holders`` puts in a hand or that was played."""
    B = len(info.phase)
    given = np.asarray(discards)
    if given.dtype.kind not in "iu" or given.size != B:
        raise ValueError(f"discards must be card indices 0-51 (-1: unknown, or nobody robbed), one per row ({B},), "
                         f"got {given.dtype} of shape {given.shape}")
    given = given.reshape(B)
    outside = (given < -1) | (given >= NUM_CARDS)
    if outside.any():  # (before int64, where a huge unsigned value reads -1)
        raise ValueError(f"discards must be card indices 0-51 or -1, got {given[outside][:5].tolist()}")
    given = given.astype(np.int64)
    card = np.maximum(given, 0)
    rows = np.arange(B)
    used = (info.robber >= 0) & (info.own_discard < 0) & (given >= 0)
    in_play = used & ((holders[rows, card] >= 0) | (info.played_by[rows, card] >= 0))
    if in_play.any():
        row = int(np.flatnonzero(in_play)[0])
        raise ValueError(f"row {row}: the robber's discard {card_str(int(card[row]))} is in a hand or played "
                         "(a discard is out of play)")
    return given


def games_from_information(observations, holders, discards=None, rules: Rules | None = None, *,
                           mode: str = "hand", reward: str = "equity") -> SpoilFiveCore:
    """A core of ``B`` games, each the observed game with the given hidden hands.

    Args:
        observations: ``(B, OBS_DIM)`` observations (or an :class:`Information`), each from
            the seat whose information the game is built from; that seat becomes seat 0.
        holders: ``(B, 52)`` relative seat holding each card (``-1``: in no hand), as
            :func:`sample_hidden` returns; seat 0's cards must be the observed hand, and
            each seat must hold as many cards as it has left to play.
        discards: ``(B,)`` the robber's discard (``-1`` if unknown or nobody robbed). When the
            viewer robbed, his own discard is taken from the observation.
        rules: the table's rules (default: the default rules at the observed table size).
        mode: ``"hand"`` (the games end with the hand: what a search wants) or ``"game"``
            (the hands go on; ``hand_index`` is read from the observation).
        reward: ``"equity"`` or ``"chips"``, counted from this decision point on.

    Returns:
        A :class:`SpoilFiveCore` whose every game is ready to step from the observed point.

    Raises:
        ValueError: the hidden hands contradict the observation (the viewer's hand, a
            played card held, the wrong number of cards in a hand), or a discard is not a
            card index 0-51 or -1, or is a card in a hand or played.
    """
    info = _as_information(observations)
    rules = _rules_for(info, rules)
    n = info.num_players
    B = len(info.phase)
    rows = np.arange(B)
    holders = np.asarray(holders)
    if holders.shape != (B, NUM_CARDS) or not np.issubdtype(holders.dtype, np.integer):
        raise ValueError(f"holders must be integers of shape ({B}, {NUM_CARDS}), got {holders.shape} {holders.dtype}")
    if holders.min() < -1 or holders.max() >= n:
        raise ValueError(f"holders must be seats 0-{n - 1} or -1")
    holders = holders.astype(np.int8)
    bad = np.flatnonzero(((holders == 0) != info.hand).any(axis=1))
    if len(bad):
        raise ValueError(f"row {bad[0]}: seat 0's cards in holders differ from the observed hand")
    bad = np.flatnonzero(((holders >= 0) & (info.played_by >= 0)).any(axis=1))
    if len(bad):
        raise ValueError(f"row {bad[0]}: holders puts a played card in a hand")
    counts = _per_seat_counts(holders, n) + _per_seat_counts(info.played_by, n)
    bad = np.flatnonzero((counts != HAND_SIZE).any(axis=1))
    if len(bad):
        raise ValueError(f"row {bad[0]}: each seat must hold and have played {HAND_SIZE} cards in all, "
                         f"got {counts[bad[0]].tolist()}")
    discards = np.full(B, -1, np.int8) if discards is None else _checked_discards(discards, info, holders)
    discards = np.where(info.own_discard >= 0, info.own_discard, discards)
    discards = np.where(info.robber >= 0, discards, -1).astype(np.int8)

    core = SpoilFiveCore(B, rules=rules, mode=mode, reward=reward, deal=False)
    trump = info.trump.astype(np.int64)
    strength = STRENGTH[trump].copy()
    privileged = PRIVILEGED[trump].copy()
    ace = ACE_OF_TRUMPS[trump].astype(np.int64)
    ace_turned = info.turnup % NUM_RANKS == ACE
    ace_seat = np.where(holders[rows, ace] >= 0, holders[rows, ace], info.played_by[rows, ace])
    entitled = np.where(info.robber >= 0, info.robber, info.declined)
    rob_seat = np.where(ace_turned, info.dealer, np.where(entitled >= 0, entitled, ace_seat)).astype(np.int8)
    acted = (info.robber >= 0) | (info.declined >= 0)
    first_turn = _had_first_turn(info)
    seat_had_turn = first_turn[rows, np.maximum(rob_seat, 0)] & (rob_seat >= 0)
    concealed = info.own_concealed.copy()
    if rules.conceal_ace_penalty:
        concealed |= ~ace_turned & (rob_seat > 0) & ~acted & seat_had_turn
    c = np.flatnonzero(concealed)
    strength[c, ace[c]] = CONCEALED_ACE_STRENGTH
    privileged[c, ace[c]] = False
    rob_pending = np.where(ace_turned, info.phase == PHASE_ROB,
                           (rob_seat >= 0) & ~acted & ~concealed & ~seat_had_turn)
    live = info.phase != PHASE_DONE
    # Another seat's turn to rob an ordinary turn-up is observed as play: where the hands give him
    # the ace of trumps, that is his turn.
    phase = np.where(~ace_turned & (rob_seat > 0) & (rob_seat == info.current) & rob_pending
                     & (info.phase == PHASE_PLAY), PHASE_ROB, info.phase).astype(np.int8)
    place = info.hand_place
    hand_index = np.where(place[:, 2] > 0.5, np.rint(place[:, 0] * rules.num_hands), 0)

    state = {
        "holder": holders,
        "played_by": info.played_by.copy(),
        "trick_cards": info.trick_cards.copy(),
        "trick_pos": info.trick_pos.copy(),
        "led_card": info.led_card.copy(),
        "leader": np.maximum(info.leader, 0).astype(np.int8),
        "current": np.where(live, np.maximum(info.current, 0), 0).astype(np.int8),
        "phase": phase,
        "tricks_won": info.tricks_won.copy(),
        "trick_number": info.trick_number.copy(),
        "trump": info.trump.copy(),
        "turnup": info.turnup.copy(),
        "dealer": np.maximum(info.dealer, 0).astype(np.int8),
        "effective_suit": EFFECTIVE_SUIT[trump].copy(),
        "strength": strength,
        "privileged": privileged,
        "rob_seat": rob_seat,
        "rob_pending": rob_pending,
        "robber": info.robber.copy(),
        "declined_by": info.declined.copy(),
        "discard": discards,
        "concealed": concealed,
        "jinker": info.jinker.copy(),
        "void": info.voids.copy(),
        "chips": info.chips.copy(),
        "pool": info.pool.copy(),
        "hand_index": hand_index.astype(np.int16),
        "spoiled_last": np.zeros(B, bool),
        "chips_at_hand_start": info.chips.copy(),
        "pool_at_hand_start": info.pool.copy(),
        "game_over": ~live,
        "last_winner": np.full(B, -1, np.int8),
        "last_tricks": np.zeros((B, n), np.int8),
        "last_jinker": np.full(B, -1, np.int8),
        "last_jink_won": np.zeros(B, bool),
    }
    missing = set(STATE_FIELDS) - set(state)
    if missing:
        raise NotImplementedError(
            f"games_from_information does not know the core's state field(s) {sorted(missing)}: "
            "update spoilfive_env/determinize.py")
    for name, value in state.items():
        current = getattr(core, name)
        setattr(core, name, np.asarray(value).astype(current.dtype, copy=False).reshape(current.shape))
    core._mask_cache = None
    return core
