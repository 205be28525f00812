"""Release habits: one version everywhere, a changelog entry for it, and a license file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import spoilfive_env

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO = Path(__file__).resolve().parents[1]


def project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_the_version_is_the_same_in_the_package_and_pyproject():
    assert spoilfive_env.__version__ == project()["version"]


def test_the_changelog_starts_with_the_current_version():
    versions = re.findall(r"^## (\d+\.\d+\.\d+)", (REPO / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert versions, "CHANGELOG.md has no '## X.Y.Z' entry"
    assert versions[0] == spoilfive_env.__version__, "the newest changelog entry is not the package's version"
    assert len(set(versions)) == len(versions), "a version appears twice in CHANGELOG.md"


def test_the_license_file_is_the_one_pyproject_names():
    metadata = project()
    assert metadata["license"] == "MIT" and metadata["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
