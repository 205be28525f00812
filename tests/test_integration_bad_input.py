"""Bad seeds, reset options and observations above the engine: one clear ``ValueError``, nothing changed.

The engine's own table is tests/test_bad_input.py. These are the layers above it, where a seed or
an option passes through to NumPy or Gymnasium, whose own errors name neither the argument nor what
is allowed (and, for SB3's ``seed()``, used to fail only at the next reset, after reseeding half the
state). NumPy integers are welcome wherever Python ints are.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import spoilfive_env  # noqa: F401 (registers the ids)
from agents import load_agent
from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.observation import OBS_DIM
from spoilfive_env.registration import GYMNASIUM_ID

BAD_SEEDS = [-1, 1.5, True, "1", [1, 2]]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_an_agent_refuses_a_bad_seed_and_keeps_its_stream(seed):
    with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got"):
        load_agent("random", seed=seed)
    agent = load_agent("random", seed=5)
    before = agent.rng.bit_generator.state
    with pytest.raises(ValueError, match="seed must be a whole number"):
        agent.reseed(seed)
    assert agent.seed == 5 and agent.rng.bit_generator.state == before


def env_state(env) -> tuple:
    raw = env.unwrapped
    core = raw.batch.core
    return (core.rng.bit_generator.state, raw.np_random.bit_generator.state, core.holder.tobytes(),
            [agent.rng.bit_generator.state for agent in raw.batch.lineup.agents if hasattr(agent, "rng")])


def make_both():
    single = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents="random")
    vector = gymnasium.make_vec(GYMNASIUM_ID, num_envs=3, vectorization_mode="vector_entry_point",
                                num_players=3, opponents="random")
    return single, vector


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_the_gymnasium_envs_refuse_a_bad_seed_in_their_own_words_and_change_nothing(seed):
    for env in make_both():
        env.reset(seed=0)
        before = env_state(env)
        with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got"):
            env.reset(seed=seed)
        assert env_state(env) == before


@pytest.mark.parametrize("options, says", [
    (5, "options=5 is not allowed: give a dict"), ("abc", "options='abc' is not allowed"),
    ({1: 2, "a": 3}, "unknown reset options 'a', 1"), ({"dealer": 0}, "unknown reset options 'dealer'"),
], ids=repr)
def test_the_gymnasium_envs_refuse_reset_options_they_do_not_take(options, says):
    for env in make_both():
        env.reset(seed=0)
        before = env_state(env)
        with pytest.raises(ValueError, match=says):
            env.reset(options=options)
        assert env_state(env) == before
        env.reset(options={})  # an empty dict is no option at all


def test_numpy_integer_seeds_reproduce_what_python_ints_do():
    for env in make_both():
        first = env.reset(seed=np.int64(7))[0]
        again = env.reset(seed=np.uint32(7))[0]
        plain = env.reset(seed=7)[0]
        np.testing.assert_array_equal(first, plain)
        np.testing.assert_array_equal(again, plain)
    assert load_agent("random", seed=np.int64(3)).rng.random() == load_agent("random", seed=3).rng.random()


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_the_sb3_vec_env_checks_a_seed_when_it_is_given(seed):
    pytest.importorskip("stable_baselines3")
    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got"):
        SpoilFiveSB3VecEnv(2, num_players=3, opponents="random", seed=seed)
    venv = SpoilFiveSB3VecEnv(2, num_players=3, opponents="random", seed=0)
    before = venv.core.rng.bit_generator.state
    with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got"):
        venv.seed(seed)  # refused now, not at the next reset after reseeding half the state
    assert venv.core.rng.bit_generator.state == before
    venv.reset()  # the seed given at construction still stands
    assert venv.core.rng.bit_generator.state != before


@pytest.mark.parametrize("observation, says", [
    ({"observation": np.zeros(OBS_DIM)}, "a dict with 'observation' and 'action_mask'"),
    (np.zeros(OBS_DIM), "a dict with 'observation' and 'action_mask'"),
    ({"observation": np.zeros(5), "action_mask": np.ones(NUM_ACTIONS, np.int8)}, f"{OBS_DIM} numbers"),
    ({"observation": np.zeros(OBS_DIM), "action_mask": np.ones(9, np.int8)}, f"a mask of {NUM_ACTIONS}"),
    ({"observation": np.zeros(OBS_DIM), "action_mask": np.zeros(NUM_ACTIONS, np.int8)}, "at least one legal"),
], ids=["no mask", "an array", "short observation", "short mask", "nothing legal"])
def test_act_refuses_what_is_not_one_aec_observation(observation, says):
    agent = load_agent("random", seed=1)
    before = agent.rng.bit_generator.state
    with pytest.raises(ValueError, match=says):
        agent.act(observation)
    assert agent.rng.bit_generator.state == before


@pytest.mark.parametrize("name", ["random", "greedy", "spoiler", "pimc:samples=2", "ppo"])
def test_act_batch_refuses_bad_shapes_and_rows_with_nothing_legal_before_any_draw(name):
    agent = load_agent(name, seed=1)
    before = agent.rng.bit_generator.state
    legal = np.zeros((2, NUM_ACTIONS), bool)
    legal[:, 0] = True
    cases = [(np.zeros(OBS_DIM), legal[0], "act_batch needs observations"),
             (np.zeros((2, OBS_DIM)), legal[:1], "act_batch needs observations"),
             (np.zeros((2, OBS_DIM)), np.zeros((2, NUM_ACTIONS), bool), "rows \\[0, 1\\] have none")]
    for observations, masks, says in cases:
        with pytest.raises(ValueError, match=says):
            agent.act_batch(observations, masks)
    assert agent.rng.bit_generator.state == before  # never an action where none is legal


# ------------------------------------------------ calls before reset, and actions of odd types


def test_every_env_refuses_to_step_or_render_before_its_first_reset_and_draws_nothing():
    single = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents="random", render_mode="ansi")
    vector = gymnasium.make_vec(GYMNASIUM_ID, num_envs=2, vectorization_mode="vector_entry_point",
                                num_players=3, opponents="random", render_mode="ansi")
    for env, action in ((single, 0), (vector, np.zeros(2, np.int64))):
        before = env_state(env)
        with pytest.raises(ValueError, match=r"step\(\) before reset\(\): call reset\(\)"):
            env.step(action)
        with pytest.raises(ValueError, match=r"render\(\) before reset\(\): call reset\(\)"):
            env.render()
        assert env_state(env) == before
        env.reset(seed=0)  # and it can start after the refusals


def test_the_sb3_vec_env_refuses_a_step_before_reset_and_deals_nothing():
    pytest.importorskip("stable_baselines3")
    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    venv = SpoilFiveSB3VecEnv(2, num_players=3, opponents="random", seed=0)
    before = venv.core.rng.bit_generator.state
    with pytest.raises(ValueError, match=r"step\(\) before reset\(\): call reset\(\)"):
        venv.step(np.zeros(2, np.int64))
    assert venv.core.rng.bit_generator.state == before  # it used to deal, and say every game was done
    venv.reset()
    venv.step(venv.action_masks().argmax(1))


@pytest.mark.parametrize("make", ["single", "vector"])
def test_a_huge_unsigned_action_is_named_as_given_not_wrapped_to_minus_one(make):
    huge = np.uint64(2**64 - 1)
    if make == "single":
        env = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents="random")
        env.reset(seed=0)
        action = huge
    else:
        env = gymnasium.make_vec(GYMNASIUM_ID, num_envs=2, vectorization_mode="vector_entry_point",
                                 num_players=3, opponents="random")
        env.reset(seed=0)
        action = np.array([huge, huge])
    before = env_state(env)
    with pytest.raises(ValueError, match="action 18446744073709551615 is out of range: action ids are 0-106"):
        env.step(action)
    assert env_state(env) == before


def test_the_aec_env_takes_any_whole_number_and_names_what_is_not_one():
    torch = pytest.importorskip("torch")
    from spoilfive_env import env

    for kind in (np.int8, np.array, torch.tensor):
        game = env(num_players=3)
        game.reset(seed=4)
        legal = int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0])
        acting = game.agent_selection
        game.step(kind(legal))  # a 0-d array or an integer tensor is a whole number too
        assert game.agent_selection != acting
    game = env(num_players=3)
    game.reset(seed=4)
    for odd in (3.0, np.array(2.0), torch.tensor(3.0), "3", np.array([3])):
        with pytest.raises(ValueError, match=r"\(an action is a whole number 0-106, an action id\); legal actions: "):
            game.step(odd)
    with pytest.raises(ValueError, match="agent 'player_9' is not at this table"):
        game.action_space("player_9")
    with pytest.raises(ValueError, match=r"agent \['player_0'\] is not at this table"):
        game.unwrapped.observe(["player_0"])


def rllib_env(**config):
    pytest.importorskip("ray")
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    return SpoilFiveMultiAgentEnv({"num_games": 2, "num_players": 3, "seed": 0, **config})


def rllib_state(env) -> tuple:
    return env.core.rng.bit_generator.state, env.core.holder.tobytes(), env._forfeited.tobytes()


def test_the_rllib_env_refuses_a_step_before_reset_bad_seeds_and_options():
    env = rllib_env()
    with pytest.raises(ValueError, match=r"step\(\) before reset\(\): call reset\(\)"):
        env.step({})
    env.reset(seed=0)
    before = rllib_state(env)
    for seed in BAD_SEEDS:
        with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got"):
            env.reset(seed=seed)
    with pytest.raises(ValueError, match="unknown reset options 'x'"):
        env.reset(options={"x": 1})
    assert rllib_state(env) == before
    for seed in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got"):
            rllib_env(seed=seed)
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    with pytest.raises(ValueError, match="config must be a dict of env options"):
        SpoilFiveMultiAgentEnv("abc")


@pytest.mark.parametrize("illegal_action", ["raise", "penalty"])
def test_the_rllib_env_refuses_actions_that_are_not_whole_numbers_or_agents_that_are_not_ids(illegal_action):
    env = rllib_env(illegal_action=illegal_action)
    observations, _ = env.reset(seed=0)
    aid = next(iter(observations))
    legal = int(np.flatnonzero(observations[aid]["action_mask"])[0])
    before = rllib_state(env)
    for odd in (1.9, True, "1", None):
        with pytest.raises(ValueError, match=f"{aid}: an action is a whole number 0-106"):
            env.step({aid: odd})
    for key in ("g9_p9", 0, None):
        with pytest.raises(ValueError, match=r"unknown agent id .*: ids are 'g<game>_p<seat>', games 0-1, seats 0-2"):
            env.step({key: legal})
    with pytest.raises(ValueError, match=r"step\(\) takes a dict \{agent id: action\}, got list"):
        env.step([legal])
    assert rllib_state(env) == before
    huge = {aid: np.uint64(2**64 - 1)}
    if illegal_action == "raise":
        with pytest.raises(ValueError, match=f"illegal action 18446744073709551615 for {aid}: action ids are 0-106"):
            env.step(huge)
        assert rllib_state(env) == before
        env.step({aid: np.int64(legal)})  # the refusals left the game playable
    else:  # out of the table is an illegal action: that game's hand ends with the penalty
        _, rewards, terminated, _, _ = env.step(huge)
        assert rewards[aid] < 0 and terminated[aid] and env.illegal_actions == 1


def test_a_broken_opponent_object_is_named_when_it_breaks_the_act_batch_contract():
    from agents.base import Agent

    class Careless(Agent):
        name = "careless"

        def __init__(self, answer):
            super().__init__(seed=0)
            self.answer = answer

        def act_batch(self, observations, masks):
            return self.answer(masks)

    for answer, says in ((lambda m: m.argmax(1) + 0.7, "returned float64 actions"),
                         (lambda m: np.zeros(len(m) + 1, np.int64), r"of shape \(2,\) for 1 games"),
                         (lambda m: (~m.astype(bool)).argmax(1), "which its mask does not allow")):
        env = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents=Careless(answer), seat=0)
        with pytest.raises(ValueError, match=rf"opponent .*careless.* {says}"):
            env.reset(seed=0)  # (the opponents move first unless the learner leads)
            env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))


def test_the_sb3_self_play_callback_checks_its_seed_and_greedy_when_made():
    pytest.importorskip("stable_baselines3")
    from spoilfive_integrations.sb3 import SelfPlayCallback

    for seed in (-1, 1.5, None, "3"):
        with pytest.raises(ValueError, match="seed"):
            SelfPlayCallback(5, seed=seed)
    with pytest.raises(ValueError, match="greedy='yes' is not allowed: give True or False"):
        SelfPlayCallback(5, greedy="yes")


def test_rllib_module_options_are_checked_where_they_are_given():
    pytest.importorskip("ray")
    from spoilfive_integrations.rllib import masked_module_spec

    for hidden in ([], [-1], [1.5], "256", [0]):
        with pytest.raises(ValueError, match="hidden=.* is not allowed: give a list of one or more positive"):
            masked_module_spec(hidden=hidden)
    with pytest.raises(ValueError, match="encoding='x' is not allowed: choose one of"):
        masked_module_spec(encoding="x")


def test_odd_option_types_and_a_num_envs_for_one_seat_are_refused_in_words():
    with pytest.raises(ValueError, match=r"illegal_action=array\(\['raise', 'x'\].* is not allowed"):
        gymnasium.make(GYMNASIUM_ID, illegal_action=np.array(["raise", "x"]))
    with pytest.raises(ValueError, match=r"render_mode=array\(\['ansi'\].* is not allowed"):
        gymnasium.make(GYMNASIUM_ID, render_mode=np.array(["ansi"]))
    with pytest.raises(ValueError, match=r"num_envs is not an option of the one-seat env: .*gymnasium\.make_vec"):
        gymnasium.make(GYMNASIUM_ID, num_envs=2)
