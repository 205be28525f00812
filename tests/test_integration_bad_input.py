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
