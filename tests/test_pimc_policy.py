"""``pimc_ppo`` (search with the trained policy's rollouts) and ``load_agent("best")``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import agents  # noqa: E402
from agents import BEST, load_agent  # noqa: E402
from agents.pimc_policy import PolicyPIMCAgent  # noqa: E402
from spoilfive_env.core import SpoilFiveCore  # noqa: E402
from spoilfive_env.rules import Rules  # noqa: E402


def play_hands(agent, num_players, games=8, seed=0):
    """Play whole hands with ``agent`` in every seat; return every (mask, action) pair seen."""
    rules = Rules(num_players=num_players)
    agent.bind(rules)
    core = SpoilFiveCore(games, rules=rules, seed=seed)
    seen = []
    while not core.done.all():
        live = np.flatnonzero(~core.done)
        masks = core.legal_mask()
        actions = np.zeros(games, np.int64)
        actions[live] = agent.act_batch(core.observe()[live], masks[live])
        seen.append((masks[live], actions[live]))
        core.step(actions, where=~core.done)
    return seen


@pytest.mark.parametrize("num_players, others", [(2, "policy"), (4, "spoiler"), (7, "greedy")])
def test_only_legal_actions(num_players, others):
    agent = load_agent(f"pimc_ppo:samples=2:others={others}", seed=1)
    for masks, actions in play_hands(agent, num_players):
        assert masks[np.arange(len(actions)), actions].all()


def test_the_same_seed_plays_the_same():
    first = [a for _, a in play_hands(load_agent("pimc_ppo:samples=3:prior=0.1", seed=5), 3, seed=2)]
    again = [a for _, a in play_hands(load_agent("pimc_ppo:samples=3:prior=0.1", seed=5), 3, seed=2)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))


def test_best_is_the_named_strongest_agent():
    best = load_agent("best", seed=0)
    name, *options = BEST.split(":")
    assert best.name == name == load_agent(BEST).name
    assert isinstance(best, PolicyPIMCAgent) and best.policy.name == agents.POLICY_SEARCH[name]
    assert load_agent("best:samples=4").samples == 4  # options still apply


def test_bad_options_say_what_is_allowed():
    with pytest.raises(ValueError, match="others='x' is not allowed"):
        load_agent("pimc_ppo:others=x")
    with pytest.raises(ValueError, match="prior=-1"):
        load_agent("pimc_ppo:prior=-1")
    with pytest.raises(ValueError, match="samples=0"):
        load_agent("pimc_ppo:samples=0")
    with pytest.raises(ValueError, match="bad options"):
        load_agent("pimc_ppo:depth=2")
