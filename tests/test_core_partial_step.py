"""``SpoilFiveCore.step(actions, where=...)``: only the selected games move (CONTRACT.md).

The reference for a partial step is a :meth:`SpoilFiveCore.subset` copy of the selected games
stepped with a plain full step: after the partial step every field of ``STATE_FIELDS`` of the
selected games equals that copy's, and the unselected games are byte-identical to a snapshot
taken before, whatever (even illegal, even out of range) actions they were given.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from conftest import core_fields, random_legal

from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.core import (
    PHASE_DONE,
    PHASE_JINK,
    PHASE_NAMES,
    PHASE_PLAY,
    PHASE_ROB,
    STATE_FIELDS,
    SpoilFiveCore,
)
from spoilfive_env.rules import Rules

BATCH = 48
STEPS = 160  # enough for several hands per game at 10 players, with about half the games moving
GARBAGE_ACTIONS = (-7, NUM_ACTIONS, 10_000)


def illegal_or_garbage(rng, mask):
    """An action per game that its game refuses: an illegal id, or one outside 0-106."""
    illegal = np.argmax(rng.random(mask.shape) * ~mask, axis=1)
    garbage = rng.choice(GARBAGE_ACTIONS, size=len(mask))
    return np.where(rng.random(len(mask)) < 0.5, illegal, garbage)


def assert_rows_equal(actual_core, rows, expected, context):
    """Fields of ``actual_core`` at ``rows`` equal ``expected`` (a core or a snapshot dict)."""
    for name in STATE_FIELDS:
        want = getattr(expected, name) if isinstance(expected, SpoilFiveCore) else expected[name]
        got = getattr(actual_core, name)[rows]
        assert got.dtype == want.dtype and np.array_equal(got, want), f"{name} differs {context}"


CONFIGS = [
    pytest.param(2, {}, "hand", "equity", id="2p"),
    pytest.param(4, {}, "hand", "chips", id="4p-chips"),
    pytest.param(4, {"partnerships": True}, "hand", "equity", id="4p-partnerships"),
    pytest.param(5, {"conceal_ace_penalty": True}, "hand", "equity", id="5p-conceal"),
    pytest.param(6, {"ante": 2, "dealer_ante": 1, "jink_bonus": 1, "num_hands": 1}, "game", "equity",
                 id="6p-hoyle-game"),
    pytest.param(10, {"allow_jink": False, "num_hands": 2}, "game", "chips", id="10p-nojink-game"),
]


@pytest.mark.parametrize("num_players, rules, mode, reward", CONFIGS)
def test_partial_step_equals_stepping_a_subset(num_players, rules, mode, reward):
    core = SpoilFiveCore(BATCH, rules=Rules(num_players=num_players, **rules), mode=mode,
                         reward=reward, seed=num_players)
    rng = np.random.default_rng(100 + num_players)
    phases_moved = set()
    for step in range(STEPS):
        mask = core.legal_mask()
        where = rng.random(BATCH) < 0.5
        actions = np.where(where, random_legal(rng, mask), illegal_or_garbage(rng, mask))
        selected, others = np.flatnonzero(where), np.flatnonzero(~where)
        phases_moved |= set(core.phase[selected].tolist())

        expected = core.subset(selected)
        expected.rng = copy.deepcopy(core.rng)  # game mode deals the next hand from it
        expected_rewards, expected_done = expected.step(actions[selected])
        before = core_fields(core)

        rewards, done = core.step(actions, where=where)

        context = f"at step {step} ({num_players} players, {mode}, {reward}, {rules})"
        assert_rows_equal(core, selected, expected, context)
        assert_rows_equal(core, others, {k: v[others] for k, v in before.items()}, context)
        np.testing.assert_array_equal(rewards[selected], expected_rewards, err_msg=context)
        np.testing.assert_array_equal(done[selected], expected_done, err_msg=context)
        assert not rewards[others].any() and not done[others].any(), context
        assert core.rng.bit_generator.state == expected.rng.bit_generator.state, context
        # Restart finished games now and then so every phase keeps recurring.
        if step % 20 == 19:
            core.reset(core.done)
    wanted = {PHASE_ROB, PHASE_PLAY, PHASE_DONE} | ({PHASE_JINK} if rules.get("allow_jink", True) else set())
    missing = wanted - phases_moved
    assert not missing, f"phases never stepped: {[PHASE_NAMES[p] for p in missing]}"


def test_where_all_true_equals_full_step_and_all_false_changes_nothing():
    full = SpoilFiveCore(64, rules=Rules(num_players=4), seed=3)
    partial = SpoilFiveCore(64, rules=Rules(num_players=4), seed=3)
    rng = np.random.default_rng(3)
    for step in range(40):
        actions = random_legal(rng, full.legal_mask())
        before = core_fields(partial)
        rewards, done = partial.step(illegal_or_garbage(rng, partial.legal_mask()),
                                     where=np.zeros(64, bool))
        assert not rewards.any() and not done.any()
        assert_rows_equal(partial, slice(None), before, f"after an all-False step {step}")
        expected = full.step(actions)
        got = partial.step(actions, where=np.ones(64, bool))
        for want, have in zip(expected, got):
            np.testing.assert_array_equal(have, want)
        assert_rows_equal(partial, slice(None), core_fields(full), f"after an all-True step {step}")


BAD_WHERE = [
    pytest.param(np.ones(63, bool), id="too short"),
    pytest.param(np.ones((8, 8), bool), id="2-d"),
    pytest.param(np.ones(64, np.int64), id="integers"),
    pytest.param(np.arange(5), id="indices"),
    pytest.param(np.ones(64, np.float32), id="floats"),
    pytest.param([True] * 65, id="list too long"),
    pytest.param(True, id="scalar"),
]


@pytest.mark.parametrize("where", BAD_WHERE)
def test_bad_where_raises_and_changes_nothing(where):
    core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=5)
    actions = random_legal(np.random.default_rng(5), core.legal_mask())
    before = core_fields(core)
    rng_state = copy.deepcopy(core.rng.bit_generator.state)
    with pytest.raises(ValueError, match=r"where must be a bool array of shape \(64,\)"):
        core.step(actions, where=where)
    assert_rows_equal(core, slice(None), before, "after a refused where")
    assert core.rng.bit_generator.state == rng_state


def test_illegal_action_in_a_selected_game_raises_and_changes_nothing():
    core = SpoilFiveCore(16, rules=Rules(num_players=3), seed=6)
    rng = np.random.default_rng(6)
    mask = core.legal_mask()
    actions = random_legal(rng, mask)
    where = np.zeros(16, bool)
    where[[2, 9]] = True
    actions[9] = int(np.flatnonzero(~mask[9])[0])
    before = core_fields(core)
    with pytest.raises(ValueError, match=r"illegal action .* in game 9 "):
        core.step(actions, where=where)
    assert_rows_equal(core, slice(None), before, "after a refused partial step")
    # The same illegal action in a game left out is ignored.
    where[9] = False
    core.step(actions, where=where)
    assert_rows_equal(core, [9], {k: v[[9]] for k, v in before.items()}, "game 9 left out")


def test_injecting_deals_into_no_game_changes_nothing():
    """A reset that selects no game, with deals for none (shapes (0, n, 5) and (0,)), is a no-op, as
    stepping no game is; it used to fail in NumPy's reshape of the empty deal."""
    core = SpoilFiveCore(3, rules=Rules(num_players=4), seed=0)
    before, rng = core_fields(core), core.rng.bit_generator.state
    core.reset(np.zeros(3, bool), hands=np.zeros((0, 4, 5), np.int64), turnups=np.zeros(0, np.int64))
    after = core_fields(core)
    assert core.rng.bit_generator.state == rng
    assert all(np.array_equal(before[name], after[name]) for name in before)
