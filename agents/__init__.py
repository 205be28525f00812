"""Agents for Spoil Five: built-in baselines by name, trained policies by checkpoint.

>>> from agents import load_agent
>>> load_agent("greedy", seed=0).name
'greedy'
>>> sorted(REGISTRY)
['greedy', 'oracle', 'pimc', 'random', 'spoiler']

``load_agent(spec)`` accepts

* a registry name (``"random"``, ``"greedy"``, ``"spoiler"``, ``"pimc"``, ``"oracle"``),
  optionally with keyword options after colons: ``"pimc:samples=64:rollout=spoiler"``;
* a checkpoint path (anything ending ``.pt``, or an existing file), loaded by
  :func:`agents.policy.load_policy_agent`;
* the name of a checkpoint shipped in ``agents/checkpoints/<name>.pt`` (e.g. ``"ppo"``);
* a search agent built on a shipped policy (:data:`POLICY_SEARCH`: ``"pimc_ppo"``, the
  determinised search of :mod:`agents.pimc_policy`), also with options (``"pimc_ppo:samples=32"``);
* ``"best"``: the strongest agent the repository ships (:data:`BEST`), whatever its own name.

torch is imported only when a checkpoint or a policy search is loaded, so the baselines work
without it.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

from .base import Agent
from .baselines import GreedyAgent, RandomAgent, SpoilerAgent
from .pimc import OracleAgent, PIMCAgent

REGISTRY: dict[str, type[Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "spoiler": SpoilerAgent,
    "pimc": PIMCAgent,
    "oracle": OracleAgent,
}
"""Built-in agents by name. ``oracle`` cheats (it reads every hand): measurement only."""

CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"

POLICY_SEARCH: dict[str, str] = {"pimc_ppo": "ppo"}
"""Search agents whose rollouts a shipped policy plays, by name -> that checkpoint's name
(:class:`agents.pimc_policy.PolicyPIMCAgent`; torch is imported when one is asked for)."""

BEST = "pimc_ppo:samples=96:loss_weight=2:belief=trump_counts:jink_confidence=0.75"
"""The strongest shipped agent, what ``load_agent("best")`` returns (measured in the README's
"The strongest agent" and in docs/strength.md): ``pimc_ppo`` with 96 sampled deals a decision
instead of 32, another seat's win counting three times in the search's values (``loss_weight=2``: it
stops more two-trick players at five players, and is at least as strong against ``pimc``), its deals
resampled by the shipped belief about each other hand's trump count (``belief=trump_counts``,
:mod:`agents.trump_belief`: +0.016 +- 0.007 equity a hand over the same search without it, pooled over
nine fresh seeds at 3 to 5 players), and a jink only where it succeeds in three quarters of the sampled
deals, a claim otherwise (``jink_confidence=0.75``: +0.57 +- 0.13 points of pool share at 3 players for
-0.017 +- 0.006 equity a hand, paired on three fresh seeds, and no loss of share at 4 and 5 players on two
each); about 22 ms of one core a decision at 4 players (README, "The strongest agent")."""


def built_in_names() -> list[str]:
    """Names ``load_agent`` resolves before any checkpoint: the registry, the policy searches, ``best``."""
    return [*REGISTRY, *POLICY_SEARCH, "best"]


def shipped_checkpoints() -> list[str]:
    """Names of the checkpoints shipped in ``agents/checkpoints`` (``"ppo"`` for ``ppo.pt``)."""
    if not CHECKPOINT_DIR.is_dir():
        return []
    return sorted(path.stem for path in CHECKPOINT_DIR.glob("*.pt"))


def _parse_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _refuse_unknown_options(kind: type[Agent], options: dict, what: str) -> None:
    """A ``ValueError`` naming the options ``kind`` does not take and those it does."""
    taken = [key for key in inspect.signature(kind).parameters if key != "seed"]
    unknown = [key for key in options if key not in taken]
    if unknown:
        listed = [key for key in taken if key != "rules"]  # the rules come through bind(), not a spec
        seed = " (the seed is load_agent's seed= argument, a tournament's --seed)" if "seed" in unknown else ""
        raise ValueError(f"bad options for {what}: {', '.join(map(repr, unknown))} is not one of its options{seed}; "
                         + (f"it takes {', '.join(listed)}" if listed else "it takes none"))


def _checkpoint_options_refused(path: str, options) -> ValueError:
    """The error for options given to a checkpoint, which is played as saved: greedily, on the CPU."""
    return ValueError(f"bad options for checkpoint {path!r}: {', '.join(map(repr, options))}; a checkpoint agent "
                      "takes no options but seed= (agents.policy.load_policy_agent takes greedy= and device=)")


def _load_checkpoint(path: str, seed: int | None, options: dict) -> Agent:
    if options:
        raise _checkpoint_options_refused(path, options)
    from .policy import load_policy_agent  # lazy: only checkpoints need torch

    parameters = inspect.signature(load_policy_agent).parameters
    if "seed" in parameters:
        agent = load_policy_agent(path, seed=seed)
    else:
        agent = load_policy_agent(path)
        if seed is not None and hasattr(agent, "reseed"):
            agent.reseed(seed)
    return agent


def load_agent(name_or_path, seed: int | None = None, **options) -> Agent:
    """An agent from a registry name (with ``:key=value`` options), checkpoint path or name.

    Args:
        name_or_path: see the module docstring. An :class:`Agent` instance is returned as is.
        seed: seed of the agent's own random generator (``None``: fresh entropy).
        **options: keyword options for a built-in agent's constructor (a checkpoint takes none);
            ``best``'s own options are defaults that these override.

    Raises:
        ValueError: an unknown name, listing the known names and shipped checkpoints; an option the
            agent does not take, listing those it does; an option given both in the spec and as a keyword.
    """
    if isinstance(name_or_path, Agent):
        if options:
            raise ValueError(f"{name_or_path!r} is an agent already: it takes no options, got "
                             f"{', '.join(map(repr, options))}")
        return name_or_path
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise ValueError(f"an agent is a name or a checkpoint path, got {name_or_path!r}")
    spec = os.fspath(name_or_path).strip()
    name, *option_texts = spec.split(":")
    # A registered name with options may end in ".pt" itself ("pimc_ppo:policy=runs/x/agent.pt").
    if name not in built_in_names() and (spec.endswith(".pt") or os.path.isfile(spec)):
        if os.path.isdir(spec):
            raise ValueError(f"checkpoint {spec!r} is a folder: give the .pt file's path")
        if not os.path.isfile(spec):
            raise ValueError(f"checkpoint {spec!r} does not exist")
        return _load_checkpoint(spec, seed, options)
    keywords, best_options = dict(options), []
    if name == "best":  # best's own options are defaults: the caller's keywords and the spec's own override them
        name, *best_options = BEST.split(":")
    if name in REGISTRY or name in POLICY_SEARCH:
        for text in best_options:
            key, _, value = text.partition("=")
            options.setdefault(key, _parse_value(value))
        given = set()
        for text in option_texts:
            key, sep, value = text.partition("=")
            key = key.strip()
            if not sep or not key:
                raise ValueError(f"agent option {text!r} in {spec!r} must look like key=value")
            if key in given:
                raise ValueError(f"agent option {key!r} is given twice in {spec!r}: give it once")
            if key in keywords:  # which of the two was meant cannot be told
                raise ValueError(f"agent option {key!r} is given twice: {key}={value.strip()} in {spec!r} and "
                                 f"{key}={keywords[key]!r} as a keyword; give it once")
            if key == "rules":  # an object, not text: the table's rules reach the agent through bind()
                raise ValueError(f"agent option 'rules' in {spec!r} is not allowed: the table's rules reach the "
                                 "agent from the tournament or env it plays in (give rules options there)")
            given.add(key)
            options[key] = _parse_value(value.strip())
        if name in POLICY_SEARCH:
            from .pimc_policy import PolicyPIMCAgent  # lazy: needs torch

            kind = PolicyPIMCAgent
            options.setdefault("policy", POLICY_SEARCH[name])
        else:
            kind = REGISTRY[name]
        _refuse_unknown_options(kind, options, f"agent {name!r} ({spec!r})")
        try:
            return kind(seed=seed, **options)
        except TypeError as error:
            raise ValueError(f"bad options for agent {name!r}: {error}") from None
    checkpoint = CHECKPOINT_DIR / f"{spec}.pt"
    if checkpoint.is_file():
        return _load_checkpoint(str(checkpoint), seed, options)
    if option_texts:  # "ppo:greedy=false": a checkpoint with options, not an unknown agent
        shipped = CHECKPOINT_DIR / f"{name}.pt"
        path = str(shipped) if shipped.is_file() else name if os.path.isfile(name) else None
        if path is not None:
            raise _checkpoint_options_refused(path, [text.partition("=")[0].strip() for text in option_texts])
    if os.path.isdir(spec):
        raise ValueError(f"agent {spec!r} is a folder: give a checkpoint's .pt file (a run's agent.pt), or a name")
    shipped = shipped_checkpoints()
    raise ValueError(
        f"unknown agent {spec!r}: choose one of {', '.join(built_in_names())}"
        + (f", a shipped checkpoint ({', '.join(shipped)})" if shipped else "")
        + ", or a checkpoint path ending in .pt"
    )


__all__ = ["BEST", "POLICY_SEARCH", "Agent", "GreedyAgent", "OracleAgent", "PIMCAgent", "REGISTRY", "RandomAgent",
           "SpoilerAgent", "built_in_names", "load_agent", "shipped_checkpoints"]
