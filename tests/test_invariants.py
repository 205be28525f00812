"""Random-play invariants of the vectorised core over large batches.

Every configuration plays thousands of games with uniformly random legal actions and checks,
after every step and without trusting the core's own bookkeeping fields:

* every one of the 52 cards is in exactly one place: a hand, played, the turn-up on the table,
  the robber's discard or the undealt stock; each seat holds 5 cards minus those it played;
  a card in or from a seat's hand was dealt to it, or is the turn-up that seat robbed;
* a game waiting for a move has a non-empty mask; a finished game's mask row is all True;
* chips plus pool are conserved; each hand's rewards are exactly the chip change (``chips``)
  or the change in ``chips + pool / n`` (``equity``), recomputed here from the antes;
  equity rewards sum to zero and chips rewards to minus the pool change;
* a spoiled hand is one nobody can win any more, or a failed jink (only the latter with two
  players or with partnerships); a won hand is won with exactly three tricks, or five after a jink;
* game mode: the deal passes left, the game ends after ``num_hands`` only once the pool is won,
  or at ``max_hands`` with the pool split evenly (remainder unpaid); the per-hand rewards of a
  game sum to its final chip change.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_legal

from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, NUM_ACTIONS, ROB_FIRST
from spoilfive_env.cards import HAND_SIZE, NUM_CARDS, NUM_TRICKS, TRICKS_TO_WIN
from spoilfive_env.core import PHASE_DONE, PHASE_JINK, PHASE_PLAY, PHASE_ROB, SpoilFiveCore
from spoilfive_env.rules import Rules

BATCH = 2000
CARDS = np.arange(NUM_CARDS)


class Tracker:
    """Independent bookkeeping of a core's batch: deals, hand-start chips and pool, game totals."""

    def __init__(self, core: SpoilFiveCore):
        self.core = core
        rules = core.rules
        self.n = core.num_players
        self.total = self.n * rules.starting_chips  # every game starts with an empty pool
        B = core.batch_size
        self.dealt_to = np.full((B, NUM_CARDS), -1, np.int8)
        self.chips_start = np.zeros((B, self.n), np.int64)
        self.pool_start = np.zeros(B, np.int64)
        self.game_rewards = np.zeros((B, self.n), np.float64)
        self.hands_seen = 0
        self.spoils = 0
        self.jinks_failed = 0
        self.capped_games = 0
        self.games_finished = 0
        self.lowest_chips = int(core.chips.min())
        self.new_games(np.arange(B))

    def new_games(self, idx):
        """Record games ``idx`` just (re)started by ``core.reset``: a fresh deal, fresh chips."""
        core, rules = self.core, self.core.rules
        self.dealt_to[idx] = core.holder[idx]
        self.chips_start[idx] = rules.starting_chips
        self.pool_start[idx] = 0
        self.game_rewards[idx] = 0
        ante = rules.ante
        expected = np.full((len(idx), self.n), rules.starting_chips - ante)
        expected[np.arange(len(idx)), core.dealer[idx]] -= rules.dealer_ante
        np.testing.assert_array_equal(core.chips[idx], expected)
        np.testing.assert_array_equal(core.pool[idx], self.n * ante + rules.dealer_ante)
        assert (core.hand_index[idx] == 0).all()

    # ---------------------------------------------------------------- static state
    def check_state(self):
        core, n = self.core, self.n
        holder, played = core.holder.astype(np.int64), core.played_by.astype(np.int64)
        assert not ((holder >= 0) & (played >= 0)).any(), "a card both held and played"

        robbed = core.robber >= 0
        is_turnup = CARDS[None, :] == core.turnup[:, None]
        is_discard = (CARDS[None, :] == core.discard[:, None]) & robbed[:, None]
        assert (core.discard[~robbed] == -1).all()
        table_turnup = is_turnup & ~robbed[:, None]
        stock = (self.dealt_to < 0) & ~is_turnup
        places = (holder >= 0).astype(np.int64) + (played >= 0) + table_turnup + is_discard + stock
        bad = np.flatnonzero((places != 1).any(axis=1))
        assert not len(bad), f"cards not in exactly one place in game {bad[0]}: {core.describe(int(bad[0]))}"
        assert (stock.sum(axis=1) == NUM_CARDS - n * HAND_SIZE - 1).all()

        # Provenance: a card in or from a seat's hand was dealt to it, or is the robbed turn-up.
        owner = np.where(holder >= 0, holder, played)
        fine = (owner == self.dealt_to) | (is_turnup & (owner == core.robber[:, None]))
        assert fine[owner >= 0].all(), "a seat holds or played a card it was never dealt"
        r = np.flatnonzero(robbed)
        assert (self.dealt_to[r, core.discard[r]] == core.robber[r]).all(), "discard not from the robber's hand"

        # Counts per seat: 5 cards minus those played; plays match completed tricks + current trick.
        pos = core.trick_pos.astype(np.int64)
        for seat in range(n):
            held = (holder == seat).sum(axis=1)
            gone = (played == seat).sum(axis=1)
            assert (held + gone == HAND_SIZE).all(), f"seat {seat} holds the wrong number of cards"
            in_trick = (seat - core.leader.astype(np.int64)) % n < pos
            assert (gone == core.trick_number + in_trick).all(), f"seat {seat} played out of turn"
        assert (core.tricks_won.sum(axis=1) == core.trick_number).all()
        assert (core.trick_number <= NUM_TRICKS).all()

        # The current trick: cards by position from the leader, played by the right seats.
        for position in range(n):
            card = core.trick_cards[:, position].astype(np.int64)
            filled = position < pos
            assert (card[~filled] == -1).all()
            f = np.flatnonzero(filled)
            seat = (core.leader[f].astype(np.int64) + position) % n
            assert (played[f, card[f]] == seat).all(), "trick card not played by the seat in turn"
        led = core.led_card.astype(np.int64)
        np.testing.assert_array_equal(led, np.where(pos > 0, core.trick_cards[:, 0], -1))

        # Chips and pool are conserved in every game.
        np.testing.assert_array_equal(core.chips.sum(axis=1) + core.pool, self.total)

        # The mask: non-empty while waiting for a move, all True when finished, and coherent.
        mask = core.legal_mask()
        live = core.phase != PHASE_DONE
        assert mask[live].any(axis=1).all(), "a live game has no legal action"
        assert mask[~live].all(), "a finished game's mask row is not all True"
        hand = holder == core.current[:, None]
        lm, lh, phase = mask[live], hand[live], core.phase[live]
        assert not (lm[:, :ROB_FIRST] & ~lh).any(), "a card not in the hand may be played"
        assert not (lm[:, ROB_FIRST:DECLINE_ROB] & ~lh).any(), "a card not in the hand may be discarded"
        robbing = phase == PHASE_ROB
        assert (lm[:, DECLINE_ROB] == robbing).all()
        assert (lm[:, CLAIM] == (phase == PHASE_JINK)).all() and (lm[:, JINK] == lm[:, CLAIM]).all()
        assert not lm[~robbing, ROB_FIRST:DECLINE_ROB].any()
        playing = phase == PHASE_PLAY
        assert lm[playing, :ROB_FIRST].any(axis=1).all()
        if not core.rules.allow_jink:
            assert not (core.phase == PHASE_JINK).any()
        return mask

    # ---------------------------------------------------------------- one step
    def step(self, rng):
        core, rules, n = self.core, self.core.rules, self.n
        mask = self.check_state()
        actions = random_legal(rng, mask)
        before_hand = core.hand_index.copy()
        before_dealer = core.dealer.astype(np.int64)
        before_pool = core.pool.astype(np.int64)
        before_chips = core.chips.astype(np.int64)
        self.lowest_chips = min(self.lowest_chips, int(before_chips.min()))
        before_jinker = core.jinker.copy()
        before_done = core.phase == PHASE_DONE

        rewards, done = core.step(actions)
        rewards = rewards.astype(np.float64)
        assert rewards.shape == (core.batch_size, n) and done.shape == (core.batch_size,)
        assert not (done & before_done).any(), "a finished game finished again"
        ended = core.hand_index != before_hand
        assert not (done & ~ended).any(), "an episode ended without a hand ending"
        assert (rewards[~ended] == 0).all(), "a reward came before the hand ended"
        if core.mode == "hand":
            np.testing.assert_array_equal(done, ended)
        e = np.flatnonzero(ended)
        if not len(e):
            return done
        self.hands_seen += len(e)
        np.testing.assert_array_equal(core.hand_index[e], before_hand[e] + 1)

        winner = core.last_winner[e].astype(np.int64)
        spoiled = winner < 0
        tricks = core.last_tricks[e].astype(np.int64)
        jinker = core.last_jinker[e].astype(np.int64)
        jink_won = core.last_jink_won[e]
        np.testing.assert_array_equal(jinker, before_jinker[e])
        self.spoils += int(spoiled.sum())
        self.jinks_failed += int((spoiled & (jinker >= 0)).sum())
        if rules.partnerships:
            side_tricks = np.stack([tricks[:, 0::2].sum(axis=1), tricks[:, 1::2].sum(axis=1)], axis=1)
        else:
            side_tricks = tricks
        remaining = NUM_TRICKS - tricks.sum(axis=1)
        # Spoiled: a failed jink, or nobody can reach three tricks any more.
        failed_jink = spoiled & (jinker >= 0)
        assert not (jink_won & spoiled).any()
        stuck = spoiled & (jinker < 0)
        if n == 2 or rules.partnerships:
            assert not stuck.any(), "a hand spoiled without a failed jink (2 players or partnerships)"
        assert (side_tricks[stuck].max(axis=1) + remaining[stuck] < TRICKS_TO_WIN).all()
        if failed_jink.any():
            jside = jinker[failed_jink] % 2 if rules.partnerships else jinker[failed_jink]
            assert (side_tricks[failed_jink, jside] < NUM_TRICKS).all()
        won = np.flatnonzero(~spoiled)
        won_tricks = side_tricks[won, winner[won]]
        jinked = jinker[won] >= 0
        assert (won_tricks[~jinked] == TRICKS_TO_WIN).all(), "pool won without exactly three tricks"
        assert (won_tricks[jinked] == NUM_TRICKS).all() and jink_won[won][jinked].all()
        assert not jink_won[won][~jinked].any()

        # Game mode: which games go on, with the deal passing left and the antes paid.
        over = done[e]
        new_hand = e[~over]
        if core.mode == "game":
            hands_done = core.hand_index[e].astype(np.int64)
            expected_over = np.where(spoiled, hands_done >= rules.max_hands, hands_done >= rules.num_hands)
            np.testing.assert_array_equal(over, expected_over)
            assert (hands_done <= rules.max_hands).all()
        else:
            assert over.all()
        chips_end = core.chips[e].astype(np.int64)
        pool_end = core.pool[e].astype(np.int64)
        if len(new_hand):
            k = ~over
            np.testing.assert_array_equal(core.dealer[new_hand], (before_dealer[new_hand] + 1) % n)
            ante = np.where(spoiled[k], rules.spoil_ante, rules.ante)
            paid = np.repeat(ante[:, None], n, axis=1)
            paid[np.arange(len(new_hand)), core.dealer[new_hand]] += rules.dealer_ante
            chips_end[k] += paid
            pool_end[k] -= paid.sum(axis=1)
            assert (core.trick_number[new_hand] == 0).all() and (core.played_by[new_hand] == -1).all()
        np.testing.assert_array_equal(chips_end.sum(axis=1) + pool_end, self.total)

        # Capped games: the pool is split evenly, the remainder stays unpaid.
        if core.mode == "game":
            capped = over & spoiled
            c = e[capped]
            self.capped_games += len(c)
            np.testing.assert_array_equal(core.pool[c], before_pool[c] % n)
            np.testing.assert_array_equal(core.chips[c], before_chips[c] + (before_pool[c] // n)[:, None])

        # Rewards recomputed from the hand's start.
        chips_change = chips_end - self.chips_start[e]
        pool_change = pool_end - self.pool_start[e]
        if core.reward_mode == "chips":
            np.testing.assert_allclose(rewards[e], chips_change, atol=1e-4)
            np.testing.assert_allclose(rewards[e].sum(axis=1), -pool_change, atol=1e-3)
        else:
            np.testing.assert_allclose(rewards[e], chips_change + pool_change[:, None] / n, atol=1e-4)
            np.testing.assert_allclose(rewards[e].sum(axis=1), 0.0, atol=1e-3)
            if rules.dealer_ante == 0:
                split = over & spoiled if core.mode == "game" else np.zeros(len(e), bool)
                plain_spoil = spoiled & ~split  # a capped game splits the pool
                assert (rewards[e][plain_spoil] == 0).all(), "a spoiled hand gave an equity reward"
                plain_win = np.flatnonzero(~spoiled & (jinker < 0))
                if not rules.partnerships and len(plain_win):
                    P = before_pool[e][plain_win]
                    expected = np.repeat((-P / n)[:, None], n, axis=1)
                    expected[np.arange(len(plain_win)), winner[plain_win]] = P * (n - 1) / n
                    np.testing.assert_allclose(rewards[e][plain_win], expected, atol=1e-4)
        self.game_rewards[e] += rewards[e]

        # Games that finished: their rewards sum to the final chip change.
        f = e[over]
        self.games_finished += len(f)
        final_change = core.chips[f] - rules.starting_chips
        if core.reward_mode == "chips":
            np.testing.assert_allclose(self.game_rewards[f], final_change, atol=1e-3)
        else:
            # chips + pool / n: equal to the final chip change whenever the pool ends empty.
            np.testing.assert_allclose(self.game_rewards[f], final_change + core.pool[f][:, None] / n, atol=1e-3)

        # The next hand of a game going on: a fresh deal, tracked from here.
        self.dealt_to[new_hand] = core.holder[new_hand]
        self.chips_start[new_hand] = chips_end[~over]
        self.pool_start[new_hand] = pool_end[~over]
        return done


def run(rules: Rules, *, mode="hand", reward="equity", steps=120, batch=BATCH, seed=0):
    """Play ``steps`` random steps, restarting finished games, checking every invariant."""
    core = SpoilFiveCore(batch, rules=rules, mode=mode, reward=reward, seed=seed)
    tracker = Tracker(core)
    rng = np.random.default_rng(seed + 1)
    for _ in range(steps):
        tracker.step(rng)
        finished = np.flatnonzero(core.done)
        if len(finished):
            core.reset(finished)
            tracker.new_games(finished)
    tracker.check_state()
    return tracker


@pytest.mark.parametrize("num_players", range(2, 11))
def test_hand_mode_invariants(num_players):
    reward = "equity" if num_players % 2 == 0 else "chips"
    tracker = run(Rules(num_players=num_players), reward=reward, steps=5 * num_players + 25)
    assert tracker.hands_seen >= BATCH
    if num_players == 2:
        assert tracker.spoils == tracker.jinks_failed
    else:
        assert tracker.spoils > tracker.jinks_failed  # random play spoils a good share


@pytest.mark.parametrize("num_players,reward", [(2, "equity"), (3, "chips"), (4, "equity"), (7, "chips"),
                                                (10, "equity")])
def test_game_mode_invariants(num_players, reward):
    rules = Rules(num_players=num_players, num_hands=3, max_hands=8)
    tracker = run(rules, mode="game", reward=reward, steps=4 * (5 * num_players + 3), batch=1000)
    assert tracker.games_finished > 100


@pytest.mark.parametrize("num_players", [3, 6, 10])
@pytest.mark.parametrize("dealer_ante", [0, 1])
def test_game_cap_splits_the_pool(num_players, dealer_ante):
    """num_hands=1, max_hands=2: spoiled twice in a row ends the game with the pool split.
    With a dealer ante the pool is not a multiple of the table, so a remainder stays unpaid."""
    rules = Rules(num_players=num_players, num_hands=1, max_hands=2, ante=2, dealer_ante=dealer_ante)
    tracker = run(rules, mode="game", reward="chips", steps=2 * (5 * num_players + 3), batch=1000)
    assert tracker.capped_games > 20


@pytest.mark.parametrize("starting_chips", [0, 7, 300])
def test_every_game_starts_with_starting_chips_and_chips_may_go_negative(starting_chips):
    """RULES.md: everyone starts a game with ``starting_chips``; chips may go negative (nobody
    drops out). The tracker checks each new game's chips against the option, and that chips and
    pool stay conserved at the option's total, through whole games."""
    rules = Rules(num_players=4, starting_chips=starting_chips, num_hands=2, max_hands=6, ante=3)
    tracker = run(rules, mode="game", reward="chips", steps=3 * (5 * 4 + 3), batch=500)
    assert tracker.games_finished > 100
    if starting_chips == 0:  # the first ante already takes everyone below zero, and play goes on
        assert tracker.lowest_chips < -3 and tracker.hands_seen > 500
    else:
        assert tracker.lowest_chips >= starting_chips - 3 * 6 * 4  # six hands at most, each an ante


def test_game_mode_defaults_chips_rewards_sum_to_final_change():
    tracker = run(Rules(num_players=4), mode="game", reward="chips", steps=400, batch=300)
    assert tracker.games_finished > 100


@pytest.mark.parametrize("preset,num_players,mode", [("hoyle", 5, "hand"), ("hoyle", 3, "game"),
                                                     ("dealer_feeds", 4, "game"), ("dealer_feeds", 8, "hand")])
def test_presets(preset, num_players, mode):
    """The presets' antes (a dealer ante in both, no spoil ante in dealer_feeds) through many hands;
    in game mode through spoiled hands whose pool goes on into the next hand."""
    rules = Rules.preset(preset, num_players=num_players, num_hands=2, max_hands=5)
    for reward in ("equity", "chips"):
        tracker = run(rules, mode=mode, reward=reward, steps=3 * (5 * num_players + 3), batch=1000)
        assert tracker.hands_seen > 2000 and tracker.spoils > 500
        if mode == "game":
            assert tracker.games_finished > 500 and tracker.spoils > tracker.capped_games + 500  # pools carried on


@pytest.mark.parametrize("num_players", [4, 6])
@pytest.mark.parametrize("mode", ["hand", "game"])
def test_partnerships_spoil_only_by_failed_jink(num_players, mode):
    rules = Rules(num_players=num_players, partnerships=True, num_hands=3, max_hands=6)
    tracker = run(rules, mode=mode, reward="equity" if mode == "hand" else "chips",
                  steps=3 * (5 * num_players + 3))
    assert tracker.spoils == tracker.jinks_failed and tracker.spoils > 0


@pytest.mark.parametrize("num_players", [2, 4, 7])
def test_conceal_ace_penalty(num_players):
    tracker = run(Rules(num_players=num_players, conceal_ace_penalty=True),
                  steps=5 * num_players + 25)
    assert tracker.hands_seen >= BATCH


@pytest.mark.parametrize("num_players", [2, 5])
def test_allow_jink_false(num_players):
    tracker = run(Rules(num_players=num_players, allow_jink=False), reward="chips",
                  steps=5 * num_players + 25)
    assert tracker.jinks_failed == 0
    if num_players == 2:
        assert tracker.spoils == 0  # with two players only a failed jink spoils


def test_two_players_spoil_only_by_failed_jink_in_game_mode():
    tracker = run(Rules(num_players=2, num_hands=4, max_hands=8), mode="game", steps=60)
    assert tracker.spoils == tracker.jinks_failed and tracker.spoils > 0


def test_first_dealer_is_random_and_reset_subsets_only_touch_selected_games():
    core = SpoilFiveCore(4000, rules=Rules(num_players=6), seed=3)
    counts = np.bincount(core.dealer, minlength=6)
    assert (counts > 500).all()
    rng = np.random.default_rng(0)
    for _ in range(5):
        core.step(random_legal(rng, core.legal_mask()))
    keep = np.arange(4000) % 2 == 0
    snapshot = {name: getattr(core, name)[keep].copy() for name in ("holder", "played_by", "chips", "pool")}
    core.reset(~keep)
    for name, value in snapshot.items():
        np.testing.assert_array_equal(getattr(core, name)[keep], value)
    assert (core.trick_number[~keep] == 0).all()


def test_every_action_kind_is_exercised():
    """The random play above reaches robs, declines, claims, jinks and plays (guards the tests)."""
    core = SpoilFiveCore(2000, rules=Rules(num_players=3), seed=5)
    rng = np.random.default_rng(5)
    seen = np.zeros(NUM_ACTIONS, bool)
    for _ in range(60):
        mask = core.legal_mask()
        actions = random_legal(rng, mask)
        live = ~core.done
        seen[actions[live]] = True
        core.step(actions)
        core.reset(core.done)
    assert seen[:ROB_FIRST].all() and seen[ROB_FIRST:DECLINE_ROB].any()
    assert seen[DECLINE_ROB] and seen[CLAIM] and seen[JINK]
