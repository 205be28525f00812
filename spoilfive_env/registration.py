"""Registered ids: PettingZoo's ``"spoilfive/spoil_five-v0"`` and Gymnasium's ``"spoilfive/SpoilFive-v0"``.

Importing :mod:`spoilfive_env` calls :func:`register_environments`, so both ids work after
``import spoilfive_env``; calling it again changes nothing and warns nothing.

>>> import pettingzoo, spoilfive_env
>>> game = pettingzoo.make("aec", "spoilfive/spoil_five-v0", num_players=3)
>>> game.reset(seed=0)
>>> game.agent_selection in game.possible_agents
True

The Gymnasium id names its classes by string (``"module:attr"``), so this layer never
imports the integration layer above it; Gymnasium imports it on ``gymnasium.make``. Without
``import spoilfive_env``, Gymnasium's own form ``gymnasium.make("spoilfive_env:spoilfive/SpoilFive-v0")``
imports the package (and so registers) first. Gymnasium 1.x has no plugin entry points any
more; ``pyproject.toml`` still declares the ``gymnasium.envs`` group for tools that read it
(docs/integrations.md).

``gymnasium.make`` returns the env itself, not wrapped in ``OrderEnforcing`` and
``PassiveEnvChecker``, so that ``env.action_masks()`` (sb3-contrib's convention, CONTRACT.md)
answers on it: Gymnasium 1.x wrappers no longer pass unknown attributes through. The env refuses
``step()`` before ``reset()`` itself; ``gymnasium.make(..., disable_env_checker=False)`` still adds
the checker for whoever wants it (then reach the masks with ``env.unwrapped.action_masks()``).
"""

from __future__ import annotations

import gymnasium
import pettingzoo

AEC_ID = "spoilfive/spoil_five-v0"
GYMNASIUM_ID = "spoilfive/SpoilFive-v0"
GYMNASIUM_ENTRY_POINT = "spoilfive_integrations.gymnasium_env:SpoilFiveGymEnv"
GYMNASIUM_VECTOR_ENTRY_POINT = "spoilfive_integrations.vector:SpoilFiveVectorEnv"


def make_aec_env(max_cycles: int | None = None, **kwargs):
    """PettingZoo's entry point: :func:`spoilfive_env.env`, refusing a ``max_cycles`` cap.

    ``pettingzoo.make(..., max_cycles=K)`` passes ``max_cycles`` on to the entry point. A hand
    always ends within a bounded number of moves and a game within ``max_hands`` hands
    (docs/rules.md), so there is no cycle cap to apply; ``-1`` (PettingZoo's "none") is accepted.
    """
    if max_cycles is not None and max_cycles != -1:
        raise ValueError(
            f"max_cycles={max_cycles!r} is not allowed: Spoil Five episodes end by the rules "
            "(a hand within 5 tricks, a game within the max_hands rules option); omit max_cycles "
            "or pass -1"
        )
    from .env import env

    return env(**kwargs)


def register_environments() -> None:
    """Register both ids once (a repeated call is a no-op, so nothing warns about overriding)."""
    if AEC_ID not in pettingzoo.aec_registry:
        pettingzoo.register("aec", AEC_ID, entry_point=f"{__name__}:make_aec_env")
    if GYMNASIUM_ID not in gymnasium.registry:
        # No wrappers on make: Gymnasium 1.x wrappers pass no attribute through, and the contract's
        # env.action_masks() must answer on what make returns. The env checks its own call order
        # (step before reset is refused) and passes gymnasium's check_env (tests/test_gymnasium.py).
        gymnasium.register(
            id=GYMNASIUM_ID,
            entry_point=GYMNASIUM_ENTRY_POINT,
            vector_entry_point=GYMNASIUM_VECTOR_ENTRY_POINT,
            order_enforce=False,
            disable_env_checker=True,
        )
