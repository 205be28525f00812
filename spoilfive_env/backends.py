"""Compiled kernels beside their NumPy definitions: which one runs, chosen once by a variable.

The observation (:mod:`spoilfive_env.observation_kernel`), and in the layers above other hot
loops, each have a NumPy definition and the same result from one compiled loop (Numba, the
``fast`` extra); the tests check the two equal. An environment variable chooses for each:
``numba`` (the compiled loop; its absence is an error), ``numpy`` (the definition) or ``auto``
(the default: numba when it imports).
"""

from __future__ import annotations

import importlib
import os

from .cli import SettingError, install_hint

BACKENDS = ("auto", "numba", "numpy")


class BackendSettingError(SettingError, ValueError):
    """The variable names no backend (a ``ValueError`` to a caller in Python; one line from a command)."""


class BackendMissingError(SettingError, ImportError):
    """The variable asks for Numba, which does not import."""


VARIABLES: list[str] = []
"""The variable of every :class:`LazyBackend` made so far (each registers as its module loads)."""


def read_choice(variable: str) -> str:
    """The backend the environment variable ``variable`` names (unset or empty: ``auto``); else
    :class:`BackendSettingError`."""
    choice = os.environ.get(variable, "auto").strip().lower() or "auto"
    if choice not in BACKENDS:
        raise BackendSettingError(f"{variable}={choice!r} is not allowed: choose one of {', '.join(BACKENDS)}")
    return choice


def check_backend_variables() -> None:
    """Refuse a variable of a loaded kernel that names no backend, before a command does any work (a command
    answers it in one line: :func:`spoilfive_env.cli.run_command`). Nothing is imported or compiled."""
    for variable in VARIABLES:
        read_choice(variable)


def choose_backend(variable: str, definition, compiled_module: str, compiled_name: str) -> tuple:
    """``(name, function)``: ``("numba", compiled_module.compiled_name)`` or ``("numpy", definition)``,
    as the environment variable ``variable`` asks (:data:`BACKENDS`; unset means ``auto``).

    Raises:
        BackendSettingError: the variable holds something else (a ``ValueError``).
        BackendMissingError: it says ``numba`` and the compiled module does not import (an ``ImportError``).
    """
    choice = read_choice(variable)
    if choice != "numpy":
        try:
            module = importlib.import_module(compiled_module)
        except ImportError as error:
            if choice == "numba":
                raise BackendMissingError(f"{variable}=numba needs Numba ({error}): {install_hint('fast')}") from error
        else:
            return "numba", getattr(module, compiled_name)
    return "numpy", definition


class LazyBackend:
    """One kernel's implementation, chosen by :func:`choose_backend` at its first use and kept.

    ``chosen`` is ``(name, function)`` once chosen, ``None`` before (set it back to ``None`` to
    choose again, as the tests do after changing the variable).
    """

    def __init__(self, variable: str, definition, compiled_module: str, compiled_name: str):
        self._arguments = (variable, definition, compiled_module, compiled_name)
        self.chosen: tuple | None = None
        if variable not in VARIABLES:
            VARIABLES.append(variable)

    def _choice(self) -> tuple:
        if self.chosen is None:
            self.chosen = choose_backend(*self._arguments)
        return self.chosen

    def name(self) -> str:
        """``"numba"`` or ``"numpy"``."""
        return self._choice()[0]

    def function(self):
        """The chosen implementation."""
        return self._choice()[1]
