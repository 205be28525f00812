"""Smoke test of the benchmark command line: it runs and its JSON has the documented shape.

No timing is asserted: speed is measured by ``python -m spoilfive_env.bench``, never by a test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spoilfive_env import bench

ROOT = Path(__file__).resolve().parent.parent


def run_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spoilfive_env.bench", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_quick_json_structure():
    completed = run_bench("--quick", "--json")
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    assert report["players"] == [2, 4, 6, 10]
    assert report["batch_sizes"] == [1, 64, 1024, 4096]
    assert report["seconds_per_measurement"] == bench.QUICK_SECONDS
    assert "included" in report["note"] and "random" in report["note"]
    for key in ("spoilfive_version", "python", "numpy", "machine"):
        assert isinstance(report[key], str) and report[key]
    results = report["results"]
    core = {(r["observe"], r["num_players"], r["batch_size"]) for r in results if r["kind"] == "core"}
    assert core == {(o, n, b) for o in (False, True) for n in (2, 4, 6, 10) for b in (1, 64, 1024, 4096)}
    aec = [r for r in results if r["kind"] == "aec"]
    assert sorted(r["num_players"] for r in aec) == [2, 4, 6, 10]
    assert all(r["batch_size"] == 1 and r["hands"] >= 1 for r in aec)
    assert len(results) == len(core) + len(aec)
    for r in results:
        assert isinstance(r["decisions"], int) and r["decisions"] > 0
        assert r["seconds"] > 0
        assert r["decisions_per_second"] == pytest.approx(r["decisions"] / r["seconds"])


def test_table_output_and_options():
    completed = run_bench("--quick", "--players", "3,5", "--batch-sizes", "2,8", "--seconds", "0.01")
    assert completed.returncode == 0, completed.stderr
    text = completed.stdout
    assert "decisions per second" in text and "included" in text
    assert "B=2" in text and "B=8" in text and "AEC" in text
    rows = [line.split() for line in text.splitlines() if line.strip().split(" ")[0] in ("3", "5")]
    assert len(rows) == 2 * 2 + 2  # two core tables and the AEC table


@pytest.mark.parametrize("args,fragment", [(["--players", "11"], "2 to 10"), (["--seconds", "0"], "positive"),
                                           (["--batch-sizes", "x"], "integers")])
def test_bad_arguments_are_refused(args, fragment):
    completed = run_bench("--quick", *args)
    assert completed.returncode == 2 and fragment in completed.stderr
