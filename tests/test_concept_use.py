"""Kernels that show the concept's parts without using them lose the concept points, through
``autograder grade --json`` on the test device, and keep every correctness point: each file in
``files/concept/`` is right, and names its exercise (``# concept-exercise: NAME``), its
verdicts (``# kernelgrade-expect: ...``, :mod:`autograder.known_bad`) and what the concept
test's message must say (``# concept-message: TEXT``, optional) in its first lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import known_bad
from autograder.results import ExerciseResult
from conftest import FILES, ROOT, TEST_DEVICE

CASES = sorted((FILES / "concept").glob("*.py"))


def header(path: Path, key: str) -> list[str]:
    return [line.split(":", 1)[1].strip() for line in path.read_text().splitlines()
            if line.startswith(f"# concept-{key}:")]


def exercise_of(path: Path) -> str:
    (name,) = header(path, "exercise")
    return name


def test_every_variant_the_issue_names_has_a_file():
    assert len(CASES) >= 11
    assert {exercise_of(p) for p in CASES} >= {"tiled_matmul", "matmul_any_size", "block_sum",
                                               "block_scan", "conv1d", "transpose"}


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_presence_without_use_loses_the_concept_points(path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(path),
                           "-e", exercise_of(path), "--device", TEST_DEVICE, "--json",
                           "--seed", "20261124"],
                          capture_output=True, text=True, env=env, timeout=300)
    data = json.loads(done.stdout)
    result = ExerciseResult.from_dict(data)
    assert not known_bad.unmet(path, result), [t["message"] for t in data["tests"]]
    concept = [t for t in data["tests"] if t["kind"] == "concept"]
    assert len(concept) == 1 and concept[0]["points"] == 0
    assert "your" in concept[0]["message"]
    for text in header(path, "message"):
        assert text in concept[0]["message"]
    correctness = [t for t in data["tests"] if t["kind"] == "correctness"]
    assert all(t["status"] in ("passed", "skipped") for t in correctness), \
        "the variant must be right: only the concept is at stake"
