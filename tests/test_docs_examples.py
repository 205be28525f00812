"""docs/integrations.md's Python examples run as written, each on its own, and give what they say.

A reader copies one block into a fresh session, so each block holds its own imports. Training calls
run one rollout instead of the block's budget, and the two outlines (the Tianshou blocks' ``shared_ppo = ...``
and ``ppo = ...``, which examples/tianshou_ppo.py builds) are given the example's algorithm; every other line
runs as printed. A block whose library is not installed skips.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import load_script

from agents.base import Agent
from spoilfive_env.actions import NUM_ACTIONS
from spoilfive_env.observation import OBS_DIM

INTEGRATIONS = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"
BLOCKS = [match.group(1) for match in re.finditer(r"```python\n(.*?)```", INTEGRATIONS.read_text(), re.S)]
OUTLINE = re.compile(r"^(\w+) = \.\.\.  #.*$", re.M)


def libraries(block: str) -> list[str]:
    """The top-level packages a block imports."""
    return sorted(set(re.findall(r"^(?:from|import) (\w+)", block, re.M)))


def block_named(name: str) -> str:
    """The block that first calls ``name``: the tests below find their block by what it does."""
    return next(block for block in BLOCKS if name in block)


def run_block(block: str, monkeypatch, **outlines) -> dict:
    for module in libraries(block):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    if "sb3_contrib" in libraries(block):  # one rollout and one update, whatever the block's budget
        from sb3_contrib import MaskablePPO

        learn = MaskablePPO.learn
        monkeypatch.setattr(MaskablePPO, "learn", lambda self, total_timesteps, **kw: learn(self, 1, **kw))
    filled = OUTLINE.sub(lambda line: f"{line.group(1)} = _outlines[{line.group(1)!r}]", block)
    assert set(OUTLINE.findall(block)) == set(outlines), "an outline line the test does not fill, or one gone"
    namespace = {"_outlines": outlines}
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        exec(compile(filled, str(INTEGRATIONS), "exec"), namespace)
    finally:
        torch.set_num_threads(previous)
    return namespace


def test_every_block_is_tested_here():
    named = ["gymnasium.make(", "gymnasium.make_vec(", 'MaskablePPO("MlpPolicy", gymnasium.make',
             "SpoilFiveSB3VecEnv(", "PPOConfig()", ".environment(SpoilFiveAgainstOpponentsEnv",
             "PettingZooWrapper(", "GymWrapper(", "class WithoutGameWinners(", "SeatTrajectories(",
             "SpoilFiveTianshouVectorEnv("]
    assert [next(i for i, block in enumerate(BLOCKS) if name in block) for name in named] == list(range(len(BLOCKS)))


def test_the_single_seat_env_block(monkeypatch):
    ns = run_block(BLOCKS[0], monkeypatch)
    assert ns["observation"].shape == (OBS_DIM,) and ns["observation"].dtype == np.float32
    assert ns["info"]["action_mask"].shape == (NUM_ACTIONS,) and isinstance(ns["terminated"], bool)


def test_the_vector_env_block_steps_every_game_with_a_policy_s_legal_moves(monkeypatch):
    ns = run_block(block_named("gymnasium.make_vec("), monkeypatch)
    assert ns["observations"].shape == (512, OBS_DIM) and ns["infos"]["action_mask"].shape == (512, NUM_ACTIONS)
    assert ns["rewards"].shape == (512,) and ns["actions"].shape == (512,)


def test_the_maskable_ppo_block_learns_on_the_registered_env(monkeypatch):
    ns = run_block(block_named('MaskablePPO("MlpPolicy", gymnasium.make'), monkeypatch)
    assert ns["model"].num_timesteps >= ns["model"].n_steps


def test_the_sb3_vec_env_block_trains_in_self_play_and_gives_an_agent(monkeypatch):
    ns = run_block(block_named("SpoilFiveSB3VecEnv("), monkeypatch)
    assert ns["model"].num_timesteps >= 128 * 64 and isinstance(ns["agent"], Agent)
    observations = ns["venv"].reset()
    masks = np.array(ns["venv"].env_method("action_masks"))
    assert masks[np.arange(128), ns["agent"].act_batch(observations, masks)].all()


def test_the_rllib_block_configures_ppo_on_the_multi_agent_env(monkeypatch):
    ns = run_block(block_named("PPOConfig()"), monkeypatch)
    config = ns["config"]
    assert config.env_config == {"num_games": 256, "num_players": 4}
    assert config.policy_mapping_fn("g3_p2") == "shared" and config.train_batch_size_per_learner == 8192


def test_the_rllib_opponents_block_configures_ppo_on_one_learning_seat_a_game(monkeypatch):
    ns = run_block(block_named(".environment(SpoilFiveAgainstOpponentsEnv"), monkeypatch)
    config = ns["config"]
    assert config.env_config == {"num_games": 256, "num_players": 4, "opponents": "random"}
    env = config.env(config.env_config)
    observations, _ = env.reset(seed=0)
    assert sorted(observations) == sorted(f"g{game}" for game in range(256))
    assert [agent.name for agent in env.batch.lineup.agents] == ["random"]
    assert config.policy_mapping_fn("g3") == "shared" and config.train_batch_size_per_learner == 8192


def test_the_torchrl_block_passes_torchrl_s_own_spec_check(monkeypatch):
    ns = run_block(block_named("PettingZooWrapper("), monkeypatch)  # check_env_specs raises on a mismatch
    env = ns["env"]
    assert env.group_map == {"agents": [f"player_{seat}" for seat in range(4)]}
    assert ("agents", "action_mask") in env.observation_spec.keys(True, True)  # use_mask: the legal actions


def test_the_torchrl_vector_block_gives_legal_random_actions_from_the_info_s_mask(monkeypatch):
    ns = run_block(block_named("GymWrapper("), monkeypatch)
    env = ns["env"]
    assert env.batch_size == (256,)
    rollout = env.rollout(12, break_when_any_done=False)  # random actions from the masked spec
    assert rollout["action_mask"].dtype == torch.bool
    assert rollout["action_mask"].gather(-1, rollout["action"].unsqueeze(-1)).all()
    assert not rollout["action_mask"].all()  # the env's mask, not an all-legal default


def test_the_tianshou_block_builds_the_seat_trajectories(monkeypatch):
    if importlib.util.find_spec("tianshou") is None:
        pytest.skip("Tianshou 2 needs Python 3.11 or newer")
    from tianshou.env import PettingZooEnv

    import spoilfive_env

    example = load_script("examples/tianshou_ppo.py", "example_tianshou_ppo")
    env = PettingZooEnv(spoilfive_env.env(num_players=5))
    policy = example.DiscreteActorPolicy(actor=example.MaskedActor(32), action_space=env.action_space,
                                         observation_space=env.observation_space)
    shared = example.PPO(policy=policy, critic=example.SeatCritic(32), gamma=1.0,
                         optim=example.AdamOptimizerFactory(lr=1e-3))
    ns = run_block(block_named("SeatTrajectories("), monkeypatch, shared_ppo=shared)
    assert ns["algorithm"].seat_of_agent == {f"player_{seat}": seat for seat in range(5)}


def test_the_tianshou_game_mode_block_leaves_only_the_ragged_info_out(monkeypatch):
    """Tianshou's buffer cannot store "game_winners" (two seats in a tie, one otherwise): the block's wrapper drops
    that key and nothing else. tests/test_libraries.py collects whole games through it."""
    if importlib.util.find_spec("tianshou") is None:
        pytest.skip("Tianshou 2 needs Python 3.11 or newer")
    ns = run_block(block_named("class WithoutGameWinners("), monkeypatch)
    wrapped = ns["WithoutGameWinners"](ns["spoilfive_env"].env(num_players=3, mode="game", num_hands=1))
    wrapped.reset(seed=0)
    for agent in wrapped.agent_iter():
        observation, _, terminated, truncated, info = wrapped.last()
        if terminated or truncated:
            raw = wrapped.unwrapped.infos[agent]
            assert "game_winners" in raw and info == {k: v for k, v in raw.items() if k != "game_winners"}
            break
        wrapped.step(int(np.flatnonzero(observation["action_mask"])[0]))
    else:
        pytest.fail("the game never ended")


def test_the_tianshou_vector_block_collects_legal_decisions_of_every_game_and_updates(monkeypatch):
    if importlib.util.find_spec("tianshou") is None:
        pytest.skip("Tianshou 2 needs Python 3.11 or newer")
    from gymnasium import spaces

    example = load_script("examples/tianshou_ppo.py", "example_tianshou_ppo")
    args = example.parse_args(["--route", "vector"])
    actor = example.MaskedActor(32)
    ppo = example.make_ppo(actor, example.SeatCritic(32), args, spaces.Discrete(NUM_ACTIONS), None)
    before = [p.detach().clone() for p in actor.parameters()]
    ns = run_block(block_named("SpoilFiveTianshouVectorEnv("), monkeypatch, ppo=ppo)
    assert ns["result"].n_collected_steps == 8192 and len(ns["collector"].buffer) == 8192
    batch, _ = ns["collector"].buffer.sample(0)
    assert np.asarray(batch.obs.mask)[np.arange(8192), np.asarray(batch.act)].all()
    assert any(not torch.equal(p, q) for p, q in zip(actor.parameters(), before))
