"""Bad input to the engine and the environment: one clear ``ValueError``, and nothing changes.

Each table row is one bad input of one kind (wrong type, float where an integer belongs, bool
where a number belongs, NaN, string, out of range, chip counts that would overflow the engine's
32-bit counters, repeated game indices, inconsistent deals, bad seeds, ...). For every row the
test checks that a ``ValueError`` is raised whose message names the value and what is allowed,
and, where there is state, that every state field and the random generator are exactly as
before. NumPy integers must be accepted wherever Python ints are.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import assert_same_state, core_fields, random_legal

from spoilfive_env import SpoilFiveCore, env
from spoilfive_env.cards import MAX_PLAYERS, MIN_PLAYERS
from spoilfive_env.observation import OBS_DIM
from spoilfive_env.rules import CHIPS_MAX, CHIPS_MIN, HAND_CHIPS_MAX, MAX_HANDS_LIMIT, Rules, make_rules

NAN = float("nan")
B = 3  # games in the core under test
N = 4  # players


def core_snapshot(core: SpoilFiveCore) -> dict:
    """Every state field and the generator's state, copied."""
    snapshot = core_fields(core)
    snapshot["rng"] = core.rng.bit_generator.state
    return snapshot


def env_snapshot(game) -> dict:
    raw = game.unwrapped
    snapshot = core_snapshot(raw.core)
    snapshot.update(agents=list(raw.agents), selection=raw.agent_selection, mask=raw._mask.copy(),
                    rewards=dict(raw.rewards), cumulative=dict(raw._cumulative_rewards),
                    terminations=dict(raw.terminations), infos=repr(raw.infos))
    return snapshot


def played_core(mode: str = "hand") -> SpoilFiveCore:
    """A core a few actions into its hands, so that a reset would visibly change it."""
    core = SpoilFiveCore(B, rules=Rules(num_players=N), mode=mode, seed=5)
    rng = np.random.default_rng(0)
    for _ in range(3):
        mask = core.legal_mask()
        core.step(random_legal(rng, mask))
    return core


def played_env(**kwargs):
    game = env(num_players=N, **kwargs)
    game.reset(seed=3)
    for _ in range(2):
        mask = game.observe(game.agent_selection)["action_mask"]
        game.step(int(np.flatnonzero(mask)[0]))
    return game


# ---------------------------------------------------------------------------- Rules
RULES_CASES = [
    # (options, words the message must hold)
    ({"num_players": 4.0}, "num_players=4.0 is not allowed: it must be an integer"),
    ({"num_players": "4"}, "num_players='4' is not allowed: it must be an integer"),
    ({"num_players": True}, "num_players=True is not allowed: it must be an integer"),
    ({"num_players": np.float64(4)}, "it must be an integer"),
    ({"num_players": NAN}, "num_players=nan is not allowed"),
    ({"num_players": 1}, "num_players=1 is not allowed: Spoil Five takes 2 to 10"),
    ({"num_players": 11}, "num_players=11 is not allowed: Spoil Five takes 2 to 10"),
    ({"num_players": np.int64(11)}, "num_players=11 is not allowed"),
    ({"ante": 2**30}, "ante=1073741824 is not allowed with these rules: .* ante may be at most 83886"),
    ({"ante": 2**40}, "ante=1099511627776 is not allowed: it must be 0 to 2147483647"),
    ({"ante": -1}, "ante=-1 is not allowed: it must be 0 to 2147483647"),
    ({"ante": 1.5}, "ante=1.5 is not allowed: it must be an integer"),
    ({"ante": 1.0}, "ante=1.0 is not allowed: it must be an integer"),
    ({"ante": NAN}, "ante=nan is not allowed"),
    ({"ante": math.inf}, "ante=inf is not allowed"),
    ({"ante": "1"}, "ante='1' is not allowed"),
    ({"ante": True}, "ante=True is not allowed"),
    ({"ante": None}, "ante=None is not allowed"),
    ({"ante": [1]}, r"ante=\[1\] is not allowed"),
    ({"spoil_ante": 2**29}, "spoil_ante=536870912 is not allowed with these rules"),
    ({"dealer_ante": 2**31}, "dealer_ante=2147483648 is not allowed: it must be 0 to 2147483647"),
    ({"dealer_ante": 10**8}, "dealer_ante=100000000 is not allowed with these rules"),
    ({"jink_bonus": 10**8}, "jink_bonus=100000000 is not allowed with these rules: .* at most 5592338"),
    ({"jink_bonus": "abc"}, "jink_bonus='abc' is not allowed: it must be an integer"),
    ({"jink_bonus": -2}, "jink_bonus=-2 is not allowed: it must be 0 to"),
    ({"starting_chips": 2**31}, "starting_chips=2147483648 is not allowed: it must be 0 to 2147483647"),
    ({"starting_chips": 2**31 - 1}, "starting_chips=2147483647 is not allowed with these rules"),
    ({"starting_chips": -1}, "starting_chips=-1 is not allowed"),
    ({"num_hands": 0}, "num_hands=0 is not allowed: it must be 1 to 32767"),
    ({"num_hands": 2**20, "max_hands": 2**20}, "num_hands=1048576 is not allowed: it must be 1 to 32767"),
    ({"max_hands": 5}, "max_hands=5 is not allowed: it must be num_hands=10 to 32767"),
    ({"max_hands": 40000}, "max_hands=40000 is not allowed: .* 16 bits"),
    ({"max_hands": 2**31}, "max_hands=2147483648 is not allowed"),
    ({"max_hands": 10**7 // 10}, "max_hands=1000000 is not allowed"),
    ({"max_hands": MAX_HANDS_LIMIT, "ante": 10**5}, "is not allowed with these rules"),
    ({"allow_jink": 1}, "allow_jink=1 is not allowed: it must be True or False"),
    ({"allow_jink": "yes"}, "allow_jink='yes' is not allowed: it must be True or False"),
    ({"conceal_ace_penalty": None}, "conceal_ace_penalty=None is not allowed"),
    ({"partnerships": 0.0}, "partnerships=0.0 is not allowed"),
    ({"partnerships": True, "num_players": 5}, "partnerships need 4 or 6 players"),
    ({"preset": "nope"}, "unknown preset 'nope': choose one of default, hoyle, dealer_feeds"),
    ({"preset": ["hoyle"]}, r"unknown preset \['hoyle'\]"),
    ({"preset": 3}, "unknown preset 3"),
    ({"jink": 1}, "unknown rules option.* jink: known options are"),
]


@pytest.mark.parametrize(("options", "needle"), RULES_CASES, ids=[repr(o)[:40] for o, _ in RULES_CASES])
def test_bad_rules_options_are_refused_with_the_value_and_the_range(options, needle):
    with pytest.raises(ValueError, match=needle):
        make_rules(**options)


def test_a_preset_is_refused_where_only_rules_options_are_taken_saying_where_it_goes():
    for make in (lambda: Rules.from_options(preset="hoyle"), lambda: Rules(num_players=4).replace(preset="hoyle")):
        with pytest.raises(ValueError, match=r"preset='hoyle' is not allowed here: Rules.from_options and "
                                             r"Rules.replace take the rules options alone; a preset is chosen by "
                                             r"make_rules\(preset=...\)"):
            make()  # was "unknown rules option(s) preset: known options are ... and preset"
    with pytest.raises(ValueError, match=r"unknown rules option\(s\) jink: known options are allow_jink, .*, "
                                         r"starting_chips \(make_rules and the envs also take preset\)$"):
        Rules.from_options(jink=1)


def test_numpy_integers_and_booleans_are_stored_as_python_ones():
    rules = Rules(num_players=np.int64(5), ante=np.int32(2), allow_jink=np.bool_(False), max_hands=np.int16(60))
    assert rules == Rules(num_players=5, ante=2, allow_jink=False, max_hands=60)
    assert type(rules.num_players) is int and type(rules.allow_jink) is bool
    assert len(env(num_players=np.int64(4)).possible_agents) == 4


def ceiling_of(option: str, **others) -> int:
    """The largest value of ``option`` the rules accept, read from a refusal's message."""
    with pytest.raises(ValueError, match="may be at most") as refused:
        Rules(**{option: 2**31 - 1}, **others)
    return int(str(refused.value).rsplit(" ", 1)[1])


@pytest.mark.parametrize("option", ["ante", "spoil_ante", "dealer_ante", "jink_bonus", "starting_chips"])
def test_the_chip_limit_is_exact_and_the_largest_allowed_game_never_wraps_and_pays_exact_rewards(option):
    """The largest accepted value plays whole games with chips + pool conserved (no int32 wrap) and each hand's
    float32 reward the seat's exact chip change (the antes and jink bonus are held to HAND_CHIPS_MAX)."""
    ceiling = ceiling_of(option, num_players=3, num_hands=2, max_hands=4)
    why = ("a player's chips could reach .* beyond the engine's 32-bit chip counters .*" if option == "starting_chips"
           else rf"the pool could reach \d+ and a player gain \d+ chips in one hand, beyond {HAND_CHIPS_MAX} "
                r"\(rewards are float32, exact in whole chips to 2\*\*24\)")
    with pytest.raises(ValueError, match=f"^{option}={ceiling + 1} is not allowed with these rules: over max_hands=4 "
                                         f"hands {why}; with the other options as they are, {option} may be at most "
                                         f"{ceiling}$"):
        Rules(**{option: ceiling + 1}, num_players=3, num_hands=2, max_hands=4)
    rules = Rules(**{option: ceiling}, num_players=3, num_hands=2, max_hands=4)
    core = SpoilFiveCore(64, rules=rules, mode="game", reward="chips", seed=1)
    total = core.chips.astype(np.int64).sum(axis=1) + core.pool
    rng = np.random.default_rng(1)
    paid = np.zeros((64, 3), np.int64)
    largest_reward = 0.0
    for _ in range(rules.max_hands * 20):
        mask = core.legal_mask()
        rewards, _ = core.step(random_legal(rng, mask))
        np.testing.assert_array_equal(core.chips.astype(np.int64).sum(axis=1) + core.pool, total)
        assert (core.pool >= 0).all()
        assert (rewards == np.rint(rewards)).all()
        paid += rewards.astype(np.int64)
        largest_reward = max(largest_reward, float(np.abs(rewards).max()))
        if core.done.all():
            break
    assert core.done.all()
    # A game's rewards sum to its chip change (a game's last pool remainder is paid to nobody, as chips).
    np.testing.assert_array_equal(paid, core.chips.astype(np.int64) - rules.starting_chips)
    if option != "starting_chips":  # hands near the limit were played (past 2**24 float32 rounds: the sum sees it)
        assert largest_reward > HAND_CHIPS_MAX / 8


# ---------------------------------------------------------------------------- the core
CORE_ARGUMENT_CASES = [
    ({"batch_size": 0}, "batch_size=0 is not allowed: it must be a positive integer"),
    ({"batch_size": 2.5}, "batch_size=2.5 is not allowed"),
    ({"batch_size": True}, "batch_size=True is not allowed"),
    ({"batch_size": "3"}, "batch_size='3' is not allowed"),
    ({"mode": "round"}, "mode='round' is not allowed: choose one of hand, game"),
    ({"mode": ["hand"]}, r"mode=\['hand'\] is not allowed"),
    ({"mode": np.array(["hand"])}, r"mode=array\(\['hand'\].* is not allowed"),
    ({"reward": "score"}, "reward='score' is not allowed: choose one of equity, chips"),
    ({"reward": np.array(["chips"])}, r"reward=array\(\['chips'\].* is not allowed"),
    ({"deal": "no"}, "deal='no' is not allowed: give True"),
    ({"rules": {"num_players": 4}}, "rules must be a spoilfive_env.rules.Rules, got dict"),
    ({"seed": -1}, "seed must be a whole number 0 or more, or None, got -1"),
    ({"seed": 1.5}, "seed must be a whole number 0 or more, or None, got 1.5"),
    ({"seed": True}, "seed must be a whole number 0 or more, or None, got True"),
    ({"seed": "7"}, "seed must be a whole number 0 or more, or None, got '7'"),
    ({"rng": 7}, "rng must be a numpy.random.Generator, got int"),
    ({"seed": 1, "rng": np.random.default_rng(1)}, "give either seed or rng, not both"),
    # Far more games than any machine's memory: refused before anything is allocated.
    ({"batch_size": 10**12}, r"batch_size=1000000000000 is not allowed here: .* GiB, more than this machine's .*"
                               r"allowed: at most \d+ games"),
]


@pytest.mark.parametrize(("arguments", "needle"), CORE_ARGUMENT_CASES,
                         ids=[repr(a)[:40] for a, _ in CORE_ARGUMENT_CASES])
def test_bad_core_arguments_are_refused(arguments, needle):
    arguments = {"batch_size": 2, **arguments}
    with pytest.raises(ValueError, match=needle):
        SpoilFiveCore(arguments.pop("batch_size"), **arguments)


@pytest.mark.parametrize("num_players", [MIN_PLAYERS, 4, MAX_PLAYERS])
def test_the_batch_memory_estimate_bounds_the_real_state(num_players):
    """The refusal of too large a batch counts bytes a game by hand; it must not undercount."""
    from spoilfive_env import core as core_module

    games = 8
    core = SpoilFiveCore(games, rules=Rules(num_players=num_players), seed=0)
    state = sum(getattr(core, name).nbytes for name in core_module.STATE_FIELDS) / games
    estimate = core_module._STATE_BYTES_PER_GAME + core_module._STATE_BYTES_PER_SEAT * num_players
    assert state <= estimate


def test_observing_an_agent_not_at_the_table_is_refused():
    game = env(num_players=3)
    game.reset(seed=0)
    before = game.unwrapped.core.rng.bit_generator.state
    for agent in ("player_3", "player_9", 0, None):
        with pytest.raises(ValueError, match=rf"agent {agent!r} is not at this table: the agents are "
                                             r"'player_0', 'player_1', 'player_2'"):
            game.observe(agent)
    assert game.unwrapped.core.rng.bit_generator.state == before
    assert game.observe("player_2")["observation"].shape == (OBS_DIM,)


def test_numpy_integers_are_accepted_by_the_core():
    core = SpoilFiveCore(np.int64(2), seed=np.uint32(4))
    core.reset(np.array([np.int64(1)]), dealers=np.int16(2), pools=np.int64(3), seed=np.int64(9))
    assert core.dealer[1] == 2 and core.pool[1] == 3 + 4
    assert core.observe(np.int64(1)).shape[0] == 2


GOOD_HANDS = np.tile(np.arange(20).reshape(1, N, 5), (B, 1, 1))
GOOD_TURNUPS = np.full(B, 30)
RESET_CASES = [
    # where: floats, repeats, out of range, shapes, other types
    ({"where": np.array([0.5, 1.7])}, r"where must be a bool mask .* got float64 values .*\[0.5, 1.7\]"),
    ({"where": [1.0]}, "where must be a bool mask of shape .* got float64"),
    ({"where": [0, 0]}, "got game 0 more than once"),
    ({"where": [2, 1, 2]}, "got game 2 more than once"),
    ({"where": [-1]}, r"distinct integer game indices 0-2, got game indices \[-1\]"),
    ({"where": [B]}, r"got game indices \[3\]"),
    ({"where": np.ones(B + 1, bool)}, r"got a bool array of shape \(4,\)"),
    ({"where": True}, r"got a bool array of shape \(\)"),
    ({"where": [[0, 1]]}, r"got int64 values of shape \(1, 2\)"),
    ({"where": ["0"]}, "where must be a bool mask"),
    ({"where": [None]}, "where must be a bool mask"),
    # pools: overflow, negative, floats, bools, strings, NaN, shape
    ({"pools": 2**31}, r"pool 2147483648 is not allowed: it must be 0 to 16777216 \(rewards are float32"),
    ({"pools": 2**24 - 9}, r"pool 16777207 is not allowed: within 1 hand under these rules a player may win it grown "
                           r"by 4 chips and 6 chips of jink bonuses in one hand, so it must be 0 to 16777206 \("),
    ({"pools": 2**40}, "pool 1099511627776 is not allowed"),
    ({"pools": 2**70}, r"pools must be integers 0 or more, one or one per selected game \(3,\), got object"),
    ({"pools": -1}, r"pools must be integers 0 or more, .* got \[-1, -1, -1\]"),
    ({"pools": 1.5}, "pools must be integers 0 or more, .* got float64"),
    ({"pools": NAN}, "pools must be integers 0 or more, .* got float64 .*nan"),
    ({"pools": [True, False, True]}, "pools must be integers .* got bool"),
    ({"pools": "3"}, "pools must be integers .* got <U1"),
    ({"pools": [1, 2]}, r"pools must be integers .* got shape \(2,\)"),
    # chips: overflow, floats, bools, shape
    ({"chips": [[2**40] * N] * B}, "chips 1099511627776 is not allowed: chips must be -2147483648 to 2147483647"),
    ({"chips": [[2**31 - 5] * N] * B}, "chips 2147483643 with a pool of 0 is not allowed: .* at most 2147483637"),
    ({"chips": [[-(2**31)] * N] * B}, "chips -2147483648 is not allowed: .* at least -2147483645"),
    ({"chips": np.full((B, N), 20.0)}, r"chips must be whole numbers of chips, shape \(3, 4\) .* got float64"),
    ({"chips": np.full((B, N), True)}, "chips must be whole numbers .* got bool"),
    ({"chips": np.full((B, N + 1), 20)}, r"chips must be whole numbers .* got int64 values of shape \(3, 5\)"),
    ({"chips": 20}, r"shape \(3, 4\) \(games, seats\), got int64 values of shape \(\)"),
    # dealers
    ({"dealers": N}, r"dealers must be integers 0-3, .* got \[4, 4, 4\]"),
    ({"dealers": -1}, "dealers must be integers 0-3"),
    ({"dealers": 1.5}, "dealers must be integers 0-3, .* got float64"),
    ({"dealers": [True] * B}, "dealers must be integers 0-3, .* got bool"),
    # injected deals
    ({"hands": GOOD_HANDS}, "needs both hands and turnups"),
    ({"hands": GOOD_HANDS, "turnups": [30, 4, 30]}, "deal 1 uses a card more than once: 5C"),
    ({"hands": GOOD_HANDS + 0.0, "turnups": GOOD_TURNUPS}, "hands must be integer card indices 0-51, got float64"),
    ({"hands": GOOD_HANDS, "turnups": [30.0] * B}, "turnups must be integer card indices 0-51, got float64"),
    ({"hands": GOOD_HANDS + 40, "turnups": GOOD_TURNUPS}, "card indices must be 0-51, got"),
    ({"hands": GOOD_HANDS[:, :, :4], "turnups": GOOD_TURNUPS}, r"hands must have shape \(3, 4, 5\)"),
    ({"hands": GOOD_HANDS, "turnups": [30]}, r"turnups must have shape \(3,\)"),
    ({"hands": [[[1, 2]]], "turnups": [30]}, "hands must have shape"),
    # seeds
    ({"seed": -1}, "seed must be a whole number 0 or more, or None, got -1"),
    ({"seed": 2.0}, "seed must be a whole number 0 or more, or None, got 2.0"),
    ({"seed": True}, "seed must be a whole number 0 or more, or None, got True"),
    ({"seed": "1"}, "seed must be a whole number 0 or more, or None, got '1'"),
    # a good seed beside a bad value: the generator must not be reseeded
    ({"seed": 11, "pools": 2**31}, "pool 2147483648 is not allowed"),
    ({"seed": 11, "where": [0.5]}, "where must be a bool mask"),
]


@pytest.mark.parametrize(("arguments", "needle"), RESET_CASES, ids=[repr(a)[:50] for a, _ in RESET_CASES])
def test_a_refused_core_reset_changes_nothing(arguments, needle):
    core = played_core()
    before = core_snapshot(core)
    with pytest.raises(ValueError, match=needle):
        core.reset(**arguments)
    assert_same_state(before, core_snapshot(core))


@pytest.mark.parametrize(("arguments", "needle"), [
    ({"pools": [2**24 - 200, 0, 0]}, r"pool 16777016 is not allowed: within 50 hands .* must be 0 to 16777010"),
    ({"chips": [[2**31 - 400] * N] * B}, "within 50 hands .* at most 2147483147"),
    ({"chips": [[CHIPS_MIN + 100] * N] * B}, "within 50 hands under these rules a player may pay 150 chips"),
])
def test_game_mode_leaves_room_for_every_hand_of_the_game(arguments, needle):
    core = played_core(mode="game")
    before = core_snapshot(core)
    with pytest.raises(ValueError, match=needle):
        core.reset(**arguments)
    assert_same_state(before, core_snapshot(core))


def test_the_lowest_chips_game_mode_allows_are_exact():
    """Default rules, 50 hands: a player pays at most 50 * (ante 1 + jink bonus 2) = 150 chips, so
    CHIPS_MIN + 150 is the lowest chip count a reset may inject, and one chip less is refused."""
    core = played_core(mode="game")
    core.reset(chips=[[CHIPS_MIN + 150] * N] * B)
    assert int(core.chips.min()) == CHIPS_MIN + 150 - 1  # accepted, and the first hand's ante of 1 paid
    with pytest.raises(ValueError, match=f"chips must be at least {CHIPS_MIN + 150}"):
        core.reset(chips=[[CHIPS_MIN + 149] * N] * B)


def test_the_largest_allowed_chips_and_pool_play_a_hand_without_wrapping():
    core = SpoilFiveCore(64, seed=2, reward="chips")
    chips = np.full((64, N), CHIPS_MAX - 10 - 1000)  # 10: a hand's ante and jink bonuses
    core.reset(chips=chips, pools=np.full(64, 1000))
    total = core.chips.astype(np.int64).sum(axis=1) + core.pool
    rng = np.random.default_rng(2)
    while not core.done.all():
        mask = core.legal_mask()
        core.step(random_legal(rng, mask))
    np.testing.assert_array_equal(core.chips.astype(np.int64).sum(axis=1) + core.pool, total)
    assert (core.chips > 0).all()


def test_a_single_environment_says_the_deal_not_deal_0():
    game = played_env()
    before = env_snapshot(game)
    hands = [["AH", "2H", "3H", "4H", "5H"]] * N
    with pytest.raises(ValueError, match="^the deal uses a card more than once: AH"):
        game.reset(options={"hands": hands, "turnup": "KS"})
    assert_same_state(before, env_snapshot(game))


@pytest.mark.parametrize(("call", "arguments", "needle"), [
    ("hand_of", (True, 0), "game must be an index 0-2, got True"),
    ("hand_of", (-1, 0), "game must be an index 0-2, got -1"),
    ("hand_of", (B, 0), "game must be an index 0-2, got 3"),
    ("hand_of", (0, N), "seat must be 0-3, got 4"),
    ("hand_of", (0, 1.0), "seat must be 0-3, got 1.0"),
    ("describe", (5,), "game must be an index 0-2, got 5"),
    ("game_winners", (1.0,), "game must be an index 0-2, got 1.0"),
    ("game_winners", (None,), "game must be an index 0-2, got None"),
])
def test_bad_games_and_seats_to_read_are_refused(call, arguments, needle):
    core = SpoilFiveCore(B, rules=Rules(num_players=N), seed=0)
    with pytest.raises(ValueError, match=needle):
        getattr(core, call)(*arguments)


def test_describing_a_game_never_dealt_says_so():
    core = SpoilFiveCore(B, rules=Rules(num_players=N), deal=False)
    assert core.describe(0) == "no hand dealt yet: call reset()"
    core.reset(seed=0)
    assert core.describe(0).startswith("phase=") and len(core.hand_of(0, 0)) == 5


@pytest.mark.parametrize("action", [3.0, True, "104", None, np.float64(2)], ids=repr)
def test_action_text_takes_only_whole_numbers(action):
    from spoilfive_env.actions import action_str

    with pytest.raises(ValueError, match="an action is a whole number 0-106"):
        action_str(action)
    assert action_str(np.int16(104)) == "decline to rob"


OBSERVE_CASES = [
    (1.5, "seats must be integer seats 0-3, one or one per game .* got float64 values of shape \\(\\): \\[1.5\\]"),
    (np.array([0.5, 1.7, 2.0]), "seats must be integer seats 0-3, .* got float64"),
    (-1, r"seats must be integer seats 0-3, .* got \[-1\]"),
    (N, r"got \[4\]"),
    (True, "got bool"),
    ("1", "got <U1"),
    (np.zeros(B + 1, int), r"got shape \(4,\)"),
    (NAN, "got float64"),
]


@pytest.mark.parametrize(("seats", "needle"), OBSERVE_CASES, ids=[repr(s)[:30] for s, _ in OBSERVE_CASES])
def test_bad_seats_to_observe_are_refused(seats, needle):
    core = played_core()
    before = core_snapshot(core)
    with pytest.raises(ValueError, match=needle):
        core.observe(seats)
    assert_same_state(before, core_snapshot(core))


@pytest.mark.parametrize(("indices", "needle"), [
    ([0.5], "indices must be integer game indices 0-2, got float64"),
    ([B], "got int64"),
    ([-1], "got int64"),
    ([[0]], "got int64 values of shape"),
])
def test_bad_subset_indices_are_refused(indices, needle):
    core = played_core()
    before = core_snapshot(core)
    with pytest.raises(ValueError, match=needle):
        core.subset(indices)
    assert_same_state(before, core_snapshot(core))


@pytest.mark.parametrize(("actions", "needle"), [
    (np.zeros(B) + 0.0, "actions must be integers of shape"),
    (np.zeros(B, bool), "actions must be integers of shape"),
    (np.zeros(B + 1, int), "actions must be integers of shape"),
    (np.full(B, 107), "illegal action 107"),
])
def test_bad_actions_are_refused(actions, needle):
    core = played_core()
    before = core_snapshot(core)
    with pytest.raises(ValueError, match=needle):
        core.step(actions)
    assert_same_state(before, core_snapshot(core))


# ---------------------------------------------------------------------------- the AEC environment
ENV_ARGUMENT_CASES = [
    ({"num_players": 4.0}, "num_players=4.0 is not allowed: it must be an integer"),
    ({"num_players": True}, "num_players=True is not allowed"),
    ({"num_players": None}, "num_players=None is not allowed: it must be an integer"),
    ({"render_mode": "rgb_array"}, "render_mode='rgb_array' is not allowed: choose None, 'ansi' or 'human'"),
    ({"mode": "match"}, "mode='match' is not allowed"),
    ({"reward": 1}, "reward=1 is not allowed"),
    ({"jink_bonus": "abc"}, "jink_bonus='abc' is not allowed: it must be an integer"),
    ({"ante": 2**30}, "ante=1073741824 is not allowed with these rules"),
    ({"preset": "nope"}, "unknown preset 'nope'"),
    ({"rob": True}, "unknown rules option"),
]


@pytest.mark.parametrize(("arguments", "needle"), ENV_ARGUMENT_CASES,
                         ids=[repr(a)[:40] for a, _ in ENV_ARGUMENT_CASES])
def test_bad_env_arguments_are_refused(arguments, needle):
    with pytest.raises(ValueError, match=needle):
        env(**arguments)


FIVE = ["5H", "JD", "AS", "KC", "2D"]
ENV_RESET_CASES = [
    # seeds
    ({"seed": -1}, "seed must be a whole number 0 or more, or None, got -1"),
    ({"seed": 1.5}, "seed must be a whole number 0 or more, or None, got 1.5"),
    ({"seed": "1"}, "seed must be a whole number 0 or more, or None, got '1'"),
    ({"seed": True}, "got True"),
    # the options themselves
    ({"options": "hands"}, "options must be a dict of reset options .* got str"),
    ({"options": [("pool", 1)]}, "options must be a dict of reset options .* got list"),
    # pool
    # the largest pool: a hand's winner gains at most 2**24 chips, the pool grown by 4 antes and 6 of jink bonuses
    ({"options": {"pool": 2**31}}, r"'pool' must be a whole number of chips 0 to 16777206 \(so that a hand's "
                                   r"winner gains at most 2\*\*24 chips under these rules: rewards are float32\), "
                                   "got 2147483648"),
    ({"options": {"pool": 2**24 + 1}}, "'pool' must be a whole number of chips 0 to 16777206 .*got 16777217"),
    ({"options": {"pool": 2**24 - 9}}, "'pool' must be a whole number of chips 0 to 16777206 .*got 16777207"),
    ({"options": {"pool": -1}}, "'pool' must be a whole number of chips 0 to 16777206 .*got -1"),
    ({"options": {"pool": 1.5}}, "'pool' must be a whole number of chips 0 to 16777206 .*got 1.5"),
    ({"options": {"pool": 2.0}}, "got 2.0"),
    ({"options": {"pool": np.float64(2)}}, "got np.float64\\(2.0\\)|got 2.0"),
    ({"options": {"pool": NAN}}, "got nan"),
    ({"options": {"pool": True}}, "got True"),
    ({"options": {"pool": "3"}}, "got '3'"),
    # chips
    ({"options": {"chips": [2**40] * N}},
     "'chips' must be whole numbers -2147483648 to 2147483647 .* got 1099511627776"),
    ({"options": {"chips": [2**31 - 5] * N}}, "chips 2147483643 with a pool of 0 is not allowed"),
    ({"options": {"chips": [20.0] * N}}, r"'chips' must give one whole number of chips per seat \(4\), got \[20.0"),
    ({"options": {"chips": [20.5] * N}}, "'chips' must give one whole number of chips per seat"),
    ({"options": {"chips": [True] * N}}, "'chips' must give one whole number"),
    ({"options": {"chips": [NAN] * N}}, "'chips' must give one whole number"),
    ({"options": {"chips": [20] * (N - 1)}}, r"per seat \(4\), got \[20, 20, 20\]"),
    ({"options": {"chips": "abcd"}}, "got 'abcd'"),
    ({"options": {"chips": 20}}, "got 20"),
    # dealer
    ({"options": {"dealer": N}}, "'dealer' must be a seat 0-3, got 4"),
    ({"options": {"dealer": -1}}, "'dealer' must be a seat 0-3, got -1"),
    ({"options": {"dealer": 1.0}}, "'dealer' must be a seat 0-3, got 1.0"),
    ({"options": {"dealer": True}}, "got True"),
    ({"options": {"dealer": "0"}}, "got '0'"),
    # a fixed deal
    ({"options": {"hands": [FIVE] * N}}, "a fixed deal needs both 'hands'"),
    ({"options": {"turnup": "9S"}}, "a fixed deal needs both 'hands'"),
    ({"options": {"hands": [FIVE] * (N - 1), "turnup": "9S"}},
     "'hands' must hold one list of 5 cards for each of the 4"),
    ({"options": {"hands": "5H JD AS KC 2D", "turnup": "9S"}}, "'hands' must hold one list"),
    ({"options": {"hands": [FIVE[:4]] * N, "turnup": "9S"}}, "seat 0 must be dealt exactly 5 cards"),
    ({"options": {"hands": ["5H JD AS KC 2D"] * N, "turnup": "9S"}}, "seat 0 must be dealt exactly 5 cards"),
    ({"options": {"hands": [30] * N, "turnup": "9S"}}, "seat 0 must be dealt exactly 5 cards, got 30"),
    ({"options": {"hands": [FIVE] * N, "turnup": "9S"}}, "the deal uses a card more than once"),
    ({"options": {"hands": [["ZZ", *FIVE[1:]]] + [FIVE] * (N - 1), "turnup": "9S"}}, "unknown card 'ZZ'"),
    ({"options": {"hands": [[1.5, 2, 3, 4, 5]] * N, "turnup": "9S"}}, "card index must be an integer 0-51, got 1.5"),
    ({"options": {"hands": [[52, 2, 3, 4, 5]] * N, "turnup": "9S"}}, "card index must be 0-51, got 52"),
    ({"options": {"hands": [[True, 2, 3, 4, 5]] * N, "turnup": "9S"}}, "card index must be an integer 0-51, got True"),
    ({"options": {"hands": [["5H", "JD", "AS", "KC", "2D"], ["6H", "7H", "8H", "9H", "10H"],
                            ["2C", "3C", "4C", "5C", "6C"], ["2S", "3S", "4S", "5S", "6S"]], "turnup": "5H"}},
     "the deal uses a card more than once: 5H"),
    ({"options": {"hands": [["5H"] * 5] * N, "turnup": "5H"}}, "the deal uses a card more than once: 5H$"),
    # a good seed beside a bad option: the generator must not be reseeded
    ({"seed": 11, "options": {"pool": 2**31}}, "'pool' must be a whole number of chips 0 to 16777206"),
    ({"seed": 11, "options": {"chips": [1.5] * N}}, "'chips' must give one whole number"),
    ({"seed": 11, "options": {"dealer": 9}}, "'dealer' must be a seat"),
]


@pytest.mark.parametrize(("arguments", "needle"), ENV_RESET_CASES,
                         ids=[repr(a)[:60] for a, _ in ENV_RESET_CASES])
def test_a_refused_env_reset_changes_nothing(arguments, needle):
    game = played_env()
    before = env_snapshot(game)
    with pytest.raises(ValueError, match=needle):
        game.reset(**arguments)
    assert_same_state(before, env_snapshot(game))


@pytest.mark.parametrize("call", ["step", "observe", "render", "last"])
def test_the_raw_env_refuses_to_play_before_its_first_reset(call):
    """The unwrapped env (no PettingZoo order check above it) says what to do, not AttributeError."""
    from spoilfive_env import raw_env

    game = raw_env(num_players=3, render_mode="ansi")
    arguments = {"step": (0,), "observe": ("player_0",), "render": (), "last": ()}[call]
    with pytest.raises(ValueError, match=rf"{call}\(\) before reset\(\): call reset\(\)"):
        getattr(game, call)(*arguments)
    game.reset(seed=0)  # and the refusal left it able to start
    assert game.observe("player_0")["action_mask"].shape == (game.action_space("player_0").n,)


def finished_env(wrapped: bool):
    """A 3-player table whose hand is over and whose every agent has stepped out (``step(None)`` each)."""
    from spoilfive_env import raw_env

    game = env(num_players=3) if wrapped else raw_env(num_players=3)
    game.reset(seed=2)
    while not game.terminations[game.agent_selection]:
        game.step(int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0]))
    while game.agents:
        game.step(None)
    return game


@pytest.mark.parametrize("wrapped", [True, False], ids=["env", "raw_env"])
def test_last_and_step_after_every_agent_has_left_are_refused_in_words(wrapped):
    """They were PettingZoo's KeyError 'player_0' (step: the raw env; the wrapper only warns, as PettingZoo does)."""
    game = finished_env(wrapped)
    before = env_snapshot(game)
    with pytest.raises(ValueError, match=r"^last\(\) after every agent has left the finished episode: call reset\(\)"):
        game.last()
    if not wrapped:
        for action in (0, None):
            with pytest.raises(ValueError, match=r"^step\(\) after every agent has left the finished episode"):
                game.step(action)
    assert_same_state(before, env_snapshot(game))
    assert game.observe("player_1")["observation"].shape == (OBS_DIM,)  # observing the end is still allowed
    game.reset(seed=3)
    assert game.last()[0]["action_mask"].shape == (game.action_space("player_0").n,)


@pytest.mark.parametrize("render_mode", [None, "ansi", "human"])
def test_the_wrapped_env_refuses_calls_before_its_first_reset_in_words_even_after_a_refused_one(render_mode):
    """PettingZoo's wrapper raised AssertionError (step, observe, render) or AttributeError (last) before the
    first reset, and once a first reset was refused it let step() through as a warning that did nothing."""
    game = env(num_players=3, render_mode=render_mode)
    for refused_reset in (False, True):
        if refused_reset:
            with pytest.raises(ValueError, match="'pool' must be a whole number"):
                game.reset(seed=1, options={"pool": -1})
        for call, arguments in (("step", (0,)), ("observe", ("player_0",)), ("last", ())):
            with pytest.raises(ValueError, match=rf"^{call}\(\) before reset\(\): call reset\(\)"):
                getattr(game, call)(*arguments)
        if render_mode is None:
            with pytest.warns(UserWarning, match="render\\(\\) called without a render_mode"):
                assert game.render() is None  # warned, as after a reset
        else:
            with pytest.raises(ValueError, match=r"^render\(\) before reset\(\): call reset\(\)"):
                game.render()
    game.reset(seed=1)
    assert game.last()[0]["observation"].shape == (OBS_DIM,)
    assert str(game) == "spoil_five_v0"


def test_a_huge_unsigned_game_index_is_named_as_given_not_wrapped_to_minus_one():
    core = played_core()
    before = core_snapshot(core)
    with pytest.raises(ValueError, match=r"game indices 0-2, got game indices \[18446744073709551615\]$"):
        core.reset(np.array([2**64 - 1], np.uint64))
    assert_same_state(before, core_snapshot(core))


@pytest.mark.parametrize(("mode", "largest"), [("hand", 2**24 - 10), ("game", 2**24 - 6 - 50 * 4)])
def test_the_env_names_the_largest_pool_its_mode_allows_and_takes_it(mode, largest):
    """A hand's winner gains at most the pool grown by every ante of the hands to come and the others' jink
    bonuses (4 players: 4 chips and 6 a hand; 50 hands in a game): the refusal names that bound, not 2**24."""
    game = played_env(mode=mode)
    before = env_snapshot(game)
    with pytest.raises(ValueError, match=f"'pool' must be a whole number of chips 0 to {largest} .*got {largest + 1}$"):
        game.reset(options={"pool": largest + 1})
    assert_same_state(before, env_snapshot(game))
    game.reset(seed=1, options={"pool": largest})
    assert game.unwrapped.core.pool[0] == largest + N


def test_numpy_values_are_accepted_in_reset_options():
    game = env(num_players=np.int64(N))
    hands = np.array([[0, 1, 2, 3, 5], [6, 7, 8, 9, 10], [11, 12, 14, 15, 16], [17, 18, 19, 20, 21]])
    game.reset(seed=np.int64(1), options={"dealer": np.int64(N - 1), "pool": np.int32(4),
                                          "chips": np.array([5, 6, 7, 8]), "hands": hands,
                                          "turnup": np.int64(40)})
    core = game.unwrapped.core
    assert core.dealer[0] == N - 1 and core.pool[0] == 4 + N and core.hand_of(0, 1) == [6, 7, 8, 9, 10]
    assert core.chips[0].tolist() == [4, 5, 6, 7]


def test_env_signature_shows_its_keywords():
    import inspect

    parameters = inspect.signature(env).parameters
    assert list(parameters)[:4] == ["num_players", "render_mode", "mode", "reward"]
    assert "num_players" in (env.__doc__ or "")


BAD_INPUT_COUNT = (len(RULES_CASES) + len(CORE_ARGUMENT_CASES) + len(RESET_CASES) + 3 + len(OBSERVE_CASES)
                   + 4 + 4 + len(ENV_ARGUMENT_CASES) + len(ENV_RESET_CASES) + 1 + 1)
"""Bad inputs tried by this module (the note on issue 10 quotes it)."""


# ---------------------------------------------------------------------------- a sweep of odd values
ODD_VALUES = [None, "x", "", b"4", 1.5, 2.0, NAN, math.inf, -1, 2**70, -(2**70), True, np.bool_(False), 1j,
              [], [1], [[1]], {}, {"a": 1}, object(), np.array([1.5]), np.array(["a"]), np.float32(3)]
RULE_OPTIONS = ["num_players", "starting_chips", "ante", "spoil_ante", "dealer_ante", "jink_bonus",
                "allow_jink", "conceal_ace_penalty", "num_hands", "max_hands", "partnerships", "preset"]


def accepted_or_value_error(call) -> bool:
    """True when ``call()`` ran; False when it raised ``ValueError``; any other exception fails."""
    try:
        call()
    except ValueError as error:
        assert str(error), "an empty error message"
        return False
    return True


@pytest.mark.parametrize("option", RULE_OPTIONS)
def test_odd_values_for_a_rules_option_give_a_value_error_or_are_accepted(option):
    """Only a real value gets through: None (the default) where an option has one, True or False
    (NumPy's too) for a yes/no option, stored as a Python bool."""
    for value in ODD_VALUES:
        if not accepted_or_value_error(lambda: make_rules(**{option: value})):  # noqa: B023 (called at once)
            continue
        if value is None:
            assert option in ("num_players", "preset"), f"{option}=None accepted"
            assert make_rules(**{option: None}) == Rules()
        else:
            assert option in ("allow_jink", "conceal_ace_penalty", "partnerships"), f"{option}={value!r} accepted"
            assert isinstance(value, (bool, np.bool_)), f"{option}={value!r} accepted"
            assert getattr(make_rules(**{option: value}), option) is bool(value)


# The odd values a reset takes: None (left as it is, or every game), no game or game 1, one dealer or
# pool for every game, and a seed of any size.
CORE_RESET_ACCEPTS = {"where": [None, [], [1]], "hands": [], "turnups": [], "dealers": [None, [1]],
                      "pools": [None, [1]], "chips": [None], "seed": [None, 2**70]}


@pytest.mark.parametrize("keyword", list(CORE_RESET_ACCEPTS))
def test_odd_values_for_a_core_reset_give_a_value_error_and_change_nothing(keyword):
    core = played_core()
    accepted = []
    for value in ODD_VALUES:
        arguments = {keyword: value}
        if keyword in ("hands", "turnups"):
            arguments = {"hands": GOOD_HANDS, "turnups": GOOD_TURNUPS, keyword: value}
        before = core_snapshot(core)
        if accepted_or_value_error(lambda: core.reset(**arguments)):  # noqa: B023 (called at once)
            accepted.append(value)
        else:
            assert_same_state(before, core_snapshot(core))
    assert list(map(repr, accepted)) == list(map(repr, CORE_RESET_ACCEPTS[keyword]))


# The odd values an env reset takes: a seed of any size or none, no options or options it ignores.
ENV_RESET_ACCEPTS = {"hands": [], "turnup": [], "dealer": [], "pool": [], "chips": [], "seed": [None, 2**70],
                     "options": [None, {}, {"a": 1}]}


@pytest.mark.filterwarnings("ignore:.*ignoring unknown reset option")  # options={"a": 1}: warned, ignored
@pytest.mark.parametrize("key", list(ENV_RESET_ACCEPTS))
def test_odd_values_for_an_env_reset_give_a_value_error_and_change_nothing(key):
    game = played_env()
    accepted = []
    good_hands = [["5H", "JD", "AS", "KC", "2D"], ["6H", "7H", "8H", "9H", "10H"],
                  ["2C", "3C", "4C", "5C", "6C"], ["2S", "3S", "4S", "5S", "6S"]]
    for value in ODD_VALUES:
        if key == "seed":
            arguments = {"seed": value}
        elif key == "options":
            arguments = {"options": value}
        elif key in ("hands", "turnup"):
            arguments = {"options": {"hands": good_hands, "turnup": "9D", key: value}}
        else:
            arguments = {"options": {key: value}}
        before = env_snapshot(game)
        if accepted_or_value_error(lambda: game.reset(**arguments)):  # noqa: B023 (called at once)
            accepted.append(value)
            game = played_env()  # accepted (None, say): start again from a played table
        else:
            assert_same_state(before, env_snapshot(game))
    assert list(map(repr, accepted)) == list(map(repr, ENV_RESET_ACCEPTS[key]))


def test_odd_values_for_seats_and_indices_give_a_value_error():
    core = played_core()
    for value in ODD_VALUES:
        before = core_snapshot(core)
        if value is not None and not (isinstance(value, list) and value == [1]):  # [1]: seat 1 in every game
            assert not accepted_or_value_error(lambda: core.observe(value)), value  # noqa: B023
        if accepted_or_value_error(lambda: core.subset(value)):  # noqa: B023 (called at once)
            assert isinstance(value, list) and value in ([], [1]), f"subset({value!r}) accepted"  # game indices
        else:
            assert_same_state(before, core_snapshot(core))
        # None of them is a batch size or a table size.
        assert not accepted_or_value_error(lambda: SpoilFiveCore(value)), value  # noqa: B023 (called at once)
        assert not accepted_or_value_error(lambda: env(num_players=value)), value  # noqa: B023 (called at once)
