"""The libraries' own doors into the environment: SB3, RLlib, TorchRL, Tianshou and CleanRL.

Each library is used the way its own docs use a Gymnasium or PettingZoo environment, with
this project's documented call; the runs are short, and the ones that must learn are checked
against ``random`` with a confidence interval, never against a speed.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from conftest import load_script, random_legal

import spoilfive_env
from agents import load_agent
from agents.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


# Tianshou 2 needs Python 3.11: on 3.10 the test extra leaves it out (pyproject.toml) and its tests skip.
needs_tianshou = pytest.mark.skipif(importlib.util.find_spec("tianshou") is None,
                                    reason="Tianshou 2 needs Python 3.11 or newer")
# TorchRL 0.13 needs torch 2.7 (TensorDict's hoptorch): the floors job's run on torch 2.4 leaves it out.
needs_torchrl = pytest.mark.skipif(importlib.util.find_spec("torchrl") is None,
                                   reason="TorchRL is not installed (it needs torch 2.7 or newer)")


def load_example(name: str):
    """Import ``examples/<name>.py`` as a module (the examples folder is not a package)."""
    return load_script(f"examples/{name}.py", f"example_{name}")


@pytest.fixture(autouse=True)
def one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.mark.parametrize("module_name", ["spoilfive_integrations.sb3", "spoilfive_integrations.rllib"])
def test_docstring_examples(module_name):
    module = importlib.import_module(module_name)
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


# ---------------------------------------------------------------------- SB3 / sb3-contrib
def test_maskable_ppo_runs_on_the_registered_single_seat_env_with_no_wrapper():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    env = gymnasium.make("spoilfive/SpoilFive-v0", num_players=3, opponents="random")  # illegal_action="raise"
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0)
    vec_env = model.get_env()
    assert is_masking_supported(vec_env)
    observation = vec_env.reset()
    masks = get_action_masks(vec_env)
    assert masks.shape == (1, spoilfive_env.NUM_ACTIONS) and masks.dtype == bool
    assert np.array_equal(masks[0], env.unwrapped.action_masks())
    model.learn(256)  # an illegal action would raise in "raise" mode
    action, _ = model.predict(observation, action_masks=masks)
    assert masks[0, action[0]]


@pytest.mark.filterwarnings("ignore:.*render_mode='rgb_array':UserWarning")  # Gymnasium's, before SB3's retry
def test_sb3_make_vec_env_makes_the_registered_id_as_it_is():
    """SB3 asks for render_mode="rgb_array" and retries without it only on a TypeError: the refusal was a
    ValueError alone, so make_vec_env("spoilfive/SpoilFive-v0") failed (and SubprocVecEnv's worker died)."""
    from stable_baselines3.common.env_util import make_vec_env

    vec_env = make_vec_env("spoilfive/SpoilFive-v0", n_envs=2, seed=0, env_kwargs={"opponents": "random"})
    observations = vec_env.reset()
    assert observations.shape[0] == 2 and vec_env.get_attr("render_mode") == [None, None]
    masks = np.stack(vec_env.env_method("action_masks"))
    vec_env.step(masks.argmax(axis=1))
    vec_env.close()


def test_sb3_vec_env_follows_sb3_autoreset_and_mask_conventions():
    from sb3_contrib.common.maskable.utils import get_action_masks

    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    venv = SpoilFiveSB3VecEnv(num_envs=16, num_players=4, opponents="random", seed=3)
    observations = venv.reset()
    rng = np.random.default_rng(0)
    seen_done = 0
    for _ in range(40):
        masks = get_action_masks(venv)
        assert np.array_equal(masks, venv.action_masks()) and masks.any(axis=1).all()
        actions = random_legal(rng, masks)
        played = venv.core.played_by >= 0
        observations, rewards, dones, infos = venv.step(actions)
        assert observations.shape == (16, spoilfive_env.OBS_DIM) and rewards.shape == (16,)
        for game in np.flatnonzero(dones):
            seen_done += 1
            assert infos[game]["terminal_observation"].shape == (spoilfive_env.OBS_DIM,)
            assert not np.array_equal(infos[game]["terminal_observation"], observations[game])
            assert venv.core.trick_number[game] == 0  # the returned row is the new hand's start
        assert all("terminal_observation" not in infos[game] for game in np.flatnonzero(~dones))
        # and a game that did not end goes on with its hand: every card played stays played
        assert (venv.core.played_by[~dones] >= 0)[played[~dones]].all()
    assert seen_done > 16

    again = SpoilFiveSB3VecEnv(num_envs=16, num_players=4, opponents="random")
    again.seed(3)
    assert np.array_equal(again.reset(), SpoilFiveSB3VecEnv(num_envs=16, num_players=4, opponents="random",
                                                            seed=3).reset())


def test_sb3_vec_env_ends_every_finished_hand_at_once_with_its_last_observation():
    """SB3's autoreset: a hand that ends, on the learner's move or on an opponent's, is done at that very step,
    its ``terminal_observation`` is that hand's last view (a finished hand: its tricks taken), and every row
    returned is a live hand at its learner's turn."""
    from spoilfive_env.core import PHASE_DONE
    from spoilfive_env.observation import decode_observation
    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    venv = SpoilFiveSB3VecEnv(num_envs=16, num_players=3, opponents="random", seed=5)
    venv.reset()
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(30):
        dealers, learners = venv.core.dealer.astype(np.int64), venv.batch.seat.astype(np.int64)
        _, _, dones, infos = venv.step(random_legal(rng, venv.action_masks()))
        core, seats = venv.core, venv.batch.seat
        assert (core.phase != PHASE_DONE).all() and (core.current == seats).all(), "every hand waits for its learner"
        for game in np.flatnonzero(dones):
            ended += 1
            last = decode_observation(infos[game]["terminal_observation"])
            assert last["phase"] == "done" and sum(last["tricks_won"]) >= 3, "the ended hand's last view"
            assert last["dealer"] == (dealers[game] - learners[game]) % 3, "seen by that game's learning seat"
    assert ended > 16


def test_sb3_vec_env_refuses_or_penalises_an_illegal_action():
    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    strict = SpoilFiveSB3VecEnv(num_envs=4, opponents="random", seed=1)
    strict.reset()
    illegal = np.argmin(strict.action_masks(), axis=1)
    before = strict.core.subset(np.arange(4))
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(illegal)
    assert np.array_equal(before.holder, strict.core.holder) and np.array_equal(before.current, strict.core.current)

    lenient = SpoilFiveSB3VecEnv(num_envs=4, opponents="random", seed=1, illegal_action="penalty")
    lenient.reset()
    actions = np.argmax(lenient.action_masks(), axis=1)
    actions[2] = np.argmin(lenient.action_masks()[2])
    _, rewards, dones, infos = lenient.step(actions)
    assert dones[2] and rewards[2] < 0 and infos[2]["penalty"] and "terminal_observation" in infos[2]


def test_sb3_vec_env_flags_a_penalty_only_on_the_game_that_played_the_illegal_action():
    """Under ``illegal_action="penalty"`` ``infos[g]["penalty"]`` marks the offending game alone: hands that
    end by play at the same step (and at every other step) carry no penalty flag."""
    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    venv = SpoilFiveSB3VecEnv(num_envs=16, num_players=3, opponents="random", seed=2, illegal_action="penalty")
    venv.reset()
    rng = np.random.default_rng(4)
    ended_by_play = 0
    for step in range(30):
        masks = venv.action_masks()
        actions = random_legal(rng, masks)
        offender = step % 16 if step % 5 == 4 else None  # an illegal action now and then, in one game
        if offender is not None:
            actions[offender] = np.argmin(masks[offender])
        _, _, dones, infos = venv.step(actions)
        for game in np.flatnonzero(dones):
            if game == offender:
                assert infos[game]["penalty"] is True
            else:
                ended_by_play += 1
                assert "penalty" not in infos[game], f"game {game} ended by play, not by a penalty"
        if offender is not None:
            assert dones[offender]
    assert ended_by_play > 16


def test_sb3_vec_env_seed_reproduces_the_seats_drawn_at_every_autoreset():
    """With the seat drawn per episode, one seed repeats the whole run: the seats of the hands that SB3's
    autoreset starts come from the seeded stream too, not only those of the first reset."""
    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    def run():
        venv = SpoilFiveSB3VecEnv(num_envs=8, num_players=4, opponents="random", seed=6)
        venv.reset()
        seats, restarts = [], 0
        for _ in range(25):
            _, _, dones, _ = venv.step(np.argmax(venv.action_masks(), axis=1))
            restarts += int(dones.sum())
            seats.append(venv.batch.seat.tolist())
        return seats, restarts

    (seats, restarts), (again, _) = run(), run()
    assert restarts >= 8 and seats == again


def test_sb3_policy_agent_plays_only_legal_actions_and_self_play_refreshes_the_opponents():
    from sb3_contrib import MaskablePPO

    from spoilfive_integrations.sb3 import SB3PolicyAgent, SelfPlayCallback, SpoilFiveSB3VecEnv

    venv = SpoilFiveSB3VecEnv(num_envs=8, num_players=4, opponents="random", seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0)
    callback = SelfPlayCallback(refresh_steps=8)
    model.learn(256, callback=callback)
    assert callback.snapshots == 1 + 256 // (8 * 8)
    assert all(agent.name.startswith("snapshot") for agent in venv.batch.lineup.agents)

    agent = SB3PolicyAgent(model.policy, seed=1)
    core = spoilfive_env.SpoilFiveCore(64, rules=spoilfive_env.Rules(num_players=4), seed=2)
    masks = core.legal_mask()
    actions = agent.act_batch(core.observe(), masks)
    assert masks[np.arange(64), actions].all()
    assert np.array_equal(actions, SB3PolicyAgent(model.policy, seed=1).act_batch(core.observe(), masks))
    frozen = SB3PolicyAgent(model.policy, greedy=True)
    greedy = frozen.act_batch(core.observe(), masks)
    torch.manual_seed(0)
    with torch.no_grad():  # training goes on: the snapshot keeps the policy it was made from
        for parameter in model.policy.parameters():
            parameter.normal_(0, 1)
    assert np.array_equal(frozen.act_batch(core.observe(), masks), greedy)
    assert not np.array_equal(SB3PolicyAgent(model.policy, greedy=True).act_batch(core.observe(), masks), greedy)
    with pytest.raises(ValueError, match="refresh_steps=0 is not allowed: it must be an integer, 1 or more"):
        SelfPlayCallback(refresh_steps=0)


def test_self_play_refreshes_at_the_start_and_every_refresh_steps_each_snapshot_with_its_own_seed():
    from sb3_contrib import MaskablePPO

    from spoilfive_integrations.sb3 import SelfPlayCallback, SpoilFiveSB3VecEnv

    venv = SpoilFiveSB3VecEnv(num_envs=2, num_players=3, opponents="random", seed=0)
    callback = SelfPlayCallback(refresh_steps=4, seed=10)
    callback.init_callback(MaskablePPO("MlpPolicy", venv, n_steps=8, batch_size=16, seed=0))
    callback.on_training_start({}, {})
    snapshots = []
    for _ in range(12):  # the env steps of a learn() call
        callback.on_step()
        snapshots.append(callback.snapshots)
    assert snapshots == [1] * 3 + [2] * 4 + [3] * 4 + [4]
    [agent] = venv.batch.lineup.agents
    assert agent.name == "snapshot3" and agent.seed == 10 + 3


def test_short_maskable_ppo_run_on_the_batched_vec_env_beats_random():
    from sb3_contrib import MaskablePPO

    from spoilfive_integrations.sb3 import SB3PolicyAgent, SpoilFiveSB3VecEnv

    venv = SpoilFiveSB3VecEnv(num_envs=128, num_players=4, opponents="random", seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=1024, n_epochs=4, learning_rate=1e-3,
                        gamma=1.0, ent_coef=0.01, seed=0)
    model.learn(100_000)
    agent = SB3PolicyAgent(model.policy, greedy=True, name="sb3")
    figures = evaluate([agent, "random"], num_players=4, deals=1000, seed=11)["agents"]["sb3"]
    # 4,000 hands: the 95% interval must lie above zero (an untrained policy is at 0 on average;
    # seeds 0-3 of this run give +0.07 to +0.11 with intervals of about 0.03).
    assert figures["mean_equity"] - figures["equity_ci95"] > 0, figures


# ---------------------------------------------------------------------- RLlib
def legal_actions(observations, rng) -> dict:
    """A uniformly random legal action for each agent asked to act."""
    return {aid: int(rng.choice(np.flatnonzero(view["action_mask"]))) for aid, view in observations.items()}


def illegal_action(view) -> int:
    """The first action the view's mask forbids."""
    return int(np.flatnonzero(view["action_mask"] == 0)[0])


def dealt(observations) -> dict:
    """Each agent's observation as a list: what a deal shows."""
    return {aid: view["observation"].tolist() for aid, view in observations.items()}


def assert_every_agent_observed_at_the_end(env, observations):
    """The episode's last step observes every agent once more, asking nothing: each one's own final view of its
    game, with an all-ones mask (``rllib.final_observations``)."""
    assert sorted(observations) == sorted(env.possible_agents)
    for aid, view in observations.items():
        if hasattr(env, "batch"):  # one learning seat a game, "g<game>"
            game, seat = int(aid[1:]), int(env.batch.seat[int(aid[1:])])
        else:
            game, seat = (int(part[1:]) for part in aid.split("_"))
        np.testing.assert_array_equal(view["observation"], env.core.observe(np.full(env.num_games, seat))[game])
        assert view["action_mask"].dtype == np.int8 and view["action_mask"].all()


def test_rllib_env_gives_each_seat_its_hand_reward_and_observes_only_the_seat_to_act():
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    env = SpoilFiveMultiAgentEnv({"num_games": 8, "num_players": 3, "illegal_action": "raise", "seed": 5})
    observations, _ = env.reset(seed=5)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    ended = set()
    rng = np.random.default_rng(1)
    done = False
    while not done:
        games = [int(aid[1:].split("_")[0]) for aid in observations]
        assert len(games) == len(set(games))  # one seat to act per game
        assert not set(games) & ended
        actions = legal_actions(observations, rng)
        observations, rewards, terminateds, truncateds, _ = env.step(actions)
        assert set(actions) <= set(rewards)  # RLlib needs a reward for every agent that acted
        for aid, reward in rewards.items():
            totals[aid] += reward
        ended |= set(np.flatnonzero(env.core.done).tolist())
        done = terminateds["__all__"]
        if not done:  # a finished game's seats wait, unasked, for the episode's end (rllib.episode_end)
            assert terminateds == {"__all__": False}
    assert ended == set(range(8)) and terminateds == {**dict.fromkeys(env.possible_agents, True), "__all__": True}
    per_game = np.array([[totals[f"g{g}_p{s}"] for s in range(3)] for g in range(8)])
    assert np.allclose(per_game.sum(axis=1), 0.0)  # equity of a hand sums to zero at every table
    assert np.abs(per_game).sum() > 0

    env.reset()
    observations, _ = env.reset()
    aid = next(iter(observations))
    with pytest.raises(ValueError, match="illegal action"):
        env.step({aid: illegal_action(observations[aid])})
    with pytest.raises(ValueError, match="num_games=0 is not allowed: it must be a positive integer"):
        SpoilFiveMultiAgentEnv({"num_games": 0})


def test_rllib_env_in_game_mode_pays_every_hand_to_every_seat():
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    env = SpoilFiveMultiAgentEnv({"num_games": 4, "num_players": 3, "mode": "game", "num_hands": 2, "seed": 2})
    observations, _ = env.reset(seed=2)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(3)
    done = False
    while not done:
        actions = legal_actions(observations, rng)
        observations, rewards, terminateds, _, _ = env.step(actions)
        for aid, reward in rewards.items():
            totals[aid] += reward
        done = terminateds["__all__"]
    # Over a whole game the equity rewards sum to each seat's chip change (CONTRACT.md).
    chips_change = env.core.chips - env.rules.starting_chips
    assert np.allclose([[totals[f"g{g}_p{s}"] for s in range(3)] for g in range(4)], chips_change)


def test_rllib_penalty_mode_ends_the_offenders_game_with_a_lost_hands_reward():
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    env = SpoilFiveMultiAgentEnv({"num_games": 4, "num_players": 4, "seed": 0})
    observations, _ = env.reset(seed=0)
    offender = next(iter(observations))
    observations, rewards, terminateds, _, _ = env.step({offender: illegal_action(observations[offender])})
    game = offender.split("_")[0]
    assert rewards[offender] == -1.0  # the ante of a hand with an empty pool before it
    assert terminateds == {"__all__": False}  # its seats wait, unasked, for the episode's end
    assert not any(aid.startswith(game + "_") for aid in observations)
    assert env.illegal_actions == 1


def test_rllib_a_forfeited_game_is_asked_nothing_more():
    """After a penalty ends a game's hand its seat is no longer asked to act: an action sent for it
    anyway is refused and changes nothing, not played on in a hand that is over."""
    from conftest import assert_same_state, core_fields

    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    env = SpoilFiveMultiAgentEnv({"num_games": 2, "num_players": 3, "seed": 1})
    observations, _ = env.reset(seed=1)
    offender = next(iter(observations))
    mask = observations[offender]["action_mask"]
    env.step({offender: int(np.flatnonzero(mask == 0)[0])})
    before = core_fields(env.core)
    with pytest.raises(ValueError, match="not asked to act"):
        env.step({offender: int(np.flatnonzero(mask)[0])})
    assert_same_state(before, core_fields(env.core))
    assert env.illegal_actions == 1


def test_rllib_a_seeded_reset_deals_the_same_hands_whatever_the_env_was_made_with():
    """``reset(seed=s)`` reseeds the deals: two envs made with different seeds deal the same after it, and the
    same env dealt again with ``s`` repeats itself."""
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    one = SpoilFiveMultiAgentEnv({"num_games": 4, "num_players": 3, "seed": 1})
    other = SpoilFiveMultiAgentEnv({"num_games": 4, "num_players": 3, "seed": 2})
    first = dealt(one.reset(seed=7)[0])
    assert dealt(other.reset(seed=7)[0]) == first
    one.reset()
    assert dealt(one.reset(seed=7)[0]) == first


def test_rllib_env_defaults_are_the_documented_ones():
    """No env_config: 64 games of 4 players, one hand an episode, equity rewards, and an illegal action penalised
    (so RLlib's pre-check passes): the defaults of the class docstring."""
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    env = SpoilFiveMultiAgentEnv()
    assert (env.num_games, env.num_players, env.core.mode, env.core.reward_mode, env.illegal_action) == \
        (64, 4, "hand", "equity", "penalty")
    assert len(env.reset(seed=0)[0]) == 64


def test_rllib_each_env_runner_deals_from_its_seed_plus_its_worker_index():
    """RLlib builds the env on every env runner with the same env_config and the runner's worker_index: seed s on
    runner i deals as seed s + i, so the runners do not all play the same deals."""
    from ray.rllib.env.env_context import EnvContext

    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    def dealt_on(seed, worker_index=0):
        config = EnvContext({"num_games": 4, "num_players": 3, "seed": seed}, worker_index=worker_index)
        return dealt(SpoilFiveMultiAgentEnv(config).reset()[0])

    assert dealt_on(5, worker_index=2) == dealt_on(7)
    assert dealt_on(5, worker_index=2) != dealt_on(5)


@pytest.mark.parametrize("env_name", ["SpoilFiveMultiAgentEnv", "SpoilFiveAgainstOpponentsEnv"])
def test_rllib_the_envs_of_one_env_runner_and_of_each_runner_are_not_copies(env_name):
    """RLlib makes every env of a runner (num_envs_per_env_runner) from one EnvContext whose vector_index is 0, and
    its pre-check resets each env it makes with seed=42: every env of every runner dealt the same games. Each
    env now has a place of its own (its runner's worker_index, its index in the runner) that it mixes into a
    seed; the first env of runner 0 keeps its seeds, and the same runner made again deals the same."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.env_context import EnvContext
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

    import spoilfive_integrations.rllib as rllib

    env_class = getattr(rllib, env_name)
    env_config = {"num_games": 8, "num_players": 3, "seed": 0}

    def runner_deals():
        config = (PPOConfig().environment(env_class, env_config=env_config)
                  .env_runners(num_env_runners=0, num_envs_per_env_runner=3)
                  .multi_agent(policies={"shared"}, policy_mapping_fn=rllib.shared_policy)
                  .rl_module(rl_module_spec=rllib.masked_module_spec(hidden=(16,))))
        runner = MultiAgentEnvRunner(config=config)
        try:
            return [env.unwrapped.core.turnup.tolist() for env in runner.env.envs]
        finally:
            runner.stop()

    deals = runner_deals()
    assert len({tuple(turnups) for turnups in deals}) == 3 and runner_deals() == deals
    plain = env_class(env_config)  # made by hand: reset(seed=s) deals as seed s, exactly
    plain.reset(seed=42)
    assert plain.core.turnup.tolist() == deals[0]
    remote = env_class(EnvContext(env_config, worker_index=1))  # another runner's first env
    remote.reset(seed=42)
    assert remote.core.turnup.tolist() not in deals


def test_rllib_reset_with_seed_0_reseeds_as_any_other_seed_does():
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    env = SpoilFiveMultiAgentEnv({"num_games": 4, "num_players": 3, "seed": 1})
    first = dealt(env.reset(seed=0)[0])
    env.reset()  # the generator moves on
    assert dealt(env.reset(seed=0)[0]) == first


def test_rllib_forfeits_are_counted_per_offender_and_last_until_the_next_reset():
    """Two games forfeit in one step and a third in the next: each offender is counted and pays, and no forfeited
    game is observed again while the fourth plays on; the episode ends with it. Every game forfeited at once ends
    the episode there. A reset deals every game afresh: each one is asked to act and takes an action again."""
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    env = SpoilFiveMultiAgentEnv({"num_games": 4, "num_players": 3, "seed": 1})
    observations, _ = env.reset(seed=1)
    first, second, third, fourth = sorted(observations)  # the seat to act in each game, g0 to g3
    observations, rewards, terminated, _, _ = env.step({aid: illegal_action(observations[aid])
                                                         for aid in (first, second)})
    assert env.illegal_actions == 2 and not terminated["__all__"]
    # each offender pays his ante (the pools were empty), the other seats of his game nothing
    assert {aid: reward for aid, reward in rewards.items() if reward} == {first: -1.0, second: -1.0}
    assert {first, second} - {"g0_p0", "g1_p0"}  # an offender not at seat 0: the reward is the offender's own
    rng = np.random.default_rng(0)
    observations, _, terminated, _, _ = env.step({third: illegal_action(observations[third]),
                                                  fourth: legal_actions({fourth: observations[fourth]}, rng)[fourth]})
    assert env.illegal_actions == 3
    while not terminated["__all__"]:
        assert {aid.split("_")[0] for aid in observations} == {"g3"}  # the earlier forfeits too stay out
        observations, _, terminated, _, _ = env.step(legal_actions(observations, rng))
    assert_every_agent_observed_at_the_end(env, observations)

    observations, _ = env.reset()
    observations, _, terminated, _, _ = env.step({aid: illegal_action(view) for aid, view in observations.items()})
    assert env.illegal_actions == 7 and terminated["__all__"]
    assert_every_agent_observed_at_the_end(env, observations)

    observations, _ = env.reset()
    assert len(observations) == 4
    observations, _, terminated, _, _ = env.step(legal_actions(observations, rng))
    assert not terminated["__all__"] and len(observations) == 4  # no hand ends on its first card


def test_rllib_observations_are_those_of_the_seat_to_act_in_their_own_game():
    """Once some games have ended, each observation and mask is still its own game's, from the seat to act there
    (compared with the core's view of the whole batch, row by game)."""
    from spoilfive_integrations.rllib import SpoilFiveMultiAgentEnv

    env = SpoilFiveMultiAgentEnv({"num_games": 6, "num_players": 3, "seed": 3})
    observations, _ = env.reset(seed=3)
    offender = min(observations)  # game 0 forfeits: the games still asked are 1-5, not the first five rows
    observations, *_ = env.step({offender: illegal_action(observations[offender])})
    rng = np.random.default_rng(2)
    terminated = {"__all__": False}
    while not terminated["__all__"]:
        views, masks = env.core.observe(), env.core.legal_mask()
        for aid, view in observations.items():
            game, seat = (int(part[1:]) for part in aid.split("_"))
            assert game != 0 and seat == env.core.current_player[game]
            assert np.array_equal(view["observation"], views[game])
            assert np.array_equal(view["action_mask"], masks[game].astype(np.int8))
        observations, _, terminated, _, _ = env.step(legal_actions(observations, rng))
    assert_every_agent_observed_at_the_end(env, observations)


def test_rllib_module_gives_illegal_actions_no_chance_and_its_policy_agent_plays_its_weights():
    """The module built from masked_module_spec has the encoding it was given; its action distribution puts
    probability 0 on every illegal action; policy_agent plays the module's own network (its greedy action)."""
    from ray.rllib.core.columns import Columns

    from spoilfive_integrations.rllib import SHARED_POLICY, SpoilFiveMultiAgentEnv, masked_module_spec, policy_agent

    env = SpoilFiveMultiAgentEnv({"num_games": 16, "num_players": 4, "seed": 0})
    observations, _ = env.reset(seed=0)
    spec = masked_module_spec(hidden=(16,), encoding="raw").rl_module_specs[SHARED_POLICY]
    spec.observation_space, spec.action_space = env.observation_spaces["g0_p0"], env.action_spaces["g0_p0"]
    torch.manual_seed(0)
    module = spec.build()
    assert module.net.encoding == "raw"
    obs = np.stack([view["observation"] for view in observations.values()])
    masks = np.stack([view["action_mask"] for view in observations.values()])
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: {"observation": torch.as_tensor(obs),
                                                         "action_mask": torch.as_tensor(masks)}})
    logits = logits[Columns.ACTION_DIST_INPUTS]
    probabilities = torch.softmax(logits, dim=1).numpy()
    assert (probabilities[masks == 0] == 0).all() and np.allclose(probabilities.sum(axis=1), 1)
    torch.manual_seed(1)  # a network built afresh would have other weights
    agent = policy_agent(module)
    assert agent.net.encoding == "raw"
    assert np.array_equal(agent.act_batch(obs, masks.astype(bool)), logits.argmax(dim=1).numpy())


def test_a_seat_absent_from_a_sample_counts_zero_steps_not_nan():
    """ray-project/ray#62635: RLlib sums each agent id's sampled steps, and an id seen in an earlier
    sample but absent from this one reads NaN, which stopped small-batch runs of the example."""
    pytest.importorskip("ray.rllib")
    from ray.rllib.utils.metrics import NUM_AGENT_STEPS_SAMPLED
    from ray.rllib.utils.metrics.metrics_logger import MetricsLogger

    from spoilfive_integrations.rllib import count_seats_that_did_not_act

    def second_sample(callback):
        logger = MetricsLogger()
        for aid in ("g0_p0", "g0_p1"):
            logger.log_value((NUM_AGENT_STEPS_SAMPLED, aid), 1, reduce="sum")
        logger.reduce()  # the end of the first sample
        for _ in range(2):
            logger.log_value((NUM_AGENT_STEPS_SAMPLED, "g0_p0"), 1, reduce="sum")  # g0_p1 does not act
        if callback:
            callback(metrics_logger=logger, env_runner=None, samples=[])
        return {aid: float(stat) for aid, stat in logger.reduce()[NUM_AGENT_STEPS_SAMPLED].items()}

    plain, mended = second_sample(None), second_sample(count_seats_that_did_not_act)
    if np.isnan(plain["g0_p1"]):  # RLlib's own count, NaN in 2.60 (what made int() fail)
        assert mended == {"g0_p0": 2.0, "g0_p1": 0.0}
    else:  # RLlib 2.49 sums over the samples, so an absent seat keeps its count: the callback adds nothing
        assert mended == plain and not np.isnan(list(mended.values())).any()
    example = load_example("rllib_ppo")
    config = example.build_config(example.parse_args([]))
    assert config.callbacks_on_sample_end is count_seats_that_did_not_act


def test_one_rllib_ppo_iteration_of_the_example_passes_the_pre_check_and_plays_no_illegal_action():
    import ray

    example = load_example("rllib_ppo")
    args = example.parse_args(["--num-games", "16", "--batch-size", "512", "--minibatch-size", "256",
                               "--epochs", "1", "--hidden", "32", "32"])
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        algo = example.build_config(args).build_algo()  # runs RLlib's env pre-check (unmasked samples)
        env = algo.env_runner.env.envs[0].unwrapped
        after_check = env.illegal_actions
        result = algo.train()
        assert sum(result["env_runners"]["num_module_steps_sampled"].values()) >= 512
        assert env.illegal_actions == after_check  # the masking module never plays an illegal action
        agent = example.policy_agent(algo.get_module(example.SHARED_POLICY))
        assert evaluate([agent, "random"], num_players=4, deals=5, seed=0)["hands"] == 20
        algo.stop()
    finally:
        ray.shutdown()



# ---------------------------------------------------------------------- RLlib: one seat a game against opponents
def against_opponents(num_games: int, **config):
    from spoilfive_integrations.rllib import SpoilFiveAgainstOpponentsEnv

    return SpoilFiveAgainstOpponentsEnv({"num_games": num_games, **config})


@pytest.mark.parametrize("players, opponents, illegal_action, mode", [
    (3, "spoiler", "raise", "hand"), (5, "greedy", "penalty", "hand"), (4, "spoiler", "raise", "game")])
def test_rllib_opponents_env_gives_what_the_plain_vector_env_gives(players, opponents, illegal_action, mode):
    """For the same actions, from the same seed, each game's first episode is what the Gymnasium vector env gives:
    the observation and mask of its learning seat (only while its game plays), its reward after the opponents'
    replies, its end; and a reseeded reset deals both alike again. The opponents are rule players, which draw no
    random numbers, so the plain env's restarts of its ended games (``reset_mask``) change no other game's hand.
    Under ``illegal_action="penalty"`` some actions are illegal, and each is penalised as the plain env penalises
    it. ``mode="game"`` plays several hands an episode, each dealt from the one generator, so there the two are
    compared up to the first game's end, with hands paid and dealt again inside the episode before it."""
    games, rng = 6, np.random.default_rng(players)
    options = {"num_players": players, "opponents": opponents, "illegal_action": illegal_action, "mode": mode}
    env = against_opponents(games, seed=7, **options)
    plain = gymnasium.make_vec("spoilfive/SpoilFive-v0", num_envs=games, vectorization_mode="vector_entry_point",
                               autoreset_mode="Disabled", **options)
    for seed in (None, 11):  # the constructor's seed, then a reseeding reset
        observations, _ = env.reset(seed=seed)
        plain_observations, plain_infos = plain.reset(seed=7 if seed is None else seed)
        np.testing.assert_array_equal(env.seats, plain_infos["seat"])
        playing, steps, penalised, paid_inside, counted = np.ones(games, bool), 0, 0, False, env.illegal_actions
        while playing.any():
            assert sorted(observations) == [f"g{game}" for game in np.flatnonzero(playing)]
            for game in np.flatnonzero(playing):
                view = observations[f"g{game}"]
                np.testing.assert_array_equal(view["observation"], plain_observations[game])
                np.testing.assert_array_equal(view["action_mask"], plain_infos["action_mask"][game])
            actions = random_legal(rng, plain_infos["action_mask"])
            if illegal_action == "penalty":
                actions = np.where(rng.random(games) < 0.1, rng.integers(0, 107, games), actions)
            observations, rewards, terminated, truncated, _ = env.step(
                {f"g{game}": int(actions[game]) for game in np.flatnonzero(playing)})
            plain_observations, plain_rewards, plain_terminated, _, plain_infos = plain.step(actions)
            assert sorted(rewards) == [f"g{game}" for game in np.flatnonzero(playing)]
            for game in np.flatnonzero(playing):
                assert rewards[f"g{game}"] == plain_rewards[game]
            if illegal_action == "penalty":
                penalised += int((plain_infos["penalty"] & playing).sum())
            paid_inside |= bool((plain_rewards[playing & ~plain_terminated] != 0).any())
            ended_now = playing & plain_terminated
            playing &= ~plain_terminated
            # A game that ended is no longer observed until the last ends; then every agent is, and every agent is
            # terminated (rllib.episode_end): the last games' final views are the plain env's.
            if playing.any():
                assert sorted(observations) == [f"g{game}" for game in np.flatnonzero(playing)]
            else:
                assert_every_agent_observed_at_the_end(env, observations)
                for game in np.flatnonzero(ended_now):
                    np.testing.assert_array_equal(observations[f"g{game}"]["observation"], plain_observations[game])
            assert terminated == ({**dict.fromkeys(env.possible_agents, True), "__all__": True} if not playing.any()
                                  else {"__all__": False}) and truncated == {"__all__": False}
            steps += 1
            if plain_terminated.any():
                if mode == "game":  # a new game's deal would draw from the one generator
                    break
                plain_observations, plain_infos = plain.reset(options={"reset_mask": plain_terminated})
        if mode == "game":
            assert steps >= 10 and paid_inside
            continue
        assert steps >= 3
        assert env.illegal_actions - counted == penalised
        assert (penalised > 0) == (illegal_action == "penalty")


def test_rllib_opponents_env_asks_only_the_games_it_is_given_and_each_ended_game_nothing_more():
    """A step moves the games of its dict only (the others see their observation again, unchanged); a game whose
    episode ended is neither observed nor allowed to act until the next reset, and every agent is terminated
    with the last game's end (``episode_end``)."""
    env = against_opponents(4, num_players=4, opponents="random", seed=3)
    observations, _ = env.reset()
    before = {aid: view["observation"].copy() for aid, view in observations.items()}
    rng = np.random.default_rng(0)
    moved = {aid: int(random_legal(rng, observations[aid]["action_mask"])) for aid in ("g3", "g1")}
    observations, rewards, terminated, _, _ = env.step(moved)
    assert sorted(rewards) == ["g1", "g3"] and terminated == {"__all__": False}
    for aid in ("g0", "g2"):
        np.testing.assert_array_equal(observations[aid]["observation"], before[aid])
    for aid in ("g1", "g3"):
        assert not np.array_equal(observations[aid]["observation"], before[aid])
    ends = []
    while not terminated["__all__"]:
        asked = set(observations)
        observations, rewards, terminated, _, _ = env.step(
            {aid: int(random_legal(rng, view["action_mask"])) for aid, view in observations.items()})
        assert set(rewards) == asked
        if terminated["__all__"]:  # the games asked last end now, and every agent is observed once more
            ends += sorted(asked)
            assert terminated == {"g0": True, "g1": True, "g2": True, "g3": True, "__all__": True}
            assert_every_agent_observed_at_the_end(env, observations)
        else:
            assert set(observations) <= asked and terminated == {"__all__": False}
            ends += sorted(asked - set(observations))
    assert sorted(ends) == ["g0", "g1", "g2", "g3"]
    holders = env.core.holder.copy()
    with pytest.raises(ValueError, match=r"actions for agents whose game ended: \['g2'\]"):
        env.step({"g2": 0})
    np.testing.assert_array_equal(env.core.holder, holders)
    observations, _ = env.reset()
    assert sorted(observations) == ["g0", "g1", "g2", "g3"]


def test_rllib_opponents_env_reseeded_deals_the_same_hands_seats_and_opponent_moves_again():
    """A seeded reset reproduces the deals, the learning seats and the ``random`` opponents' moves, whatever the env
    was made with; each RLlib worker adds its ``worker_index`` to the config's seed."""
    from ray.rllib.env.env_context import EnvContext

    def first_steps(env, seed):
        observations, _ = env.reset(seed=seed)
        rng, seen = np.random.default_rng(1), [env.seats.tolist(), dealt(observations)]
        for _ in range(2):
            observations, rewards, *_ = env.step(
                {aid: int(random_legal(rng, view["action_mask"])) for aid, view in observations.items()})
            seen += [dealt(observations), rewards]
        return seen

    one, other = against_opponents(8, opponents="random", seed=1), against_opponents(8, opponents="random")
    assert first_steps(one, 5) == first_steps(other, 5) != first_steps(other, 6)
    worker_one = against_opponents(8, opponents="random", seed=4)
    worker = type(worker_one)(EnvContext({"num_games": 8, "opponents": "random", "seed": 3}, worker_index=1))
    assert first_steps(worker, None) == first_steps(worker_one, None)


def test_rllib_opponents_env_defaults_are_the_documented_ones_and_it_seats_new_opponents():
    env = against_opponents(2)
    assert (env.num_games, env.num_players, env.illegal_action, env.core.mode, env.core.reward_mode) == \
        (2, 4, "penalty", "hand", "equity")
    assert [agent.name for agent in env.batch.lineup.agents] == ["spoiler"]
    assert env.possible_agents == ["g0", "g1"] and env.batch.fixed_seat is None
    assert against_opponents(2, seat=2).batch.fixed_seat == 2
    env.set_opponents(["random", "greedy", "random"])
    assert [agent.name for agent in env.batch.lineup.agents] == ["random", "greedy"]


def test_new_opponents_made_from_names_repeat_after_a_seed_and_objects_keep_their_own_streams():
    """``set_opponents("random")`` after a seeded reset gives the same moves in two envs seeded alike (the new
    ``random`` draws from a stream of the seed, the k-th new lineup a stream of its own), and other moves after
    another seed; an agent object seated so keeps its generator as it is; a spec that does not load is refused,
    and the opponents stay."""
    def run(seed, changes):
        env = against_opponents(8, opponents="greedy", illegal_action="raise")
        observations, _ = env.reset(seed=seed)
        rng, seen = np.random.default_rng(0), []
        for opponents in changes:
            env.set_opponents(opponents)
            observations, rewards, *_ = env.step(
                {aid: int(random_legal(rng, view["action_mask"])) for aid, view in observations.items()})
            seen.append((dealt(observations), rewards))
        return seen

    assert run(5, ["random", "random"]) == run(5, ["random", "random"]) != run(6, ["random", "random"])
    env = against_opponents(2, seed=1)
    env.reset()
    fresh = []
    for _ in range(2):
        env.set_opponents("random")
        fresh.append(env.batch.lineup.agents[0].rng.bit_generator.state)
    assert fresh[0] != fresh[1]  # the second new lineup draws from a stream of its own, not the first's again
    own = load_agent("random", seed=3)
    state = own.rng.bit_generator.state
    env = against_opponents(2, seed=1)
    env.reset()
    env.set_opponents(own)
    assert env.batch.lineup.agents == [own] and own.rng.bit_generator.state == state
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        env.set_opponents("nobody")
    assert env.batch.lineup.agents == [own]


def rllib_example_algo(example, argv):
    """The example's PPO, built on a local Ray of one CPU (the caller shuts Ray down)."""
    import ray

    args = example.parse_args(["--num-games", "16", "--batch-size", "512", "--minibatch-size", "256", "--epochs", "1",
                               "--hidden", "32", "32", *argv])
    ray.init(num_cpus=args.num_cpus if args.num_env_runners else 1, include_dashboard=False, log_to_driver=False)
    return args, example.build_config(args).build_algo()  # runs RLlib's env pre-check (unmasked samples)


def test_one_rllib_ppo_iteration_of_the_example_s_opponents_route_learns_one_seat_a_game_legally():
    import ray

    example = load_example("rllib_ppo")
    try:
        args, algo = rllib_example_algo(example, ["--route", "opponents", "--opponents", "greedy"])
        env = algo.env_runner.env.unwrapped
        env = getattr(env, "envs", [env])[0].unwrapped
        assert type(env).__name__ == "SpoilFiveAgainstOpponentsEnv" and env.num_games == 16
        assert [agent.name for agent in env.batch.lineup.agents] == ["greedy"]
        after_check = env.illegal_actions
        result = algo.train()
        sampled = result["env_runners"]["num_module_steps_sampled"]
        assert list(sampled) == [example.SHARED_POLICY] and sampled[example.SHARED_POLICY] >= 512
        assert env.illegal_actions == after_check  # the masking module never plays an illegal action
        snapshot = example.policy_agent(algo.get_module(example.SHARED_POLICY), name="snapshot1", greedy=False)
        example.seat_snapshot(algo, snapshot)
        assert env.batch.lineup.agents == [snapshot]
        algo.train()  # against the snapshot
        assert env.illegal_actions == after_check
        algo.stop()
    finally:
        ray.shutdown()


@pytest.mark.parametrize("route, games, decisions", [("opponents", 8, 40), ("batched", 4, 10)])
def test_rllib_keeps_every_agent_s_reward_and_end_across_the_samples_that_cut_an_episode(route, games, decisions):
    """RLlib's own runner, sampling a few decisions at a time, so that most episodes are cut into chunks: over each
    episode's chunks every agent holds exactly the rewards the env gave it, and its last chunk ends terminated. That
    includes the agents whose game ended before a cut (asked nothing after it): RLlib loses their last transition
    and its reward unless the episode's last step observes them (``rllib.final_observations``)."""
    import collections

    import ray

    from spoilfive_integrations import rllib

    example = load_example("rllib_ppo")
    base = rllib.SpoilFiveAgainstOpponentsEnv if route == "opponents" else rllib.SpoilFiveMultiAgentEnv

    class Logged(base):  # each episode's rewards per agent, and the step of each agent's last action
        def reset(self, *, seed=None, options=None):
            observations, _ = super().reset(seed=seed, options=options)
            self.log = [*getattr(self, "log", []), (collections.Counter(), {}, [0])]
            return observations, {aid: {"episode": len(self.log) - 1} for aid in observations}

        def step(self, action_dict):
            observations, rewards, terminated, truncated, _ = super().step(action_dict)
            totals, last_action, steps = self.log[-1]
            totals.update(rewards)
            last_action.update(dict.fromkeys(action_dict, steps[0]))
            steps[0] += 1
            return (observations, rewards, terminated, truncated,
                    {aid: {"episode": len(self.log) - 1} for aid in observations})

    Logged.__name__ = base.__name__
    setattr(example, base.__name__, Logged)
    args = example.parse_args(["--route", route, "--num-games", str(games), "--num-players", "3", "--batch-size",
                               "512", "--minibatch-size", "128", "--epochs", "1", "--hidden", "16", "16"])
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        algo = example.build_config(args).build_algo()
        runner = algo.env_runner
        env = runner.env.unwrapped
        env = getattr(env, "envs", [env])[0].unwrapped
        chunks = collections.defaultdict(list)
        for _ in range(40):
            for part in runner.sample(num_timesteps=decisions, random_actions=False):
                chunks[part.id_].append(part)
        checked = ended_before_a_cut = 0
        for parts in chunks.values():
            parts.sort(key=lambda part: part.env_t_started)
            first = parts[0]
            if first.env_t_started != 0 or not parts[-1].is_done:
                continue  # begun before the first call, or not finished: not all of it is here
            tags = {info.get("episode") for part in parts for sa in part.agent_episodes.values()
                    for info in sa.get_infos()}
            (episode,) = tags - {None}  # every chunk of the episode tagged alike
            totals, last_action, _ = env.log[episode]
            for aid in last_action:
                held = [part.agent_episodes[aid] for part in parts if aid in part.agent_episodes]
                assert sum(float(sum(sa.get_rewards())) for sa in held) == pytest.approx(totals[aid])
                assert held[-1].is_terminated and not any(sa.is_terminated for sa in held[:-1])
                ended_before_a_cut += last_action[aid] < parts[-1].env_t_started
            checked += 1
        assert checked >= 5 and ended_before_a_cut > 0  # the case RLlib lost without the last observations
        algo.stop()
    finally:
        ray.shutdown()


def test_rllib_example_seats_a_snapshot_in_the_env_of_a_remote_env_runner():
    """With remote env runners (the driver's own has no env) the snapshot travels to each runner's env."""
    import ray

    example = load_example("rllib_ppo")
    try:
        _, algo = rllib_example_algo(example, ["--route", "opponents", "--num-env-runners", "1", "--num-cpus", "2"])
        assert algo.env_runner is None or algo.env_runner.env is None
        example.seat_snapshot(algo, load_agent("greedy"))

        def opponents(runner):
            env = runner.env.unwrapped
            return [agent.name for one in getattr(env, "envs", [env]) for agent in one.unwrapped.batch.lineup.agents]

        assert algo.env_runner_group.foreach_env_runner(opponents, local_env_runner=False) == [["greedy"]]
        algo.stop()
    finally:
        ray.shutdown()


def test_rllib_example_opponents_route_seats_a_snapshot_every_k_iterations(monkeypatch):
    """``--self-play K`` seats a fresh snapshot of the learner before iterations 1, 1 + K, ...; with no
    ``--self-play`` the ``--opponents`` stay."""
    example = load_example("rllib_ppo")
    seated = []

    class FakeAlgo:
        def train(self):
            return {"env_runners": {"num_module_steps_sampled": {"shared": 10}},
                    "timers": {"env_runner_sampling_timer": 1.0}}

        def get_module(self, policy):
            return policy

        def stop(self):
            pass

    class FakeConfig:
        def build_algo(self):
            return FakeAlgo()

    monkeypatch.setattr(example, "build_config", lambda args: FakeConfig())
    monkeypatch.setattr(example.ray, "init", lambda **kwargs: None)
    monkeypatch.setattr(example.ray, "cluster_resources", lambda: {"CPU": 2})
    monkeypatch.setattr(example, "policy_agent", lambda module, **kwargs: kwargs["name"])
    monkeypatch.setattr(example, "seat_snapshot", lambda algo, snapshot: seated.append(snapshot))
    example.train_and_evaluate(example.parse_args(["--route", "opponents", "--self-play", "3", "--iterations", "7",
                                                   "--eval-deals", "0"]))
    assert seated == ["snapshot1", "snapshot4", "snapshot7"]
    seated.clear()
    example.train_and_evaluate(example.parse_args(["--route", "opponents", "--iterations", "3", "--eval-deals", "0"]))
    assert seated == []


# ---------------------------------------------------------------------- TorchRL
def record_torchrl_training(example, monkeypatch):
    """Patch the TorchRL example to keep what it trains on: each collected batch, the size of each minibatch the
    loss sees, and the critic network with its first weights. Returns the three lists, filled as it runs."""
    batches, seen, critics = [], [], []

    class RecordingCollector(example.Collector):
        def __iter__(self):
            for batch in super().__iter__():
                batches.append(batch)
                yield batch

    class RecordingLoss(example.ClipPPOLoss):
        def forward(self, tensordict):
            seen.append(tensordict.batch_size[0])
            return super().forward(tensordict)

    mlp = example.MLP

    def recording_mlp(**kwargs):
        network = mlp(**kwargs)
        if kwargs["out_features"] == 1:
            critics.append((network, [p.detach().clone() for p in network.parameters()]))
        return network

    monkeypatch.setattr(example, "Collector", RecordingCollector)
    monkeypatch.setattr(example, "ClipPPOLoss", RecordingLoss)
    monkeypatch.setattr(example, "MLP", recording_mlp)
    return batches, seen, critics


@needs_torchrl
def test_torchrl_pettingzoo_wrapper_takes_the_aec_env_as_it_is():
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType, check_env_specs

    env = PettingZooWrapper(env=spoilfive_env.env(num_players=4), use_mask=True,
                            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, seed=0)
    check_env_specs(env)
    rollout = env.rollout(120, break_when_any_done=False)  # random actions from the masked spec
    acted = rollout["agents", "mask"]
    assert (acted.sum(-1) == 1).all()  # exactly one seat acts per step
    legal = rollout["agents", "action_mask"].gather(-1, rollout["agents", "action"].unsqueeze(-1)).squeeze(-1)
    assert legal[acted].all()
    assert rollout["next", "done"].any()


@needs_torchrl
def test_torchrl_example_trains_and_evaluates():
    example = load_example("torchrl_ppo")
    assert example.main(["--iterations", "2", "--frames-per-batch", "128", "--minibatch-size", "64",
                         "--hidden", "32", "--eval-deals", "5"]) == 0


@needs_torchrl
def test_torchrl_gym_wrapper_takes_the_vector_env_as_the_env_steps_it():
    """The vector route's recipe (``GymWrapper`` over the vector env with ``autoreset_mode="Disabled"``, the mask
    read from the info onto the action spec): TorchRL's random actions from the masked spec are all legal, it
    resets ended games itself and plays on, and every observation, mask, reward and end it gives is what the plain
    vector env gives for the same actions and resets (``reset_mask``), from the same seed."""
    example = load_example("torchrl_ppo")
    games = 6
    env = example.vector_env(games, 5, num_players=3, opponents="spoiler")
    from torchrl.envs.utils import check_env_specs
    check_env_specs(env)
    env.set_seed(5)
    rollout = env.rollout(60, break_when_any_done=False)  # (games, steps)
    actions = rollout["action"]
    assert rollout["action_mask"].gather(-1, actions.unsqueeze(-1)).all()  # legal, from the masked spec
    ended = rollout["next", "done"][..., 0]
    assert ended[:, :-1].any(dim=1).sum() >= games // 2  # games end and go on

    plain = gymnasium.make_vec("spoilfive/SpoilFive-v0", num_envs=games, vectorization_mode="vector_entry_point",
                               autoreset_mode="Disabled", num_players=3, opponents="spoiler")
    plain.reset(seed=5)  # TorchRL's set_seed, then the rollout's own reset
    observations, infos = plain.reset()
    for t in range(actions.shape[1]):
        np.testing.assert_array_equal(rollout["observation"][:, t].numpy(), observations)
        np.testing.assert_array_equal(rollout["action_mask"][:, t].numpy(), infos["action_mask"].astype(bool))
        observations, rewards, terminated, truncated, infos = plain.step(actions[:, t].numpy())
        np.testing.assert_allclose(rollout["next", "reward"][:, t, 0].numpy(), rewards, rtol=0, atol=1e-6)
        np.testing.assert_array_equal(ended[:, t].numpy(), terminated | truncated)
        if (terminated | truncated).any():
            observations, infos = plain.reset(options={"reset_mask": terminated | truncated})
    assert rollout["next", "reward"].abs().sum() > 0


@needs_torchrl
def test_torchrl_example_vector_route_trains_one_seat_on_every_frame_towards_its_hand_result(monkeypatch, capsys):
    """On the vector route every frame is a decision of the learning seat: the loss sees each once an epoch,
    each valued towards the summed reward to its hand's end (GAE with gamma = lambda = 1), against the opponents
    asked for; the critic learns; the trained actor is evaluated."""
    example = load_example("torchrl_ppo")
    batches, seen, critics = record_torchrl_training(example, monkeypatch)
    evaluated = []
    monkeypatch.setattr(example, "check_against_baselines", lambda *args, **kwargs: evaluated.append((args, kwargs)))
    made = []
    vector_env = example.vector_env
    monkeypatch.setattr(example, "vector_env", lambda *args, **kwargs: made.append((args, kwargs)) or vector_env(
        *args, **kwargs))
    frames = 16 * 12
    assert example.main(["--route", "vector", "--num-envs", "16", "--opponents", "greedy", "--num-players", "5",
                         "--iterations", "1", "--frames-per-batch", str(frames), "--minibatch-size", "64",
                         "--epochs", "2", "--hidden", "16", "--eval-deals", "3", "--seed", "4"]) == 0
    assert made == [((16, 4), {"num_players": 5, "opponents": "greedy"})]
    [batch] = batches
    assert batch.batch_size == (16, 12) and sum(seen) == 2 * frames  # every frame, once an epoch
    assert f"decisions {frames:7d}" in capsys.readouterr().out
    target, reward = batch["value_target"][..., 0], batch["next", "reward"][..., 0]
    ended = batch["next", "done"][..., 0]
    checked = 0
    for game in range(16):
        for t in range(12):
            later = ended[game, t:].nonzero()
            if len(later):
                end = t + int(later[0])
                assert float(target[game, t]) == pytest.approx(float(reward[game, t:end + 1].sum()), abs=1e-4)
                checked += 1
    assert checked > frames // 3
    [(critic, before)] = critics
    assert any(not torch.equal(p, q) for p, q in zip(critic.parameters(), before))
    [((agent, players, deals), kwargs)] = evaluated
    assert (players, deals, kwargs) == (5, 3, {"seed": 5}) and isinstance(agent, example.ActorAgent)


@needs_torchrl
def test_torchrl_example_vector_route_is_reproducible_from_its_seed(capsys):
    example = load_example("torchrl_ppo")
    argv = ["--route", "vector", "--num-envs", "8", "--iterations", "2", "--frames-per-batch", "64",
            "--minibatch-size", "32", "--hidden", "16", "--eval-deals", "0", "--seed", "3"]
    runs = []
    for global_seed in (123, 456):
        torch.manual_seed(global_seed)
        assert example.main(argv) == 0
        runs.append([line.split("critic loss")[-1] for line in capsys.readouterr().out.splitlines()])
    assert runs[0] == runs[1] and len(runs[0]) == 2


# ---------------------------------------------------------------------- Tianshou
def seat_trajectories(players: int):
    """The example's shared PPO over every seat of a ``players`` table, as ``SeatTrajectories``, and its env."""
    from tianshou.env import PettingZooEnv

    from spoilfive_integrations.tianshou import SeatTrajectories

    example = load_example("tianshou_ppo")
    env = PettingZooEnv(spoilfive_env.env(num_players=players))
    policy = example.DiscreteActorPolicy(actor=example.MaskedActor(32), action_space=env.action_space,
                                         observation_space=env.observation_space)
    shared = example.PPO(policy=policy, critic=example.SeatCritic(32), gamma=1.0,
                         optim=example.AdamOptimizerFactory(lr=1e-3))
    return env, SeatTrajectories(algorithms=[shared] * players, env=env)


@needs_tianshou
@pytest.mark.parametrize("route_argv", [
    ["--episodes", "20", "--minibatch-size", "16", "--hidden", "32"],
    ["--route", "vector", "--num-envs", "8", "--step-per-collect", "64", "--minibatch-size", "32", "--hidden", "16",
     "--seed", "3"],
], ids=["pettingzoo", "vector"])
def test_tianshou_example_is_reproducible_from_its_seed(route_argv, capsys):
    """Tianshou shuffles minibatches with NumPy's global generator and samples actions from torch's: the example
    seeds both, so whatever state they are in, the same --seed gives the same run (its README rows are
    reproducible)."""
    example = load_example("tianshou_ppo")
    argv = ["--iterations", "2", "--eval-deals", "10", *route_argv]
    runs = []
    for global_seed in (123, 456):
        np.random.seed(global_seed)
        torch.manual_seed(global_seed)
        assert example.main(argv) == 0
        # each line less its speed, whose width varies with the machine's load
        runs.append([re.sub(r"\s+\d+ decisions/s$", "", line) for line in capsys.readouterr().out.splitlines()])
    assert runs[0] == runs[1] and any("vs 3 x spoiler" in line for line in runs[0])


@needs_tianshou
def test_tianshou_collector_respects_masks_and_every_seat_learns_from_its_own_trajectory():
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.utils.torch_utils import policy_within_training_step

    players = 5
    env, algorithm = seat_trajectories(players)
    buffer = VectorReplayBuffer(2000, 1)
    collector = Collector(algorithm, DummyVectorEnv([lambda: PettingZooEnv(spoilfive_env.env(num_players=players))]),
                          buffer)
    with policy_within_training_step(algorithm.policy):
        result = collector.collect(n_episode=4, reset_before_collect=True)  # the AEC env raises on an illegal action
    assert result.n_collected_episodes == 4
    batch, indices = buffer.sample(0)
    hand_rewards = np.asarray(batch.rew)[np.asarray(batch.terminated)]
    observations = np.asarray(batch.obs.obs).copy()
    agent_ids = np.asarray(batch.obs.agent_id)
    processed = algorithm._preprocess_batch(batch, buffer, indices)
    for agent, seat in env.agent_idx.items():
        own = processed[agent]
        terminal = np.asarray(own.terminated)
        assert terminal.sum() == 4  # one terminal decision per hand for every seat
        assert np.allclose(np.asarray(own.rew)[terminal], hand_rewards[:, seat])
        assert np.allclose(own.returns[terminal], hand_rewards[:, seat], atol=1e-5)
        # obs_next of a seat's non-final decision is its own next decision's observation
        mine = observations[agent_ids == agent]
        assert np.array_equal(np.asarray(own.obs_next.obs)[~terminal], mine[1:][~terminal[:-1]])


@needs_tianshou
@pytest.mark.parametrize("seed", [0, 1])
def test_tianshou_with_two_environments_keeps_each_seat_s_trajectory_in_its_own_game(seed):
    """A collector of two environments stores each one's transitions in a sub-buffer of its own; a seat's
    next decision must come from its own game. Numbered across the sub-buffers, hands of the two games
    were joined, and a seat's obs_next was taken from the other game."""
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.utils.torch_utils import policy_within_training_step

    players = 3
    env, algorithm = seat_trajectories(players)
    buffer = VectorReplayBuffer(2000, 2)
    games = DummyVectorEnv([lambda: PettingZooEnv(spoilfive_env.env(num_players=players))] * 2)
    games.seed(seed)
    collector = Collector(algorithm, games, buffer)
    with policy_within_training_step(algorithm.policy):
        collector.collect(n_step=40, reset_before_collect=True)  # each game stops mid-hand
    batch, indices = buffer.sample(0)
    game = np.searchsorted(buffer.subbuffer_edges, indices, side="right") - 1
    assert set(game) == {0, 1}
    ends = np.asarray(batch.terminated) | np.asarray(batch.truncated)
    observations, agent_ids = np.asarray(batch.obs.obs).copy(), np.asarray(batch.obs.agent_id)
    stored_next = np.asarray(batch.obs_next.obs).copy()  # Tianshou's: the next seat's view, same game
    # The hand of each transition, worked out game by game: hands end at an end flag.
    hand = np.zeros(len(indices), int)
    for g in (0, 1):
        rows = np.flatnonzero(game == g)
        hand[rows] = 1000 * g + np.concatenate([[0], np.cumsum(ends[rows])[:-1]])
    processed = algorithm._preprocess_batch(batch, buffer, indices)
    for agent in env.agents:
        own = processed[agent]
        rows = np.flatnonzero(agent_ids == agent)
        terminal, cut = np.asarray(own.terminated), np.asarray(own.truncated)
        for k, row in enumerate(rows):
            if k + 1 < len(rows) and hand[row] == hand[rows[k + 1]]:  # the seat's next decision, same game and hand
                assert not terminal[k] and not cut[k]
                assert np.array_equal(np.asarray(own.obs_next.obs)[k], observations[rows[k + 1]])
            elif ends[hand == hand[row]].any():  # its last decision of a finished hand: terminal
                assert terminal[k] and not cut[k] and np.array_equal(np.asarray(own.obs_next.obs)[k], stored_next[row])
            else:  # of a hand the collection stopped in: truncated there, its own view to bootstrap from (GAE's
                # chain cut: Tianshou marks only a sub-buffer's last transition unfinished, and the seat's
                # advantage ran on into the other game's)
                assert cut[k] and not terminal[k] and np.array_equal(np.asarray(own.obs_next.obs)[k], observations[row])
        # GAE, worked out game by game from the processed batch, is what the algorithm computed
        critic = algorithm._submodules[0].critic  # (one shared PPO: every seat's)
        value_next = critic(own.obs_next).detach().flatten().numpy() * ~terminal
        advantage, carried, lam = np.zeros(len(rows)), 0.0, algorithm._submodules[0].gae_lambda  # (gamma is 1)
        for k in reversed(range(len(rows))):
            carried = np.asarray(own.rew)[k] + value_next[k] - own.v_s.numpy()[k] + (
                0.0 if terminal[k] or cut[k] else lam * carried)
            advantage[k] = carried
        assert game[rows][-1] != game[rows][0]  # (the seat played in both games: a chain could have joined them)
        np.testing.assert_allclose(own.adv.numpy(), advantage, atol=1e-5)


@needs_tianshou
def test_tianshou_under_game_mode_every_hand_s_rewards_reach_the_seat_they_are_paid_to():
    """Under mode="game" an episode is a whole game and each hand's rewards come when it ends, inside the episode.
    Only the rewards of the episode's last step were kept (the rest set to 0): a seat's rewards now go, each, to
    its latest decision up to the step that paid them, and every seat's total is the env's."""
    from pettingzoo.utils import BaseWrapper
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.utils.torch_utils import policy_within_training_step

    class WithoutGameWinners(BaseWrapper):
        """docs/integrations.md's recipe: Tianshou's buffer stores each info key as one array, and the seats of a
        tied game ("game_winners") are more than one."""

        def last(self, observe=True):
            *step, info = super().last(observe)
            return *step, {key: value for key, value in info.items() if key != "game_winners"}

    players = 3
    env, algorithm = seat_trajectories(players)
    buffer = VectorReplayBuffer(20_000, 1)
    games = DummyVectorEnv([lambda: PettingZooEnv(WithoutGameWinners(spoilfive_env.env(num_players=players,
                                                                                       mode="game")))])
    games.seed(0)
    torch.manual_seed(0)  # the policy samples from torch's generator
    with policy_within_training_step(algorithm.policy):
        Collector(algorithm, games, buffer).collect(n_episode=2, reset_before_collect=True)
    batch, indices = buffer.sample(0)
    raw, agent_ids = np.asarray(batch.rew).copy(), np.asarray(batch.obs.agent_id)
    paid_steps = np.flatnonzero(np.abs(raw).sum(axis=1) > 0)
    assert len(paid_steps) > 2 * 2  # hands ended inside each game, not only at its end
    processed = algorithm._preprocess_batch(batch, buffer, indices)
    for agent, seat in env.agent_idx.items():
        own, rows = processed[agent], np.flatnonzero(agent_ids == agent)
        assert np.asarray(own.terminated).sum() == 2 and np.isclose(np.asarray(own.rew).sum(), raw[:, seat].sum())
        expected = np.zeros(len(rows))
        for step in paid_steps:  # each paid step's reward at the seat's latest decision up to it
            expected[np.searchsorted(rows, step, side="right") - 1] += raw[step, seat]
        np.testing.assert_allclose(np.asarray(own.rew), expected)


@needs_tianshou
def test_tianshou_example_trains_and_evaluates():
    example = load_example("tianshou_ppo")
    assert example.main(["--num-players", "3", "--iterations", "2", "--episodes", "4", "--hidden", "32",
                         "--epochs", "1", "--eval-deals", "5"]) == 0


@needs_tianshou
def test_tianshou_a_truncated_transition_ends_its_hand_for_every_seat():
    """A transition marked truncated (a time limit, say: this env never truncates by itself) ends its hand as a
    hand's last card does: no seat's decision before it is followed by one after it (each seat's decisions after
    it are a trajectory of their own), and each seat's last decision before it is terminal (the module docstring:
    no seat has an observation of its own after the cut to bootstrap from)."""
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.utils.torch_utils import policy_within_training_step

    env, algorithm = seat_trajectories(3)
    buffer = VectorReplayBuffer(2000, 1)
    games = DummyVectorEnv([lambda: PettingZooEnv(spoilfive_env.env(num_players=3))])
    games.seed(0)
    with policy_within_training_step(algorithm.policy):
        Collector(algorithm, games, buffer).collect(n_step=12, reset_before_collect=True)  # inside the first hand
    cut = 6
    buffer.truncated[cut] = buffer.done[cut] = True
    batch, indices = buffer.sample(0)
    assert not np.asarray(batch.terminated).any() and list(indices) == list(range(12))
    observations, agent_ids = np.asarray(batch.obs.obs).copy(), np.asarray(batch.obs.agent_id)
    stored_next = np.asarray(batch.obs_next.obs).copy()
    processed = algorithm._preprocess_batch(batch, buffer, indices)
    for agent in env.agents:
        own, rows = processed[agent], np.flatnonzero(agent_ids == agent)
        last = np.flatnonzero(rows <= cut)[-1]  # the seat's last decision before the cut
        assert last + 1 < len(rows)  # ... and it has one after it
        assert np.array_equal(np.asarray(own.obs_next.obs)[last], stored_next[rows[last]])  # not linked across
        assert np.array_equal(np.asarray(own.obs_next.obs)[last + 1:-1], observations[rows[last + 2:]])
        assert np.asarray(own.terminated)[last] and np.asarray(own.done)[last]


def tianshou_vector_env(num_envs: int, **options):
    from spoilfive_integrations.tianshou import SpoilFiveTianshouVectorEnv

    return SpoilFiveTianshouVectorEnv(num_envs, **options)


@needs_tianshou
@pytest.mark.parametrize("players, opponents, illegal_action", [(3, "spoiler", "raise"), (5, "random", "raise"),
                                                                (4, "greedy", "penalty")])
def test_tianshou_vector_env_gives_what_the_plain_vector_env_gives(players, opponents, illegal_action):
    """Stepped and reset game by game as Tianshou's collector does (every game a step, the ended ones reset by
    ``env_id``), it gives every observation, mask, reward and end that the Gymnasium vector env gives for the same
    actions and ``reset_mask`` resets, from the same seed: one core batch seen two ways. Under
    ``illegal_action="penalty"`` some actions are illegal, and each game's info says which were penalised."""
    games, rng = 6, np.random.default_rng(players)
    options = {"num_players": players, "opponents": opponents, "illegal_action": illegal_action}
    envs = tianshou_vector_env(games, seed=7, **options)
    plain = gymnasium.make_vec("spoilfive/SpoilFive-v0", num_envs=games, vectorization_mode="vector_entry_point",
                               autoreset_mode="Disabled", **options)
    batch, infos = envs.reset()
    observations, plain_infos = plain.reset(seed=7)
    penalised = np.zeros(games, bool)
    assert len(infos) == games and all(info == ({} if illegal_action == "raise" else {"penalty": False})
                                       for info in infos)
    ends = 0
    for _ in range(60):
        np.testing.assert_array_equal(batch.obs, observations)
        np.testing.assert_array_equal(batch.mask, plain_infos["action_mask"].astype(bool))
        np.testing.assert_array_equal(envs.seats, plain_infos["seat"])
        actions = random_legal(rng, batch.mask)
        if illegal_action == "penalty":
            actions = np.where(rng.random(games) < 0.1, rng.integers(0, 107, games), actions)
        batch, rewards, terminated, truncated, infos = envs.step(actions)
        observations, plain_rewards, plain_terminated, plain_truncated, plain_infos = plain.step(actions)
        if illegal_action == "penalty":
            assert [info["penalty"] for info in infos] == list(plain_infos["penalty"])
            penalised |= plain_infos["penalty"]
        np.testing.assert_array_equal(rewards, plain_rewards)
        np.testing.assert_array_equal(terminated, plain_terminated)
        assert not truncated.any() and not plain_truncated.any()
        np.testing.assert_array_equal(batch.obs, observations)
        if terminated.any():
            ends += int(terminated.sum())
            restarted, _ = envs.reset(env_id=np.flatnonzero(terminated))
            observations, plain_infos = plain.reset(options={"reset_mask": terminated})
            batch.obs[terminated], batch.mask[terminated] = restarted.obs, restarted.mask
    assert ends >= games and rewards.dtype.kind == "f"
    assert penalised.any() == (illegal_action == "penalty")


@needs_tianshou
def test_tianshou_vector_env_steps_and_resets_only_the_games_it_is_given_in_their_order():
    """``step(action, id)`` moves only the games of ``id`` and answers in its order; ``reset(env_id)`` deals only
    those games (Tianshou's collector steps fewer games as it reaches its episode count)."""
    envs = tianshou_vector_env(4, num_players=4, opponents="random", seed=3)
    batch, _ = envs.reset()
    core = envs.core
    first_deals = core.holder.copy()
    before = core.observe(envs.batch.seat)
    actions = random_legal(np.random.default_rng(0), batch.mask[[3, 1]])
    moved, rewards, terminated, truncated, infos = envs.step(actions, id=[3, 1])
    after = core.observe(envs.batch.seat)
    np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])  # untouched
    assert not np.array_equal(after[3], before[3]) and not np.array_equal(after[1], before[1])
    np.testing.assert_array_equal(moved.obs, after[[3, 1]])
    np.testing.assert_array_equal(moved.mask, core.legal_mask()[[3, 1]].astype(bool))
    assert len(rewards) == len(terminated) == len(truncated) == len(infos) == 2
    holders = core.holder.copy()
    dealt, _ = envs.reset(env_id=[2])
    changed = np.flatnonzero((core.holder != holders).reshape(len(holders), -1).any(axis=1))
    assert list(changed) == [2] and dealt.obs.shape == (1, before.shape[1])
    np.testing.assert_array_equal(dealt.obs[0], core.observe(envs.batch.seat)[2])
    every_game_reversed = [3, 2, 1, 0]
    moved, *_ = envs.step(random_legal(np.random.default_rng(1), core.legal_mask()[every_game_reversed]),
                          id=every_game_reversed)
    np.testing.assert_array_equal(moved.obs, core.observe(envs.batch.seat)[every_game_reversed])
    # The constructor's seed seeds the first reset of every game only: the next one deals new hands.
    envs.reset()
    assert (core.holder != first_deals).reshape(len(first_deals), -1).any(axis=1).all()


@needs_tianshou
def test_tianshou_collector_and_ppo_take_the_vector_env_as_it_is():
    """Tianshou's own ``Collector`` over the vector env with the example's PPO: every stored action was legal under
    its stored mask, each game's transitions are in time order in a sub-buffer of its own (a non-terminal
    transition's ``obs_next`` is that game's next ``obs``), each hand ends in one terminal transition with the
    learning seat's result, and the update runs."""
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

    example = load_example("tianshou_ppo")
    games, steps = 8, 40
    envs = tianshou_vector_env(games, num_players=3, opponents="greedy", seed=1)
    ppo = example.make_ppo(example.MaskedActor(16), example.SeatCritic(16),
                           example.parse_args(["--route", "vector"]), envs.action_space[0],
                           envs.observation_space[0])
    buffer = VectorReplayBuffer(games * steps, games)
    collector = Collector(ppo, envs, buffer)
    collector.reset()
    with policy_within_training_step(ppo.policy):
        result = collector.collect(n_step=games * steps)
        assert result.n_collected_steps == games * steps and result.n_collected_episodes >= games
        batch, indices = buffer.sample(0)
        masks, actions = np.asarray(batch.obs.mask), np.asarray(batch.act)
        assert masks[np.arange(len(actions)), actions].all() and not masks.all()
        game = np.searchsorted(buffer.subbuffer_edges, indices, side="right") - 1
        terminated = np.asarray(batch.terminated)
        for g in range(games):
            rows = np.flatnonzero(game == g)
            assert len(rows) == steps
            follows = rows[:-1][~terminated[rows[:-1]]]
            next_observations = np.asarray(batch.obs_next.obs)[follows]
            np.testing.assert_array_equal(next_observations, np.asarray(batch.obs.obs)[follows + 1])
        rewards = np.asarray(batch.rew)
        assert (rewards[~terminated] == 0).all() and (rewards[terminated] != 0).any()
        assert terminated.sum() == result.n_collected_episodes
        with torch_train_mode(ppo.policy):
            before = [p.detach().clone() for p in ppo.policy.actor.parameters()]
            ppo.update(buffer=buffer, batch_size=64, repeat=1)
    assert any(not torch.equal(p, q) for p, q in zip(ppo.policy.actor.parameters(), before))


@needs_tianshou
@pytest.mark.parametrize("collection", [{"collection_step_num_env_steps": 64},
                                        {"collection_step_num_env_steps": None, "collection_step_num_episodes": 10}],
                         ids=["steps", "episodes"])
def test_tianshou_s_own_trainer_runs_on_the_vector_env_with_a_test_collector_that_counts_episodes(collection):
    """``algorithm.run_training`` as Tianshou's docs use it: a training collector by steps or by episodes, and a
    test collector that counts episodes, more and fewer than its games (the Collector steps fewer games as it
    reaches its count, then resets them all before the next test)."""
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.trainer import OnPolicyTrainerParams

    training_envs = tianshou_vector_env(8, num_players=3, opponents="random", seed=1)
    test_envs = tianshou_vector_env(4, num_players=3, opponents="spoiler", seed=2)
    ppo = example_ppo(training_envs)
    training = Collector(ppo, training_envs, VectorReplayBuffer(8 * 64, 8))
    tests = []

    class CountingCollector(Collector):
        def collect(self, *args, **kwargs):
            result = super().collect(*args, **kwargs)
            tests.append(result.n_collected_episodes)
            return result

    for episodes in (2, 6):
        tests.clear()
        result = ppo.run_training(OnPolicyTrainerParams(
            training_collector=training, test_collector=CountingCollector(ppo, test_envs), max_epochs=2,
            epoch_num_steps=128, test_step_num_episodes=episodes, batch_size=32, update_step_num_repetitions=1,
            verbose=False, show_progress=False, **collection))
        assert result.train_step >= 2 * 128 and len(tests) >= 2 and all(count == episodes for count in tests)
        assert result.test_episode == sum(tests)


@needs_tianshou
def test_tianshou_example_vector_route_collects_each_game_s_steps_against_the_opponents_asked_for(monkeypatch,
                                                                                                capsys):
    """The vector route makes the env with the flags' games, table, opponents and seed, collects
    --step-per-collect decisions an iteration into a buffer that holds exactly them (hands running on across
    iterations), updates --epochs times undiscounted, counts decisions, and evaluates the trained actor."""
    example = load_example("tianshou_ppo")
    collected, repeats, made, envs_made = [], [], [], []

    class RecordingCollector(example.Collector):
        def collect(self, *args, **kwargs):
            result = super().collect(*args, **kwargs)
            collected.append((kwargs, result.n_collected_steps, len(self.buffer)))
            return result

    env_class, ppo = example.SpoilFiveTianshouVectorEnv, example.PPO
    monkeypatch.setattr(example, "Collector", RecordingCollector)
    monkeypatch.setattr(example, "SpoilFiveTianshouVectorEnv",
                        lambda **kwargs: envs_made.append(kwargs) or env_class(**kwargs))
    monkeypatch.setattr(example, "PPO", lambda **kwargs: (made.append(kwargs), ppo(**kwargs))[1])
    update = ppo.update
    monkeypatch.setattr(ppo, "update",
                        lambda self, **kwargs: (repeats.append(kwargs["repeat"]), update(self, **kwargs))[1])
    evaluated = []
    monkeypatch.setattr(example, "check_against_baselines", lambda *args, **kwargs: evaluated.append((args, kwargs)))
    assert example.main(["--route", "vector", "--num-envs", "6", "--num-players", "5", "--opponents", "greedy",
                         "--step-per-collect", "48", "--iterations", "2", "--epochs", "3", "--minibatch-size", "16",
                         "--hidden", "16", "--eval-deals", "3", "--seed", "9"]) == 0
    assert envs_made == [{"num_envs": 6, "num_players": 5, "opponents": "greedy", "seed": 9}]
    assert [(kwargs, steps, stored) for kwargs, steps, stored in collected] == [({"n_step": 48}, 48, 48)] * 2
    assert repeats == [3, 3] and made[0]["gamma"] == 1.0
    assert "decisions      96" in capsys.readouterr().out.strip().splitlines()[-1]
    [((agent, players, deals), kwargs)] = evaluated
    assert (players, deals, kwargs) == (5, 3, {"seed": 10}) and isinstance(agent, example.TianshouPolicyAgent)
    assert agent.greedy and agent.name == "tianshou-ppo"


def example_ppo(envs, hidden: int = 16):
    """The Tianshou example's PPO for ``envs`` (a :class:`SpoilFiveTianshouVectorEnv`)."""
    example = load_example("tianshou_ppo")
    return example.make_ppo(example.MaskedActor(hidden), example.SeatCritic(hidden),
                            example.parse_args(["--route", "vector"]), envs.action_space[0], envs.observation_space[0])


@needs_tianshou
def test_tianshou_policy_agent_plays_a_frozen_copy_of_the_policy_legally_from_its_own_generator():
    from spoilfive_integrations.tianshou import TianshouPolicyAgent

    envs = tianshou_vector_env(64, num_players=4, opponents="random", seed=2)
    ppo = example_ppo(envs)
    batch, _ = envs.reset()
    observations, masks = batch.obs, batch.mask
    torch_state = torch.random.get_rng_state()
    sampled = [TianshouPolicyAgent(ppo, seed=5).act_batch(observations, masks) for _ in range(2)]
    assert torch.equal(torch.random.get_rng_state(), torch_state)  # torch's generator untouched
    np.testing.assert_array_equal(sampled[0], sampled[1])
    assert masks[np.arange(64), sampled[0]].all()
    greedy = TianshouPolicyAgent(ppo.policy, greedy=True, name="frozen")
    logits, _ = ppo.policy.actor(batch)
    np.testing.assert_array_equal(greedy.act_batch(observations, masks),
                                  np.where(masks, logits.detach().numpy(), -np.inf).argmax(1))
    assert greedy.name == "frozen" and not np.array_equal(greedy.act_batch(observations, masks), sampled[0])
    with torch.no_grad():  # the agent holds a copy: training the learner on does not move it
        for parameter in ppo.policy.actor.parameters():
            parameter.add_(torch.randn_like(parameter))
    np.testing.assert_array_equal(greedy.act_batch(observations, masks),
                                  np.where(masks, logits.detach().numpy(), -np.inf).argmax(1))
    result = evaluate([greedy, "random"], num_players=4, deals=3, seed=0)  # a tournament takes it
    assert result["agents"]["frozen"]["hands"] == 12


@needs_tianshou
def test_tianshou_policy_agent_plays_only_legal_actions_whatever_the_actor_makes_of_the_mask():
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy

    from spoilfive_integrations.tianshou import TianshouPolicyAgent

    class PrefersHighIds(torch.nn.Module):
        """Reads no mask: logits rising with the action id, the last ids far ahead of the rest."""

        def forward(self, obs, state=None, info=None):
            return 10.0 * torch.arange(spoilfive_env.NUM_ACTIONS, dtype=torch.float32).expand(len(obs.obs), -1), state

    envs = tianshou_vector_env(64, num_players=4, opponents="random", seed=6)
    batch, _ = envs.reset()
    policy = DiscreteActorPolicy(actor=PrefersHighIds(), action_space=envs.action_space[0])
    legal_ids = np.where(batch.mask, np.arange(spoilfive_env.NUM_ACTIONS), -1)
    np.testing.assert_array_equal(TianshouPolicyAgent(policy, greedy=True).act_batch(batch.obs, batch.mask),
                                  legal_ids.max(1))
    sampled = TianshouPolicyAgent(policy, seed=0).act_batch(batch.obs, batch.mask)
    assert batch.mask[np.arange(64), sampled].all()


@needs_tianshou
def test_tianshou_vector_env_reseeded_deals_the_same_hands_and_seats_again():
    envs = tianshou_vector_env(8, num_players=4, opponents="random")
    first = envs.reset(seed=5)[0].obs.copy(), envs.seats
    rng = np.random.default_rng(0)
    for _ in range(3):  # play on (no hand ends within three decisions), then reseed
        envs.step(random_legal(rng, envs.core.legal_mask()))
    again = envs.reset(seed=5)[0].obs.copy(), envs.seats
    envs.seed(5)  # seed() then a reset of every game: the same again
    by_seed_method = envs.reset()[0].obs.copy(), envs.seats
    for other in (again, by_seed_method):
        np.testing.assert_array_equal(other[0], first[0])
        np.testing.assert_array_equal(other[1], first[1])
    assert len(set(first[1])) > 1  # seats drawn, not fixed


@needs_tianshou
def test_tianshou_policy_agent_names_what_it_takes():
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy

    from spoilfive_integrations.tianshou import TianshouPolicyAgent

    envs = tianshou_vector_env(2, num_players=3, opponents="random", seed=0)
    with pytest.raises(ValueError, match=r"policy \(MaskedActor\) is not allowed: give a Tianshou policy "
                                         r"\(algorithm.policy\) or algorithm, whose actor reads Batch\(obs, mask\)"):
        TianshouPolicyAgent(load_example("tianshou_ppo").MaskedActor(8))
    with pytest.raises(ValueError, match="greedy"):
        TianshouPolicyAgent(example_ppo(envs), greedy="yes")
    _, self_play = seat_trajectories(3)  # the AEC route's algorithm: a policy per seat
    with pytest.raises(ValueError, match=r"^policy \(MultiAgentPolicy\) is not allowed: it plays every seat of an "
                                         r"AEC table through a policy per agent; give one of them "
                                         r"\(algorithm.policy.policies\['player_0'\]\)$"):
        TianshouPolicyAgent(self_play)
    TianshouPolicyAgent(self_play.policy.policies["player_0"])  # one seat's policy is taken
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy

    q_values = DiscreteQLearningPolicy(model=torch.nn.Linear(4, 107), action_space=envs.action_space[0])
    with pytest.raises(ValueError, match=r"^policy \(DiscreteQLearningPolicy\) is not allowed: give a policy with an "
                                         r"actor and a dist_fn"):
        TianshouPolicyAgent(q_values)
    ppo = example_ppo(envs)
    policy = DiscreteActorPolicy(actor=ppo.policy.actor, action_space=envs.action_space[0],
                                 dist_fn=lambda logits: torch.distributions.Normal(logits, 1.0))
    batch, _ = envs.reset()
    with pytest.raises(ValueError, match="the policy's dist_fn gives a Normal: a TianshouPolicyAgent needs a "
                                         "Categorical over the 107 actions"):
        TianshouPolicyAgent(policy).act_batch(batch.obs, batch.mask)


@needs_tianshou
def test_tianshou_example_vector_route_self_play_seats_a_snapshot_of_the_learner_every_k_iterations(monkeypatch):
    example = load_example("tianshou_ppo")
    seated = []
    set_opponents = example.SpoilFiveTianshouVectorEnv.set_opponents
    monkeypatch.setattr(example.SpoilFiveTianshouVectorEnv, "set_opponents",
                        lambda self, agent: (seated.append(agent), set_opponents(self, agent))[1])
    assert example.main(["--route", "vector", "--num-envs", "4", "--step-per-collect", "16", "--iterations", "5",
                         "--self-play", "2", "--hidden", "8", "--eval-deals", "0", "--seed", "3"]) == 0
    assert [agent.name for agent in seated] == ["snapshot1", "snapshot3", "snapshot5"]
    assert all(isinstance(agent, example.TianshouPolicyAgent) and not agent.greedy for agent in seated)
    assert [agent.seed for agent in seated] == [4, 6, 8]
    # each a snapshot of the learner as it then was: the first two differ after two updates
    weights = [[p.detach().clone() for p in agent.policy.actor.parameters()] for agent in seated]
    assert any(not torch.equal(p, q) for p, q in zip(weights[0], weights[1]))


# ---------------------------------------------------------------------- CleanRL
def test_cleanrl_script_runs_as_a_subprocess(tmp_path):
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "cleanrl_ppo.py"), "--total-timesteps", "1024", "--num-envs", "16",
         "--num-steps", "16", "--eval-deals", "5"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "iteration   4" in completed.stdout and "vs 3 x spoiler" in completed.stdout
    assert any((tmp_path / "runs").iterdir())  # TensorBoard events


@pytest.mark.parametrize("name", ["cleanrl_ppo", "rllib_ppo", "sb3_maskable_ppo",
                                  pytest.param("tianshou_ppo", marks=needs_tianshou),
                                  pytest.param("torchrl_ppo", marks=needs_torchrl)])
@pytest.mark.parametrize("argv, says", [
    (["--seed", "99999999999999999999"], "give a seed from 0 to 4,294,967,295"),
    (["--eval-deals", "99999999999"], "give at most 1,000,000 deals"),
    (["--num-players", "11"], "2 to 10 players"),
])
def test_every_example_refuses_a_bad_flag_in_one_line_before_any_work(name, argv, says, capsys):
    if name == "rllib_ppo":
        pytest.importorskip("ray")
    with pytest.raises(SystemExit) as stopped:
        load_example(name).parse_args(argv)
    code, error = stopped.value.code, capsys.readouterr().err
    assert code == 2
    assert says in error and argv[0] in error and len(error.strip().splitlines()) == 1


# ---------------------------------------------------------------------- what the examples learn from (mutation audit)
class RecordingVecEnv:
    """The example's vector env, with what it gave at each step kept."""

    def __init__(self, envs):
        self.envs, self.masks, self.rewards, self.ended = envs, [], [], []

    def __getattr__(self, name):
        return getattr(self.envs, name)

    def reset(self, **kwargs):
        obs, infos = self.envs.reset(**kwargs)
        self.masks.append(np.asarray(infos["action_mask"], bool).copy())
        return obs, infos

    def step(self, actions):
        obs, rewards, terminations, truncations, infos = self.envs.step(actions)
        self.rewards.append(np.asarray(rewards, float).copy())
        self.ended.append(np.logical_or(terminations, truncations))
        self.masks.append(np.asarray(infos["action_mask"], bool).copy())
        return obs, rewards, terminations, truncations, infos


class FakeWriter:
    def __init__(self, *args, **kwargs):
        self.scalars = {}
        writers.append(self)

    def add_text(self, *args):
        pass

    def add_scalar(self, name, value, step):
        self.scalars.setdefault(name, []).append((float(value), step))

    def close(self):
        pass


writers: list = []
SHIFT = 0.5


def test_cleanrl_ppo_learns_from_gae_advantages_and_returns_of_the_real_transitions_only(monkeypatch, capsys):
    """One iteration of the example, its network and env recorded: the transitions it learns from are the
    rows that are not autoreset steps, with the mask the env gave; the advantage and return of each is
    GAE(gamma, lambda) worked out forwards, one episode at a time (the hand's reward, no bootstrap past its
    end, the critic's value of the last observation past the rollout's end); the logged return, steps and
    explained variance are those of the same transitions. The advantages and returns are read back as the
    gradients of the loss with respect to stand-in log-probabilities (ratio exactly 1) and values."""
    module = load_example("cleanrl_ppo")
    gamma, lam, games, steps, lr = 0.9, 0.8, 4, 16, 3e-4
    recorded = {}
    make_vec = gymnasium.make_vec
    monkeypatch.setattr(gymnasium, "make_vec",
                        lambda *args, **kwargs: recorded.setdefault("env", RecordingVecEnv(make_vec(*args, **kwargs))))
    monkeypatch.setattr(np.random, "shuffle", lambda indices: None)  # the minibatch in rollout order
    monkeypatch.setattr(module, "SummaryWriter", FakeWriter)
    writers.clear()
    rollout, bootstrap, update = [], [], []

    class RecordingAgent(module.Agent):
        def get_value(self, x):
            value = super().get_value(x)
            bootstrap.append(value.flatten().clone())
            return value

        def get_action_and_value(self, x, mask, action=None):
            if action is None:  # a rollout step
                out = super().get_action_and_value(x, mask)
                rollout.append((x.clone(), mask.clone(), out[0].clone(), out[1].clone(), out[3].flatten().clone()))
                return out
            _, _, entropy, _ = super().get_action_and_value(x, mask, action)
            kept = [(t, g) for t in range(steps) for g in range(games) if t == 0 or not recorded["env"].ended[t - 1][g]]
            # every other log-probability raised by 0.5: a ratio of e^0.5, beyond the clip range
            shift = torch.tensor([SHIFT if k % 2 == 0 else 0.0 for k in range(len(kept))])
            logprob = (torch.stack([rollout[t][3][g] for t, g in kept]) + shift).requires_grad_()
            value = torch.stack([rollout[t][4][g] for t, g in kept]).reshape(-1, 1).requires_grad_()
            update.append((x.clone(), mask.clone(), action.clone(), kept, logprob, value))
            return action, logprob, entropy, value

    monkeypatch.setattr(module, "Agent", RecordingAgent)
    evaluated = []
    monkeypatch.setattr(module, "check_against_baselines",
                        lambda policy, players, deals, seed: evaluated.append((policy, players, deals, seed)))
    assert module.main(["--total-timesteps", str(games * steps), "--num-envs", str(games), "--num-steps", str(steps),
                        "--num-minibatches", "1", "--update-epochs", "1", "--no-norm-adv", "--vf-coef", "1",
                        "--gamma", str(gamma), "--gae-lambda", str(lam), "--learning-rate", str(lr),
                        "--eval-deals", "6", "--seed", "3"]) == 0
    env = recorded["env"]
    assert len(rollout) == steps and len(bootstrap) == 1 and len(update) == 1  # one iteration, one minibatch
    x, mask, action, kept, logprob, value = update[0]
    ended = np.array(env.ended)
    # The policy saw the env's own masks, and the update gets the real transitions only, in rollout order.
    for t in range(steps):
        assert torch.equal(rollout[t][1], torch.as_tensor(env.masks[t]))
    assert torch.equal(x, torch.stack([rollout[t][0][g] for t, g in kept]))
    assert torch.equal(mask, torch.stack([rollout[t][1][g] for t, g in kept]))
    assert torch.equal(action, torch.stack([rollout[t][2][g] for t, g in kept]))
    assert len(kept) < games * steps and ended.sum() >= games  # some hands ended, and their autoreset rows left out
    # GAE by hand: each kept row's discounted sum of the TD errors of its episode from it on.
    values = torch.stack([r[4] for r in rollout]).numpy().astype(float)
    rewards = np.array(env.rewards)
    last_value = bootstrap[0].numpy().astype(float)

    def td_error(t, g):
        if ended[t, g]:
            following = 0.0
        elif t + 1 < steps:
            following = values[t + 1, g]
        else:
            following = last_value[g]
        return rewards[t, g] + gamma * following - values[t, g]

    advantages = []
    for t, g in kept:
        total, s = 0.0, t
        while True:
            total += (gamma * lam) ** (s - t) * td_error(s, g)
            if ended[s, g] or s + 1 == steps:
                break
            s += 1
        advantages.append(total)
    advantages = np.array(advantages)
    kept_values = np.array([values[t, g] for t, g in kept])
    returns = advantages + kept_values
    n = len(kept)
    # loss = mean(max(-A * ratio, -A * clip(ratio))) + 1 * mean((V - R)^2) / 2 - ...: d/dV = (V - R) / n, and
    # d/dlogprob = -A * ratio / n where the unclipped term is the larger (ratio 1, or e^0.5 with A < 0), else 0.
    ratio = np.where(np.arange(n) % 2 == 0, np.exp(SHIFT), 1.0)
    pessimistic = np.where((ratio > 1) & (advantages > 0), 0.0, advantages * ratio)
    assert np.allclose(-logprob.grad.numpy() * n, pessimistic, atol=1e-4)
    assert (advantages[::2] > 0).any() and (advantages[::2] < 0).any()  # both sides of the clip are checked
    assert np.allclose(kept_values - value.grad.numpy().reshape(-1) * n, returns, atol=1e-4)
    # What it reports: the finished hands' mean return, the real transitions counted, the explained variance.
    scalars = writers[0].scalars
    finished, running = [], np.zeros(games)
    for t in range(steps):
        running += rewards[t]
        finished += running[ended[t]].tolist()
        running[ended[t]] = 0.0
    assert scalars["charts/episodic_return"] == [(pytest.approx(np.mean(finished)), n)]
    assert f"episodic_return {np.mean(finished):+.3f}" in capsys.readouterr().out
    assert scalars["charts/learning_rate"] == [(pytest.approx(lr), n)]  # the first iteration's is not annealed
    explained = 1 - np.var(returns - kept_values) / np.var(returns)
    assert scalars["losses/explained_variance"][0][0] == pytest.approx(explained, abs=1e-4)
    # The evaluation: --eval-deals at the table trained on, the trained actor's most probable legal action.
    [(policy, players, deals, seed)] = evaluated
    assert (players, deals, seed) == (4, 6, 4)
    observations, legal = x.numpy(), mask.numpy()
    with torch.no_grad():
        logits = policy.network.actor(x).numpy()
    assert np.array_equal(policy.act_batch(observations, legal), np.where(legal, logits, -np.inf).argmax(axis=1))


@needs_torchrl
def test_torchrl_example_trains_each_seat_on_its_own_decisions_towards_its_hand_result(monkeypatch, capsys):
    """The loss sees only the decisions each seat made (one a frame), each valued towards the seat's
    result of the hand (GAE with gamma = lambda = 1 telescopes to the Monte-Carlo return whatever the
    other seats did in between); the critic learns; the printed count is of decisions."""
    example = load_example("torchrl_ppo")
    batches, seen, critics = record_torchrl_training(example, monkeypatch)
    frames = 96
    assert example.main(["--iterations", "1", "--frames-per-batch", str(frames), "--minibatch-size", "32",
                         "--epochs", "1", "--hidden", "16", "--eval-deals", "0"]) == 0
    [batch] = batches
    acted = batch["agents", "mask"]
    assert acted.shape[0] == frames and (acted.sum(-1) == 1).all()  # one seat acts a frame
    assert sum(seen) == frames  # one epoch over the decisions made, not over every seat of every frame
    assert f"decisions {frames:7d}" in capsys.readouterr().out
    target = batch["agents", "value_target"][..., 0]
    reward = batch["next", "agents", "reward"][..., 0]
    ended = batch["next", "agents", "done"][..., 0].any(-1)
    checked = 0
    for t, seat in acted.nonzero().tolist():
        later = ended[t:].nonzero()
        if len(later):  # the hand ended within the batch: the seat's summed reward to its end
            end = t + int(later[0])
            assert float(target[t, seat]) == pytest.approx(float(reward[t:end + 1, seat].sum()), abs=1e-4)
            checked += 1
    assert checked > frames // 2
    [(critic, before)] = critics
    assert any(not torch.equal(p, q) for p, q in zip(critic.parameters(), before))  # the critic is trained


@needs_tianshou
def test_tianshou_example_learns_from_exactly_each_iteration_s_hands_for_every_epoch(monkeypatch, capsys):
    """The buffer holds every decision of the iteration's hands and nothing older (a buffer too small
    wraps round and mixes time order); the update makes --epochs passes; undiscounted, as every example
    (an episode is one hand); the printed count is of decisions."""
    example = load_example("tianshou_ppo")
    collected, repeats, made = [], [], []

    class RecordingCollector(example.Collector):
        def collect(self, *args, **kwargs):
            result = super().collect(*args, **kwargs)
            collected.append((result.n_collected_steps, len(self.buffer)))
            return result

    update, ppo = example.SeatTrajectories.update, example.PPO
    monkeypatch.setattr(example, "Collector", RecordingCollector)
    monkeypatch.setattr(example.SeatTrajectories, "update",
                        lambda self, **kwargs: (repeats.append(kwargs["repeat"]), update(self, **kwargs))[1])
    monkeypatch.setattr(example, "PPO", lambda **kwargs: (made.append(kwargs), ppo(**kwargs))[1])
    assert example.main(["--num-players", "3", "--iterations", "2", "--episodes", "2", "--hidden", "16",
                         "--epochs", "2", "--eval-deals", "0"]) == 0
    assert len(collected) == 2 and all(steps == stored for steps, stored in collected)
    assert repeats == [2, 2] and made[0]["gamma"] == 1.0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert f"decisions {sum(steps for steps, _ in collected):7d}" in last


def test_sb3_example_trains_undiscounted_with_self_play_then_evaluates_greedily_at_its_table(monkeypatch):
    """The batched route without the learning itself: the model it builds and the calls it makes."""
    from sb3_contrib import MaskablePPO

    from spoilfive_integrations.sb3 import SpoilFiveSB3VecEnv

    example = load_example("sb3_maskable_ppo")
    learned, evaluated = [], []
    monkeypatch.setattr(MaskablePPO, "learn",
                        lambda self, steps, callback=None: learned.append((self, steps, callback)))
    monkeypatch.setattr(example, "check_against_baselines",
                        lambda agent, players, deals, seed: evaluated.append((agent, players, deals, seed)))
    assert example.main(["--num-envs", "3", "--num-players", "3", "--self-play", "8", "--timesteps", "50",
                         "--seed", "5", "--eval-deals", "7"]) == 0
    [(model, steps, callback)] = learned
    assert steps == 50 and model.gamma == 1.0  # an episode is one hand: its result, undiscounted
    assert model.n_steps == example.BATCHED_STEPS  # the rollout buffer the memory check was made for
    assert callback.refresh_steps == 8 and callback.seed == 5
    venv = model.get_env().venv
    assert venv.num_envs == 3 and venv.batch.rules.num_players == 3 and venv._seeds[0] == 5
    [(agent, players, deals, seed)] = evaluated
    assert (players, deals, seed) == (3, 7, 6)
    games = SpoilFiveSB3VecEnv(num_envs=64, num_players=3, opponents="random", seed=0)
    observations, masks = games.reset(), games.action_masks()
    assert np.array_equal(agent.act_batch(observations, masks), agent.act_batch(observations, masks))  # greedy


def test_sb3_example_single_route_plays_against_the_opponents_asked_for(monkeypatch):
    from sb3_contrib import MaskablePPO

    example = load_example("sb3_maskable_ppo")
    learned = []
    monkeypatch.setattr(MaskablePPO, "learn", lambda self, steps, callback=None: learned.append(self))
    # random, not the env's default opponents (spoiler)
    assert example.main(["--route", "single", "--opponents", "random", "--timesteps", "10", "--eval-deals", "0"]) == 0
    env = learned[0].get_env().envs[0].unwrapped
    assert {agent.name for agent in env.batch.lineup.agents} == {"random"}


@needs_torchrl
def test_torchrl_example_is_reproducible_from_its_seed(capsys):
    example = load_example("torchrl_ppo")
    argv = ["--iterations", "1", "--frames-per-batch", "64", "--minibatch-size", "32", "--hidden", "16",
            "--eval-deals", "0", "--seed", "3"]
    runs = []
    for global_seed in (123, 456):
        torch.manual_seed(global_seed)  # whatever state torch's generator is in
        assert example.main(argv) == 0
        runs.append(capsys.readouterr().out.split("critic loss")[-1])
    assert runs[0] == runs[1]


def test_rllib_example_config_is_undiscounted_seeded_and_counts_decisions():
    """An episode is one hand (its result, undiscounted, as every example); the env's deals come from --seed;
    --batch-size counts decisions (agent steps), as the floor check_args puts on it does."""
    example = load_example("rllib_ppo")
    config = example.build_config(example.parse_args(["--seed", "7", "--num-games", "8", "--batch-size", "96",
                                                      "--minibatch-size", "32"]))
    assert config.gamma == 1.0 and config.count_steps_by == "agent_steps"
    assert config.env_config == {"num_games": 8, "num_players": 4, "seed": 7}
    assert config.train_batch_size_per_learner == 96
