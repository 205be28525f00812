"""``python -m spoilfive_env.play``: play Spoil Five in the terminal against chosen agents.

The game itself is :mod:`spoilfive_integrations.play` (options: ``--help``). It needs the agents
to play against, and :mod:`agents` sits above this package: an import of it from here, even
inside a function, would make the environment depend on the layers built on it. So this module
only looks the game up by its declared entry point, the ``spoilfive-play`` console script of
``pyproject.toml`` (``[project.scripts]``), with :func:`importlib.metadata.entry_points`, and
runs it. The command keeps its documented name (README), and the package graph stays
one-directional: the environment names a command, never a module above it.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

from .cli import exit_interrupted, run_command

ENTRY_POINT = "spoilfive-play"
NOT_INSTALLED = 1


def main(argv=None) -> int:
    """Find the terminal game through its entry point and run it with ``argv``."""
    found = list(entry_points(group="console_scripts", name=ENTRY_POINT))
    if not found:
        print(f"error: the terminal game is not installed (no {ENTRY_POINT!r} console script): run "
              "`pip install -e .` in the spoilfive repository, then try again", file=sys.stderr)
        return NOT_INSTALLED
    try:
        game_main = found[0].load()
    except KeyboardInterrupt:  # Ctrl-C while the game and its agents are still loading
        exit_interrupted("Bye (Ctrl-C).")
    except ImportError as error:
        print(f"error: the {ENTRY_POINT!r} entry point ({found[0].value}) does not load: {error}; "
              "reinstall with `pip install -e .`", file=sys.stderr)
        return NOT_INSTALLED
    return game_main(argv)


if __name__ == "__main__":
    run_command(main)
