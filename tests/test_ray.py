"""Ray: sharded tournaments equal the single-process run exactly; training with rollout workers.

One local Ray cluster of 2 CPUs is started by the module's fixture (``address="local"``, so a
cluster someone else runs on this machine is never joined) and shut down after the module.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.evaluate import build_agents, distinct_specs, evaluate, make_deals, play_tournament
from agents.sharding import BLOCK_DEALS, block_seed, shard_ranges
from spoilfive_env.rules import Rules

ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[1]
CLUSTER_CPUS = 2


@pytest.fixture(scope="module")
def cluster():
    ray.init(address="local", num_cpus=CLUSTER_CPUS, include_dashboard=False, logging_level="WARNING",
             log_to_driver=False)
    yield ray
    ray.shutdown()


def without_time(report: dict) -> dict:
    report = dict(report)
    report.pop("seconds")
    return report


# ---------------------------------------------------------------- tournaments
def test_a_block_is_a_function_of_seed_and_block_alone():
    """The first block's games come out the same whether the run has one block or three, and
    whatever the batch size; a different seed reseeds the agents differently."""
    rules = Rules(num_players=3)
    hands, turnups, dealers = make_deals(3, 3 * BLOCK_DEALS, seed=2)
    specs, lineup = distinct_specs(["random", "greedy"], 3)
    games = BLOCK_DEALS * 3

    def first_block(deals, batch_size, seed=2):
        out = play_tournament(build_agents(specs, seed), lineup, rules, hands[:deals], turnups[:deals],
                              dealers[:deals], batch_size, seed=seed)
        return {key: value[:games] for key, value in out.items()}

    alone = first_block(BLOCK_DEALS, 8192)
    for deals, batch_size in ((3 * BLOCK_DEALS, 8192), (3 * BLOCK_DEALS, 1), (BLOCK_DEALS + 1, 100)):
        again = first_block(deals, batch_size)
        assert all(np.array_equal(alone[key], again[key]) for key in alone), (deals, batch_size)
    other = first_block(BLOCK_DEALS, 8192, seed=3)
    assert not np.array_equal(alone["equity"], other["equity"])  # the random agent drew differently
    assert block_seed(2, 0, 0) != block_seed(2, 0, 1) != block_seed(2, 1, 1)


def test_shard_ranges_cover_every_block_once_in_order():
    for blocks in (1, 2, 7, 40):
        for shards in (1, 3, 8, 100):
            ranges = shard_ranges(blocks, shards)
            assert [b for first, stop in ranges for b in range(first, stop)] == list(range(blocks))
            assert len(ranges) == min(blocks, shards)


def test_an_agent_objects_generator_is_put_back():
    agent = build_agents(["random"], 0)[0]
    before = agent.rng.bit_generator.state
    evaluate([agent, "greedy"], 3, deals=20, seed=1)
    assert agent.rng.bit_generator.state == before


@pytest.mark.parametrize("lineup, num_players, deals", [
    (["spoiler", "greedy"], 4, 3 * BLOCK_DEALS + 17),
    (["random", "greedy", "pimc:samples=2:rollout=random"], 3, 2 * BLOCK_DEALS + 60),
])
def test_sharded_tournament_equals_the_single_process_one(cluster, lineup, num_players, deals):
    single = without_time(evaluate(lineup, num_players, deals, seed=7))
    for shards in (1, 3):
        sharded = without_time(evaluate(lineup, num_players, deals, seed=7, ray=True, shards=shards))
        assert json.dumps(sharded, sort_keys=True) == json.dumps(single, sort_keys=True), shards


def run(*args, timeout=120):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, says", [
    (["--ray", "127.0.0.1:1"], "no Ray cluster answers there"),
    (["--shards", "2"], "--shards is for --ray"),
    (["--ray", "--shards", "0"], "--shards"),
])
def test_evaluate_refuses_bad_ray_input_in_one_line(args, says):
    result = run("-m", "agents.evaluate", "--agents", "greedy", "--deals", "10", *args)
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1 and not result.stdout
