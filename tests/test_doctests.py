"""Docstring examples are part of the documentation: run them as tests."""

import doctest
import importlib
import pkgutil

import pytest

import agents
import spoilfive_env
import spoilfive_integrations

MODULES = sorted(
    name
    for package in (spoilfive_env, agents, spoilfive_integrations)
    for _, name, _ in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
    if not name.endswith(("__main__", ".play", ".bench"))
) + ["agents", "spoilfive_env", "spoilfive_integrations"]


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name):
    if module_name == "spoilfive_integrations.tianshou":  # Tianshou 2 needs Python 3.11 (pyproject.toml's test extra)
        pytest.importorskip("tianshou")
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {module_name}"
