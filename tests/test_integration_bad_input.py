"""Bad seeds, reset options and observations above the engine: one clear ``ValueError``, nothing changed.

The engine's own table is tests/test_bad_input.py. These are the layers above it, where a seed or
an option passes through to NumPy or Gymnasium, whose own errors name neither the argument nor what
is allowed (and, for SB3's ``seed()``, used to fail only at the next reset, after reseeding half the
state). NumPy integers are welcome wherever Python ints are.
"""

from __future__ import annotations

import re

import gymnasium
import numpy as np
import pytest

import spoilfive_env  # noqa: F401 (registers the ids)
from agents import load_agent
from agents.base import Agent
from spoilfive_env.actions import NUM_ACTIONS, action_str
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


def test_the_vector_env_says_why_it_takes_one_seed_not_a_list():
    vector = make_both()[1]
    vector.reset(seed=0)
    before = env_state(vector)
    for seeds in ([1, 2, 3], (1, 2, 3), np.arange(3)):
        with pytest.raises(ValueError, match="a list of seeds, one per game, is not taken, since the 3 games step "
                                             "in one core batch from one generator; one int seeds them all"):
            vector.reset(seed=seeds)
        assert env_state(vector) == before


@pytest.mark.parametrize("options, says", [
    (5, "options=5 is not allowed: give a dict"), ("abc", "options='abc' is not allowed"),
    ({1: 2, "a": 3}, "unknown reset options 'a', 1"), ({"dealer": 0}, "unknown reset options 'dealer'"),
], ids=repr)
def test_the_gymnasium_envs_refuse_reset_options_they_do_not_take(options, says):
    # each says what it does take: the vector env restarts the games a reset_mask marks
    takes = ("SpoilFiveGymEnv takes none", "SpoilFiveVectorEnv takes only 'reset_mask'")
    for env, allowed in zip(make_both(), takes):
        env.reset(seed=0)
        before = env_state(env)
        with pytest.raises(ValueError, match=says) as refused:
            env.reset(options=options)
        assert allowed in str(refused.value)
        assert env_state(env) == before
        env.reset(options={})  # an empty dict is no option at all


def test_the_vector_env_refuses_an_unknown_option_beside_its_reset_mask():
    vector = make_both()[1]
    vector.reset(seed=0)
    before = env_state(vector)
    with pytest.raises(ValueError, match="unknown reset options 'dealer': SpoilFiveVectorEnv takes only 'reset_mask'"):
        vector.reset(options={"reset_mask": np.array([True, False, True]), "dealer": 0})
    assert env_state(vector) == before


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
    fresh = SpoilFiveSB3VecEnv(2, num_players=3, opponents="random", seed=0)
    np.testing.assert_array_equal(venv.reset(), fresh.reset())  # the seed given at construction still stands
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
    # One element in a list, an array or a tensor is not 0-d (torch alone would take it as an index).
    for odd in (3.0, np.array(2.0), torch.tensor(3.0), "3", np.array([3]), torch.tensor([3]), torch.tensor([[3]])):
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


def game_observed(aid: str, observations: dict) -> bool:
    """Whether a seat of the game of ``aid`` (``"g<game>_p<seat>"``) is asked to act in ``observations``."""
    game = aid.split("_")[0]
    return any(other.split("_")[0] == game for other in observations)


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
        observations, rewards, terminated, _, _ = env.step(huge)
        assert rewards[aid] < 0 and env.illegal_actions == 1
        assert not game_observed(aid, observations) and terminated == {"__all__": False}  # it waits for the other

@pytest.mark.parametrize("illegal_action", ["raise", "penalty"])
def test_the_rllib_env_takes_the_first_id_past_the_action_table_as_out_of_it(illegal_action):
    """107, one past the last action id, is out of the table as any larger number is: refused under "raise",
    an illegal action (the hand forfeited) under "penalty", even for a seat to which action 0 is legal (an id out
    of the table is no stand-in for a real action)."""
    env = rllib_env(illegal_action=illegal_action, num_games=64)
    observations, _ = env.reset(seed=0)
    aid = next(aid for aid, view in observations.items() if view["action_mask"][0])
    for count, past in enumerate((107, 2**40), start=1):
        if illegal_action == "raise":
            with pytest.raises(ValueError, match=f"illegal action {past} for {aid}: action ids are 0-106"):
                env.step({aid: past})
        else:
            observations, rewards, _, _, _ = env.step({aid: past})
            assert rewards[aid] < 0 and not game_observed(aid, observations) and env.illegal_actions == count
            env.reset(seed=0)  # the same deals again, for the next id


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
                         (lambda m: np.zeros(len(m) + 1, np.int64),
                          r"of shape \(2,\) for 1 row: act_batch must return one legal integer action per row"),
                         (lambda m: (~m.astype(bool)).argmax(1), "which its mask does not allow")):
        env = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents=Careless(answer), seat=0)
        with pytest.raises(ValueError, match=rf"opponent .*careless.* {says}"):
            env.reset(seed=0)  # (the opponents move first unless the learner leads)
            env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))


def test_the_sb3_self_play_callback_checks_its_seed_and_greedy_when_made():
    pytest.importorskip("stable_baselines3")
    from spoilfive_integrations.sb3 import SelfPlayCallback

    for seed in (-1, 1.5, None, "3"):  # None too: each snapshot's seed counts on from this one
        with pytest.raises(ValueError, match="give a whole number 0 or more") as refused:
            SelfPlayCallback(5, seed=seed)
        said = str(refused.value)
        assert said.startswith(f"seed={seed!r} is not allowed") and "None" not in said.split("allowed")[1]
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



def test_every_env_refuses_num_players_none_where_the_rules_alone_read_it_as_the_default():
    """``make_rules(num_players=None)`` is the default table; an env given None would quietly seat 4."""
    makers = [
        lambda: spoilfive_env.env(num_players=None),
        lambda: gymnasium.make(GYMNASIUM_ID, num_players=None),
        lambda: gymnasium.make_vec(GYMNASIUM_ID, num_envs=2, vectorization_mode="vector_entry_point",
                                   num_players=None),
    ]
    try:
        from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv
        makers.append(lambda: SpoilFiveSB3VecEnv(2, num_players=None))
    except ImportError:  # (stable-baselines3 is an extra)
        pass
    try:
        from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv
        makers.append(lambda: SpoilFiveMultiAgentEnv({"num_games": 2, "num_players": None}))
    except ImportError:  # (ray[rllib] is an extra)
        pass
    for make in makers:
        with pytest.raises(ValueError, match=r"num_players=None is not allowed: it must be an integer, 2 to 10"):
            make()


# ------------------------------------------------ an opponent that fails half-way through a step


class Breakable(Agent):
    """Plays the first legal card until told to break: then a float action, or a failed reseed."""

    name = "breakable"
    broken = False

    def act_batch(self, observations, masks):
        return masks.argmax(1) + (0.5 if self.broken else 0)

    def reseed(self, seed):
        if self.broken:
            raise RuntimeError("no reseeding today")
        super().reseed(seed)


def broken_after_reset(kind: str):
    """An env of ``kind`` with a :class:`Breakable` opponent, reset (seed 0), and the opponent then broken."""
    opponent = Breakable(seed=0)
    if kind == "single":
        env = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents=["random", opponent], seat=0)
    elif kind == "vector":
        env = gymnasium.make_vec(GYMNASIUM_ID, num_envs=2, vectorization_mode="vector_entry_point",
                                 num_players=3, opponents=["random", opponent], seat=0)
    else:
        pytest.importorskip("stable_baselines3")
        from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

        env = SpoilFiveSB3VecEnv(2, num_players=3, opponents=["random", opponent], seat=0, seed=0)
    env.reset(**({} if kind == "sb3" else {"seed": 0}))
    opponent.broken = True
    return env, opponent


def first_legal(env, masks) -> object:
    """The first legal action of each game of ``masks`` ((B, 107) or (107,)), shaped as ``env.step`` takes it."""
    actions = np.atleast_2d(masks).argmax(1)
    return int(actions[0]) if isinstance(env.unwrapped, gymnasium.Env) else actions


@pytest.mark.parametrize("kind", ["single", "vector", "sb3"])
def test_an_opponent_that_fails_mid_step_leaves_the_env_refusing_steps_until_reset(kind):
    env, opponent = broken_after_reset(kind)
    with pytest.raises(ValueError, match="opponent .*breakable.* returned float64 actions"):
        for _ in range(20):  # the learner's move is made, then the opponent to his left fails
            env.step(first_legal(env, env.unwrapped.action_masks()))
    opponent.broken = False
    core = env.unwrapped.core
    assert (core.current != 0).any()  # an opponent is to act: the learner's next action would be his
    holder = core.holder.copy()
    with pytest.raises(ValueError, match=r"the last step failed in the move of opponent .*breakable.* \(ValueError: "
                                         r"opponent .* returned float64 actions.*\), leaving the games half-stepped: "
                                         r"call reset\(\) to start new episodes"):
        env.step(first_legal(env, core.legal_mask()))  # was played in the opponent's seat
    assert np.array_equal(core.holder, holder)
    env.reset()  # clears it
    env.step(first_legal(env, env.unwrapped.action_masks()))


@pytest.mark.parametrize("kind", ["single", "vector", "sb3"])
def test_a_reset_whose_opponent_cannot_reseed_changes_no_generator(kind):
    env, _ = broken_after_reset(kind)
    raw = env.unwrapped

    def generator_states():
        return (raw.core.rng.bit_generator.state, [agent.rng.bit_generator.state for agent in raw.batch.lineup.agents],
                (raw._seat_rng if kind == "sb3" else raw.np_random).bit_generator.state)

    before = generator_states()
    with pytest.raises(RuntimeError, match="no reseeding today"):
        if kind == "sb3":
            env.seed(1)
            env.reset()
        else:
            env.reset(seed=1)  # the random opponent, reseeded first, and the deals were restarted
    assert generator_states() == before


# ------------------------------------------------ the SB3 VecEnv's options, indices and step order


def sb3_env(num_envs: int = 2):
    pytest.importorskip("stable_baselines3")
    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    return SpoilFiveSB3VecEnv(num_envs, num_players=3, opponents="random", seed=0)


def test_the_sb3_vec_env_refuses_reset_options_as_the_gymnasium_envs_do():
    venv = sb3_env()
    for options, says in ((5, "options=5 is not allowed: give a dict"),
                          ({"dealer": 0}, "unknown reset options 'dealer': SpoilFiveSB3VecEnv takes none"),
                          ([{}, {"dealer": 0}], "unknown reset options 'dealer'")):
        with pytest.raises(ValueError, match=says):
            venv.set_options(options)  # was accepted, and ignored by the next reset
    for options in (None, {}, [{}, None]):
        venv.set_options(options)
    venv.reset()


def test_the_sb3_vec_env_refuses_indices_out_of_range_and_subsets_of_what_applies_to_every_game():
    venv = sb3_env()
    venv.reset()
    for call in (lambda: venv.get_attr("num_envs", indices=[9]),  # was [2]
                 lambda: venv.env_method("action_masks", indices=[5]),  # was NumPy's IndexError
                 lambda: venv.env_is_wrapped(object, indices=-1),
                 lambda: venv.get_attr("num_envs", indices=[0.5])):
        with pytest.raises(ValueError, match=r"indices=.* is not allowed: give game indices 0-1, or None for every"):
            call()
    lineup = venv.batch.lineup
    with pytest.raises(ValueError, match=r"indices=\[0\] is not allowed for env_method\('set_opponents'\): it "
                                         r"applies to every game of the batch at once, so give indices=None"):
        venv.env_method("set_opponents", "greedy", indices=[0])  # changed every game's opponents
    with pytest.raises(ValueError, match=r"indices=1 is not allowed for set_attr\('render_mode'\)"):
        venv.set_attr("render_mode", "ansi", indices=1)
    assert venv.batch.lineup is lineup and venv.render_mode is None
    assert venv.get_attr("num_envs", indices=np.int64(1)) == [2]
    assert len(venv.env_method("action_masks", indices=[1])) == 1
    venv.env_method("set_opponents", "greedy", indices=[1, 0])  # every game, in any order
    assert venv.batch.lineup is not lineup


def test_the_sb3_vec_env_refuses_step_wait_without_step_async_and_deals_nothing():
    venv = sb3_env()
    before = venv.core.rng.bit_generator.state
    with pytest.raises(ValueError, match=r"step\(\) before reset\(\): call reset\(\)"):
        venv.step_wait()  # dealt hands and returned rewards
    assert venv.core.rng.bit_generator.state == before
    venv.reset()
    before = (venv.core.rng.bit_generator.state, venv.core.holder.tobytes())
    with pytest.raises(ValueError, match=r"step_wait\(\) without step_async\(\): give the actions to "
                                         r"step_async\(actions\) first, or call step\(actions\)"):
        venv.step_wait()
    venv.step_async(venv.action_masks().argmax(1))
    venv.step_wait()
    with pytest.raises(ValueError, match=r"step_wait\(\) without step_async\(\)"):
        venv.step_wait()  # the same actions are not played twice
    assert (venv.core.rng.bit_generator.state, venv.core.holder.tobytes()) != before


# ------------------------------------------------ module and policy-agent arguments


def test_rllib_module_options_are_bounded_as_a_checkpoint_is():
    pytest.importorskip("ray")
    from agents.policy import MAX_HIDDEN_LAYERS, MAX_HIDDEN_WIDTH
    from spoilfive_integrations.rllib import masked_module_spec

    for hidden in ((2**40,), (MAX_HIDDEN_WIDTH + 1,), [8] * (MAX_HIDDEN_LAYERS + 1)):
        with pytest.raises(ValueError, match=rf"hidden=.* is not allowed: .*at most {MAX_HIDDEN_LAYERS} layers"):
            masked_module_spec(hidden=hidden)  # was accepted, to fail on the worker in torch
    with pytest.raises(ValueError, match="is not allowed here: the actor and the critic with Adam's state need"):
        masked_module_spec(hidden=[MAX_HIDDEN_WIDTH] * MAX_HIDDEN_LAYERS)
    with pytest.raises(ValueError, match=r"encoding=array\('raw'.* is not allowed: choose one of canonical, raw"):
        masked_module_spec(encoding=np.array("raw"))


def test_rllib_policy_agent_refuses_what_is_not_a_module_a_bool_or_a_name():
    pytest.importorskip("ray")
    from types import SimpleNamespace

    from agents.policy import PolicyNet
    from spoilfive_integrations.rllib import policy_agent

    module = SimpleNamespace(net=PolicyNet(hidden=(8,), critic="local"))
    with pytest.raises(ValueError, match="module must be a SpoilFiveMaskedModule .*, got NoneType"):
        policy_agent(None)  # was AttributeError
    with pytest.raises(ValueError, match="greedy='yes' is not allowed: give True .* or False"):
        policy_agent(module, greedy="yes")
    with pytest.raises(ValueError, match="name=5 is not allowed: give a non-empty string, or None for 'rllib'"):
        policy_agent(module, name=5)  # the words of every policy agent (agents.policy.checked_name)
    assert policy_agent(module, name=None).name == "rllib"
    assert policy_agent(module, greedy=np.bool_(False)).greedy is False


def test_the_sb3_policy_agent_refuses_what_is_not_a_policy_a_bool_or_a_name():
    pytest.importorskip("stable_baselines3")
    from gymnasium import spaces
    from stable_baselines3.common.policies import ActorCriticPolicy

    from spoilfive_integrations.sb3 import SB3PolicyAgent
    from spoilfive_integrations.vector import single_observation_space

    policy = ActorCriticPolicy(single_observation_space(), spaces.Discrete(NUM_ACTIONS), lambda _: 1e-3,
                               net_arch=[8])
    with pytest.raises(ValueError, match="policy must be an SB3 policy \\(model.policy\\), got NoneType"):
        SB3PolicyAgent(None)  # was AttributeError
    for greedy in ("yes", 1, None):
        with pytest.raises(ValueError, match=f"greedy={greedy!r} is not allowed: give True .* or False"):
            SB3PolicyAgent(policy, greedy=greedy)  # was taken as its truth value
    with pytest.raises(ValueError, match="name=5 is not allowed: give a non-empty string"):
        SB3PolicyAgent(policy, name=5)
    assert SB3PolicyAgent(policy, greedy=np.bool_(True)).greedy is True


# ------------------------------------------------ the memory check of the envs


@pytest.mark.parametrize("kind, name", [("vector", "num_envs"), ("sb3", "num_envs"), ("rllib", "num_games")])
def test_the_envs_budget_the_memory_they_use_and_name_their_own_size_argument(kind, name, monkeypatch):
    from spoilfive_env import core as core_module

    games = 1000
    core_per_game = core_module._STATE_BYTES_PER_GAME + core_module._STATE_BYTES_PER_SEAT * 4 + 4 * OBS_DIM
    # Room for the core's state and one observation, not for what the env really uses.
    monkeypatch.setattr(core_module, "physical_memory", lambda: 2 * games * core_per_game)
    if kind == "vector":
        from spoilfive_integrations.vector import SpoilFiveVectorEnv as make
    elif kind == "sb3":
        pytest.importorskip("stable_baselines3")
        from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv as make
    else:
        pytest.importorskip("ray")
        from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

        def make(num_games, **options):
            return SpoilFiveMultiAgentEnv({"num_games": num_games, **options})
    with pytest.raises(ValueError, match=rf"^{name}={games} is not allowed here: its games need about .* GiB, "
                                         r"more than this machine's .* GiB; allowed: at most \d+ games"):
        make(games, num_players=4)  # was accepted (and named batch_size= when refused)
    make(games // 5, num_players=4)


# ------------------------------------------------ keywords the envs do not take


@pytest.mark.parametrize("kwargs, says", [
    ({"opponent": "random"}, r"unknown rules option\(s\) opponent: known options are SpoilFiveGymEnv's own "
                             r"num_players, opponents, seat, illegal_action, render_mode, mode, reward and the rules "
                             r"options allow_jink, .* and preset$"),
    ({"seed": 3}, r"^seed is not an option of SpoilFiveGymEnv: the seed goes to reset\(seed=...\)$"),
], ids=["opponent", "seed"])
def test_an_unknown_env_keyword_is_named_with_the_env_s_own_keywords(kwargs, says):
    with pytest.raises(ValueError, match=says):
        gymnasium.make(GYMNASIUM_ID, **kwargs)
    with pytest.raises(ValueError, match=says.replace("SpoilFiveGymEnv's own", "SpoilFiveVectorEnv's own num_envs,")
                       .replace("render_mode,", "render_mode, autoreset_mode,")
                       .replace("of SpoilFiveGymEnv", "of SpoilFiveVectorEnv")):
        gymnasium.make_vec(GYMNASIUM_ID, num_envs=2, vectorization_mode="vector_entry_point", **kwargs)


def test_the_sb3_vec_env_names_its_own_keywords_too():
    pytest.importorskip("stable_baselines3")
    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    with pytest.raises(ValueError, match=r"unknown rules option\(s\) opponent: known options are SpoilFiveSB3VecEnv's "
                                         r"own num_envs, num_players, opponents, seat, illegal_action, seed, mode"):
        SpoilFiveSB3VecEnv(2, opponent="random")


@pytest.mark.parametrize("config, says", [
    ({"num_envs": 8}, "num_envs is not an option of SpoilFiveMultiAgentEnv: the number of games is num_games"),
    ({"opponents": "random"}, "opponents is not an option of SpoilFiveMultiAgentEnv: RLlib's policies play every"),
    ({"seat": 0}, "seat is not an option of SpoilFiveMultiAgentEnv: RLlib's policies play every seat"),
    ({"render_mode": "ansi"}, "render_mode is not an option of SpoilFiveMultiAgentEnv: this env does not render"),
    ({"games": 8}, r"unknown rules option\(s\) games: known options are SpoilFiveMultiAgentEnv's own num_games, "
                   r"num_players, mode, reward, illegal_action, seed and the rules options allow_jink"),
], ids=["num_envs", "opponents", "seat", "render_mode", "games"])
def test_the_rllib_env_names_its_config_keys_for_one_it_does_not_take(config, says):
    pytest.importorskip("ray")
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    with pytest.raises(ValueError, match=says):
        SpoilFiveMultiAgentEnv({"num_games": 2, **config})



def against_opponents(**config):
    pytest.importorskip("ray")
    from spoilfive_integrations.rllib import SpoilFiveAgainstOpponentsEnv

    return SpoilFiveAgainstOpponentsEnv({"num_games": 2, "num_players": 3, "opponents": "random", "seed": 0, **config})


def against_opponents_state(env) -> tuple:
    return (env.core.rng.bit_generator.state, env._seat_rng.bit_generator.state, env.core.holder.tobytes(),
            env.batch.over.tobytes(), env.batch.seat.tobytes(),
            [agent.rng.bit_generator.state for agent in env.batch.lineup.agents])


def test_the_rllib_opponents_env_refuses_a_step_before_reset_bad_seeds_and_options_and_changes_nothing():
    env = against_opponents()
    with pytest.raises(ValueError, match=r"step\(\) before reset\(\): call reset\(\)"):
        env.step({})
    env.reset(seed=0)
    before = against_opponents_state(env)
    for seed in BAD_SEEDS:
        with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got"):
            env.reset(seed=seed)
    with pytest.raises(ValueError, match="unknown reset options 'x': SpoilFiveAgainstOpponentsEnv takes none"):
        env.reset(options={"x": 1})
    assert against_opponents_state(env) == before
    for seed in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got"):
            against_opponents(seed=seed)
    with pytest.raises(ValueError, match="config must be a dict of env options"):
        type(env)("abc")


@pytest.mark.parametrize("illegal_action", ["raise", "penalty"])
def test_the_rllib_opponents_env_refuses_bad_actions_and_agent_ids_in_its_own_words_and_changes_nothing(illegal_action):
    env = against_opponents(illegal_action=illegal_action)
    observations, _ = env.reset(seed=0)
    legal = np.flatnonzero(observations["g0"]["action_mask"])
    forbidden = int(np.flatnonzero(observations["g0"]["action_mask"] == 0)[0])
    before = against_opponents_state(env)
    for odd in (1.9, True, "1", None):
        with pytest.raises(ValueError, match="g0: an action is a whole number 0-106"):
            env.step({"g0": odd})
    for key in ("g2", "g0_p0", 0, None):
        with pytest.raises(ValueError, match=r"unknown agent id .*: ids are 'g<game>', games 0-1"):
            env.step({key: int(legal[0])})
    with pytest.raises(ValueError, match=r"step\(\) takes a dict \{agent id: action\}, got list"):
        env.step([int(legal[0])])
    assert against_opponents_state(env) == before
    if illegal_action == "raise":
        legal_text = re.escape(", ".join(f"{action} ({action_str(action)})" for action in legal))
        with pytest.raises(ValueError, match=f"illegal action 18446744073709551615 for g0: action ids are 0-106; "
                                             f"legal actions: {legal_text}"):
            env.step({"g0": np.uint64(2**64 - 1)})
        with pytest.raises(ValueError, match=f"illegal action {forbidden} .* for the learning seat "
                                             f"{env.seats[0]} in game 0; legal actions: {legal_text}"):
            env.step({"g1": int(np.flatnonzero(observations["g1"]["action_mask"])[0]), "g0": forbidden})
        assert against_opponents_state(env) == before  # g1's legal action was not played either
        env.step({"g0": int(legal[0])})  # the refusals left the game playable
    else:  # an illegal action, or one out of the table, ends that game's hand with the penalty
        observations, rewards, terminated, _, _ = env.step({"g0": np.uint64(2**64 - 1), "g1": 107})
        assert rewards["g0"] < 0 and rewards["g1"] < 0 and terminated == {"g0": True, "g1": True, "__all__": True}
        assert env.illegal_actions == 2 and sorted(observations) == ["g0", "g1"]  # each one's last view, asking
        assert all(view["action_mask"].all() for view in observations.values())  # nothing


@pytest.mark.parametrize("config, says", [
    ({"num_envs": 8}, "num_envs is not an option of SpoilFiveAgainstOpponentsEnv: the number of games is num_games"),
    ({"render_mode": "ansi"}, "render_mode is not an option of SpoilFiveAgainstOpponentsEnv: this env does not"),
    ({"games": 8}, r"unknown rules option\(s\) games: known options are SpoilFiveAgainstOpponentsEnv's own "
                   r"num_games, num_players, opponents, seat, mode, reward, illegal_action, seed and the rules"),
    ({"num_games": 0}, "num_games=0 is not allowed: it must be a positive integer"),
    ({"opponents": "nobody"}, "unknown agent 'nobody'"),
    ({"opponents": ["random"]}, "opponents has 1 entries: a table of 3 players needs one spec for every other seat"),
    ({"seat": 3}, r"seat=3 is not allowed: give a seat 0-2, or None to draw it at each reset"),
    ({"illegal_action": "skip"}, "illegal_action='skip' is not allowed: choose 'raise' or 'penalty'"),
    ({"mode": "match"}, "mode='match' is not allowed: choose one of hand, game"),
    ({"reward": "x"}, "reward='x' is not allowed: choose one of equity, chips"),
    ({"num_players": 11}, r"num_players=11 is not allowed: Spoil Five takes 2 to 10 players"),
], ids=["num_envs", "render_mode", "games", "no_games", "opponent", "lineup", "seat", "illegal", "mode", "reward",
        "players"])
def test_the_rllib_opponents_env_names_what_its_config_takes(config, says):
    with pytest.raises(ValueError, match=says):
        against_opponents(**config)


def test_the_rllib_opponents_env_budgets_its_memory(monkeypatch):
    import spoilfive_env.core as core

    monkeypatch.setattr(core, "physical_memory", lambda: 2**30)
    with pytest.raises(ValueError, match="num_games=100000 .*more than this machine's"):
        against_opponents(num_games=100_000)


# ---------------------------------------------------------------------- train.py's self-play rollout
ROLLOUT_SETTINGS = dict(seed=0, min_players=3, max_players=4, num_games=8, hands_per_game=1, current_seats=0.5,
                        hidden="16", critic="local", encoding="canonical", opponent="")
LEAGUE = [0.5, 0.2, 0.2, 0.05, 0.05, 0.0]


@pytest.mark.parametrize("settings, league, options, says", [
    ({}, [0.5, 0.25, 0.25], {}, r"league_weights=\[0.5, 0.25, 0.25\] is not allowed: give 6 probabilities, one per "
                                r"table kind \(self, snapshot, spoiler, greedy, random, opponent\), each 0 or more, "
                                "summing to 1"),
    ({}, [1, 1, 0, 0, 0, 0], {}, "summing to 1"),
    ({}, [1.5, -0.5, 0, 0, 0, 0], {}, "each 0 or more"),
    ({}, [0.5, 0.2, 0.2, 0, 0, 0.1], {}, "the league draws opponent tables but no opponent is named"),
    ({"opponent": "nope"}, LEAGUE, {}, "settings\\['opponent'\\]: unknown agent 'nope'"),
    ({"opponent": "oracle"}, LEAGUE, {}, "settings\\['opponent'\\]='oracle': it cheats"),
    ({}, LEAGUE, {"worker": 5, "workers": 2}, "worker=5 is not allowed: give one of the 2 worker\\(s\\), 0 to 1"),
    ({}, LEAGUE, {"workers": 0}, "workers=0 is not allowed: give a whole number of at least 1"),
    ({}, LEAGUE, {"worker": 4, "workers": 5}, "worker 4 of workers=5 would hold no games: settings\\['num_games'\\]=8 "
                                              "gives 4 game\\(s\\) per table size, at least one per worker"),
    ({"min_players": 5, "max_players": 3}, LEAGUE, {}, "settings\\['min_players'\\]=5 is above "
                                                      "settings\\['max_players'\\]=3"),
    ({"max_players": 11}, LEAGUE, {}, "settings\\['max_players'\\]=11 is not allowed: give a table size, a whole "
                                      "number from 2 to 10"),
    ({"num_games": 0}, LEAGUE, {}, "settings\\['num_games'\\]=0 is not allowed: give a whole number of at least 2, "
                                   "one game per table size 3-4"),
    ({"hands_per_game": 1.0}, LEAGUE, {}, "settings\\['hands_per_game'\\]=1.0 is not allowed"),
    ({"hidden": "x"}, LEAGUE, {}, "settings\\['hidden'\\]='x' is not allowed: give comma-separated layer widths"),
    ({"critic": "x"}, LEAGUE, {}, "settings\\['critic'\\]='x' is not allowed: choose one of omniscient, local"),
    ({"seed": -1}, LEAGUE, {}, "settings\\['seed'\\]=-1 is not allowed: give a whole number 0 or more"),
    ({"current_seats": 2.0}, LEAGUE, {}, "settings\\['current_seats'\\]=2.0 is not allowed: give a chance, a number "
                                         "from 0 to 1"),
    ({"current_seats": True}, LEAGUE, {}, "settings\\['current_seats'\\]=True is not allowed"),
    ({}, LEAGUE, {"device": "foo"}, "device 'foo' is not a device: use cpu, cuda, cuda:N or mps"),
    ({}, LEAGUE, {"bf16": "false"}, "bf16='false' is not allowed: give True or False"),
    ({}, LEAGUE, {"net": "net"}, "net='net' is not allowed: give a PolicyNet"),
], ids=lambda value: repr(value)[:40])
def test_the_self_play_rollout_refuses_bad_arguments_before_any_generator_draws(settings, league, options, says):
    torch = pytest.importorskip("torch")
    from spoilfive_integrations.selfplay import SelfPlayRollout

    torch_state, numpy_state = torch.get_rng_state(), np.random.get_state()
    with pytest.raises(ValueError, match=says):
        SelfPlayRollout({**ROLLOUT_SETTINGS, **settings}, league, **options)
    assert torch.equal(torch.get_rng_state(), torch_state)  # no network was built
    assert all(np.array_equal(a, b) for a, b in zip(np.random.get_state(), numpy_state))


def test_the_self_play_rollout_names_missing_settings_a_net_of_another_shape_and_a_bad_iteration():
    pytest.importorskip("torch")
    from spoilfive_integrations.selfplay import SelfPlayRollout, policy_net

    with pytest.raises(ValueError, match="settings lacks 'min_players', .*'encoding': a rollout reads seed, "):
        SelfPlayRollout({"seed": 0}, LEAGUE)
    wider = policy_net({**ROLLOUT_SETTINGS, "hidden": "32"})
    with pytest.raises(ValueError, match=r"net is not the network the settings describe: it has hidden=\(32,\)"):
        SelfPlayRollout(ROLLOUT_SETTINGS, LEAGUE, net=wider)
    rollout = SelfPlayRollout(ROLLOUT_SETTINGS, LEAGUE)
    with pytest.raises(ValueError, match="iteration=-1 is not allowed: give a whole number 0 or more"):
        rollout.collect(-1)


# ---------------------------------------------------------------------- Tianshou's seat trajectories
def test_tianshou_seat_trajectories_name_what_they_take():
    pytest.importorskip("tianshou")
    from tianshou.env import PettingZooEnv

    from spoilfive_integrations.tianshou import SeatTrajectories

    env = PettingZooEnv(spoilfive_env.env(num_players=3))
    for algorithms, wrapped, says in (
            ([], env, r"algorithms \(0 of them\) is not allowed: give a list of 3 Tianshou on-policy algorithms, one "
                      "per seat of env's 3-player table"),
            ([None] * 3, env, r"algorithms\[0\] \(NoneType\) is not allowed: give a Tianshou on-policy algorithm"),
            ([None] * 3, None, r"env \(NoneType\) is not allowed: give the tianshou.env.PettingZooEnv"),
            ([None] * 3, spoilfive_env.env(num_players=3), r"env \(OrderEnforcing\) is not allowed: .*which wraps the "
                                                           r"AEC env: PettingZooEnv\(spoilfive_env.env")):
        with pytest.raises(ValueError, match=says):
            SeatTrajectories(algorithms=algorithms, env=wrapped)


# ---------------------------------------------------------------------- Tianshou's vector env
def tianshou_env(num_envs: int = 3, **options):
    pytest.importorskip("tianshou")
    from spoilfive_integrations.tianshou import SpoilFiveTianshouVectorEnv

    return SpoilFiveTianshouVectorEnv(num_envs, **{"num_players": 3, "opponents": "random", "seed": 0, **options})


def tianshou_state(envs) -> tuple:
    core = envs.core
    return (core.rng.bit_generator.state, envs._seat_rng.bit_generator.state, envs._next_seed, core.holder.tobytes(),
            core.current.tobytes(), envs.batch.over.tobytes(), envs.batch.lineup,
            [agent.rng.bit_generator.state for agent in envs.batch.lineup.agents if hasattr(agent, "rng")])


def illegal_in_game_0(envs) -> np.ndarray:
    actions = envs.core.legal_mask().argmax(1)
    actions[0] = np.flatnonzero(~envs.core.legal_mask()[0].astype(bool))[0]
    return actions


@pytest.mark.parametrize("call, says", [
    (lambda e: e.step(np.zeros(2, np.int64)), r"actions must be integers of shape \(3,\), got shape \(2,\)"),
    (lambda e: e.step(np.full(3, 0.5)), r"actions must be integers of shape \(3,\), got shape \(3,\) dtype float64"),
    (lambda e: e.step(None), "action=None is not allowed: this vector env is synchronous, so give one action per game"),
    (lambda e: e.step(illegal_in_game_0(e)), r"illegal action \d+ \(.*\) for the learning seat \d in game 0; legal "
                                             r"actions: \d+ \("),
    (lambda e: e.step(np.zeros(1, np.int64), id=[3]), r"^id=\[3\] is not allowed: give game indices 0-2, each at most "
                                                      r"once, or None for every game$"),
    (lambda e: e.step(np.zeros(2, np.int64), id=[1, 1]), r"^id=\[1, 1\] is not allowed: give game indices 0-2"),
    (lambda e: e.step(np.zeros(1, np.int64), id=0.5), r"^id=0.5 is not allowed: give game indices 0-2"),
    (lambda e: e.reset(env_id=[-1]), r"^env_id=\[-1\] is not allowed: give game indices 0-2"),
    (lambda e: e.reset(env_id=[0], seed=3), r"^seed=3 with env_id=\[0\] is not allowed: the games draw from one "
                                            r"generator, so a seed restarts every game; give env_id=None \(a "
                                            r"Collector passes its gym_reset_kwargs to each game's reset as it ends: "
                                            r"seed a collection with envs.seed\(s\) and "
                                            r"collect\(reset_before_collect=True\) instead\)$"),
    (lambda e: e.reset(seed=-1), "seed must be a whole number 0 or more, or None, got -1"),
    (lambda e: e.reset(seed=[1, 2, 3]), r"a list of seeds, one per game, is not taken, since the 3 games step in one "
                                        "core batch from one generator"),
    (lambda e: e.seed([1, 2, 3]), "a list of seeds, one per game, is not taken"),
    (lambda e: e.seed(2.5), "seed must be a whole number 0 or more, or None, got 2.5"),
    (lambda e: e.reset(options={"dealer": 0}), "unknown reset options 'dealer'"),
    (lambda e: e.reset(return_info=True), r"^SpoilFiveTianshouVectorEnv.reset\(\) got return_info: it takes env_id, "
                                          r"seed and options$"),
    (lambda e: e.get_env_attr("action_space", id=[7]), r"^id=\[7\] is not allowed: give game indices 0-2"),
    (lambda e: e.set_env_attr("render_mode", "ansi", id=[0]), r"^id=\[0\] is not allowed for "
                                                              r"set_env_attr\('render_mode'\): it applies to every "
                                                              r"game of the batch at once, so give id=None$"),
    (lambda e: e.set_env_attr("action_space", None), r"^set_env_attr\('action_space'\) is not allowed: "
                                                     r"action_space is the env's own; set attributes of your own "
                                                     r"\(set_opponents\(\) changes the opponents\)$"),
    (lambda e: e.set_env_attr("batch", None), r"^set_env_attr\('batch'\) is not allowed: batch is the env's own"),
    (lambda e: e.set_opponents("nobody"), "nobody"),
], ids=lambda value: "" if callable(value) else value[:40])
def test_the_tianshou_vector_env_refuses_bad_input_in_its_own_words_and_changes_nothing(call, says):
    envs = tianshou_env()
    envs.reset()
    envs.seed(4)  # a seed waiting for the next reset of every game: a refusal leaves it waiting
    before = tianshou_state(envs)
    with pytest.raises(ValueError, match=says):
        call(envs)
    assert tianshou_state(envs) == before


def test_the_tianshou_vector_env_takes_attributes_of_the_user_s_own_for_every_game():
    envs = tianshou_env()
    envs.set_env_attr("note", "mine")
    assert envs.get_env_attr("note") == ["mine"] * 3 and envs.get_env_attr("note", id=[2]) == ["mine"]


def test_the_tianshou_vector_env_refuses_to_step_an_ended_game_until_it_is_reset():
    envs = tianshou_env()
    batch, _ = envs.reset()
    for _ in range(30):
        batch, _, terminated, _, _ = envs.step(batch.mask.argmax(1))
        if terminated.any():
            break
    ended = np.flatnonzero(terminated)
    before = tianshou_state(envs)
    with pytest.raises(ValueError, match=rf"^game\(s\) {', '.join(map(str, ended))} ended: restart them with "
                                         r"reset\(env_id=\.\.\.\) before stepping them$"):
        envs.step(batch.mask.argmax(1))  # a finished game's mask is all ones: any action would have been taken
    assert tianshou_state(envs) == before
    live = np.flatnonzero(~terminated)
    envs.step(batch.mask[live].argmax(1), id=live)  # the others play on meanwhile
    restarted, _ = envs.reset(env_id=ended)
    assert not restarted.mask.all(axis=1).any()
    envs.step(envs.core.legal_mask()[ended].argmax(1), id=ended)


def test_the_tianshou_vector_env_refuses_what_comes_before_its_first_reset_or_after_close_and_deals_nothing():
    envs = tianshou_env()
    before = tianshou_state(envs)
    for call, says in ((lambda: envs.step(np.zeros(3, np.int64)), r"step\(\) before reset\(\): call reset\(\)"),
                       (lambda: envs.render(), r"render\(\) before reset\(\): call reset\(\)"),
                       (lambda: envs.reset(env_id=[1]), r"env_id=\[1\] before the first reset\(\): call reset\(\) for "
                                                        "every game first")):
        with pytest.raises(ValueError, match=says):
            call()
    assert tianshou_state(envs) == before
    envs.reset()
    tables = envs.render()  # one a game, each seen from its learning seat
    assert [f"player_{seat}'s hand" in table for seat, table in zip(envs.seats, tables)] == [True] * 3
    envs.close()
    for call in (envs.reset, lambda: envs.step(np.zeros(3, np.int64)), envs.close, lambda: envs.seed(1)):
        with pytest.raises(ValueError, match=r"^SpoilFiveTianshouVectorEnv was closed: make a new one"):
            call()


def test_the_tianshou_vector_env_refuses_steps_after_an_opponent_fails_until_every_game_is_reset():
    opponent = Breakable(seed=0)
    envs = tianshou_env(2, opponents=["random", opponent], seat=0)
    batch, _ = envs.reset()
    opponent.broken = True
    with pytest.raises(ValueError, match="opponent .*breakable.* returned float64 actions"):
        for _ in range(20):
            batch, *_ = envs.step(batch.mask.argmax(1))
    opponent.broken = False
    holder = envs.core.holder.copy()
    for call, says in ((lambda: envs.step(envs.core.legal_mask().argmax(1)),
                        r"the last step failed in the move of opponent .*breakable.*: call reset\(\)"),
                       (lambda: envs.reset(env_id=[0]),
                        r"the last step failed in the move of opponent .*breakable.*: call reset\(\) for every game")):
        with pytest.raises(ValueError, match=says):
            call()
    assert np.array_equal(envs.core.holder, holder)
    batch, _ = envs.reset()
    envs.step(batch.mask.argmax(1))


def test_a_tianshou_vector_env_reset_whose_opponent_cannot_reseed_changes_no_generator():
    opponent = Breakable(seed=0)
    envs = tianshou_env(2, opponents=["random", opponent], seat=0)
    envs.reset()
    opponent.broken = True
    before = tianshou_state(envs)
    with pytest.raises(RuntimeError, match="no reseeding today"):
        envs.reset(seed=1)
    assert tianshou_state(envs) == before


def test_the_tianshou_vector_env_names_its_own_keywords_and_budgets_its_memory(monkeypatch):
    pytest.importorskip("tianshou")
    from spoilfive_integrations.tianshou import SpoilFiveTianshouVectorEnv

    with pytest.raises(ValueError, match=r"unknown rules option\(s\) opponent: known options are "
                                         r"SpoilFiveTianshouVectorEnv's own num_envs, num_players, opponents, seat, "
                                         r"illegal_action, seed, mode, reward and the rules options"):
        SpoilFiveTianshouVectorEnv(2, opponent="random")
    with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got -3"):
        SpoilFiveTianshouVectorEnv(2, seed=-3)
    with pytest.raises(ValueError, match=r"^num_envs=10000000000 is not allowed here: its games need about"):
        SpoilFiveTianshouVectorEnv(10**10)
