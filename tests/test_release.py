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


def test_every_floor_in_pyproject_is_the_version_the_floors_job_installs():
    """.ci/floors runs the suite on .ci/floors.txt: each dependency's floor in pyproject.toml must be pinned
    there, at that floor (the same major.minor, at or above it: gymnasium's 1.1.1 is RLlib's pin), or the job
    tests versions nobody declared."""
    requirements = pytest.importorskip("packaging.requirements")
    version = pytest.importorskip("packaging.version")
    metadata = project()
    declared = list(metadata["dependencies"]) + [
        text for extra, items in metadata["optional-dependencies"].items() if extra not in ("peers", "notebooks")
        for text in items]
    floors: dict[str, version.Version] = {}
    for text in declared:
        requirement = requirements.Requirement(text)
        if requirement.name == "spoilfive":  # an extra naming other extras
            continue
        lows = [version.Version(s.version) for s in requirement.specifier if s.operator == ">="]
        assert lows, f"{text!r} in pyproject.toml has no floor (>=)"
        name = requirement.name.lower().replace("_", "-")
        floors[name] = max(lows + ([floors[name]] if name in floors else []))  # ray: RLlib's floor, the higher
    pinned = {}
    for line in (REPO / ".ci" / "floors.txt").read_text().splitlines():
        text = line.split("#")[0].strip()
        if text and "==" in text:
            name, _, pin = text.partition("==")
            pinned[name.strip().lower()] = version.Version(pin.strip())
    for name, floor in floors.items():
        assert name in pinned, f"{name} has a floor in pyproject.toml but no pin in .ci/floors.txt"
        pin = pinned[name]
        if name == "torch":  # TorchRL needs a newer torch: .ci/floors installs torch's floor in a stage of its own
            installed = re.findall(r"torch==([\d.]+)", (REPO / ".ci" / "floors").read_text())
            assert pin >= floor and floor in map(version.Version, installed), \
                f"torch: floor {floor} in pyproject.toml, but .ci/floors installs torch {installed}"
            continue
        assert pin >= floor and pin.release[:2] == (floor.release + (0,))[:2], \
            f"{name}: floor {floor} in pyproject.toml, but .ci/floors.txt installs {pin}"
    assert "ray==2.40.0" in (REPO / ".ci" / "floors").read_text()  # the `ray` extra's own, lower floor
    assert floors["ray"] == version.Version("2.49") and "ray>=2.40,<3" in metadata["optional-dependencies"]["ray"]
