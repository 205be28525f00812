"""The Gymnasium doors (CONTRACT.md "Registrations" and "Gymnasium"): registered ids, the
single-seat env, the VectorEnv over one core batch, opponents, penalty, seeding, errors."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import gymnasium
import numpy as np
import pettingzoo
import pytest
from conftest import assert_same_state, core_fields, exit_status, random_legal
from gymnasium.utils.env_checker import check_env

import spoilfive_env
from agents import CHECKPOINT_DIR, Agent
from spoilfive_env.actions import NUM_ACTIONS, action_str
from spoilfive_env.core import PHASE_DONE
from spoilfive_env.observation import OBS_DIM, decode_observation
from spoilfive_env.registration import AEC_ID, GYMNASIUM_ID
from spoilfive_integrations.gymnasium_env import SpoilFiveGymEnv
from spoilfive_integrations.vector import LearnerBatch, SpoilFiveVectorEnv

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = CHECKPOINT_DIR / "ppo.pt"
INF_BOUNDS_WARNING = r".*Box observation space (minimum|maximum) value is .*infinity"


def state_of(env) -> dict:
    """Everything a step may change: the core's fields and every random stream."""
    batch = env.unwrapped.batch
    state = core_fields(batch.core)
    state["seat"] = batch.seat.copy()
    state["over"] = batch.over.copy()
    state["core_rng"] = copy.deepcopy(batch.core.rng.bit_generator.state)
    state["np_random"] = copy.deepcopy(env.unwrapped.np_random.bit_generator.state)
    state["agent_rngs"] = [copy.deepcopy(a.rng.bit_generator.state) for a in batch.lineup.agents]
    return state


class SeatRecorder(Agent):
    """Plays the first legal action and records, per call, the seats of the env's core to act."""

    name = "recorder"

    def __init__(self, env_getter, seen):
        super().__init__(seed=0)
        self.env_getter, self.seen = env_getter, seen

    def act_batch(self, observations, masks):
        core = self.env_getter().batch.core
        self.seen.append((self, int(core.current[0])))
        return np.argmax(masks, axis=1)


# ---------------------------------------------------------------------- registrations
def test_pettingzoo_registry_makes_the_aec_env():
    game = pettingzoo.make("aec", AEC_ID, num_players=4)
    assert isinstance(game, pettingzoo.AECEnv)
    game.reset(seed=0)
    assert game.possible_agents == [f"player_{i}" for i in range(4)]
    unversioned = pettingzoo.make("aec", "spoilfive/spoil_five", num_players=3, max_cycles=-1)
    assert unversioned.possible_agents[-1] == "player_2"
    with pytest.raises(ValueError, match=r"max_cycles=100 is not allowed"):
        pettingzoo.make("aec", AEC_ID, max_cycles=100)


def test_the_aec_entry_point_takes_pettingzoo_s_none_cap_and_refuses_any_other():
    """make_aec_env, called with the keywords PettingZoo may pass: max_cycles=-1 ("no cap") or None is an
    env as asked for; a real cap is refused, as a hand and a game end by the rules."""
    from spoilfive_env.registration import make_aec_env

    for cap in (-1, None):
        game = make_aec_env(max_cycles=cap, num_players=3)
        game.reset(seed=0)
        assert game.possible_agents == ["player_0", "player_1", "player_2"]
    with pytest.raises(ValueError, match=r"max_cycles=0 is not allowed: .* omit max_cycles or pass -1"):
        make_aec_env(max_cycles=0, num_players=3)


def test_gymnasium_registry_makes_both_envs():
    spec = gymnasium.spec(GYMNASIUM_ID)
    assert spec.entry_point == "spoilfive_integrations.gymnasium_env:SpoilFiveGymEnv"
    assert spec.vector_entry_point == "spoilfive_integrations.vector:SpoilFiveVectorEnv"
    env = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents=["random", "greedy"], seat=2, preset="hoyle",
                         reward="chips")
    assert isinstance(env.unwrapped, SpoilFiveGymEnv)
    observation, info = env.reset(seed=1)
    assert env.observation_space.contains(observation) and info["seat"] == 2
    assert env.unwrapped.batch.rules.ante == 2 and env.unwrapped.batch.core.reward_mode == "chips"
    envs = gymnasium.make_vec(GYMNASIUM_ID, num_envs=5, vectorization_mode="vector_entry_point",
                              num_players=5, opponents="random")
    assert isinstance(envs.unwrapped, SpoilFiveVectorEnv) and envs.num_envs == 5
    assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    observations, infos = envs.reset(seed=2)
    assert observations.shape == (5, OBS_DIM) and infos["action_mask"].shape == (5, NUM_ACTIONS)


def test_make_returns_the_env_itself_so_action_masks_answers_and_it_keeps_its_own_call_order():
    """CONTRACT.md: ``env.action_masks()`` on ``gymnasium.make(...)``'s env. Gymnasium 1.x wrappers
    pass no attribute through, so make must add none; the env then refuses step before reset itself."""
    env = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents="random")
    assert type(env) is SpoilFiveGymEnv
    with pytest.raises(ValueError, match=r"step\(\) before reset\(\)"):
        env.step(0)
    _, info = env.reset(seed=3)
    masks = env.action_masks()
    assert masks.dtype == bool and masks.shape == (NUM_ACTIONS,)
    np.testing.assert_array_equal(masks, info["action_mask"].astype(bool))
    checked = gymnasium.make(GYMNASIUM_ID, disable_env_checker=False)  # the checker, for whoever asks
    assert isinstance(checked, gymnasium.Wrapper) and type(checked.unwrapped) is SpoilFiveGymEnv


def test_registering_again_warns_nothing_and_keeps_the_specs():
    spec = gymnasium.spec(GYMNASIUM_ID)
    aec_spec = pettingzoo.spec("aec", AEC_ID)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spoilfive_env.register_environments()
        spoilfive_env.register_environments()
    assert gymnasium.spec(GYMNASIUM_ID) is spec and pettingzoo.spec("aec", AEC_ID) is aec_spec


NO_IMPORT_SCRIPT = """
import sys
import gymnasium
assert "spoilfive_env" not in sys.modules
env = gymnasium.make("spoilfive_env:spoilfive/SpoilFive-v0", opponents="random", seat=0)
observation, info = env.reset(seed=0)
envs = gymnasium.make_vec("spoilfive/SpoilFive-v0", num_envs=3, vectorization_mode="vector_entry_point")
print(type(env.unwrapped).__name__, observation.shape[0], int(info["action_mask"].sum() > 0), envs.num_envs)
"""


def test_gymnasium_finds_the_id_without_importing_the_package():
    """Gymnasium 1.x has no plugin entry points: its ``module:id`` form imports the package."""
    result = subprocess.run([sys.executable, "-c", NO_IMPORT_SCRIPT], check=False, capture_output=True, text=True,
                            cwd=ROOT, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["SpoilFiveGymEnv", str(OBS_DIM), "1", "3"]


def test_pyproject_declares_the_gymnasium_entry_point_group():
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points."gymnasium.envs"]' in text
    assert 'spoilfive = "spoilfive_env.registration:register_environments"' in text


# ---------------------------------------------------------------------- single-seat env
def test_check_env_passes_in_penalty_mode():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=INF_BOUNDS_WARNING)
        check_env(gymnasium.make(GYMNASIUM_ID, illegal_action="penalty").unwrapped, skip_render_check=True)
        check_env(SpoilFiveGymEnv(num_players=6, opponents="random", illegal_action="penalty", mode="game"),
                  skip_render_check=True)


def test_plain_make_runs_episodes_with_masks_and_learner_turns():
    env = gymnasium.make(GYMNASIUM_ID, num_players=4, opponents="spoiler")
    rng = np.random.default_rng(0)
    for episode in range(30):
        observation, info = env.reset(seed=episode)
        core = env.unwrapped.core
        terminated = False
        while not terminated:
            mask = info["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,) and mask.any()
            np.testing.assert_array_equal(env.action_masks(), mask.astype(bool))  # on what make returns
            assert int(core.current[0]) == info["seat"], "the learner acts only at its own decisions"
            np.testing.assert_array_equal(mask.astype(bool), core.legal_mask()[0])
            np.testing.assert_array_equal(observation, core.observe(info["seat"])[0])
            observation, _, terminated, truncated, info = env.step(int(random_legal(rng, mask)))
            assert not truncated
        assert not info["action_mask"].any() and core.phase[0] == PHASE_DONE
        assert not env.action_masks().any(), "all zero once the episode is over, as info's mask"
        seat = info["seat"]  # the result on the table is the one the learner's last view shows
        assert decode_observation(observation)["tricks_won"] == [info["tricks"][(seat + k) % 4] for k in range(4)]


def test_a_game_episode_ends_naming_the_seats_with_most_chips():
    env = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents="random", mode="game", num_hands=2, max_hands=4)
    rng = np.random.default_rng(0)
    for episode in range(10):
        _, info = env.reset(seed=episode)
        terminated = False
        while not terminated:
            assert "game_winners" not in info  # only at the game's end
            _, _, terminated, _, info = env.step(int(random_legal(rng, info["action_mask"])))
        chips = info["chips"]
        assert info["game_winners"] == [seat for seat in range(3) if chips[seat] == max(chips)]
    hand = gymnasium.make(GYMNASIUM_ID, num_players=3, opponents="random")
    _, info = hand.reset(seed=0)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = hand.step(int(random_legal(rng, info["action_mask"])))
    assert "winner" in info and "game_winners" not in info


@pytest.mark.parametrize("reward", ["chips", "equity"])
def test_rewards_gather_the_opponents_moves(reward):
    """The seat's episode reward is its whole result, wherever the hand ended (on its move or theirs)."""
    for mode, episodes in (("hand", 40), ("game", 3)):
        env = SpoilFiveGymEnv(num_players=4, opponents="spoiler", mode=mode, reward=reward, num_hands=2)
        rng = np.random.default_rng(1)
        for episode in range(episodes):
            _, info = env.reset(seed=episode)
            seat, total, terminated = info["seat"], 0.0, False
            while not terminated:
                _, step_reward, terminated, _, info = env.step(int(random_legal(rng, info["action_mask"])))
                total += step_reward
            core = env.core
            final = core.chips[0, seat] - env.batch.rules.starting_chips
            if mode == "hand" and reward == "equity":
                final += core.pool[0] / 4  # a spoiled hand's pool still holds his share
            assert total == pytest.approx(final), (mode, episode)


def test_raise_mode_refuses_an_illegal_action_and_changes_nothing():
    env = SpoilFiveGymEnv(num_players=4, opponents="random", seat=None)
    _, info = env.reset(seed=3)
    mask = info["action_mask"]
    before = state_of(env)
    for bad in (int(np.flatnonzero(mask == 0)[0]), -1, NUM_ACTIONS, 1000):
        with pytest.raises(ValueError, match=rf"illegal action {bad}\b.*learning seat {info['seat']}.*legal actions: "):
            env.step(bad)
        assert_same_state(before, state_of(env))
    legal = ", ".join(f"{a} \\({action_str(a)}\\)" for a in np.flatnonzero(mask))
    one = int(np.flatnonzero(mask)[0])
    for not_an_action in (1.5, "3", [1, 2], None, [one], np.array([one]), np.array([[one]])):  # 0-d, as Discrete
        with pytest.raises(ValueError, match=rf"illegal action .* for the learning seat {info['seat']} \(an action is "
                                             rf"a whole number 0-106, an action id\); legal actions: {legal}$"):
            env.step(not_an_action)
        assert_same_state(before, state_of(env))
    env.step(int(np.flatnonzero(mask)[0]))  # still playable


def test_penalty_mode_ends_the_episode_with_the_forfeit():
    for reward, ante_rules in (("equity", {}), ("chips", {}), ("equity", {"preset": "hoyle"})):
        env = SpoilFiveGymEnv(num_players=4, opponents="spoiler", illegal_action="penalty", reward=reward, **ante_rules)
        _, info = env.reset(seed=4, )
        core, seat = env.core, info["seat"]
        chips_change = int(core.chips[0, seat] - core.chips_at_hand_start[0, seat])
        expected = chips_change - (core.pool_at_hand_start[0] / 4 if reward == "equity" else 0)
        illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
        _, step_reward, terminated, truncated, info = env.step(illegal)
        assert terminated and not truncated and info["penalty"]
        assert step_reward == pytest.approx(expected) and step_reward < 0
        assert not info["action_mask"].any() and not env.action_masks().any()
        assert not {"winner", "tricks", "chips", "pool"} & info.keys(), "a forfeited hand has no result on the table"
        with pytest.raises(ValueError, match="the episode is over: call reset"):
            env.step(0)
        _, info = env.reset()
        assert not info["penalty"] and info["action_mask"].any()


def test_penalty_after_a_spoil_forfeits_the_carried_pool_share():
    env = SpoilFiveGymEnv(num_players=3, opponents="random", illegal_action="penalty", seat=0)
    env.reset(seed=0)
    core = env.core
    core.reset(pools=np.array([9]))  # a pool carried over from a spoiled hand, for this check only
    env.batch.play_opponents(np.ones(1, bool))
    assert core.pool_at_hand_start[0] == 9 and core.current[0] == 0
    mask = core.legal_mask()[0]
    _, step_reward, terminated, _, _ = env.step(int(np.flatnonzero(~mask)[0]))
    spoil_ante = env.batch.rules.spoil_ante
    assert terminated and step_reward == pytest.approx(-spoil_ante - 9 / 3)


def trajectory(env, seed, episodes, action_seed=0):
    """Observations, rewards and every core state along ``episodes`` episodes from ``reset(seed)``."""
    rng = np.random.default_rng(action_seed)
    record = []
    for episode in range(episodes):
        observation, info = env.reset(seed=seed if episode == 0 else None)
        record.append((observation.copy(), info["seat"], env.unwrapped.core.played_by.copy()))
        terminated = False
        while not terminated:
            observation, reward, terminated, _, info = env.step(int(random_legal(rng, info["action_mask"])))
            record.append((observation.copy(), reward, env.unwrapped.core.played_by.copy()))
    return record


def assert_same_trajectory(a, b):
    assert len(a) == len(b)
    for first, second in zip(a, b):
        for x, y in zip(first, second):
            np.testing.assert_array_equal(x, y)


def test_seeded_reset_reproduces_deal_seat_and_opponents():
    # Random opponents and a pimc searcher draw from their own generators: their moves must repeat.
    from agents import load_agent

    for make_opponents in (lambda: "random", lambda: ["random", "pimc:samples=4", "random"],
                           lambda: load_agent("random")):  # an object with reseed(), fresh entropy each
        first = SpoilFiveGymEnv(num_players=4, opponents=make_opponents())
        second = SpoilFiveGymEnv(num_players=4, opponents=make_opponents())
        a = trajectory(first, seed=11, episodes=3)
        assert_same_trajectory(a, trajectory(second, seed=11, episodes=3))
        assert_same_trajectory(a, trajectory(first, seed=11, episodes=3))  # the same env again
        other = trajectory(first, seed=12, episodes=3)
        assert len(other) != len(a) or any(not np.array_equal(x[2], y[2]) for x, y in zip(a, other))


def test_seat_fixed_or_drawn():
    fixed = SpoilFiveGymEnv(num_players=5, opponents="random", seat=3)
    assert {fixed.reset(seed=s)[1]["seat"] for s in range(20)} == {3}
    drawn = SpoilFiveGymEnv(num_players=5, opponents="random")
    drawn.reset(seed=0)
    seats = [drawn.reset()[1]["seat"] for _ in range(60)]
    assert set(seats) == set(range(5))
    again = SpoilFiveGymEnv(num_players=5, opponents="random")
    again.reset(seed=0)
    assert [again.reset()[1]["seat"] for _ in range(60)] == seats


def test_opponent_list_sits_to_the_learners_left():
    env = None
    seen = []
    recorders = [SeatRecorder(lambda: env, seen) for _ in range(3)]
    env = SpoilFiveGymEnv(num_players=4, opponents=recorders, seat=None)
    for seed in range(6):
        _, info = env.reset(seed=seed)
        terminated = False
        while not terminated:
            _, _, terminated, _, info = env.step(int(np.argmax(info["action_mask"])))
        seat = env.seat
        for agent, acting_seat in seen:
            assert acting_seat == (seat + 1 + recorders.index(agent)) % 4
        assert {recorders.index(agent) for agent, _ in seen} == {0, 1, 2}
        seen.clear()


def test_opponents_by_name_list_object_and_checkpoint():
    by_name = SpoilFiveGymEnv(num_players=3, opponents="greedy")
    assert [a.name for a in by_name.batch.lineup.agents] == ["greedy"]
    mixed = SpoilFiveGymEnv(num_players=4, opponents=["spoiler", "random", "spoiler"])
    assert [a.name for a in mixed.batch.lineup.agents] == ["spoiler", "random"]
    assert mixed.batch.lineup.agent_of_position.tolist() == [-1, 0, 1, 0]
    from agents import load_agent

    frozen = load_agent("random", seed=5)
    bound = SpoilFiveGymEnv(num_players=3, opponents=frozen)
    assert bound.batch.lineup.agents == [frozen] and frozen.rules == bound.batch.rules
    by_path = SpoilFiveGymEnv(num_players=4, opponents=CHECKPOINT, seat=0)
    _, info = by_path.reset(seed=0)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = by_path.step(int(np.argmax(info["action_mask"])))
    assert by_path.core.done[0]
    by_shipped_name = SpoilFiveGymEnv(num_players=3, opponents=["ppo", str(CHECKPOINT)])
    assert [a.name for a in by_shipped_name.batch.lineup.agents] == ["ppo", "ppo"]  # two specs, one file


def test_each_distinct_opponent_draws_from_its_own_stream():
    """A seeded reset gives every distinct opponent an independent stream (the module docstring of
    spoilfive_integrations.opponents): two random agents at one table must not mirror each other's draws."""
    from agents import load_agent
    from spoilfive_env.rules import Rules
    from spoilfive_integrations.opponents import resolve_opponents

    lineup = resolve_opponents([load_agent("random"), load_agent("random")], Rules(num_players=3))
    lineup.reseed(3)  # what reset(seed=3) does first
    first, second = lineup.agents
    assert first.rng.random(4).tolist() != second.rng.random(4).tolist()


def test_vector_env_with_one_game_matches_the_single_env():
    """One implementation: the vector env (B = 1, autoreset) and the single env play the same hands."""
    single = SpoilFiveGymEnv(num_players=4, opponents="random")
    vector = SpoilFiveVectorEnv(1, num_players=4, opponents="random")
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    observation, info = single.reset(seed=21)
    observations, infos = vector.reset(seed=21)
    ended = 0
    for _ in range(120):
        np.testing.assert_array_equal(observations[0], observation)
        np.testing.assert_array_equal(infos["action_mask"][0], info["action_mask"])
        observation, reward, terminated, _, info = single.step(int(random_legal(rng_a, info["action_mask"])))
        observations, rewards, terminations, _, infos = vector.step(random_legal(rng_b, infos["action_mask"]))
        assert rewards[0] == pytest.approx(reward) and terminations[0] == terminated
        if terminated:
            np.testing.assert_array_equal(observations[0], observation)
            observation, info = single.reset()
            observations, rewards, terminations, _, infos = vector.step(np.array([-5]))  # autoreset
            assert rewards[0] == 0 and not terminations[0]
            ended += 1
    assert ended >= 10  # the hands ended, and the autoreset was compared, many times


def test_the_oracle_plays_an_opponent_seat_from_the_engine_s_hidden_state():
    """A cheating opponent (measurement only) is handed the core and its games, not only observations:
    its act_batch alone refuses to play."""
    envs = SpoilFiveVectorEnv(4, num_players=3, opponents=["oracle:samples=1", "random"])
    _, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(12):
        _, _, terminated, _, infos = envs.step(random_legal(rng, infos["action_mask"]))
        ended += terminated.sum()
    assert ended >= 4


def test_reset_with_seed_zero_reproduces_deal_seat_and_opponents_as_any_other_seed():
    # 0 is a seed like any other: a check "if seed:" would leave the deals and the opponents unseeded.
    first, second = (trajectory(SpoilFiveGymEnv(num_players=4, opponents="random"), seed=0, episodes=2)
                     for _ in range(2))
    assert_same_trajectory(first, second)
    first, second = (SpoilFiveVectorEnv(4, num_players=4, opponents="random") for _ in range(2))
    a, b = first.reset(seed=0), second.reset(seed=0)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(first.core.holder, second.core.holder)
    np.testing.assert_array_equal(a[1]["seat"], b[1]["seat"])


def test_the_single_env_s_illegal_action_error_names_no_game():
    # One game only: "in game 0" (the vector env's wording) would point at a batch the user never made.
    env = SpoilFiveGymEnv(num_players=3, opponents="random", seat=1)
    _, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    says = rf"illegal action {bad} \(.*\) for the learning seat 1; legal actions: "
    with pytest.raises(ValueError, match=says) as error:
        env.step(bad)
    assert "game" not in str(error.value)


def test_the_info_mask_is_a_copy_that_leaves_action_masks_as_they_were():
    env = SpoilFiveGymEnv(num_players=3, opponents="random")
    _, info = env.reset(seed=0)
    legal = env.action_masks().copy()
    info["action_mask"][:] = 0  # the user's array to change, as a masked sampler may do
    np.testing.assert_array_equal(env.action_masks(), legal)


def test_a_failing_opponent_is_named_by_its_own_spec_when_an_earlier_spec_repeats():
    """Distinct agents of ["random", "random", broken] are the first and third entries: the error must name the
    broken one, not the second (a repeat of the first)."""
    from agents.base import Agent

    class Broken(Agent):
        name = "broken"

        def __init__(self):
            super().__init__(seed=0)

        def __repr__(self):
            return "Broken()"

        def act_batch(self, observations, masks):
            if self.broken:
                raise RuntimeError("out of order")
            return np.argmax(masks, axis=1)

    broken = Broken()
    broken.broken = False
    env = SpoilFiveGymEnv(num_players=4, opponents=["random", "random", broken], seat=0)
    assert env.batch.lineup.specs[0] == "random" and repr(env.batch.lineup.specs[1]) == "Broken()"
    _, info = env.reset(seed=0)
    broken.broken = True
    with pytest.raises(RuntimeError, match="out of order"):
        for _ in range(5):  # Broken, third to the learner's left, moves within each of his steps
            _, _, _, _, info = env.step(int(np.argmax(info["action_mask"])))
    with pytest.raises(ValueError, match=r"failed in the move of opponent Broken\(\) \(RuntimeError: out of order\)"):
        env.step(0)


def test_a_penalty_in_a_later_hand_of_a_game_forfeits_only_that_hand_s_antes_and_pool_share():
    """In mode="game" the penalty is scored from the chips the learner held as that hand began, not the game's
    starting chips (which would charge him again for the earlier hands)."""
    env = SpoilFiveGymEnv(num_players=4, opponents="random", illegal_action="penalty", mode="game", seat=0,
                          num_hands=5, max_hands=10)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=1)
    core, start = env.core, env.batch.rules.starting_chips
    while core.chips_at_hand_start[0, 0] == start:  # until an earlier hand has moved the learner's chips
        _, _, terminated, _, info = env.step(int(random_legal(rng, info["action_mask"])))
        assert not terminated
    expected = (core.chips[0, 0] - core.chips_at_hand_start[0, 0]) - core.pool_at_hand_start[0] / 4
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert terminated and info["penalty"] and reward == pytest.approx(expected)
    assert reward <= 0


def test_the_result_in_info_is_the_table_after_the_hand_with_every_chip_accounted_for():
    # A hand moves chips between the seats and the pool and creates none: the info's chips and pool must be
    # the table after the hand (a winner holding the most chips, a spoiled hand's antes left in the pool).
    env = SpoilFiveGymEnv(num_players=4, opponents="random")
    start = env.batch.rules.starting_chips
    rng = np.random.default_rng(2)
    outcomes = set()
    for episode in range(40):
        _, info = env.reset(seed=episode)
        terminated = False
        while not terminated:
            _, _, terminated, _, info = env.step(int(random_legal(rng, info["action_mask"])))
        chips, pool, winner, tricks = info["chips"], info["pool"], info["winner"], info["tricks"]
        assert sum(chips) + pool == 4 * start, episode
        assert sum(tricks) <= 5
        if winner >= 0:
            assert tricks[winner] >= 3 and chips[winner] > start and chips[winner] == max(chips) and pool == 0
        else:
            assert pool > 0  # spoiled: the antes wait in the pool
        outcomes.add(winner >= 0)
    assert outcomes == {True, False}, "both won and spoiled hands were checked"


def test_render_shows_the_learning_seat_s_hand_not_seat_zero_s():
    env = SpoilFiveGymEnv(num_players=3, opponents="random", seat=2, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "player_2's hand:" in text and "player_0's hand:" not in text  # only the learner's hidden cards


def test_an_opponent_whose_cheats_flag_is_false_plays_from_its_observations():
    # Only a true flag hands an agent the hidden state; False is what an honest agent may say outright. A plain
    # object (not an Agent) has no act_batch_state to fall back on, so it must be asked through act_batch.
    class Honest:
        cheats = False
        asked = 0

        def act_batch(self, observations, masks):
            self.asked += 1
            return np.argmax(masks, axis=1)

    honest = Honest()
    env = SpoilFiveGymEnv(num_players=3, opponents=honest, seat=0)
    _, info = env.reset(seed=0)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(int(np.argmax(info["action_mask"])))
    assert honest.asked > 0  # it played its seats through act_batch, the hand to its end


def test_each_vector_opponent_sees_its_own_game_from_its_own_seat():
    """Opponents are asked only for the rows still to move, a subset of the games: each row's observation must
    be that game's, from the seat to act there (not the observation of the game with the row's number)."""
    from agents.base import Agent

    class Checker(Agent):
        name = "checker"

        def __init__(self):
            super().__init__(seed=0)
            self.calls = 0

        def act_batch(self, observations, masks):
            core, seats = envs.batch.core, envs.batch.seat
            rows = np.flatnonzero((core.phase != PHASE_DONE) & (core.current != seats) & ~envs.batch.over)
            expected = [core.observe(int(core.current[g]), games=[g])[0] for g in rows]
            np.testing.assert_array_equal(observations, np.array(expected))
            self.calls += 1
            return np.argmax(masks, axis=1)

    checker = Checker()
    envs = SpoilFiveVectorEnv(6, num_players=4, opponents=checker)
    _, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(15):
        _, _, _, _, infos = envs.step(random_legal(rng, infos["action_mask"]))
    assert checker.calls > 15


# ---------------------------------------------------------------------- vector env
def test_vector_masks_equal_core_legality_and_autoreset_is_next_step():
    B = 64
    envs = gymnasium.make_vec(GYMNASIUM_ID, num_envs=B, vectorization_mode="vector_entry_point",
                              num_players=4, opponents="spoiler")
    inner = envs.unwrapped
    rng = np.random.default_rng(0)
    observations, infos = envs.reset(seed=0)
    waiting = np.zeros(B, bool)  # terminated at the previous step
    restarts = 0
    for _ in range(60):
        core, seats = inner.core, inner.seats
        masks = infos["action_mask"]
        assert masks.dtype == np.int8 and masks.shape == (B, NUM_ACTIONS)
        np.testing.assert_array_equal(inner.action_masks(), masks.astype(bool))
        live = ~waiting
        assert (core.current[live] == seats[live]).all(), "every live game waits for its learner"
        np.testing.assert_array_equal(masks[live].astype(bool), core.legal_mask()[live])
        assert (masks[waiting] == 1).all()
        np.testing.assert_array_equal(observations, core.observe(seats))
        actions = random_legal(rng, masks)
        actions[waiting] = rng.choice([-3, 999, 104], size=waiting.sum())  # ignored: these games restart
        observations, rewards, terminated, truncated, infos = envs.step(actions)
        assert not truncated.any()
        assert (rewards[waiting] == 0).all() and not terminated[waiting].any()
        for g in np.flatnonzero(waiting):
            view = decode_observation(observations[g])
            assert view["trick_number"] == 0 and sum(view["tricks_won"]) == 0 and len(view["hand"]) == 5 \
                or view["phase"] == "rob"
        restarts += waiting.sum()
        assert (inner.core.phase[terminated] == PHASE_DONE).all()
        waiting = terminated | truncated
    assert restarts > B, "enough hands ended to test the autoreset"


def test_vector_opponents_move_in_one_batch_whose_rows_only_shrink_within_a_step():
    """Between the learners' decisions every game's opponents move together, the games restarted by the
    autoreset with the rest: each round calls the one opponent's act_batch once, on the games still waiting
    for their learner, so within a step the rows it is given only shrink."""
    sizes = []

    class RowCounter(Agent):
        name = "row counter"

        def act_batch(self, observations, masks):
            sizes.append(len(observations))
            return np.argmax(masks, axis=1)

    envs = SpoilFiveVectorEnv(32, num_players=3, opponents=RowCounter(seed=0))
    _, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    restarts = 0
    for _ in range(30):
        waiting = infos["action_mask"].all(axis=1)
        sizes.clear()
        _, _, terminated, _, infos = envs.step(random_legal(rng, infos["action_mask"]))
        assert sizes == sorted(sizes, reverse=True)
        restarts += waiting.sum()
    assert restarts >= 32


def vector_run(seed, steps=25, **kwargs):
    envs = SpoilFiveVectorEnv(16, num_players=5, opponents=["random", "pimc:samples=2", "random", "greedy"], **kwargs)
    rng = np.random.default_rng(3)
    observations, infos = envs.reset(seed=seed)
    out = [observations, infos["seat"]]
    for _ in range(steps):
        observations, rewards, terminated, _, infos = envs.step(random_legal(rng, infos["action_mask"]))
        out += [observations, rewards, terminated, infos["seat"]]
    return out, envs


def test_vector_seeding_reproduces_everything():
    first, envs = vector_run(seed=5)
    second, _ = vector_run(seed=5)
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x, y)
    assert len(set(first[1].tolist())) > 1, "seats are drawn per game"
    rng = np.random.default_rng(3)  # the same env reseeded repeats itself too
    observations, infos = envs.reset(seed=5)
    np.testing.assert_array_equal(observations, first[0])
    observations, *_ = envs.step(random_legal(rng, infos["action_mask"]))
    np.testing.assert_array_equal(observations, first[2])
    fixed, _ = vector_run(seed=5, seat=2)
    assert (fixed[1] == 2).all() and all((seats == 2).all() for seats in fixed[5::4])


def test_vector_raise_mode_changes_nothing():
    envs = SpoilFiveVectorEnv(8, num_players=3, opponents="random")
    _, infos = envs.reset(seed=1)
    actions = np.argmax(infos["action_mask"], axis=1)
    actions[5] = int(np.flatnonzero(infos["action_mask"][5] == 0)[0])
    before = state_of(envs)
    with pytest.raises(ValueError, match=r"illegal action .* in game 5; legal actions"):
        envs.step(actions)
    assert_same_state(before, state_of(envs))
    for bad in (actions[:4], actions.astype(np.float64), actions[None]):
        with pytest.raises(ValueError, match=r"actions must be integers of shape \(8,\)"):
            envs.step(bad)
        assert_same_state(before, state_of(envs))


def test_vector_penalty_terminates_only_the_offending_games():
    B = 12
    envs = SpoilFiveVectorEnv(B, num_players=4, opponents="spoiler", illegal_action="penalty", preset="hoyle")
    _, infos = envs.reset(seed=2)
    core, seats = envs.core, envs.seats
    offenders = np.zeros(B, bool)
    offenders[[1, 4, 7]] = True
    actions = np.argmax(infos["action_mask"], axis=1)
    actions[offenders] = np.argmax(infos["action_mask"][offenders] == 0, axis=1)
    rows = np.flatnonzero(offenders)
    expected = (core.chips[rows, seats[rows]] - core.chips_at_hand_start[rows, seats[rows]]
                - core.pool_at_hand_start[rows] / 4)
    _, rewards, terminated, _, infos = envs.step(actions)
    np.testing.assert_allclose(rewards[offenders], expected)
    assert (rewards[offenders] < 0).all() and terminated[offenders].all()
    np.testing.assert_array_equal(infos["penalty"], offenders)
    assert (infos["action_mask"][offenders] == 1).all()
    _, rewards, terminated, _, infos = envs.step(np.argmax(infos["action_mask"], axis=1))
    assert (rewards[offenders] == 0).all() and not terminated[offenders].any() and not infos["penalty"].any()


def test_vector_render_and_check_options():
    envs = SpoilFiveVectorEnv(2, num_players=3, opponents="random", render_mode="ansi", seat=1)
    envs.reset(seed=0)
    tables = envs.render()
    assert len(tables) == 2 and all("player_1's hand" in table for table in tables)
    with pytest.raises(ValueError, match="unknown reset options"):
        envs.reset(options={"hands": []})
    with pytest.raises(ValueError, match=r"seed must be a whole number 0 or more, or None, got -1"):
        envs.reset(seed=-1)
    with pytest.raises(ValueError, match=r"step\(\) before reset\(\): call reset\(\)"):
        SpoilFiveVectorEnv(2, opponents="random").step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match=r"render\(\) before reset\(\): call reset\(\)"):
        SpoilFiveVectorEnv(2, opponents="random", render_mode="ansi").render()


def first_legal(masks: np.ndarray) -> np.ndarray:
    return np.argmax(masks, axis=1)


def per_game_sequences(envs, steps: int, seed: int) -> list[list]:
    """Each game's (observation, reward, terminated) in order, a next-step autoreset's restart step left out
    and its new first observation joined to the final step as ``(final, reward, True, first)``."""
    observations, infos = envs.reset(seed=seed)
    mode = envs.unwrapped.autoreset_mode
    sequences = [[("start", observations[g].copy())] for g in range(envs.num_envs)]
    waiting = np.zeros(envs.num_envs, bool)
    for _ in range(steps):
        observations, rewards, terminated, _, infos = envs.step(first_legal(infos["action_mask"]))
        for g in range(envs.num_envs):
            if waiting[g]:
                sequences[g][-1] += (observations[g].copy(),)
            elif terminated[g] and mode == gymnasium.vector.AutoresetMode.SAME_STEP:
                sequences[g].append((infos["final_obs"][g], rewards[g], True, observations[g].copy()))
            else:
                sequences[g].append((observations[g].copy(), rewards[g], bool(terminated[g])))
        waiting = terminated & (mode == gymnasium.vector.AutoresetMode.NEXT_STEP)
    return sequences


def test_same_step_autoreset_plays_the_next_step_game_without_its_restart_steps():
    """One game: its deals, seats and opponents' draws come in the same order either way, so the
    same-step env plays the very hands of the next-step one, less the restart steps."""
    def make(mode):
        return gymnasium.make_vec(GYMNASIUM_ID, num_envs=1, vectorization_mode="vector_entry_point",
                                  num_players=3, opponents="random", autoreset_mode=mode)
    same = make("SameStep")
    assert same.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert type(same.unwrapped).metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    [next_step] = per_game_sequences(make(gymnasium.vector.AutoresetMode.NEXT_STEP), 150, seed=4)
    [same_step] = per_game_sequences(same, 150, seed=4)
    assert sum(len(entry) == 4 for entry in same_step) >= 15, "hands ended and restarted"
    for a, b in zip(next_step, same_step):  # the shorter: the next-step env spent steps restarting
        assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_same_step_autoreset_ends_many_games_as_next_step_does():
    """Many games: each game's first hand, final observation and reward are those of the next-step env."""
    def first_hands(mode):
        envs = SpoilFiveVectorEnv(12, num_players=3, opponents=["spoiler", "greedy"], autoreset_mode=mode)
        return [game[:next(i for i, entry in enumerate(game) if len(entry) > 2 and entry[2]) + 1]
                for game in per_game_sequences(envs, 30, seed=6)]
    for a, b in zip(first_hands("NextStep"), first_hands("SameStep")):
        assert len(a) == len(b) > 2 and len(b[-1]) == 4
        for x, y in zip(a, b):
            assert all(np.array_equal(u, v) for u, v in zip(x[:3], y[:3]))


def test_same_step_autoreset_reports_the_final_observation_and_info():
    envs = SpoilFiveVectorEnv(8, num_players=4, opponents="spoiler", illegal_action="penalty",
                              autoreset_mode="SAME_STEP")
    _, infos = envs.reset(seed=3)
    ended_total = 0
    for step in range(40):
        masks = infos["action_mask"]
        assert (masks.sum(axis=1) > 0).all() and (envs.core.current == envs.seats).all(), "every game is live"
        actions = first_legal(masks)
        final_seats = envs.seats
        if step == 5:
            actions[2] = int(np.flatnonzero(masks[2] == 0)[0])  # a penalty ends game 2 now
        observations, rewards, terminated, _, infos = envs.step(actions)
        ended = terminated
        if step == 5:
            # The row is the new episode's, as SyncVectorEnv gives a reset's info there; the penalty is the last one's.
            assert ended[2] and not infos["penalty"][2] and infos["final_info"]["penalty"][2]
            assert infos["_penalty"][2] and infos["final_info"]["_penalty"][2]
        if not ended.any():
            assert "final_obs" not in infos
            continue
        ended_total += ended.sum()
        np.testing.assert_array_equal(infos["_final_obs"], ended)
        np.testing.assert_array_equal(infos["_final_info"], ended)
        for g in range(8):
            if ended[g]:
                assert infos["final_obs"][g].shape == (OBS_DIM,)
                assert not np.array_equal(infos["final_obs"][g], observations[g])
                view = decode_observation(observations[g])
                assert view["trick_number"] == 0 or view["phase"] == "rob"
                assert infos["final_info"]["seat"][g] == final_seats[g]
                assert (infos["final_info"]["action_mask"][g] == 1).all()
            else:
                assert infos["final_obs"][g] is None
        np.testing.assert_array_equal(infos["final_info"]["_action_mask"], ended)
    assert ended_total >= 8


def test_disabled_autoreset_waits_for_a_reset_mask():
    envs = SpoilFiveVectorEnv(6, num_players=3, opponents="random", autoreset_mode="Disabled")
    with pytest.raises(ValueError, match=r"reset_mask'\] before the first reset\(\)"):
        envs.reset(options={"reset_mask": np.ones(6, bool)})
    _, infos = envs.reset(seed=8)
    rng = np.random.default_rng(0)
    restarted = 0
    for _ in range(60):
        observations, rewards, terminated, _, infos = envs.step(random_legal(rng, infos["action_mask"]))
        if terminated.any():
            before = state_of(envs)
            with pytest.raises(ValueError, match=r"game\(s\) .* ended and autoreset_mode is DISABLED: restart them "
                                                 r"with reset\(options=\{'reset_mask': mask\}\)"):
                envs.step(random_legal(rng, infos["action_mask"]))
            assert_same_state(before, state_of(envs))
            live_observations = observations[~terminated].copy()
            options = {"reset_mask": terminated.copy()}
            observations, infos = envs.reset(options=options)
            assert "reset_mask" in options, "the caller's options are left as they were"
            np.testing.assert_array_equal(observations[~terminated], live_observations)
            for g in np.flatnonzero(terminated):
                assert decode_observation(observations[g])["trick_number"] == 0
            restarted += terminated.sum()
    assert restarted >= 6


def test_reset_mask_restarts_only_the_marked_games_in_next_step_mode():
    envs = SpoilFiveVectorEnv(4, num_players=4, opponents="spoiler")
    _, infos = envs.reset(seed=1)
    observations, *_, infos = envs.step(first_legal(infos["action_mask"]))
    mask = np.array([True, False, False, True])
    kept = observations[~mask].copy()
    observations, infos = envs.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(observations[~mask], kept)
    for g in (0, 3):
        view = decode_observation(observations[g])
        assert view["trick_number"] == 0 and len(view["hand"]) == 5 or view["phase"] == "rob"


def test_a_reset_mask_leaves_the_other_ended_games_to_their_next_step_restart():
    """A game that ended at the last step still restarts at the next one when a reset_mask restarts
    other games in between (the reset must not forget its pending autoreset and report it ended twice)."""
    envs = SpoilFiveVectorEnv(6, num_players=2, opponents="random")
    _, infos = envs.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(40):
        _, _, terminated, _, infos = envs.step(random_legal(rng, infos["action_mask"]))
        if terminated.any() and not terminated.all():
            break
    else:
        pytest.fail("no step ended some games but not all")
    ended = terminated.copy()
    mark = np.zeros(6, bool)
    mark[np.flatnonzero(~ended)[0]] = True  # a game still playing
    _, infos = envs.reset(options={"reset_mask": mark})
    assert (infos["action_mask"][ended] == 1).all(), "the ended games still wait for their restart"
    observations, rewards, terminated, _, infos = envs.step(random_legal(rng, infos["action_mask"]))
    assert not terminated[ended].any() and (rewards[ended] == 0).all()
    for g in np.flatnonzero(ended):
        view = decode_observation(observations[g])
        assert view["trick_number"] == 0 and len(view["hand"]) == 5 or view["phase"] == "rob"


def test_a_reset_mask_leaves_a_penalised_game_waiting_with_an_all_ones_mask():
    """A game a penalty ended is a finished game until its restart, whatever other games a reset_mask restarts."""
    envs = SpoilFiveVectorEnv(3, num_players=3, opponents="random", illegal_action="penalty")
    _, infos = envs.reset(seed=0)
    actions = first_legal(infos["action_mask"])
    actions[1] = int(np.flatnonzero(infos["action_mask"][1] == 0)[0])
    _, _, terminated, _, infos = envs.step(actions)
    assert terminated[1] and (infos["action_mask"][1] == 1).all()
    _, infos = envs.reset(options={"reset_mask": np.array([True, False, False])})
    assert (infos["action_mask"][1] == 1).all() and envs.action_masks()[1].all()


def test_the_seats_given_are_copies_that_later_steps_leave_as_they_were():
    envs = SpoilFiveVectorEnv(8, num_players=4, opponents="random")
    _, infos = envs.reset(seed=0)
    given, seats = infos["seat"], envs.seats
    first = seats.copy()
    assert given.dtype == seats.dtype == np.int64
    rng = np.random.default_rng(0)
    for _ in range(20):
        _, _, _, _, infos = envs.step(random_legal(rng, infos["action_mask"]))
    assert not np.array_equal(envs.seats, first), "restarted games drew other seats"
    np.testing.assert_array_equal(given, first)
    np.testing.assert_array_equal(seats, first)


@pytest.mark.parametrize("options, message", [
    ({"reset_mask": np.ones(3, bool)}, r"options\['reset_mask'\]=array\(.*\) is not allowed: give a bool array of "
                                      r"shape \(4,\)"),
    ({"reset_mask": np.ones(4, np.int64)}, r"give a bool array of shape \(4,\)"),
    ({"reset_mask": 1}, r"options\['reset_mask'\]=1 is not allowed"),
    ({"reset_mask": np.zeros(4, bool)}, r"marks no game: mark at least one game"),
    ({"reset_mask": np.ones(4, bool), "dealer": 0}, r"unknown reset options 'dealer'"),
])
def test_a_bad_reset_mask_is_refused_and_changes_nothing(options, message):
    envs = SpoilFiveVectorEnv(4, num_players=4, opponents="random")
    envs.reset(seed=2)
    before = state_of(envs)
    with pytest.raises(ValueError, match=message):
        envs.reset(seed=5, options=options)
    assert_same_state(before, state_of(envs))


def test_autoreset_mode_given_to_the_single_env_says_where_it_goes():
    with pytest.raises(ValueError, match=r"^autoreset_mode is not an option of SpoilFiveGymEnv: it is a vector env's: "
                                         r"give it to gymnasium.make_vec .* vector_kwargs="):
        gymnasium.make_vec(GYMNASIUM_ID, num_envs=2, vectorization_mode="sync", autoreset_mode="SameStep")
    envs = gymnasium.make_vec(GYMNASIUM_ID, num_envs=2, vectorization_mode="sync", opponents="random",
                              vector_kwargs={"autoreset_mode": "SameStep"})
    assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP


@pytest.mark.parametrize("mode", ["next", "SAME", 3, None])
def test_an_unknown_autoreset_mode_is_refused(mode):
    with pytest.raises(ValueError, match=rf"autoreset_mode={mode!r} is not allowed: choose AutoresetMode.NEXT_STEP "
                                         r"\('NextStep'\), AutoresetMode.SAME_STEP"):
        SpoilFiveVectorEnv(2, autoreset_mode=mode)


# ---------------------------------------------------------------------- construction errors
def other_layout_checkpoint(tmp_path) -> Path:
    import torch

    data = torch.load(CHECKPOINT, weights_only=True)
    data["observation_version"] = 99
    path = tmp_path / "old_layout.pt"
    torch.save(data, path)
    return path


BAD_ARGUMENTS = [
    ({"opponents": "grandmaster"},
     r"opponents='grandmaster' cannot be loaded: unknown agent 'grandmaster': choose one of random"),
    ({"opponents": ["random", "spoiler"]},
     r"opponents has 2 entries: a table of 4 players needs one spec for every other seat \(a list of 3\)"),
    ({"opponents": ["random", "nobody", "random"]}, r"opponents\[1\]='nobody' cannot be loaded: unknown agent"),
    ({"opponents": 42}, r"opponents=42 is not an opponent: give a registry name, a checkpoint path or an agent object"),
    ({"opponents": np.array(["random"] * 3)},  # a list is taken, and the message did not say so
     r"opponents=array\(\['random', .*\) is not an opponent: .* act_batch\(observations, masks\), or a list or "
     r"tuple of them, one for each other seat$"),
    ({"opponents": ["random", 42, "random"]}, r"opponents\[1\]=42 is not an opponent: .* act_batch\(observations, "
                                              r"masks\)$"),
    ({"opponents": "missing/model.pt"}, r"opponents='missing/model.pt' cannot be loaded: checkpoint .* does not exist"),
    ({"opponents": SeatRecorder},  # a class has act_batch too, unbound: it failed at the first move, a TypeError
     r"opponents=<class .*SeatRecorder'> is a class, not an opponent: give an agent object \(an instance, "
     r"SeatRecorder\(...\)\), a registry name or a checkpoint path"),
    ({"opponents": ["random", "random", SeatRecorder]}, r"opponents\[2\]=<class .*SeatRecorder'> is a class"),
    ({"seat": 4}, r"seat=4 is not allowed: give a seat 0-3, or None"),
    ({"seat": -1}, r"seat=-1 is not allowed"),
    ({"seat": True}, r"seat=True is not allowed"),
    ({"seat": "0"}, r"seat='0' is not allowed"),
    ({"illegal_action": "ignore"}, r"illegal_action='ignore' is not allowed: choose 'raise' or 'penalty'"),
    ({"render_mode": "rgb_array"},  # the vector env draws no 'human'
     r"render_mode='rgb_array' is not allowed: choose None(, 'ansi' or 'human'| or 'ansi')$"),
    ({"num_players": 11}, r"num_players=11 is not allowed: Spoil Five takes 2 to 10 players"),
    ({"mode": "tournament"}, r"mode='tournament' is not allowed: choose one of hand, game"),
    ({"jinks": 3}, r"unknown rules option\(s\) jinks"),
]


def test_a_render_mode_it_does_not_draw_is_a_value_error_and_a_type_error():
    """A TypeError too, so that SB3's make_vec_env retries without the rgb_array it asks for."""
    with pytest.raises(ValueError, match="render_mode='rgb_array' is not allowed: choose None, 'ansi' or 'human'$") \
            as refused:
        SpoilFiveGymEnv(render_mode="rgb_array")
    assert isinstance(refused.value, TypeError)


@pytest.mark.parametrize("kwargs, message", BAD_ARGUMENTS)
def test_bad_arguments_raise_at_construction(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SpoilFiveGymEnv(**kwargs)
    with pytest.raises(ValueError, match=message):
        SpoilFiveVectorEnv(3, **kwargs)


@pytest.mark.parametrize("num_envs", [0, -2, 1.5, True, "4"])
def test_num_envs_below_one_is_refused(num_envs):
    with pytest.raises(ValueError, match=rf"num_envs={num_envs!r} is not allowed: it must be an integer, 1 or more"):
        SpoilFiveVectorEnv(num_envs)
    with pytest.raises(ValueError, match="num_envs="):
        gymnasium.make_vec(GYMNASIUM_ID, num_envs=num_envs, vectorization_mode="vector_entry_point")


def test_a_checkpoint_for_another_observation_layout_is_refused(tmp_path):
    path = other_layout_checkpoint(tmp_path)
    with pytest.raises(ValueError, match=r"cannot be loaded: .*old_layout.pt does not fit.*observation layout "
                                         r"version 99, this spoilfive_env has version 1"):
        SpoilFiveGymEnv(opponents=str(path))
    with pytest.raises(ValueError, match=r"opponents\[2\]=.*old_layout.pt"):
        LearnerBatch(2, opponents=["random", "random", path])


def test_reset_options_are_refused_by_the_single_env():
    env = SpoilFiveGymEnv(opponents="random")
    with pytest.raises(ValueError, match=r"unknown reset options 'dealer'"):
        env.reset(options={"dealer": 0})
    _, info = env.reset(options={})
    assert info["action_mask"].any()


def test_same_step_final_info_holds_zeros_for_the_games_that_did_not_end():
    # Gymnasium's SyncVectorEnv fills a key's array with zeros where its presence mask is False; a wrapper
    # reading final_info["seat"] without its mask must not see a live game's seat as a finished episode's.
    envs = SpoilFiveVectorEnv(6, num_players=3, opponents="random", illegal_action="penalty",
                              autoreset_mode="SAME_STEP", seat=2)
    _, infos = envs.reset(seed=0)
    actions = first_legal(infos["action_mask"])
    actions[4] = int(np.flatnonzero(infos["action_mask"][4] == 0)[0])  # only game 4 ends, by a penalty
    _, _, terminated, _, infos = envs.step(actions)
    assert terminated.tolist() == [False, False, False, False, True, False]
    final_info = infos["final_info"]
    assert final_info["seat"].tolist() == [0, 0, 0, 0, 2, 0]
    assert final_info["penalty"].tolist() == terminated.tolist()
    assert not final_info["action_mask"][~terminated].any() and final_info["action_mask"][4].all()


# ---------------------------------------------------------------------- benchmark command
def test_bench_reports_both_rates_and_their_ratio(capsys):
    from spoilfive_integrations import bench

    assert bench.main(["--num-envs", "8", "--seconds", "0.05", "--rounds", "2", "--json", "--opponents", "random"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["single_steps_per_second"]) == len(report["vector_steps_per_second"]) == 2
    assert report["median_ratio"] == pytest.approx(
        np.median(np.array(report["vector_steps_per_second"]) / np.array(report["single_steps_per_second"])))
    assert report["autoreset_mode"] == "NextStep"


@pytest.mark.parametrize("mode", ["SameStep", "Disabled"])
def test_bench_measures_the_vector_env_in_each_autoreset_mode(mode, capsys):
    from spoilfive_integrations import bench

    single, vector = bench.make_envs(8, 3, "random", mode)
    assert vector.autoreset_mode.value == mode
    report = bench.run(8, 3, "random", seconds=0.05, rounds=1, envs=(single, vector))
    assert report["autoreset_mode"] == mode and report["vector_steps_per_second"][0] > 0
    assert bench.main(["--num-envs", "8", "--seconds", "0.05", "--rounds", "1", "--opponents", "random",
                       "--autoreset-mode", mode]) == 0
    assert f"VectorEnv autoreset mode {mode}" in capsys.readouterr().out.splitlines()[0]


def bench_interrupted(monkeypatch, capsys, vector_rounds: int, argv) -> tuple[int, str, str]:
    """``spoilfive_integrations.bench.main(argv)`` with Ctrl-C in the VectorEnv measurement after
    ``vector_rounds`` of them: (exit status, standard output, standard error)."""
    from spoilfive_integrations import bench

    measured = []

    def bench_vector(envs, seconds, rng):
        if len(measured) == vector_rounds:
            raise KeyboardInterrupt
        measured.append(seconds)
        return 5000.0

    monkeypatch.setattr(bench, "bench_vector", bench_vector)
    status = exit_status(bench.main, argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and len(captured.err.strip().splitlines()) == 1, captured.err
    return status, captured.out, captured.err.strip()


BENCH_TINY = ["--num-envs", "8", "--seconds", "0.01", "--rounds", "3", "--opponents", "random"]


def test_bench_ctrl_c_prints_the_rounds_finished(monkeypatch, capsys):
    status, out, err = bench_interrupted(monkeypatch, capsys, 1, [*BENCH_TINY, "--json"])
    assert status == 130 and err == "Ctrl-C: benchmark stopped; the rounds it had finished are above"
    report = json.loads(out)
    assert report["interrupted"] is True and (report["rounds"], report["rounds_asked"]) == (1, 3)
    assert len(report["single_steps_per_second"]) == len(report["vector_steps_per_second"]) == 1  # whole rounds
    assert report["vector_steps_per_second"] == [5000.0]

    status, out, err = bench_interrupted(monkeypatch, capsys, 2, BENCH_TINY)
    assert status == 130 and "2 alternated rounds" in out and "stopped by Ctrl-C: 3 were asked for" in out
    assert [line.split()[0] for line in out.splitlines()[4:]] == ["1", "2", "median"]


def test_bench_ctrl_c_in_the_first_round_reports_nothing(monkeypatch, capsys):
    status, out, err = bench_interrupted(monkeypatch, capsys, 0, BENCH_TINY)
    assert status == 130 and out == ""
    assert err == "Ctrl-C: benchmark stopped before the first round finished, nothing to report"


def test_bench_adapters_reports_each_installed_door_s_rate_and_its_share_of_the_vector_env_s(capsys):
    from spoilfive_integrations import bench

    assert bench.main([*BENCH_TINY[:-2], "--rounds", "2", "--opponents", "greedy", "--adapters", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    present, skipped = bench.installed_adapters()
    assert list(report["adapters"]) == present and report["skipped"] == skipped and present
    assert report["adapters"]["sb3"] == "SpoilFiveSB3VecEnv" and report["rounds"] == 2
    for name in present:
        rates = np.array(report["adapter_steps_per_second"][name])
        assert len(rates) == 2 and (rates > 0).all()
        np.testing.assert_allclose(report["share_of_vector_per_round"][name],
                                   rates / np.array(report["vector_steps_per_second"]))
        assert report["median_share_of_vector"][name] == pytest.approx(
            np.median(report["share_of_vector_per_round"][name]))
    assert bench.main([*BENCH_TINY[:-2], "--rounds", "1", "--adapters"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("Learner steps per second, 4 players against 'spoiler', 8 games, 1 alternated round")
    assert table[-2].split()[0] == "1" and table[-1].split()[0] == "median" and len(table[-1].split()) == 2 + 2 * len(
        present)


@pytest.mark.parametrize("door", ["sb3", "tianshou", "rllib"])
def test_bench_adapters_count_a_learner_step_for_every_game_asked_and_play_only_legal_actions(door, monkeypatch):
    """Each door made as the benchmark makes it refuses an illegal action, so a run of many hands shows that the
    actions come from the current masks, those of restarted games included; the count is that of the learner's
    decisions (RLlib: of the games asked, fewer as games end; its reset step counts none)."""
    from spoilfive_integrations import bench

    module, _, make, measure = bench.ADAPTERS[door]
    pytest.importorskip(module)
    env = make(6, 3, "random", 0)
    assert getattr(env, "illegal_action", getattr(getattr(env, "batch", None), "illegal_action", None)) == "raise"
    decisions = []
    if door == "rllib":
        step = env.step

        def counted(actions):
            decisions.append(len(actions))
            return step(actions)

        env.step = counted
    fake_clock(monkeypatch, bench)
    rate = measure(env, 120.5, np.random.default_rng(0))  # 120 loop turns, 121 clock ticks
    if door == "rllib":
        assert len(decisions) < 120 and min(decisions) < 6  # resets took turns; ended games were not asked
        assert rate * 121 == pytest.approx(sum(decisions))
    else:
        assert rate * 121 == pytest.approx(6 * 120)


def test_bench_adapters_ctrl_c_keeps_the_rounds_finished(monkeypatch, capsys):
    from spoilfive_integrations import bench

    turns = []

    def measure(env, seconds, rng):
        turns.append(seconds)
        if len(turns) == 3:  # the second round's VectorEnv
            raise KeyboardInterrupt
        return 1000.0 * len(turns)

    monkeypatch.setattr(bench, "bench_vector", measure)
    monkeypatch.setattr(bench, "ADAPTERS", {"sb3": (*bench.ADAPTERS["sb3"][:3], measure)})
    status = exit_status(bench.main, [*BENCH_TINY, "--adapters", "--json"])
    captured = capsys.readouterr()
    assert status == 130 and captured.err.strip() == "Ctrl-C: benchmark stopped; the rounds it had finished are above"
    report = json.loads(captured.out)
    assert report["rounds"] == 1 and report["vector_steps_per_second"] == [1000.0]
    assert report["share_of_vector_per_round"] == {"sb3": [2.0]} and report["interrupted"] is True


@pytest.mark.parametrize("argv, message", [
    (["--adapters", "--autoreset-mode", "SameStep"], "--autoreset-mode SameStep is not allowed with --adapters"),
    (["--adapters", "--opponents", "nobody"], "unknown agent 'nobody'"),
    (["--players", "11"], "--players: '11' is not allowed: Spoil Five takes 2 to 10 players"),
    (["--opponents", "nobody"], "unknown agent 'nobody'"),
    (["--num-envs", "0"], "--num-envs: '0' is not allowed"),
    (["--seconds", "nan"], "--seconds nan is not allowed: give 0.01 to 3600 seconds"),
    (["--seconds", "abc"], "--seconds: 'abc' is not a number: give 0.01 to 3600 seconds"),
    (["--seconds", "1e300"], "--seconds 1e+300 is not allowed: give 0.01 to 3600 seconds"),
    (["--seconds", "1e-300"], "--seconds 1e-300 is not allowed: give 0.01 to 3600 seconds"),  # ZeroDivisionError
    (["--seconds", "0"], "--seconds 0 is not allowed: give 0.01 to 3600 seconds"),
    (["--num-envs", str(10**12)], "--num-envs=1000000000000 is not allowed here"),
    (["--rounds", str(10**9)], "--rounds 1000000000 is not allowed: give 1 to 1000 rounds"),
    (["--autoreset-mode", "same"], "--autoreset-mode: invalid choice: 'same' (choose from 'NextStep', 'SameStep', "
                                   "'Disabled')"),
])
def test_bench_answers_bad_input_with_one_line(argv, message, capsys):
    from spoilfive_integrations import bench

    with pytest.raises(SystemExit) as exit_info:
        bench.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def fake_clock(monkeypatch, bench):
    """The benchmark's clock stood in for by one that reads 0, 1, 2, ... at each call, so a measurement of
    ``seconds`` seconds takes a known number of steps and its rate is exact."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))


@pytest.mark.parametrize("mode", ["NextStep", "SameStep", "Disabled"])
def test_bench_counts_a_learner_step_for_every_game_but_those_restarting_in_that_step(mode, monkeypatch):
    """Under next-step autoreset the step after a game's end only deals it anew (Gymnasium's convention): it is
    no learner step for that game. 30 steps of 6 games; the count is checked against the games that ended in
    the step before each one (none of them restart in a step under the other modes)."""
    from spoilfive_integrations import bench

    _, vector = bench.make_envs(6, 3, "random", mode)
    vector.reset(seed=0)
    step, restarting = vector.step, []

    def recorded_step(actions):
        restarting.append(ended[0] if mode == "NextStep" else np.zeros(6, bool))
        observations, rewards, terminated, truncated, infos = step(actions)
        ended[0] = terminated | truncated
        return observations, rewards, terminated, truncated, infos

    ended = [np.zeros(6, bool)]
    vector.step = recorded_step
    fake_clock(monkeypatch, bench)
    rate = bench.bench_vector(vector, 30.5, np.random.default_rng(0))  # 30 steps, 31 clock ticks
    assert len(restarting) == 30
    if mode == "NextStep":
        assert any(map(np.any, restarting))  # some games did restart: the count below means something
    assert rate * 31 == pytest.approx(6 * 30 - sum(map(np.sum, restarting)))


def test_bench_after_a_masked_reset_plays_the_new_deals_legal_actions(monkeypatch):
    """Under disabled autoreset the ended games are dealt anew by reset(options={"reset_mask": ...}): the next
    actions are chosen from the masks of those new deals, so none is illegal (the env raises on one)."""
    from spoilfive_integrations import bench

    _, vector = bench.make_envs(8, 3, "random", "Disabled")
    vector.reset(seed=1)
    fake_clock(monkeypatch, bench)
    assert bench.bench_vector(vector, 200.5, np.random.default_rng(1)) == pytest.approx(8 * 200 / 201)


def test_bench_command_defaults_and_flags_reach_the_measurement(monkeypatch, capsys):
    """The command's defaults are the README's (512 games, 4 players against spoiler, 3 rounds of 2 s, seed 0);
    --seed and the largest --rounds allowed reach the run as given."""
    from spoilfive_integrations import bench

    runs = []

    def run(num_envs, num_players, opponents, seconds, rounds, seed, envs):
        runs.append((num_envs, num_players, opponents, seconds, rounds, seed, envs[1].num_envs))
        return {"rounds": 0}

    monkeypatch.setattr(bench, "run", run)
    assert bench.main(["--json"]) == 0
    assert bench.main(["--json", "--num-envs", "8", "--rounds", "1000", "--seed", "5", "--opponents", "random"]) == 0
    assert runs == [(512, 4, "spoiler", 2.0, 3, 0, 512), (8, 4, "random", 2.0, 1000, 5, 8)]
