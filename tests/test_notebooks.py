"""Every notebook in ``notebooks/`` runs from top to bottom without an error.

Part of the normal suite (not marked slow): the notebooks are kept small. They run in the
``python3`` kernel of the interpreter running the tests (jupyter_client starts ``python``
kernels with ``sys.executable``), with the repository root as working directory and on
``PYTHONPATH`` so that ``spoilfive_env`` imports without an install.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
TIMEOUT_S = 180


def kernel_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    return env


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    notebook = nbformat.read(path, as_version=4)
    probe = nbformat.v4.new_code_cell("import sys; print(sys.prefix)")
    notebook.cells.append(probe)
    client = nbclient.NotebookClient(notebook, timeout=TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute(env=kernel_env())
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    assert not errors
    prefix = "".join(output.get("text", "") for output in probe.outputs).strip()
    assert prefix == sys.prefix, f"the notebook ran in another Python environment: {prefix}"
