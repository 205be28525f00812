"""The core's compiled hot paths (spoilfive_env/core_kernel.py: the legal mask, the play of a card, the settling
of a hand, the laying out of a deal) against its NumPy methods, which define them: two cores from one seed, one on
each backend, stepped in lockstep through whole hands and games at every table size and variant, every state
field, mask, reward and end compared at every step."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import random_legal

from spoilfive_env import core as core_module
from spoilfive_env.actions import CLAIM, JINK
from spoilfive_env.cards import MAX_PLAYERS, MIN_PLAYERS, card_index
from spoilfive_env.core import PHASE_JINK, STATE_FIELDS, SpoilFiveCore, core_backend
from spoilfive_env.rules import Rules

try:
    from spoilfive_env import core_kernel
except ImportError:  # without Numba the comparisons skip; the backend's choice and refusals are still tested
    core_kernel = None
needs_numba = pytest.mark.skipif(core_kernel is None, reason="Numba is not installed (the fast extra)")

NUMPY = ("numpy", core_module.NUMPY_KERNELS)
NUMBA = ("numba", core_kernel.CORE_KERNELS if core_kernel else None)

LOCKSTEP_RULES = [
    *(Rules(num_players=n) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)),
    Rules(num_players=4, partnerships=True),
    Rules(num_players=6, partnerships=True, allow_jink=False),
    Rules(num_players=3, conceal_ace_penalty=True),
    Rules(num_players=5, conceal_ace_penalty=True, jink_bonus=1, allow_jink=False),
    Rules(num_players=4, ante=2, spoil_ante=1, dealer_ante=1, jink_bonus=1, num_hands=3, max_hands=6),
]


def _rules_id(rules: Rules) -> str:
    return (f"{rules.num_players}p{'-teams' if rules.partnerships else ''}"
            f"{'-conceal' if rules.conceal_ace_penalty else ''}{'-nojink' if not rules.allow_jink else ''}"
            f"{'-hoyle' if rules.dealer_ante else ''}")


def _core(backend, monkeypatch, *args, **kwargs) -> SpoilFiveCore:
    """A core on ``backend``: a core keeps the hot paths chosen when it was made."""
    monkeypatch.setattr(core_module._backend, "chosen", backend)
    return SpoilFiveCore(*args, **kwargs)


@needs_numba
@pytest.mark.parametrize("mode, reward", [("hand", "equity"), ("game", "equity"), ("game", "chips")])
@pytest.mark.parametrize("rules", LOCKSTEP_RULES, ids=_rules_id)
def test_the_compiled_core_steps_exactly_as_the_numpy_definition(rules, mode, reward, monkeypatch):
    """Random legal play, some steps moving only some games, finished games dealt again now and then; the events
    each variant has (robs, concealed aces, jinks won and lost, claims, spoiled hands, ends of games) all arise."""
    n = rules.num_players
    if mode == "game":  # short games, so that some end within the steps
        rules = rules.replace(num_hands=2, max_hands=3)
    definition, compiled = (_core(backend, monkeypatch, 96, rules=rules, mode=mode, reward=reward, seed=n)
                            for backend in (NUMPY, NUMBA))
    assert (definition._kernels, compiled._kernels) == (NUMPY[1], NUMBA[1])
    rng = np.random.default_rng(100 + n)
    seen = dict.fromkeys(("robbed", "concealed", "claimed", "jink won", "jink lost", "spoiled", "ended"), 0)
    for step in range(40 * n):
        masks = definition.legal_mask()
        np.testing.assert_array_equal(compiled.legal_mask(), masks)
        actions = random_legal(rng, masks)
        hands_before = definition.hand_index.copy()
        where = None if step % 3 else rng.random(definition.batch_size) < 0.7
        claiming = (definition.phase == PHASE_JINK) & (actions == CLAIM) & (True if where is None else where)
        rewards, done = definition.step(actions, where)
        compiled_rewards, compiled_done = compiled.step(actions, where)
        np.testing.assert_array_equal(compiled_rewards, rewards)
        np.testing.assert_array_equal(compiled_done, done)
        for field in STATE_FIELDS:
            np.testing.assert_array_equal(getattr(compiled, field), getattr(definition, field), err_msg=field)
        seen["robbed"] += int((definition.robber >= 0).sum())
        seen["concealed"] += int(definition.concealed.sum())
        seen["claimed"] += int(claiming.sum())
        hand_ended = definition.hand_index != hands_before
        jinked = hand_ended & (definition.last_jinker >= 0)
        seen["jink won"] += int((jinked & definition.last_jink_won).sum())
        seen["jink lost"] += int((jinked & ~definition.last_jink_won).sum())
        seen["spoiled"] += int((hand_ended & definition.spoiled_last).sum())
        seen["ended"] += int(done.sum())
        if step % 6 == 5:
            finished = definition.done
            definition.reset(finished)
            compiled.reset(finished)
    expected = {"robbed", "spoiled", "ended"}
    if rules.allow_jink:
        expected |= {"claimed", "jink lost"}
        if n <= 6:  # at larger tables random play almost never takes all five
            expected.add("jink won")
    if rules.conceal_ace_penalty:
        expected.add("concealed")
    if rules.partnerships:
        expected.discard("spoiled")  # a side always takes three of five
    assert [event for event in sorted(expected) if not seen[event]] == [], seen


@needs_numba
def test_the_compiled_mask_of_a_single_game_follows_suit_and_the_renege_of_the_top_trumps(monkeypatch):
    """One hand checked against the rules directly, not only against the definition: on a trump lead of the
    king, the five of trumps may be held back, and a plain card is then allowed; on a plain lead the suit or a
    trump."""
    monkeypatch.setattr(core_module._backend, "chosen", NUMBA)
    hands = [[card_index(c) for c in hand.split()]
             for hand in ("KS 2C 3C 4C 6C", "5S 2D 3D 4D 6D", "9S 7C 8C 9C 10C")]
    core = SpoilFiveCore(1, rules=Rules(num_players=3), deal=False)
    core.reset(hands=[hands], turnups=[card_index("QS")], dealers=[2])
    assert core.legal_mask()[0, :52].nonzero()[0].tolist() == sorted(hands[0])
    core.step(np.array([card_index("KS")]))
    legal = core.legal_mask()[0, :52].nonzero()[0].tolist()
    assert legal == sorted(hands[1])  # the five of trumps beats the king: held back, any card may go
    core.step(np.array([card_index("2D")]))
    assert core.legal_mask()[0, :52].nonzero()[0].tolist() == [card_index("9S")]  # a plain trump must follow


def test_the_core_backend_is_chosen_by_the_environment(monkeypatch):
    numba_imports = _numba_available()
    for choice, expected in (("numpy", "numpy"), ("NUMPY ", "numpy"), ("", None), ("auto", None)):
        monkeypatch.setattr(core_module._backend, "chosen", None)
        monkeypatch.setenv("SPOILFIVE_CORE", choice)
        assert core_backend() == (expected or ("numba" if numba_imports else "numpy"))
        core = SpoilFiveCore(4, seed=0)
        rewards, done = core.step(random_legal(np.random.default_rng(0), core.legal_mask()))
        assert rewards.shape == (4, 4) and not done.any()
    monkeypatch.setattr(core_module._backend, "chosen", None)
    monkeypatch.setenv("SPOILFIVE_CORE", "fortran")
    with pytest.raises(ValueError, match="SPOILFIVE_CORE='fortran' is not allowed: choose one of auto, numba, numpy"):
        SpoilFiveCore(2, seed=0).legal_mask()


def test_numba_asked_for_the_core_but_missing_says_how_to_install_it(monkeypatch):
    import spoilfive_env

    monkeypatch.setattr(core_module._backend, "chosen", None)
    monkeypatch.setenv("SPOILFIVE_CORE", "numba")
    monkeypatch.setitem(sys.modules, "spoilfive_env.core_kernel", None)  # as if Numba were missing
    monkeypatch.delattr(spoilfive_env, "core_kernel", raising=False)
    with pytest.raises(ImportError, match=r'SPOILFIVE_CORE=numba needs Numba .*: in the spoilfive checkout, '
                                          r'pip install -c \.ci/constraints\.txt -e "\.\[fast\]"'):
        core_backend()
    monkeypatch.setenv("SPOILFIVE_CORE", "auto")
    assert core_backend() == "numpy"  # auto falls back to the definition


def _numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("reward", ["chips", "equity"])
def test_the_largest_gain_the_limits_allow_is_paid_exactly_on_both_backends(reward, monkeypatch):
    """A jink won from the lowest chips beside the largest pool check_chip_headroom allows: the winner's gain is
    HAND_CHIPS_MAX less his ante, which float32 holds exactly, while his chips sit near int32's floor (where the
    NumPy definition once subtracted in int32; found by the review of the compiled core). One chip more of pool is
    refused."""
    from spoilfive_env.actions import JINK
    from spoilfive_env.rules import CHIPS_MIN, HAND_CHIPS_MAX, chip_reach

    rules = Rules(num_players=3, jink_bonus=1000)
    low, _, _, gain_high = chip_reach(3, rules.ante, rules.spoil_ante, rules.dealer_ante, rules.jink_bonus, 1, 0, 0, 0)
    pool, chips = HAND_CHIPS_MAX - gain_high, CHIPS_MIN - low
    hands = [[card_index(c) for c in hand.split()]  # seat 0 holds the top five trumps: all five tricks
             for hand in ("5S JS AH AS KS", "2C 3C 4C 6C 7C", "2D 3D 4D 6D 7D")]
    paid = {}
    for backend in (NUMPY, NUMBA) if core_kernel else (NUMPY,):  # the definition even without Numba
        core = _core(backend, monkeypatch, 1, rules=rules, reward=reward, deal=False)
        with pytest.raises(ValueError, match=f"pool {pool + 1} is not allowed: .* must be 0 to {pool} "):
            core.reset(hands=[hands], turnups=[card_index("QS")], dealers=[2], pools=[pool + 1], chips=[[chips] * 3])
        core.reset(hands=[hands], turnups=[card_index("QS")], dealers=[2], pools=[pool], chips=[[chips] * 3])
        while not core.done[0]:
            mask = core.legal_mask()[0]
            rewards, _ = core.step(np.array([JINK if mask[JINK] else np.flatnonzero(mask)[0]]))
        assert core.last_jink_won[0]
        change = core.chips[0].astype(np.int64) - core.chips_at_hand_start[0]
        assert change[0] == HAND_CHIPS_MAX - rules.ante  # the whole pool and both jink bonuses, less his ante
        expected = change if reward == "chips" else change - core.pool_at_hand_start[0] / 3
        if reward == "chips":
            assert rewards[0].astype(np.int64).tolist() == change.tolist()  # exact, not rounded
        else:  # a third of a pool: float32's rounding, one unit in the last place
            np.testing.assert_array_max_ulp(rewards[0], expected.astype(np.float32), maxulp=1)
        paid[backend[0]] = rewards[0]
    np.testing.assert_array_equal(paid.get("numba", paid["numpy"]), paid["numpy"])


@needs_numba
@pytest.mark.parametrize("mode, reward", [("hand", "chips"), ("game", "equity")])
def test_injected_deals_in_any_order_and_chips_at_the_limits_step_alike(mode, reward, monkeypatch):
    """Resets by integer indices in shuffled order with injected hands, dealers, pools and chips at the edges
    check_chip_headroom allows (the largest pools, chips at both ends of int32)."""
    from spoilfive_env.cards import HAND_SIZE, NUM_CARDS
    from spoilfive_env.rules import CHIPS_MAX, CHIPS_MIN, HAND_CHIPS_MAX, chip_reach

    rules = Rules(num_players=3, jink_bonus=1000, ante=2, dealer_ante=1, num_hands=1, max_hands=2)
    n, games = rules.num_players, 64
    hands_ahead = rules.max_hands if mode == "game" else 1
    low, high, _, gain_high = chip_reach(n, rules.ante, rules.spoil_ante, rules.dealer_ante, rules.jink_bonus,
                                         hands_ahead, 0, 0, 0)
    cores = [_core(backend, monkeypatch, games, rules=rules, mode=mode, reward=reward, seed=1)
             for backend in (NUMPY, NUMBA)]
    assert [core._kernels for core in cores] == [NUMPY[1], NUMBA[1]]
    rng = np.random.default_rng(7)
    for step in range(300):
        masks = cores[0].legal_mask()
        np.testing.assert_array_equal(cores[1].legal_mask(), masks)
        weights = rng.random(masks.shape)
        weights[:, JINK] *= 100  # jink whenever offered: big wins
        actions = np.argmax(weights * masks, axis=1).astype(rng.choice([np.uint8, np.int32]))
        results = [core.step(actions) for core in cores]
        np.testing.assert_array_equal(results[1][0].view(np.uint32), results[0][0].view(np.uint32))
        np.testing.assert_array_equal(results[1][1], results[0][1])
        for field in STATE_FIELDS:
            np.testing.assert_array_equal(getattr(cores[1], field), getattr(cores[0], field), err_msg=field)
        finished = rng.permutation(np.flatnonzero(cores[0].done))
        if len(finished):
            k = len(finished)
            order = np.argsort(rng.random((k, NUM_CARDS)), axis=1)
            pools = HAND_CHIPS_MAX - gain_high - rng.integers(0, 1000 if step % 2 else HAND_CHIPS_MAX - gain_high,
                                                              size=k)
            chips = np.full((k, n), CHIPS_MAX - high - pools.max()) if step % 2 else np.full((k, n), CHIPS_MIN - low)
            deal = dict(hands=order[:, : n * HAND_SIZE].reshape(k, n, HAND_SIZE), turnups=order[:, n * HAND_SIZE],
                        dealers=rng.integers(0, n, size=k), pools=pools, chips=chips)
            for core in cores:
                core.reset(finished, **deal)
