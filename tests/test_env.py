"""The PettingZoo AEC environment: PettingZoo's own test kit, the public contract, bad input.

CONTRACT.md fixes: ``env(num_players, render_mode, mode, reward, **rules)``; agents
``player_0 ... player_{n-1}``; ``observe`` gives ``{"observation", "action_mask" (int8, 107)}``;
``reset(seed, options)`` with a fixed deal; illegal actions and impossible deals raise
``ValueError`` and change nothing; rewards ``"equity"`` and ``"chips"``.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest
from conftest import TRUMPS_FIRST, fixed_deal, play_cards
from pettingzoo.test import api_test, render_test, seed_test

import spoilfive_env
from spoilfive_env import OBS_DIM, card_index, card_str, env, raw_env, spoil_five_v0
from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, NUM_ACTIONS, action_str
from spoilfive_env.env import render_table
from spoilfive_env.rules import Rules

ALL_SIZES = range(2, 11)


def random_policy(seed):
    rng = np.random.default_rng(seed)

    def act(observation, termination, truncation):
        if termination or truncation:
            return None
        return int(rng.choice(np.flatnonzero(observation["action_mask"])))

    return act


def play_out(game, seed=0):
    """Play the episode to the end with random legal actions.

    Returns the total reward per agent and the infos given when the episode ended (agents
    are removed, with their infos, as they take their last ``step(None)``).
    """
    act = random_policy(seed)
    totals = {agent: 0.0 for agent in game.possible_agents}
    final_infos = {}
    for _ in game.agent_iter():
        observation, _, termination, truncation, _ = game.last()
        live = not (termination or truncation)
        game.step(act(observation, termination, truncation))
        if live:
            for name, reward in game.rewards.items():
                totals[name] += reward
            if all(game.terminations.values()):
                final_infos = {name: dict(info) for name, info in game.infos.items()}
    return totals, final_infos


def snapshot(game):
    """Everything an agent can see: observations and masks of all agents, selection, rewards."""
    return (
        game.agent_selection,
        {a: {k: v.copy() for k, v in game.observe(a).items()} for a in game.possible_agents},
        dict(game.rewards), dict(game.terminations), dict(game._cumulative_rewards),
    )


def assert_same_snapshot(first, second):
    assert first[0] == second[0]
    for agent, view in first[1].items():
        for key, value in view.items():
            np.testing.assert_array_equal(value, second[1][agent][key])
    assert first[2:] == second[2:]


# ---------------------------------------------------------------- PettingZoo's test kit


@pytest.mark.parametrize("num_players", ALL_SIZES)
def test_pettingzoo_api_test(num_players):
    api_test(env(num_players=num_players), num_cycles=200)


@pytest.mark.parametrize("num_players", [2, 5, 10])
def test_pettingzoo_api_test_game_mode(num_players):
    api_test(env(num_players=num_players, mode="game", reward="chips"), num_cycles=200)


@pytest.mark.parametrize("num_players", ALL_SIZES)
def test_pettingzoo_seed_test(num_players):
    seed_test(functools.partial(env, num_players=num_players), num_cycles=200)


def test_pettingzoo_seed_test_game_mode():
    seed_test(functools.partial(env, num_players=4, mode="game"), num_cycles=100)


@pytest.mark.parametrize("num_players", ALL_SIZES)
def test_pettingzoo_render_test(num_players, capsys):
    render_test(functools.partial(env, num_players=num_players))
    assert "Spoil Five" in capsys.readouterr().out  # "human" prints


def test_render_ansi_shows_the_table_and_only_the_viewers_hand():
    game = env(num_players=3, render_mode="ansi")
    game.reset(options={"dealer": 2, "turnup": "KS",
                        "hands": [["5S", "JS", "AH", "KC", "KD"], ["2C", "3C", "4C", "6C", "7C"],
                                  ["2D", "3D", "4D", "6D", "7D"]]})
    text = game.render()
    assert isinstance(text, str)
    assert "pool 3" in text and "♠" in text and "K♠" in text
    assert "5♠" in text and "2♣" not in text  # player_0 acts: only his hand is shown
    game.step(card_index("5S"))
    text = game.render()
    assert "5♠" in text  # now in the trick
    assert "2♣" in text and "J♠" not in text  # player_1's turn and hand


def test_render_table_hides_whose_turn_it_is_to_rob_from_the_other_seats():
    """The rob phase names the holder of the ace of trumps, so only he sees "rob" (as in the observation); a
    seat viewing the table from elsewhere (the Gymnasium learner's) sees "play" while he decides. Once he has
    robbed, every seat's table notes it on his row."""
    game = env(num_players=3, render_mode="ansi")
    game.reset(options={"dealer": 2, "turnup": "KS",
                        "hands": [["AS", "JS", "AH", "KC", "KD"], ["2C", "3C", "4C", "6C", "7C"],
                                  ["2D", "3D", "4D", "6D", "7D"]]})  # player_0 holds the ace of trumps
    assert game.observe("player_0")["action_mask"][DECLINE_ROB]
    core = game.unwrapped.core
    assert game.render().splitlines()[0].endswith(" · rob")
    assert render_table(core, viewer=0).splitlines()[0].endswith(" · rob")
    for viewer in (1, 2):
        assert render_table(core, viewer=viewer).splitlines()[0].endswith(" · play")
    game.step(52 + card_index("KC"))  # he robs: who robbed is public (RULES.md), the discard is not
    for viewer in range(3):
        rows = render_table(core, viewer=viewer).splitlines()[2:5]
        assert [row.endswith("  robbed") for row in rows] == [True, False, False]
        assert "K♣" not in "\n".join(rows)


def test_render_table_numbers_the_hand_and_marks_the_seat_to_act_only_while_it_is_played():
    """The header counts hands from 1 (the hand being played, then the last one played), and the ">" marker
    stands at the seat to act, at none once the hand is over."""
    game = env(num_players=3, render_mode="ansi")
    game.reset(options=fixed_deal())
    lines = game.render().splitlines()
    assert " · hand 1 · " in lines[0] and lines[0].endswith(" · play")
    assert [line[0] for line in lines[2:5]] == [">", " ", " "]  # player_0 leads
    game.step(card_index("5S"))
    assert [line[0] for line in game.render().splitlines()[2:5]] == [" ", ">", " "]
    play_cards(game, *TRUMPS_FIRST[1:], "claim")
    lines = game.render().splitlines()
    assert " · hand 1 · " in lines[0] and lines[0].endswith(" · done")
    assert [line[0] for line in lines[2:5]] == [" ", " ", " "]
    assert lines[-1] == "player_0 took the pool"


def test_render_table_shows_each_card_of_the_trick_and_each_note_on_the_row_of_its_seat():
    """The trick column: the leader's card on his row, then each card on the row of the seat that played it, the
    seats to the leader's left in turn (docs/rules.md); the notes column names the dealer on the dealer's row."""
    game = env(num_players=3, render_mode="ansi")
    game.reset(options=fixed_deal())  # player_2 deals, player_0 leads
    play_cards(game, "5S", "2C")  # player_1 follows; player_2 is to play
    header, *rows = game.render().splitlines()[1:5]
    trick, notes = header.index(" trick ") + 1, header.index(" notes") + 1
    assert [(row[2:12].strip(), row[trick:notes].strip(), row[notes:]) for row in rows] == [
        ("player_0", "5♠", ""), ("player_1", "2♣", ""), ("player_2", "", "dealer")]


def test_human_render_mode_prints_the_table_after_every_step(capsys):
    """PettingZoo's convention for render_mode="human": the env shows itself after each step, unasked; the
    table printed is the one render() would print at that moment (here with player_1 to act)."""
    game = env(num_players=3, render_mode="human")
    game.reset(options=fixed_deal())
    capsys.readouterr()
    game.step(card_index("5S"))
    printed = capsys.readouterr().out
    assert printed.count("Spoil Five · 3 players") == 1 and "player_1's hand: " in printed
    game.render()
    assert capsys.readouterr().out == printed


def test_render_without_mode_warns_and_returns_none():
    game = env(num_players=3)
    game.reset(seed=0)
    with pytest.warns(UserWarning, match="render\\(\\) called without a render_mode"):
        assert game.render() is None


# ---------------------------------------------------------------- the contract


def test_no_parallel_view_one_player_acts_at_a_time():
    """docs/integrations.md: the env is not parallelizable, and PettingZoo's converter says so by that key."""
    from pettingzoo.utils.conversions import aec_to_parallel

    game = env(num_players=4)
    assert game.metadata["is_parallelizable"] is False
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(game)


def test_metadata_agents_and_spaces():
    game = env(num_players=5)
    assert game.metadata["name"] == "spoil_five_v0"
    assert "ansi" in game.metadata["render_modes"] and "human" in game.metadata["render_modes"]
    game.reset(seed=0)
    assert game.possible_agents == [f"player_{i}" for i in range(5)]
    assert game.agents == game.possible_agents
    for agent in game.possible_agents:
        assert game.observation_space(agent) is game.observation_space(agent)
        assert game.action_space(agent) is game.action_space(agent)
        assert game.action_space(agent).n == NUM_ACTIONS
        assert game.observation_space(agent)["observation"].shape == (OBS_DIM,)
        assert game.observation_space(agent)["action_mask"].dtype == np.int8
    assert game.unwrapped.agent_name_mapping == {f"player_{i}": i for i in range(5)}


def test_versioned_entry_point_and_exports():
    game = spoil_five_v0.env()
    game.reset(seed=1)
    assert len(game.agents) == 4
    assert isinstance(spoil_five_v0.raw_env(num_players=3), raw_env)
    assert spoilfive_env.env is env and spoilfive_env.raw_env is raw_env
    assert card_index("5H") == 30 and card_str(30) == "5H"


def test_the_versioned_entry_point_is_the_order_enforced_env_as_pettingzoo_names_it():
    """PettingZoo's convention: ``<name>_v0.env()`` is the wrapped env and ``raw_env`` the bare one;
    spoil_five_v0.env is spoilfive_env.env, the raw env inside the order-enforcing wrapper."""
    from spoilfive_env.env import OrderEnforcing

    assert spoil_five_v0.env is env
    game = spoil_five_v0.env(num_players=3)
    assert isinstance(game, OrderEnforcing) and type(game.unwrapped) is raw_env


@pytest.mark.parametrize("num_players", [2, 6, 10])
def test_observations_are_int8_masks_float_vectors_and_fresh_copies(num_players):
    game = env(num_players=num_players)
    game.reset(seed=4)
    act = random_policy(4)
    for agent in game.agent_iter():
        observation, _, termination, truncation, _ = game.last()
        assert observation["action_mask"].dtype == np.int8 and observation["action_mask"].shape == (NUM_ACTIONS,)
        assert observation["observation"].dtype == np.float32 and observation["observation"].shape == (OBS_DIM,)
        again = {key: value.copy() for key, value in game.observe(agent).items()}  # as it was before the writes
        observation["observation"][:] = -7.0
        observation["action_mask"][:] = 1
        fresh = game.observe(agent)
        np.testing.assert_array_equal(fresh["observation"], again["observation"])
        np.testing.assert_array_equal(fresh["action_mask"], again["action_mask"])
        if not (termination or truncation):
            assert fresh["action_mask"].any()
            others = [a for a in game.agents if a != agent]
            assert not any(game.observe(a)["action_mask"].any() for a in others)  # only the actor may act
        game.step(act(fresh, termination, truncation))


def test_reset_seed_is_deterministic_and_unseeded_resets_differ():
    first, second = env(num_players=4), env(num_players=4)
    first.reset(seed=123)
    second.reset(seed=123)
    assert_same_snapshot(snapshot(first), snapshot(second))
    assert play_out(first, seed=1) == play_out(second, seed=1)
    first.reset(seed=123)
    second.reset(seed=124)
    views = [np.concatenate([g.observe(a)["observation"] for a in g.possible_agents]) for g in (first, second)]
    assert not np.array_equal(*views)
    deals = set()
    for _ in range(5):
        first.reset()
        deals.add(first.observe("player_0")["observation"].tobytes())
    assert len(deals) > 1


def test_np_random_is_the_generator_that_reset_seeds():
    first, second = env(num_players=3), env(num_players=3)
    first.reset(seed=7)
    second.reset(seed=7)
    assert first.np_random is first.unwrapped.core.rng  # through the wrapper too
    assert first.np_random.bit_generator.state == second.np_random.bit_generator.state
    first.np_random.integers(10)  # a draw moves the deals that follow, as PettingZoo's np_random does
    first.reset()
    second.reset()
    assert not np.array_equal(first.observe("player_0")["observation"], second.observe("player_0")["observation"])


def test_reset_keeps_the_rules():
    game = env(num_players=6, preset="hoyle", allow_jink=False)
    game.reset(seed=0)
    game.reset(seed=1)
    rules = game.unwrapped.rules
    assert rules == Rules.preset("hoyle", num_players=6, allow_jink=False)
    assert game.unwrapped.core.rules is rules


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("action", [card_index("2C"), card_index("AS"), DECLINE_ROB, CLAIM, JINK, 52, 107, -1,
                                    3.0, "5S", None, True, np.int64(200)])
def test_illegal_action_raises_naming_action_agent_and_legal_ones_and_changes_nothing(action):
    game = env(num_players=3)
    game.reset(options=fixed_deal())
    before = snapshot(game)
    with pytest.raises(ValueError) as error:
        game.step(action)
    message = str(error.value)
    assert repr(action) in message or str(action) in message
    assert "player_0" in message
    for legal in np.flatnonzero(game.observe("player_0")["action_mask"]):
        assert str(legal) in message and action_str(legal) in message
    assert_same_snapshot(before, snapshot(game))
    game.step(card_index("5S"))  # the game goes on normally
    assert game.agent_selection == "player_1"


def test_a_refused_step_leaves_pettingzoo_s_agent_iter_as_it_was():
    """PettingZoo's order-enforcing wrapper marks a step taken before it passes it on: a refused one must
    not count, or ``agent_iter`` would move on as though the agent had acted."""
    game = env(num_players=3)
    game.reset(options=fixed_deal())
    agents = iter(game.agent_iter())
    assert next(agents) == "player_0"
    with pytest.raises(ValueError):
        game.step(card_index("2C"))
    with pytest.raises(AssertionError, match="need to call step"):
        next(agents)  # PettingZoo's own guard: the agent has not acted
    game.step(card_index("5S"))
    assert next(agents) == "player_1"


def test_a_refused_step_keeps_the_reward_the_agent_has_not_yet_collected():
    """In a game, a hand's rewards wait in ``_cumulative_rewards`` until each agent acts again; an illegal
    action must not clear the actor's, or ``last()`` would lose its share of the hand just played."""
    game = env(num_players=3, mode="game")
    game.reset(seed=0, options=fixed_deal())
    play_cards(game, *TRUMPS_FIRST, "claim")  # player_0 takes a pool of 3: +2, the others -1 each (equity)
    assert not any(game.terminations.values())
    agent = game.agent_selection
    waiting = dict(game._cumulative_rewards)
    assert waiting[agent] == pytest.approx(2.0 if agent == "player_0" else -1.0)
    before = snapshot(game)
    with pytest.raises(ValueError, match="illegal action 107"):
        game.step(107)
    assert_same_snapshot(before, snapshot(game))
    assert game._cumulative_rewards == waiting and game.last()[1] == waiting[agent]


def test_illegal_action_later_in_the_hand():
    game = env(num_players=3)
    game.reset(options=fixed_deal())
    for card in ("5S", "2C", "2D", "JS", "3C", "3D", "AH", "4C", "4D"):
        game.step(card_index(card))
    assert game.observe("player_0")["action_mask"][[CLAIM, JINK]].all()
    before = snapshot(game)
    with pytest.raises(ValueError, match="claim"):
        game.step(card_index("KC"))  # must choose claim or jink first
    assert_same_snapshot(before, snapshot(game))


def test_an_action_id_out_of_range_is_refused_even_where_it_would_wrap_onto_a_legal_one():
    """107 past a legal id, or 107 before it, is no action: it must not be read as the legal id it wraps onto."""
    game = env(num_players=3)
    game.reset(options=fixed_deal())
    legal = card_index("5S")
    assert game.observe("player_0")["action_mask"][legal]
    before = snapshot(game)
    for action in (legal + NUM_ACTIONS, legal - NUM_ACTIONS):
        with pytest.raises(ValueError, match=f"illegal action {action} for player_0"):
            game.step(action)
        assert_same_snapshot(before, snapshot(game))


BAD_DEALS = {
    "duplicate in hands": ({"hands": [["5S", "JS", "AH", "KC", "KD"], ["5S", "3C", "4C", "6C", "7C"],
                                      ["2D", "3D", "4D", "6D", "7D"]], "turnup": "KS"}, "5S"),
    "turn-up also dealt": ({"hands": fixed_deal()["hands"], "turnup": "KD"}, "KD"),
    "four cards": ({"hands": [["5S", "JS", "AH", "KC"], ["2C", "3C", "4C", "6C", "7C"],
                              ["2D", "3D", "4D", "6D", "7D"]], "turnup": "KS"}, "5"),
    "six cards": ({"hands": [["5S", "JS", "AH", "KC", "KD", "QD"], ["2C", "3C", "4C", "6C", "7C"],
                             ["2D", "3D", "4D", "6D", "7D"]], "turnup": "KS"}, "5"),
    "too few seats": ({"hands": fixed_deal()["hands"][:2], "turnup": "KS"}, "3"),
    "too many seats": ({"hands": [*fixed_deal()["hands"], ["8C", "9C", "QC", "8D", "9D"]], "turnup": "KS"},
                       "one list of 5 cards for each of the 3 seats"),
    "unknown card": ({"hands": [["5S", "JS", "AH", "KC", "ZZ"], ["2C", "3C", "4C", "6C", "7C"],
                                ["2D", "3D", "4D", "6D", "7D"]], "turnup": "KS"}, "ZZ"),
    "card index out of range": ({"hands": [[52, "JS", "AH", "KC", "KD"], ["2C", "3C", "4C", "6C", "7C"],
                                           ["2D", "3D", "4D", "6D", "7D"]], "turnup": "KS"}, "52"),
    "bad turn-up": ({"hands": fixed_deal()["hands"], "turnup": "1S"}, "1S"),
    "hands without turn-up": ({"hands": fixed_deal()["hands"]}, "turnup"),
    "turn-up without hands": ({"turnup": "KS"}, "hands"),
    "hand as one string": ({"hands": ["5S JS AH KC KD", "2C 3C 4C 6C 7C", "2D 3D 4D 6D 7D"], "turnup": "KS"},
                           "5 cards"),
    "dealer out of range": ({"dealer": 3}, "dealer"),
    "negative pool": ({"pool": -1}, "pool"),
}


@pytest.mark.parametrize("name", list(BAD_DEALS))
def test_impossible_deal_raises_and_changes_nothing(name):
    options, fragment = BAD_DEALS[name]
    game = env(num_players=3)
    game.reset(seed=5)
    game.step(int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0]))
    before = snapshot(game)
    rng_state = game.unwrapped.core.rng.bit_generator.state
    with pytest.raises(ValueError) as error:
        game.reset(seed=9, options=options)
    assert fragment in str(error.value)
    assert_same_snapshot(before, snapshot(game))
    assert game.unwrapped.core.rng.bit_generator.state == rng_state


def test_seeded_reset_with_a_duplicate_card_keeps_the_generator():
    game = env(num_players=3)
    game.reset(seed=5)
    rng_state = game.unwrapped.core.rng.bit_generator.state
    with pytest.raises(ValueError, match="more than once"):
        game.reset(seed=9, options=BAD_DEALS["duplicate in hands"][0])
    assert game.unwrapped.core.rng.bit_generator.state == rng_state


def test_fixed_deal_is_dealt_as_given():
    game = env(num_players=3)
    game.reset(options={**fixed_deal(), "pool": 4})
    view = spoilfive_env.decode_observation(game.observe("player_1")["observation"])
    assert view["hand"] == ["2C", "3C", "4C", "6C", "7C"]
    assert view["turnup"] == "KS" and view["trump"] == "spades"
    assert view["dealer"] == 1 and view["to_act"] == 2  # relative to player_1: dealer 2, eldest 0
    assert view["pool"] == 4 + 3  # the carried pool plus a spoil ante of 1 each


@pytest.mark.parametrize("kwargs,fragment", [
    ({"foo": 1}, "foo"), ({"num_player": 3}, "num_player"), ({"num_players": 11}, "11"),
    ({"num_players": 1}, "2 to 10"), ({"preset": "nope"}, "hoyle"), ({"mode": "match"}, "game"),
    ({"reward": "points"}, "equity"), ({"render_mode": "rgb_array"}, "ansi"),
    ({"partnerships": True, "num_players": 5}, "4 or 6"), ({"ante": -1}, "ante"),
    ({"allow_jink": "yes"}, "allow_jink"), ({"max_hands": 3}, "num_hands"),
])
def test_bad_constructor_arguments_raise(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        env(**kwargs)


def test_unknown_option_lists_the_allowed_ones():
    with pytest.raises(ValueError) as error:
        env(foo=1)
    message = str(error.value)
    for option in ("starting_chips", "ante", "spoil_ante", "dealer_ante", "jink_bonus", "allow_jink",
                   "conceal_ace_penalty", "num_hands", "max_hands", "partnerships", "preset"):
        assert option in message


def test_an_unknown_reset_option_is_ignored_with_a_warning_naming_it():
    """reset(options=...) warns about keys it does not know (PettingZoo's api_test passes its own) and
    deals as though they were not there."""
    game, plain = env(num_players=3), env(num_players=3)
    with pytest.warns(UserWarning, match=r"ignoring unknown reset option\(s\) colour: known are dealer, hands"):
        game.reset(seed=3, options={"colour": "red", "dealer": 1})
    plain.reset(seed=3, options={"dealer": 1})
    assert_same_snapshot(snapshot(game), snapshot(plain))


@pytest.mark.parametrize("text", ["", "ZZ", "11H", "5X", "H5", "10", "5HH", "A♥♥"])
def test_bad_card_strings_raise_naming_the_string(text):
    with pytest.raises(ValueError) as error:
        card_index(text)
    assert repr(text) in str(error.value)


@pytest.mark.parametrize(("value", "allowed"), [(52, "0-51"), (-1, "0-51"), (3.0, "an integer 0-51"),
                                               ("5H", "an integer 0-51"), (True, "an integer 0-51")])
def test_bad_card_indices_raise(value, allowed):
    with pytest.raises(ValueError, match=f"^card index must be {allowed}, got {re.escape(repr(value))}$"):
        card_str(value)


def test_card_text_forms():
    assert [card_index(t) for t in ("AC", "5H", "AH", "KS", "10s", "TD", "t♦", "a♥", " 5h ")] == \
        [0, 30, 26, 51, 48, 22, 22, 26, 30]
    assert card_str(48) == "10S" and card_str(26, symbols=True) == "A♥"


# ---------------------------------------------------------------- rewards


def test_the_raw_env_rewards_equity_by_default_as_env_does():
    """With a pool of 6 carried over the two reward modes differ (at pool 0 they agree): the equity of the hand,
    not its chips."""
    game = raw_env(num_players=3)
    game.reset(options={**fixed_deal(), "pool": 6})
    play_cards(game, *TRUMPS_FIRST, "claim")
    assert [game.rewards[f"player_{i}"] for i in range(3)] == pytest.approx([9 * 2 / 3, -9 / 3, -9 / 3])


@pytest.mark.parametrize("reward", ["equity", "chips"])
@pytest.mark.parametrize("pool", [0, 6])
def test_claimed_pool_rewards(reward, pool):
    game = env(num_players=3, reward=reward)
    game.reset(options={**fixed_deal(), "pool": pool})
    P = pool + 3
    play_cards(game, *TRUMPS_FIRST, "claim")
    assert all(game.terminations.values())
    rewards = [game.rewards[f"player_{i}"] for i in range(3)]
    if reward == "equity":
        assert rewards == pytest.approx([P * 2 / 3, -P / 3, -P / 3])
    else:
        assert rewards == pytest.approx([P - 1, -1, -1])
    assert game.infos["player_1"]["winner"] == 0 and game.infos["player_1"]["pool"] == 0


@pytest.mark.parametrize("reward", ["equity", "chips"])
def test_successful_jink_rewards(reward):
    game = env(num_players=3, reward=reward)
    game.reset(options=fixed_deal())
    play_cards(game, *TRUMPS_FIRST, "jink", "KC", "6C", "6D", "KD", "7C", "7D")
    assert all(game.terminations.values())
    rewards = [game.rewards[f"player_{i}"] for i in range(3)]
    if reward == "equity":
        assert rewards == pytest.approx([3 * 2 / 3 + 4, -1 - 2, -1 - 2])
    else:
        assert rewards == pytest.approx([3 - 1 + 4, -1 - 2, -1 - 2])
    assert sum(rewards) == pytest.approx(0.0)  # the pool was empty before and after


@pytest.mark.parametrize("reward", ["equity", "chips"])
def test_failed_jink_spoils(reward):
    game = env(num_players=3, reward=reward)
    hands = [["5S", "JS", "AH", "8C", "8D"], ["2C", "3C", "4C", "6C", "7C"], ["2D", "3D", "4D", "6D", "7D"]]
    game.reset(options={"dealer": 2, "turnup": "KS", "hands": hands})
    play_cards(game, *TRUMPS_FIRST, "jink", "8C", "6C", "6D")  # 6C beats 8C: low in black
    assert all(game.terminations.values())
    assert game.infos["player_0"]["winner"] == -1 and game.infos["player_0"]["pool"] == 3
    rewards = [game.rewards[f"player_{i}"] for i in range(3)]
    assert rewards == pytest.approx([0, 0, 0] if reward == "equity" else [-1, -1, -1])


@pytest.mark.parametrize("reward", ["equity", "chips"])
def test_natural_spoil_rewards(reward):
    """Random 6-player hands until one spoils without a jink: equity 0, chips minus the ante."""
    game = env(num_players=6, reward=reward)
    for seed in range(50):
        game.reset(seed=seed)
        totals, infos = play_out(game, seed=seed)
        info = infos["player_0"]
        if info["winner"] == -1:
            break
    else:
        pytest.fail("no spoiled hand in 50 random 6-player hands")
    assert max(info["tricks"]) < 3 and info["pool"] == 6
    rewards = [totals[a] for a in game.possible_agents]
    assert rewards == pytest.approx([0.0] * 6 if reward == "equity" else [-1.0] * 6)


@pytest.mark.parametrize("reward", ["equity", "chips"])
@pytest.mark.parametrize("num_players", [2, 4, 7])
def test_game_mode_rewards_sum_to_the_final_chip_change(reward, num_players):
    game = env(num_players=num_players, mode="game", reward=reward, num_hands=3, max_hands=6)
    game.reset(seed=num_players)
    totals, infos = play_out(game, seed=num_players)
    info = infos["player_0"]
    change = [chips - 20 for chips in info["chips"]]
    pool_share = info["pool"] / num_players if reward == "equity" else 0.0
    assert [totals[a] for a in game.possible_agents] == pytest.approx([c + pool_share for c in change])
    assert sum(info["chips"]) + info["pool"] == 20 * num_players


def test_a_game_ends_naming_the_seats_with_most_chips_as_its_winners():
    """RULES.md: most chips wins the game (every seat of a tie); a hand alone names no game winner."""
    seen_tie = False
    for seed in range(40):
        game = env(num_players=3, mode="game", num_hands=2, max_hands=4, ante=1)
        game.reset(seed=seed)
        _, infos = play_out(game, seed=seed)
        chips = infos["player_0"]["chips"]
        winners = [seat for seat, held in enumerate(chips) if held == max(chips)]
        assert all(info["game_winners"] == winners for info in infos.values())
        seen_tie |= len(winners) > 1
    assert seen_tie  # ties happen in short games, and name every tied seat
    hand = env(num_players=3)
    hand.reset(seed=0)
    _, infos = play_out(hand)
    assert "game_winners" not in infos["player_0"] and "winner" in infos["player_0"]


def test_when_the_hand_ends_every_agent_steps_out_in_seat_order_seeing_its_own_reward():
    """Once the episode is over each agent is selected in turn, player_0 first, and ``last()`` gives it the
    termination and its own reward, until ``step(None)`` has removed them all."""
    game = env(num_players=3)
    game.reset(options=fixed_deal())
    play_cards(game, *TRUMPS_FIRST, "claim")  # player_0 takes a pool of 3
    seen = []
    for agent in game.agent_iter():
        _, reward, termination, truncation, _ = game.last()
        seen.append((agent, reward, termination, truncation))
        game.step(None)
    assert seen == [("player_0", pytest.approx(2.0), True, False), ("player_1", pytest.approx(-1.0), True, False),
                    ("player_2", pytest.approx(-1.0), True, False)]
    assert game.agents == []


def test_hand_mode_episode_is_one_hand_and_game_mode_several():
    hand = env(num_players=4)
    hand.reset(seed=2)
    play_out(hand)
    assert hand.unwrapped.core.hand_index[0] == 1
    game = env(num_players=4, mode="game", num_hands=3, max_hands=5)
    game.reset(seed=2)
    play_out(game)
    assert 3 <= game.unwrapped.core.hand_index[0] <= 5


def test_a_seat_may_start_in_debt_down_to_the_engines_least_chip_count():
    """``chips`` may be negative (a seat in debt, which game mode reaches): the engine's counters go down to
    CHIPS_MIN, and the seat pays its ante as any other."""
    debt, credit = env(num_players=3), env(num_players=3)
    debt.reset(options={"chips": [-5, 20, 20]})
    credit.reset(options={"chips": [5, 20, 20]})
    assert (debt.unwrapped.core.chips[0] - credit.unwrapped.core.chips[0]).tolist() == [-10, 0, 0]


def test_the_pool_a_team_cannot_share_evenly_stays_in_the_pool_and_the_infos_say_so():
    """Partnerships at 4: a pool of 5 carried over and 4 spoil antes is 9; player_0 takes three tricks for
    the team of seats 0 and 2, who take 4 chips each, and the odd chip stays in the pool."""
    game = env(num_players=4, partnerships=True)
    hands = [["5S", "JS", "AH", "KC", "KD"], ["2C", "3C", "4C", "6C", "7C"], ["2D", "3D", "4D", "6D", "7D"],
             ["8C", "9C", "QC", "8D", "9D"]]
    game.reset(options={"dealer": 3, "turnup": "KS", "pool": 5, "hands": hands})
    play_cards(game, "5S", "2C", "2D", "8C", "JS", "3C", "3D", "9C", "AH", "4C", "4D", "QC", "claim")
    info = game.infos["player_3"]
    assert info["winner"] == 0 and info["tricks"] == [3, 0, 0, 0]
    assert info["chips"] == [19 + 4, 19, 19 + 4, 19] and info["pool"] == 1
